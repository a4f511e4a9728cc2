package server

// Writes on a full disk, as Redis refuses them after a failed AOF write.
//
// Once a commit has failed for lack of disk space, the keyspace refuses
// writes until its log has room again (keyspace.Keyspace.CheckWritable,
// retried before each refusal and every 100 ms). Redis's processCommand
// rejects, from its first failed AOF write, every command flagged write,
// an EXEC whose queue holds one, and PING (so that monitoring sees the
// failure), before MULTI queueing, with "MISCONF Errors writing to the AOF
// file: <strerror>"; INFO says aof_last_write_status:err meanwhile. Here
// the same commands get the same text (keyspace.ErrNoSpace). The one
// deliberate difference: FLUSHALL is let through, because on this log it
// is what gives the space back (its record fits in space every record
// keeps free, and the cleaner then deletes the segments before it without
// copying anything). Scripts get the error from the write command they
// call (scriptDiskError), as in Redis.

// diskErrorRejects reports whether cmd is refused while writes are: write
// commands but FLUSHALL, PING, and an EXEC with a queued write command.
func (c *conn) diskErrorRejects(cmd *Command) bool {
	switch {
	case cmd.Name == "flushall":
		return false
	case cmd.Flags&FlagWrite != 0, cmd.Name == "ping":
		return true
	case cmd.Name == "exec" && c.InMulti:
		for _, args := range c.MultiCmds {
			if q, _ := c.srv.resolve(args); q != nil && q.Flags&FlagWrite != 0 && q.Name != "flushall" {
				return true
			}
		}
	}
	return false
}

// diskError returns the MISCONF reply text if cmd must be refused now
// because the disk is full, or "".
func (c *conn) diskError(cmd *Command) string {
	if c.KS == nil || !c.KS.RefusingWrites() || !c.diskErrorRejects(cmd) {
		return ""
	}
	c.srv.env.lock()
	err := c.KS.CheckWritable()
	c.srv.env.unlock()
	if err != nil {
		return err.Error()
	}
	return ""
}

// scriptDiskError is diskError for a command a script calls (the keyspace
// lock is held): the MISCONF text for a write command while writes are
// refused, or "".
func (c *Client) scriptDiskError(cmd *Command) string {
	if c.KS == nil || !c.KS.RefusingWrites() || cmd.Flags&FlagWrite == 0 || cmd.Name == "flushall" {
		return ""
	}
	if err := c.KS.CheckWritable(); err != nil {
		return err.Error()
	}
	return ""
}

package server

import "time"

// Persistence and replication commands kept for clients and tools that
// expect a Redis server: SAVE, BGSAVE, LASTSAVE, WAIT and ROLE.
//
// Persimmon has no snapshots to take: every write is in the arena and
// durable before its reply. SAVE and BGSAVE therefore have nothing left
// to write; they succeed at once and move LASTSAVE forward, so a tool that
// runs BGSAVE and polls LASTSAVE for a change (as redis-cli and backup
// scripts do) sees the save complete. The reply to SAVE, like every reply,
// leaves only once every write applied before it is durable, including
// other clients' writes. There are no replicas: ROLE says master with none,
// WAIT answers 0 at once (Redis would wait out the timeout when asked for
// replicas it does not have, then answer the same 0).

// saveCommand: semantics: redis.io SAVE. Reply: +OK.
func saveCommand(c *Client, _ [][]byte) {
	c.Srv.lastSave.Store(time.Now().Unix())
	c.waitForEveryWrite()
	c.WriteOK()
}

// waitForEveryWrite makes the reply being written wait (as every reply
// does for its own batch) until every record appended so far, by any
// client, is durable: what SAVE and BGSAVE promise. SAVE and BGSAVE take
// no keyspace lock, so they do not raise the batch's LSN by themselves.
func (c *Client) waitForEveryWrite() {
	if cn := c.conn; cn != nil {
		if lsn := c.Srv.env.lastLSN(); lsn > cn.batchLSN {
			cn.batchLSN = lsn
		}
	}
}

// bgsaveCommand: semantics: redis.io BGSAVE [SCHEDULE]. Reply: the status
// "Background saving started"; another argument is a syntax error.
func bgsaveCommand(c *Client, args [][]byte) {
	if len(args) > 2 || (len(args) == 2 && !ArgIs(args[1], "schedule")) {
		c.WriteErr(ErrSyntaxReply)
		return
	}
	c.Srv.lastSave.Store(time.Now().Unix())
	c.waitForEveryWrite()
	c.WriteString("Background saving started")
}

// lastsaveCommand: semantics: redis.io LASTSAVE. Reply: Unix seconds of
// the last SAVE or BGSAVE, or of the server's start.
func lastsaveCommand(c *Client, _ [][]byte) {
	c.WriteInt(c.Srv.lastSave.Load())
}

// roleCommand: semantics: redis.io ROLE. Reply: ["master", 0, []] (no
// replication offset, no replicas).
func roleCommand(c *Client, _ [][]byte) {
	c.WriteArray(3)
	c.WriteBulkString("master")
	c.WriteInt(0)
	c.WriteArray(0)
}

// waitCommand: semantics: redis.io WAIT numreplicas timeout. Reply: 0, the
// number of replicas that acknowledged (there are none). Errors as Redis:
// a numreplicas or timeout that is not an integer, a negative timeout.
func waitCommand(c *Client, args [][]byte) {
	if _, ok := ParseInt64(args[1]); !ok {
		c.WriteErr(ErrNotIntegerReply)
		return
	}
	ms, ok := ParseInt64(args[2])
	switch {
	case !ok:
		c.WriteError("ERR timeout is not an integer or out of range")
		return
	case ms < 0:
		c.WriteError("ERR timeout is negative")
		return
	}
	c.WriteInt(0)
}

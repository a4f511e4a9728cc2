package server

// MULTI/EXEC (semantics: redis.io/commands/multi, exec, discard, watch).
//
// EXEC holds the keyspace lock for the whole block, so no other client's
// command interleaves with it, and wraps the block in BeginTxn/EndTxn, so
// recovery applies it whole or not at all (DESIGN.md invariant 2). Like
// Redis, a command that fails at run time inside the block (WRONGTYPE, ...)
// becomes an error element of EXEC's reply; the others still run.

import (
	"github.com/persimmon-db/persimmon/acl"
	"github.com/persimmon-db/persimmon/keyspace"
)

// multiCommand: MULTI.
func multiCommand(c *Client, _ [][]byte) {
	if c.InMulti {
		c.WriteError("ERR MULTI calls can not be nested")
		return
	}
	c.InMulti = true
	c.MultiErr = false
	c.MultiCmds = c.MultiCmds[:0]
	c.WriteOK()
}

// discardCommand: DISCARD (runs with the keyspace lock held, for Unwatch).
func discardCommand(c *Client, _ [][]byte) {
	if !c.InMulti {
		c.WriteError("ERR DISCARD without MULTI")
		return
	}
	c.endMulti()
	c.Srv.env.unwatch(&c.Watch)
	c.WriteOK()
}

// execCommand: EXEC. It is NoLock: it takes the keyspace lock itself, once
// for the whole block.
func execCommand(c *Client, _ [][]byte) {
	if !c.InMulti {
		c.WriteError("ERR EXEC without MULTI")
		return
	}
	env := &c.Srv.env
	if c.MultiErr {
		c.endMulti()
		env.lock()
		env.unwatch(&c.Watch)
		env.unlock()
		c.WriteError("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	cmds := c.MultiCmds
	c.InMulti = false // the queued commands run as they would outside MULTI
	defer c.endMulti()

	env.lock()
	tr := c.Srv.track
	tr.cur = c.conn // tracking.go: the writer of what the block changes
	if c.Watch.Dirty() {
		// The abort reveals another client's write to a watched key:
		// like a read, it waits until that write is durable.
		lsn := env.lastLSN()
		env.unwatch(&c.Watch)
		tr.cur = nil
		env.unlock()
		if cn := c.conn; cn != nil && lsn > cn.batchLSN {
			cn.batchLSN = lsn
		}
		c.WriteNullArray()
		return
	}
	env.beginTxn()
	c.Srv.propBegin()
	mark := len(c.Out)
	c.WriteArray(len(cmds))
	cn := c.conn
	execCmd := cn.lastCmd
	cn.inExec = true
	frozenCall(c.KS, func() error { // the block runs at one instant, as in Redis
		for _, args := range cmds {
			cmd, msg := c.Srv.resolve(args)
			if msg != "" { // checked when queued; cannot happen
				c.WriteError(msg)
				continue
			}
			// Checked when queued too; the rules may have changed since.
			if d, _ := c.checkACL(cmd, args, acl.ContextMulti); !d.OK() {
				c.WriteError(d.ExecError())
				continue
			}
			cn.call(cmd, args, true)
		}
		return nil
	})
	cn.inExec = false
	c.Srv.propEnd(cn) // the block's writes: one unit (propagate.go)
	err := env.endTxn()
	lsn := env.lastLSN()
	env.unwatch(&c.Watch)
	tr.cur = nil
	env.unlock()
	cn.lastCmd = execCmd
	if lsn > cn.batchLSN {
		cn.batchLSN = lsn
	}
	if err != nil {
		// The commit marker was not written: recovery will drop the block,
		// so the client must not see it acknowledged.
		c.Out = c.Out[:mark]
		c.WriteErr(err)
	}
}

// frozenCall runs fn with the keyspace's clock stopped (FreezeClock), as
// Redis 7.0 runs a command and all it calls (EXEC's commands, a script's
// redis.call) at one time for expiry: a key read twice in the block
// cannot expire in between. The clock runs again however fn ends. Call
// with the lock held.
func frozenCall(ks *keyspace.Keyspace, fn func() error) error {
	if ks == nil { // a server without a keyspace (tests)
		return fn()
	}
	ks.FreezeClock()
	defer ks.ThawClock()
	return fn()
}

// endMulti leaves the MULTI state and drops the queue.
func (c *Client) endMulti() {
	c.InMulti = false
	c.MultiErr = false
	c.MultiDenyOOM = false
	c.MultiWrite, c.MultiDenyStale = false, false
	clear(c.MultiCmds)
	if cap(c.MultiCmds) > 1024 {
		c.MultiCmds = nil
	} else {
		c.MultiCmds = c.MultiCmds[:0]
	}
}

// watchCommand: WATCH key [key ...] (runs with the keyspace lock held).
func watchCommand(c *Client, args [][]byte) {
	if c.InMulti {
		c.WriteError("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, key := range args[1:] {
		c.Srv.env.watch(&c.Watch, c.DB, key)
	}
	c.WriteOK()
}

// unwatchCommand: UNWATCH (runs with the keyspace lock held).
func unwatchCommand(c *Client, _ [][]byte) {
	c.Srv.env.unwatch(&c.Watch)
	c.WriteOK()
}

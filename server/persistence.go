package server

import "time"

// Persistence commands kept for clients and tools that expect a Redis
// server: SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE (replication's ROLE and WAIT are in
// replication.go).
//
// Persimmon has no snapshots to take: every write is in the arena and
// durable before its reply. SAVE and BGSAVE therefore have nothing left
// to write; they succeed at once and move LASTSAVE forward, so a tool that
// runs BGSAVE and polls LASTSAVE for a change (as redis-cli and backup
// scripts do) sees the save complete. The reply to SAVE, like every reply,
// leaves only once every write applied before it is durable, including
// other clients' writes.

// saveCommand: semantics: redis.io SAVE. Reply: +OK.
func saveCommand(c *Client, _ [][]byte) {
	c.Srv.lastSave.Store(time.Now().Unix())
	c.Srv.saveLSN.Store(c.Srv.env.lastLSN())
	c.Srv.saves.Add(1)
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
	c.Srv.saveLSN.Store(c.Srv.env.lastLSN())
	c.Srv.saves.Add(1)
	c.waitForEveryWrite()
	c.WriteString("Background saving started")
}

// bgrewriteaofCommand: semantics: redis.io BGREWRITEAOF. Reply: the
// status "Background append only file rewriting started", as Redis's
// when it starts a rewrite. Persimmon has no AOF: the log it has is
// already compact enough (the segment cleaner reclaims dead records), so
// there is nothing to rewrite; like BGSAVE, the reply leaves once every
// write applied before it is durable, and INFO aof_rewrites counts it.
func bgrewriteaofCommand(c *Client, _ [][]byte) {
	c.Srv.aofRewrites.Add(1)
	c.waitForEveryWrite()
	c.WriteString("Background append only file rewriting started")
}

// lastsaveCommand: semantics: redis.io LASTSAVE. Reply: Unix seconds of
// the last SAVE or BGSAVE, or of the server's start.
func lastsaveCommand(c *Client, _ [][]byte) {
	c.WriteInt(c.Srv.lastSave.Load())
}

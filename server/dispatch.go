package server

import (
	"bytes"
	"strings"
	"time"

	"github.com/persimmon-db/persimmon/acl"
	"github.com/persimmon-db/persimmon/proto"
	"github.com/persimmon-db/persimmon/repl"
)

// errNotInMultiAllowed answers a FlagNoMulti command inside MULTI.
const errNotInMultiAllowed = "ERR Command not allowed inside a transaction"

// execute runs one request the way Redis's processCommand does: look the
// command up and check its arity, then authentication, then MULTI
// queueing, then run it.
func (c *conn) execute(args [][]byte) {
	if c.User().Deleted() {
		// ACL DELUSER or ACL LOAD removed the user between this
		// connection's commands (or while it authenticated): it is being
		// closed, and runs nothing more.
		c.closeAfterReply = true
		return
	}
	cmd, msg := c.resolve(args)
	c.lastCmd = cmd // what CLIENT LIST shows, queued or rejected too (nil: NULL), as in Redis
	if msg != "" {
		c.reject(cmd, msg)
		return
	}
	if cmd.Name == "debug" && !c.srv.DebugCommandAllowed(&c.Client) {
		// a protected command is refused before anything else is
		// checked (Redis's processCommand), so in a subscribed context too
		c.reject(cmd, errDebugNotAllowed)
		return
	}
	if moduleProtected(cmd) && !c.srv.protectedActionAllowed(&c.Client, "enable-module-command") {
		c.reject(cmd, errModuleNotAllowed) // module.go
		return
	}
	if !c.Authed && cmd.Flags&FlagNoAuth == 0 && c.srv.acl.store.AuthRequired() {
		c.reject(cmd, ErrNoAuth)
		return
	}
	if c.InMulti && !cmd.Immediate && cmd.Flags&FlagNoMulti != 0 {
		c.reject(cmd, errNotInMultiAllowed) // before the ACL check, as in Redis
		return
	}
	ctx := acl.ContextToplevel
	if c.InMulti {
		ctx = acl.ContextMulti
	}
	if d, q := c.checkACL(cmd, args, ctx); !d.OK() {
		c.reject(cmd, d.Error(q))
		return
	}
	if c.srv.mem.max.Load() != 0 && c.oomRefuses(cmd) { // maxmemory.go
		c.reject(cmd, errOOM)
		return
	}
	if c.subscriptions() > 0 && c.Proto != proto.RESP3 && !allowedSubscribed(cmd.Name) {
		c.reject(cmd, subscribedContextError(cmd.Name)) // RESP2's subscribed state (pubsub.go); RESP3 has none
		return
	}
	if c.srv.loading.Load() != nil { // loading.go: the keyspace is not attached yet
		if refusedWhileLoading(cmd) {
			c.reject(cmd, errLoading)
			return
		}
	} else if c.KS == nil {
		c.KS = c.srv.ks // a connection made while loading
	}
	if c.srv.busy.Load() != nil && !(cmd.NoLock && cmd.Flags&FlagAllowBusy != 0) {
		c.reject(cmd, c.srv.busyReply()) // a script ran past busy-reply-threshold (scriptbusy.go)
		return
	}
	if msg := c.diskError(cmd); msg != "" {
		c.reject(cmd, msg) // a full disk (diskerror.go)
		return
	}
	// EXEC is a write if a queued command is, and refused on a stale
	// replica if one is (Redis's mstate.cmd_flags and cmd_inv_flags):
	// the state may have changed since they were queued. An EVAL whose
	// script has flags that may write is a write (getCommandFlags).
	exec := cmd.Name == "exec" && c.InMulti
	mayWrite := cmd.Flags&FlagWrite != 0 || evalMayWrite(cmd, args)
	write := mayWrite || exec && c.MultiWrite
	if write && c.srv.minReplicasRefuse() {
		c.reject(cmd, errNoReplicas) // replication_wait.go
		return
	}
	if write && c.srv.replicaStatus() != nil && !c.srv.replica.writable.Load() {
		c.reject(cmd, "READONLY You can't write against a read only replica.") // replica.go
		return
	}
	denyStale := cmd.Flags&FlagStale == 0 || evalDenyStale(cmd, args)
	if (denyStale || exec && c.MultiDenyStale) && c.srv.masterDown() {
		c.reject(cmd, errMasterDown)
		return
	}
	if c.InMulti && !cmd.Immediate {
		if cmd.Flags&FlagNoMulti != 0 {
			c.reject(cmd, errNotInMultiAllowed)
			return
		}
		c.queue(args)
		if cmd.Flags&FlagDenyOOM != 0 || evalDenyOOM(cmd, args) {
			c.MultiDenyOOM = true // EXEC is denyoom (maxmemory.go)
		}
		if mayWrite {
			c.MultiWrite = true
		}
		if denyStale {
			c.MultiDenyStale = true
		}
		c.WriteString("QUEUED")
		return
	}
	c.call(cmd, args, false)
}

// errMasterDown refuses a command on a replica whose link to its master
// is down under replica-serve-stale-data no (Redis 7.0's masterdownerr).
const errMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."

// masterDown reports whether this server is a replica whose link to its
// master is not up (not streaming yet, or lost) while
// replica-serve-stale-data is no: commands without the stale flag get
// MASTERDOWN, as Redis's processCommand gives them.
func (s *Server) masterDown() bool {
	if !s.live.staleRefused.Load() {
		return false
	}
	l := s.replicaStatus()
	return l != nil && l.r.Status().State != repl.StateConnected
}

// errDebugNotAllowed is Redis 7.0's refusal of DEBUG under enable-debug-command.
const errDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

// reject answers a request that will not run. Inside MULTI it also dooms
// the transaction, so that EXEC answers EXECABORT. A rejected EXEC itself
// (wrong arity, NOAUTH), in MULTI or not, discards the transaction and
// unwatches, as Redis's rejectCommand does through execCommandAbort.
func (c *conn) reject(cmd *Command, msg string) {
	if cmd != nil && cmd.Name == "exec" {
		c.endMulti()
		if c.Watch.Watching() {
			c.srv.env.lock()
			c.srv.env.unwatch(&c.Watch)
			c.srv.env.unlock()
		}
		c.WriteError("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		if c.srv.monitors.n.Load() > 0 {
			c.feedMonitors(cmd, [][]byte{[]byte("exec")}, false) // as Redis's execCommandAbort
		}
	} else {
		c.WriteError(msg)
	}
	if c.InMulti {
		c.MultiErr = true
	}
	if cmd != nil {
		c.count(cmd, 0, false, true)
	}
	c.tick = clockNow()
}

// call runs cmd, under the keyspace lock unless it is NoLock or the caller
// (EXEC) already holds the lock, and records the LSN the batch must wait
// for before its replies leave.
func (c *conn) call(cmd *Command, args [][]byte, locked bool) {
	if !locked && c.srv.loading.Load() != nil {
		c.callWhileLoading(cmd, args) // loading.go
		return
	}
	c.callNow(cmd, args, locked)
}

// callNow is call once the loading state is settled.
func (c *conn) callNow(cmd *Command, args [][]byte, locked bool) {
	c.errPrev, c.failedUncounted = c.errCount, false // errorstats.go
	start := len(c.Out)
	c.lastCmd = cmd
	mon := c.srv.monitors.n.Load() > 0 && monitored(cmd) // monitor.go
	if mon && monitorsFirst(cmd) {
		c.feedMonitors(cmd, args, locked && c.srv.running.Load() != nil)
	}
	// begin is kept here: the calls the command makes itself (EXEC's
	// queued commands, a script's redis.call) move c.tick on. Such a
	// nested call (locked) starts now, not where the one before it ended.
	begin := c.tick
	if locked {
		begin = clockNow()
	}
	var now time.Time
	if cmd.NoLock || locked {
		if locked {
			n := &c.srv.notify
			was := n.inCmd
			n.inCmd = true
			before := c.srv.env.lastLSN()
			c.runCounted(cmd, args)
			c.srv.notifyEnd()
			n.inCmd = was
			c.feed(cmd, args, start, before) // into EXEC's or the script's unit
			if c.trk.on {
				c.trackRead(cmd, args, true) // tracking.go
			}
		} else {
			cmd.Run(&c.Client, args)
			if cmd.Flags&FlagPubSub != 0 && alwaysPropagated(cmd) {
				c.feedPublish(cmd, args, start) // propagate.go
			}
		}
		now = clockNow()
		if c.gc != nil && !locked && c.readyWaiters() {
			c.srv.env.lock() // EXEC pushed to keys clients wait on
			serveReady(c.KS)
			c.srv.env.unlock()
		}
	} else {
		env := &c.srv.env
		if c.warmsGet(cmd, args) {
			c.warmGet(args[1]) // coldread.go: the lock was taken and let go
			c.chained = false
		}
		// A command that follows another of the same batch and finds the
		// lock free starts where that one ended: one clock read per
		// pipelined command instead of two (clockNow was 6% of the
		// server's CPU at GET -P 16). Its time then includes parsing its
		// request and execute's checks, tens of nanoseconds warm, below
		// the microsecond Redis times commands in. The first command of a
		// batch starts where processInput read the clock, after the read
		// and the batch's parse. One that waited for the lock, or one after
		// something slow (chained false) reads the clock once it holds the
		// lock: a lock wait is not its time.
		if !c.chained || env.tryLock == nil || !env.tryLock() {
			env.lock()
			c.tick = clockNow()
			begin = c.tick
		}
		tr := c.srv.track
		tr.cur = c // tracking.go: the writer of what the command changes
		c.srv.notify.inCmd = true
		reg := c.loopRegistry()
		if reg != nil {
			reg.loopServes = true // this command serves what it wakes (no kickServe)
		}
		before := env.lastLSN()
		c.srv.propBegin() // propagate.go: the command and what it causes, one unit
		c.runCounted(cmd, args)
		c.feed(cmd, args, start, before)
		c.srv.propEnd(c)
		served := false
		if c.trk.on {
			c.trackRead(cmd, args, false) // tracking.go
		}
		if reg != nil {
			if reg.readyN.Load() > 0 {
				served = true
				serveReady(c.KS) // before anyone else runs, as Redis does
			}
			reg.loopServes = false
		}
		c.srv.notifyEnd()
		c.srv.notify.inCmd = false
		lsn := env.lastLSN()
		if d := c.srv.dirty; d != nil {
			lsn = d.waitLSN(cmd, c.DB, args, before, lsn, served, env.durableLSN()) // dirty.go
		}
		now = clockNow()
		tr.cur = nil
		env.unlock()
		if lsn > c.batchLSN {
			c.batchLSN = lsn
		}
	}
	d := now.Sub(begin)
	c.tick = now
	c.chained = !c.blk.pending
	if c.blk.pending && c.blk.b != nil {
		c.blk.b.ran += d // logged when it ends (blockedEnded), as Redis does
	} else {
		c.recordSlow(cmd, args, d)
	}
	if mon && !monitorsFirst(cmd) {
		c.feedMonitors(cmd, args, locked && c.srv.running.Load() != nil)
	}
	if c.srv.live.latencyThreshold.Load() > 0 { // latency.go
		if cmd.Flags&FlagFast != 0 {
			c.srv.latencyEvent("fast-command", d)
		} else {
			c.srv.latencyEvent("command", d)
		}
	}
	failed := c.errCount > c.errPrev || c.failedUncounted
	c.errPrev, c.failedUncounted = c.errCount, false
	if c.runRejected { // the handler refused to run (maxmemory.go)
		c.runRejected = false
		c.count(cmd, 0, false, true)
	} else {
		c.count(cmd, d, failed, false)
	}
	if c.srv.live.latencyTracking.Load() && !c.blk.pending && cmd.stats != nil {
		cmd.stats.recordLatency(d) // latencystats.go
	}
	if c.blk.pending { // [lists: blocking] the handler blocked: wait without the lock
		if c.gc != nil {
			c.park(cmd, args)
		} else {
			c.blockedNow.Store(true) // CLIENT LIST flag b
			c.serveBlocked(cmd, args)
			c.blockedNow.Store(false)
		}
	}
}

// runCounted runs cmd under the keyspace lock, counting its key lookups
// into keyspace_hits/misses if it is read-only.
func (c *conn) runCounted(cmd *Command, args [][]byte) {
	if (cmd.Flags&FlagReadonly == 0 && !cmd.CountsReads) || c.KS == nil { // nil: a test's fake environment
		if cmd.Flags&FlagWrite != 0 && c.KS != nil && c.KS.IsReplica() {
			c.runReplicaWrite(cmd, args) // a writable replica's client (replica.go)
			return
		}
		cmd.Run(&c.Client, args)
		return
	}
	c.KS.CountLookups(true)
	if cmd.Flags&FlagWrite != 0 && c.KS.IsReplica() {
		c.runReplicaWrite(cmd, args) // SUNIONSTORE, COPY, SORT ... STORE
	} else {
		cmd.Run(&c.Client, args)
	}
	c.KS.CountLookups(false)
}

// queue copies a request into the MULTI queue (args alias the read buffer).
func (c *conn) queue(args [][]byte) {
	c.MultiCmds = append(c.MultiCmds, copyArgs(args))
}

// copyArgs copies args (which alias the read buffer) into one allocation.
func copyArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	q := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		q[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return q
}

// clockBase is the start of clockNow's clock.
var clockBase = time.Now()

// clockNow is time.Now read from the monotonic clock alone: one vDSO
// clock_gettime where time.Now makes two (CLOCK_REALTIME, then
// CLOCK_MONOTONIC). The command path reads the clock twice per command
// (after taking the lock, after the command) to time it; that cost 12%
// of BenchmarkSetGet's CPU here. Its wall reading is clockBase's plus the
// monotonic time since, so it is for durations and comparisons (idle
// times, CLIENT LIST), not for printing dates.
func clockNow() time.Time { return clockBase.Add(time.Since(clockBase)) }

// resolve is Server.resolve with a one-entry cache of the last command
// without subcommands the connection ran: a pipeline or a client that
// repeats a command (redis-benchmark, a loader) skips the table's hash
// lookup.
func (c *conn) resolve(args [][]byte) (*Command, string) {
	if hit := c.lookupHit; hit != nil && equalLower(args[0], hit.Name) {
		if !arityOK(hit.Arity, len(args)) {
			return hit, WrongArgs(hit.Name)
		}
		return hit, ""
	}
	cmd, msg := c.srv.resolve(args)
	if cmd != nil && cmd.subs == nil && strings.IndexByte(cmd.Name, '|') < 0 {
		c.lookupHit = cmd
	}
	if cmd == nil && len(args) == 1 {
		// A container called without its subcommand: Redis's lookupCommand
		// returns the container and the arity check refuses it, so the
		// refusal is a rejected call of the container (INFO commandstats)
		// and CLIENT LIST shows it as the last command. (Server.resolve
		// returns no command here: scripts tell this case by that.)
		if base := lookupCommand(c.srv.table, args[0]); base != nil && base.subs != nil {
			cmd = base
		}
	}
	return cmd, msg
}

// equalLower reports whether b equals the lower-case name ignoring the
// case of ASCII letters in b.
func equalLower(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != name[i] {
			return false
		}
	}
	return true
}

// resolve finds the table entry for a request and checks its arity. On
// failure it returns Redis's error reply, and the entry if there is one
// (an arity error counts as a rejected call of that command).
func (s *Server) resolve(args [][]byte) (*Command, string) {
	cmd := lookupCommand(s.table, args[0])
	if cmd == nil {
		return nil, unknownCommandError(args)
	}
	if cmd.subs != nil && (len(args) >= 2 || cmd.Run == nil) {
		// A container; one with a Run of its own (COMMAND) runs it when
		// called without a subcommand.
		if len(args) < 2 {
			return nil, WrongArgs(cmd.Name)
		}
		sub := lookupCommand(cmd.subs, args[1])
		if sub == nil {
			return nil, "ERR unknown subcommand '" + truncate(CString(args[1]), 128) + "'. Try " +
				strings.ToUpper(string(CString(args[0]))) + " HELP."
		}
		cmd = sub
	}
	if !arityOK(cmd.Arity, len(args)) {
		return cmd, WrongArgs(cmd.Name)
	}
	return cmd, ""
}

// lookupCommand finds name case-insensitively without allocating for
// names up to 32 bytes.
func lookupCommand(table map[string]*Command, name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return table[strings.ToLower(string(name))]
	}
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return table[string(buf[:len(name)])]
}

// arityOK applies Redis's arity rule: positive means exactly, negative
// means at least -arity arguments (the command name included).
func arityOK(arity, n int) bool {
	if arity >= 0 {
		return n == arity
	}
	return n >= -arity
}

// unknownCommandError is Redis 7's reply to an unknown command: the name
// (up to 128 bytes) and the first arguments, quoted, up to about 128 bytes.
// Redis formats them with %s, so each stops at its first NUL byte.
func unknownCommandError(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(truncate(CString(args[0]), 128))
	b.WriteString("', with args beginning with: ")
	n := 0
	for _, a := range args[1:] {
		if n >= 128 {
			break
		}
		a = CString(a)
		a = a[:min(len(a), 128-n)]
		b.WriteByte('\'')
		b.Write(a)
		b.WriteString("' ")
		n += len(a) + 3
	}
	return b.String()
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// CString is b as C's %s prints it: up to its first NUL byte.
func CString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

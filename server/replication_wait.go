package server

import (
	"context"
	"sync/atomic"
	"time"
)

// WAIT, WAITAOF and min-replicas-to-write: what a client can require of
// the replicas before or after its writes.
//
// A connection's last write is the stream offset just after it
// (conn.replOff, set where the write was propagated). WAIT counts the
// online replicas whose acknowledged offset covers it; a Persimmon
// replica acknowledges only what it made durable, a redis-server replica
// what it processed. In goroutine mode the connection's goroutine waits;
// on the event loop the connection is set aside (replWait: it runs no
// more commands, its further input is buffered) while a goroutine waits,
// and the reply is handed back to the loop, so the loop never blocks.
// While it waits the client is blocked as Redis's BLOCKED_WAIT is: flag b
// in CLIENT LIST, counted in INFO blocked_clients, and CLIENT UNBLOCK
// ends the wait with the count so far or, with ERROR, the UNBLOCKED error.

// waitCommand: semantics: redis.io WAIT numreplicas timeout. Reply: the
// number of replicas that acknowledged the client's last write (every
// replica when it wrote nothing yet), waiting up to timeout ms (0:
// forever) for numreplicas of them. Errors as Redis: a numreplicas or
// timeout that is not an integer, a negative timeout; on a replica
// "ERR WAIT cannot be used with replica instances...".
func waitCommand(c *Client, args [][]byte) {
	if c.Srv.replicaStatus() != nil {
		c.WriteError("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	n, ok := ParseInt64(args[1])
	if !ok {
		c.WriteErr(ErrNotIntegerReply)
		return
	}
	ms, ok := parseWaitTimeout(c, args[2])
	if !ok {
		return
	}
	c.waitAcked(int(n), ms, func(c *Client, got int) { c.WriteInt(int64(got)) })
}

// waitaofCommand: semantics: redis.io WAITAOF numlocal numreplicas
// timeout (Redis 7.2). Reply: [numlocal, numreplicas]: every write is
// durable before its reply here, so the local count is 1 at once;
// numreplicas counts the replicas that acknowledged the client's last
// write (a Persimmon replica acknowledges only durable offsets), waiting
// as WAIT does. Errors as Redis 7.2: integers, a negative timeout, and
// on a replica "ERR WAITAOF cannot be used with replica instances...".
func waitaofCommand(c *Client, args [][]byte) {
	if c.Srv.replicaStatus() != nil {
		c.WriteError("ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.")
		return
	}
	local, ok1 := ParseInt64(args[1])
	n, ok2 := ParseInt64(args[2])
	if !ok1 || !ok2 {
		c.WriteErr(ErrNotIntegerReply)
		return
	}
	ms, ok := parseWaitTimeout(c, args[3])
	if !ok {
		return
	}
	_ = local // satisfied: the client's writes were durable before their replies
	c.waitAcked(int(n), ms, func(c *Client, got int) {
		c.WriteArray(2)
		c.WriteInt(1)
		c.WriteInt(int64(got))
	})
}

func parseWaitTimeout(c *Client, arg []byte) (int64, bool) {
	ms, ok := ParseInt64(arg)
	switch {
	case !ok:
		c.WriteError("ERR timeout is not an integer or out of range")
		return 0, false
	case ms < 0:
		c.WriteError("ERR timeout is negative")
		return 0, false
	}
	return ms, true
}

// waitAcked waits until n replicas acknowledged the connection's last
// write or ms pass (0: no limit), then answers with reply(got). Inside
// EXEC (the keyspace lock held) it answers at once, as Redis does.
func (c *Client) waitAcked(n int, ms int64, reply func(c *Client, got int)) {
	m, cn := c.Srv.master, c.conn
	if m == nil || cn == nil {
		reply(c, 0)
		return
	}
	off := cn.replOff
	if got := m.Acked(off); got >= n || cn.inExec {
		reply(c, got)
		return
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if ms > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
	}
	ctx, unblock := context.WithCancel(ctx)
	w := &replWaiter{cancel: unblock, timed: ms > 0}
	cn.waiter.Store(w)
	c.Srv.replWaiting.Add(1)
	if w.timed {
		c.Srv.replWaitingTimed.Add(1)
	}
	// answer writes the reply once the wait is over: the count, or the
	// UNBLOCKED error if CLIENT UNBLOCK ERROR ended it.
	answer := func(got int) {
		if w.finish() == waitUnblockedError {
			c.WriteError(errUnblocked)
			return
		}
		reply(c, got)
	}
	if cn.gc == nil {
		// Goroutine mode: the wait ends too when the client goes away or
		// the server closes (before, a WAIT 1 0 kept SHUTDOWN from ending).
		gone, stopWatch := cn.watchGone()
		go func() {
			select {
			case <-gone:
			case <-c.Srv.closing:
			case <-ctx.Done():
			}
			unblock()
		}()
		got := m.WaitAcked(ctx, n, off)
		cancel()
		unblock()
		stopWatch()
		cn.waitEnded(w)
		answer(got)
		return
	}
	// The event loop: set the connection aside, wait elsewhere. The late
	// reply is silenced as the reply now would be (CLIENT REPLY OFF, or
	// the command SKIP silences), as in Redis.
	cn.replWait = true
	silent := cn.replyOff || cn.replySkip
	go func() {
		defer cancel()
		// A client that goes away ends the wait (checked every 100 ms:
		// no per-connection close signal reaches here).
		wctx, wcancel := context.WithCancel(ctx)
		go func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case <-t.C:
					if cn.killed.Load() {
						wcancel()
						return
					}
				}
			}
		}()
		got := m.WaitAcked(wctx, n, off)
		wcancel()
		unblock()
		cn.waitEnded(w)
		cn.gc.Loop().Execute(func() {
			if cn.killed.Load() {
				return
			}
			if !silent {
				answer(got)
			}
			cn.replWait = false
			cn.gc.Wake() // OnWake: the reply leaves, the buffered input runs
		})
	}()
}

// replWaiter is a WAIT or WAITAOF waiting for replicas. state goes once
// from waitRunning to how the wait ended: on its own (count reached,
// timeout, client gone) or by CLIENT UNBLOCK.
type replWaiter struct {
	cancel context.CancelFunc // ends the wait (CLIENT UNBLOCK)
	timed  bool               // it has a timeout
	state  atomic.Int32
}

const (
	waitRunning int32 = iota
	waitDone
	waitUnblocked      // CLIENT UNBLOCK [TIMEOUT]: the count so far
	waitUnblockedError // CLIENT UNBLOCK ERROR: the UNBLOCKED error
)

// finish records that the wait is over, unless CLIENT UNBLOCK ended it
// first, and returns how it ended.
func (w *replWaiter) finish() int32 {
	if w.state.CompareAndSwap(waitRunning, waitDone) {
		return waitDone
	}
	return w.state.Load()
}

// waitEnded clears the connection's waiter w (flag b, blocked_clients).
func (c *conn) waitEnded(w *replWaiter) {
	if c.waiter.CompareAndSwap(w, nil) {
		c.srv.replWaiting.Add(-1)
		if w.timed {
			c.srv.replWaitingTimed.Add(-1)
		}
	}
}

// unblockWait ends c's WAIT/WAITAOF as CLIENT UNBLOCK asks, reporting
// whether c was waiting. Called from another connection.
func (c *conn) unblockWait(asError bool) bool {
	w := c.waiter.Load()
	if w == nil {
		return false
	}
	how := waitUnblocked
	if asError {
		how = waitUnblockedError
	}
	if !w.state.CompareAndSwap(waitRunning, how) {
		return false // ended already, its reply on the way
	}
	w.cancel()
	return true
}

// minReplicasRefuse reports whether a write must be refused with
// NOREPLICAS: min-replicas-to-write is set and fewer replicas than it
// acknowledged within min-replicas-max-lag seconds, in whole seconds as
// Redis counts the lag (Redis counts them once a second; this counts at
// the write). A replica never refuses.
func (s *Server) minReplicasRefuse() bool {
	want := s.replica.minToWrite.Load()
	lag := s.replica.minMaxLag.Load()
	if want <= 0 || lag <= 0 || s.master == nil || s.replicaStatus() != nil {
		return false
	}
	return int64(s.master.GoodReplicas(lag, time.Now())) < want
}

const errNoReplicas = "NOREPLICAS Not enough good replicas to write."

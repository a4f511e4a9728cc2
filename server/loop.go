package server

import (
	"time"

	"github.com/persimmon-db/persimmon/evloop"
	"github.com/persimmon-db/persimmon/keyspace"
)

// The event loop (Config.IO == IOLoop).
//
// Connections are still accepted by the server's own listeners (bind list,
// protected mode, maxclients, CONFIG SET port all stay in server.go), then
// handed to the one event loop (package evloop) with Enroll. From then on
// every read, every command and every reply write of every connection runs
// on that loop's goroutine: the loop waits in epoll_wait (level
// triggered, non-blocking sockets, no EAGAIN read as Go's netpoller needs
// before parking a goroutine), and for each readable socket OnReadable
// reads once, straight into the connection's read buffer, and runs
// processInput exactly as the goroutine-per-connection mode does; flush
// writes the batch's replies with one write(2) straight to the socket,
// and what the socket does not take waits in the connection's pending
// output, sent when epoll reports it writable (evloop.Conn.Write).
// Other goroutines reach a connection through tasks the loop runs after
// its round of events (Execute, Wake, Close; an eventfd wakes the loop).
// Measured on 2 cores shared with the client, this costs less server CPU
// per request than a goroutine per connection (scripts/bench-io.sh;
// DESIGN.md, "Measured ceilings").
//
// The loop must never wait for another goroutine. In pmem mode (the flush
// and fence run inline) and none a batch's durability wait returns at
// once, and is made once per round for every connection that wrote (the
// round's settle, below); in msync mode a batch that is not durable yet holds its replies
// and a committer goroutine runs the group commit, one msync for every
// connection's records so far, then releases them on the loop (commit.go).
//
// Blocking commands on the loop (blocking.go has the rules): a command that
// blocks parks its connection: the handler registered it, its arguments
// are copied, the replies before it are written, and the rest of the input
// waits in the read buffer. A push wakes the first waiter of its key by
// queueing it on the registry's ready list, and the loop serves that list
// right after the command that pushed, before it releases the keyspace
// lock (serveReady), as Redis does after each command: no other client's
// command can take the elements in between. A served connection writes its
// reply and goes on with its pipelined input through the loop's Wake. Timeouts
// are time.AfterFunc timers that run their expiry on the loop.

// The round's settle (pmem and none modes). A batch's durability wait in
// those modes is a flush and fence of the records appended so far, run on
// the loop; before, every connection that wrote ran its own at the end of
// its batch, so a round of the loop serving 50 clients' SETs flushed 50
// times (each flush and fence, its locks and its timing, was about a
// tenth of the server's CPU per SET at -c 50). Now a batch's flush leaves
// its replies with the evloop conn, which gathers them until the end of
// the round anyway, records the LSN and marks the loop as owing a settle
// (evloop.Loop.Owe); the loop calls Settle before it writes any byte of
// any connection's output (the end of the round, or earlier for a large
// reply), and Settle makes everything up to the round's highest LSN
// durable with one wait. So no reply leaves before what its batch wrote
// is durable (DESIGN.md invariant 1), as before. If the wait fails, every
// connection that owed it is closed without the replies it has not sent
// (evloop.Conn.Drop), as the inline wait closed its connection. While a
// script holds the loop up (the watchdog serves the other connections
// then), batches wait inline as before.

// roundSettle is what the round's settle must make durable (on the loop).
type roundSettle struct {
	lsn   uint64  // the highest LSN a batch of the round wrote or read
	conns []*conn // the connections whose replies wait for it (owes set)
}

// settlesWithRound reports whether the batch's durability wait can be the
// round's settle: on the loop, without a committer (pmem, none), and not
// while a script's watchdog serves connections.
func (c *conn) settlesWithRound() bool {
	return c.gc != nil && c.srv.commit == nil && c.srv.cfg.Durability != "msync" && c.srv.busy.Load() == nil
}

// owe hands the durability wait of c's batch to the round's settle.
func (s *Server) owe(c *conn) {
	st := &s.settle
	st.lsn = max(st.lsn, c.batchLSN)
	c.batchLSN = 0
	if !c.owes {
		c.owes = true
		st.conns = append(st.conns, c)
	}
	c.gc.Loop().Owe()
}

// Settle is the round's durability wait (evloop.Settler): called by the
// loop before the first reply of the round leaves.
func (h *loopHandler) Settle() {
	s := h.s
	st := &s.settle
	lsn, conns := st.lsn, st.conns
	st.lsn = 0
	var err error
	if lsn > 0 {
		wait := s.env.syncNow
		if wait == nil {
			wait = s.env.waitDurable
		}
		err = wait(lsn)
	}
	for i, c := range conns {
		c.owes = false
		if err != nil {
			s.logf("client id=%d addr=%s: closing without replies, lsn %d is not durable: %v", c.ID, c.addr, lsn, err)
			c.gc.Drop(err)
		}
		conns[i] = nil
	}
	st.conns = conns[:0]
}

// I/O models for Config.IO.
const (
	IOGoroutine = "goroutine" // a goroutine per connection (default)
	IOLoop      = "loop"      // one event loop for every connection
)

// loopHandler is the evloop handler of a server in loop mode.
type loopHandler struct {
	s    *Server
	link []byte // read buffer for replica links' input
}

// startLoop starts the event loop of a server in loop mode.
func (s *Server) startLoop() error {
	l, err := evloop.New(&loopHandler{s: s})
	if err != nil {
		return err
	}
	go func() {
		if err := l.Run(); err != nil {
			s.logf("event loop: %v", err)
		}
	}()
	s.loop = l
	go s.idleCloser()
	return nil
}

// enroll hands an accepted connection to the event loop. It reports false
// if the loop did not take it (the server is closing).
func (s *Server) enroll(c *conn) bool {
	_, err := s.loop.Enroll(c.nc, c)
	return err == nil
}

// closeOnLoop queues the close of a loop connection (safe from any
// goroutine) and reports whether the connection is served by the loop. One
// still being enrolled closes in OnOpen, which sees killed.
func (c *conn) closeOnLoop() bool {
	if c.srv.loop == nil {
		return false
	}
	if lc := c.lc.Load(); lc != nil {
		lc.Close()
	}
	return true
}

// readyWaiters reports whether woken waiters wait on the registry's ready
// list (loop mode, on the loop: the list is only touched there). The
// registry is looked up once, then kept on the server.
func (c *conn) readyWaiters() bool {
	r := c.loopRegistry()
	return r != nil && r.readyN.Load() > 0
}

// loopRegistry is the keyspace's block registry for a connection on the
// loop (nil in goroutine mode, or while no client ever blocked).
func (c *conn) loopRegistry() *BlockRegistry {
	if c.gc == nil {
		return nil
	}
	r := c.srv.blockReg
	if r == nil {
		if !registriesMade.Load() {
			return nil
		}
		if r = LoadRegistry(c.KS); r == nil {
			return nil
		}
		c.srv.blockReg = r
	}
	return r
}

func (h *loopHandler) OnOpen(gc *evloop.Conn) bool {
	c := gc.Context.(*conn)
	c.gc = gc
	c.fd = gc.Fd()
	c.lc.Store(gc)
	return !c.killed.Load() // the server closed while the connection was enrolled
}

// OnReadable reads what the socket has straight into the read buffer
// (grown as in goroutine mode) and runs it.
func (h *loopHandler) OnReadable(gc *evloop.Conn) bool {
	c := gc.Context.(*conn)
	if c.killed.Load() { // CLIENT KILL: its close is queued behind this event
		return false
	}
	if c.link != nil { // a replica link (replication.go): its ACKs
		if h.link == nil {
			h.link = make([]byte, readBufSize)
		}
		n, err := gc.Read(h.link)
		if n > 0 {
			c.link.push(h.link[:n])
		}
		return err == nil
	}
	if len(c.rbuf) == cap(c.rbuf) {
		if len(c.rbuf) >= maxQueryBuf {
			c.srv.logf("closing client id=%d addr=%s that reached the max query buffer length", c.ID, c.addr)
			return false
		}
		c.rbuf = growBuf(c.rbuf, max(2*cap(c.rbuf), readBufSize)) // nil after an idle release (querybuf.go)
	}
	n, err := gc.Read(c.rbuf[len(c.rbuf):cap(c.rbuf)])
	if err != nil {
		return false
	}
	if n == 0 {
		return true // nothing after all
	}
	c.rbuf = c.rbuf[:len(c.rbuf)+n]
	c.notePeak()
	c.srv.stats.netIn.Add(int64(n))
	c.srv.stats.reads.Add(1)
	return h.run(c)
}

// OnWake goes on with a connection's buffered input (a served blocked
// command, the end of a pause or of WAIT).
func (h *loopHandler) OnWake(gc *evloop.Conn) bool {
	c := gc.Context.(*conn)
	if c.killed.Load() {
		return false
	}
	if c.link != nil {
		return true
	}
	return h.run(c)
}

func (h *loopHandler) run(c *conn) bool {
	if c.blk.b != nil || c.replWait {
		return true // parked: the input waits for the blocked command (or WAIT)
	}
	return c.processInput()
}

func (h *loopHandler) OnClose(gc *evloop.Conn, unsent int) {
	c := gc.Context.(*conn)
	c.killed.Store(true)
	if c.link != nil {
		c.link.shutdown()
	}
	c.finish()
}

// OnRelease hands a large output buffer the loop dropped (sent, or never
// read by a client that closed) back to the OS now, not minutes later.
func (h *loopHandler) OnRelease(gc *evloop.Conn, n int) { releasedLarge(n) }

// idleCloser closes connections idle for longer than the timeout setting
// (Redis's clientsCronHandleTimeout: blocked clients are exempt; their own
// timeout applies). It runs until the server closes.
func (s *Server) idleCloser() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		secs := s.live.timeout.Load()
		if secs <= 0 {
			continue
		}
		limit := time.Now().Add(-time.Duration(secs) * time.Second)
		for _, c := range s.clientsSnapshot() {
			if c.parked.Load() || c.subscriptions() > 0 { // blocked and pub/sub clients are exempt
				continue
			}
			c.infoMu.Lock()
			idle := c.info.lastActive.Before(limit)
			c.infoMu.Unlock()
			if lc := c.lc.Load(); idle && lc != nil {
				lc.Loop().Execute(func() { c.closeIfIdle(limit) })
			}
		}
	}
}

// closeIfIdle closes the connection (on the loop) if it did nothing since
// limit. Replies still leaving count as activity, as in Redis, for as long
// as the client takes them: a slow download of a large value is not idle,
// a client that stopped reading is.
func (c *conn) closeIfIdle(limit time.Time) {
	if c.parked.Load() || c.killed.Load() {
		return
	}
	if n := c.gc.Buffered(); n > 0 && n != c.idleOut {
		c.idleOut = n
		c.infoMu.Lock()
		c.info.lastActive = time.Now()
		c.infoMu.Unlock()
		return
	}
	c.infoMu.Lock()
	idle := c.info.lastActive.Before(limit)
	c.infoMu.Unlock()
	if idle {
		c.kill()
	}
}

// park is called on the loop when the command just run (cmd with args)
// blocked: the registration keeps the command and a copy of its arguments
// (which alias the read buffer), and a timer for its deadline.
func (c *conn) park(cmd *Command, args [][]byte) {
	b := c.blk.b
	c.blk.pending = false
	b.conn = c
	b.cmd = cmd
	b.args = copyArgs(args)
	c.parked.Store(true)
	if !b.deadline.IsZero() {
		gc := c.gc
		b.timer = time.AfterFunc(time.Until(b.deadline), func() {
			gc.Loop().Execute(func() { c.blockTimedOut(b) })
		})
	}
}

// blockTimedOut runs on the loop when b's deadline passes: if b is still
// the connection's blocked command, it is unregistered and answered with
// the null array, and the connection resumes.
func (c *conn) blockTimedOut(b *blocker) {
	env := &c.srv.env
	env.lock()
	if c.blk.b != b {
		env.unlock()
		return
	}
	c.endParked(false)
	env.unlock()
}

// endParked ends a parked connection's blocked command without serving it
// (timeout, CLIENT UNBLOCK): it is unregistered, answered with the
// timeout reply (or the UNBLOCKED error if asError), the waiters it leaves
// first in line are served, and the connection resumes. On the loop, with
// the keyspace lock held.
func (c *conn) endParked(asError bool) {
	b := c.blk.b
	c.unblock()
	errs := c.errCount
	c.writeUnblocked(asError)
	if b != nil {
		c.blockedEnded(b.cmd, b.args, b, errs)
	}
	serveReady(c.KS)
	c.resume()
}

// resume makes a parked connection that was just served write its reply
// and go on with its input, on the loop, through OnTraffic.
func (c *conn) resume() {
	c.parked.Store(false)
	c.gc.Wake()
}

// serveReady serves the woken waiters queued on the registry of ks, in
// wake-up order, by running each one's command again on its connection
// (loop mode; call on the loop with the keyspace lock held). A waiter
// whose command blocks again keeps its place in the queues; a served one
// is unregistered (which may wake the next waiter of its keys: it is
// queued and served in this same call) and resumed.
func serveReady(ks *keyspace.Keyspace) {
	r := LoadRegistry(ks)
	if r == nil {
		return
	}
	for len(r.ready) > 0 {
		b := r.ready[0]
		r.ready = r.ready[1:]
		b.queued = false
		cn := b.conn
		if cn == nil || cn.blk.b != b {
			continue // served, timed out or gone meanwhile
		}
		b.woken = false
		mark, before := len(cn.Out), cn.srv.env.lastLSN()
		tr := cn.srv.track
		prev := tr.cur
		tr.cur = cn // tracking.go: the served command is the writer
		errs := cn.errCount
		t0 := time.Now()
		b.cmd.Run(&cn.Client, b.args)
		b.ran += time.Since(t0)
		tr.cur = prev
		b.readyKeys = b.readyKeys[:0]
		if cn.blk.pending {
			cn.blk.pending = false
			continue
		}
		cn.feed(b.cmd, b.args, mark, before) // replication.go: what the pop did
		if cn.blk.silent {                   // CLIENT REPLY OFF or SKIP when it blocked: no late reply
			cn.Out = cn.Out[:mark]
		}
		if tr.pending.Load() {
			tr.deliver(cn) // its invalidations after its reply (the loop writes without blocking)
		}
		cn.unblock()
		if lsn := cn.srv.env.lastLSN(); lsn > cn.batchLSN {
			cn.batchLSN = lsn
		}
		cn.blockedEnded(b.cmd, b.args, b, errs)
		cn.resume()
	}
	r.ready = nil // drop the drained backing array
	r.readyN.Store(0)
}

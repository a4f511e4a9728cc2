package server

import (
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/persimmon-db/persimmon/evloop"
	"github.com/persimmon-db/persimmon/proto"
	"github.com/persimmon-db/persimmon/repl"
)

// Buffer sizes.
const (
	readBufSize = 16 << 10          // initial read buffer
	maxQueryBuf = proto.MaxQueryBuf // client-query-buffer-limit: bytes buffered for one client
	outFlushAt  = 1 << 20           // replies held beyond this are written mid-batch
	// reserveAfter is how many bytes of a request larger than the read
	// buffer must have arrived before the buffer is grown to the whole
	// length the request declares (processInput).
	reserveAfter = 1 << 20
)

// conn is one client connection. Its goroutine reads whatever the socket
// has, runs every complete command in it (the pipeline batch), waits until
// the highest LSN the batch wrote or read is durable, and only then writes
// the batch's replies in one write (DESIGN.md invariant 1).
type conn struct {
	Client
	srv     *Server
	warm    [][]byte // warmGet's pages (coldread.go)
	nc      net.Conn
	addr    string // peer ip:port
	laddr   string // local ip:port
	fd      int
	created time.Time

	rbuf   []byte       // unprocessed input; always starts at index 0
	pb     parsedBatch  // prefetch.go: the batch's requests parsed once (cleared after use)
	reader proto.Reader // splits rbuf into requests
	// need is the length the request at the front of rbuf was found to
	// need (0: unknown); rbuf is not parsed again before it holds that
	// much. scans counts the Reader calls (tests check it stays linear).
	need  int
	scans int64

	batchLSN uint64    // highest LastLSN seen after a command of this batch
	tick     time.Time // end of the previous command (commandstats timing)
	// chained: tick is the end of a command that ran earlier in this
	// batch, or the batch's start (processInput), with nothing slow since,
	// so the next command can start there (callNow).
	chained bool
	// oomAtStart: used memory was above maxmemory when the running
	// command started (maxmemory.go; read only while maxmemory is set).
	oomAtStart bool
	// runRejected: the handler refused the command as dispatch refuses
	// one, so it counts as a rejected call, not a failed one.
	runRejected bool
	pend        []statDelta // commandstats not yet added to the shared counters
	lastCmd     *Command
	lookupHit   *Command // resolve's cache (dispatch.go)
	// Error statistics (errorstats.go): the error replies counted so
	// far, the count when the command running (or the last nested one)
	// started, and whether it sent an error counted elsewhere.
	errCount, errPrev int64
	failedUncounted   bool
	deadline          bool          // a read deadline is set (timeout > 0)
	qb                queryBufState // the read buffer's resizing (querybuf.go)
	rb                replyBufState // the reply buffer's sizing (replybuf.go)
	inExec            bool          // EXEC is running queued commands with the keyspace lock held
	blk               blockState    // blocking.go: a blocked command (BLPOP...) [lists: blocking]

	infoMu sync.Mutex
	info   clientInfo // what CLIENT LIST shows to other connections

	killed atomic.Bool // CLIENT KILL or server close

	// Pub/sub (pubsub.go): the subscriptions, their counts, and the write
	// lock a publisher and flush share in goroutine mode.
	ps                 pubsubState
	subN, psubN, ssubN atomic.Int32
	// resp3 mirrors Client.Proto == 3 for publishers, which encode a
	// message for this connection from their own goroutine.
	resp3 atomic.Bool
	wmu   sync.Mutex

	// Loop mode (loop.go): gc is the connection's evloop conn, used on
	// the loop only; lc is the same for other goroutines (Close, Wake,
	// Loop); parked is set while a blocking command holds the connection.
	gc     *evloop.Conn
	lc     atomic.Pointer[evloop.Conn]
	parked atomic.Bool
	// held: msync mode on the loop, the replies in out wait until
	// batchLSN is durable (commit.go).
	held   bool
	listed bool // on the committer's held list (loop only)
	// owes: pmem and none modes on the loop, the replies written to gc
	// wait for the round's settle (loop.go) to make their LSN durable.
	owes bool
	// idleOut is the output the loop still held at the last idle check.
	idleOut int

	// Replication (replication.go): what REPLCONF told, a PSYNC/SYNC that
	// takes the connection over once its batch's replies are out, the
	// stream offset after this client's last write (WAIT).
	syncReq  repl.SyncRequest
	takeover bool
	replOff  int64
	// replWait: loop mode, WAIT is waiting off the loop (replication_wait.go)
	replWait bool
	// waiter: WAIT or WAITAOF waits for replicas, in either mode (flag b;
	// CLIENT UNBLOCK ends it through it; replication_wait.go).
	waiter atomic.Pointer[replWaiter]
	link   *loopLink // loop mode: the replica link this connection became
	// CLIENT REPLY: replyOff drops every reply; replySkip drops the
	// reply of the command running, replySkipNext that of the next one.
	replyOff, replySkip, replySkipNext bool
	// obufSoftSince is the Unix second unread replies first exceeded the
	// soft client-output-buffer-limit (0: they do not; obuf.go).
	obufSoftSince int64
	// obufClosed: the replies a batch holds passed the hard limit before
	// they were written (obuf.go: replyOverHard); none of them is sent.
	obufClosed bool
	// trk is the connection's client-side caching mode (tracking.go).
	trk trackState
	// pauseWait: loop mode, the command at the front of rbuf waits for
	// CLIENT PAUSE to end (pause.go).
	pauseWait atomic.Bool
	// noEvict: CLIENT NO-EVICT ON (shown as flag e; Persimmon evicts no
	// clients).
	noEvict atomic.Bool
	// replica: the connection became a replica's link (SYNC/PSYNC), a
	// "replica" client with flag S.
	replica atomic.Bool
	// blockedNow: goroutine mode, the connection waits in a blocking
	// command or for CLIENT PAUSE (flag b; loop mode has parked and
	// pauseWait).
	blockedNow atomic.Bool
	// pauseKilled: goroutine mode, closed by CLIENT KILL while the
	// connection waits for the pause (pause.go; pauseState.mu).
	pauseKilled chan struct{}
}

// clientInfo is a connection's state as published for other connections,
// refreshed once per batch.
type clientInfo struct {
	name       string
	db         int
	multi      int // queued commands, -1 outside MULTI
	cmd        string
	lastActive time.Time
	qbuf       int
	qbufFree   int
	argvMem    int // bytes of the arguments of the command running (its own line only)
	multiMem   int // bytes of the queued commands' arguments, plus 8 per argument (Redis's multi-mem)
	outCap     int // the reply buffer's capacity
	pending    int // reply bytes not yet written to the socket (omem 0 when nothing is pending)
}

// statDelta accumulates one command's commandstats during a batch, so that
// the shared counters are touched once per batch, not per command.
type statDelta struct {
	st                             *cmdStats
	calls, failed, rejected, nanos int64
}

// cmdStats are one command's INFO commandstats counters.
type cmdStats struct {
	calls    atomic.Int64
	failed   atomic.Int64
	rejected atomic.Int64
	nanos    atomic.Int64
	hist     atomic.Pointer[latencyHist] // latency-tracking (latencystats.go); nil until the first call
}

func newConn(s *Server, nc net.Conn, id int64) *conn {
	now := time.Now()
	addr, laddr := connAddrs(nc) // conncmds.go
	c := &conn{
		srv:     s,
		nc:      nc,
		addr:    addr,
		laddr:   laddr,
		fd:      connFD(nc),
		created: now,
		rbuf:    make([]byte, 0, readBufSize),
	}
	c.ID = id
	if s.loading.Load() == nil { // loading.go: else the first command after Attach sets it
		c.KS = s.ks
	}
	c.Srv = s
	c.conn = c
	c.OnError = c.noteError
	c.setUser(s.acl.store.Default())
	c.Authed = !s.acl.store.AuthRequired()
	c.info = clientInfo{multi: -1, cmd: "NULL", lastActive: now}
	c.initReplyBuf(now)    // replybuf.go
	c.Admit = c.admitReply // obuf.go
	return c
}

func connFD(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// shutdown makes the connection finish the batch it is running and stop:
// further reads see EOF, and a client that does not read its replies
// cannot hold the server's close up for long.
func (c *conn) shutdown() {
	c.killed.Store(true)
	if c.closeOnLoop() {
		return
	}
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.CloseRead()
		tc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		return
	}
	c.nc.Close()
}

// kill closes the connection at once (CLIENT KILL).
func (c *conn) kill() {
	c.killed.Store(true)
	c.killedWhilePaused()
	if c.closeOnLoop() {
		return
	}
	c.nc.Close()
}

func (c *conn) serve() {
	defer c.finish()
	resumed := false // the ticker woke the last read (querybuf.go): keep its deadline
	for {
		if !resumed {
			c.setReadDeadline()
		}
		resumed = false
		if cap(c.rbuf) == 0 { // released while idle (querybuf.go)
			if err := c.waitReadable(); err != nil {
				if isTimeout(err) && c.qb.poked.Swap(false) && c.resumeAfterPoke() {
					resumed = true
					continue
				}
				return
			}
		}
		if len(c.rbuf) == cap(c.rbuf) {
			if len(c.rbuf) >= maxQueryBuf {
				c.srv.logf("closing client id=%d addr=%s that reached the max query buffer length", c.ID, c.addr)
				return
			}
			c.rbuf = growBuf(c.rbuf, max(2*cap(c.rbuf), readBufSize))
		}
		c.qb.inRead.Store(true)
		n, err := c.nc.Read(c.rbuf[len(c.rbuf):cap(c.rbuf)])
		c.qb.inRead.Store(false)
		if n > 0 {
			c.rbuf = c.rbuf[:len(c.rbuf)+n]
			c.notePeak()
			c.srv.stats.netIn.Add(int64(n))
			c.srv.stats.reads.Add(1)
			if !c.processInput() {
				return
			}
			if c.tick.Sub(c.qb.checked) >= qbufCheckEvery {
				c.resizeQueryBuf(c.tick)
			}
		}
		if err != nil {
			if n == 0 && isTimeout(err) && c.qb.poked.Swap(false) && c.resumeAfterPoke() {
				resumed = true
				continue
			}
			return
		}
	}
}

func (c *conn) setReadDeadline() {
	t := c.srv.live.timeout.Load()
	if c.subscriptions() > 0 {
		t = 0 // pub/sub subscribers are exempt from the idle timeout, as in Redis
	}
	switch {
	case t > 0:
		c.qb.deadlineAt = time.Now().Add(time.Duration(t) * time.Second)
		c.nc.SetReadDeadline(c.qb.deadlineAt)
		c.deadline = true
	case c.deadline:
		c.nc.SetReadDeadline(time.Time{})
		c.deadline = false
	}
}

// growBuf returns b with its contents and a capacity of at least n.
func growBuf(b []byte, n int) []byte {
	if n <= cap(b) {
		return b
	}
	n = min(n, maxQueryBuf)
	if n >= spareMin {
		if nb := takeSpare(b, n); nb != nil {
			return nb
		}
	}
	nb := make([]byte, len(b), max(n, len(b)))
	copy(nb, b)
	return nb
}

func (c *conn) finish() {
	c.srv.track.disable(c)
	c.forgetPause()
	c.unsubscribeAll()
	c.stopMonitor()
	c.unblockOnClose() // [lists: blocking]
	if c.Watch.Watching() {
		c.srv.env.lock()
		c.srv.env.unwatch(&c.Watch)
		c.srv.env.unlock()
	}
	c.flushStats()
	c.nc.Close()
	c.srv.removeClient(c)
}

// processInput runs every complete command in the read buffer, then makes
// the batch durable and writes its replies. It reports whether the
// connection stays open.
func (c *conn) processInput() bool {
	if c.pauseWait.Load() { // pause.go: the input waits for the pause to end
		return true
	}
	if c.held { // commit.go: replies wait for the committer
		if !c.releaseHeld() {
			return false
		}
		if c.held {
			return !c.killed.Load()
		}
	}
	data := c.rbuf
	need := 0
	if c.need > len(data) {
		// The request at the front is a partial bulk whose length is
		// known: not a byte of it is parsed again until it is all here
		// (re-scanning it on every read made a large value quadratic).
		need = c.need
		data = data[len(data):]
	}
	c.beginBatch(data) // prefetch.go: parses the requests ahead, prefetches their keys
	// The batch's first command starts here, as a chained one starts where
	// the one before it ended (callNow): after the read and the batch's
	// parse and prefetch, so neither is its time, and with one clock read
	// fewer per batch, which at redis-benchmark -c 50 is one per request
	// (of three; clock reads were 2.8% of the loop's samples in perf). If
	// the lock is not free, callNow reads the clock again once it holds it.
	c.tick = clockNow()
	c.chained = true
	for len(data) > 0 && !c.closeAfterReply && c.blk.b == nil && !c.held && !c.replWait {
		c.scans++
		req := data
		args, rest, n, perr := c.nextRequest(data)
		if perr != "" {
			c.protocolError(perr)
			break
		}
		if len(rest) == len(data) { // not yet whole
			need = n
			break
		}
		data = rest
		if len(args) == 0 { // "*0\r\n", an empty line
			continue
		}
		if isCrossProtocol(args[0]) {
			c.srv.crossProtocolAttack()
			c.Out = c.Out[:0] // as Redis: nothing more is written to it
			return false
		}
		if c.srv.pause.typ.Load() != pauseOff && c.holdForPause(args) { // pause.go
			if c.pauseWait.Load() {
				data = req // parked: the request stays for when the pause ends
			}
			break
		}
		mark := len(c.Out)
		c.execute(args)
		if c.trk.caching {
			c.endCaching(c.lastCmd) // tracking.go
		}
		if tr := c.srv.track; tr.pending.Load() {
			tr.deliver(c) // invalidations, after the command's reply (tracking.go)
			c.chained = false
		}
		if c.replyOff || c.replySkip { // CLIENT REPLY OFF|SKIP (edge.go)
			c.Out = c.Out[:min(mark, len(c.Out))]
		}
		c.replySkip, c.replySkipNext = c.replySkipNext, false
		if c.takeover {
			if !c.flush() {
				return false
			}
			c.serveReplica(data)
			c.rbuf = c.rbuf[:0]
			return c.link != nil // on the loop the connection stays, as the link's
		}
		if len(c.Out) >= obufCheckFrom && c.limitSet() && c.replyOverHard(len(c.Out)) { // obuf.go
			break
		}
		if len(c.Out) >= outFlushAt {
			if !c.flush() {
				return false
			}
			c.chained = false // a goroutine's write may block: not the next command's time
		}
	}
	c.endBatch()

	// Keep the unprocessed tail at the front of the buffer (where it is
	// already if nothing was taken: no copy of a large partial bulk per
	// read).
	if c.need > len(c.rbuf) {
		data = c.rbuf // skipped above: all of it is still pending
	}
	c.need = need
	n := len(data)
	if n != len(c.rbuf) {
		n = copy(c.rbuf, data)
		c.rbuf = c.rbuf[:n]
	}
	if need > cap(c.rbuf) && len(c.rbuf) >= reserveAfter {
		// A request that has sent reserveAfter bytes of what it declares
		// gets room for all of it at once, as Redis makes room for a big
		// argument's declared length: doubling on to 100 MB would copy
		// the arrived bytes again at every step (a third of a 100 MB
		// SET's CPU in loop mode).
		c.rbuf = growBuf(c.rbuf, need)
	} else if need > cap(c.rbuf) && cap(c.rbuf)-len(c.rbuf) < readBufSize {
		// Below that, room for what the request declares only once the
		// buffer is (nearly) full and then twice its size: a client that
		// announces a 512 MB bulk and sends three bytes must not cost
		// 512 MB, and doubling keeps big values linear (growing to twice
		// the arrived bytes on every read grew by one read at a time:
		// quadratic).
		c.rbuf = growBuf(c.rbuf, min(need, 2*cap(c.rbuf)))
	}
	c.recycleDrained() // querybuf.go: a drained big buffer goes to the spare
	c.flushStats()
	c.publish()
	if !c.flush() {
		return false
	}
	if c.held { // a closing reply closes when it leaves (releaseHeld)
		return !c.killed.Load()
	}
	if c.closeAfterReply || c.killed.Load() {
		return false
	}
	c.fitReplyBuf() // replybuf.go: the reply buffer keeps its policy's size
	return true
}

// releaseAbove is the buffer size from which dropping it hands memory back
// to the OS at once rather than when the runtime's scavenger gets to it
// (a 512 MB value otherwise leaves the process gigabytes larger for
// minutes).
const releaseAbove = 64 << 20

var (
	releasing   atomic.Bool
	releaseWant atomic.Uint64 // releases asked for; the goroutine runs until it has covered the last
)

// releasedLarge is called when a connection drops a buffer of n bytes. A
// release asked for while one runs is not lost: the running goroutine
// goes round once more, so a buffer dropped during a collection is
// returned too.
func releasedLarge(n int) {
	if n < releaseAbove {
		return
	}
	releaseWant.Add(1)
	if !releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			w := releaseWant.Load()
			// Two collections: buffers parked in sync.Pools survive the
			// first one as the pools' victims.
			runtime.GC()
			debug.FreeOSMemory()
			if releaseWant.Load() != w {
				continue
			}
			releasing.Store(false)
			if releaseWant.Load() == w || !releasing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// flush waits until everything the batch so far wrote or read is durable,
// then writes the held replies. If durability cannot be had, the replies
// are dropped and the connection closed: nothing is acknowledged that is
// not durable.
func (c *conn) flush() bool {
	if c.obufClosed { // obuf.go: nothing more is written to it
		c.Out = c.Out[:0]
		return false
	}
	if c.batchLSN > 0 && c.holdsReplies() && c.batchLSN > c.srv.env.durableLSN() {
		if err := c.srv.commit.failed(); err != nil {
			c.srv.logf("client id=%d addr=%s: closing without replies, lsn %d is not durable: %v",
				c.ID, c.addr, c.batchLSN, err)
			c.Out = c.Out[:0]
			return false
		}
		c.srv.commit.hold(c) // commit.go: the committer releases the replies
		return true
	}
	if c.batchLSN > 0 && c.settlesWithRound() {
		c.srv.owe(c) // loop.go: the round's settle waits, before the replies leave
	}
	if c.batchLSN > 0 {
		if err := c.srv.env.waitDurable(c.batchLSN); err != nil {
			c.srv.logf("client id=%d addr=%s: closing without replies, lsn %d is not durable: %v",
				c.ID, c.addr, c.batchLSN, err)
			c.Out = c.Out[:0]
			return false
		}
		c.batchLSN = 0
	}
	if len(c.Out) == 0 {
		return true
	}
	c.noteReplyPeak(len(c.Out)) // replybuf.go
	var n int
	var err error
	if c.gc != nil {
		// The loop may keep a large Out as the socket's pending output
		// rather than copy it (evloop WriteOwned): Out is then the loop's.
		var kept bool
		n, kept, err = c.gc.WriteOwned(c.Out)
		if kept {
			c.Out = nil
		}
		if p := c.gc.Buffered(); p > 0 && c.overOutputLimit(p) { // obuf.go
			c.kill()
			err = net.ErrClosed
		}
	} else {
		c.wmu.Lock()
		if c.limitSet() { // obuf.go
			n, err = c.writeLimited(c.Out)
		} else {
			n, err = c.nc.Write(c.Out)
		}
		c.wmu.Unlock()
	}
	c.srv.stats.netOut.Add(int64(n))
	c.srv.stats.writes.Add(1)
	c.Out = c.Out[:0]
	return err == nil
}

func (c *conn) protocolError(msg string) {
	c.WriteError("ERR Protocol error: " + msg)
	c.closeAfterReply = true
}

// limits are the header limits for this connection's next request.
func (c *conn) limits() proto.Limits {
	return proto.Limits{
		MaxBulk: c.srv.live.protoMaxBulkLen.Load(),
		Unauth:  !c.Authed && c.srv.acl.store.AuthRequired(),
	}
}

// flushStats adds the batch's commandstats to the shared counters (error
// replies are counted as they are written: noteError).
func (c *conn) flushStats() {
	var calls int64
	for i := range c.pend {
		d := &c.pend[i]
		if d.calls > 0 {
			d.st.calls.Add(d.calls)
			d.st.nanos.Add(d.nanos)
		}
		if d.failed > 0 {
			d.st.failed.Add(d.failed)
		}
		if d.rejected > 0 {
			d.st.rejected.Add(d.rejected)
		}
		calls += d.calls
	}
	c.pend = c.pend[:0]
	if calls > 0 {
		c.srv.stats.commands.Add(calls)
	}
}

// count records one command in the batch's commandstats.
func (c *conn) count(cmd *Command, d time.Duration, failed, rejected bool) {
	st := cmd.stats
	if st == nil {
		return
	}
	n := len(c.pend)
	if n == 0 || c.pend[n-1].st != st {
		c.pend = append(c.pend, statDelta{st: st})
		n++
	}
	p := &c.pend[n-1]
	switch {
	case rejected:
		p.rejected++
	default:
		p.calls++
		p.nanos += int64(d)
		if failed {
			p.failed++
		}
	}
}

// publish refreshes what CLIENT LIST shows to other connections.
func (c *conn) publish() {
	multi := -1
	if c.InMulti {
		multi = len(c.MultiCmds)
	}
	cmd := "NULL"
	if c.lastCmd != nil {
		cmd = c.lastCmd.Name
	}
	c.infoMu.Lock()
	c.info = clientInfo{
		name:       c.Name,
		db:         c.DB,
		multi:      multi,
		cmd:        cmd,
		lastActive: c.tick,
		qbuf:       len(c.rbuf),
		qbufFree:   cap(c.rbuf) - len(c.rbuf),
		multiMem:   c.multiMem(),
		outCap:     cap(c.Out),
	}
	c.infoMu.Unlock()
}

// multiMem is Redis's multi-mem: the queued commands' argument bytes plus
// a pointer per argument.
func (c *conn) multiMem() int {
	if !c.InMulti {
		return 0
	}
	n := 0
	for _, q := range c.MultiCmds {
		for _, a := range q {
			n += len(a) + 8
		}
	}
	return n
}

// snapshot returns the published state; self is the connection asking,
// whose live state is current.
func (c *conn) snapshot(self *conn) clientInfo {
	if c == self {
		multi := -1
		if c.InMulti {
			multi = len(c.MultiCmds)
		}
		cmd := "NULL"
		if c.lastCmd != nil {
			cmd = c.lastCmd.Name
		}
		return clientInfo{
			name: c.Name, db: c.DB, multi: multi, cmd: cmd,
			lastActive: time.Now(),
			qbuf:       len(c.rbuf), qbufFree: cap(c.rbuf) - len(c.rbuf),
			multiMem: c.multiMem(), outCap: cap(c.Out),
		}
	}
	c.infoMu.Lock()
	info := c.info
	c.infoMu.Unlock()
	if c.gc != nil && self != nil && self.gc != nil {
		// On the loop (the asking command runs there too): what the
		// loop still holds for the socket.
		info.pending = c.gc.Buffered()
		if c.held { // commit.go: replies waiting for their group commit
			info.pending += len(c.Out)
		}
	}
	return info
}

func sortConnsByID(cs []*conn) {
	slices.SortFunc(cs, func(a, b *conn) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

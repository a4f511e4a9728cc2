package server

import (
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/evloop"
	"github.com/persimmon-db/persimmon/wal"
)

// The committer: msync durability on the event loop.
//
// In msync mode one group commit costs an msync (hundreds of µs on a disk),
// so the loop must not wait for it: every other connection would stall. A
// connection whose batch wrote, or read what was not yet durable, instead
// holds its replies: flush leaves them in the output buffer, marks the
// connection held, adds it to the committer's held list and asks the
// committer for the batch's LSN. A held connection runs no more commands
// (its input keeps arriving into the read buffer), so its replies stay in
// order and no reply leaves before what it saw is durable (DESIGN.md
// invariant 1).
//
// The committer goroutine persists everything appended so far with one
// group commit (wal.WaitDurable: it captures the log's tail, so one msync
// covers the records of every connection that wrote before it started),
// then hands one task to the loop (Execute) that releases every held
// connection whose LSN is now durable: it writes their replies and goes on
// with their buffered input. Meanwhile the loop serves the other
// connections, which append the records the next group commit will cover:
// the batch grows with the sync latency, and one sync is in flight at a
// time.
//
// A sync costs about 60 µs of CPU on a virtual disk whatever it covers
// (pmem.BenchmarkSyncCost), so the commit is asked for late: a held
// connection does not wake the committer at once but queues one task
// behind the events the loop is serving (requestSoon), and that task
// wakes it, so the sync covers the whole round of the loop instead of
// its first connection; only when every connection is held (one client)
// and the sync cannot be inline (below) is the committer woken at once,
// since nothing more can come. Likewise
// the next commit is asked for by the release task, after the replies
// went out, not by the committer as soon as its sync returns: the
// connections held meanwhile then share it with those whose next
// request comes in during the release. Measured at
// -c 50 this took the records per sync from ~17 to ~30 and removed most
// syncs of one record (wal.SyncStats.Sizes).
//
// Inline syncs. When every connection is held, nobody could run while
// the committer syncs, and handing the sync to it costs two cross-thread
// wake-ups per group commit (the loop wakes the committer, the committer
// wakes the loop's epoll_wait through the eventfd) — at one client that
// was about as much CPU as the sync itself. So the kick task, queued
// behind the round's events, runs the sync on the loop itself when, at
// that moment, every connection is held, no commit is asked of the
// committer or running there (busy), and the last sync was fast: the
// loop msyncs, then releases the held connections at once, as redis-server
// with appendfsync always fsyncs on its own thread before it writes the
// replies. A sync slower than inlineSlow (a stalling disk) turns inline
// syncs off until a sync is fast again, so a connection that arrives
// during a stall waits for at most one sync before the loop serves it;
// the committer carries the stall meanwhile. "Every connection" is every
// one the server has registered: one still in the accept queue is not
// counted, and waits for that one sync too. Measured (scripts/bench-cpu.sh
// -c 1 SET, load 12-15): 136-180 µs of server CPU per request against
// 302-428 through the committer, redis-server appendfsync always 124-154.
//
// The loop also syncs inline when not every connection is held but more
// than half are, and every batch it served since the last release was
// held (no reply was written meanwhile: s.stats.writes has not moved).
// Only writers ran, and most connections wait for this sync: a sync on
// the committer would let the loop answer few of the rest, if any, before
// the next sync, for the cost of the two wake-ups. A connection that
// sends during an inline sync waits for it, as every client of
// redis-server appendfsync always does. Once a reply leaves unheld (a
// read of durable data, a PING), or when at most half the connections
// are held (readers beside writers, as in scripts/bench.sh GET+w), the
// commit is the committer's, so readers are served during syncs.
// Measured at -c 50 SET (redis-benchmark -d 64 -r 100000, interleaved
// with the previous build, load 2-4): server CPU 13.0-13.3 µs per SET
// against 15.3-15.7 through the committer, context switches 0.20 against
// 0.41-0.46 per SET; ~82% of the syncs inline.
//
// io_uring (opt-in, PERSIMMON_URING; startAsync). Instead of waking the
// committer, the kick task can submit the group commit itself as an
// io_uring range fdatasync (wal.StartAsync: what msync does for the
// mapped range) and go on serving; the ring's eventfd is watched by the
// loop, which reaps the completion and releases (asyncDone). No reply
// leaves earlier than before: release still checks each batch's LSN
// against the durable LSN, which only a reaped completion moves. Measured
// against the committer (scripts/bench-cpu.sh, redis-benchmark -c 50 -t
// set -d 64 -r 100000, 3 interleaved rounds, load 9-13, msync 1.4-2.2 ms):
// 15.5-16.2 µs of server CPU per SET with inline syncs kept, 16.1-17.7
// without them, against 14.7-16.1 for the committer; 0.36-0.51 context
// switches per SET against 0.32-0.38; with -P 16 3.4-3.6 and 3.2-3.6 µs
// against 3.2-3.5. The sync's CPU does not go away, it moves: an fsync
// cannot complete without blocking, so the kernel punts it to an io-wq
// worker thread of the process, which blocks ~4 times per sync on the
// writeback and the cache flush (16% of the server's CPU in that thread
// without inline syncs); and since the loop no longer stops during a
// sync, fewer writes gather for the next one (25-28 records per sync
// against 34-36), so there are more syncs. The committer's Go wake-ups
// it saves (futex, startm) were ~2-3% of the CPU.
//
// A failed group commit is fail-stop (the wal refuses appends after it):
// the held connections are closed without their replies.
//
// While a script is past the busy threshold, the watchdog goroutine serves
// the other connections (scriptbusy.go) and the loop is inside the script,
// so release tasks wait; batches run then wait for durability inline, as in
// goroutine mode (that goroutine is not the loop).

// committer runs group commits for the held connections of the loop.
type committer struct {
	s     *Server
	kick  chan struct{} // capacity 1: a commit is wanted
	want  atomic.Uint64 // the highest LSN a held connection waits for
	err   atomic.Pointer[error]
	loop  atomic.Pointer[evloop.Loop] // where release tasks run
	stop  chan struct{}
	done  chan struct{}
	held  []*conn     // held connections; on the loop only
	spare []*conn     // the previous held list's array, reused
	soon  atomic.Bool // a kick task is queued on the loop (requestSoon)
	// busy counts the kicks sent to the committer whose commit and
	// release task it has not yet finished queueing: 0 means it idles
	// and will until it is kicked again (the loop is the only kicker).
	busy atomic.Int32
	slow atomic.Bool // the last sync took longer than inlineSlow

	// settleHeld is how many connections were held when the kick task
	// last ran and put itself back (settle), settles how many times it
	// did for this commit; on the loop.
	settleHeld, settles int

	// servedAt is s.stats.writes (replies written) at the end of the
	// last release: while it is unchanged, every batch served since was
	// held (inlineOK); on the loop.
	servedAt int64

	kickTask, releaseTask func()       // allocated once
	lastYield             time.Time    // the loop's last yieldSometimes Gosched; on the loop
	asyncStart            time.Time    // when the async sync in flight was submitted; on the loop
	slowAfter             atomic.Int64 // inlineSlow in ns (tests lower it)

	// async is the wal's io_uring group commit (asyncSync), nil if
	// unavailable or turned off; asyncOn: one is in flight (on the loop).
	async       asyncSyncer
	asyncOn     bool
	asyncInline bool // inline syncs stay on beside async ones (PERSIMMON_URING)

	commits  atomic.Int64 // group commits run for held connections
	inlines  atomic.Int64 // those of them run on the loop (inline syncs)
	asyncs   atomic.Int64 // those of them submitted from the loop through io_uring
	released atomic.Int64 // held batches released after them
}

func newCommitter(s *Server) *committer {
	cm := &committer{
		s:    s,
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	cm.slowAfter.Store(int64(inlineSlow))
	cm.kickTask = func() {
		cm.soon.Store(false)
		if cm.settle() {
			return
		}
		if cm.inlineOK() {
			cm.commitInline()
			return
		}
		if cm.commitAsync() {
			return
		}
		cm.kickNow()
	}
	cm.releaseTask = cm.release
	go cm.run()
	return cm
}

// requestSoon asks for a group commit covering lsn once the loop has
// served the events that are ready now: the committer is woken by a task
// queued behind them (any goroutine).
func (cm *committer) requestSoon(lsn uint64, el *evloop.Loop) {
	cm.raiseWant(lsn, el)
	if cm.soon.Swap(true) {
		return // queued already; the commit reads want when it starts
	}
	if err := el.Execute(cm.kickTask); err != nil {
		cm.soon.Store(false) // the loop is shutting down
		cm.kickNow()
	}
}

// settleRounds is how many more rounds of the loop the kick task waits,
// at most, while each round holds more connections (settle).
const settleRounds = 8

// settle puts the kick task back behind one more round of the loop's
// events when the round just served held more connections than the one
// before (any at the first try), and reports whether it did: the clients
// the last release answered send their next writes over a few rounds, and
// a commit asked for after the first of them covers only those (at -c 50,
// ~31 records per sync). It stops once a round holds nobody new, after
// settleRounds, or when every connection is held (nothing more can come:
// the commit may then be inline). Each round costs the loop one
// epoll_wait that returns at once; the records per sync at -c 50 went
// from 31.0-31.7 to 34.4-39.1 with 4-16 rounds (scripts, BENCHMARKS.md
// "Issue 10"). On the loop.
func (cm *committer) settle() bool {
	n := len(cm.held)
	if n > cm.settleHeld && cm.settles < settleRounds && n < cm.s.numClients() {
		if el := cm.loop.Load(); el != nil {
			cm.settleHeld = n
			cm.settles++
			cm.soon.Store(true)
			if el.Execute(cm.kickTask) == nil {
				return true
			}
			cm.soon.Store(false) // the loop is shutting down
		}
	}
	cm.settleHeld, cm.settles = 0, 0
	return false
}

// raiseWant makes the next commit cover lsn and records the loop that
// release tasks run on (any goroutine).
func (cm *committer) raiseWant(lsn uint64, el *evloop.Loop) {
	for {
		w := cm.want.Load()
		if w >= lsn || cm.want.CompareAndSwap(w, lsn) {
			break
		}
	}
	if cm.loop.Load() == nil {
		cm.loop.Store(el)
	}
}

// kickNow wakes the committer for a commit (any goroutine).
func (cm *committer) kickNow() {
	cm.busy.Add(1)
	select {
	case cm.kick <- struct{}{}:
	default: // a commit is already asked for; it reads want when it starts
		cm.busy.Add(-1)
	}
}

// inlineSlow is the sync time above which syncs are left to the committer
// (a stalling disk): ~100× an msync of a few pages on the disks measured.
const inlineSlow = 10 * time.Millisecond

// inlineOK reports whether the loop may run the next group commit itself:
// the committer neither runs nor is asked for a commit, the last sync was
// fast, and either every connection is held (none could run while the
// sync blocks the loop) or more than half are and every batch served
// since the last release was held. On the loop.
func (cm *committer) inlineOK() bool {
	if cm.asyncOn || (cm.async != nil && !cm.asyncInline) {
		return false
	}
	if cm.busy.Load() != 0 || cm.slow.Load() || len(cm.held) == 0 {
		return false
	}
	n := cm.s.numClients()
	if cm.s.stats.writes.Load() == cm.servedAt && 2*len(cm.held) > n {
		return true // only held batches ran since the last release, most connections wait
	}
	if len(cm.held) < n {
		return false
	}
	held := 0
	for _, c := range cm.held {
		if c.held && !c.killed.Load() {
			held++
		}
	}
	return held >= n
}

// sync makes everything up to lsn durable (the loop, or the committer
// goroutine), timing it for the inline rule.
func (cm *committer) sync(lsn uint64) {
	wait := cm.s.env.syncNow
	if wait == nil {
		wait = cm.s.env.waitDurable
	}
	start := time.Now()
	err := wait(lsn)
	cm.slow.Store(time.Since(start) > time.Duration(cm.slowAfter.Load()))
	if err != nil && cm.err.Load() == nil {
		cm.err.Store(&err)
	}
	cm.commits.Add(1)
}

// commitInline runs a group commit on the loop and releases the held
// connections it made durable (the kick task, when inlineOK).
func (cm *committer) commitInline() {
	if lsn := cm.want.Load(); cm.s.env.durableLSN() < lsn {
		cm.sync(lsn)
		cm.inlines.Add(1)
	}
	cm.release()
}

// asyncSyncer is the wal's asynchronous group commit (wal/async.go).
type asyncSyncer interface {
	StartAsync() (wal.AsyncState, error)
	ReapAsync() (idle bool, err error)
	AsyncEventFd() int
}

// startAsync turns on group commits through io_uring from the loop
// (server start, before any connection): the loop submits the sync and
// goes on serving; the ring's eventfd, watched by the loop, reports the
// completion, and the loop reaps it and releases the held connections
// (asyncDone) — no committer wake-up, no Go thread hand-off.
//
// Off by default: it did not lower the CPU per write (see "io_uring"
// above). PERSIMMON_URING=1 turns it on beside the inline syncs (which
// still run when every connection waits), PERSIMMON_URING=noinline turns
// it on instead of them.
func (cm *committer) startAsync() {
	mode := os.Getenv("PERSIMMON_URING")
	if (mode != "1" && mode != "noinline") || cm.s.env.asyncSync == nil || cm.s.loop == nil {
		return
	}
	as, err := cm.s.env.asyncSync()
	if err != nil {
		cm.s.logf("group commit: io_uring unavailable (%v): syncing on the committer thread", err)
		return
	}
	// Not waited for: Attach calls this holding loadMu, which a loop
	// serving a command while loading may be waiting for. Until the task
	// runs, the committer thread syncs.
	el := cm.s.loop
	if err := el.Execute(func() {
		if err := el.Watch(as.AsyncEventFd(), cm.asyncDone); err != nil {
			cm.s.logf("group commit: cannot watch the io_uring eventfd (%v): syncing on the committer thread", err)
			return
		}
		cm.async, cm.asyncInline = as, mode != "noinline"
		cm.s.logf("group commit: io_uring syncs submitted from the event loop (PERSIMMON_URING=%s)", mode)
	}); err != nil {
		return
	}
}

// commitAsync starts a group commit through io_uring, or finds one in
// flight, and reports whether it did (false: the committer must sync).
// On the loop.
func (cm *committer) commitAsync() bool {
	if cm.async == nil || cm.busy.Load() != 0 {
		return false // the committer is syncing: its release task comes
	}
	if cm.asyncOn {
		return true // asyncDone releases, and asks again for who is left
	}
	if cm.s.env.durableLSN() >= cm.want.Load() {
		cm.release()
		return true
	}
	st, err := cm.async.StartAsync()
	switch {
	case err != nil:
		if cm.err.Load() == nil {
			cm.err.Store(&err)
		}
		cm.release() // closes the held connections
		return true
	case st == wal.AsyncPending:
		cm.asyncOn = true
		cm.asyncStart = time.Now()
		return true
	case st == wal.AsyncDone:
		cm.commits.Add(1)
		cm.release()
		return true
	}
	return false // a synchronous leader persists now (a keyspace goroutine)
}

// asyncDone is the loop's watcher of the ring's eventfd: it reaps the
// completion and releases the connections it made durable. On the loop.
func (cm *committer) asyncDone() {
	idle, err := cm.async.ReapAsync()
	if err != nil && cm.err.Load() == nil {
		cm.err.Store(&err)
	}
	if !idle || !cm.asyncOn {
		return
	}
	cm.asyncOn = false
	cm.slow.Store(time.Since(cm.asyncStart) > time.Duration(cm.slowAfter.Load()))
	cm.commits.Add(1)
	cm.asyncs.Add(1)
	cm.release()
}

// hold makes c wait for its batch's LSN (on the loop, or on the watchdog
// while the loop is inside a script).
func (cm *committer) hold(c *conn) {
	c.held = true
	if !c.listed {
		c.listed = true
		cm.held = append(cm.held, c)
	}
	if len(cm.held) >= cm.s.numClients() && (cm.busy.Load() != 0 || cm.slow.Load()) {
		// Every connection waits (one client, say) and the commit cannot
		// be inline: nothing more will be appended this round, so the
		// committer need not wait for its end.
		cm.raiseWant(c.batchLSN, c.gc.Loop())
		cm.kickNow()
		return
	}
	cm.requestSoon(c.batchLSN, c.gc.Loop())
}

// failed is the error of a group commit that failed, or nil.
func (cm *committer) failed() error {
	if p := cm.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (cm *committer) run() {
	defer close(cm.done)
	for {
		select {
		case <-cm.stop:
			return
		case <-cm.kick:
		}
		kicks := int32(1)
		if lsn := cm.want.Load(); cm.s.env.durableLSN() < lsn {
			cm.sync(lsn)
		}
		// Kicks that came during this commit are dropped: the release
		// asks again for every connection it leaves held. (Drained
		// before the release task is queued, so none of its own is.)
		select {
		case <-cm.kick:
			kicks++
		default:
		}
		if el := cm.loop.Load(); el != nil {
			// An error means the loop is shutting down: nothing to release.
			_ = el.Execute(cm.releaseTask)
		}
		cm.busy.Add(-kicks)
	}
}

// release writes the replies of every held connection whose batch is now
// durable and goes on with its input; on the loop.
func (cm *committer) release() {
	list := cm.held
	cm.held = cm.spare[:0]
	durable := cm.s.env.durableLSN()
	failed := cm.failed() != nil
	n := 0
	for _, c := range list {
		c.listed = false
		switch {
		case !c.held || c.killed.Load():
			// released already (its input came first), or closed
		case c.batchLSN > durable && !failed:
			c.listed = true
			cm.held = append(cm.held, c) // wrote after this commit started
		default:
			n++
			if !c.processInput() {
				c.gc.Close()
			}
		}
	}
	clear(list)
	cm.spare = list[:0]
	// The connections kept above, and those processInput held again,
	// wrote after this commit read want: the next covers them.
	if len(cm.held) > 0 {
		cm.requestSoon(cm.want.Load(), cm.loop.Load())
	}
	cm.released.Add(int64(n))
	cm.servedAt = cm.s.stats.writes.Load()
	cm.yieldSometimes()
}

// yieldEvery is how often the loop goroutine gives up its thread, at
// most: below sysmon's 10 ms time slice (see yieldSometimes).
const yieldEvery = 5 * time.Millisecond

// yieldSometimes reschedules the loop goroutine once per yieldEvery (on the
// loop, after a release). The loop never blocks in the Go scheduler, only
// in system calls, so to the runtime it is one goroutine running forever:
// every 10 ms sysmon preempts it (a signal) or, as it is mostly in
// epoll_wait or msync, takes its P away, and each time resets its own
// polling to every 20 µs (~3,000-6,000 wake-ups a second, measured in
// the sysmon thread at -c 50). A Gosched every 5 ms starts a new time
// slice at the cost of one thread hand-off.
func (cm *committer) yieldSometimes() {
	if now := time.Now(); now.Sub(cm.lastYield) >= yieldEvery {
		cm.lastYield = now
		runtime.Gosched()
	}
}

// close stops the committer goroutine (server close, after the loop).
func (cm *committer) close() {
	close(cm.stop)
	<-cm.done
}

// releaseHeld is called at the start of processInput on a held connection:
// if its batch is durable now, the held replies are written (and the
// connection closed if they were its last) and the connection goes on;
// if not, it stays held. It reports whether the connection stays open.
func (c *conn) releaseHeld() bool {
	cm := c.srv.commit
	if !c.holdsReplies() { // the watchdog: wait here
		c.held = false
		return c.flush() && !c.closeAfterReply
	}
	if c.batchLSN > c.srv.env.durableLSN() {
		if err := cm.failed(); err != nil {
			c.srv.logf("client id=%d addr=%s: closing without replies, lsn %d is not durable: %v",
				c.ID, c.addr, c.batchLSN, err)
			c.Out = c.Out[:0]
			return false
		}
		cm.requestSoon(c.batchLSN, c.gc.Loop())
		return true
	}
	c.held = false
	if !c.flush() || c.closeAfterReply {
		return false
	}
	return true
}

// holdsReplies reports whether a batch that is not durable yet holds its
// replies for the committer (the loop, msync mode) rather than waiting
// inline (goroutine mode, pmem and none modes, and the watchdog serving
// loop connections while a script runs).
func (c *conn) holdsReplies() bool {
	return c.gc != nil && c.srv.commit != nil && c.srv.busy.Load() == nil
}

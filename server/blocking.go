package server

import (
	"errors"
	"math"
	"math/big"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX).
//
// A blocking command never waits while holding the keyspace lock. Its
// handler runs like any other, under the lock; when none of its keys can
// serve it and its timeout allows waiting, the handler calls
// c.blockOn(keys, timeout) and returns WITHOUT writing a reply. blockOn
// registers the client as a waiter on each key (FIFO per key: arrival
// order) and marks the call as blocked. The connection loop (call, in
// dispatch.go) then sees the mark and runs serveBlocked with the lock
// released:
//
//  1. the replies of the commands before it in the pipeline batch are
//     made durable and written (flush), as at the end of any batch;
//  2. it waits for its wake-up channel, the timeout, the client closing
//     the connection (watched with a MSG_PEEK that consumes nothing), or
//     the server closing;
//  3. on a wake-up it takes the lock and runs the same handler again with
//     the same arguments. If the handler calls blockOn again (someone else
//     took the elements first), the client keeps its place in the queues
//     and waits again; otherwise the handler wrote its reply and wrote its
//     batch (the pop, or BLMOVE's pop and push, one atomic batch as always)
//     and the client is unregistered;
//  4. on the timeout it unregisters and replies the null array (*-1),
//     which is Redis's timeout reply for every blocking list and sorted-set
//     command; on a close it unregisters and the connection ends.
//
// Wake-ups come from the keyspace, not from polling: the first blocking
// command installs a hook with Keyspace.OnKeyReady, which the keyspace
// calls (with the lock held, while a batch is applied) whenever a key
// gains elements: every list push, including the pushes that RENAME,
// COPY, MOVE and a MULTI/EXEC block are made of. The hook signals the
// FIRST waiter of that key only. When a waiter leaves the queue (served,
// timed out, gone) the new first waiter of each of its keys is signalled
// too, so several elements pushed at once serve several waiters, one after
// the other, in arrival order. A spurious wake-up costs one re-run.
//
// Inside MULTI/EXEC (and wherever no connection serves the client, as in
// handler unit tests) blockOn does not block: it returns false and the
// handler replies at once, as Redis does.
//
// Reuse for another type (sorted sets): the type's appliers that add
// elements call ks.keyReady(db, key); the handler parses its timeout with
// ParseBlockTimeout, tries to serve (skipping keys for which c.yieldsTo),
// and calls c.blockOn when it cannot
// (replying *-1 itself when blockOn returns false).
//
// Between a push and the re-run of the waiter it woke, a blocking command
// of another client that is not blocked yet leaves the elements of that key
// to the waiters (c.yieldsTo), so blocked clients are served in arrival
// order even against newcomers.
//
// On the event loop (loop.go, the default for pmem and none) there is no
// such window: a woken waiter is re-run by the loop right after the
// command that pushed, before the keyspace lock is released (serveReady),
// exactly as Redis serves blocked clients after each command.
//
// Known differences from Redis: with a goroutine per connection (msync
// mode), in that window a NON-blocking command of another client (LPOP,
// LMOVE...) may still take the elements first (the woken waiter then keeps
// waiting, first in line); a waiter re-runs the
// command, which skips a key that became another type meanwhile
// (skipsOnWake: as Redis 7.0, the client stays blocked); a client that
// pipelines more commands after a blocking one and then closes is noticed
// only when it is woken or times out.

// Timeout errors, as Redis 7.0 words them.
var (
	errTimeoutNotFloat = ReplyError("ERR timeout is not a float or out of range")
	ErrTimeoutNegative = ReplyError("ERR timeout is negative")
)

// MaxBlockTimeout stands for "longer than anyone waits": timeouts beyond it
// block until woken, as 0 does.
const MaxBlockTimeout = 100 * 365 * 24 * time.Hour

// ParseBlockTimeout parses a blocking command's timeout (seconds, a long
// double) the way Redis 7.0's getTimeoutFromObjectOrReply does: the
// milliseconds are ceil(seconds*1000) converted to a long long, so a value
// that does not fit (1e20, inf) comes out negative on x86 and is refused as
// negative; 0 means forever.
func ParseBlockTimeout(arg []byte) (time.Duration, error) {
	f, ok := ParseLongDouble(arg)
	if !ok {
		return 0, errTimeoutNotFloat
	}
	if f.IsInf() {
		return 0, ErrTimeoutNegative
	}
	ms := NewLongDouble().Mul(f, big.NewFloat(1000))
	if ms.Cmp(big.NewFloat(math.MaxInt64)) >= 0 {
		return 0, ErrTimeoutNegative // the cast to long long overflows
	}
	n, acc := ms.Int64()
	if acc == big.Below { // ms was truncated toward zero: ceil
		n++
	}
	if n < 0 {
		return 0, ErrTimeoutNegative
	}
	if n > int64(MaxBlockTimeout/time.Millisecond) {
		return MaxBlockTimeout, nil
	}
	return time.Duration(n) * time.Millisecond, nil
}

// BlockKey names a key in a database.
type BlockKey struct {
	db  int
	key string
}

// blocker is one blocked command's registration.
type blocker struct {
	keys     []BlockKey
	ready    chan struct{} // buffered 1: a key of it may have gained elements
	deadline time.Time     // zero: no timeout
	woken    bool          // signalled and not yet re-run (keyspace lock)
	// readyKeys are the keys signalled since the last run, in signal
	// order: the re-run tries them first (see servingOrder).
	readyKeys []BlockKey

	// Loop mode (loop.go): the parked connection, its command with a copy
	// of its arguments, the deadline's timer, and whether b is on the
	// registry's ready list.
	conn   *conn
	cmd    *Command
	args   [][]byte
	timer  *time.Timer
	queued bool

	// groupRead marks an XREADGROUP, which takes the entries it reads
	// (streams.go: later readers yield to it while it is woken).
	groupRead bool

	// unblocked is set by CLIENT UNBLOCK (goroutine mode): the waiter
	// ends with its timeout reply, or the UNBLOCKED error if asError.
	unblocked, asError bool

	// started is when the command was first run (its latency, counted
	// when it ends: blockedEnded).
	started time.Time
	// ran is the time its runs took (the first, and each attempt to serve
	// it), without the time it waited: what the slow log counts when it
	// ends, as Redis's updateStatsOnUnblock does.
	ran time.Duration
}

// blockedEnded adds to cmd's statistics what the end of its blocked call
// b brings, as Redis's updateStatsOnUnblock does: a failed call if the
// final reply (written since the connection's error count was
// errsBefore) was an error, and the latency of the whole call, from its
// first run. The call itself was counted when it blocked. The slow log
// gets the call (args, its original arguments) now, not when it blocked.
func (c *conn) blockedEnded(cmd *Command, args [][]byte, b *blocker, errsBefore int64) {
	if cmd == nil {
		return
	}
	c.recordSlow(cmd, args, b.ran)
	if cmd.stats == nil {
		return
	}
	if c.errCount > errsBefore {
		c.pend = append(c.pend, statDelta{st: cmd.stats, failed: 1})
	}
	c.errPrev = c.errCount
	if c.srv.live.latencyTracking.Load() {
		cmd.stats.recordLatency(time.Since(b.started))
	}
}

// errUnblocked is what CLIENT UNBLOCK ... ERROR makes the blocked command
// reply.
const errUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"

// unblockByClient ends c's blocked command as CLIENT UNBLOCK asks (with
// the timeout reply, or the UNBLOCKED error). It reports whether c was
// blocked. Called from another connection, without the keyspace lock.
func (c *conn) unblockByClient(asError bool) bool {
	env := &c.srv.env
	env.lock()
	defer env.unlock()
	b := c.blk.b
	if b == nil || b.unblocked {
		return false
	}
	if c.gc == nil { // goroutine mode: serveBlocked answers
		b.unblocked, b.asError = true, asError
		select {
		case b.ready <- struct{}{}:
		default:
		}
		return true
	}
	// Event loop: this runs on the loop, as every command does.
	c.endParked(asError)
	return true
}

// writeUnblocked writes the reply of a blocked command ended by CLIENT
// UNBLOCK or its timeout, unless CLIENT REPLY silenced it.
func (c *conn) writeUnblocked(asError bool) {
	if c.blk.silent {
		return // CLIENT REPLY OFF or SKIP when it blocked
	}
	if asError {
		c.WriteError(errUnblocked)
	} else {
		c.WriteNullArray()
	}
}

// wake signals b that key may have gained elements (with the keyspace lock
// held).
func (b *blocker) wake(r *BlockRegistry, key BlockKey) {
	b.woken = true
	if !slices.Contains(b.readyKeys, key) {
		b.readyKeys = append(b.readyKeys, key)
	}
	if b.conn != nil { // parked on the event loop: served by serveReady
		if !b.queued {
			b.queued = true
			r.ready = append(r.ready, b)
			r.readyN.Store(int32(len(r.ready)))
			if !r.loopServes {
				r.kickServe(b.conn)
			}
		}
		return
	}
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// BlockRegistry holds the waiters of one keyspace. It is only touched with
// the keyspace lock held.
type BlockRegistry struct {
	waiters map[BlockKey][]*blocker // per key, in arrival order
	blocked atomic.Int64            // clients blocked now (INFO blocked_clients)
	timed   atomic.Int64            // those with a timeout (INFO clients_in_timeout_table)
	ready   []*blocker              // loop mode: woken waiters to serve, in wake-up order
	// readyN is len(ready), readable without the lock (readyWaiters);
	// kicked is set while a serveReady task is queued on the loop.
	readyN atomic.Int32
	kicked atomic.Bool
	// loopServes is set while a command on the loop holds the lock and
	// will serve the ready list before it lets it go (dispatch): its
	// wake-ups need no kickServe task. Guarded by the keyspace lock.
	loopServes bool
}

// kickServe queues, unless one is queued already, a task on the event loop
// that serves the ready list. A command on the loop serves it itself before
// it lets the lock go (the task then finds it empty); the task is for
// wake-ups from other goroutines, which would otherwise wait for the next
// command on the loop: active expiry deleting a stream that XREADGROUP
// clients wait on, a goroutine-mode connection. Call with the keyspace
// lock held.
func (r *BlockRegistry) kickServe(c *conn) {
	lc := c.lc.Load()
	if lc == nil || !r.kicked.CompareAndSwap(false, true) {
		return
	}
	ks, env := c.KS, &c.srv.env
	err := lc.Loop().Execute(func() {
		r.kicked.Store(false)
		env.lock()
		serveReady(ks)
		env.unlock()
	})
	if err != nil { // the loop is shutting down: nobody is left to serve
		r.kicked.Store(false)
	}
}

// blockedClients is the number of clients blocked on keys of ks.
func blockedClients(ks *keyspace.Keyspace) int64 {
	if r, ok := registries.Load(ks); ok {
		return r.(*BlockRegistry).blocked.Load()
	}
	return 0
}

// timedBlockedClients is the number of clients blocked on keys of ks
// with a timeout: Redis's clients timeout table holds them (a timeout of
// 0 waits forever and is not in it).
func timedBlockedClients(ks *keyspace.Keyspace) int64 {
	if r, ok := registries.Load(ks); ok {
		return r.(*BlockRegistry).timed.Load()
	}
	return 0
}

// registries maps a *keyspace.Keyspace to its *blockRegistry.
var registries sync.Map

// registriesMade is set once any registry exists, so that the loop's
// per-command check (loopRegistry) costs an atomic load, not a sync.Map
// lookup, on a server where no client ever blocked.
var registriesMade atomic.Bool

// LoadRegistry returns the registry of ks, or nil if no client ever
// blocked on it.
func LoadRegistry(ks any) *BlockRegistry {
	if r, ok := registries.Load(ks); ok {
		return r.(*BlockRegistry)
	}
	return nil
}

// registryOf returns the registry of ks, creating it and installing the
// keyspace hook on first use. Call with the keyspace lock held.
func registryOf(ks *keyspace.Keyspace) *BlockRegistry {
	if r, ok := registries.Load(ks); ok {
		return r.(*BlockRegistry)
	}
	r := &BlockRegistry{waiters: map[BlockKey][]*blocker{}}
	registries.Store(ks, r)
	registriesMade.Store(true)
	ks.OnKeyReady(r.signal)
	ks.OnKeyTouched(r.streamKeyTouched) // streams.go
	return r
}

// signal wakes the first waiter of (db, key), if any (the keyspace hook).
func (r *BlockRegistry) signal(db int, key []byte) {
	if len(r.waiters) == 0 {
		return
	}
	k := BlockKey{db, string(key)}
	if q := r.waiters[k]; len(q) > 0 {
		q[0].wake(r, k)
	}
}

// SignalSwapped wakes, after SWAPDB, the first waiter of every key of the
// swapped databases that now holds a list or a sorted set, as Redis 7.0's
// scanDatabaseForReadyKeys does (a key of another type wakes nobody: the
// waiter keeps waiting instead of answering WRONGTYPE). Keys are signalled
// in sorted order. Call with the keyspace lock held.
func SignalSwapped(ks *keyspace.Keyspace, db1, db2 int) {
	r := LoadRegistry(ks)
	if r == nil || len(r.waiters) == 0 {
		return
	}
	var keys []BlockKey
	for k := range r.waiters {
		if k.db != db1 && k.db != db2 {
			continue
		}
		if t := ks.Type(k.db, []byte(k.key)); t == keyspace.TypeList || t == keyspace.TypeZSet {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b BlockKey) int {
		if a.db != b.db {
			return a.db - b.db
		}
		return strings.Compare(a.key, b.key)
	})
	for _, k := range keys {
		r.waiters[k][0].wake(r, k)
	}
}

func (r *BlockRegistry) add(b *blocker) {
	r.blocked.Add(1)
	if !b.deadline.IsZero() {
		r.timed.Add(1)
	}
	for _, k := range b.keys {
		r.waiters[k] = append(r.waiters[k], b)
	}
}

// remove takes b out of every queue and signals the new first waiter of
// each of its keys, which may be able to take what b did not.
func (r *BlockRegistry) remove(b *blocker) {
	r.blocked.Add(-1)
	if !b.deadline.IsZero() {
		r.timed.Add(-1)
	}
	for _, k := range b.keys {
		q := r.waiters[k]
		for i, x := range q {
			if x == b {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(r.waiters, k)
			continue
		}
		r.waiters[k] = q
		q[0].wake(r, k)
	}
}

// waiting returns the number of clients blocked on (db, key) (tests).
func (r *BlockRegistry) waiting(db int, key string) int {
	return len(r.waiters[BlockKey{db, key}])
}

// YieldsTo reports whether a blocking command that is not blocked yet must
// leave the elements of key to a client already blocked on it: the first
// waiter of key was woken by a push and has not taken its turn yet. Redis
// serves blocked clients right after the command that pushed, before any
// other command, so a blocking command arriving in between finds nothing;
// the handler treats key as empty (and blocks behind the others). Outside
// that window (nobody woken) the elements are anyone's.
//
// A blocked client's re-run yields every key on which it is not first in
// line: Redis serves a key's waiters in arrival order, so a client woken
// through one key (say its first waiter left) cannot take the elements of
// another key from the clients that blocked on that key before it. Call
// with the keyspace lock held.
func (c *Client) YieldsTo(key []byte) bool {
	cn := c.conn
	if cn == nil || cn.inExec {
		return false
	}
	r, ok := registries.Load(c.KS)
	if !ok {
		return false
	}
	q := r.(*BlockRegistry).waiters[BlockKey{c.DB, string(key)}]
	if cn.blk.b != nil {
		return len(q) > 0 && q[0] != cn.blk.b
	}
	return len(q) > 0 && q[0].woken
}

// ServingOrder returns keys in the order a blocking command must try them.
// On its first run that is the argument order. On a re-run after a wake-up
// the keys signalled since the last run come first, in the order they were
// signalled, then the others in argument order: Redis serves a blocked
// client from the keys in the order they became ready (signalKeyAsReady),
// so BLPOP k1 k2 woken by a MULTI that pushed to k2 and then to k1 pops
// from k2. Call with the keyspace lock held.
func (c *Client) ServingOrder(keys [][]byte) [][]byte {
	cn := c.conn
	if cn == nil || cn.blk.b == nil || len(cn.blk.b.readyKeys) == 0 {
		return keys
	}
	out := make([][]byte, 0, len(keys))
	first := make(map[string]bool, len(cn.blk.b.readyKeys))
	for _, rk := range cn.blk.b.readyKeys {
		if rk.db != c.DB || first[rk.key] {
			continue
		}
		for _, k := range keys {
			if string(k) == rk.key {
				out = append(out, k)
				first[rk.key] = true
				break
			}
		}
	}
	for _, k := range keys {
		if !first[string(k)] {
			out = append(out, k)
		}
	}
	return out
}

// blockState is a connection's blocking state (a field of conn).
type blockState struct {
	b       *blocker // the registration, while blocked
	pending bool     // the handler just run asked to block
	// silent: the blocked command's reply is dropped when it ends (it
	// blocked under CLIENT REPLY OFF, or is the command SKIP silences:
	// the connection reads nothing meanwhile, so the setting holds until
	// then). Kept after unblock, for the reply written after it.
	silent bool
}

// BlockOn is called by a blocking command's handler, with the keyspace lock
// held, when none of keys (in the client's database) can serve it. It
// reports whether the command blocks: then the handler must return without
// writing a reply. It returns false where the client may not block (inside
// MULTI/EXEC, or no connection serves it): the handler then replies what
// Redis replies there (*-1 for BLPOP, BLMPOP, BZPOPMIN; $-1 for BLMOVE). A
// re-run of a command that is already registered keeps its place in the
// queues and its original deadline.
func (c *Client) BlockOn(keys [][]byte, timeout time.Duration) bool {
	cn := c.conn
	if cn == nil || cn.inExec {
		return false
	}
	cn.blk.pending = true
	if cn.blk.b != nil {
		return true
	}
	b := &blocker{ready: make(chan struct{}, 1), started: time.Now()}
	if timeout > 0 {
		b.deadline = time.Now().Add(timeout)
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[string(k)] {
			seen[string(k)] = true
			b.keys = append(b.keys, BlockKey{c.DB, string(k)})
		}
	}
	registryOf(c.KS).add(b)
	cn.blk.b = b
	cn.blk.silent = cn.replyOff || cn.replySkip
	return true
}

// unblock unregisters the connection's blocked command. Call with the
// keyspace lock held.
func (c *conn) unblock() {
	if c.blk.b == nil {
		return
	}
	if t := c.blk.b.timer; t != nil {
		t.Stop()
	}
	c.parked.Store(false)
	registryOf(c.KS).remove(c.blk.b)
	c.blk.b = nil
	c.blk.pending = false
}

// unblockOnClose unregisters a blocked command of a connection that ends.
func (c *conn) unblockOnClose() {
	if c.blk.b == nil {
		return
	}
	c.srv.env.lock()
	c.unblock()
	if c.gc != nil {
		serveReady(c.KS) // the waiters it leaves first in line may be served now
	}
	c.srv.env.unlock()
}

// serveBlocked waits for a blocked command to be served, time out, or its
// client to go away (see the package comment on blocking above). It is
// called by call without the keyspace lock, after the handler asked to
// block; args stay valid because the read buffer is not touched meanwhile.
func (c *conn) serveBlocked(cmd *Command, args [][]byte) {
	env := &c.srv.env
	b := c.blk.b
	c.blk.pending = false
	if !c.flush() {
		c.unblockOnClose()
		c.closeAfterReply = true
		return
	}
	gone, stopWatch := c.watchGone()
	defer stopWatch()
	var timeout <-chan time.Time
	if !b.deadline.IsZero() {
		t := time.NewTimer(time.Until(b.deadline))
		defer t.Stop()
		timeout = t.C
	}
	defer func() { c.tick = time.Now() }()
	for {
		select {
		case <-b.ready:
			env.lock()
			errs := c.errCount
			if b.unblocked { // CLIENT UNBLOCK
				c.unblock()
				env.unlock()
				c.writeUnblocked(b.asError)
				c.blockedEnded(cmd, args, b, errs)
				return
			}
			b.woken = false
			mark, before := len(c.Out), env.lastLSN()
			tr := c.srv.track
			tr.cur = c // tracking.go: the writer; processInput delivers
			t0 := time.Now()
			cmd.Run(&c.Client, args)
			b.ran += time.Since(t0)
			tr.cur = nil
			b.readyKeys = b.readyKeys[:0]
			if c.blk.pending {
				c.blk.pending = false
				env.unlock()
				continue
			}
			c.feed(cmd, args, mark, before) // replication.go: what the pop did
			c.unblock()
			lsn := env.lastLSN()
			env.unlock()
			if lsn > c.batchLSN {
				c.batchLSN = lsn
			}
			c.blockedEnded(cmd, args, b, errs)
			return
		case <-timeout:
			env.lock()
			asError := b.unblocked && b.asError // CLIENT UNBLOCK ERROR came first
			c.unblock()
			env.unlock()
			errs := c.errCount
			c.writeUnblocked(asError)
			c.blockedEnded(cmd, args, b, errs)
			return
		case <-gone:
			c.unblockOnClose()
			c.closeAfterReply = true
			return
		case <-c.srv.closing:
			c.unblockOnClose()
			c.closeAfterReply = true
			return
		}
	}
}

// watchGone reports on gone when the client closes its side of the
// connection (or the connection is closed under it) while blocked. It
// peeks (MSG_PEEK) so that commands the client pipelines meanwhile stay in
// the socket for the connection loop. stop ends the watch and restores the
// read deadline.
func (c *conn) watchGone() (gone <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return ch, func() {}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return ch, func() {}
	}
	if c.deadline {
		c.nc.SetReadDeadline(time.Time{}) // a blocked client is not idle
		c.deadline = false
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf [1]byte
		var n int
		var perr error
		err := rc.Read(func(fd uintptr) bool {
			n, _, perr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			return perr != syscall.EAGAIN && perr != syscall.EINTR
		})
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			// stopped
		case err != nil, perr != nil, n == 0:
			close(ch) // closed, reset, or EOF
		}
	}()
	return ch, func() {
		c.nc.SetReadDeadline(time.Now())
		<-done
		c.nc.SetReadDeadline(time.Time{})
	}
}

// SkipsOnWake reports whether the re-run of a woken blocked command must
// treat key as empty because it holds a value of another type than want
// (keyspace.TypeList or keyspace.TypeZSet). Redis 7.0 serves a blocked
// client only from a ready key holding the type it waits for, and
// otherwise leaves it blocked: after MULTI; LPUSH k x; DEL k; SET k foo;
// EXEC a client blocked in BLPOP k keeps waiting instead of answering
// WRONGTYPE. A command's first run is unaffected (a wrong type answers
// WRONGTYPE there), and so is BLMOVE's destination (Redis 7.0 unblocks
// with WRONGTYPE too). Call with the keyspace lock held.
func (c *Client) SkipsOnWake(key []byte, want string) bool {
	cn := c.conn
	if cn == nil || cn.blk.b == nil {
		return false
	}
	was := c.KS.CountLookups(false) // Redis's serving lookup counts no hit
	t := c.KS.Type(c.DB, key)
	c.KS.CountLookups(was)
	return t != keyspace.TypeNone && t != want
}

// BlockingPop runs a command shaped like BLPOP: keys, then a timeout as the
// last argument, waiting for a value of type want. It tries the keys in
// serving order, skipping those whose elements belong to an already-woken
// client and, on a re-run after a wake-up, those now holding another type
// (skipsOnWake); pop(key) either serves the
// key (replies, returns true) or finds it empty (false), and sets failed
// after writing an error (a wrong type stops the search, as in Redis).
// When nothing is served the client blocks, or inside MULTI gets the null
// array at once.
func BlockingPop(c *Client, args [][]byte, want string, pop func(key []byte) (served, failed bool)) {
	timeout, err := ParseBlockTimeout(args[len(args)-1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	keys := args[1 : len(args)-1]
	for _, key := range c.ServingOrder(keys) {
		if c.YieldsTo(key) || c.SkipsOnWake(key, want) {
			continue
		}
		served, failed := pop(key)
		if served || failed {
			return
		}
	}
	if !c.BlockOn(keys, timeout) {
		c.WriteNullArray() // may not block here (MULTI/EXEC): Redis's timeout reply
	}
}

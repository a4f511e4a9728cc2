// Package evloop is Persimmon's event loop: one goroutine that serves many
// TCP connections with level-triggered epoll on non-blocking sockets.
//
// It owns the sockets it is given (Enroll duplicates the descriptor and
// closes the net.Conn, so Go's own poller no longer watches it), the
// epoll instance, an eventfd that wakes the loop for tasks queued by other
// goroutines, and each connection's unsent output. It knows nothing of
// the protocol: a Handler is told when a socket is readable and reads it
// itself (into its own buffer, no copy), and writes replies with
// Conn.Write. It also watches descriptors it does not own (Watch: the
// eventfd of an io_uring whose completions the loop reaps) and calls
// their owner's function on the loop when they are readable.
//
// Invariants:
//   - Every Handler call and every task runs on the loop's goroutine, one
//     at a time, so a handler's per-connection state needs no lock.
//   - Conn.Write keeps the order of the bytes. Output written while the
//     loop serves a round of events and tasks is gathered per connection
//     and written at the end of the round, before the next epoll_wait (as
//     Redis's handleClientsWithPendingWrites: one write(2) per connection
//     and round, and the peers are woken together), or at once when more
//     than writeNowAt bytes wait. What the socket does not take (EAGAIN,
//     a partial write) is kept, EPOLLOUT is armed, and later writes queue
//     behind it until the socket has taken it all.
//   - Tasks queued while the loop serves a round of events run after that
//     round's events (Execute from a handler is "after what is ready
//     now"); tasks queued by a task run in the next round. The eventfd is
//     written only when the loop sleeps in epoll_wait or is about to.
//   - A closed Conn gets no more Handler calls; tasks that name it (Wake,
//     Close) find it closed and do nothing.
//   - After Owe, no byte of any connection's output reaches a socket
//     before the handler's Settle has returned: the first write of the
//     round calls it (Conn.write, close), and the end of the round calls
//     it if no write did, before the next epoll_wait.
//
// The package may not block the loop: it never waits for another
// goroutine, and it calls no Handler from any other goroutine.
package evloop

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by Execute and Enroll once the loop has stopped.
var ErrClosed = errors.New("evloop: loop stopped")

// Handler is what a loop calls for its connections, always on the loop.
type Handler interface {
	// OnOpen is called once a connection handed to Enroll is watched.
	// Returning false closes it.
	OnOpen(c *Conn) bool
	// OnReadable is called when c's socket has input, an EOF or an
	// error; the handler reads it with c.Read. Returning false closes c.
	OnReadable(c *Conn) bool
	// OnWake is called for c.Wake. Returning false closes c.
	OnWake(c *Conn) bool
	// OnClose is called once when c closes, before its descriptor is
	// closed; unsent is the output the socket never took (dropped).
	OnClose(c *Conn, unsent int)
}

// Releaser is an optional Handler method: OnRelease is called (on the
// loop) when the loop drops a connection's output buffer of more than
// pendingKeep bytes of capacity, sent or not, so the handler can hand
// the memory back to the OS (a buffer taken over by WriteOwned, or one
// grown by a slow reader).
type Releaser interface {
	OnRelease(c *Conn, n int)
}

// Settler is an optional Handler method: Settle is called (on the loop,
// or by whoever holds the loop up: FlushAll) once after Owe, before any
// connection's output is written, and at the end of the round in which
// Owe was called if nothing was written by then. Persimmon makes the
// round's log records durable there, with one flush for every connection
// that wrote, instead of one per connection; a connection whose replies
// must not leave after all is dropped with Drop.
type Settler interface {
	Settle()
}

// Loop is one event loop.
type Loop struct {
	h    Handler
	st   Settler // h's Settle, or nil
	epfd int
	efd  int // eventfd: tasks are queued

	conns  []*Conn // by descriptor; on the loop only
	nconns int
	events []unix.EpollEvent
	flushq []*Conn   // connections with output to write at the end of the round
	owed   bool      // Owe: Settle runs before the next write
	watch  []watcher // descriptors besides connections (Watch); on the loop only
	yields int       // times the loop yielded its P (yield); on the loop only

	mu       sync.Mutex
	tasks    []func()
	spare    []func()
	asleep   bool // the loop is in (or entering) a blocking epoll_wait
	notified bool // the eventfd was written and not read yet
	stopped  bool

	// tid is the OS thread Run is locked to (0 before Run and after it
	// returns): the thread whose CPU time INFO reports as the main
	// thread's.
	tid atomic.Int32

	done chan struct{}
}

// ThreadID returns the Linux thread id of the OS thread the running loop
// is locked to, or 0 when the loop is not running.
func (l *Loop) ThreadID() int { return int(l.tid.Load()) }

// New returns a loop that calls h; Run starts it.
func New(h Handler) (*Loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}); err != nil {
		unix.Close(epfd)
		unix.Close(efd)
		return nil, err
	}
	st, _ := h.(Settler)
	return &Loop{h: h, st: st, epfd: epfd, efd: efd, events: make([]unix.EpollEvent, 256), done: make(chan struct{})}, nil
}

// Owe makes the handler's Settle run before any connection's output is
// written from now on, and at the latest at the end of the round (on the
// loop only). Without a Settler it does nothing.
func (l *Loop) Owe() {
	if l.st != nil {
		l.owed = true
	}
}

// settle calls the Settle owed (see Owe).
func (l *Loop) settle() {
	l.owed = false
	l.st.Settle()
}

// Conn is one connection of a loop. Write, Read and Buffered are for the
// loop's goroutine only; Close, Wake, Loop and the addresses are safe
// anywhere.
type Conn struct {
	l   *Loop
	fd  int
	out []byte // output the socket has not taken yet, from off
	off int
	// armed: EPOLLOUT is watched (out holds what the socket refused).
	armed  bool
	queued bool // on the loop's flushq
	closed bool
	failed error // a write failed: the connection is closing

	laddr, raddr net.Addr

	// Context is the handler's own state for the connection, set before
	// Enroll returns and not changed after.
	Context any
}

// Enroll hands nc to the loop (any goroutine): its descriptor is
// duplicated, nc is closed, and the loop starts watching the socket, then
// calls OnOpen. ctx becomes Conn.Context.
func (l *Loop) Enroll(nc net.Conn, ctx any) (*Conn, error) {
	defer nc.Close()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, errors.New("evloop: not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	cerr := rc.Control(func(f uintptr) { fd, err = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) })
	if cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	// The duplicate shares the file description, so it is non-blocking
	// as Go made it; say so anyway, it is what the loop relies on.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	c := &Conn{l: l, fd: fd, laddr: nc.LocalAddr(), raddr: nc.RemoteAddr(), Context: ctx}
	if err := l.Execute(func() { l.open(c) }); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return c, nil
}

// open starts watching c (on the loop).
func (l *Loop) open(c *Conn) {
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}); err != nil {
		c.closed = true
		unix.Close(c.fd)
		l.h.OnClose(c, 0)
		return
	}
	for c.fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, len(l.conns)+64)...)
	}
	l.conns[c.fd] = c
	l.nconns++
	if !l.h.OnOpen(c) {
		l.close(c)
	}
}

// watcher is a descriptor the loop watches for a caller (Watch).
type watcher struct {
	fd int
	fn func()
}

// Watch makes the loop call fn (on the loop, among the round's events)
// whenever fd is readable; level-triggered, so fn must consume what made
// it readable (an eventfd's counter, say). Call it on the loop (from a
// handler or a task). The caller keeps fd open until the loop stops; the
// loop never closes it.
func (l *Loop) Watch(fd int, fn func()) error {
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
		return err
	}
	l.watch = append(l.watch, watcher{fd, fn})
	return nil
}

// watched calls the watcher of fd and reports whether there is one.
func (l *Loop) watched(fd int) bool {
	for i := range l.watch {
		if l.watch[i].fd == fd {
			l.watch[i].fn()
			return true
		}
	}
	return false
}

// Execute queues f to run on the loop (any goroutine). It fails once the
// loop has stopped.
func (l *Loop) Execute(f func()) error {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return ErrClosed
	}
	l.tasks = append(l.tasks, f)
	wake := l.asleep && !l.notified
	if wake {
		l.notified = true
	}
	l.mu.Unlock()
	if wake {
		var one = [8]byte{1}
		unix.Write(l.efd, one[:]) // EAGAIN only if the counter is full: it is then readable anyway
	}
	return nil
}

// Stop ends the loop (any goroutine but the loop's): connections still
// open are closed (OnClose), queued tasks are dropped, and Stop returns
// once the loop's goroutine is done. Later Executes fail.
func (l *Loop) Stop() {
	l.mu.Lock()
	already := l.stopped
	l.mu.Unlock()
	if already {
		<-l.done
		return
	}
	l.Execute(func() {
		l.mu.Lock()
		l.stopped = true
		l.mu.Unlock()
	})
	<-l.done
}

// Run serves the loop's events and tasks until Stop; it returns an error
// only if epoll fails.
func (l *Loop) Run() error {
	// The loop keeps its thread: measured with redis-benchmark -c 50, it
	// took the runtime's sysmon wake-ups from ~15,000 to ~700 per 100,000
	// requests (a goroutine that blocks in epoll_wait otherwise loses its
	// P and thread on most waits) and 5-10% of the server's CPU per
	// request.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(l.done)
	l.tid.Store(int32(unix.Gettid()))
	defer l.tid.Store(0)
	var err error
	lastYield := time.Now()
	for {
		lastYield = l.yield(lastYield)
		l.mu.Lock()
		timeout := -1
		if len(l.tasks) > 0 {
			timeout = 0
		} else {
			l.asleep = true
		}
		stopped := l.stopped
		l.mu.Unlock()
		if stopped {
			break
		}
		n, werr := unix.EpollWait(l.epfd, l.events, timeout)
		if timeout < 0 {
			l.mu.Lock()
			l.asleep = false
			l.mu.Unlock()
		}
		if werr != nil {
			if werr == unix.EINTR {
				continue
			}
			err = werr
			l.mu.Lock()
			l.stopped = true
			l.mu.Unlock()
			break
		}
		for i := 0; i < n; i++ {
			ev := &l.events[i]
			fd := int(ev.Fd)
			if fd == l.efd {
				var b [8]byte
				unix.Read(l.efd, b[:])
				l.mu.Lock()
				l.notified = false
				l.mu.Unlock()
				continue
			}
			var c *Conn
			if fd < len(l.conns) {
				c = l.conns[fd]
			}
			if c == nil {
				if len(l.watch) > 0 {
					l.watched(fd)
				}
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 && c.armed {
				c.drain()
				if c.failed != nil {
					l.close(c)
					continue
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 && !c.closed {
				if !l.h.OnReadable(c) || c.failed != nil {
					l.close(c)
				}
			}
		}
		if n == len(l.events) {
			l.events = make([]unix.EpollEvent, 2*n)
		}
		l.runTasks()
		if l.owed {
			l.settle()
		}
		l.flushAll()
	}
	for _, c := range l.conns {
		if c != nil {
			l.close(c)
		}
	}
	unix.Close(l.efd)
	unix.Close(l.epfd)
	return err
}

// The loop yields its P now and then (yield). The runtime's sysmon
// thread preempts a goroutine that has run on its P for 10 ms without
// passing through the scheduler, and the loop's goroutine never does
// otherwise: its blocking epoll_wait returns to the same P through
// exitsyscall's fast path. A forced preemption costs what a yield costs
// (the goroutine parked, its locked thread handed the P again) plus a
// signal, and it resets sysmon's back-off, so sysmon then polls every
// 20 µs and doubles its sleep only after 50 idle polls: about 60 sysmon
// wake-ups per 10 ms. Yielding every 8 ms, a little more often than the
// preemption would come, keeps sysmon asleep. Measured with
// redis-benchmark -c 50 on 2 cores: sysmon took 0.27-0.37 µs of CPU per
// request (6% of the server's samples in perf, 0.02 context switches per
// request), and about 0.01 µs with the loop yielding; the clock is read
// once a round (tens of ns; a round is tens of µs at -c 50).
const yieldEvery = 8 * time.Millisecond

// yield yields the loop's P (runtime.Gosched) if the last yield was at
// least yieldEvery before now, and returns the time of the last yield.
func (l *Loop) yield(last time.Time) time.Time {
	now := time.Now()
	if now.Sub(last) < yieldEvery {
		return last
	}
	runtime.Gosched()
	l.yields++
	return now
}

// runTasks runs the tasks queued so far; those they queue wait for the
// next round.
func (l *Loop) runTasks() {
	l.mu.Lock()
	ts := l.tasks
	l.tasks = l.spare[:0]
	l.mu.Unlock()
	for i, f := range ts {
		f()
		ts[i] = nil
	}
	l.mu.Lock()
	if cap(ts) <= 1024 {
		l.spare = ts[:0]
	} else {
		l.spare = nil
	}
	l.mu.Unlock()
}

// close closes c on the loop: a last try to send what is pending (a reply
// that closes its connection, as QUIT's, still leaves), OnClose, then the
// descriptor.
func (l *Loop) close(c *Conn) {
	if c.closed {
		return
	}
	c.closed = true
	if c.fd < len(l.conns) && l.conns[c.fd] == c {
		l.conns[c.fd] = nil
		l.nconns--
	}
	if l.owed && c.off < len(c.out) && c.failed == nil {
		l.settle() // may Drop c
	}
	if c.off < len(c.out) && c.failed == nil {
		n, _ := unix.Write(c.fd, c.out[c.off:])
		if n > 0 {
			c.off += n
		}
	}
	unsent := len(c.out) - c.off
	c.release()
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	l.h.OnClose(c, unsent)
	unix.Close(c.fd)
}

// Loop is the loop that serves c.
func (c *Conn) Loop() *Loop { return c.l }

// Fd is c's socket descriptor (the loop's duplicate).
func (c *Conn) Fd() int { return c.fd }

// LocalAddr is the local address of c's socket.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// Read reads what the socket has into p (on the loop): n > 0 bytes; 0 and
// nil if nothing is there (EAGAIN); io.EOF when the peer closed; or the
// socket's error.
func (c *Conn) Read(p []byte) (int, error) {
	if c.closed {
		return 0, net.ErrClosed
	}
	for {
		n, err := rawRead(c.fd, p)
		switch {
		case n > 0:
			return n, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, nil
		case err != nil:
			return 0, err
		}
		return 0, io.EOF
	}
}

// writeNowAt is the output from which Write writes at once rather than at
// the end of the round (a large reply is not copied, and a peer that does
// not read is noticed while the batch runs).
const writeNowAt = 64 << 10

// Write sends p, in order after whatever is pending (on the loop): it is
// written at the end of the loop's round (at once from writeNowAt bytes),
// and what the socket does not take then is kept and sent when it is
// writable. It returns len(p), or an error if the connection is closed or
// a write failed (the loop then closes it).
func (c *Conn) Write(p []byte) (int, error) {
	if c.closed {
		return 0, net.ErrClosed
	}
	if c.failed != nil {
		return 0, c.failed
	}
	if len(p) == 0 {
		return 0, nil
	}
	switch {
	case c.armed: // behind what the socket refused
		c.keep(p)
	case c.off == len(c.out) && len(p) >= writeNowAt:
		n, err := c.write(p) // straight from p: no copy of a large reply
		if err != nil {
			return 0, err
		}
		if n < len(p) {
			c.keep(p[n:])
			c.arm()
		}
	default:
		c.keep(p)
		if len(c.out)-c.off >= writeNowAt {
			c.Flush()
		} else if !c.queued {
			c.queued = true
			c.l.flushq = append(c.l.flushq, c)
		}
	}
	if c.failed != nil {
		return 0, c.failed
	}
	return len(p), nil
}

// WriteOwned is Write for a buffer the caller hands over (on the loop):
// when the socket does not take all of a large p at once (from writeNowAt
// bytes, nothing pending before it), the loop keeps p itself as the
// pending output instead of a copy, and reports kept; the caller must
// then neither change nor reuse p. Otherwise p is the caller's again, as
// after Write. A 100 MB reply that the socket takes a few MB at a time
// was copied whole into the pending output: 100 MB allocated, faulted in
// and moved for nothing (the loop's GET of a 100 MB value cost twice the
// server CPU of the goroutine mode's).
func (c *Conn) WriteOwned(p []byte) (n int, kept bool, err error) {
	if c.closed {
		return 0, false, net.ErrClosed
	}
	if c.failed != nil {
		return 0, false, c.failed
	}
	if c.armed || c.off != len(c.out) || len(p) < writeNowAt {
		n, err = c.Write(p)
		return n, false, err
	}
	w, err := c.write(p)
	if err != nil {
		return 0, false, err
	}
	if w < len(p) {
		c.release() // the small buffer, empty: p replaces it
		c.out, c.off = p, w
		c.arm()
		kept = true
	}
	if c.failed != nil {
		return 0, kept, c.failed
	}
	return len(p), kept, nil
}

// Flush writes c's gathered output now rather than at the end of the
// round (on the loop, or on a goroutine that serves c while the loop is
// held up: Persimmon's script watchdog). What the socket refuses waits for
// EPOLLOUT.
func (c *Conn) Flush() {
	if c.closed || c.failed != nil || c.armed || c.off == len(c.out) {
		return
	}
	n, err := c.write(c.out[c.off:])
	if err != nil {
		return
	}
	c.off += n
	if c.off < len(c.out) {
		c.arm()
		return
	}
	c.reset()
}

// FlushAll writes the output gathered so far for every connection now,
// rather than at the end of the round: for a goroutine that serves the
// loop's connections while a handler holds the loop up (Persimmon's script
// watchdog), so the replies that connections served earlier in the round
// got do not wait for the handler to return. Like Flush, only on the loop
// or while the loop is held up.
func (l *Loop) FlushAll() { l.flushAll() }

// flushAll writes the output gathered during the round.
func (l *Loop) flushAll() {
	for i, c := range l.flushq {
		c.queued = false
		c.Flush()
		l.flushq[i] = nil
	}
	l.flushq = l.flushq[:0]
}

// Buffered is the output the socket has not taken yet, gathered or
// refused (on the loop).
func (c *Conn) Buffered() int { return len(c.out) - c.off }

// Close closes c from any goroutine: the close runs as a task on the loop
// (OnClose is called there). It does nothing if c is closed already or
// the loop has stopped (which closed it).
func (c *Conn) Close() error {
	return c.l.Execute(func() { c.l.close(c) })
}

// Wake makes the loop call OnWake for c (any goroutine), unless c is
// closed by then.
func (c *Conn) Wake() error {
	return c.l.Execute(func() {
		if !c.closed && !c.l.h.OnWake(c) {
			c.l.close(c)
		}
	})
}

// write writes p once; EAGAIN is 0 bytes, another error fails the
// connection.
func (c *Conn) write(p []byte) (int, error) {
	if c.l.owed {
		c.l.settle()
		if c.failed != nil { // dropped by Settle
			return 0, c.failed
		}
	}
	for {
		n, err := rawWrite(c.fd, p)
		switch {
		case err == nil:
			return n, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, nil
		}
		c.fail(err)
		return 0, err
	}
}

// Drop closes c without writing the output it has not sent yet: err is
// what its writes return meanwhile, and the loop closes it after the
// handler call in progress (on the loop only; a Settler's way of keeping
// replies in that must not leave).
func (c *Conn) Drop(err error) {
	if c.closed { // closing now (close called Settle): it only must not write
		c.release()
		return
	}
	c.fail(err)
}

// fail records a failed write; the loop closes the connection after the
// handler call in progress (or at once, if no call is: a task's write).
func (c *Conn) fail(err error) {
	if c.failed != nil {
		return
	}
	c.failed = err
	c.release()
	c.l.Execute(func() { c.l.close(c) })
}

// keep appends p to the pending output, first moving what is pending to
// the front when more than half of the buffer was sent (linear overall).
func (c *Conn) keep(p []byte) {
	if c.off > 0 && c.off >= len(c.out)/2 {
		n := copy(c.out, c.out[c.off:])
		c.out, c.off = c.out[:n], 0
	}
	c.out = append(c.out, p...)
}

// arm watches c for EPOLLOUT.
func (c *Conn) arm() {
	if c.armed {
		return
	}
	c.armed = true
	unix.EpollCtl(c.l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: int32(c.fd)})
}

// pendingKeep is the capacity of a drained output buffer that is kept for
// the next partial write; a larger one is dropped.
const pendingKeep = 64 << 10

// drain writes pending output when the socket is writable; once all of
// it left, EPOLLOUT is no longer watched.
func (c *Conn) drain() {
	n, err := c.write(c.out[c.off:])
	if err != nil {
		return
	}
	c.off += n
	if c.off < len(c.out) {
		return
	}
	c.reset()
	c.armed = false
	unix.EpollCtl(c.l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)})
}

// reset empties the sent output buffer, keeping a small one for reuse.
func (c *Conn) reset() {
	if cap(c.out) > pendingKeep {
		c.release()
	} else {
		c.out = c.out[:0]
	}
	c.off = 0
}

// release drops the output buffer, telling a Releaser handler of a large
// one.
func (c *Conn) release() {
	n := cap(c.out)
	c.out, c.off = nil, 0
	if r, ok := c.l.h.(Releaser); ok && n > pendingKeep {
		r.OnRelease(c, n)
	}
}

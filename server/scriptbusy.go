package server

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Long-running scripts (semantics: redis.io EVAL, "Script timeouts";
// SCRIPT KILL; SHUTDOWN NOSAVE).
//
// A script holds the keyspace lock for as long as it runs. Once it has
// run for busy-reply-threshold milliseconds (lua-time-limit; 5000 by
// default) the server is "busy": every other command is refused with
// errBusyScript except SCRIPT KILL and SHUTDOWN NOSAVE (and the
// connection commands that need no lock: AUTH, HELLO, CLIENT ...; Redis's
// allow_busy flag). SCRIPT KILL stops a script that has not written yet
// (one that has gets UNKILLABLE: stopping it would leave half its writes);
// SHUTDOWN NOSAVE stops any script and shuts the server down. A stopped
// script's caller gets the "Script killed" error; writes it made before
// are kept, as for any script that fails half-way.
//
// The script is stopped through the context gopher-lua checks before each
// instruction. Who answers the other clients meanwhile depends on the I/O
// model:
//
//   - a goroutine per connection: each connection's goroutine checks the
//     busy mark before it takes the lock (execute);
//   - the event loop: the script runs on the loop's goroutine, so nothing
//     reads the other sockets. When the threshold passes, a watchdog
//     goroutine takes the other connections over until the script ends: it
//     polls their sockets, reads what arrives into their read buffers and
//     runs processInput, whose commands are all refused or need no lock.
//     The loop's goroutine is inside the script for that whole time, so
//     the two never touch a connection at once; the busy mark (an atomic
//     store before the watchdog starts) and the watchdog's done channel
//     (received before the loop goes on) order their accesses. Parked
//     connections (blocked commands) and ones still being enrolled are
//     left alone. A connection accepted while the server is busy is served
//     by a goroutine of its own until the script ends (serveWhileBusy),
//     then handed to the loop: `redis-cli SCRIPT KILL` opens a new one.

// errBusyScript is Redis's reply while a script runs past the threshold.
const errBusyScript = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."

// defaultBusyThreshold is Redis's busy-reply-threshold (ms).
const defaultBusyThreshold = 5000

// runningScript is a script in execution.
type runningScript struct {
	conn   *conn // the connection that runs it (nil: none)
	start  time.Time
	kill   *killContext // cancelled, makes the Lua VM stop the script
	wrote  atomic.Bool  // it ran a write command: SCRIPT KILL refuses
	killed atomic.Bool  // SCRIPT KILL or SHUTDOWN NOSAVE stopped it
	// function: an FCALL (functions.go) of the function called name, with
	// args its command (copied: FUNCTION STATS reads them from another
	// goroutine); else an EVAL.
	function bool
	name     string
	args     [][]byte

	mu       sync.Mutex
	ended    bool
	watchdog chan struct{} // loop mode: closed when the watchdog is done
	stop     chan struct{} // loop mode: closed when the script has returned
}

// scriptStarted registers a script about to run on cn (kill stops it)
// and makes sure the threshold timer will look at it. scriptEnded must be
// called once it returns. Call with the keyspace lock held (one script at
// a time).
func (s *Server) scriptStarted(cn *conn, kill *killContext) *runningScript {
	return s.startScript(&runningScript{conn: cn, kill: kill, start: clockNow()}) // (durations only: the monotonic clock)
}

// functionStarted is scriptStarted for an FCALL of the function called
// name; args is its command (copied, for FUNCTION STATS).
func (s *Server) functionStarted(cn *conn, kill *killContext, name string, args [][]byte) *runningScript {
	return s.startScript(&runningScript{conn: cn, kill: kill, start: time.Now(),
		function: true, name: name, args: copyArgs(args)})
}

// busyTimer is the busy-reply-threshold timer. It is not re-armed and
// stopped for every script (two timer-heap operations on every EVAL):
// armed, it stays armed while scripts come and go, and when it fires it
// looks at the script running then, re-arming itself for that one's
// threshold if it is younger, or stays unarmed when none runs; a script
// that starts arms it only when it is unarmed or due later than this
// script's threshold (a lowered busy-reply-threshold).
type busyTimer struct {
	mu    sync.Mutex
	t     *time.Timer
	armed bool
	due   time.Time
}

func (s *Server) startScript(st *runningScript) *runningScript {
	s.running.Store(st) // before the timer's lock: a firing that finds the timer armed sees st
	threshold := time.Duration(s.live.busyThreshold.Load()) * time.Millisecond
	due := st.start.Add(threshold)
	bt := &s.busyTimer
	bt.mu.Lock()
	switch {
	case bt.t == nil:
		bt.t = time.AfterFunc(threshold, s.scriptTimedOut)
		bt.armed, bt.due = true, due
	case !bt.armed || bt.due.After(due):
		bt.t.Reset(threshold)
		bt.armed, bt.due = true, due
	}
	bt.mu.Unlock()
	return st
}

// scriptEnded ends st's run (see scriptStarted).
func (s *Server) scriptEnded(st *runningScript) {
	st.mu.Lock()
	st.ended = true
	wd, stop := st.watchdog, st.stop
	st.mu.Unlock()
	if stop != nil {
		close(stop)
		<-wd // the watchdog no longer touches any connection
	}
	// Only now: while the watchdog runs, every command it meets must
	// still be refused, none may wait for the lock this script holds.
	s.busy.CompareAndSwap(st, nil)
	s.running.CompareAndSwap(st, nil)
}

// scriptTimedOut runs when the threshold timer fires: if the script
// running now has run that long, the server is busy, and on the event loop
// the watchdog starts. (A timer armed for a script that has ended since
// finds a younger one, or none, and does nothing.)
func (s *Server) scriptTimedOut() {
	threshold := time.Duration(s.live.busyThreshold.Load()) * time.Millisecond
	bt := &s.busyTimer
	bt.mu.Lock()
	bt.armed = false
	st := s.running.Load() // (this load also orders the loop's writes before the watchdog's reads)
	if st != nil {
		if left := threshold - time.Since(st.start); left > 0 {
			// A script younger than the threshold: its turn comes later.
			bt.t.Reset(left)
			bt.armed, bt.due = true, st.start.Add(threshold)
			bt.mu.Unlock()
			return
		}
	}
	bt.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended || s.busy.Load() == st {
		return
	}
	s.logf("Slow script detected: still in execution after %d milliseconds. You can try killing the script using the SCRIPT KILL command.", s.live.busyThreshold.Load())
	s.busy.Store(st)
	if s.loop != nil && st.conn != nil && st.conn.gc != nil {
		st.watchdog, st.stop = make(chan struct{}), make(chan struct{})
		go s.watchdog(st)
	}
}

// watchdog serves the loop's other connections while st runs (see above).
func (s *Server) watchdog(st *runningScript) {
	defer close(st.watchdog)
	// The replies of the connections the loop served before the script in
	// this round wait for the end of the round (evloop): they leave now.
	s.loop.FlushAll()
	buf := make([]byte, readBufSize)
	for {
		select {
		case <-st.stop:
			return
		default:
		}
		var conns []*conn
		var fds []unix.PollFd
		for _, c := range s.clientsSnapshot() {
			if c == st.conn || c.lc.Load() == nil || c.parked.Load() || c.killed.Load() || c.blk.b != nil {
				continue
			}
			conns = append(conns, c)
			fds = append(fds, unix.PollFd{Fd: int32(c.fd), Events: unix.POLLIN})
		}
		if len(fds) == 0 {
			select {
			case <-st.stop:
				return
			case <-time.After(50 * time.Millisecond): // new connections are not watched; clients may appear
			}
			continue
		}
		if n, err := unix.Poll(fds, 50); err != nil || n == 0 {
			continue
		}
		for i, c := range conns {
			if fds[i].Revents&unix.POLLIN == 0 {
				continue
			}
			n, err := unix.Read(c.fd, buf)
			if n <= 0 || err != nil {
				continue // EOF or error: the loop sees it once the script is done
			}
			if len(c.rbuf)+n > maxQueryBuf {
				c.kill()
				continue
			}
			c.rbuf = append(c.rbuf, buf[:n]...)
			s.stats.netIn.Add(int64(n))
			s.stats.reads.Add(1)
			if !c.processInput() {
				c.kill()
			}
			c.gc.Flush() // the loop, held up by the script, would write it only after
		}
	}
}

// busyReply is the refusal while a script is busy: Redis names the kill
// command that stops it (SCRIPT KILL for an EVAL, FUNCTION KILL for a
// function).
func (s *Server) busyReply() string {
	if st := s.busy.Load(); st != nil && st.function {
		return errBusyFunction
	}
	return errBusyScript
}

// scriptKill stops the running script for SCRIPT KILL (eval true),
// FUNCTION KILL (eval false) or SHUTDOWN NOSAVE (force true), returning
// the error reply, or "" when it was stopped. SCRIPT KILL does not stop a
// function nor FUNCTION KILL an EVAL (the BUSY reply names the right one).
func (s *Server) scriptKill(force, eval bool) string {
	st := s.running.Load()
	switch {
	case st == nil:
		return "NOTBUSY No scripts in execution right now."
	case !force && st.wrote.Load():
		return "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	case !force && eval && st.function:
		return errBusyFunction
	case !force && !eval && !st.function:
		return errBusyScript
	}
	st.mu.Lock()
	if !st.ended { // (a kill that comes too late must not stop the next script)
		st.killed.Store(true)
		st.kill.kill()
	}
	st.mu.Unlock()
	return ""
}

// serveWhileBusy serves a connection accepted on the event loop's server
// while a script is past the threshold, on this goroutine, until the
// script ends; then it enrolls the connection in the loop, with whatever
// partial request it has read kept in its read buffer.
func (s *Server) serveWhileBusy(c *conn) {
	buf := make([]byte, readBufSize)
	for s.busy.Load() != nil && !c.killed.Load() {
		c.nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond)) // to notice the end of the script
		n, err := c.nc.Read(buf)
		if n > 0 {
			if len(c.rbuf)+n > maxQueryBuf {
				c.finish()
				return
			}
			c.rbuf = append(c.rbuf, buf[:n]...)
			s.stats.netIn.Add(int64(n))
			s.stats.reads.Add(1)
			if !c.processInput() {
				c.finish()
				return
			}
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			c.finish()
			return
		}
	}
	if c.killed.Load() {
		c.finish()
		return
	}
	c.nc.SetReadDeadline(time.Time{})
	if !s.enroll(c) {
		c.finish()
	}
}

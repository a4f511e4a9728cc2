package evloop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// echo is a test handler: it echoes what it reads and records the calls.
// Its fields other than the atomics are touched on the loop only (the race
// detector checks that every call is on one goroutine at a time).
type echo struct {
	buf     []byte
	opened  atomic.Int64
	closed  atomic.Int64
	unsent  atomic.Int64
	wakes   atomic.Int64
	onOpen  func(c *Conn) bool
	perConn map[*Conn]int // bytes echoed, per connection
}

func (h *echo) OnOpen(c *Conn) bool {
	h.opened.Add(1)
	if h.perConn == nil {
		h.perConn = map[*Conn]int{}
	}
	h.perConn[c] = 0
	if h.onOpen != nil {
		return h.onOpen(c)
	}
	return true
}

func (h *echo) OnReadable(c *Conn) bool {
	if h.buf == nil {
		h.buf = make([]byte, 4096)
	}
	n, err := c.Read(h.buf)
	if err != nil {
		return false
	}
	h.perConn[c] += n
	_, err = c.Write(h.buf[:n])
	// A message ending in '!' asks the loop to close the connection after
	// its echo (the handler's false).
	return err == nil && h.buf[n-1] != '!'
}

func (h *echo) OnWake(c *Conn) bool {
	h.wakes.Add(1)
	c.Write([]byte("woken\n"))
	return true
}

func (h *echo) OnClose(c *Conn, unsent int) {
	delete(h.perConn, c)
	h.closed.Add(1)
	h.unsent.Add(int64(unsent))
}

// startLoop runs a loop for h and a listener that enrolls every
// connection it accepts; both stop at the end of the test.
func startLoop(t *testing.T, h Handler) (*Loop, string, chan *Conn) {
	t.Helper()
	l, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- l.Run() }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *Conn, 64)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			c, err := l.Enroll(nc, nil)
			if err != nil {
				return
			}
			select {
			case conns <- c:
			default: // nobody asked for it
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		l.Stop()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return l, ln.Addr().String(), conns
}

// onLoop runs f on the loop and waits for it.
func onLoop(t *testing.T, l *Loop, f func()) {
	t.Helper()
	done := make(chan struct{})
	if err := l.Execute(func() { f(); close(done) }); err != nil {
		t.Fatal(err)
	}
	<-done
}

// waitFor polls cond (on the loop) until it holds or the deadline passes.
func waitFor(t *testing.T, l *Loop, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var ok bool
		onLoop(t, l, func() { ok = cond() })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEcho(t *testing.T) {
	h := &echo{}
	_, addr, _ := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for i := range 100 {
		msg := fmt.Sprintf("message %d\n", i)
		if _, err := nc.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(nc, got); err != nil || string(got) != msg {
			t.Fatalf("echo %d: %q %v", i, got, err)
		}
	}
}

// stream is a pattern whose every prefix is checkable: byte i is i%251.
func stream(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// A peer that does not read: the socket takes part of a large write
// (EAGAIN), the rest is kept and EPOLLOUT armed; writes after it queue
// behind it; once the peer reads, every byte arrives in order and the
// pending output drains to nothing.
func TestPartialWriteKeepsOrder(t *testing.T) {
	h := &echo{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	const size = 32 << 20 // far beyond the socket buffers of loopback
	data := stream(size)
	var buffered int
	onLoop(t, l, func() {
		// In pieces: the first one that the socket refuses makes the
		// rest queue behind it.
		for off := 0; off < size; off += 1 << 20 {
			if n, err := c.Write(data[off : off+1<<20]); err != nil || n != 1<<20 {
				t.Errorf("Write: %d %v", n, err)
			}
		}
		buffered = c.Buffered()
	})
	if buffered == 0 || buffered >= size {
		t.Fatalf("pending after writing %d bytes to a peer that does not read: %d", size, buffered)
	}
	onLoop(t, l, func() {
		if !c.armed {
			t.Error("EPOLLOUT not armed with output pending")
		}
	})
	got := make([]byte, size)
	if _, err := io.ReadFull(nc, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		i := 0
		for i < size && got[i] == data[i] {
			i++
		}
		t.Fatalf("bytes out of order from offset %d", i)
	}
	waitFor(t, l, "the pending output to drain", func() bool { return c.Buffered() == 0 && !c.armed })
	// The connection still works, straight to the socket again.
	nc.Write([]byte("ping"))
	b := make([]byte, 4)
	if _, err := io.ReadFull(nc, b); err != nil || string(b) != "ping" {
		t.Fatalf("echo after the drain: %q %v", b, err)
	}
}

// Small writes made during a round are gathered and written when the round
// ends (Buffered counts them meanwhile), in order; Flush writes them at
// once.
func TestWritesGatheredUntilTheRoundEnds(t *testing.T) {
	h := &echo{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	var during, afterFlush int
	onLoop(t, l, func() {
		c.Write([]byte("one "))
		c.Write([]byte("two "))
		during = c.Buffered()
	})
	if during != 8 {
		t.Fatalf("Buffered during the round: %d, want 8", during)
	}
	got := make([]byte, 8)
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != "one two " {
		t.Fatalf("after the round: %q %v", got, err)
	}
	onLoop(t, l, func() {
		c.Write([]byte("three"))
		c.Flush()
		afterFlush = c.Buffered()
	})
	if afterFlush != 0 {
		t.Fatalf("Buffered after Flush: %d", afterFlush)
	}
	got = make([]byte, 5)
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != "three" {
		t.Fatalf("after Flush: %q %v", got, err)
	}
}

// FlushAll from another goroutine while a handler holds the loop up (as
// Persimmon's script watchdog does) sends what the round gathered so far,
// without waiting for the round to end.
func TestFlushAllWhileTheLoopIsHeldUp(t *testing.T) {
	h := &echo{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	wrote, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	l.Execute(func() {
		c.Write([]byte("early"))
		close(wrote)
		<-release // held up, as by a long script
	})
	<-wrote
	l.FlushAll()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, 5)
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != "early" {
		t.Fatalf("while the loop is held up: %q %v", got, err)
	}
}

// Closing a connection with output pending: OnClose reports what never
// left, the peer gets a prefix of the stream and then EOF, and the
// descriptor is closed.
func TestCloseWithPendingOutput(t *testing.T) {
	h := &echo{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	const size = 32 << 20
	data := stream(size)
	onLoop(t, l, func() { c.Write(data) })
	if err := c.Close(); err != nil { // from this goroutine: a task
		t.Fatal(err)
	}
	waitFor(t, l, "OnClose", func() bool { return h.closed.Load() == 1 })
	if u := h.unsent.Load(); u <= 0 || u >= size {
		t.Fatalf("unsent at close: %d", u)
	}
	got, err := io.ReadAll(nc)
	if err != nil {
		t.Fatalf("read to EOF: %v", err)
	}
	if len(got) != size-int(h.unsent.Load()) || !bytes.Equal(got, data[:len(got)]) {
		t.Fatalf("peer got %d bytes (unsent %d), a prefix: %v", len(got), h.unsent.Load(), bytes.Equal(got, data[:len(got)]))
	}
	onLoop(t, l, func() {
		if n, err := c.Write([]byte("x")); err == nil {
			t.Errorf("Write after close: %d, nil", n)
		}
	})
}

// A peer that resets the connection while output is pending: the write
// fails, the connection closes, later writes fail.
func TestWriteToResetPeer(t *testing.T) {
	h := &echo{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := <-conns
	onLoop(t, l, func() { c.Write(stream(8 << 20)) })
	nc.(*net.TCPConn).SetLinger(0)
	nc.Close() // RST
	waitFor(t, l, "the close of a reset connection", func() bool { return h.closed.Load() == 1 })
	onLoop(t, l, func() {
		if _, err := c.Write([]byte("x")); err == nil {
			t.Error("Write to a closed connection succeeded")
		}
	})
}

// Tasks and Wakes from other goroutines run on the loop, each once, in
// the order each goroutine queued them, while the loop sleeps in
// epoll_wait (the eventfd wakes it).
func TestWakeAndExecuteFromGoroutines(t *testing.T) {
	h := &echo{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	const goroutines, each = 8, 500
	last := make([]int, goroutines) // on the loop only
	var bad atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Execute(func() {
					if last[g] != i {
						bad.Add(1)
					}
					last[g] = i + 1
				}); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					time.Sleep(100 * time.Microsecond) // let the loop fall asleep now and then
				}
			}
		}()
	}
	wg.Wait()
	onLoop(t, l, func() {
		for g, n := range last {
			if n != each {
				t.Errorf("goroutine %d: %d of %d tasks ran", g, n, each)
			}
		}
	})
	if bad.Load() != 0 {
		t.Errorf("%d tasks ran out of order", bad.Load())
	}
	// Wake from another goroutine: OnWake runs and its write arrives.
	go c.Wake()
	b := make([]byte, 6)
	if _, err := io.ReadFull(nc, b); err != nil || string(b) != "woken\n" {
		t.Fatalf("after Wake: %q %v", b, err)
	}
	// A Wake queued for a closed connection does nothing.
	onLoop(t, l, func() { l.close(c) })
	c.Wake()
	onLoop(t, l, func() {})
	if h.wakes.Load() != 1 {
		t.Fatalf("OnWake ran %d times, want 1 (none after the close)", h.wakes.Load())
	}
}

// OnOpen refusing a connection closes it; Enroll and Execute after Stop
// fail; Stop closes the connections still open.
func TestOpenRefusedAndStop(t *testing.T) {
	refuse := atomic.Bool{}
	refuse.Store(true)
	h := &echo{onOpen: func(*Conn) bool { return !refuse.Load() }}
	l, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- l.Run() }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dial := func() net.Conn {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Enroll(sc, nil); err != nil {
			t.Fatal(err)
		}
		return nc
	}
	a := dial()
	defer a.Close()
	if n, err := a.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("refused connection: read %d %v, want EOF", n, err)
	}
	refuse.Store(false)
	b := dial()
	defer b.Close()
	b.Write([]byte("x"))
	if _, err := io.ReadFull(b, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	l.Stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if n, err := b.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after Stop: read %d %v, want EOF", n, err)
	}
	if h.opened.Load() != 2 || h.closed.Load() != 2 {
		t.Fatalf("opened %d closed %d, want 2 and 2", h.opened.Load(), h.closed.Load())
	}
	if err := l.Execute(func() {}); err != ErrClosed {
		t.Fatalf("Execute after Stop: %v", err)
	}
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enroll(sc, nil); err != ErrClosed {
		t.Fatalf("Enroll after Stop: %v", err)
	}
	if n, err := nc.Read(make([]byte, 1)); err != io.EOF { // Enroll closed the socket
		t.Fatalf("a connection Enroll refused: read %d %v, want EOF", n, err)
	}
}

// 10,000 connections open, each echoes, and close again (up to 1,000 open
// at a time), from the peer's side and from the loop's: every one is
// opened and closed once, and no descriptor is left behind.
func TestTenThousandConnections(t *testing.T) {
	h := &echo{}
	l, addr, _ := startLoop(t, h)
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := fds()
	const total, wave = 10000, 1000
	for w := 0; w < total/wave; w++ {
		var wg sync.WaitGroup
		errs := make(chan error, wave)
		for i := range wave {
			wg.Add(1)
			go func() {
				defer wg.Done()
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					errs <- err
					return
				}
				defer nc.Close()
				msg := []byte(fmt.Sprintf("c%d.%d", w, i))
				if i%2 == 1 {
					msg = append(msg, '!') // the loop closes after the echo
				}
				if _, err := nc.Write(msg); err != nil {
					errs <- err
					return
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(nc, got); err != nil || !bytes.Equal(got, msg) {
					errs <- fmt.Errorf("echo %q: %q %v", msg, got, err)
					return
				}
				if i%2 == 0 {
					return // the peer closes
				}
				if n, err := nc.Read(make([]byte, 1)); err != io.EOF {
					errs <- fmt.Errorf("after the loop's close: %d %v", n, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	waitFor(t, l, "every connection closed", func() bool { return h.closed.Load() == total })
	if h.opened.Load() != total {
		t.Fatalf("opened %d, want %d", h.opened.Load(), total)
	}
	if after := fds(); after > before+2 {
		t.Fatalf("descriptors: %d before, %d after every connection closed", before, after)
	}
}

// releaser is an echo handler that also records OnRelease.
type releaser struct {
	echo
	released atomic.Int64
}

func (h *releaser) OnRelease(c *Conn, n int) { h.released.Add(int64(n)) }

// A large buffer handed over with WriteOwned to a peer that is not
// reading: the loop keeps that very buffer as the pending output (no copy
// of it), what follows queues behind it, the peer gets every byte in
// order, and once it has all left the buffer is released (OnRelease).
func TestWriteOwnedKeepsBuffer(t *testing.T) {
	h := &releaser{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	const size = 32 << 20
	data := stream(size + 5)
	owned := append([]byte(nil), data[:size]...)
	onLoop(t, l, func() {
		n, kept, err := c.WriteOwned(owned)
		if n != size || err != nil || !kept {
			t.Fatalf("WriteOwned: %d, kept %v, %v", n, kept, err)
		}
		if &c.out[0] != &owned[0] || c.Buffered() <= 0 || c.Buffered() >= size {
			t.Fatalf("pending output is not the buffer handed over (pending %d of %d)", c.Buffered(), size)
		}
		// Not kept: p is still the caller's after a plain Write.
		if _, kept, err := c.WriteOwned(data[size:]); kept || err != nil {
			t.Fatalf("a write behind pending output: kept %v, %v", kept, err)
		}
	})
	got := make([]byte, size+5)
	if _, err := io.ReadFull(nc, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the peer got other bytes than those written")
	}
	waitFor(t, l, "the drained buffer's release", func() bool { return c.Buffered() == 0 && h.released.Load() >= size })
}

// A small buffer, or one the socket takes at once, stays the caller's.
func TestWriteOwnedSmallNotKept(t *testing.T) {
	h := &echo{}
	l, addr, conns := startLoop(t, h)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	onLoop(t, l, func() {
		if n, kept, err := c.WriteOwned([]byte("hello")); n != 5 || kept || err != nil {
			t.Fatalf("WriteOwned of 5 bytes: %d, kept %v, %v", n, kept, err)
		}
	})
	got := make([]byte, 5)
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != "hello" {
		t.Fatalf("%q %v", got, err)
	}
}

// BenchmarkLargeReply writes one 16 MB reply to a peer that reads it as
// fast as it can, with Write (the pending part is copied) and with
// WriteOwned (the loop keeps the buffer): compare B/op and ns/op.
func BenchmarkLargeReply(b *testing.B) {
	for _, owned := range []bool{false, true} {
		name := "Write"
		if owned {
			name = "WriteOwned"
		}
		b.Run(name, func(b *testing.B) {
			const size = 16 << 20
			h := &echo{}
			l, err := New(h)
			if err != nil {
				b.Fatal(err)
			}
			go l.Run()
			defer l.Stop()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			sc, err := ln.Accept()
			if err != nil {
				b.Fatal(err)
			}
			c, err := l.Enroll(sc, nil)
			if err != nil {
				b.Fatal(err)
			}
			src := stream(size)
			sink := make([]byte, size)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p := append([]byte(nil), src...) // the reply the handler built
				b.StartTimer()
				done := make(chan struct{})
				l.Execute(func() {
					if owned {
						c.WriteOwned(p)
					} else {
						c.Write(p)
					}
					close(done)
				})
				if _, err := io.ReadFull(nc, sink); err != nil {
					b.Fatal(err)
				}
				<-done
			}
		})
	}
}

// TestWatch: a watched eventfd's function runs on the loop each time the
// descriptor becomes readable, and never while it is not.
func TestWatch(t *testing.T) {
	l, _, _ := startLoop(t, &echo{})
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	fired := make(chan uint64, 8)
	onLoop(t, l, func() {
		if err := l.Watch(efd, func() {
			var b [8]byte
			if _, err := unix.Read(efd, b[:]); err != nil {
				fired <- 0 // readable but nothing to read: a spurious call
				return
			}
			fired <- binary.LittleEndian.Uint64(b[:])
		}); err != nil {
			t.Error(err)
		}
	})
	for i := uint64(1); i <= 3; i++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], i)
		if _, err := unix.Write(efd, b[:]); err != nil {
			t.Fatal(err)
		}
		if got := <-fired; got != i {
			t.Fatalf("watcher read %d, want %d", got, i)
		}
	}
	onLoop(t, l, func() {}) // a full round with nothing written
	select {
	case got := <-fired:
		t.Fatalf("watcher called with nothing written (read %d)", got)
	default:
	}
}

// TestLoopYields checks that a loop kept busy (tasks that queue
// themselves again, one round each, so the loop never sleeps in
// epoll_wait) goes through the scheduler now and then, which is what
// keeps the runtime's sysmon from preempting it every 10 ms.
func TestLoopYields(t *testing.T) {
	l, _, _ := startLoop(t, &echo{})
	done := make(chan int, 1)
	start := time.Now()
	var spin func()
	spin = func() {
		if l.yields >= 2 || time.Since(start) > 5*time.Second {
			done <- l.yields
			return
		}
		l.Execute(spin)
	}
	l.Execute(spin)
	if n := <-done; n < 2 {
		t.Fatalf("the loop yielded %d times in %v of busy rounds, want 2 (every %v)", n, time.Since(start), yieldEvery)
	}
}

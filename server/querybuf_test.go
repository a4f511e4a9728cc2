package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// queryBuf reads qbuf and qbuf-free of the client named name from CLIENT
// LIST on w.
func queryBuf(t *testing.T, w *wire, name string) (qbuf, free int) {
	t.Helper()
	list := w.do("CLIENT", "LIST")
	for _, l := range strings.Split(list, "\n") {
		if !strings.Contains(l, " name="+name+" ") {
			continue
		}
		m := regexp.MustCompile(` qbuf=(\d+) qbuf-free=(\d+) `).FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("CLIENT LIST line without qbuf: %q", l)
		}
		q, _ := strconv.Atoi(m[1])
		f, _ := strconv.Atoi(m[2])
		return q, f
	}
	t.Fatalf("no client %q in CLIENT LIST: %q", name, list)
	return 0, 0
}

// waitQueryBuf polls CLIENT LIST until ok(qbuf+qbuf-free) holds (the
// resizing runs on a 100 ms tick), failing after limit.
func waitQueryBuf(t *testing.T, w *wire, name string, limit time.Duration, ok func(size int) bool) int {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		q, f := queryBuf(t, w, name)
		if ok(q + f) {
			return q + f
		}
		if time.Now().After(deadline) {
			t.Fatalf("query buffer of %s: qbuf=%d qbuf-free=%d after %v", name, q, f, limit)
		}
		time.Sleep(20 * time.Millisecond) // polling a cron, as the TCL suite's wait_for_condition
	}
}

// As Redis's clientsCronResizeQueryBuffer (TCL unit/querybuf): a client
// idle for more than 2 s holds no query buffer, and one whose buffer grew
// for a large request gets it shrunk while it goes on with small ones.
func TestQueryBufResize(t *testing.T) {
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) {
			s := startWire(t, Config{IO: io}, &fakeKS{})
			admin, idle := dialWire(t, s), dialWire(t, s)
			// The server's idle clock starts when it runs the client's last
			// command: taken before sending it, start is no later.
			start := time.Now()
			idle.expect("+OK\r\n", "CLIENT", "SETNAME", "idle")
			if q, f := queryBuf(t, admin, "idle"); q+f < 16384 || q+f >= 32768 {
				t.Fatalf("a new client's query buffer is %d+%d bytes, Redis's is 16-32 KiB", q, f)
			}
			waitQueryBuf(t, admin, "idle", 20*time.Second, func(n int) bool { return n == 0 })
			if d := time.Since(start); d < qbufIdle {
				t.Fatalf("released after %v, before the client was idle for %v", d, qbufIdle)
			}
			idle.expect("+PONG\r\n", "PING") // served again, with a new buffer
			if q, f := queryBuf(t, admin, "idle"); q+f < 16384 {
				t.Fatalf("after new input the buffer is %d+%d bytes", q, f)
			}

			big := dialWire(t, s)
			big.expect("+OK\r\n", "CLIENT", "SETNAME", "big")
			value := strings.Repeat("A", 400000)
			big.expect(bulk(value), "ECHO", value)
			orig := waitQueryBuf(t, admin, "big", time.Second, func(n int) bool { return true })
			if orig <= 32768 {
				t.Fatalf("after a 400 kB request the query buffer is %d bytes", orig)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				big.expect("+OK\r\n", "CLIENT", "SETNAME", "big") // small requests: the peak falls
				if q, f := queryBuf(t, admin, "big"); q+f < orig {
					if q+f == 0 {
						t.Fatal("an active client's buffer was released")
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the large query buffer was not shrunk")
				}
				time.Sleep(10 * time.Millisecond) // as the TCL test: requests spaced over the cron's ticks
			}
		})
	}
}

// In goroutine mode the release wakes the client's read; the idle timeout
// still closes it when due, and input during the release is not lost.
func TestQueryBufReleaseKeepsTimeout(t *testing.T) {
	s := startWire(t, Config{IO: IOGoroutine, Timeout: 3}, &fakeKS{})
	admin, idle := dialWire(t, s), dialWire(t, s)
	last := time.Now() // before the command: the server's idle clock starts no earlier
	idle.expect("+OK\r\n", "CLIENT", "SETNAME", "idle")
	waitQueryBuf(t, admin, "idle", 20*time.Second, func(n int) bool { return n == 0 })
	idle.expectClosed()
	if d := time.Since(last); d < 3*time.Second {
		t.Fatalf("closed %v after its last command, before timeout 3", d)
	}
	// A client that sends while its buffer is released is served.
	other := dialWire(t, s)
	other.expect("+OK\r\n", "CLIENT", "SETNAME", "other")
	waitQueryBuf(t, admin, "other", 20*time.Second, func(n int) bool { return n == 0 })
	other.expect("$5\r\nhello\r\n", "ECHO", "hello")
}

// TestBigQueryBufReused: the buffer of a big bulk is handed to the spare
// once the request is done (the connection keeps none of it), the next big
// bulk, on another connection, reads into that same memory instead of a
// fresh allocation, and a spare unused for spareKeep is dropped.
func TestBigQueryBufReused(t *testing.T) {
	spare.mu.Lock()
	spare.buf = nil
	spare.mu.Unlock()
	a, _ := edgeConn(t)
	b, _ := edgeConn(t)
	val := strings.Repeat("v", 2*spareMin)
	req := []byte(multibulk("ECHO", val))
	feedInPieces(t, a, req, 64<<10)
	if cap(a.rbuf) != 0 {
		t.Fatalf("after a %d-byte request the connection keeps a %d-byte buffer", len(req), cap(a.rbuf))
	}
	spare.mu.Lock()
	sb := spare.buf
	spare.mu.Unlock()
	if cap(sb) < len(req) {
		t.Fatalf("the spare holds %d bytes after a %d-byte request", cap(sb), len(req))
	}
	var first *byte
	for len(req) > 0 { // b's reads, watching for the buffer of the big bulk
		n := min(64<<10, len(req))
		b.rbuf = append(b.rbuf, req[:n]...)
		req = req[n:]
		if !b.processInput() {
			t.Fatal("connection closed")
		}
		if cap(b.rbuf) >= len(val) && first == nil {
			first = unsafe.SliceData(b.rbuf)
		}
	}
	if first != unsafe.SliceData(sb) {
		t.Fatal("the second big bulk was read into a new buffer, not the spare")
	}
	dropStaleSpare(time.Now().Add(spareKeep / 2))
	spare.mu.Lock()
	kept := spare.buf != nil
	spare.mu.Unlock()
	if !kept {
		t.Fatalf("the spare was dropped before it was unused for %v", spareKeep)
	}
	dropStaleSpare(time.Now().Add(spareKeep + time.Second))
	spare.mu.Lock()
	left := spare.buf
	spare.mu.Unlock()
	if left != nil {
		t.Fatalf("a spare unused for more than %v was kept", spareKeep)
	}
}

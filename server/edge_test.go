package server

import (
	"fmt"
	"strings"
	"testing"
)

// feedInPieces runs req through c as reads of at most piece bytes, the way
// serve and OnTraffic append what a read returned and call processInput.
// It returns how many times the read buffer was reallocated.
func feedInPieces(t testing.TB, c *conn, req []byte, piece int) (grows int) {
	for len(req) > 0 {
		n := min(piece, len(req))
		before := cap(c.rbuf)
		c.rbuf = append(c.rbuf, req[:n]...)
		if cap(c.rbuf) != before {
			grows++
		}
		before = cap(c.rbuf)
		req = req[n:]
		if !c.processInput() {
			t.Fatal("connection closed")
		}
		if cap(c.rbuf) > before {
			grows++
		}
	}
	return grows
}

func edgeConn(t testing.TB) (*conn, *fakeKS) {
	f := &fakeKS{}
	table := newCommandTable(testFamilies)
	for name, cmd := range buildTable(testCmds(f)) {
		table[name] = cmd
	}
	s := newServer(Config{}, f.env(), nil, table)
	t.Cleanup(func() { s.Close() })
	return newConn(s, discardConn{}, 1), f
}

// A large bulk arriving in many small reads is parsed a bounded number of
// times, not once per read: the work is linear in its size.
func TestLargeBulkScannedOnce(t *testing.T) {
	c, _ := edgeConn(t)
	val := strings.Repeat("v", 8<<20)
	req := []byte(multibulk("ECHO", val) + multibulk("PING"))
	const piece = 16 << 10
	grows := feedInPieces(t, c, req, piece)
	reads := (len(req) + piece - 1) / piece
	// One scan finds the bulk's length, one parses it whole, one the PING
	// (the last piece holds the end of the bulk and the PING).
	if c.scans > 4 {
		t.Fatalf("%d Reader scans for %d reads of one %d-byte bulk: the partial bulk is re-parsed per read", c.scans, reads, len(val))
	}
	// The buffer doubles: 16 KB to 8 MB is 10 doublings (the append of a
	// read may reallocate too); growing by one read each time is 500.
	if grows > 24 {
		t.Fatalf("read buffer reallocated %d times for %d reads: not doubling", grows, reads)
	}
	if len(c.rbuf) != 0 || c.need != 0 {
		t.Fatalf("after the request: %d bytes pending, need %d", len(c.rbuf), c.need)
	}
	// A header that arrives split still parses, and the next request too.
	c.scans = 0
	feedInPieces(t, c, []byte(multibulk("ECHO", "abc")+multibulk("PING")), 3)
	if c.need != 0 || len(c.rbuf) != 0 {
		t.Fatalf("small request left need=%d pending=%d", c.need, len(c.rbuf))
	}
}

// TestLargeBulkReservedOnceStarted: once a request larger than the read
// buffer has sent reserveAfter bytes, the buffer is grown once to the
// whole declared length, not doubled on (each doubling copied what had
// arrived: a third of a 100 MB SET's CPU); before that it only doubles.
func TestLargeBulkReservedOnceStarted(t *testing.T) {
	c, _ := edgeConn(t)
	val := strings.Repeat("v", 16<<20)
	req := []byte(multibulk("ECHO", val))
	const piece = 16 << 10
	sent := 0
	for sent < reserveAfter/2 {
		feedInPieces(t, c, req[sent:sent+piece], piece)
		sent += piece
	}
	if cap(c.rbuf) >= len(val) {
		t.Fatalf("after %d bytes the buffer holds %d: the declared length was reserved too early", sent, cap(c.rbuf))
	}
	for sent < reserveAfter+piece {
		feedInPieces(t, c, req[sent:sent+piece], piece)
		sent += piece
	}
	if cap(c.rbuf) < len(val) {
		t.Fatalf("after %d bytes of a %d-byte request the buffer holds %d: not grown to the declared length", sent, len(req), cap(c.rbuf))
	}
	if grows := feedInPieces(t, c, req[sent:], piece); grows != 0 {
		t.Fatalf("the buffer grew %d more times after the declared length was reserved", grows)
	}
	if len(c.rbuf) != 0 || c.need != 0 {
		t.Fatalf("after the request: %d bytes pending, need %d", len(c.rbuf), c.need)
	}
}

// BenchmarkLargeBulk feeds one ECHO of the given size in 64 KB reads
// through the connection: MB/s must not fall as the size grows (it fell
// linearly before the reader skipped a pending bulk of known length).
func BenchmarkLargeBulk(b *testing.B) {
	for _, mb := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			c, _ := edgeConn(b)
			req := []byte(multibulk("ECHO", strings.Repeat("v", mb<<20)))
			b.SetBytes(int64(len(req)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				feedInPieces(b, c, req, 64<<10)
			}
		})
	}
}

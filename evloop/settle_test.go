package evloop

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// settler is an echo handler that owes a Settle for every message: the
// echo is written only after Settle ran; a message starting with "x"
// makes Settle drop its connection, whose echo must then never arrive.
type settler struct {
	echo
	settles atomic.Int64
	drop    []*Conn
}

func (h *settler) OnReadable(c *Conn) bool {
	if h.buf == nil {
		h.buf = make([]byte, 4096)
	}
	n, err := c.Read(h.buf)
	if err != nil {
		return false
	}
	msg := h.buf[:n]
	if msg[0] == 'x' {
		h.drop = append(h.drop, c)
	}
	c.l.Owe()
	if msg[0] == 'b' { // a large reply: written at once, after Settle
		_, err = c.Write([]byte(strings.Repeat("b", writeNowAt) + "\n"))
		return err == nil
	}
	_, err = c.Write(msg)
	return err == nil
}

func (h *settler) Settle() {
	h.settles.Add(1)
	for _, c := range h.drop {
		c.Drop(errors.New("not durable"))
	}
	h.drop = h.drop[:0]
}

// TestSettleBeforeWrite: after Owe, output leaves only once Settle ran
// (one Settle per round, however many connections owe it), and output of
// a connection that Settle drops never leaves: the peer sees the close.
func TestSettleBeforeWrite(t *testing.T) {
	h := &settler{}
	_, addr, _ := startLoop(t, h)
	dial := func() (net.Conn, *bufio.Reader) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc, bufio.NewReader(nc)
	}
	a, ar := dial()
	if _, err := a.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := ar.ReadString('\n'); err != nil || line != "hello\n" {
		t.Fatalf("echo = %q, %v", line, err)
	}
	if n := h.settles.Load(); n != 1 {
		t.Fatalf("%d settles before the first echo left; want 1", n)
	}
	if _, err := a.Write([]byte("b\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := ar.ReadString('\n'); err != nil || len(line) != writeNowAt+1 {
		t.Fatalf("large echo: %d bytes, %v", len(line), err)
	}
	if n := h.settles.Load(); n != 2 {
		t.Fatalf("%d settles before the large echo left; want 2", n)
	}
	x, xr := dial()
	if _, err := x.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	x.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := xr.ReadString('\n'); err == nil || line != "" {
		t.Fatalf("a dropped connection got %q, %v; want the close and no echo", line, err)
	}
	// The loop goes on serving the others.
	if _, err := a.Write([]byte("again\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := ar.ReadString('\n'); err != nil || line != "again\n" {
		t.Fatalf("echo after a drop = %q, %v", line, err)
	}
}

package resp

import (
	"errors"
	"os"
	"testing"
	"time"
)

// The committer (commit.go): msync durability on the event loop.

func startMsyncLoop(t *testing.T, f *fakeKS) *wireServer {
	t.Helper()
	s := startWire(t, Config{IO: IOLoop, Durability: "msync"}, f)
	if s.commit == nil {
		t.Fatal("no committer on the loop in msync mode")
	}
	return s
}

// expectNothing checks that no byte arrives on w within d (what a held
// reply looks like from the client; the wait only bounds the check).
func expectNothing(t *testing.T, w *wire, d time.Duration) {
	t.Helper()
	w.nc.SetReadDeadline(time.Now().Add(d))
	if b, err := w.r.Peek(1); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %q (err %v) before the batch was durable", b, err)
	}
	w.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
}

// A write's reply is held until the committer has made it durable, while
// the loop goes on serving other connections; a read that saw the write is
// held too, a batch that touched nothing is not; input sent while a
// connection is held runs after the held replies leave, in order.
func TestCommitterHoldsRepliesWhileLoopServes(t *testing.T) {
	f := &fakeKS{waits: make(chan uint64, 16), gate: make(chan struct{})}
	s := startMsyncLoop(t, f)
	writer, reader, pinger := dialWire(t, s), dialWire(t, s), dialWire(t, s)

	writer.send(multibulk("wrt") + multibulk("wrt"))
	if lsn := nextWait(t, f); lsn != 2 {
		t.Fatalf("the committer waited for LSN %d, want 2", lsn)
	}
	// The committer sits in WaitDurable: the loop must still serve.
	if got := pinger.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING during a group commit = %q", got)
	}
	reader.send(multibulk("rd"))
	writer.send(multibulk("PING")) // arrives while held
	expectNothing(t, writer, 200*time.Millisecond)
	expectNothing(t, reader, 10*time.Millisecond)

	close(f.gate)
	for _, want := range []string{":1\r\n", ":2\r\n", "+PONG\r\n"} {
		if got := writer.reply(); got != want {
			t.Fatalf("writer got %q, want %q", got, want)
		}
	}
	if got := reader.reply(); got != "+READ\r\n" {
		t.Fatalf("reader got %q", got)
	}
	// Durable now: a read of the same state leaves at once.
	if got := reader.do("rd"); got != "+READ\r\n" {
		t.Fatalf("rd = %q", got)
	}
	if st := s.commit.released.Load(); st < 2 {
		t.Fatalf("released %d held batches, want at least 2", st)
	}
}

// A failed group commit closes every held connection without its replies.
func TestCommitterFailureWithholdsReplies(t *testing.T) {
	f := &fakeKS{waitErr: errors.New("the disk is gone")}
	s := startMsyncLoop(t, f)
	w := dialWire(t, s)
	w.send(multibulk("PING") + multibulk("wrt"))
	w.expectClosed()
	// The failure is sticky: a later writer gets nothing either.
	w2 := dialWire(t, s)
	w2.send(multibulk("wrt"))
	w2.expectClosed()
}

// QUIT after a write: the connection closes once the held replies left.
func TestCommitterQuitAfterHeldWrite(t *testing.T) {
	f := &fakeKS{}
	s := startMsyncLoop(t, f)
	w := dialWire(t, s)
	w.send(multibulk("wrt") + multibulk("QUIT"))
	for _, want := range []string{":1\r\n", "+OK\r\n"} {
		if got := w.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	w.expectClosed()
}

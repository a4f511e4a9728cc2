package server

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The round's settle (loop.go), pmem mode on the loop: a batch's replies
// leave only once the round's durability wait for what it wrote returned,
// small replies gathered until the end of the round and a large one that
// the loop would write at once alike.
func TestLoopRepliesWaitForRoundSettle(t *testing.T) {
	big := strings.Repeat("b", 100<<10) // a reply the loop writes at once (evloop writeNowAt)
	for _, tc := range []struct {
		name  string
		batch string
		want  []string
	}{
		{"small", multibulk("wrt") + multibulk("wrt") + multibulk("rd") + multibulk("PING"),
			[]string{":1\r\n", ":2\r\n", "+READ\r\n", "+PONG\r\n"}},
		{"large", multibulk("wrt") + multibulk("wrt") + multibulk("bigrd", strconv.Itoa(len(big))),
			[]string{":1\r\n", ":2\r\n", "$" + strconv.Itoa(len(big)) + "\r\n" + big + "\r\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeKS{waits: make(chan uint64, 16), gate: make(chan struct{})}
			var open sync.Once
			release := func() { open.Do(func() { close(f.gate) }) }
			s := startWire(t, Config{IO: IOLoop, Durability: "pmem"}, f)
			t.Cleanup(release) // runs before the server's Close: a failure does not leave the loop waiting
			w := dialWire(t, s)
			w.send(tc.batch)
			if lsn := nextWait(t, f); lsn != 2 {
				t.Fatalf("WaitDurable(%d), want WaitDurable(2): the highest LSN of the round", lsn)
			}
			w.nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if b, err := w.r.Peek(1); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("got %q (err %v) before the round was durable", b, err)
			}
			w.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
			release()
			for _, want := range tc.want {
				got := w.reply()
				if got != want {
					t.Fatalf("got %.40q (%d bytes), want %.40q (%d bytes)", got, len(got), want, len(want))
				}
			}
			// A read waits for what it may have seen: durable already.
			if got := w.do("rd"); got != "+READ\r\n" {
				t.Fatalf("rd = %q", got)
			}
		})
	}
}

// A round's settle that fails closes the connections that owed it without
// any of their unsent replies (the PING's too, which was gathered with
// the write's), as the inline wait did; the server goes on serving others.
func TestLoopRoundSettleErrorWithholdsReplies(t *testing.T) {
	f := &fakeKS{waitErr: errors.New("the disk is gone")}
	s := startWire(t, Config{IO: IOLoop, Durability: "pmem"}, f)
	w := dialWire(t, s)
	w.send(multibulk("PING") + multibulk("wrt"))
	w.expectClosed()
	if got := dialWire(t, s).do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING on another connection = %q", got)
	}
}

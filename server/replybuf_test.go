package server

import (
	"testing"
	"time"
)

// TestReplyBufPolicy walks a connection's reply buffer through Redis 7.0's
// clientsCronResizeOutputBuffer rule: a new buffer of 16 KiB keeps its
// size at the first check (its peak is the whole of it) and then restarts
// the peak; an idle one shrinks to 1 KiB; batches that fill it double it
// up to 16 KiB and no further; a peak under half shrinks it to the peak
// plus one; the reset time NEVER keeps the peak; RESIZING 0 freezes it.
// fitReplyBuf gives Out that capacity after the first batch after a check
// that saw no batch larger than it, and drops a buffer above 256 KiB after
// any.
func TestReplyBufPolicy(t *testing.T) {
	s := &Server{}
	s.replyBuf.peakResetMs.Store(replyBufPeakResetDefault)
	c := &conn{}
	now := time.Now()
	c.initReplyBuf(now)
	ms := now.UnixMilli()
	check := func(wantSize, wantPeak int64) {
		t.Helper()
		ms += 100
		s.resizeReplyBuf(c, ms)
		if got, peak := c.rb.size.Load(), c.rb.peak.Load(); got != wantSize || peak != wantPeak {
			t.Fatalf("after a check: rbs=%d rbp=%d, want %d %d", got, peak, wantSize, wantPeak)
		}
	}
	check(16384, 0) // first check: no resize, the peak restarts
	s.replyBuf.peakResetMs.Store(100)
	check(1024, 0) // idle: shrinks to the minimum
	check(1024, 0) // and stays
	if n := s.replyBuf.shrinks.Load(); n != 1 {
		t.Fatalf("reply_buffer_shrinks %d, want 1", n)
	}
	s.replyBuf.peakResetMs.Store(-1) // NEVER
	for _, want := range []int64{2048, 4096, 8192, 16384, 16384} {
		before := c.rb.size.Load()
		c.noteReplyPeak(40000) // a reply larger than the buffer fills it
		check(want, before)
	}
	if n := s.replyBuf.expands.Load(); n != 4 {
		t.Fatalf("reply_buffer_expands %d, want 4", n)
	}
	c.Out = make([]byte, 0, 40000)
	c.fitReplyBuf() // the last check followed a batch larger than the buffer: kept
	if cap(c.Out) != 40000 {
		t.Fatalf("Out's capacity %d after big batches, want 40000 kept", cap(c.Out))
	}
	check(16384, 16384) // no big batch in this interval
	c.fitReplyBuf()
	if cap(c.Out) != 16384 {
		t.Fatalf("Out's capacity %d after the batch, want 16384", cap(c.Out))
	}
	c.Out = make([]byte, 0, 40000)
	c.fitReplyBuf() // no check since the last fit: kept
	if cap(c.Out) != 40000 {
		t.Fatalf("Out's capacity %d after a batch with no check between, want 40000 kept", cap(c.Out))
	}
	c.Out = make([]byte, 0, 300<<10)
	c.fitReplyBuf() // above 256 KiB: dropped at once
	if c.Out != nil {
		t.Fatalf("Out's capacity %d kept, want it dropped", cap(c.Out))
	}
	c.rb.peak.Store(3000)
	check(3001, 3000) // under half: shrinks to the peak plus one; NEVER keeps the peak
	c.Out = make([]byte, 0, 16384)
	c.fitReplyBuf()
	if cap(c.Out) != 3001 {
		t.Fatalf("Out's capacity %d, want 3001", cap(c.Out))
	}
	s.SetReplyBufferResizing(false)
	c.rb.peak.Store(0)
	check(3001, 0)
	s.replyBuf.resetStats()
	if s.replyBuf.shrinks.Load() != 0 || s.replyBuf.expands.Load() != 0 {
		t.Fatal("resetStats kept the counters")
	}
}

package server

import (
	"sync/atomic"
	"time"
)

// The reply buffer's size follows its use, as Redis 7.0's
// clientsCronResizeOutputBuffer sizes a client's static reply buffer
// (CLIENT LIST rbs and rbp, INFO reply_buffer_shrinks/expands):
//   - a connection starts with a 16 KiB buffer (PROTO_REPLY_CHUNK_BYTES);
//   - the peak is the most of it the replies of one batch filled (a batch
//     whose replies are larger fills it: the rest is what Redis puts in
//     its reply list);
//   - every 100 ms (the query buffer's check, querybuf.go) a buffer whose
//     peak is under half its size shrinks to the peak plus one byte, not
//     below 1 KiB (PROTO_REPLY_MIN_BYTES); one that was filled doubles, up
//     to 16 KiB; then, once the peak is older than the reset time (5 s,
//     DEBUG REPLYBUFFER PEAK-RESET-TIME), the peak starts again from what
//     the buffer holds now (nothing, between batches).
//
// The size is the capacity the connection's reusable reply buffer (Out)
// is brought back to: at the end of the first batch after a check that
// found no batch since the previous one larger than the size, once its
// replies are written, a buffer larger than the size is replaced by one of
// the size (a buffer above 256 KiB is dropped at the end of any batch, as
// before). Its replies of the moment are never cut: a batch's replies
// beyond the size grow Out, as Redis's go to its reply list, and a client
// that keeps making such batches keeps the grown buffer, as Redis's reply
// list stays in use. Replacing the buffer after every batch larger than
// the size (GET of a 32 KiB value, redis-benchmark -c 20 -P 4) cost 49-68
// µs of server CPU a request against 12-15 before; after each check, 24
// collections instead of 3 in a run of 30,000 GETs (the regrowth
// allocates about twice the batch). The check itself never touches Out
// (its connection's goroutine or loop owns it, and held replies may be in
// it), so an idle connection's buffer takes its new size at its next
// batch. DEBUG REPLYBUFFER RESIZING 0 freezes the size.

const (
	replyBufMax              = 16 << 10 // PROTO_REPLY_CHUNK_BYTES
	replyBufMin              = 1 << 10  // PROTO_REPLY_MIN_BYTES
	replyBufPeakResetDefault = 5000     // REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME, ms
)

// replyBufState is a connection's part (atomics: the connection notes its
// peaks, the ticker resizes).
type replyBufState struct {
	size      atomic.Int64 // the buffer's capacity between batches (rbs)
	peak      atomic.Int64 // the most a batch filled of it (rbp)
	lastReset atomic.Int64 // when peak last started again, unix ms
	fitDue    atomic.Bool  // the last check found no big batch: the next batch end fits Out to size
	big       atomic.Bool  // a batch since the last check had more reply bytes than size
}

// replyBufPolicy is the server's part: DEBUG REPLYBUFFER's settings and
// INFO's counters.
type replyBufPolicy struct {
	peakResetMs atomic.Int64 // -1: never
	resizingOff atomic.Bool  // DEBUG REPLYBUFFER RESIZING 0
	shrinks     atomic.Int64
	expands     atomic.Int64
}

// initReplyBuf gives a new connection Redis's starting buffer: 16 KiB,
// its peak the whole of it (so a first check neither shrinks nor grows
// it, then starts the peak again, as Redis's createClient leaves it).
func (c *conn) initReplyBuf(now time.Time) {
	c.rb.size.Store(replyBufMax)
	c.rb.peak.Store(replyBufMax)
	c.rb.lastReset.Store(now.UnixMilli() - replyBufPeakResetDefault)
}

// noteReplyPeak records a batch's reply bytes n about to be written.
func (c *conn) noteReplyPeak(n int) {
	size := c.rb.size.Load()
	if int64(n) > size && !c.rb.big.Load() {
		c.rb.big.Store(true)
	}
	if v := min(int64(n), size); v > c.rb.peak.Load() {
		c.rb.peak.Store(v)
	}
}

// fitReplyBuf gives Out the policy's capacity at the end of a batch, once
// its replies are written (the connection's goroutine or loop owns Out).
func (c *conn) fitReplyBuf() {
	switch sz := int(c.rb.size.Load()); {
	case cap(c.Out) > replyBufDrop:
		releasedLarge(cap(c.Out))
		c.Out = nil
	case sz > 0 && cap(c.Out) > sz && c.rb.fitDue.Load():
		c.rb.fitDue.Store(false)
		c.Out = make([]byte, 0, sz)
	}
}

// replyBufDrop is the capacity above which Out is dropped at the end of
// every batch, not kept until the next check.
const replyBufDrop = 256 << 10

// resizeReplyBuf is the 100 ms check of one connection (the rule above).
func (s *Server) resizeReplyBuf(c *conn, nowMs int64) {
	p := &s.replyBuf
	size, peak := c.rb.size.Load(), c.rb.peak.Load()
	if size == 0 {
		return // a connection made without newConn (tests)
	}
	c.rb.fitDue.Store(!c.rb.big.Swap(false))
	if p.resizingOff.Load() {
		return
	}
	switch {
	case size/2 >= replyBufMin && peak < size/2:
		c.rb.size.Store(max(replyBufMin, peak+1))
		p.shrinks.Add(1)
	case size*2 < 2*replyBufMax && peak == size:
		c.rb.size.Store(min(replyBufMax, size*2))
		p.expands.Add(1)
	}
	if reset := p.peakResetMs.Load(); reset >= 0 && nowMs-c.rb.lastReset.Load() >= reset {
		c.rb.peak.Store(0) // between batches the buffer holds nothing
		c.rb.lastReset.Store(nowMs)
	}
}

// resizeReplyBufs runs the check for every connection.
func (s *Server) resizeReplyBufs(conns []*conn, now time.Time) {
	ms := now.UnixMilli()
	for _, c := range conns {
		// c.link belongs to the connection's goroutine (or the loop);
		// replica is the atomic flag serveReplica sets before it.
		if !c.replica.Load() && !c.killed.Load() {
			s.resizeReplyBuf(c, ms)
		}
	}
}

// SetReplyBufferPeakReset is DEBUG REPLYBUFFER PEAK-RESET-TIME: ms
// milliseconds (-1: never; the default is 5000).
func (s *Server) SetReplyBufferPeakReset(ms int64) { s.replyBuf.peakResetMs.Store(ms) }

// ReplyBufferPeakResetDefault is the peak reset time DEBUG REPLYBUFFER
// PEAK-RESET-TIME RESET restores.
const ReplyBufferPeakResetDefault = replyBufPeakResetDefault

// SetReplyBufferResizing is DEBUG REPLYBUFFER RESIZING 0|1.
func (s *Server) SetReplyBufferResizing(on bool) { s.replyBuf.resizingOff.Store(!on) }

package server

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The query buffer's size follows its use, as Redis 7.0's
// clientsCronResizeQueryBuffer makes it (CLIENT LIST qbuf + qbuf-free):
//   - a client idle for more than 2 s with more than 4 KiB free gives its
//     buffer back down to what it holds (nothing, usually: qbuf=0
//     qbuf-free=0); the next input gets a fresh 16 KiB buffer;
//   - a buffer above 32 KiB and more than twice the largest input seen
//     since the last check (the peak, or the bulk being read) shrinks to
//     that, but never below the 16 KiB read size while the client is active.
//
// The check runs for each client every 100 ms. In loop mode a ticker hands
// the loop one task that checks every connection (the loop owns the
// buffers). In goroutine mode each connection's goroutine owns its buffer:
// it checks after a batch when 100 ms have passed, and for a client idle
// in its read the ticker wakes the read (a read deadline in the past,
// flagged so that it is not taken for the idle timeout); the goroutine
// then releases the buffer and waits for input without one (a MSG_PEEK
// readiness wait through the runtime's poller).

const (
	qbufResizeThreshold = 32 << 10 // PROTO_RESIZE_THRESHOLD
	qbufMinFree         = 4 << 10  // less free space than this is left alone
	qbufIdle            = 2 * time.Second
	qbufCheckEvery      = 100 * time.Millisecond
)

// queryBufState is a connection's part of the resizing.
type queryBufState struct {
	peak    int       // the most rbuf held since the last check
	checked time.Time // the last check (goroutine mode)
	// inRead: the goroutine is in its socket read with a buffer (goroutine
	// mode); poked: the ticker moved that read's deadline to wake it.
	inRead, poked atomic.Bool
	deadlineAt    time.Time // the idle timeout's deadline of the read (if deadline)
}

// notePeak records the buffer's fill after a read.
func (c *conn) notePeak() {
	if len(c.rbuf) > c.qb.peak {
		c.qb.peak = len(c.rbuf)
	}
}

// resizeQueryBuf applies the rule above, on the goroutine or loop that
// owns rbuf.
func (c *conn) resizeQueryBuf(now time.Time) {
	c.qb.checked = now
	if free := cap(c.rbuf) - len(c.rbuf); free > qbufMinFree {
		switch {
		case now.Sub(c.tick) > qbufIdle:
			c.setQueryBufCap(len(c.rbuf))
		case cap(c.rbuf) > qbufResizeThreshold && cap(c.rbuf)/2 > c.qb.peak:
			c.setQueryBufCap(max(len(c.rbuf), c.qb.peak, c.need, readBufSize))
		}
	}
	c.qb.peak = max(len(c.rbuf), c.need)
}

// setQueryBufCap shrinks rbuf to capacity n (nil for 0), keeping its bytes.
func (c *conn) setQueryBufCap(n int) {
	old := cap(c.rbuf)
	if n >= old {
		return
	}
	ob := c.rbuf
	if n == 0 {
		c.rbuf = nil
	} else {
		nb := make([]byte, len(c.rbuf), n)
		copy(nb, c.rbuf)
		c.rbuf = nb
	}
	c.recycleQueryBuf(ob)
	c.publish()
}

// The spare big read buffer. A request with a big bulk (spareMin bytes
// and more) reads it into a buffer as large as the request; allocating
// that anew for each one cost a 100 MB SET about a fifth of its CPU
// (the runtime zeroes the 100 MB, the kernel faults in and clears every
// page, and dropping it forces a collection and a scavenge: releasedLarge).
// So a connection done with such a buffer hands it to the server-wide
// spare, and the next big bulk on any connection reads into it, its pages
// already resident (Redis's allocator keeps a freed big extent's pages
// for reuse too: jemalloc's 10 s dirty decay). One spare at most, the
// largest given back; dropped when unused for spareKeep, so the memory
// is returned as the query buffer's own would be.
const (
	spareMin  = 4 << 20
	spareKeep = 10 * time.Second
)

var spare struct {
	mu  sync.Mutex
	buf []byte    // len 0; nil when there is none
	at  time.Time // when buf was given back
}

// takeSpare returns the spare buffer holding b's bytes if it has room for
// n bytes, else nil.
func takeSpare(b []byte, n int) []byte {
	spare.mu.Lock()
	sb := spare.buf
	if cap(sb) < n {
		spare.mu.Unlock()
		return nil
	}
	spare.buf = nil
	spare.mu.Unlock()
	sb = sb[:len(b)]
	copy(sb, b)
	return sb
}

// recycleQueryBuf disposes of a read buffer the connection dropped: a big
// one becomes the spare if no argument of a parked command may still
// alias it (a blocked command, a pause, WAIT or held replies keep their
// request's arguments in the buffer), else it is left to the collector.
func (c *conn) recycleQueryBuf(b []byte) {
	if cap(b) < spareMin || c.blk.b != nil || c.parked.Load() || c.pauseWait.Load() || c.held || c.replWait || c.link != nil {
		releasedLarge(cap(b))
		return
	}
	spare.mu.Lock()
	old := spare.buf
	if cap(b) > cap(old) {
		spare.buf, spare.at = b[:0], time.Now()
	} else {
		old, spare.at = b, time.Now()
	}
	spare.mu.Unlock()
	releasedLarge(cap(old))
}

// recycleDrained gives a big read buffer that holds nothing more back to
// the spare at the end of a batch, so a connection does not keep the
// buffer of a big bulk it has finished with until the next check.
func (c *conn) recycleDrained() {
	if len(c.rbuf) != 0 || c.need != 0 || cap(c.rbuf) < spareMin || c.blk.b != nil || c.parked.Load() || c.pauseWait.Load() || c.held || c.replWait || c.link != nil {
		return
	}
	b := c.rbuf
	c.rbuf = nil // the next input gets a fresh 16 KiB buffer
	c.recycleQueryBuf(b)
}

// dropStaleSpare drops the spare once it has been unused for spareKeep.
func dropStaleSpare(now time.Time) {
	spare.mu.Lock()
	b := spare.buf
	if b == nil || now.Sub(spare.at) < spareKeep {
		spare.mu.Unlock()
		return
	}
	spare.buf = nil
	spare.mu.Unlock()
	releasedLarge(cap(b))
}

// queryBufTicker runs the 100 ms check until the server closes.
func (s *Server) queryBufTicker() {
	t := time.NewTicker(qbufCheckEvery)
	defer t.Stop()
	var conns []*conn
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
		}
		dropStaleSpare(time.Now())
		conns = s.clientsUnsorted(conns[:0])
		s.resizeReplyBufs(conns, time.Now()) // replybuf.go: numbers only, any goroutine
		clear(conns)
		if s.loop != nil {
			s.loop.Execute(func() { // one task for all: the loop owns the buffers
				now := time.Now()
				for _, c := range s.clientsUnsorted(nil) {
					if c.gc != nil && c.link == nil && !c.killed.Load() {
						c.resizeQueryBuf(now)
					}
				}
			})
			continue
		}
		idleSince := time.Now().Add(-qbufIdle)
		conns = s.clientsUnsorted(conns[:0])
		for _, c := range conns {
			if !c.qb.inRead.Load() {
				continue
			}
			c.infoMu.Lock()
			idle := c.info.lastActive.Before(idleSince) && c.info.qbuf+c.info.qbufFree > 0
			c.infoMu.Unlock()
			if idle && c.qb.inRead.Load() {
				c.qb.poked.Store(true)
				c.nc.SetReadDeadline(time.Now()) // wakes the read (serve)
			}
		}
		clear(conns)
	}
}

// resumeAfterPoke handles a read the ticker woke: false if the idle
// timeout (whose deadline the poke overrode) has passed too, else the
// read deadline is put back and the buffer checked.
func (c *conn) resumeAfterPoke() bool {
	now := time.Now()
	if c.deadline && !now.Before(c.qb.deadlineAt) {
		return false
	}
	if c.deadline {
		c.nc.SetReadDeadline(c.qb.deadlineAt)
	} else {
		c.nc.SetReadDeadline(time.Time{})
	}
	c.resizeQueryBuf(now)
	return true
}

// isTimeout reports a read that ended at its deadline.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// waitReadable blocks until the socket has input (or EOF, or an error)
// without reading it, so that an idle client holds no buffer. It honours
// the read deadline.
func (c *conn) waitReadable() error {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var b [1]byte
	return rc.Read(func(fd uintptr) bool {
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return err != unix.EAGAIN && err != unix.EINTR
	})
}

// clientsUnsorted appends the connected clients to out, in no order.
func (s *Server) clientsUnsorted(out []*conn) []*conn {
	s.mu.Lock()
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	return out
}

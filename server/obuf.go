package server

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// client-output-buffer-limit (issue 12 §5): a client whose replies wait
// unread beyond its class's hard limit, or beyond the soft limit for longer
// than its seconds, is closed with Redis's log line, so a client that
// never reads cannot grow the server's memory without bound.
//
// What counts as waiting is what the server itself holds: on the event
// loop, the bytes the loop keeps for the socket after a Write; with a
// goroutine per connection, the part of a write the socket has not taken
// (the write is done in steps of obufPoll while a limit is set, so the
// limit is checked while the client does not read). The limits are read
// from the parameter table (config.go's ConfigValue), parsed once per
// change of the value.

// Client classes, in the order of the parameter's value.
const (
	obufNormal = iota
	obufReplica
	obufPubsub
)

// obufLimit is one class's limits, in bytes and seconds (0: none).
type obufLimit struct {
	hard, soft int64
	softSecs   int64
}

// obufLimits is the parsed value of client-output-buffer-limit.
type obufLimits struct {
	raw     string
	classes [3]obufLimit
}

// obufPoll is how long a goroutine-mode write waits before the limits are
// checked again.
const obufPoll = 100 * time.Millisecond

// outputLimits returns the current limits.
func (s *Server) outputLimits() *obufLimits {
	if l := s.obuf.Load(); l != nil {
		return l
	}
	raw, _ := s.ConfigValue("client-output-buffer-limit")
	return s.setOutputLimits(raw)
}

// setOutputLimits parses a client-output-buffer-limit value ("normal 0 0
// 0 slave 256mb 64mb 60 pubsub ...") and makes it current until the
// parameter is set again (its apply clears it).
func (s *Server) setOutputLimits(raw string) *obufLimits {
	l := &obufLimits{raw: raw}
	f := strings.Fields(raw)
	for i := 0; i+3 < len(f); i += 4 {
		class := -1
		switch f[i] {
		case "normal":
			class = obufNormal
		case "slave", "replica":
			class = obufReplica
		case "pubsub":
			class = obufPubsub
		}
		if class < 0 {
			continue
		}
		hard, _ := memToBytes(f[i+1])
		soft, _ := memToBytes(f[i+2])
		secs, _ := strconv.ParseInt(f[i+3], 10, 64)
		l.classes[class] = obufLimit{hard: int64(hard), soft: int64(soft), softSecs: secs}
	}
	s.obuf.Store(l)
	return l
}

// obufClass is the connection's class (Redis's getClientType: a client
// with subscriptions is pubsub; replicas are not served yet).
func (c *conn) obufClass() int {
	if c.subscriptions() > 0 {
		return obufPubsub
	}
	return obufNormal
}

// limitSet reports whether the connection's class has any limit.
func (c *conn) limitSet() bool {
	l := c.srv.outputLimits().classes[c.obufClass()]
	return l.hard > 0 || l.soft > 0
}

// overOutputLimit reports whether pending unread bytes close the
// connection, tracking how long the soft limit has been exceeded (as
// Redis's checkClientOutputBufferLimits: the soft limit must be exceeded
// continuously for more than its seconds). It logs the close.
func (c *conn) overOutputLimit(pending int) bool {
	l := c.srv.outputLimits().classes[c.obufClass()]
	n := int64(pending)
	hard := l.hard > 0 && n >= l.hard
	soft := false
	if l.soft > 0 && n >= l.soft {
		now := time.Now().Unix()
		if c.obufSoftSince == 0 {
			c.obufSoftSince = now
		} else {
			soft = now-c.obufSoftSince > l.softSecs
		}
	} else {
		c.obufSoftSince = 0
	}
	if !hard && !soft {
		return false
	}
	info := c.snapshot(c)
	info.pending = pending
	line := appendClientLine(nil, c, info, time.Now())
	c.srv.logf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", strings.TrimSuffix(string(line), "\n"))
	return true
}

// obufCheckFrom is the reply bytes a batch holds from which processInput
// checks the hard limit after each command (replyOverHard).
const obufCheckFrom = 16 << 10

// replyOverHard is Redis's closeClientOnOutputBufferLimitReached for the
// replies a batch holds before they are written: Redis checks its output
// buffer after each reply it adds, before any is written, so a reply that
// takes the waiting bytes (n, plus what the loop still holds for the
// socket) to the class's hard limit closes the connection with none of
// the batch's replies sent, however fast the client reads. It logs the
// close as overOutputLimit does and reports whether it closed.
func (c *conn) replyOverHard(n int) bool {
	if c.obufClosed {
		return true
	}
	l := c.srv.outputLimits().classes[c.obufClass()]
	if c.gc != nil {
		n += c.gc.Buffered()
	}
	if l.hard <= 0 || int64(n) < l.hard {
		return false
	}
	info := c.snapshot(c)
	info.pending = n
	line := appendClientLine(nil, c, info, time.Now())
	c.srv.logf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", strings.TrimSuffix(string(line), "\n"))
	c.obufClosed = true
	c.closeAfterReply = true
	c.kill()
	return true
}

// admitReply is the Writer's Admit (proto.AdmitFrom): a big bulk that
// would take the batch's replies past the hard limit is not copied; the
// connection closes instead (replyOverHard).
func (c *conn) admitReply(n int) bool {
	return !c.limitSet() || !c.replyOverHard(n)
}

// writeLimited writes b to a goroutine-mode connection in steps of
// obufPoll while a limit is set, closing it (false) once what the socket
// has not taken exceeds the limit.
func (c *conn) writeLimited(b []byte) (int, error) {
	total := 0
	for {
		c.nc.SetWriteDeadline(time.Now().Add(obufPoll))
		n, err := c.nc.Write(b)
		total += n
		b = b[n:]
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			c.nc.SetWriteDeadline(time.Time{})
			if err == nil {
				c.obufSoftSince = 0
			}
			return total, err
		}
		if c.killed.Load() || c.overOutputLimit(len(b)) {
			c.nc.SetWriteDeadline(time.Time{})
			return total, net.ErrClosed
		}
	}
}

package server

import (
	"bytes"
	"net"
	"sync/atomic"
	"time"
)

// Safety at the edge (issue 12 §5): what a connection that is not a Redis
// client, or a client that misbehaves, runs into.

// isCrossProtocol reports whether a request's command name is "POST" or
// "Host:" (any case): the first lines of an HTTP request, which a browser
// page can make a victim's browser send to a local server (cross-protocol
// scripting). Redis 7.0 checks every command for it in processCommand,
// before lookup and authentication.
func isCrossProtocol(name []byte) bool {
	switch len(name) {
	case 4:
		return bytes.EqualFold(name, []byte("post"))
	case 5:
		return bytes.EqualFold(name, []byte("host:"))
	}
	return false
}

// crossProtocolWarning is Redis 7.0's log line for a cross-protocol
// request, verbatim.
const crossProtocolWarning = "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted."

// lastAttackLog is the Unix second the warning was last logged.
var lastAttackLog atomic.Int64

// crossProtocolAttack logs the warning, at most once a minute as Redis does
// (so an attacker cannot flood the log). The caller closes the connection
// without writing the replies of its batch.
func (s *Server) crossProtocolAttack() {
	now := time.Now().Unix()
	last := lastAttackLog.Load()
	if now-last > 60 || last-now > 60 {
		if lastAttackLog.CompareAndSwap(last, now) {
			s.logf("%s", crossProtocolWarning)
		}
	}
}

// Redis 7.0's loopback test for protected mode (islocalClient): the peer's
// address printed is exactly "127.0.0.1" or "::1". Other 127/8 addresses
// are not loopback to Redis.
var (
	loopback4 = net.IPv4(127, 0, 0, 1)
	loopback6 = net.IPv6loopback
)

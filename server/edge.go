package server

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
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

// reservedFDs are the file descriptors kept for everything but clients
// (Redis's CONFIG_MIN_RESERVED_FDS: listeners, log, the data files).
const reservedFDs = 32

// fitMaxClients returns the maxclients the process's open-file limit
// allows, raising RLIMIT_NOFILE first if it is below maxclients+32 (as
// Redis's adjustOpenFilesLimit: it tries the needed limit, then 16 fewer
// at a time, down to the current one). A reduced value is logged with
// Redis's three warnings; err is set when not even one client fits.
func fitMaxClients(maxclients int, logf func(string, ...any)) (int, error) {
	want := uint64(maxclients) + reservedFDs
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		logf("Unable to obtain the current NOFILE limit (%v), assuming 1024 and setting the max clients configuration accordingly.", err)
		return 1024 - reservedFDs, nil
	}
	old := lim.Cur
	if old >= want {
		return maxclients, nil
	}
	best := want
	var setErr error
	for best > old {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: best, Max: max(best, lim.Max)}); err == nil {
			break
		} else {
			setErr = err
		}
		if best < 16 {
			best = old
			break
		}
		best -= 16
	}
	best = max(best, old)
	if best >= want {
		logf("Increased maximum number of open files to %d (it was originally set to %d).", want, old)
		return maxclients, nil
	}
	if best <= reservedFDs {
		return 0, fmt.Errorf("Your current 'ulimit -n' of %d is not enough for the server to start. Please increase your open file limit to at least %d. Exiting.", old, want)
	}
	reduced := int(best - reservedFDs)
	logf("You requested maxclients of %d requiring at least %d max file descriptors.", maxclients, want)
	logf("Server can't set maximum open files to %d because of OS error: %s.", want, strerror(setErr))
	logf("Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", best, reduced)
	return reduced, nil
}

// strerror is err's text as C's strerror spells it (capitalised).
func strerror(err error) string {
	if err == nil {
		return "Success"
	}
	m := err.Error()
	return strings.ToUpper(m[:1]) + m[1:]
}

// fitMaxClientsAtStart caps the configured maxclients (flag or config
// file, already applied) by the open-file limit; CONFIG GET reports the
// capped value, as in Redis.
func (s *Server) fitMaxClientsAtStart() {
	n, err := fitMaxClients(int(s.live.maxClients.Load()), s.logf)
	if err != nil {
		s.logf("%v", err)
		n = 1 // Redis exits here; NewServer cannot fail, so serve one client
	}
	s.live.maxClients.Store(int64(n))
	s.conf.mu.Lock()
	s.conf.vals["maxclients"] = strconv.Itoa(n)
	s.conf.mu.Unlock()
}

// clientReplyCommand: CLIENT REPLY ON|OFF|SKIP, as Redis 7.0: OFF drops
// every reply from here on (its own too), SKIP the next command's (not
// its own, and nothing while OFF), ON answers +OK and replies again.
// processInput drops the bytes.
func clientReplyCommand(c *Client, args [][]byte) {
	cn := c.conn
	switch {
	case ArgIs(args[2], "on"):
		cn.replyOff, cn.replySkip, cn.replySkipNext = false, false, false
		c.WriteOK()
	case ArgIs(args[2], "off"):
		cn.replyOff = true
	case ArgIs(args[2], "skip"):
		if !cn.replyOff {
			cn.replySkipNext = true
		}
	default:
		c.WriteError(ErrSyntax)
	}
}

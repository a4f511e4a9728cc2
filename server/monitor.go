package server

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MONITOR (semantics: redis.io/commands/monitor, Redis 7.0's
// replicationFeedMonitors). A monitoring connection receives one simple
// string per command another connection (or a script) ran:
//
//	+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
//
// the time the command finished (seconds.microseconds), the database it
// ended in, the client's address ("unix:<path>" for a unix-socket client,
// "lua" for a command a script called),
// and every argument quoted and escaped as Redis's sdscatrepr does. As in
// Redis 7.0:
//   - a command is shown after it ran (a failed one too), not when it is
//     rejected (unknown, arity, NOAUTH...) or queued in MULTI; EXEC's
//     commands appear when EXEC runs them, then "exec"; an EXEC refused
//     outright still shows "exec";
//   - EVAL, EVALSHA and FCALL (and their _RO forms) are shown before they
//     run, so the script's own calls follow them;
//   - admin commands (CONFIG, ACL, DEBUG, SHUTDOWN...) are never shown;
//     AUTH's arguments and HELLO's AUTH pair are shown as "(redacted)";
//   - MONITOR inside EXEC is refused; a second MONITOR is ignored (no
//     reply at all); RESET and closing the connection leave monitor mode.
//
// Cost when nobody monitors: call reads one atomic counter.

// monitorHub holds the monitoring connections.
type monitorHub struct {
	n     atomic.Int32 // len(conns), read without mu on every command
	mu    sync.Mutex
	conns map[*conn]struct{}
}

func monitorCommands() []Command {
	return []Command{
		{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Group: "server", Since: "1.0.0",
			Summary: "Listens for all requests received by the server in real-time.", Run: monitorCommand, NoLock: true},
	}
}

func monitorCommand(c *Client, _ [][]byte) {
	cn := c.conn
	if cn == nil {
		return
	}
	if cn.inExec {
		c.WriteError("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	h := &c.Srv.monitors
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.conns[cn]; ok {
		return // already monitoring: Redis answers nothing
	}
	if h.conns == nil {
		h.conns = map[*conn]struct{}{}
	}
	h.conns[cn] = struct{}{}
	h.n.Store(int32(len(h.conns)))
	c.WriteOK()
}

// stopMonitor takes c out of monitor mode, if it is in it (RESET, close).
func (c *conn) stopMonitor() {
	h := &c.srv.monitors
	if h.n.Load() == 0 {
		return
	}
	h.mu.Lock()
	delete(h.conns, c)
	h.n.Store(int32(len(h.conns)))
	h.mu.Unlock()
}

// monitored reports whether cmd is shown to monitors at all.
func monitored(cmd *Command) bool { return cmd.Flags&FlagAdmin == 0 }

// monitorsFirst reports the commands shown before they run (Redis's
// CMD_SKIP_MONITOR commands, which feed the monitors themselves first).
func monitorsFirst(cmd *Command) bool {
	switch cmd.Name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// feedMonitors sends one command line to every monitor; lua marks a
// command a script called.
func (c *conn) feedMonitors(cmd *Command, args [][]byte, lua bool) {
	h := &c.srv.monitors
	if h.n.Load() == 0 {
		return
	}
	line := appendMonitorLine(nil, time.Now(), c.DB, c.monitorAddr(), lua, args, redactedArgs(cmd, args))
	h.mu.Lock()
	mons := make([]*conn, 0, len(h.conns))
	for m := range h.conns {
		mons = append(mons, m)
	}
	h.mu.Unlock()
	for _, m := range mons {
		m.push(line)
	}
}

// monitorAddr is how a MONITOR line names c: its peer's ip:port, or
// "unix:<socket path>" for a unix-socket client (which has no peer
// address), as Redis's replicationFeedMonitors prints it.
func (c *conn) monitorAddr() string {
	if path, ok := c.unixSocket(); ok {
		return "unix:" + path
	}
	return c.addr
}

// appendMonitorLine appends Redis's MONITOR line for args.
// redact is the slow log's rule for passwords (slowlog.go).
func appendMonitorLine(b []byte, now time.Time, db int, addr string, lua bool, args [][]byte, redact func(int) bool) []byte {
	b = append(b, '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := strconv.AppendInt(nil, int64(now.Nanosecond()/1000), 10)
	b = append(b, "000000"[len(us):]...)
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	if lua {
		b = append(b, "lua"...)
	} else {
		b = append(b, addr...)
	}
	b = append(b, "] "...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		if redact(i) {
			a = []byte("(redacted)")
		}
		b = appendRepr(b, a)
	}
	return append(b, "\r\n"...)
}

// appendRepr appends s quoted as Redis's sdscatrepr does.
func appendRepr(b, s []byte) []byte {
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		default:
			if ch >= 0x20 && ch < 0x7f {
				b = append(b, ch)
			} else {
				b = append(b, `\x`...)
				b = append(b, strings.ToLower(strconv.FormatUint(uint64(ch)|0x100, 16))[1:]...)
			}
		}
	}
	return append(b, '"')
}

package server

import (
	"slices"
	"strconv"
	"sync"
	"time"
)

// The slow log (semantics: redis.io SLOWLOG): commands whose execution
// took at least slowlog-log-slower-than microseconds (default 10000; 0
// logs every command, a negative value none), newest first, at most
// slowlog-max-len entries (default 128). The time is the command's own
// run, without reading the request, waiting for the keyspace lock, waiting
// for durability or writing the reply, as Redis counts it. Commands inside
// MULTI/EXEC and scripts are logged one by one; EXEC itself is not.
//
// An entry keeps at most 32 arguments (the last one then says how many
// more there were) and at most 128 bytes of each (then "... (N more
// bytes)"). Passwords never reach it: AUTH's arguments, HELLO's AUTH
// username and password, CONFIG SET's values of requirepass, masterauth and masteruser, and ACL SETUSER's
// name and rules are logged as "(redacted)".

const (
	slowlogDefaultSlowerThan = 10000 // µs
	slowlogDefaultMaxLen     = 128
	slowlogMaxArgc           = 32
	slowlogMaxArgLen         = 128
)

// slowlogEntry is one SLOWLOG GET entry.
type slowlogEntry struct {
	id       int64
	unix     int64 // seconds
	micros   int64
	args     []string
	addr     string
	clientNm string
}

// slowlog is the server's slow log. mu guards everything.
type slowlog struct {
	mu      sync.Mutex
	entries []slowlogEntry // oldest first
	nextID  int64
}

// record logs a command that took d, if the threshold asks for it.
func (c *conn) recordSlow(cmd *Command, args [][]byte, d time.Duration) {
	s := c.srv
	th := s.live.slowlogSlowerThan.Load()
	if th < 0 || d.Microseconds() < th || cmd.Flags&FlagSkipSlowlog != 0 {
		return
	}
	e := slowlogEntry{unix: time.Now().Unix(), micros: d.Microseconds(), addr: c.addr, clientNm: c.Name}
	n := min(len(args), slowlogMaxArgc)
	e.args = make([]string, n)
	redact := redactedArgs(cmd, args)
	for i := 0; i < n; i++ {
		switch {
		case i == slowlogMaxArgc-1 && len(args) > slowlogMaxArgc:
			e.args[i] = "... (" + strconv.Itoa(len(args)-slowlogMaxArgc+1) + " more arguments)"
		case redact(i):
			e.args[i] = "(redacted)"
		case len(args[i]) > slowlogMaxArgLen:
			e.args[i] = string(args[i][:slowlogMaxArgLen]) + "... (" + strconv.Itoa(len(args[i])-slowlogMaxArgLen) + " more bytes)"
		default:
			e.args[i] = string(args[i])
		}
	}
	l := &s.slowlog
	l.mu.Lock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	if max := int(s.live.slowlogMaxLen.Load()); len(l.entries) > max {
		l.entries = append(l.entries[:0], l.entries[len(l.entries)-max:]...)
	}
	l.mu.Unlock()
}

// redactedArgs says which arguments of a request carry a password.
func redactedArgs(cmd *Command, args [][]byte) func(i int) bool {
	switch cmd.Name {
	case "auth":
		return func(i int) bool { return i >= 1 && len(args) <= 3 } // more: a syntax error, refused before Redis redacts
	case "hello":
		for j := 2; j+2 < len(args); j++ {
			if ArgIs(args[j], "auth") {
				return func(i int) bool { return i == j+1 || i == j+2 }
			}
		}
	case "config|set":
		// Redis's SENSITIVE_CONFIG parameters (config.c): their values.
		return func(i int) bool {
			return i >= 3 && i%2 == 1 && (ArgIs(args[i-1], "requirepass") || ArgIs(args[i-1], "masterauth") || ArgIs(args[i-1], "masteruser"))
		}
	case "acl|setuser":
		return func(i int) bool { return i >= 2 } // Redis redacts the name too
	case "migrate":
		return migrateRedacted(args)
	}
	return func(int) bool { return false }
}

// migrateRedacted: MIGRATE's AUTH password and AUTH2 username and password,
// redacted as Redis's migrateCommand does while it parses its options (so
// those before a syntax error or KEYS only).
func migrateRedacted(args [][]byte) func(i int) bool {
	var hide []int
scan:
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case ArgIs(args[j], "copy"), ArgIs(args[j], "replace"):
		case ArgIs(args[j], "auth") && more >= 1:
			j++
			hide = append(hide, j)
		case ArgIs(args[j], "auth2") && more >= 2:
			hide = append(hide, j+1, j+2)
			j += 2
		default: // KEYS, a syntax error: parsing stops
			break scan
		}
	}
	return func(i int) bool { return slices.Contains(hide, i) }
}

func slowlogCommands() []Command {
	const flags = FlagAdmin | FlagLoading | FlagStale
	return []Command{
		{Name: "slowlog", Arity: -2, Group: "server", Since: "2.2.12",
			Summary: "A container for slow log commands.", Subcommands: []Command{
				{Name: "slowlog|len", Arity: 2, Flags: flags, Group: "server", Since: "2.2.12",
					Summary: "Returns the number of entries in the slow log.", Run: slowlogLenCommand, NoLock: true,
					Tips: []string{"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"}},
				{Name: "slowlog|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "server", Since: "6.2.0",
					Summary: "Show helpful text about the different subcommands", Run: slowlogHelpCommand, NoLock: true},
				{Name: "slowlog|get", Arity: -2, Flags: flags, Group: "server", Since: "2.2.12",
					Summary: "Returns the slow log's entries.", Run: slowlogGetCommand, NoLock: true,
					Tips: []string{"request_policy:all_nodes", "nondeterministic_output"}},
				{Name: "slowlog|reset", Arity: 2, Flags: flags, Group: "server", Since: "2.2.12",
					Summary: "Clears all entries from the slow log.", Run: slowlogResetCommand, NoLock: true,
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}},
			}},
	}
}

// slowlogGetCommand: SLOWLOG GET [count]: the newest count entries (10 by
// default, -1 for all), each [id, unix time, µs, args, client addr,
// client name].
func slowlogGetCommand(c *Client, args [][]byte) {
	count := int64(10)
	if len(args) > 3 {
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try SLOWLOG HELP.")
		return
	}
	if len(args) == 3 {
		n, ok := ParseInt64(args[2])
		if !ok || n < -1 {
			c.WriteError("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	l := &c.Srv.slowlog
	l.mu.Lock()
	defer l.mu.Unlock()
	n := int64(len(l.entries))
	if count >= 0 && count < n {
		n = count
	}
	c.WriteArray(int(n))
	for i := 0; i < int(n); i++ {
		e := &l.entries[len(l.entries)-1-i]
		c.WriteArray(6)
		c.WriteInt(e.id)
		c.WriteInt(e.unix)
		c.WriteInt(e.micros)
		c.WriteArray(len(e.args))
		for _, a := range e.args {
			c.WriteBulkString(a)
		}
		c.WriteBulkString(e.addr)
		c.WriteBulkString(e.clientNm)
	}
}

func slowlogLenCommand(c *Client, _ [][]byte) {
	l := &c.Srv.slowlog
	l.mu.Lock()
	n := len(l.entries)
	l.mu.Unlock()
	c.WriteInt(int64(n))
}

func slowlogResetCommand(c *Client, _ [][]byte) {
	l := &c.Srv.slowlog
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
	c.WriteOK()
}

func slowlogHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "SLOWLOG", []string{
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	})
}

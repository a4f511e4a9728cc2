package server

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CONFIG GET / SET / RESETSTAT (semantics: redis.io/commands/config-get,
// config-set). The parameters are the server's own; dir, durability and
// segment-size describe the opened keyspace and cannot change while it is
// open, and save/appendonly exist because tools (redis-benchmark) ask for
// them: every write is already durable, so they are fixed at "" and "no".

// configParam is one CONFIG parameter. set is nil for a read-only one; it
// validates and applies value, or returns the reason it cannot. check, when
// present, validates without applying, so that CONFIG SET of several
// parameters changes none of them when one value is bad.
type configParam struct {
	name  string
	get   func(s *Server) string
	set   func(s *Server, value string) error
	check func(value string) error
}

// errImmutable is Redis's reason for a parameter that cannot be set.
var errImmutable = errors.New("can't set immutable config")

// configParams lists the parameters in CONFIG GET's reply order.
var configParams = []configParam{
	{name: "bind",
		get: func(s *Server) string { return *s.live.bind.Load() },
		set: func(s *Server, v string) error {
			return s.rebind(v, int(s.live.port.Load()))
		}},
	{name: "port",
		get: func(s *Server) string { return strconv.FormatInt(s.live.port.Load(), 10) },
		set: func(s *Server, v string) error {
			port, err := configInt(v, 0, 65535)
			if err != nil {
				return err
			}
			return s.rebind(*s.live.bind.Load(), int(port))
		},
		check: func(v string) error { _, err := configInt(v, 0, 65535); return err }},
	{name: "dir", get: func(s *Server) string { return s.cfg.Dir }},
	{name: "durability", get: func(s *Server) string { return s.cfg.Durability }},
	{name: "segment-size", get: func(s *Server) string { return strconv.FormatInt(s.cfg.SegmentSize, 10) }},
	{name: "requirepass",
		get: func(s *Server) string { return s.requirepass() },
		set: func(s *Server, v string) error {
			s.live.requirepass.Store(&v)
			return nil
		}},
	{name: "protected-mode",
		get: func(s *Server) string { return yesNo(s.live.protectedMode.Load()) },
		set: func(s *Server, v string) error {
			b, err := configBool(v)
			if err == nil {
				s.live.protectedMode.Store(b)
			}
			return err
		},
		check: func(v string) error { _, err := configBool(v); return err }},
	{name: "proto-max-bulk-len",
		get: func(s *Server) string { return strconv.FormatInt(s.live.protoMaxBulkLen.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := parseBulkLen(v)
			if err == nil {
				s.live.protoMaxBulkLen.Store(n)
			}
			return err
		},
		check: func(v string) error { _, err := parseBulkLen(v); return err }},
	{name: "maxclients",
		get: func(s *Server) string { return strconv.FormatInt(s.live.maxClients.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := configInt(v, 1, math.MaxInt32)
			if err == nil {
				s.live.maxClients.Store(n)
			}
			return err
		},
		check: func(v string) error { _, err := configInt(v, 1, math.MaxInt32); return err }},
	{name: "timeout",
		get: func(s *Server) string { return strconv.FormatInt(s.live.timeout.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := configInt(v, 0, math.MaxInt32)
			if err == nil {
				s.live.timeout.Store(n)
			}
			return err
		},
		check: func(v string) error { _, err := configInt(v, 0, math.MaxInt32); return err }},
	{name: "databases", get: func(*Server) string { return "16" }},
	{name: "busy-reply-threshold", get: getBusyThreshold, set: setBusyThreshold, check: checkBusyThreshold},
	{name: "lua-time-limit", get: getBusyThreshold, set: setBusyThreshold, check: checkBusyThreshold},
	{name: "slowlog-log-slower-than",
		get: func(s *Server) string { return strconv.FormatInt(s.live.slowlogSlowerThan.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := configInt(v, -1, math.MaxInt64)
			if err == nil {
				s.live.slowlogSlowerThan.Store(n)
			}
			return err
		},
		check: func(v string) error { _, err := configInt(v, -1, math.MaxInt64); return err }},
	{name: "slowlog-max-len",
		get: func(s *Server) string { return strconv.FormatInt(s.live.slowlogMaxLen.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := configInt(v, 0, math.MaxInt64)
			if err == nil {
				s.live.slowlogMaxLen.Store(n)
			}
			return err
		},
		check: func(v string) error { _, err := configInt(v, 0, math.MaxInt64); return err }},
	{name: "save",
		get:   func(*Server) string { return "" },
		set:   func(*Server, string) error { return nil },
		check: fixedValue("", "every write is durable before its reply; there are no snapshots")},
	{name: "appendonly",
		get:   func(*Server) string { return "no" },
		set:   func(*Server, string) error { return nil },
		check: fixedValue("no", "every write is durable before its reply; there is no AOF")},
	// Asked for by clients and tools (queue libraries check maxmemory and
	// its policy): the values say what the server does, and CONFIG SET
	// accepts only those.
	{name: "maxmemory",
		get: func(*Server) string { return "0" },
		set: func(*Server, string) error { return nil },
		check: func(v string) error {
			if n, err := ParseMemory(v); err != nil || n != 0 {
				return errors.New("there is no eviction: the keyspace is limited by its disk, not by maxmemory")
			}
			return nil
		}},
	{name: "maxmemory-policy",
		get:   func(*Server) string { return "noeviction" },
		set:   func(*Server, string) error { return nil },
		check: fixedValue("noeviction", "there is no eviction")},
	{name: "appendfsync",
		get:   func(*Server) string { return "always" },
		set:   func(*Server, string) error { return nil },
		check: fixedValue("always", "every write is durable before its reply")},
	{name: "notify-keyspace-events", get: func(*Server) string { return "" }},
	// No latency events or per-command histograms are recorded (latency.go).
	{name: "latency-monitor-threshold",
		get:   func(*Server) string { return "0" },
		set:   func(*Server, string) error { return nil },
		check: fixedValue("0", "latency monitoring is not implemented")},
	{name: "latency-tracking",
		get:   func(*Server) string { return "no" },
		set:   func(*Server, string) error { return nil },
		check: fixedValue("no", "per-command latency tracking is not implemented")},
	{name: "cluster-enabled", get: func(*Server) string { return "no" }},
	// The encoding thresholds of Redis 7.0's defaults, which OBJECT
	// ENCODING follows (keyspace package).
	{name: "hash-max-listpack-entries", get: func(*Server) string { return "512" }},
	{name: "hash-max-listpack-value", get: func(*Server) string { return "64" }},
	{name: "set-max-intset-entries", get: func(*Server) string { return "512" }},
	{name: "zset-max-listpack-entries", get: func(*Server) string { return "128" }},
	{name: "zset-max-listpack-value", get: func(*Server) string { return "64" }},
	{name: "list-max-listpack-size", get: func(*Server) string { return "-2" }},
	// The size at which a sparse HyperLogLog becomes dense (package hll).
	{name: "hll-sparse-max-bytes",
		get: func(s *Server) string { return strconv.FormatInt(s.live.hllSparseMaxBytes.Load(), 10) },
		set: func(s *Server, v string) error {
			n, err := ParseMemory(v)
			if err != nil || n < 0 || n > math.MaxInt32 {
				return errors.New("argument must be a memory value")
			}
			s.live.hllSparseMaxBytes.Store(n)
			return nil
		}},
}

// fixedValue accepts only the value the parameter already has.
func fixedValue(want, why string) func(string) error {
	return func(v string) error {
		if v != want {
			return errors.New(why)
		}
		return nil
	}
}

// parseBulkLen validates proto-max-bulk-len: a memory value of at least 1 MiB.
func parseBulkLen(v string) (int64, error) {
	n, err := ParseMemory(v)
	if err != nil {
		return 0, errors.New("argument must be a memory value")
	}
	if n < 1<<20 {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", 1<<20, int64(math.MaxInt64))
	}
	return n, nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func configBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, errors.New("argument must be 'yes' or 'no'")
}

func configInt(v string, lo, hi int64) (int64, error) {
	n, ok := ParseInt64([]byte(v))
	if !ok {
		return 0, errors.New("argument couldn't be parsed into an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return n, nil
}

// ParseMemory parses a size the way redis.conf does: a plain number of
// bytes, or a number with a unit, case-insensitive: k=1000, kb=1024,
// m=1000², mb=1024², g=1000³, gb=1024³.
func ParseMemory(s string) (int64, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l, mul = strings.TrimSuffix(l, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(l, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid memory size %q", s)
	}
	if n > math.MaxInt64/mul {
		return 0, fmt.Errorf("memory size %q overflows", s)
	}
	return n * mul, nil
}

func findConfigParam(name string) *configParam {
	for i := range configParams {
		if strings.EqualFold(configParams[i].name, name) {
			return &configParams[i]
		}
	}
	return nil
}

// configMatches returns the parameters any of patterns matches (Redis
// glob, case-insensitive), each once, in table order.
func configMatches(patterns [][]byte) []*configParam {
	var out []*configParam
	for i := range configParams {
		p := &configParams[i]
		for _, pat := range patterns {
			if globMatchFold(pat, []byte(p.name)) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// configGetCommand: CONFIG GET parameter [parameter ...].
func configGetCommand(c *Client, args [][]byte) {
	params := configMatches(args[2:])
	c.WriteMap(len(params))
	for _, p := range params {
		c.WriteBulkString(p.name)
		c.WriteBulkString(p.get(c.Srv))
	}
}

// configSetCommand: CONFIG SET parameter value [parameter value ...]. All
// names are checked before anything is set.
func configSetCommand(c *Client, args [][]byte) {
	if len(args)%2 != 0 {
		c.WriteError(WrongArgs("config|set"))
		return
	}
	type change struct {
		p     *configParam
		value string
	}
	var changes []change
	for i := 2; i < len(args); i += 2 {
		name := string(args[i])
		p := findConfigParam(name)
		if p == nil {
			c.WriteError("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'")
			return
		}
		for _, ch := range changes {
			if ch.p == p {
				c.WriteError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - duplicate parameter")
				return
			}
		}
		if p.set == nil {
			c.WriteError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + errImmutable.Error())
			return
		}
		value := string(args[i+1])
		if p.check != nil {
			if err := p.check(value); err != nil {
				c.WriteError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + err.Error())
				return
			}
		}
		changes = append(changes, change{p, value})
	}
	for _, ch := range changes {
		if err := ch.p.set(c.Srv, ch.value); err != nil {
			c.WriteError("ERR CONFIG SET failed (possibly related to argument '" + ch.p.name + "') - " + err.Error())
			return
		}
		if ch.p.name != "requirepass" {
			c.Srv.logf("CONFIG SET %s %s", ch.p.name, ch.value)
		} else {
			c.Srv.logf("CONFIG SET requirepass (value not logged)")
		}
	}
	c.WriteOK()
}

func configResetstatCommand(c *Client, _ [][]byte) {
	c.Srv.resetStats()
	c.WriteOK()
}

func configHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "CONFIG", []string{
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
	})
}

// busy-reply-threshold and its old name lua-time-limit: milliseconds a
// script runs before other clients get BUSY (scriptbusy.go).
func getBusyThreshold(s *Server) string { return strconv.FormatInt(s.live.busyThreshold.Load(), 10) }

func setBusyThreshold(s *Server, v string) error {
	n, err := configInt(v, 0, math.MaxInt64)
	if err == nil {
		s.live.busyThreshold.Store(n)
	}
	return err
}

func checkBusyThreshold(v string) error { _, err := configInt(v, 0, math.MaxInt64); return err }

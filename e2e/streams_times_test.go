package e2e

import (
	"strconv"
	"testing"
)

// TestDiffStreamGroupTimes compares with redis-server the consumer-group
// replies that carry the clock (XPENDING's idle times, XINFO CONSUMERS'
// idle, XINFO STREAM FULL's delivery and seen times) with those values
// masked: what remains (IDs, consumers, delivery counts, pending counts)
// must be identical. The scripts in testdata/diff can only ignore them.
func TestDiffStreamGroupTimes(t *testing.T) {
	redisAddr := startRedis(t)
	s := startServer(t, t.TempDir())
	steps := [][]string{
		{"FLUSHALL"},
		{"XADD", "s", "1-0", "f", "1"}, {"XADD", "s", "2-0", "f", "2"}, {"XADD", "s", "3-0", "f", "3"}, {"XADD", "s", "4-0", "f", "4"},
		{"XGROUP", "CREATE", "s", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"},
		{"XPENDING", "s", "g", "-", "+", "10"},
		{"XPENDING", "s", "g", "-", "+", "10", "alice"},
		{"XCLAIM", "s", "g", "carol", "0", "3-0", "RETRYCOUNT", "9"},
		{"XCLAIM", "s", "g", "carol", "0", "4-0", "JUSTID"},
		{"XCLAIM", "s", "g", "carol", "0", "1-0"},
		{"XPENDING", "s", "g", "-", "+", "10"},
		{"XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "2"},
		{"XPENDING", "s", "g", "IDLE", "0", "-", "+", "10"},
		{"XACK", "s", "g", "2-0"},
		{"XGROUP", "CREATECONSUMER", "s", "g", "erin"},
		{"XINFO", "CONSUMERS", "s", "g"},
		{"XINFO", "STREAM", "s", "FULL"},
		{"XINFO", "STREAM", "s", "FULL", "COUNT", "1"},
	}
	run := func(addr string) []string {
		c, err := dialRESP(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		var out []string
		for _, st := range steps {
			args := make([]any, len(st))
			for i, a := range st {
				args[i] = a
			}
			r, err := c.do(args...)
			if err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			pending := st[0] == "XPENDING" && len(st) > 3
			out = append(out, maskStreamTimes(r, pending).String())
		}
		return out
	}
	want, got := run(redisAddr), run(s.Addr)
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("%v:\n\tredis:     %s\n\tpersimmon: %s", steps[i], want[i], got[i])
		}
	}
}

// maskStreamTimes replaces clock values by :T: the value after an "idle"
// or "seen-time" field name, any integer that is a Unix time in ms, and
// (extended XPENDING) each entry's idle time.
func maskStreamTimes(r reply, pending bool) reply {
	if pending && r.kind == '*' {
		for i := range r.elems {
			if e := &r.elems[i]; e.kind == '*' && len(e.elems) == 4 {
				e.elems[2] = reply{kind: ':', str: "T"}
			}
		}
		return r
	}
	if r.kind == ':' {
		if n, err := strconv.ParseInt(r.str, 10, 64); err == nil && n > 1_000_000_000_000 {
			return reply{kind: ':', str: "T"}
		}
	}
	for i := range r.elems {
		e := &r.elems[i]
		if e.kind == '$' && (e.str == "idle" || e.str == "seen-time") && i+1 < len(r.elems) {
			r.elems[i+1] = reply{kind: ':', str: "T"}
		}
		if e.kind == '*' || e.kind == ':' {
			*e = maskStreamTimes(*e, false)
		}
	}
	return r
}

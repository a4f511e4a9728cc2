package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestHLLAccessFrequencyMatchesRedis: under an LFU policy with
// lfu-log-factor 0 (every access increments the counter), OBJECT FREQ
// after each PFADD and PFCOUNT is redis-server's: one access per command,
// whether it creates, changes a small or a large sparse HLL or a dense
// one, changes nothing, writes the cached count back, reads it, or meets a
// string that is not an HLL; SETRANGE's first patch of a large string
// keeps the counter too, and OBJECT ENCODING is no access. (Persimmon counted two for a PFADD that rewrote a
// small HLL, the read and the write, and reset the counter to its initial
// value when a PFADD or a SETRANGE first patched an indexed string, and
// OBJECT ENCODING of an indexed string counted an access.)
func TestHLLAccessFrequencyMatchesRedis(t *testing.T) {
	s := startServer(t, t.TempDir())
	var elems, big []any
	for i := 0; i < 3000; i++ {
		elems = append(elems, fmt.Sprint("d", i))
	}
	for i := 0; i < 600; i++ {
		big = append(big, fmt.Sprint("b", i))
	}
	steps := [][]any{
		{"PFADD", "h", "a"},
		{"PFADD", "h", "b"},
		{"PFADD", "h", "b"}, // changes nothing
		{"PFADD", "h", "c", "d", "e"},
		{"PFCOUNT", "h"}, // writes the count back
		{"PFCOUNT", "h"}, // reads the cache
		{"PFADD", "h"},
		{"SET", "str", "not an hll"},
		{"PFADD", "str", "x"}, // WRONGTYPE
		{"PFCOUNT", "str"},
		append([]any{"PFADD", "big"}, big...), // a large sparse HLL
		{"STRLEN", "big"},
		{"PFADD", "big", "more"},
		{"PFADD", "big", "more"},
		{"PFCOUNT", "big"},
		append([]any{"PFADD", "dense"}, elems...),
		{"PFADD", "dense", "x1"},
		{"PFADD", "dense", "x1"},
		{"PFCOUNT", "dense"},
		{"SET", "str2", strings.Repeat("x", 2000)},
		{"GET", "str2"},
		{"SETRANGE", "str2", "5", "yy"},
		{"SETRANGE", "str2", "7", "zz"},
	}
	var runs []string
	for _, addr := range []string{startRedis(t), s.Addr} {
		c := dialOrFail(t, addr)
		mustDo(t, c, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
		mustDo(t, c, "CONFIG", "SET", "lfu-log-factor", "0")
		var out []string
		for _, st := range steps {
			r, err := c.do(st...)
			reply := ""
			if err != nil {
				reply = "error " + err.Error()
			} else {
				reply = r.String()
			}
			if len(reply) > 40 {
				reply = reply[:40]
			}
			key := st[1].(string)
			// OBJECT ENCODING is no access (its encoding is not compared:
			// Redis names any HLL PFADD made raw, Persimmon a short one
			// embstr, by its length).
			mustDo(t, c, "OBJECT", "ENCODING", key)
			out = append(out, fmt.Sprintf("%s %s: %s; freq %s", st[0], key, reply, mustDo(t, c, "OBJECT", "FREQ", key)))
		}
		runs = append(runs, strings.Join(out, "\n"))
	}
	if runs[0] != runs[1] {
		t.Errorf("redis-server:\n%s\npersimmon-server:\n%s", runs[0], runs[1])
	}
}

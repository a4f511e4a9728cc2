package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLazyFreedObjectsMatchRedis runs one sequence of deletes on Persimmon
// and on redis-server and compares INFO's lazyfreed_objects and
// lazyfree_pending_objects after each (pending once Redis's thread is
// done): UNLINK of a value above the lazy free threshold (a hashtable set,
// hash, skiplist sorted set, a stream of many nodes, a long list) counts
// one, DEL and small values count nothing, a stream whose only group was
// destroyed stays under it, FLUSHDB/FLUSHALL ASYNC count every key,
// lazyfree-lazy-user-del makes DEL count, CONFIG RESETSTAT zeroes it.
func TestLazyFreedObjectsMatchRedis(t *testing.T) {
	s := startServer(t, t.TempDir(), "--enable-debug-command", "yes")
	ours, err := dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ours.close()
	theirs, err := dialRESP(startRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.close()

	counters := func(c *respConn) string {
		t.Helper()
		// Redis's thread may still be freeing: poll until it is done
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			r, err := c.do("INFO", "memory")
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, line := range strings.Split(r.str, "\r\n") {
				if strings.HasPrefix(line, "lazyfreed_objects:") || strings.HasPrefix(line, "lazyfree_pending_objects:") {
					out = append(out, line)
				}
			}
			if len(out) != 2 {
				t.Fatalf("INFO memory lacks the counters: %q", r.str)
			}
			if out[0] == "lazyfree_pending_objects:0" {
				return strings.Join(out, " ")
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("lazyfree_pending_objects never 0 (%s)", c.nc.RemoteAddr())
		return ""
	}
	many := func(cmd, key string, n int, elem func(i int) []string) []any {
		args := []any{cmd, key}
		for i := range n {
			for _, e := range elem(i) {
				args = append(args, e)
			}
		}
		return args
	}
	word := func(i int) []string { return []string{"m" + strconv.Itoa(i)} }
	pair := func(i int) []string { return []string{strconv.Itoa(i), "m" + strconv.Itoa(i)} }
	steps := [][]any{
		{"CONFIG", "RESETSTAT"},
		many("SADD", "set", 100, word), {"UNLINK", "set"}, // 100 > 64: one
		many("SADD", "set", 60, word), {"UNLINK", "set"}, // 60: none
		many("SADD", "iset", 100, func(i int) []string { return []string{strconv.Itoa(i)} }), {"UNLINK", "iset"}, // intset: none
		many("SADD", "set", 100, word), {"DEL", "set"}, // DEL: none
		many("HSET", "hash", 200, pair), {"UNLINK", "hash"},
		many("HSET", "hash", 100, pair), {"UNLINK", "hash"}, // listpack: none
		many("ZADD", "z", 200, pair), {"UNLINK", "z"},
		many("RPUSH", "list", 100000, word), {"UNLINK", "list"}, // about 100 quicklist nodes
		many("RPUSH", "list", 1000, word), {"UNLINK", "list"},
		{"CONFIG", "SET", "stream-node-max-entries", "5"},
		many("XADD", "st", 1, func(int) []string { return []string{"*", "f", "v"} }),
		{"XGROUP", "CREATE", "st", "g", "$"}, {"XGROUP", "DESTROY", "st", "g"}, {"UNLINK", "st"}, // none
		{"CONFIG", "RESETSTAT"},
		{"MSET", "a", "1", "b", "2", "c", "3"}, many("SADD", "set", 100, word),
		{"FLUSHDB", "ASYNC"}, // every key
		{"MSET", "a", "1", "b", "2"}, {"FLUSHALL", "SYNC"}, {"FLUSHALL"},
		{"MSET", "a", "1", "b", "2"}, {"FLUSHALL", "ASYNC"},
		{"CONFIG", "SET", "lazyfree-lazy-user-del", "yes"},
		many("SADD", "set", 100, word), {"DEL", "set"},
		{"CONFIG", "SET", "lazyfree-lazy-user-del", "no"},
		{"CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"},
		{"SET", "a", "1"}, {"FLUSHDB"},
		{"CONFIG", "SET", "lazyfree-lazy-user-flush", "no"},
		{"CONFIG", "RESETSTAT"},
	}
	for j := range 1000 {
		steps = append(steps, []any{"XADD", "big", "*", "foo", strconv.Itoa(j)})
	}
	steps = append(steps, []any{"XGROUP", "CREATE", "big", "mygroup", "0"},
		[]any{"XREADGROUP", "GROUP", "mygroup", "Alice", "COUNT", "2", "STREAMS", "big", ">"},
		[]any{"UNLINK", "big"}) // 200 nodes + the group: one
	for _, step := range steps {
		a, err1 := ours.do(step...)
		b, err2 := theirs.do(step...)
		if err1 != nil || err2 != nil || (step[0] != "XADD" && step[0] != "XREADGROUP" && a.String() != b.String()) {
			t.Fatalf("%v: persimmon %s (%v), redis %s (%v)", step[:min(len(step), 3)], a, err1, b, err2)
		}
		if step[0] == "XADD" {
			continue
		}
		if got, want := counters(ours), counters(theirs); got != want {
			t.Fatalf("after %v: persimmon %s, redis %s", step[:min(len(step), 3)], got, want)
		}
	}
	if got := counters(ours); got != "lazyfree_pending_objects:0 lazyfreed_objects:1" {
		t.Fatalf("at the end: %s", got)
	}
}

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// DUMP/RESTORE of streams against redis-server 7.0.15: the same commands
// build each stream on both servers; each server's payload RESTOREs on the
// other, and XINFO STREAM FULL of the copy equals the original's, delivery
// and seen times included (they travel in the payload).

// streamFixtures are per key the commands building it (KEY stands for the
// key); config lines go around them (CONFIG SET is not a key command).
func streamFixtures() map[string][][]any {
	many := func(n int, f func(i int) []any) [][]any {
		var out [][]any
		for i := range n {
			out = append(out, f(i))
		}
		return out
	}
	fx := map[string][][]any{
		"x:simple": many(10, func(i int) []any { return []any{"XADD", "KEY", fmt.Sprintf("%d-1", i+1), "f", i, "g", "v"} }),
		"x:nodes": append([][]any{{"CONFIG", "SET", "stream-node-max-entries", "4"}}, append(many(30, func(i int) []any {
			if i%3 == 0 {
				return []any{"XADD", "KEY", fmt.Sprintf("%d-%d", 1000+i/2, i), "other", strings.Repeat("x", 70+i), "n", -i * 1000}
			}
			return []any{"XADD", "KEY", fmt.Sprintf("%d-%d", 1000+i/2, i), "f", i, "g", fmt.Sprintf("v%d", i)}
		}), []any{"CONFIG", "SET", "stream-node-max-entries", "100"})...),
		"x:bytes": many(12, func(i int) []any {
			return []any{"XADD", "KEY", fmt.Sprintf("1700000000000-%d", i), "blob", strings.Repeat(string(rune('a'+i)), 900)}
		}),
		"x:deleted": append(many(20, func(i int) []any { return []any{"XADD", "KEY", fmt.Sprintf("5-%d", i+1), "f", i} }),
			[]any{"XDEL", "KEY", "5-3", "5-10", "5-20"}, []any{"XTRIM", "KEY", "MAXLEN", "=", "12"}),
		"x:empty": {{"XADD", "KEY", "7-7", "f", "v"}, {"XDEL", "KEY", "7-7"}},
		"x:bigid": {{"XADD", "KEY", "18446744073709551614-18446744073709551614", "f", "v"}, {"XADD", "KEY", "18446744073709551614-*", "f", "w"}},
		"x:groups": append(many(10, func(i int) []any { return []any{"XADD", "KEY", fmt.Sprintf("9-%d", i+1), "f", i} }),
			[]any{"XGROUP", "CREATE", "KEY", "g1", "0"},
			[]any{"XGROUP", "CREATE", "KEY", "g2", "$"},
			[]any{"XGROUP", "CREATE", "KEY", "g0", "9-4", "ENTRIESREAD", "4"},
			[]any{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "KEY", ">"},
			[]any{"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "KEY", ">"},
			[]any{"XREADGROUP", "GROUP", "g0", "bob", "STREAMS", "KEY", ">"},
			[]any{"XACK", "KEY", "g1", "9-2"},
			[]any{"XCLAIM", "KEY", "g1", "carol", "0", "9-1", "9-4"},
			[]any{"XGROUP", "CREATECONSUMER", "KEY", "g1", "dave"},
			[]any{"XDEL", "KEY", "9-5"}),
	}
	return fx
}

func buildStreams(t *testing.T, c *redis.Client) {
	t.Helper()
	for key, cmds := range streamFixtures() {
		for _, cmd := range cmds {
			args := make([]any, len(cmd))
			for i, a := range cmd {
				if a == "KEY" {
					a = key
				}
				args[i] = a
			}
			if err := c.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
				t.Fatalf("%v: %v", args, err)
			}
		}
	}
}

// xinfoFull is XINFO STREAM key FULL as text; with maskTimes, integers
// that are Unix times in ms (above 10^12) read "<t>", for comparing
// streams built at different times.
func xinfoFull(t *testing.T, c *redis.Client, key string, maskTimes bool) string {
	t.Helper()
	r, err := c.Do(ctx, "XINFO", "STREAM", key, "FULL").Result()
	if err != nil {
		t.Fatalf("XINFO STREAM %s FULL: %v", key, err)
	}
	var render func(v any) string
	render = func(v any) string {
		switch x := v.(type) {
		case []any:
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = render(e)
			}
			return "[" + strings.Join(parts, " ") + "]"
		case int64:
			if maskTimes && x > 1e12 {
				return "<t>"
			}
		}
		return fmt.Sprintf("%q", fmt.Sprint(v))
	}
	return render(r)
}

func TestDumpRestoreStreamsWithRedis(t *testing.T) {
	// RESP2: XINFO's replies are flat arrays, rendered alike.
	red := redis.NewClient(&redis.Options{Addr: startRedis(t), MaxRetries: -1, DisableIdentity: true, Protocol: 2})
	defer red.Close()
	per := redis.NewClient(&redis.Options{Addr: startServer(t, t.TempDir()).Addr, MaxRetries: -1, DisableIdentity: true, Protocol: 2})
	defer per.Close()
	buildStreams(t, red)
	buildStreams(t, per)
	identical := 0
	for key := range streamFixtures() {
		// Built the same way, the streams agree but for the times (the
		// node layout included: radix-tree-keys and -nodes).
		want := xinfoFull(t, red, key, false)
		if r, p := xinfoFull(t, red, key, true), xinfoFull(t, per, key, true); r != p {
			t.Fatalf("%s: the streams differ before any DUMP:\nredis     %s\npersimmon %s", key, r, p)
		}
		rp, err := red.Dump(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		pp, err := per.Dump(ctx, key).Result()
		if err != nil {
			t.Fatalf("%s: Persimmon DUMP: %v", key, err)
		}
		if pp[0] != 19 {
			t.Errorf("%s: Persimmon dumps type %d, want 19", key, pp[0])
		}
		if rp == pp {
			identical++
		}
		// redis-server → Persimmon: the copy is redis's stream, times too.
		if err := per.Restore(ctx, "from-redis:"+key, 0, rp).Err(); err != nil {
			t.Fatalf("%s: Persimmon RESTORE of redis's payload: %v", key, err)
		}
		if got := xinfoFull(t, per, "from-redis:"+key, false); got != want {
			t.Fatalf("%s: restored in Persimmon from redis's payload:\n got %s\nwant %s", key, got, want)
		}
		// Persimmon → redis-server.
		pwant := xinfoFull(t, per, key, false)
		if err := red.Restore(ctx, "from-persimmon:"+key, 0, pp).Err(); err != nil {
			t.Fatalf("%s: redis-server RESTORE of Persimmon's payload: %v", key, err)
		}
		if got := xinfoFull(t, red, "from-persimmon:"+key, false); got != pwant {
			t.Fatalf("%s: restored in redis-server from Persimmon's payload:\n got %s\nwant %s", key, got, pwant)
		}
		// Persimmon → Persimmon, and on from the copy the next XADD
		// lands where it lands on the original.
		if err := per.Restore(ctx, "copy:"+key, 0, pp).Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{key, "copy:" + key} {
			if err := per.XAdd(ctx, &redis.XAddArgs{Stream: k, ID: "18446744073709551615-1", Values: []any{"f", "last"}}).Err(); err != nil && !strings.Contains(err.Error(), "equal or smaller") {
				t.Fatal(err)
			}
		}
		if a, b := xinfoFull(t, per, key, false), xinfoFull(t, per, "copy:"+key, false); a != b {
			t.Fatalf("%s: Persimmon's copy differs after an XADD:\n got %s\nwant %s", key, b, a)
		}
	}
	t.Logf("%d of %d stream payloads byte-identical to redis-server's", identical, len(streamFixtures()))
}

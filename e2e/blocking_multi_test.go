package e2e

import (
	"slices"
	"strings"
	"testing"
)

// TestDiffBlockedThroughMulti: a MULTI/EXEC that pushes to a key a client
// is blocked on and then leaves another type there wakes nobody in Redis
// 7.0 (the ready key no longer holds what the client waits for), so the
// client stays blocked (issue 16). Each scenario then makes the key serve
// for real: the reply shows the client was still blocked, where a wrong
// wake-up would have answered WRONGTYPE first.
func TestDiffBlockedThroughMulti(t *testing.T) {
	redisAddr := startRedis(t)
	// Both ways of serving a woken client: re-run on the event loop
	// (pmem's default) and in the connection's goroutine.
	servers := map[string]string{
		"loop":      startServer(t, t.TempDir(), "--io", "loop").Addr,
		"goroutine": startServer(t, t.TempDir(), "--io", "goroutine").Addr,
	}

	multi := func(conn int, cmds ...[]string) []blockStep {
		steps := []blockStep{do(conn, "MULTI")}
		for _, c := range cmds {
			steps = append(steps, do(conn, c...))
		}
		return append(steps, do(conn, "EXEC"))
	}
	cat := func(parts ...[]blockStep) []blockStep { return slices.Concat(parts...) }
	scenarios := []struct {
		name  string
		steps []blockStep
	}{
		{"BLPOP: list pushed, deleted, set as a string", cat(
			[]blockStep{send(1, "BLPOP", "k", "5"), blocked(1)},
			multi(2, []string{"LPUSH", "k", "x"}, []string{"DEL", "k"}, []string{"SET", "k", "foo"}),
			[]blockStep{do(2, "GET", "k"), do(2, "DEL", "k"), do(2, "RPUSH", "k", "y"), recv(1), do(2, "EXISTS", "k")},
		)},
		{"BRPOP on two keys: the string key is skipped, the other serves", cat(
			[]blockStep{send(1, "BRPOP", "k1", "k2", "5"), blocked(1)},
			multi(2, []string{"RPUSH", "k1", "x"}, []string{"DEL", "k1"}, []string{"SET", "k1", "s"}),
			[]blockStep{do(2, "RPUSH", "k2", "y"), recv(1), do(2, "GET", "k1")},
		)},
		{"BLMPOP: list becomes a hash", cat(
			[]blockStep{send(1, "BLMPOP", "5", "1", "k", "LEFT", "COUNT", "2"), blocked(1)},
			multi(2, []string{"RPUSH", "k", "a", "b"}, []string{"DEL", "k"}, []string{"HSET", "k", "f", "v"}),
			[]blockStep{do(2, "TYPE", "k"), do(2, "DEL", "k"), do(2, "RPUSH", "k", "c"), recv(1)},
		)},
		{"BLMOVE: the source becomes a set", cat(
			[]blockStep{send(1, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "5"), blocked(1)},
			multi(2, []string{"RPUSH", "src", "a"}, []string{"DEL", "src"}, []string{"SADD", "src", "m"}),
			[]blockStep{do(2, "DEL", "src"), do(2, "RPUSH", "src", "b"), recv(1), do(2, "LRANGE", "dst", "0", "-1")},
		)},
		{"BRPOPLPUSH: the source becomes a string", cat(
			[]blockStep{send(1, "BRPOPLPUSH", "src", "dst", "5"), blocked(1)},
			multi(2, []string{"RPUSH", "src", "a"}, []string{"DEL", "src"}, []string{"SET", "src", "s"}),
			[]blockStep{do(2, "DEL", "src"), do(2, "RPUSH", "src", "b"), recv(1)},
		)},
		{"BZPOPMIN: sorted set becomes a list", cat(
			[]blockStep{send(1, "BZPOPMIN", "z", "5"), blocked(1)},
			multi(2, []string{"ZADD", "z", "1", "a"}, []string{"DEL", "z"}, []string{"RPUSH", "z", "x"}),
			[]blockStep{do(2, "TYPE", "z"), do(2, "DEL", "z"), do(2, "ZADD", "z", "2", "b"), recv(1)},
		)},
		{"BZMPOP: sorted set becomes a string", cat(
			[]blockStep{send(1, "BZMPOP", "5", "2", "z1", "z2", "MAX"), blocked(1)},
			multi(2, []string{"ZADD", "z1", "1", "a"}, []string{"DEL", "z1"}, []string{"SET", "z1", "s"}),
			[]blockStep{do(2, "ZADD", "z2", "3", "c"), recv(1), do(2, "GET", "z1")},
		)},
		{"the key is left a list: served after EXEC", cat(
			[]blockStep{send(1, "BLPOP", "k", "5"), blocked(1)},
			multi(2, []string{"SET", "k", "s"}, []string{"DEL", "k"}, []string{"RPUSH", "k", "x"}),
			[]blockStep{recv(1), do(2, "EXISTS", "k")},
		)},
		{"two waiters stay in arrival order after a wrong-type wake-up", cat(
			[]blockStep{send(1, "BLPOP", "k", "5"), blocked(1), send(2, "BLPOP", "k", "5"), blocked(2)},
			multi(3, []string{"LPUSH", "k", "x"}, []string{"DEL", "k"}, []string{"SET", "k", "foo"}),
			[]blockStep{do(3, "DEL", "k"), do(3, "RPUSH", "k", "a", "b"), recv(1), recv(2)},
		)},
	}
	for _, sc := range scenarios {
		for _, io := range []string{"loop", "goroutine"} {
			t.Run(io+"/"+sc.name, func(t *testing.T) {
				testBlockScenario(t, redisAddr, servers[io], sc.steps)
			})
		}
	}
}

// testBlockScenario runs steps on redis-server and on persimmon-server
// (each after a FLUSHALL) and compares the transcripts.
func testBlockScenario(t *testing.T, redisAddr, addr string, steps []blockStep) {
	t.Helper()
	for _, a := range []string{redisAddr, addr} {
		c, err := dialRESP(a)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := c.do("FLUSHALL"); err != nil || r.String() != "+OK" {
			t.Fatalf("%s: FLUSHALL: %v %v", a, r, err)
		}
		c.close()
	}
	want := runBlockScenario(t, redisAddr, steps)
	got := runBlockScenario(t, addr, steps)
	if !slices.Equal(want, got) {
		t.Errorf("transcripts differ\nredis:\n\t%s\npersimmon:\n\t%s",
			strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
	}
}

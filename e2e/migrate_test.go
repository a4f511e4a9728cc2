package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MIGRATE against redis-server 7.0.15: the same MIGRATE commands run on
// a redis-server source and on a Persimmon source, each towards a target
// of its own (a redis-server with a password, and a Persimmon), and every
// reply, every source key afterwards and every moved value must agree.

func TestMigrateAsRedis(t *testing.T) {
	client := func(addr string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true, Protocol: 2})
		t.Cleanup(func() { c.Close() })
		return c
	}
	type side struct {
		name             string
		src, dst, dstPer *redis.Client
		dstAddr, perAddr string
	}
	mk := func(name, srcAddr string) side {
		dstAddr := startRedis(t)
		per := startServer(t, t.TempDir())
		s := side{name: name, src: client(srcAddr), dst: client(dstAddr), dstPer: client(per.Addr), dstAddr: dstAddr, perAddr: per.Addr}
		return s
	}
	sides := []side{mk("redis", startRedis(t)), mk("persimmon", startServer(t, t.TempDir()).Addr)}
	hostPort := func(addr string) (string, string) { h, p, _ := net.SplitHostPort(addr); return h, p }
	// A port nothing listens on.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := l.Addr().String()
	l.Close()

	fixtures := [][]any{
		{"SET", "s1", "hello"}, {"SET", "s2", "ttl", "PX", "100000"}, {"RPUSH", "l1", "a", "b", 3},
		{"HSET", "h1", "f", "v"}, {"SADD", "set1", 1, 2, 3}, {"ZADD", "z1", 1.5, "m"},
		{"XADD", "x1", "1-1", "f", "v"}, {"XGROUP", "CREATE", "x1", "g", "0"},
		{"SET", "k1", "1"}, {"SET", "k2", "2"}, {"SET", "k3", "3"}, {"SET", "c1", "copy me"},
	}
	for _, s := range sides {
		for _, f := range fixtures {
			if err := s.src.Do(ctx, f...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		s.dst.Do(ctx, "CONFIG", "SET", "requirepass", "secret")
	}
	render := func(v any, err error) string {
		if err != nil {
			return "ERR:" + err.Error()
		}
		return fmt.Sprint(v)
	}
	// Each step: the MIGRATE arguments after host and port ("$dst" the
	// redis target with its password, "$per" the Persimmon target,
	// "$dead" nothing listening).
	steps := []struct {
		target string
		args   []any
	}{
		{"$dst", []any{"s1", 0, 5000}}, // NOAUTH from the target
		{"$dst", []any{"s1", 0, 5000, "AUTH", "wrong"}},
		{"$dst", []any{"s1", 0, 5000, "AUTH", "secret"}},
		{"$dst", []any{"s2", 3, 5000, "AUTH2", "default", "secret"}},
		{"$dst", []any{"nosuch", 0, 5000, "AUTH", "secret"}},
		{"$dst", []any{"", 0, 5000, "AUTH", "secret", "KEYS", "nosuch1", "nosuch2"}},
		{"$dst", []any{"", 0, 5000, "AUTH", "secret", "KEYS", "k1", "nosuch", "k2"}},
		{"$dst", []any{"k3", 0, 5000, "AUTH", "secret", "KEYS", "k3"}},
		{"$dst", []any{"c1", 0, 5000, "COPY", "AUTH", "secret"}},
		{"$dst", []any{"c1", 0, 5000, "COPY", "AUTH", "secret"}}, // BUSYKEY
		{"$dst", []any{"c1", 0, 5000, "COPY", "REPLACE", "AUTH", "secret"}},
		{"$dst", []any{"c1", 0, 5000, "AUTH"}},
		{"$dst", []any{"c1", "x", 5000}},
		{"$dst", []any{"c1", 0, "y"}},
		{"$dst", []any{"c1", 0, 5000, "BOGUS"}},
		{"$per", []any{"l1", 0, 5000}},
		{"$per", []any{"", 0, 0, "KEYS", "h1", "set1", "z1", "x1"}},
		{"$per", []any{"k3", 0, 5000}},
		{"$dead", []any{"c1", 0, 500}},
	}
	replies := map[string][]string{}
	for _, s := range sides {
		for _, st := range steps {
			addr := map[string]string{"$dst": s.dstAddr, "$per": s.perAddr, "$dead": deadAddr}[st.target]
			h, p := hostPort(addr)
			r := render(s.src.Do(ctx, append([]any{"MIGRATE", h, p}, st.args...)...).Result())
			replies[s.name] = append(replies[s.name], fmt.Sprintf("MIGRATE %s %v: %s", st.target, st.args, r))
		}
		keys, _ := s.src.Keys(ctx, "*").Result()
		replies[s.name] = append(replies[s.name], fmt.Sprintf("source keys %d", len(keys)))
		for _, k := range []string{"s1", "s2", "k1", "k2", "k3", "c1", "l1", "h1", "x1"} {
			n, _ := s.src.Exists(ctx, k).Result()
			replies[s.name] = append(replies[s.name], fmt.Sprintf("source %s exists %d", k, n))
		}
		// What arrived: the redis target (database 0 and 3) and the
		// Persimmon target.
		s.dst.Do(ctx, "AUTH", "secret")
		for _, k := range []string{"s1", "k1", "k2", "k3", "c1"} {
			replies[s.name] = append(replies[s.name], "dst "+k+" "+render(s.dst.Get(ctx, k).Result()))
		}
		c := s.dst.Conn()
		c.Select(ctx, 3)
		ttl, _ := c.PTTL(ctx, "s2").Result()
		replies[s.name] = append(replies[s.name], fmt.Sprintf("dst db3 s2 %s ttl>50s %v", render(c.Get(ctx, "s2").Result()), ttl > 50*time.Second))
		c.Close()
		for _, k := range []string{"l1", "h1", "set1", "z1"} {
			replies[s.name] = append(replies[s.name], "per "+k+" "+render(s.dstPer.Dump(ctx, k).Result()))
		}
		replies[s.name] = append(replies[s.name], "per x1 "+render(s.dstPer.Do(ctx, "XINFO", "STREAM", "x1", "FULL").Result()))
		info, _ := s.src.Info(ctx, "stats").Result()
		for _, line := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(line, "migrate_cached_sockets:") {
				replies[s.name] = append(replies[s.name], line)
			}
		}
	}
	want, got := replies["redis"], replies["persimmon"]
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("step %d:\n redis:     %.300s\n persimmon: %.300s", i, w, g)
		}
	}
}

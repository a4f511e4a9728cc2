package server

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// infoField is field's value in INFO section of c ("" when absent).
func infoField(c *redis.Client, section, field string) string {
	s, _ := c.Info(context.Background(), section).Result()
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// replicaPair is a master and its replica, whatever their servers.
type replicaPair struct {
	name      string
	m, r      *redis.Client
	setActive func(on bool) // DEBUG SET-ACTIVE-EXPIRE on the master
}

// caughtUp waits until the replica's link is up and it has applied all
// the master has sent.
func (p replicaPair) caughtUp(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mo := infoField(p.m, "replication", "master_repl_offset")
		if infoField(p.r, "replication", "master_link_status") == "up" && infoField(p.r, "replication", "slave_repl_offset") == mo {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out waiting for the replica (master at %s, replica at %s)", p.name, mo, infoField(p.r, "replication", "slave_repl_offset"))
		}
		time.Sleep(5 * time.Millisecond) // polling INFO
	}
}

// timeMs is the server's TIME in Unix ms.
func timeMs(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	tm, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMilli()
}

// replicaExpiryScenario runs, on a pair whose master's active expiry is
// off, keys expiring while the replica serves reads, writes of its own
// clients (replica-read-only no) and the master's DELs, and returns what
// the replica answered at each step.
func replicaExpiryScenario(t *testing.T, p replicaPair) []string {
	ctx := context.Background()
	var out []string
	say := func(what string, v any) { out = append(out, fmt.Sprintf("%s: %v", what, v)) }
	do := func(c *redis.Client, args ...any) string {
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			return "err " + err.Error()
		}
		return fmt.Sprint(v)
	}
	sorted := func(ks []string) []string { slices.Sort(ks); return ks }
	m, r := p.m, p.r
	p.setActive(false)
	at := timeMs(t, m) + 200
	for _, c := range [][]any{
		{"SET", "plain", "v"},
		{"SET", "s", "5", "PXAT", at},
		{"RPUSH", "l", "a", "b"}, {"PEXPIREAT", "l", at},
		{"HSET", "h", "f", "v"}, {"PEXPIREAT", "h", at},
	} {
		if err := m.Do(ctx, c...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	p.caughtUp(t)
	say("before: EXISTS s l h", do(r, "EXISTS", "s", "l", "h"))
	for timeMs(t, r) <= at || timeMs(t, m) <= at {
		time.Sleep(10 * time.Millisecond) // the keys' time passing
	}
	say("DBSIZE", do(r, "DBSIZE"))
	say("EXISTS s l h plain", do(r, "EXISTS", "s", "l", "h", "plain"))
	say("PTTL s", do(r, "PTTL", "s"))
	say("TTL h", do(r, "TTL", "h"))
	say("GET s", do(r, "GET", "s"))
	say("TYPE l", do(r, "TYPE", "l"))
	say("LLEN l", do(r, "LLEN", "l"))
	say("HGET h f", do(r, "HGET", "h", "f"))
	keys, _ := r.Keys(ctx, "*").Result()
	say("KEYS", sorted(keys))
	scanned, _, _ := r.Scan(ctx, 0, "*", 100).Result()
	say("SCAN", sorted(scanned))
	ks := infoField(r, "keyspace", "db0")
	say("INFO keyspace", ks[:strings.LastIndex(ks, ",")]) // without avg_ttl
	say("expired_keys", infoField(r, "stats", "expired_keys"))
	rk := map[string]bool{}
	for range 20 {
		rk[do(r, "RANDOMKEY")] = true
	}
	say("RANDOMKEY", rk)
	// Every key has an expiry, all past: RANDOMKEY still answers one.
	m.Del(ctx, "plain")
	p.caughtUp(t)
	k := do(r, "RANDOMKEY")
	say("RANDOMKEY, all expired: one of them", k == "s" || k == "l" || k == "h")
	say("DBSIZE", do(r, "DBSIZE"))

	// A writable replica: its own expiry is its own to expire; a
	// client's write to an expired key starts a new one.
	say("CONFIG SET replica-read-only no", do(r, "CONFIG", "SET", "replica-read-only", "no"))
	say("slave_read_only", infoField(r, "replication", "slave_read_only"))
	say("SET w v PX 300", do(r, "SET", "w", "v", "PX", "300"))
	say("SET w2 v; PEXPIRE w2 100000", do(r, "SET", "w2", "v")+" "+do(r, "PEXPIRE", "w2", "100000"))
	say("tracked", infoField(r, "stats", "slave_expires_tracked_keys"))
	// Times already past: a replica keeps the key with its expiry
	// (Redis's checkAlreadyExpired), for its cycle to expire.
	say("SET pa v PXAT 1", do(r, "SET", "pa", "v", "PXAT", "1"))
	say("SET pb v; EXPIRE pb -1", do(r, "SET", "pb", "v")+" "+do(r, "EXPIRE", "pb", "-1"))
	say("SET pc v; GETEX pc PXAT 1", do(r, "SET", "pc", "v")+" "+do(r, "GETEX", "pc", "PXAT", "1"))
	say("EXISTS pa pb pc", do(r, "EXISTS", "pa", "pb", "pc"))
	deadline := time.Now().Add(10 * time.Second)
	for do(r, "DBSIZE") != "4" { // the replica's own cycle expires w, pa, pb, pc (and nothing else)
		if time.Now().After(deadline) {
			t.Fatalf("%s: the writable replica's w did not expire: DBSIZE %s", p.name, do(r, "DBSIZE"))
		}
		time.Sleep(5 * time.Millisecond) // polling DBSIZE
	}
	say("after the replica's cycle: tracked", infoField(r, "stats", "slave_expires_tracked_keys"))
	say("after the replica's cycle: expired_keys", infoField(r, "stats", "expired_keys"))
	say("RPUSH l x", do(r, "RPUSH", "l", "x"))
	say("LRANGE l", do(r, "LRANGE", "l", "0", "-1"))
	say("INCR s", do(r, "INCR", "s"))
	say("PTTL s", do(r, "PTTL", "s"))
	say("expired_keys", infoField(r, "stats", "expired_keys"))
	say("DEL w2", do(r, "DEL", "w2"))
	say("CONFIG SET replica-read-only yes", do(r, "CONFIG", "SET", "replica-read-only", "yes"))
	say("SET x y", do(r, "SET", "x", "y"))
	say("EVAL redis.call SET", do(r, "EVAL", "return redis.call('set','x','y')", "0"))
	say("EVAL redis.pcall SET", do(r, "EVAL", "return redis.pcall('set','x','y')", "0"))

	// The master expires s lazily: its DEL removes the replica's s.
	say("master EXISTS s", do(m, "EXISTS", "s"))
	p.caughtUp(t)
	say("after the master's DEL: DBSIZE", do(r, "DBSIZE"))
	say("after the master's DEL: EXISTS s", do(r, "EXISTS", "s"))
	// The master's cycle expires the rest.
	p.setActive(true)
	deadline = time.Now().Add(10 * time.Second)
	for do(m, "DBSIZE") != "0" {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the master did not expire its keys: DBSIZE %s", p.name, do(m, "DBSIZE"))
		}
		time.Sleep(5 * time.Millisecond) // polling DBSIZE
	}
	p.caughtUp(t)
	say("after the master's cycle: DBSIZE", do(r, "DBSIZE"))
	say("expired_keys", infoField(r, "stats", "expired_keys"))
	return out
}

// TestReplicaExpiry: a Persimmon replica of a Persimmon master answers
// what a redis-server 7.0 replica of a redis-server master answers while
// keys expire (the masters' active expiry off, so the keys outlive their
// time there too): the expired keys read as missing (EXISTS, TTL, GET,
// TYPE, KEYS, SCAN, RANDOMKEY) but are kept (DBSIZE, INFO keyspace) until
// the master's DEL, with no expiry of the replica's own counted; RANDOMKEY
// names one when all have expired. A writable replica (replica-read-only
// no) tracks the expiries its clients set (slave_expires_tracked_keys) and
// expires those in its own cycle, and a client's write to an expired key
// replaces it; read-only again, it refuses writes, a script's too.
// Before, a Persimmon replica expired the keys itself (DBSIZE 1 at once),
// refused every write whatever replica-read-only said but took a script's,
// and died at the master's FLUSHALL.
func TestReplicaExpiry(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	rm, rmPort := startRedisMaster(t, "--enable-debug-command", "yes")
	rr := startRedisReplica(t, fmt.Sprintf("127.0.0.1:%d", rmPort))
	defer rr.Close()
	ref := replicaPair{name: "redis-server", m: rm, r: rr, setActive: func(on bool) {
		if err := rm.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", map[bool]int{false: 0, true: 1}[on]).Err(); err != nil {
			t.Fatal(err)
		}
	}}
	ms, mAddr := startReplServer(t, IOLoop)
	_, rAddr := startReplServer(t, IOGoroutine)
	pm := redis.NewClient(&redis.Options{Addr: mAddr, MaxRetries: -1})
	pr := redis.NewClient(&redis.Options{Addr: rAddr, MaxRetries: -1})
	defer pm.Close()
	defer pr.Close()
	_, mPort, _ := net.SplitHostPort(mAddr)
	if err := pr.Do(ctx, "REPLICAOF", "127.0.0.1", mPort).Err(); err != nil {
		t.Fatal(err)
	}
	ours := replicaPair{name: "persimmon", m: pm, r: pr, setActive: func(on bool) {
		ms.env.lock()
		ms.ks.SetActiveExpire(on)
		ms.env.unlock()
	}}
	// The master's FLUSHALL streamed first: a Persimmon replica died of it.
	for _, p := range []replicaPair{ref, ours} {
		p.caughtUp(t)
		if err := p.m.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		p.caughtUp(t)
	}
	want := replicaExpiryScenario(t, ref)
	got := replicaExpiryScenario(t, ours)
	if !slices.Equal(got, want) {
		for i := range max(len(got), len(want)) {
			g, w := "", ""
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			mark := "  "
			if g != w {
				mark = "!="
			}
			t.Logf("%s persimmon %-60s redis %s", mark, g, w)
		}
		t.Fatal("the Persimmon replica's answers differ from redis-server's")
	}
	for _, line := range want {
		t.Log(line)
	}
}

// TestReplicaFullSyncKeepsExpired: a full resync from a master that still
// holds a key whose time has passed (its active expiry off) loads that key
// on a Persimmon replica as on a redis-server one (DBSIZE counts it, reads
// hide it), and the master's DEL removes it from both. Before, the
// Persimmon replica's RESTORE dropped it: DBSIZE 1 where Redis's said 2.
func TestReplicaFullSyncKeepsExpired(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	m, port := startRedisMaster(t, "--enable-debug-command", "yes")
	if err := m.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0").Err(); err != nil {
		t.Fatal(err)
	}
	at := timeMs(t, m) + 50
	m.Set(ctx, "plain", "v", 0)
	m.Do(ctx, "SET", "s", "v", "PXAT", at)
	m.RPush(ctx, "l", "a", "b")
	m.Do(ctx, "PEXPIREAT", "l", at)
	for timeMs(t, m) <= at {
		time.Sleep(10 * time.Millisecond) // the keys' time passing
	}
	rr := startRedisReplica(t, fmt.Sprintf("127.0.0.1:%d", port))
	defer rr.Close()
	_, pAddr := startReplServer(t, IOLoop)
	pr := redis.NewClient(&redis.Options{Addr: pAddr, MaxRetries: -1})
	defer pr.Close()
	if err := pr.Do(ctx, "REPLICAOF", "127.0.0.1", port).Err(); err != nil {
		t.Fatal(err)
	}
	noop := func(bool) {}
	pairs := []replicaPair{{name: "redis-server", m: m, r: rr, setActive: noop}, {name: "persimmon", m: m, r: pr, setActive: noop}}
	look := func(p replicaPair) string {
		p.caughtUp(t)
		n, _ := p.r.DBSize(ctx).Result()
		e, _ := p.r.Exists(ctx, "s", "l", "plain").Result()
		ttl, _ := p.r.Do(ctx, "PTTL", "l").Int64()
		return fmt.Sprintf("DBSIZE %d, EXISTS s l plain %d, PTTL l %d", n, e, ttl)
	}
	for _, step := range []string{"after the full resync", "after the master's DELs"} {
		if step == "after the master's DELs" {
			m.Exists(ctx, "s", "l") // expired there now, lazily: DEL s, DEL l
		}
		want, got := look(pairs[0]), look(pairs[1])
		if got != want {
			t.Fatalf("%s: persimmon replica %s, redis-server replica %s", step, got, want)
		}
		t.Logf("%s: %s", step, got)
	}
}

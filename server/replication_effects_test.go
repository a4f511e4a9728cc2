package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// effectsLib is a function library whose function makes random choices
// (SPOP) and float arithmetic: FCALL must reach a replica as its effects.
const effectsLib = "#!lua name=effects\n" +
	"redis.register_function('popinc', function(keys, args)\n" +
	"  local m = redis.call('SPOP', keys[1])\n" +
	"  redis.call('INCRBYFLOAT', keys[2], args[1])\n" +
	"  redis.call('SET', keys[3], 'f', 'EX', 300)\n" +
	"  return m\n" +
	"end)"

// randomWrite is one write of the effects property test, chosen by rng
// among commands whose result a replica would otherwise decide again:
// random picks (SPOP, in scripts and functions too), float arithmetic,
// relative expiries (some short enough to expire during the run, lazily
// or in the background), RESTORE with a TTL, blocking pops, XADD *; and
// a quarter stream writes: approximate trims (XADD and XTRIM with ~),
// XREADGROUP (with NOACK too), XCLAIM (IDLE, TIME) and XAUTOCLAIM.
func randomWrite(rng *rand.Rand, dump string) []any {
	k := func(prefix string, n int) string { return prefix + strconv.Itoa(rng.IntN(n)) }
	members := func() []any {
		out := []any{}
		for range 3 + rng.IntN(10) {
			out = append(out, "m"+strconv.Itoa(rng.IntN(30)))
		}
		return out
	}
	ttl := func() string { return strconv.Itoa(100 + rng.IntN(1000)) }
	if rng.IntN(4) == 0 { // streams: approximate trims, consumer groups
		consumer := "c" + strconv.Itoa(rng.IntN(3))
		switch rng.IntN(9) {
		case 0, 1:
			return []any{"XADD", k("x", 2), "MAXLEN", "~", 3 + rng.IntN(6), "*", "f", strconv.Itoa(rng.IntN(100))}
		case 2:
			return []any{"XTRIM", k("x", 2), "MAXLEN", "~", rng.IntN(6)}
		case 3:
			return []any{"XADD", "xg", "MINID", "~", "0", "*", "f", strconv.Itoa(rng.IntN(100))}
		case 4:
			return []any{"XREADGROUP", "GROUP", "g", consumer, "COUNT", 1 + rng.IntN(3), "STREAMS", "xg", ">"}
		case 5:
			return []any{"XREADGROUP", "GROUP", "g", consumer, "COUNT", 2, "NOACK", "STREAMS", "xg", ">"}
		case 6:
			return []any{"XAUTOCLAIM", "xg", "g", consumer, 0, "0-0", "COUNT", 1 + rng.IntN(3), []string{"JUSTID", "COUNT"}[rng.IntN(2)], 2}
		case 7:
			return []any{"XCLAIM?", consumer, []string{"IDLE", "TIME"}[rng.IntN(2)]} // the IDs pending now (testEffectsProperty)
		default:
			return []any{"XADD", "xg", "*", "f", strconv.Itoa(rng.IntN(100))}
		}
	}
	switch rng.IntN(24) {
	case 0:
		return append([]any{"SADD", k("set", 3)}, members()...)
	case 1:
		return []any{"SPOP", k("set", 3)}
	case 2:
		return []any{"SPOP", k("set", 3), 1 + rng.IntN(2)}
	case 3:
		return []any{"INCRBYFLOAT", k("f", 3), fmt.Sprintf("%.3f", rng.Float64()*10-3)}
	case 4:
		return []any{"HINCRBYFLOAT", k("h", 2), k("fld", 3), fmt.Sprintf("%.2f", rng.Float64()*5)}
	case 5:
		return []any{"SET", k("s", 6), "v" + strconv.Itoa(rng.IntN(100)), "EX", ttl()}
	case 6:
		opts := [][]any{{"PX", ttl() + "000"}, {"NX", "EX", ttl()}, {"XX", "PX", ttl() + "00"}, {"GET", "EX", ttl()}, {"NX", "GET", "PX", ttl()}}
		return append([]any{"SET", k("s", 6), "w" + strconv.Itoa(rng.IntN(100))}, opts[rng.IntN(len(opts))]...)
	case 7:
		return []any{"SETEX", k("s", 6), ttl(), "x"}
	case 8:
		return []any{"PSETEX", k("s", 6), ttl() + "000", "y"}
	case 9:
		return []any{"EXPIRE", k("s", 6), ttl()}
	case 10:
		return []any{"PEXPIRE", k("l", 3), ttl() + "000"}
	case 11:
		return []any{"GETEX", k("s", 6), []string{"EX", "PX", "EXAT"}[rng.IntN(2)], ttl()}
	case 12:
		// Short-lived: expires during the run (lazily on a read, or in
		// the background cycle), which must reach the replica as a DEL.
		return []any{"SET", k("e", 8), "short", "PX", strconv.Itoa(1 + rng.IntN(300))}
	case 13:
		return []any{"GET", k("e", 8)} // a read that may expire the key
	case 14:
		return append([]any{"RPUSH", k("l", 3)}, members()...)
	case 15:
		return []any{"BLPOP", k("l", 3), k("l", 3), "0.01"}
	case 16:
		return []any{"ZADD", k("z", 2), rng.IntN(50), "m" + strconv.Itoa(rng.IntN(20))}
	case 17:
		return []any{"BZPOPMIN", k("z", 2), "0.01"}
	case 18:
		if dump == "" {
			return []any{"SADD", "set0", "m0"}
		}
		return []any{"RESTORE", k("r", 3), ttl() + "000", dump, "REPLACE"}
	case 19:
		return []any{"EVAL", "redis.call('SPOP', KEYS[1]); redis.call('INCRBYFLOAT', KEYS[2], ARGV[1]); redis.call('EXPIRE', KEYS[3], 200)",
			3, k("set", 3), k("f", 3), k("s", 6), fmt.Sprintf("%.4f", rng.Float64())}
	case 20:
		return []any{"FCALL", "popinc", 3, k("set", 3), k("f", 3), k("fs", 2), "0.125"}
	case 21:
		return []any{"XADD", k("x", 2), "MAXLEN", "8", "*", "f", strconv.Itoa(rng.IntN(100))}
	case 22:
		return []any{"DEL", k("s", 6)}
	default:
		return []any{"HSET", k("h", 2), k("fld", 3), "plain"}
	}
}

// renderKey is a key's type, value and absolute expiry (PEXPIRETIME), set
// and hash members sorted, for comparing a master's key with a replica's.
func renderKey(ctx context.Context, c *redis.Client, k string) string {
	typ, _ := c.Type(ctx, k).Result()
	var v any
	switch typ {
	case "string":
		v, _ = c.Get(ctx, k).Result()
	case "list":
		v, _ = c.LRange(ctx, k, 0, -1).Result()
	case "set":
		m, _ := c.SMembers(ctx, k).Result()
		slices.Sort(m)
		v = m
	case "hash":
		v, _ = c.HGetAll(ctx, k).Result()
	case "zset":
		v, _ = c.ZRangeWithScores(ctx, k, 0, -1).Result()
	case "stream":
		entries, _ := c.XRange(ctx, k, "-", "+").Result()
		// The groups: last ID, PEL (owner, delivery time and count), the
		// consumers' PEL counts. Not entries-read: a Redis replica's
		// XCLAIM ... LASTID sets the last ID alone, from a Redis master too.
		var groups []string
		if full, err := c.XInfoStreamFull(ctx, k, 0).Result(); err == nil {
			for _, g := range full.Groups {
				var pel, cons []string
				for _, p := range g.Pending {
					pel = append(pel, fmt.Sprintf("%s/%s/%d/%d", p.ID, p.Consumer, p.DeliveryTime.UnixMilli(), p.DeliveryCount))
				}
				for _, cn := range g.Consumers {
					cons = append(cons, fmt.Sprintf("%s:%d", cn.Name, cn.PelCount))
				}
				groups = append(groups, fmt.Sprintf("group %s last %s pel %v consumers %v", g.Name, g.LastDeliveredID, pel, cons))
			}
		}
		v = fmt.Sprintf("%v %v", entries, groups)
	}
	at, _ := c.Do(ctx, "PEXPIRETIME", k).Int64()
	return fmt.Sprintf("%s %v expires %d", typ, v, at)
}

// TestReplicationEffectsProperty: random writes whose outcome a replica
// could not decide by itself (SPOP alone, in MULTI, in a script and in a
// function; INCRBYFLOAT, HINCRBYFLOAT; relative expiries and keys that
// expire during the run; RESTORE with a TTL; blocking pops; XADD *;
// approximate stream trims, with smaller stream nodes on the master than
// on the replica; XREADGROUP, XCLAIM and XAUTOCLAIM, whose delivery times
// and counts a replica must not set by its clock) run
// against a Persimmon master with an unmodified redis-server replica;
// once the replica has the master's offset and the master has expired
// what it will, every key (type, value, PEXPIRETIME) and DBSIZE are equal
// on both. Seed: PERSIMMON_SEED; writes: PERSIMMON_EFFECTS_N.
func TestReplicationEffectsProperty(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("PERSIMMON_SEED"), 10, 64); err == nil {
		seed = v
	}
	n := 600
	if v, err := strconv.Atoi(os.Getenv("PERSIMMON_EFFECTS_N")); err == nil {
		n = v
	}
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) {
			t.Logf("seed %d, %d writes", seed, n)
			testEffectsProperty(t, io, rand.New(rand.NewPCG(seed, 14)), n)
		})
	}
}

func testEffectsProperty(t *testing.T, io string, rng *rand.Rand, n int) {
	ctx := context.Background()
	s, addr := startReplServer(t, io)
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: -1, PoolSize: 1})
	defer p.Close()
	p.Set(ctx, "seed", "x", 0)
	r := startRedisReplica(t, addr)
	caughtUp := func() bool {
		return replInfo(r, "master_link_status") == "up" && replInfo(r, "master_repl_offset") == strconv.FormatInt(s.master.Offset(), 10)
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: replica at %s, master at %d", what, replInfo(r, "master_repl_offset"), s.master.Offset())
			}
			time.Sleep(10 * time.Millisecond) // polling INFO
		}
	}
	poll("the full resync", caughtUp)

	if err := p.Do(ctx, "FUNCTION", "LOAD", effectsLib).Err(); err != nil {
		t.Fatal(err)
	}
	p.RPush(ctx, "dumpsrc", "a", "b", "c")
	// Small stream nodes on the master (the replica keeps Redis's 100), so
	// an approximate trim sent as is would trim differently there.
	if err := p.ConfigSet(ctx, "stream-node-max-entries", "4").Err(); err != nil {
		t.Fatal(err)
	}
	p.XGroupCreateMkStream(ctx, "xg", "g", "0")
	xclaim := func(c []any) []any {
		// XCLAIM xg g consumer 0 <up to 3 pending IDs> IDLE|TIME ...
		pend, _ := p.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "xg", Group: "g", Start: "-", End: "+", Count: int64(1 + rng.IntN(3))}).Result()
		out := []any{"XCLAIM", "xg", "g", c[1], 0}
		for _, e := range pend {
			out = append(out, e.ID)
		}
		if len(pend) == 0 {
			out = append(out, "0-1")
		}
		if c[2] == "IDLE" {
			return append(out, "IDLE", 1000+rng.IntN(5000))
		}
		return append(out, "TIME", time.Now().UnixMilli()-int64(rng.IntN(5000)), "RETRYCOUNT", rng.IntN(5))
	}
	dump, _ := p.Dump(ctx, "dumpsrc").Result()
	var log []string
	for i := 0; i < n; i++ {
		if rng.IntN(20) == 0 { // a MULTI block of such writes
			cmds := [][]any{randomWrite(rng, dump), randomWrite(rng, dump), {"SPOP", "set0"}, {"INCRBYFLOAT", "f0", "0.1"}}
			for slices.ContainsFunc(cmds, func(c []any) bool { return c[0] == "BLPOP" || c[0] == "BZPOPMIN" }) {
				cmds[0], cmds[1] = randomWrite(rng, dump), randomWrite(rng, dump)
			}
			for j, c := range cmds {
				if c[0] == "XCLAIM?" {
					cmds[j] = xclaim(c)
				}
			}
			_, err := p.TxPipelined(ctx, func(pp redis.Pipeliner) error {
				for _, c := range cmds {
					pp.Do(ctx, c...)
				}
				return nil
			})
			log = append(log, fmt.Sprintf("MULTI %v: %v", cmds, err))
			continue
		}
		c := randomWrite(rng, dump)
		if c[0] == "XCLAIM?" {
			c = xclaim(c)
		}
		res, err := p.Do(ctx, c...).Result()
		log = append(log, fmt.Sprintf("%v -> %v %v", c, res, err))
	}
	defer func() {
		if t.Failed() {
			t.Logf("writes:\n%s", strings.Join(log, "\n"))
		}
	}()

	// The short-lived keys expire (the background cycle, every 100 ms),
	// each a DEL in the stream; then the replica catches up.
	poll("the master to expire its short-lived keys", func() bool {
		keys, _ := p.Keys(ctx, "e*").Result()
		return len(keys) == 0
	})
	p.Set(ctx, "last", "x", 0)
	poll("the replica to catch up", func() bool {
		pn, _ := p.DBSize(ctx).Result()
		rn, _ := r.DBSize(ctx).Result()
		return caughtUp() && pn == rn
	})
	masterAt, _ := p.Time(ctx).Result()
	keys, err := p.Keys(ctx, "*").Result()
	if err != nil || len(keys) < 10 {
		t.Fatalf("master keys: %v %v", keys, err)
	}
	slices.Sort(keys)
	rkeys, _ := r.Keys(ctx, "*").Result()
	replicaAt, _ := r.Time(ctx).Result()
	slices.Sort(rkeys)
	if !slices.Equal(keys, rkeys) {
		// A key on one side only: its expiry against the two clocks
		// (the master's before its KEYS, the replica's after its own)
		// says whether the two disagreed about a millisecond.
		for _, k := range rkeys {
			if !slices.Contains(keys, k) {
				at, _ := r.Do(ctx, "PEXPIRETIME", k).Int64()
				t.Logf("replica only: %s, PEXPIRETIME %d there; master TIME %d ms before KEYS, replica TIME %d ms after KEYS", k, at, masterAt.UnixMilli(), replicaAt.UnixMilli())
			}
		}
		t.Fatalf("keys differ:\nmaster  %v\nreplica %v", keys, rkeys)
	}
	for _, k := range keys {
		if pv, rv := renderKey(ctx, p, k), renderKey(ctx, r, k); pv != rv {
			t.Fatalf("key %q:\nmaster  %s\nreplica %s", k, pv, rv)
		}
	}
	t.Logf("%d keys equal after %d writes (offset %d)", len(keys), n, s.master.Offset())
}

package server

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/pmem"
)

// Key eviction over real TCP, on Persimmon in both I/O modes and on
// redis-server when installed: each scenario passes on both.

// evictTargets are trackingTargets for the eviction scenarios: on
// Persimmon the heap part of used memory is pinned at its reading when the
// server starts (the test process's heap is every test server's, so it
// moves with what other tests leave behind); redis-server's is its own.
func evictTargets(t *testing.T) map[string]func(t *testing.T) string {
	out := map[string]func(t *testing.T) string{}
	for _, io := range []string{IOGoroutine, IOLoop} {
		out["persimmon-"+io] = func(t *testing.T) string {
			t.Setenv("PERSIMMON_TEST_IO", io)
			return startPinnedServer(t, t.TempDir(), pmem.ModeNone).addr
		}
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		out["redis-server"] = func(t *testing.T) string {
			_, port := startRedisMaster(t)
			return fmt.Sprintf("127.0.0.1:%d", port)
		}
	}
	return out
}

// startPinnedServer is startKeyspaceServer with the heap reading pinned.
func startPinnedServer(t *testing.T, dir string, mode pmem.Mode) *ksServer {
	s := startKeyspaceServer(t, dir, mode)
	s.mem.pinned.Store(int64(s.mem.heapNow(true)))
	return s
}

// usedForEviction is INFO used_memory less mem_not_counted_for_evict, what
// maxmemory is compared with (one INFO memory).
func (w *wire) usedForEviction() int64 {
	w.t.Helper()
	info := w.do("INFO", "memory")
	field := func(name string) int64 {
		m := regexp.MustCompile(`\r\n` + name + `:(\d+)\r\n`).FindStringSubmatch(info)
		if m == nil {
			w.t.Fatalf("INFO memory has no %s: %q", name, info)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	return field("used_memory") - field("mem_not_counted_for_evict")
}

func (w *wire) infoInt(name string) int64 {
	w.t.Helper()
	n, err := strconv.ParseInt(w.infoField(name), 10, 64)
	if err != nil {
		w.t.Fatalf("INFO %s: %v", name, err)
	}
	return n
}

// evictSlack is how far above maxmemory the tests let used memory be
// found: redis-server's used memory moves with its buffers, and a
// Persimmon server's heap reading is pinned (evictTargets) but its
// collections' heap is credited by estimate, so the scenarios use values
// and margins larger than either. Over a limit, a tenth of it more
// (the heap's swing grows with the heap: under load, with 64 KB values in
// flight, it reached 50 MB).
const evictSlack = 3 << 20

func overSlack(limit int64) int64 { return limit + evictSlack + limit/10 }

// Redis's maxmemory.tcl scenarios, with 64 KB values: under every policy
// used memory stays near the limit while as many keys again are written;
// a volatile policy removes only keys with an expiry (and refuses writes
// once none is left); evicted_keys counts.
func TestEvictionPolicies(t *testing.T) {
	val := strings.Repeat("v", 64<<10)
	for name, target := range evictTargets(t) {
		t.Run(name, func(t *testing.T) {
			addr := target(t)
			w := dialAddr(t, addr)
			defer func() { w.do("CONFIG", "SET", "maxmemory", "0") }()
			for _, policy := range []string{"allkeys-random", "allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
				w = dialAddr(t, addr) // a connection's deadline is 20 s (wire_test.go): one per policy
				volatile := strings.HasPrefix(policy, "volatile")
				w.expect("+OK\r\n", "FLUSHALL")
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
				w.expect("+OK\r\n", "CONFIG", "RESETSTAT")
				limit := w.usedForEviction() + 16<<20
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", policy)
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
				// Half the keys volatile, until the limit is nearly reached.
				n := 0
				for ; w.usedForEviction()+evictSlack < limit; n++ {
					if n%2 == 1 {
						w.expect("+OK\r\n", "SETEX", fmt.Sprintf("key:%d", n), strconv.Itoa(10000+n), val)
					} else {
						w.expect("+OK\r\n", "SET", fmt.Sprintf("key:%d", n), val)
					}
					if n > 10000 {
						t.Fatalf("%s: used memory never neared the limit", policy)
					}
				}
				if n < 100 {
					t.Fatalf("%s: only %d keys fit", policy, n)
				}
				// As many volatile keys again, and more until one is evicted
				// (the heap's part of used memory moves with collections).
				for j := 0; j < n || w.infoInt("evicted_keys") == 0; j++ {
					if j > 4*n {
						t.Fatalf("%s: nothing evicted after %d keys past %d (used %d, limit %d)", policy, j, n, w.usedForEviction(), limit)
					}
					w.expect("+OK\r\n", "SETEX", fmt.Sprintf("foo:%d", j), strconv.Itoa(10000+j), val)
					if used := w.usedForEviction(); used > overSlack(limit) {
						t.Fatalf("%s: used memory %d after %d more keys, limit %d (heap %s, live %s, evicted %s, dbsize %s)", policy, used, j+1, limit,
							w.infoField("used_memory_heap"), w.infoField("live_bytes"), w.infoField("evicted_keys"), w.do("DBSIZE"))
					}
				}
				if volatile {
					for j := 0; j < n; j += 2 {
						w.expect(":1\r\n", "EXISTS", fmt.Sprintf("key:%d", j))
					}
				}
				// Keys without an expiry: allkeys-* evicts, volatile-* runs
				// out of keys it may evict and refuses writes.
				refused := 0
				for j := 0; j < 4*n && refused == 0; j++ {
					r := w.do("SET", fmt.Sprintf("bar:%d", j), val)
					switch {
					case r == "+OK\r\n":
					case strings.HasPrefix(r, "-OOM command not allowed when used memory > 'maxmemory'."):
						refused++
					default:
						t.Fatalf("%s: SET: %q", policy, r)
					}
				}
				if volatile != (refused > 0) {
					t.Fatalf("%s: %d of %d SETs refused", policy, refused, 4*n)
				}
				if used := w.usedForEviction(); !volatile && used > overSlack(limit) {
					t.Fatalf("%s: used memory %d, limit %d", policy, used, limit)
				}
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
			}
			w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "noeviction")
		})
	}
}

// LFU keeps the keys read often; volatile-ttl evicts the ones that expire
// soonest first.
func TestEvictionRanking(t *testing.T) {
	val := strings.Repeat("v", 64<<10)
	for name, target := range evictTargets(t) {
		t.Run(name, func(t *testing.T) {
			addr := target(t)
			w := dialAddr(t, addr)
			defer func() {
				w.do("CONFIG", "SET", "maxmemory", "0")
				w.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
			}()
			for _, policy := range []string{"allkeys-lfu", "volatile-ttl"} {
				w = dialAddr(t, addr) // a fresh 20 s deadline
				w.expect("+OK\r\n", "FLUSHALL")
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", policy)
				const n = 300
				for i := range n {
					// TTLs grow with i: the low ones expire soonest.
					w.expect("+OK\r\n", "SETEX", fmt.Sprintf("k:%d", i), strconv.Itoa(10000+100*i), val)
				}
				const hot = 30 // every tenth key, read often
				if policy == "allkeys-lfu" {
					for range 50 {
						for i := 0; i < n; i += n / hot {
							w.do("GET", fmt.Sprintf("k:%d", i))
						}
					}
				}
				limit := w.usedForEviction() - 6<<20
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
				w.expect("+PONG\r\n", "PING") // evicts about 100 keys
				gone, goneSum, keptSum, hotGone := 0, 0, 0, 0
				for i := range n {
					if w.do("EXISTS", fmt.Sprintf("k:%d", i)) == ":0\r\n" {
						gone++
						goneSum += i
						if i%(n/hot) == 0 {
							hotGone++
						}
					} else {
						keptSum += i
					}
				}
				if gone < 40 || gone == n {
					t.Fatalf("%s: %d of %d keys evicted", policy, gone, n)
				}
				switch policy {
				case "allkeys-lfu":
					if hotGone > hot/10 {
						t.Fatalf("allkeys-lfu: %d of the %d hot keys evicted (%d keys in all)", hotGone, hot, gone)
					}
				case "volatile-ttl":
					// The mean index of the evicted keys is well below that of the kept.
					if g, k := goneSum/gone, keptSum/(n-gone); g*3 > k*2 {
						t.Fatalf("volatile-ttl: evicted keys' mean index %d, kept keys' %d", g, k)
					}
				}
				w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
			}
		})
	}
}

// Redis 7.0's tracking.tcl "Tracking invalidation message of eviction keys
// should be before response": the key evicted to make room for a command
// is invalidated before that command's reply. And the eviction is
// published as the "evicted" keyspace event.
func TestEvictionInvalidatesBeforeReply(t *testing.T) {
	for name, target := range evictTargets(t) {
		t.Run(name, func(t *testing.T) {
			addr := target(t)
			w, sub := dialAddr(t, addr), dialAddr(t, addr)
			defer w.do("CONFIG", "SET", "maxmemory", "0")
			defer w.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
			defer w.do("CONFIG", "SET", "notify-keyspace-events", "")
			w.expect("+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "Ee")
			sub.expect("*3\r\n$9\r\nsubscribe\r\n$22\r\n__keyevent@0__:evicted\r\n:1\r\n", "SUBSCRIBE", "__keyevent@0__:evicted")
			w.send(multibulk("HELLO", "3"))
			w.reply()
			w.expect("+OK\r\n", "CLIENT", "TRACKING", "on")
			limit := w.usedForEviction() + evictSlack
			w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
			w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "volatile-random")
			w.expect("+OK\r\n", "SETEX", "volatile-key", "10000", "x")
			w.expect("$1\r\nx\r\n", "GET", "volatile-key")
			w.expect(":0\r\n", "SETBIT", "big-key", strconv.Itoa(8*2*evictSlack), "0") // 2 x the margin
			w.send(multibulk("GETBIT", "big-key", "0"))
			w.expectReply(inval("volatile-key"))
			w.expectReply(":0\r\n")
			sub.expectReply("*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n$12\r\nvolatile-key\r\n")
			w.expect(":0\r\n", "EXISTS", "volatile-key")
			// Nothing left to evict: a write is refused, a read is not.
			if r := w.do("SET", "x", "y"); !strings.HasPrefix(r, "-OOM ") {
				t.Fatalf("SET over maxmemory with nothing to evict: %q", r)
			}
			w.expect(":0\r\n", "GETBIT", "big-key", "0")
		})
	}
}

// pubsub.tcl's "Keyspace notifications: evicted events": CONFIG SET
// maxmemory below used memory evicts at once, with no command after it.
func TestEvictionOnConfigSet(t *testing.T) {
	for name, target := range evictTargets(t) {
		t.Run(name, func(t *testing.T) {
			addr := target(t)
			w, sub := dialAddr(t, addr), dialAddr(t, addr)
			defer func() {
				w.do("CONFIG", "SET", "maxmemory", "0")
				w.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
				w.do("CONFIG", "SET", "notify-keyspace-events", "")
			}()
			w.expect("+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "Ee")
			w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
			sub.expect("*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n", "PSUBSCRIBE", "*")
			w.expect("+OK\r\n", "SET", "foo", "bar")
			w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "1")
			sub.expectReply("*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$22\r\n__keyevent@0__:evicted\r\n$3\r\nfoo\r\n")
		})
	}
}

// An evicted key stays deleted after a restart: the eviction is logged.
func TestEvictionIsDurable(t *testing.T) {
	dir := t.TempDir()
	func() {
		s := startPinnedServer(t, dir, pmem.ModePmem)
		w := dialAddr(t, s.addr)
		val := strings.Repeat("v", 64<<10)
		for i := range 200 {
			w.expect("+OK\r\n", "SET", fmt.Sprintf("k:%d", i), val)
		}
		limit := w.usedForEviction() - 4<<20
		w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
		w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
		w.expect("+PONG\r\n", "PING")
		if n := w.infoInt("evicted_keys"); n < 20 {
			t.Fatalf("evicted_keys %d, want at least 20", n)
		}
		w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
		s.Close()
	}()
	s := startPinnedServer(t, dir, pmem.ModePmem)
	w := dialAddr(t, s.addr)
	kept := 0
	for i := range 200 {
		if w.do("EXISTS", fmt.Sprintf("k:%d", i)) == ":1\r\n" {
			kept++
		}
	}
	if r := w.do("DBSIZE"); r != ":"+strconv.Itoa(kept)+"\r\n" {
		t.Fatalf("DBSIZE %q, %d keys found", r, kept)
	}
	if kept > 180 || kept == 0 {
		t.Fatalf("%d of 200 keys after the restart", kept)
	}
}

// A master's evictions reach its replica (a redis-server replica of a
// Persimmon master): the replica holds exactly the master's keys after.
func TestEvictionReplicated(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	s, addr := startReplServer(t, IOLoop)
	s.mem.pinned.Store(int64(s.mem.heapNow(true))) // see evictTargets
	w := dialAddr(t, addr)
	val := strings.Repeat("v", 64<<10)
	for i := range 200 {
		w.expect("+OK\r\n", "SET", fmt.Sprintf("k:%d", i), val)
	}
	r := startRedisReplica(t, addr)
	waitReplicaCaughtUp(t, r, s)
	limit := w.usedForEviction() - 4<<20
	w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
	w.expect("+PONG\r\n", "PING")
	w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
	w.expect("+OK\r\n", "SET", "last", "x")
	waitReplicaCaughtUp(t, r, s)
	kept := 0
	for i := range 200 {
		k := fmt.Sprintf("k:%d", i)
		pm := w.do("EXISTS", k)
		rm, _ := r.Exists(ctx, k).Result()
		if pm != fmt.Sprintf(":%d\r\n", rm) {
			t.Fatalf("key %s: master EXISTS %q, replica %d", k, pm, rm)
		}
		if rm == 1 {
			kept++
		}
	}
	if kept == 200 || kept == 0 {
		t.Fatalf("%d of 200 keys kept", kept)
	}
}

// A replica evicts nothing while replica-ignore-maxmemory is yes (the
// default), and answers its master's stream and its reads normally; with
// no, it evicts like a master (Redis's isSafeToPerformEvictions).
func TestEvictionReplicaIgnoresMaxmemory(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	m, mport := startRedisMaster(t)
	for i := range 50 {
		m.Set(ctx, fmt.Sprintf("k:%d", i), strings.Repeat("v", 1024), 0)
	}
	s, addr := startReplServer(t, IOLoop)
	s.mem.pinned.Store(int64(s.mem.heapNow(true))) // see evictTargets
	w := dialAddr(t, addr)
	w.expect("+OK\r\n", "REPLICAOF", "127.0.0.1", strconv.Itoa(mport))
	deadline := time.Now().Add(20 * time.Second)
	for w.do("DBSIZE") != ":50\r\n" {
		if time.Now().After(deadline) {
			t.Fatalf("the replica never got the 50 keys: %s", w.do("DBSIZE"))
		}
		time.Sleep(10 * time.Millisecond) // polling the replica
	}
	w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "1")
	w.expect("$1024\r\n"+strings.Repeat("v", 1024)+"\r\n", "GET", "k:0")
	w.expect(":50\r\n", "DBSIZE")
	if n := w.infoInt("evicted_keys"); n != 0 {
		t.Fatalf("a replica ignoring maxmemory evicted %d keys", n)
	}
	w.expect("+OK\r\n", "CONFIG", "SET", "replica-ignore-maxmemory", "no")
	w.expect("+PONG\r\n", "PING")
	if r := w.do("DBSIZE"); r == ":50\r\n" {
		t.Fatalf("with replica-ignore-maxmemory no the replica kept every key: DBSIZE %q", r)
	}
	w.expect("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
}

package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestInfoKeyspaceMatchesRedis (issue 16): INFO keyspace's keys= and
// expires= count a write made just before, on both servers; avg_ttl is an
// estimate of the mean remaining TTL in milliseconds on both. Redis
// updates avg_ttl in its active-expire cycle (a running average), so its
// figure is polled until the cycle has run; Persimmon samples on each
// INFO, so its figure must be right at once.
func TestInfoKeyspaceMatchesRedis(t *testing.T) {
	redisAddr := startRedis(t)
	s := startServer(t, t.TempDir())
	for _, side := range []struct {
		name, addr string
		immediate  bool // avg_ttl must be right on the first INFO
	}{{"redis", redisAddr, false}, {"persimmon", s.Addr, true}} {
		t.Run(side.name, func(t *testing.T) {
			c, err := dialRESP(side.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			must := func(args ...any) {
				t.Helper()
				if r, err := c.do(args...); err != nil || r.kind == '-' {
					t.Fatalf("%v: %v %v", args, r, err)
				}
			}
			dbLine := func(db int) (keys, expires, avgTTL int64, ok bool) {
				t.Helper()
				r, err := c.do("INFO", "keyspace")
				if err != nil {
					t.Fatal(err)
				}
				m := regexp.MustCompile(fmt.Sprintf(`(?m)^db%d:keys=(\d+),expires=(\d+),avg_ttl=(\d+)\r$`, db)).FindStringSubmatch(r.str)
				if m == nil {
					return 0, 0, 0, false
				}
				keys, _ = strconv.ParseInt(m[1], 10, 64)
				expires, _ = strconv.ParseInt(m[2], 10, 64)
				avgTTL, _ = strconv.ParseInt(m[3], 10, 64)
				return keys, expires, avgTTL, true
			}
			counts := func(what string, db int, wantKeys, wantExpires int64) {
				t.Helper()
				keys, expires, _, ok := dbLine(db)
				if !ok || keys != wantKeys || expires != wantExpires {
					t.Fatalf("%s: db%d keys=%d expires=%d (line present: %v), want keys=%d expires=%d",
						what, db, keys, expires, ok, wantKeys, wantExpires)
				}
			}
			// avgWithin checks avg_ttl in [lo, hi] ms, polling (bounded)
			// where the server updates it in the background.
			avgWithin := func(what string, db int, lo, hi int64) {
				t.Helper()
				var avg int64
				for range 300 {
					_, _, avg, _ = dbLine(db)
					if avg >= lo && avg <= hi || side.immediate {
						break
					}
					time.Sleep(10 * time.Millisecond) // Redis's expire cycle runs 10 times a second
				}
				if avg < lo || avg > hi {
					t.Fatalf("%s: db%d avg_ttl=%d, want %d..%d", what, db, avg, lo, hi)
				}
			}

			must("FLUSHALL")
			must("SET", "a", "1")
			must("SET", "b", "2", "EX", "1000")
			must("SET", "c", "3", "PX", "1000000")
			must("HSET", "h", "f", "v")
			must("EXPIRE", "h", "1000")
			counts("three TTLs set just before", 0, 4, 3)
			must("PERSIST", "b")
			counts("after PERSIST", 0, 4, 2)
			must("DEL", "c")
			counts("after DEL", 0, 3, 1)
			// One key with ~1000 s left: the estimate is that TTL.
			avgWithin("one TTL of 1000 s", 0, 990_000, 1_000_000)

			// Database 1: twenty keys with 100 s and twenty with 300 s
			// left, ten without: any honest estimate is between.
			must("SELECT", "1")
			for i := range 20 {
				must("SET", fmt.Sprint("short", i), "v", "EX", "100")
				must("SET", fmt.Sprint("long", i), "v", "EX", "300")
			}
			for i := range 10 {
				must("SET", fmt.Sprint("plain", i), "v")
			}
			counts("db1 written just before", 1, 50, 40)
			avgWithin("TTLs of 100 s and 300 s", 1, 99_000, 300_000)

			must("SELECT", "0")
			must("PERSIST", "h")
			counts("no TTL left in db0", 0, 3, 0)
			avgWithin("no TTL left in db0", 0, 0, 0)
		})
	}
}

package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestKeyspaceHitsMatchRedis runs one sequence of reads and writes on
// Persimmon and on redis-server and compares INFO's keyspace_hits and
// keyspace_misses after each step: reads count the keys they look up,
// found or not (a key of another type is found), writes count nothing
// (SORT and BITOP count their sources, as Redis's lookupKeyRead does), and
// CONFIG RESETSTAT zeroes both.
func TestKeyspaceHitsMatchRedis(t *testing.T) {
	s := startServer(t, t.TempDir())
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
		r, err := c.do("INFO", "stats")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(r.str, "\r\n") {
			if strings.HasPrefix(line, "keyspace_hits:") || strings.HasPrefix(line, "keyspace_misses:") {
				out = append(out, line)
			}
		}
		if len(out) != 2 {
			t.Fatalf("INFO stats lacks the counters: %q", r.str)
		}
		return strings.Join(out, " ")
	}
	steps := [][]any{
		{"CONFIG", "RESETSTAT"},
		{"GET", "missing"},
		{"SET", "s", "v"},
		{"GET", "s"},
		{"MGET", "s", "missing", "s"},
		{"EXISTS", "s", "missing"},
		{"INCR", "n"},
		{"APPEND", "s", "x"},
		{"HSET", "h", "f", "v"},
		{"HGET", "h", "f"},
		{"HGET", "h", "nofield"},
		{"HGET", "nohash", "f"},
		{"HGET", "s", "f"}, // wrong type: the key was found
		{"SADD", "set", "a"},
		{"SISMEMBER", "set", "a"},
		{"ZADD", "z", "1", "m"},
		{"ZSCORE", "z", "m"},
		{"RPUSH", "l", "a"},
		{"LINDEX", "l", "0"},
		{"LRANGE", "nolist", "0", "-1"},
		{"TYPE", "s"},
		{"STRLEN", "missing"},
		{"DEL", "s", "missing"},
		{"MULTI"},
		{"GET", "h"},
		{"GET", "missing"},
		{"EXEC"},
		{"CONFIG", "RESETSTAT"},
		{"GET", "n"},
		// A command counts each key argument once however often it looks
		// it up; SORT counts its reads, not its STORE destination; MEMORY
		// USAGE counts nothing (its estimate differs: replies not compared).
		{"RPUSH", "m", "3", "1", "2"}, {"MSET", "w_1", "9", "w_2", "8", "o_1", "x"}, {"HSET", "hh", "a", "1", "b", "2"},
		{"SORT", "m"}, {"SORT", "m", "BY", "w_*"}, {"SORT", "m", "BY", "w_*", "STORE", "dst"},
		{"SORT_RO", "m"}, {"SORT_RO", "m", "BY", "w_*"}, {"SORT_RO", "m", "BY", "nosort", "GET", "o_*"},
		{"HGETALL", "hh"}, {"HKEYS", "hh"}, {"HVALS", "hh"}, {"OBJECT", "ENCODING", "w_1"},
		{"MEMORY", "USAGE", "w_1"}, {"MEMORY", "USAGE", "nokey"},
	}
	inMulti := false
	for _, step := range steps {
		a, err1 := ours.do(step...)
		b, err2 := theirs.do(step...)
		if err1 != nil || err2 != nil || (step[0] != "MEMORY" && a.String() != b.String()) {
			t.Fatalf("%v: persimmon %s (%v), redis %s (%v)", step, a, err1, b, err2)
		}
		switch step[0] {
		case "MULTI":
			inMulti = true
		case "EXEC":
			inMulti = false
		}
		if inMulti { // INFO would be queued
			continue
		}
		if got, want := counters(ours), counters(theirs); got != want {
			t.Fatalf("after %v: persimmon %s, redis %s", step, got, want)
		}
	}
}

// TestLastSave checks that SAVE and BGSAVE move LASTSAVE to the time they
// ran and that INFO's rdb_last_save_time reports the same second.
func TestLastSave(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()
	for _, save := range []func() error{
		func() error { return c.Save(ctx).Err() },
		func() error { return c.BgSave(ctx).Err() },
	} {
		before := time.Now().Unix()
		if err := save(); err != nil {
			t.Fatal(err)
		}
		after := time.Now().Unix()
		last, err := c.LastSave(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if last < before || last > after {
			t.Fatalf("LASTSAVE %d, want within [%d, %d]", last, before, after)
		}
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := "rdb_last_save_time:" + strconv.FormatInt(last, 10) + "\r\n"; !strings.Contains(info, want) {
			t.Fatalf("INFO persistence lacks %q", want)
		}
	}
}

// TestMemoryUsage checks MEMORY USAGE's estimate moves with the value: nil
// for a missing key, more bytes for a longer string and for a hash with
// more fields, and at least the bytes the client stored.
func TestMemoryUsage(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()
	if err := c.MemoryUsage(ctx, "missing").Err(); err != redis.Nil {
		t.Fatalf("MEMORY USAGE of a missing key: %v, want nil", err)
	}
	c.Set(ctx, "small", "x", 0)
	c.Set(ctx, "big", strings.Repeat("x", 10000), 0)
	small, err1 := c.MemoryUsage(ctx, "small").Result()
	big, err2 := c.MemoryUsage(ctx, "big").Result()
	if err1 != nil || err2 != nil || big < 10000 || big <= small {
		t.Fatalf("MEMORY USAGE small %d (%v), big %d (%v)", small, err1, big, err2)
	}
	for i := 0; i < 1000; i++ {
		if i < 10 {
			c.HSet(ctx, "h10", strconv.Itoa(i), "value")
		}
		c.HSet(ctx, "h1000", strconv.Itoa(i), "value")
	}
	h10, _ := c.MemoryUsage(ctx, "h10").Result()
	h1000, err := c.MemoryUsage(ctx, "h1000", 0).Result()
	if err != nil || h1000 < 1000*8 || h1000 <= 10*h10 {
		t.Fatalf("MEMORY USAGE h10 %d, h1000 %d (%v)", h10, h1000, err)
	}
	if err := c.Do(ctx, "MEMORY", "USAGE", "big", "SAMPLES", "-1").Err(); err == nil || err.Error() != "ERR syntax error" {
		t.Fatalf("MEMORY USAGE SAMPLES -1: %v, want a syntax error as Redis", err)
	}
}

// TestInlineLimitMatchesRedis sends inline requests of 70,000 and 100,000
// bytes in one write to both servers: redis-server reads 16 KB at a time
// and refuses a line once 64 KB have arrived without its newline, so the
// first runs and the second is a protocol error, and so must they here.
func TestInlineLimitMatchesRedis(t *testing.T) {
	s := startServer(t, t.TempDir())
	redisAddr := startRedis(t)
	for _, n := range []int{70000, 100000} {
		req := "SET " + strings.Repeat("x", n) + "\r\n"
		var replies []string
		for _, addr := range []string{s.Addr, redisAddr} {
			c, err := dialRESP(addr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.nc.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
			r, err := readReply(c.r)
			c.close()
			if err != nil {
				t.Fatal(err)
			}
			replies = append(replies, r.String())
		}
		if replies[0] != replies[1] {
			t.Fatalf("inline request of %d bytes: persimmon %s, redis %s", n, replies[0], replies[1])
		}
	}
}

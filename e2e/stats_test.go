package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKeyspaceHitsMatchRedis runs one sequence of reads and writes on
// Persimmon and on redis-server and compares INFO's keyspace_hits and
// keyspace_misses after each step: reads count the keys they look up,
// found or not (a key of another type is found), writes count nothing, and
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
	}
	inMulti := false
	for _, step := range steps {
		a, err1 := ours.do(step...)
		b, err2 := theirs.do(step...)
		if err1 != nil || err2 != nil || a.String() != b.String() {
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

package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestConvertedEncodingSurvives: a hash, sorted set or set that outgrew its
// small encoding and shrank keeps the big one through COPY, RENAME and MOVE
// as redis-server 7.0 does (compared reply by reply), and persimmon keeps
// it after a kill -9 and restart too (replay of the rebuilt copies), which
// is what the live keys answered.
func TestConvertedEncodingSurvives(t *testing.T) {
	long := strings.Repeat("x", 65)
	setup := [][]any{
		{"HSET", "h", "a", long, "b", "1"}, {"HSET", "h", "a", "1"},
		{"ZADD", "z", 1, long, 2, "a", 3, "b"}, {"ZREM", "z", long},
		{"SADD", "s", 1, 2, "x"}, {"SREM", "s", "x"},
		{"HSET", "hs", "a", "1"}, {"ZADD", "zs", 1, "a"}, {"SADD", "ss", 1, 2}, // never converted
	}
	for i := 0; i < 600; i++ {
		setup = append(setup, []any{"HSET", "hn", fmt.Sprint("f", i), "v"}, []any{"ZADD", "zn", i, fmt.Sprint("m", i)}, []any{"SADD", "sn", i})
	}
	for i := 2; i < 600; i++ {
		setup = append(setup, []any{"HDEL", "hn", fmt.Sprint("f", i)}, []any{"ZREM", "zn", fmt.Sprint("m", i)}, []any{"SREM", "sn", i})
	}
	var keys []string
	for _, k := range []string{"h", "z", "s", "hn", "zn", "sn", "hs", "zs", "ss"} {
		setup = append(setup,
			[]any{"COPY", k, k + ":copy"},
			[]any{"RENAME", k, k + ":renamed"},
			[]any{"COPY", k + ":renamed", k + ":moved"},
			[]any{"MOVE", k + ":moved", 1})
		keys = append(keys, k+":copy", k+":renamed")
	}

	s := startServer(t, t.TempDir())
	redisAddr := startRedis(t)
	ours, err := dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := dialRESP(redisAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.close()
	for _, cmd := range setup {
		a, err1 := ours.do(cmd...)
		b, err2 := theirs.do(cmd...)
		if err1 != nil || err2 != nil || a.String() != b.String() {
			t.Fatalf("%v: persimmon %s (%v), redis %s (%v)", cmd, a, err1, b, err2)
		}
	}
	encodings := func(c *respConn) []string {
		t.Helper()
		var out []string
		for db := 0; db < 2; db++ {
			if r, err := c.do("SELECT", db); err != nil || r.String() != "+OK" {
				t.Fatalf("SELECT %d: %s %v", db, r, err)
			}
			ks := keys
			if db == 1 {
				ks = nil
				for _, k := range keys {
					if strings.HasSuffix(k, ":renamed") {
						ks = append(ks, strings.TrimSuffix(k, ":renamed")+":moved")
					}
				}
			}
			for _, k := range ks {
				r, err := c.do("OBJECT", "ENCODING", k)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("db%d %s %s", db, k, r))
			}
		}
		return out
	}
	want := encodings(theirs)
	if got := encodings(ours); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("live encodings differ from redis-server:\n got %q\nwant %q", got, want)
	}
	for _, line := range want[:3] {
		if strings.Contains(line, "listpack") || strings.Contains(line, "intset") {
			t.Fatalf("redis-server converted back (%s): the test's premise is wrong", line)
		}
	}
	ours.close()
	s.kill()
	s = startServer(t, s.Dir)
	ours, err = dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ours.close()
	if got := encodings(ours); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("encodings after kill -9 and restart:\n got %q\nwant %q", got, want)
	}
}

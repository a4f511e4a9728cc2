package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestKillReplayExpiredIncarnation: keys of every type given a short
// expiry and written again before it passes, a key re-created after its
// expiry passed, a key whose expiry was PERSISTed, RENAME, MOVE and COPY
// of expiring keys; kill -9 once every short expiry has passed, and a
// restart that replays the whole log (--key-index no, and the index file
// removed) or re-attaches the index. The keyspace after the restart is
// the one the server showed before the kill, key by key (DUMP and PTTL):
// the expired keys are gone, not back as partial keys without their
// expiry holding the writes made after the expiry was set (as the replay
// made of them before it judged each write at its own time).
func TestKillReplayExpiredIncarnation(t *testing.T) {
	for _, mode := range []string{"no", "index removed", "yes"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--key-index", "yes"}
			if mode == "no" {
				args[1] = "no"
			}
			s := startServer(t, dir, args...)
			c := s.client()
			do := func(a ...any) {
				t.Helper()
				if err := c.Do(ctx, a...).Err(); err != nil && err != redis.Nil {
					t.Fatalf("%v: %v", a, err)
				}
			}
			for i := range 20 { // keys without an expiry, that nothing touches
				do("SET", fmt.Sprint("plain", i), "v")
				do("HSET", fmt.Sprint("hplain", i), "f", i)
			}
			do("HSET", "future", "a", 1)
			do("PEXPIRE", "future", 3600_000)
			do("HSET", "future", "b", 2)
			// Written again before their expiry: gone with it.
			do("HSET", "h", "a", 1)
			do("SADD", "s", "a")
			do("ZADD", "z", 1, "a")
			do("RPUSH", "l", "a", "b")
			do("XADD", "x", "1-1", "f", "v")
			do("TR.SETBIT", "tr", 5, 1)
			do("SET", "str", "hello", "PX", 300)
			do("SET", "str2", "abc")
			do("APPEND", "str2", "def")
			do("HSET", "ren", "a", 1)
			do("HSET", "mov", "a", 1)
			do("HSET", "cop", "a", 1)
			do("HSET", "per", "a", 1)
			for _, k := range []string{"h", "s", "z", "l", "x", "tr", "str2", "ren", "mov", "cop", "per"} {
				do("PEXPIRE", k, 300)
			}
			set := time.Now()
			do("HSET", "h", "b", 2)
			do("SADD", "s", "b")
			do("ZADD", "z", 2, "b")
			do("LPOP", "l")
			do("RPUSH", "l", "c")
			do("XADD", "x", "2-1", "f", "w")
			do("TR.SETBIT", "tr", 9, 1)
			do("APPEND", "str", " world")
			do("SETRANGE", "str2", 1, "X")
			do("RENAME", "ren", "ren2")
			do("HSET", "ren2", "b", 2)
			do("MOVE", "mov", 1)
			do("COPY", "cop", "cop2") // cop2 keeps the expiry, as Redis's COPY does
			do("HSET", "cop2", "b", 2)
			do("HSET", "per", "b", 2)
			do("PERSIST", "per") // {a, b} for good
			// Re-created after its expiry passed: the new one stays.
			do("HSET", "again", "old", 1)
			do("PEXPIRE", "again", 100)
			do("HSET", "again", "old2", 1)
			for deadline := time.Now().Add(10 * time.Second); ; {
				n, err := c.Exists(ctx, "again").Result()
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("again did not expire")
				}
				time.Sleep(20 * time.Millisecond) // the expiry's time must pass; no record says it did
			}
			do("HSET", "again", "new", 1)
			for time.Since(set) < 400*time.Millisecond {
				time.Sleep(20 * time.Millisecond) // the 300 ms expiries must pass before the kill
			}
			want := keyspaceDump(t, c)
			for _, k := range []string{"0 h", "0 s", "0 z", "0 l", "0 x", "0 tr", "0 str", "0 str2", "0 ren2", "1 mov", "0 cop", "0 cop2"} {
				if _, ok := want[k]; ok {
					t.Fatalf("%s did not expire in the server", k)
				}
			}
			for _, k := range []string{"0 per", "0 again", "0 future", "0 plain7"} {
				if _, ok := want[k]; !ok {
					t.Fatalf("%s is not in the server", k)
				}
			}
			s.kill()
			if mode == "index removed" {
				if err := os.Remove(filepath.Join(dir, "keyindex")); err != nil {
					t.Fatal(err)
				}
			}
			s = startServer(t, dir, args...)
			c = s.client()
			if mode == "index removed" && !strings.Contains(s.log.String(), "rebuilt from the whole log") {
				t.Fatalf("the restart did not replay the whole log:\n%s", s.log.String())
			}
			got := keyspaceDump(t, c)
			for _, k := range sortedKeys(want, got) {
				if want[k] != got[k] {
					t.Errorf("%s: before the kill %q, after the restart %q", k, want[k], got[k])
				}
			}
			if t.Failed() {
				t.Logf("server log:\n%s", s.log.String())
			}
		})
	}
}

// keyspaceDump is every key of databases 0 and 1 ("db key") with its
// DUMP payload and whether it has an expiry.
func keyspaceDump(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	conn := c.Conn() // one connection: SELECT is per connection
	defer conn.Close()
	for db := range 2 {
		if err := conn.Select(ctx, db).Err(); err != nil {
			t.Fatal(err)
		}
		keys, err := conn.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			d, err := conn.Dump(ctx, k).Result()
			if err != nil {
				t.Fatalf("DUMP %s: %v", k, err)
			}
			ttl, err := conn.PTTL(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprint(db, " ", k)] = fmt.Sprintf("%x expiring=%v", d, ttl > 0)
		}
	}
	return out
}

func sortedKeys(ms ...map[string]string) []string {
	var ks []string
	for _, m := range ms {
		for k := range m {
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
	}
	slices.Sort(ks)
	return ks
}

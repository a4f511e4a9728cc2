package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// kixInfo reads INFO section into a map.
func kixInfo(t *testing.T, c *redis.Client, section string) map[string]string {
	t.Helper()
	s, err := c.Info(ctx, section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

func kixInfoInt(t *testing.T, m map[string]string, f string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(m[f], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s = %q: %v", f, m[f], err)
	}
	return v
}

var kixLine = regexp.MustCompile(`recovery: key index re-attached at its checkpoint, LSN (\d+)(?: \(the next checkpoint was being applied: repair mode\))?: mapped in (\d+) µs, (\d+) segments skipped, (\d+) records validated and (\d+) of them replayed after the checkpoint in (\d+) ms .*, (\d+) bytes of table`)

// TestKeyIndexStartupReport: after a kill -9 that follows a checkpoint
// and more writes, the start-up line says the index was re-attached, how
// long the mapping and the validation took, how many records were
// validated and how many of them, exactly the writes after the
// checkpoint, were replayed (the kill may land inside the checkpoint
// those writes begin: the line then says repair mode, and its LSN, the
// one replayed from, is that checkpoint's base); INFO memory then reports the index's bytes
// (the table size of that line), its keys, the Go heap, and the resident
// set split into anonymous and file-backed pages.
func TestKeyIndexStartupReport(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--key-index", "yes"}
	s := startServer(t, dir, args...)
	c := s.client()
	const before, after = 20000, 3000
	set := func(from, to int) {
		for base := from; base < to; base += 500 {
			p := c.Pipeline()
			for i := base; i < min(base+500, to); i++ {
				p.Set(ctx, fmt.Sprintf("k:%d", i), fmt.Sprintf("v:%d", i), 0)
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	set(0, before)
	// Wait for a checkpoint that covers the first writes.
	deadline := time.Now().Add(30 * time.Second)
	for kixInfoInt(t, kixInfo(t, c, "memory"), "key_index_checkpoint_lsn") < before {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint covered LSN %d in 30 s: %v", before, kixInfo(t, c, "memory"))
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	set(before, before+after)
	last := kixInfoInt(t, kixInfo(t, c, "persistence"), "wal_last_lsn")
	s.kill()

	s = startServer(t, dir, args...)
	c = s.client()
	m := kixLine.FindStringSubmatch(s.log.String())
	if m == nil {
		t.Fatalf("no re-attach line in the start-up log:\n%s", s.log.String())
	}
	n := make([]int64, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.ParseInt(m[i], 10, 64)
	}
	cpLSN, validated, replayed, table := n[1], n[4], n[5], n[7]
	if cpLSN < before || cpLSN > last {
		t.Fatalf("checkpoint LSN %d, want between %d and the last LSN %d: %s", cpLSN, before, last, m[0])
	}
	if replayed != last-cpLSN {
		t.Fatalf("%d records replayed, want the %d after the checkpoint (LSN %d to %d): %s", replayed, last-cpLSN, cpLSN, last, m[0])
	}
	if validated < replayed || validated > last {
		t.Fatalf("%d records validated, %d replayed, %d in the log: %s", validated, replayed, last, m[0])
	}
	if n[2] <= 0 && n[6] <= 0 {
		t.Fatalf("neither the mapping nor the validation took any time: %s", m[0])
	}
	if got := c.DBSize(ctx).Val(); got != before+after {
		t.Fatalf("DBSIZE %d after the restart, want %d", got, before+after)
	}
	if v := c.Get(ctx, fmt.Sprintf("k:%d", before+after-1)).Val(); v != fmt.Sprintf("v:%d", before+after-1) {
		t.Fatalf("the last write reads %q after the restart", v)
	}

	mem := kixInfo(t, c, "memory")
	if got := kixInfoInt(t, mem, "key_index_bytes"); got != table || got <= 0 {
		t.Fatalf("INFO key_index_bytes %d, the start-up line's table %d bytes", got, table)
	}
	if got := kixInfoInt(t, mem, "key_index_keys"); got != before+after {
		t.Fatalf("INFO key_index_keys %d, want %d", got, before+after)
	}
	rss, anon, file := kixInfoInt(t, mem, "used_memory_rss"), kixInfoInt(t, mem, "used_memory_rss_anon"), kixInfoInt(t, mem, "used_memory_rss_file")
	if rss <= 0 || anon <= 0 || file <= 0 || anon+file != rss {
		t.Fatalf("INFO used_memory_rss %d = anon %d + file %d?", rss, anon, file)
	}
	if heap := kixInfoInt(t, mem, "go_heap_bytes"); heap <= 0 || heap > rss {
		t.Fatalf("INFO go_heap_bytes %d (rss %d)", heap, rss)
	}
	t.Logf("%s; INFO memory: rss %d, anon %d, file %d, go heap %s, key index %d bytes",
		m[0], rss, anon, file, mem["go_heap_bytes"], table)
}

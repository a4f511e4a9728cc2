package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
)

// misconf is redis-server's reply to a write while its AOF cannot be
// written (checked against redis-server 7.0.15 with appendonly yes,
// appendfsync everysec, on a full 2 MiB tmpfs).
const misconf = "MISCONF Errors writing to the AOF file: No space left on device"

// smallFS mounts a tmpfs of size (mount(8) syntax) on a new directory, or
// skips the test where that needs privileges the test lacks.
func smallFS(t *testing.T, size string) string {
	t.Helper()
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	return mnt
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// logShows polls s's log (bounded: the server process writes it through a
// pipe) until it contains want.
func logShows(s *server, want string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(s.log.String(), want) {
			return true
		}
	}
	return false
}

func writeStatus(t *testing.T, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(ctx, "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	v := infoField(info, "aof_last_write_status")
	if v == "" {
		t.Fatalf("INFO persistence lacks aof_last_write_status: %q", info)
	}
	return v
}

// fillUntilFull writes 16 KiB values until the first error, which must be
// MISCONF; it returns the keys acknowledged.
func fillUntilFull(t *testing.T, c *redis.Client, prefix string) []string {
	t.Helper()
	return fill(t, c, prefix, func(k string, val []byte) error { return c.Set(ctx, k, val, 0).Err() })
}

// fillWithExec is fillUntilFull with each SET inside MULTI/EXEC, so the
// last record written before the disk filled is a transaction's commit.
func fillWithExec(t *testing.T, c *redis.Client, prefix string) []string {
	t.Helper()
	return fill(t, c, prefix, func(k string, val []byte) error {
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, k, val, 0)
			return nil
		})
		return err
	})
}

func fill(t *testing.T, c *redis.Client, prefix string, set func(k string, val []byte) error) []string {
	t.Helper()
	val := bytes.Repeat([]byte("v"), 16<<10)
	var acked []string
	for i := 0; i < 20000; i++ {
		k := fmt.Sprintf("%s:%d", prefix, i)
		if err := set(k, val); err != nil {
			if err.Error() != misconf {
				t.Fatalf("write on a full disk: %q, want %q", err, misconf)
			}
			return acked
		}
		acked = append(acked, k)
	}
	t.Fatalf("the filesystem never filled")
	return nil
}

// TestDiskFull fills a small tmpfs. From the first failed write on, every
// write command is refused as redis-server refuses them after a failed AOF
// write (before: small writes that fit the blocks already allocated kept
// succeeding, and INFO said ok again), reads keep working, and writes come
// back once space is freed, without a restart.
func TestDiskFull(t *testing.T) {
	mnt := smallFS(t, "6m")
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--segment-size", "1mb")
	c := s.client()
	acked := fillUntilFull(t, c, "key")
	t.Logf("disk full after %d writes", len(acked))

	refused := map[string]func() error{
		"SET small":       func() error { return c.Set(ctx, "small", "x", 0).Err() },
		"INCR":            func() error { return c.Incr(ctx, "counter").Err() },
		"DEL of a key":    func() error { return c.Del(ctx, acked[0]).Err() },
		"DEL of nothing":  func() error { return c.Del(ctx, "no-such-key").Err() },
		"PING (as Redis)": func() error { return c.Ping(ctx).Err() },
		// Redis 7.0: "MISCONF ... device script: <sha>, on @user_script:1."
		"EVAL calling a SET": func() error { return c.Eval(ctx, "return redis.call('set', 'a', 'b')", nil).Err() },
	}
	for name, f := range refused {
		if err := f(); err == nil || !strings.HasPrefix(err.Error(), misconf) {
			t.Errorf("%s on a full disk: %v, want %q", name, err, misconf)
		}
	}
	// MULTI: the queued write is refused, EXEC aborts.
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "in-multi", "x", 0)
		return nil
	})
	if err == nil || (!strings.Contains(err.Error(), "EXECABORT") && !strings.Contains(err.Error(), "MISCONF")) {
		t.Errorf("MULTI SET EXEC on a full disk: %v, want MISCONF / EXECABORT", err)
	}
	if got := writeStatus(t, c); got != "err" {
		t.Errorf("aof_last_write_status on a full disk = %q, want err", got)
	}
	// The log says so, as redis-server logs its failed AOF write.
	if !logShows(s, "Error writing to the log: ") {
		t.Errorf("the server did not log the full disk:\n%s", s.log.String())
	}
	for _, k := range acked {
		got, err := c.Get(ctx, k).Bytes()
		if err != nil || len(got) != 16<<10 {
			t.Fatalf("read of %s on a full disk: %v", k, err)
		}
	}
	for _, k := range []string{"small", "counter", "in-multi", "a"} {
		if n, _ := c.Exists(ctx, k).Result(); n != 0 {
			t.Errorf("%s exists although its write was refused", k)
		}
	}

	// Free space as an operator would: grow the filesystem. The retry
	// (every 100 ms, and before refusing a write) notices it.
	if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, "size=16m"); err != nil {
		t.Skipf("cannot remount to free space: %v", err)
	}
	if err := c.Set(ctx, "after", "ok", 0).Err(); err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
	if got := writeStatus(t, c); got != "ok" {
		t.Errorf("aof_last_write_status after space was freed = %q, want ok", got)
	}
	if !logShows(s, "Log write error looks solved") {
		t.Errorf("the server did not log that writes are accepted again:\n%s", s.log.String())
	}
	// Once per episode, not once per refused write (the lines are in
	// order, so every earlier line is in the log by now).
	if n := strings.Count(s.log.String(), "Error writing to the log: "); n != 1 {
		t.Errorf("the server logged the full disk %d times, want once:\n%s", n, s.log.String())
	}
	s.kill()
	s2 := startServer(t, dir, "--segment-size", "1mb")
	c2 := s2.client()
	for _, k := range append(acked, "after") {
		if n, err := c2.Exists(ctx, k).Result(); err != nil || n != 1 {
			t.Fatalf("after restart %s missing (%v)", k, err)
		}
	}
}

// TestDiskFullFlushAll: FLUSHALL on a full disk succeeds and gives the
// space back (the cleaner deletes the segments before it without copying
// anything), after which writes are accepted again; a kill -9 then brings
// back exactly the writes after the FLUSHALL.
func TestDiskFullFlushAll(t *testing.T) {
	t.Run("after SET", func(t *testing.T) { testDiskFullFlushAll(t, fillUntilFull) })
	// The last record before the disk filled is a commit record; the
	// segment-edge case where a commit used to take the freeing reserve
	// is wal's TestFreeingReserveAfterCommit.
	t.Run("after EXEC", func(t *testing.T) { testDiskFullFlushAll(t, fillWithExec) })
}

func testDiskFullFlushAll(t *testing.T, fillFn func(*testing.T, *redis.Client, string) []string) {
	mnt := smallFS(t, "6m")
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--segment-size", "1mb")
	c := s.client()
	acked := fillFn(t, c, "key")
	if err := c.Set(ctx, "small", "x", 0).Err(); err == nil || err.Error() != misconf {
		t.Fatalf("small write on a full disk: %v, want %q", err, misconf)
	}
	before := freeBytes(t, mnt)
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatalf("FLUSHALL on a full disk: %v", err)
	}
	// The background cleaner (every 100 ms) removes the old segments.
	deadline := time.Now().Add(20 * time.Second)
	for freeBytes(t, mnt) < before+3<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("FLUSHALL gave no space back: %d bytes free before, %d after 20s", before, freeBytes(t, mnt))
		}
		time.Sleep(20 * time.Millisecond) // polling the filesystem, not ordering the server
	}
	t.Logf("free space %d -> %d bytes after FLUSHALL (%d keys flushed)", before, freeBytes(t, mnt), len(acked))
	if err := c.Set(ctx, "after", "ok", 0).Err(); err != nil {
		t.Fatalf("write after FLUSHALL freed space: %v", err)
	}
	if got := writeStatus(t, c); got != "ok" {
		t.Errorf("aof_last_write_status after FLUSHALL freed space = %q, want ok", got)
	}
	s.kill()
	s2 := startServer(t, dir, "--segment-size", "1mb")
	c2 := s2.client()
	if n, err := c2.DBSize(ctx).Result(); err != nil || n != 1 {
		t.Fatalf("after restart DBSIZE = %d (%v), want 1", n, err)
	}
	if v, err := c2.Get(ctx, "after").Result(); err != nil || v != "ok" {
		t.Fatalf("after restart: after = %q (%v)", v, err)
	}
}

// TestTinyFilesystem: on a filesystem smaller than the 1 MiB the arena
// allocates ahead of its appends, the first write must still succeed
// (before: refused, because the look-ahead did not fit), and the space
// used before MISCONF is most of the filesystem.
func TestTinyFilesystem(t *testing.T) {
	mnt := smallFS(t, "512k")
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--segment-size", "1mb")
	c := s.client()
	if err := c.Set(ctx, "first", "x", 0).Err(); err != nil {
		t.Fatalf("first write on a 512 KiB filesystem: %v", err)
	}
	acked := fillUntilFull(t, c, "key")
	if len(acked) < 20 { // 20 x 16 KiB = 320 KiB of 512
		t.Fatalf("only %d 16 KiB writes fit on a 512 KiB filesystem", len(acked))
	}
	t.Logf("%d 16 KiB writes on a 512 KiB filesystem", len(acked))
	s.kill()
	s2 := startServer(t, dir, "--segment-size", "1mb")
	c2 := s2.client()
	for _, k := range append(acked, "first") {
		if n, err := c2.Exists(ctx, k).Result(); err != nil || n != 1 {
			t.Fatalf("after restart %s missing (%v)", k, err)
		}
	}
}

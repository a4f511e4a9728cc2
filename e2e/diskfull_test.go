package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDiskFull fills a small tmpfs: write commands get an error reply, the
// server keeps serving reads of everything acknowledged, and writes work
// again once space is freed.
func TestDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=6m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--segment-size", "1mb")
	c := s.client()
	val := bytes.Repeat([]byte("v"), 16<<10)
	var acked []string
	var fullErr error
	for i := 0; i < 2000; i++ {
		k := fmt.Sprintf("key:%d", i)
		if err := c.Set(ctx, k, val, 0).Err(); err != nil {
			fullErr = err
			break
		}
		acked = append(acked, k)
	}
	if fullErr == nil {
		t.Fatalf("6 MiB filesystem never filled")
	}
	if !strings.HasPrefix(fullErr.Error(), "MISCONF") {
		t.Fatalf("write on a full disk: %v, want a MISCONF error reply", fullErr)
	}
	t.Logf("disk full after %d writes: %v", len(acked), fullErr)
	for _, k := range acked {
		got, err := c.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(got, val) {
			t.Fatalf("read of %s on a full disk: %v", k, err)
		}
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		t.Helper()
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "aof_last_write_status:"); ok {
				return v
			}
		}
		t.Fatalf("INFO persistence lacks aof_last_write_status: %q", info)
		return ""
	}
	if got := status(); got != "err" {
		t.Errorf("aof_last_write_status on a full disk = %q, want err", got)
	}
	// Free space as an operator would: grow the filesystem (deleting keys
	// needs a record, which needs space).
	if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, "size=16m"); err != nil {
		t.Skipf("cannot remount to free space: %v", err)
	}
	if err := c.Set(ctx, "after", "ok", 0).Err(); err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
	if got := status(); got != "ok" {
		t.Errorf("aof_last_write_status after a successful write = %q, want ok", got)
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

package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDiskFullBigValues: on a 12 MB filesystem, SETs of 3 MB values
// (records the wal writes with pwritev) fill the disk; the one that does
// not fit is refused with Redis's MISCONF error and the server keeps
// serving the values already written (the space is allocated before the
// write, so a full disk never leaves half a record or stops the log).
// Once space is freed the same SET succeeds, and after a kill -9 every
// acknowledged value reads back whole.
func TestDiskFullBigValues(t *testing.T) {
	mnt := smallFS(t, "12m")
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--segment-size", "1mb")
	c := s.client()
	val := func(i int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("big-%d;", i)), (3<<20)/7)
	}
	var acked []int
	var refusedAt int
	for i := 0; ; i++ {
		err := c.Set(ctx, fmt.Sprint("big:", i), val(i), 0).Err()
		if err == nil {
			acked = append(acked, i)
			continue
		}
		if !strings.HasPrefix(err.Error(), misconf) {
			t.Fatalf("SET big:%d on a full disk: %v, want %q", i, err, misconf)
		}
		refusedAt = i
		break
	}
	if len(acked) == 0 {
		t.Fatal("not even one 3 MB value fitted")
	}
	t.Logf("%d values of 3 MB written, the next refused", len(acked))
	for _, i := range acked {
		got, err := c.Get(ctx, fmt.Sprint("big:", i)).Bytes()
		if err != nil || !bytes.Equal(got, val(i)) {
			t.Fatalf("GET big:%d on a full disk: %d bytes, %v", i, len(got), err)
		}
	}
	if n, _ := c.Exists(ctx, fmt.Sprint("big:", refusedAt)).Result(); n != 0 {
		t.Fatalf("big:%d exists although its SET was refused", refusedAt)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, "size=32m"); err != nil {
		t.Skipf("cannot remount to free space: %v", err)
	}
	if err := c.Set(ctx, fmt.Sprint("big:", refusedAt), val(refusedAt), 0).Err(); err != nil {
		t.Fatalf("SET big:%d after space was freed: %v", refusedAt, err)
	}
	acked = append(acked, refusedAt)
	if err := c.Set(ctx, "small", "after", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.kill()
	s = startServer(t, dir, "--segment-size", "1mb")
	c = s.client()
	for _, i := range acked {
		got, err := c.Get(ctx, fmt.Sprint("big:", i)).Bytes()
		if err != nil || !bytes.Equal(got, val(i)) {
			t.Fatalf("after kill -9: GET big:%d: %d bytes, %v", i, len(got), err)
		}
	}
	if v, err := c.Get(ctx, "small").Result(); err != nil || v != "after" {
		t.Fatalf("after kill -9: GET small: %q %v", v, err)
	}
}

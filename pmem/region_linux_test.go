package pmem

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mountSmallTmpfs mounts a tmpfs of size bytes on a fresh directory and
// unmounts it when the test ends, or skips the test if it cannot (not root,
// or no CAP_SYS_ADMIN in this container).
func mountSmallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

func TestMapFullDiskIsENOSPC(t *testing.T) {
	dir := mountSmallTmpfs(t, "1m")
	path := filepath.Join(dir, "seg")
	r, err := Map(path, 4<<20, ModeMsync)
	if err == nil {
		r.Close()
		t.Fatal("Map of 4 MiB on a 1 MiB filesystem succeeded")
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Map on a full filesystem: %v, want an error wrapping ENOSPC", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed Map left its new file behind (%v)", err)
	}

	// A file that fits still works, and extending it past the space fails
	// with ENOSPC while keeping the file.
	r = mustMap(t, path, 256<<10, ModeMsync)
	r.Bytes()[0] = 42
	if err := r.Persist(0, 1); err != nil {
		t.Fatal(err)
	}
	mustClose(t, r)
	if _, err := Map(path, 8<<20, ModeMsync); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("extending past free space: %v, want ENOSPC", err)
	}
	r = mustMap(t, path, 256<<10, ModeMsync)
	defer mustClose(t, r)
	if r.Bytes()[0] != 42 {
		t.Error("failed extension lost the existing contents")
	}
}

func TestFilesystemTmpfs(t *testing.T) {
	dir := mountSmallTmpfs(t, "1m")
	if got, err := Filesystem(dir); err != nil || got != "tmpfs" {
		t.Errorf("Filesystem(tmpfs mount) = %q, %v; want tmpfs", got, err)
	}
	r := mustMap(t, filepath.Join(dir, "seg"), pageSize, ModePmem)
	defer mustClose(t, r)
	if r.DAX() {
		t.Error("tmpfs mapping claims DAX")
	}
}

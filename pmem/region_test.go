//go:build unix

package pmem

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

var pageSize = int64(os.Getpagesize())

var allModes = []Mode{ModePmem, ModeMsync, ModeNone}

func mustMap(t testing.TB, path string, size int64, mode Mode) *Region {
	t.Helper()
	r, err := Map(path, size, mode)
	if err != nil {
		t.Fatalf("Map(%s, %d, %v): %v", path, size, mode, err)
	}
	return r
}

func mustClose(t testing.TB, r *Region) {
	t.Helper()
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// pattern returns n bytes that differ from their neighbours and from zero.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed | 1
	}
	return b
}

func TestMapCreatesFileOfSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	size := 3 * pageSize
	r := mustMap(t, path, size, ModeMsync)
	defer mustClose(t, r)

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != size {
		t.Errorf("file size = %d, want %d", fi.Size(), size)
	}
	if r.Size() != size || int64(len(r.Bytes())) != size {
		t.Errorf("Size() = %d, len(Bytes()) = %d, want %d", r.Size(), len(r.Bytes()), size)
	}
	if r.Path() != path || r.Mode() != ModeMsync {
		t.Errorf("Path() = %q, Mode() = %v", r.Path(), r.Mode())
	}
	if !bytes.Equal(r.Bytes(), make([]byte, size)) {
		t.Error("a new file does not read as zeros")
	}
	// fallocate must have allocated every block: no holes.
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Blocks*512 < size {
		t.Errorf("file has %d bytes allocated, want at least %d (fallocate)", st.Blocks*512, size)
	}
	t.Logf("DAX=%v", r.DAX())
}

func TestPersistThenRemapReadsBack(t *testing.T) {
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seg")
			size := 4 * pageSize
			want := pattern(int(pageSize)+100, byte(mode))
			off := pageSize - 37 // unaligned, straddles pages

			r := mustMap(t, path, size, mode)
			copy(r.Bytes()[off:], want)
			if err := r.Persist(off, int64(len(want))); err != nil {
				t.Fatalf("Persist: %v", err)
			}
			mustClose(t, r)

			r2 := mustMap(t, path, size, mode)
			defer mustClose(t, r2)
			if got := r2.Bytes()[off : off+int64(len(want))]; !bytes.Equal(got, want) {
				t.Fatal("second mapping does not read back what the first Persisted")
			}
			if !bytes.Equal(r2.Bytes()[:off], make([]byte, off)) {
				t.Error("bytes before the written range changed")
			}
			disk, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(disk, r2.Bytes()) {
				t.Error("read(2) of the file differs from the mapping")
			}
		})
	}
}

func TestMapKeepsExistingContents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	want := pattern(int(2*pageSize), 3)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}

	r := mustMap(t, path, 2*pageSize, ModeNone)
	if !bytes.Equal(r.Bytes(), want) {
		t.Fatal("Map of an existing file of the same size lost its contents")
	}
	mustClose(t, r)

	// Growing keeps the prefix and zero-fills the rest.
	r = mustMap(t, path, 4*pageSize, ModeNone)
	if !bytes.Equal(r.Bytes()[:len(want)], want) || !bytes.Equal(r.Bytes()[len(want):], make([]byte, 2*pageSize)) {
		t.Fatal("Map growing a file lost its contents or did not zero-fill")
	}
	mustClose(t, r)

	// Shrinking keeps what still fits.
	r = mustMap(t, path, pageSize, ModeNone)
	defer mustClose(t, r)
	if !bytes.Equal(r.Bytes(), want[:pageSize]) {
		t.Fatal("Map shrinking a file lost the prefix")
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != pageSize {
		t.Fatalf("after shrinking Map: stat = %v, %v; want size %d", fi, err, pageSize)
	}
}

func TestMapBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int64{0, -pageSize, 1, 100, pageSize + 1, pageSize / 2, math.MaxInt64} {
		path := filepath.Join(dir, "bad")
		r, err := Map(path, size, ModeMsync)
		if err == nil {
			r.Close()
			t.Fatalf("Map size %d succeeded", size)
		}
		if !errors.Is(err, ErrSize) {
			t.Errorf("Map size %d: error %v does not wrap ErrSize", size, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Map size %d left a file behind (%v)", size, err)
		}
	}
	if _, err := Map(filepath.Join(dir, "m"), pageSize, Mode(9)); err == nil {
		t.Error("Map with an invalid mode succeeded")
	}
	if _, err := Map(dir, pageSize, ModeNone); err == nil {
		t.Error("Map of a directory succeeded")
	}
	if _, err := Map(filepath.Join(dir, "no", "such", "dir"), pageSize, ModeNone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Map in a missing directory: %v, want ErrNotExist", err)
	}
}

func TestFlushAndPersistRanges(t *testing.T) {
	size := 2 * pageSize
	ranges := []struct{ off, n int64 }{
		{0, 0}, {0, 1}, {1, 1}, {63, 1}, {63, 2}, {64, 64}, {65, 200},
		{pageSize - 1, 2}, {pageSize - 1, 0}, {size - 1, 1}, {size - 64, 64},
		{size - 65, 65}, {size - 100, 100}, {size, 0}, {0, size}, {1, size - 1},
	}
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			r := mustMap(t, filepath.Join(t.TempDir(), "seg"), size, mode)
			defer mustClose(t, r)
			for _, rg := range ranges {
				b := r.Bytes()
				for i := rg.off; i < rg.off+rg.n; i++ {
					b[i]++
				}
				r.Flush(rg.off, rg.n)
				Drain()
				if err := r.Msync(rg.off, rg.n); err != nil {
					t.Errorf("Msync(%d, %d): %v", rg.off, rg.n, err)
				}
				if err := r.Persist(rg.off, rg.n); err != nil {
					t.Errorf("Persist(%d, %d): %v", rg.off, rg.n, err)
				}
			}
			bad := []struct{ off, n int64 }{
				{-1, 1}, {0, -1}, {size, 1}, {size - 1, 2}, {size + 64, 0},
				{1, math.MaxInt64}, {math.MaxInt64, 1},
			}
			for _, rg := range bad {
				if err := r.Persist(rg.off, rg.n); !errors.Is(err, ErrRange) {
					t.Errorf("Persist(%d, %d) = %v, want ErrRange", rg.off, rg.n, err)
				}
				if err := r.Msync(rg.off, rg.n); !errors.Is(err, ErrRange) {
					t.Errorf("Msync(%d, %d) = %v, want ErrRange", rg.off, rg.n, err)
				}
				func() {
					defer func() {
						err, _ := recover().(error)
						if !errors.Is(err, ErrRange) {
							t.Errorf("Flush(%d, %d) panicked with %v, want ErrRange", rg.off, rg.n, err)
						}
					}()
					r.Flush(rg.off, rg.n)
				}()
			}
		})
	}
}

func TestFlushLineCount(t *testing.T) {
	if flushLines == nil {
		t.Skip("no cache-line flush instruction on this architecture")
	}
	size := 2 * pageSize
	r := mustMap(t, filepath.Join(t.TempDir(), "seg"), size, ModePmem)
	defer mustClose(t, r)
	for _, tc := range []struct{ off, n, lines int64 }{
		{0, 0, 0}, {5, 0, 0}, {0, 1, 1}, {0, 64, 1}, {0, 65, 2}, {63, 2, 2},
		{64, 64, 1}, {1, 128, 3}, {size - 1, 1, 1}, {size - 64, 64, 1},
		{size - 65, 65, 2}, {0, size, size / 64},
	} {
		if got := r.flushRange(tc.off, tc.n); int64(got) != tc.lines {
			t.Errorf("Flush(%d, %d) wrote back %d lines, want %d", tc.off, tc.n, got, tc.lines)
		}
	}
}

func TestLineAndPageRange(t *testing.T) {
	for _, tc := range []struct{ off, n, lo, hi int64 }{
		{0, 0, 0, 0}, {0, 1, 0, 64}, {63, 1, 0, 64}, {63, 2, 0, 128},
		{64, 0, 64, 64}, {100, 100, 64, 256}, {128, 64, 128, 192},
	} {
		if lo, hi := lineRange(tc.off, tc.n); lo != tc.lo || hi != tc.hi {
			t.Errorf("lineRange(%d, %d) = [%d, %d), want [%d, %d)", tc.off, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	for _, tc := range []struct{ off, n, lo, hi int64 }{
		{0, 1, 0, 4096}, {4095, 2, 0, 8192}, {4096, 4096, 4096, 8192}, {5000, 10, 4096, 8192},
	} {
		if lo, hi := pageRange(tc.off, tc.n, 4096); lo != tc.lo || hi != tc.hi {
			t.Errorf("pageRange(%d, %d) = [%d, %d), want [%d, %d)", tc.off, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	r := mustMap(t, filepath.Join(t.TempDir(), "seg"), pageSize, ModeMsync)
	mustClose(t, r)
	if err := r.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if err := r.Persist(0, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Persist after Close = %v, want ErrClosed", err)
	}
	if r.Bytes() != nil {
		t.Error("Bytes after Close is not nil")
	}
}

func TestConcurrentFlushAndPersist(t *testing.T) {
	size := 16 * pageSize
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			r := mustMap(t, filepath.Join(t.TempDir(), "seg"), size, mode)
			defer mustClose(t, r)
			done := make(chan error)
			const workers = 4
			for w := range workers {
				go func() {
					// Each worker stores into its own quarter and persists
					// both its own and overlapping ranges.
					base := int64(w) * size / workers
					var err error
					for i := int64(0); i < 200 && err == nil; i++ {
						off := base + (i*97)%(size/workers-300)
						r.Bytes()[off] = byte(i)
						r.Flush(off, 300)
						r.Flush(0, 256) // overlaps every other worker's flush
						Drain()
						err = r.Persist(off, 1)
					}
					done <- err
				}()
			}
			for range workers {
				if err := <-done; err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestSurvivesKill9 stores and Persists in a child process that then kills
// itself with SIGKILL, and checks a fresh mapping sees the data: the
// promise every mode makes.
func TestSurvivesKill9(t *testing.T) {
	if path := os.Getenv("PMEM_TEST_KILL9_PATH"); path != "" {
		mode, err := ParseMode(os.Getenv("PMEM_TEST_KILL9_MODE"))
		if err != nil {
			os.Exit(2)
		}
		r, err := Map(path, 2*pageSize, mode)
		if err != nil {
			os.Exit(3)
		}
		copy(r.Bytes()[100:], pattern(5000, 9))
		if r.Persist(100, 5000) != nil {
			os.Exit(4)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "seg")
			cmd := exec.Command(os.Args[0], "-test.run=^TestSurvivesKill9$")
			cmd.Env = append(os.Environ(), "PMEM_TEST_KILL9_PATH="+path, "PMEM_TEST_KILL9_MODE="+mode.String())
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die by SIGKILL: %v", err)
			}
			r := mustMap(t, path, 2*pageSize, mode)
			defer mustClose(t, r)
			if !bytes.Equal(r.Bytes()[100:5100], pattern(5000, 9)) {
				t.Fatal("data Persisted before kill -9 is gone")
			}
		})
	}
}

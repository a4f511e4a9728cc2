package faultfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The mmap tests run their stores in a child process (this test binary
// re-executed): a page fault on the mount served by the same Go process
// can deadlock with the runtime's stop-the-world.
func TestMain(m *testing.M) {
	if os.Getenv("FAULTFS_MMAP_CHILD") != "" {
		if err := mmapChild(); err != nil {
			fmt.Fprintln(os.Stderr, "mmap child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mmapChild maps FAULTFS_PATH shared, fills FAULTFS_PAGES pages with the
// byte FAULTFS_BYTE, msyncs the first FAULTFS_SYNC pages (MS_SYNC) and
// then dies by SIGKILL without unmapping or closing anything, as a server
// under a power-cut test does.
func mmapChild() error {
	pages, _ := strconv.Atoi(os.Getenv("FAULTFS_PAGES"))
	syncPages, _ := strconv.Atoi(os.Getenv("FAULTFS_SYNC"))
	b, _ := strconv.Atoi(os.Getenv("FAULTFS_BYTE"))
	f, err := os.OpenFile(os.Getenv("FAULTFS_PATH"), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	data, err := unix.Mmap(int(f.Fd()), 0, pages*PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	for i := range data {
		data[i] = byte(b)
	}
	if syncPages > 0 {
		if err := unix.Msync(data[:syncPages*PageSize], unix.MS_SYNC); err != nil {
			return err
		}
	}
	return syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// mountTest mounts a fresh faultfs, skipping only when /dev/fuse cannot
// be opened.
func mountTest(t *testing.T, opts Options) (*FS, string, string) {
	t.Helper()
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("faultfs needs /dev/fuse: %v", err)
	}
	dev.Close()
	base := t.TempDir()
	backing, mnt := filepath.Join(base, "backing"), filepath.Join(base, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Mount(backing, mnt, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f, backing, mnt
}

func cut(t *testing.T, f *FS, mode CutMode) CutStats {
	t.Helper()
	cs, err := f.Cut(mode)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cut: %+v", cs)
	return cs
}

func syncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string, data []byte, fsync bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if fsync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func wantFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes %.40q, want %d bytes %.40q", path, len(got), got, len(want), want)
	}
}

func wantGone(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists after the cut (%v)", path, err)
	}
}

// TestWriteNeedsFsync: bytes written with write(2) survive a cut only up
// to the file's last fsync, in place and in size; the survivors are
// served by the fresh mount.
func TestWriteNeedsFsync(t *testing.T) {
	f, backing, mnt := mountTest(t, Options{})
	p := filepath.Join(mnt, "a")
	writeFile(t, p, []byte("durable"), true)
	syncDir(t, mnt)
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("DUR"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt(bytes.Repeat([]byte("x"), 3*PageSize), 5); err != nil {
		t.Fatal(err)
	}
	h.Close()
	wantFile(t, filepath.Join(backing, "a"), append([]byte("DURab"), bytes.Repeat([]byte("x"), 3*PageSize)...))
	cs := cut(t, f, DropAll)
	if cs.DroppedPages != 1 || cs.Files != 1 {
		t.Fatalf("cut dropped %d pages of %d files, want 1 page (the rest was past the durable size) of 1", cs.DroppedPages, cs.Files)
	}
	wantFile(t, filepath.Join(backing, "a"), []byte("durable"))
	wantFile(t, p, []byte("durable"))

	// After the cut the filesystem is writable again and syncs count.
	h, err = os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt([]byte("D"), 0)
	if err := unix.Fdatasync(int(h.Fd())); err != nil {
		t.Fatal(err)
	}
	h.WriteAt([]byte("E"), 1)
	h.Close()
	cut(t, f, DropAll)
	wantFile(t, p, []byte("Durable"))
}

// TestNamesNeedDirFsync: a create, unlink or rename is undone by a cut
// unless its directory was fsynced after it; fsyncing the file is not
// enough.
func TestNamesNeedDirFsync(t *testing.T) {
	f, _, mnt := mountTest(t, Options{})
	sub := filepath.Join(mnt, "d")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	syncDir(t, mnt)
	writeFile(t, filepath.Join(sub, "kept"), []byte("k"), true)
	writeFile(t, filepath.Join(sub, "old"), []byte("o"), true)
	writeFile(t, filepath.Join(sub, "victim"), []byte("v"), true)
	syncDir(t, sub)
	writeFile(t, filepath.Join(sub, "new"), []byte("n"), true) // file fsynced, directory not
	if err := os.Remove(filepath.Join(sub, "victim")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(sub, "old"), filepath.Join(sub, "kept")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mnt, "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	cs := cut(t, f, DropAll)
	if cs.UndoneOps != 4 {
		t.Fatalf("undid %d namespace operations, want 4", cs.UndoneOps)
	}
	wantGone(t, filepath.Join(sub, "new"))
	wantGone(t, filepath.Join(mnt, "e"))
	wantFile(t, filepath.Join(sub, "victim"), []byte("v"))
	wantFile(t, filepath.Join(sub, "old"), []byte("o"))
	wantFile(t, filepath.Join(sub, "kept"), []byte("k"))

	// The same operations followed by an fsync of the directory stay.
	writeFile(t, filepath.Join(sub, "new"), []byte("n"), true)
	os.Remove(filepath.Join(sub, "victim"))
	os.Rename(filepath.Join(sub, "old"), filepath.Join(sub, "kept"))
	syncDir(t, sub)
	cs = cut(t, f, DropAll)
	if cs.UndoneOps != 0 {
		t.Fatalf("undid %d namespace operations after the directory fsync", cs.UndoneOps)
	}
	wantFile(t, filepath.Join(sub, "new"), []byte("n"))
	wantGone(t, filepath.Join(sub, "victim"))
	wantGone(t, filepath.Join(sub, "old"))
	wantFile(t, filepath.Join(sub, "kept"), []byte("o"))
}

// TestTruncateAndPunchNeedFsync: a shrinking truncate and a punched hole
// are undone by a cut; an extension by ftruncate is durable once fsynced.
func TestTruncateAndPunchNeedFsync(t *testing.T) {
	f, _, mnt := mountTest(t, Options{})
	p := filepath.Join(mnt, "t")
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*PageSize/16)
	writeFile(t, p, data, true)
	syncDir(t, mnt)
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	cut(t, f, DropAll)
	wantFile(t, p, data)

	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Fallocate(int(h.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, PageSize, PageSize); err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(8 * PageSize); err != nil {
		t.Fatal(err)
	}
	h.Close()
	cut(t, f, DropAll)
	wantFile(t, p, data)

	h, _ = os.OpenFile(p, os.O_RDWR, 0)
	if err := h.Truncate(8 * PageSize); err != nil {
		t.Fatal(err)
	}
	if err := h.Sync(); err != nil {
		t.Fatal(err)
	}
	h.Close()
	cut(t, f, DropAll)
	wantFile(t, p, append(data, make([]byte, 5*PageSize)...))
}

// runMmapChild runs mmapChild on path and waits for its SIGKILL.
func runMmapChild(t *testing.T, path string, pages, syncPages int, b byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAULTFS_MMAP_CHILD=1", "FAULTFS_PATH="+path,
		fmt.Sprintf("FAULTFS_PAGES=%d", pages), fmt.Sprintf("FAULTFS_SYNC=%d", syncPages), fmt.Sprintf("FAULTFS_BYTE=%d", b))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("mmap child: %v\n%s", err, out)
	}
}

// TestMmapMsync checks what the kernel does with a MAP_SHARED mapping on
// FUSE: the pages msync(MS_SYNC) covered are written back and fsynced and
// survive a cut; the other dirty pages are written back when the process
// dies (WRITE requests the filesystem accepts) but were never synced, so
// the cut drops them.
func TestMmapMsync(t *testing.T) {
	const pages = 16
	f, _, mnt := mountTest(t, Options{})
	p := filepath.Join(mnt, "m")
	writeFile(t, p, make([]byte, pages*PageSize), true)
	syncDir(t, mnt)

	before := f.Stats()
	runMmapChild(t, p, pages, pages/2, 'a')
	after := f.Stats()
	t.Logf("mmap child: %d WRITE requests (%d bytes), %d FSYNC", after.Writes-before.Writes, after.WriteBytes-before.WriteBytes, after.Fsyncs-before.Fsyncs)
	if after.Fsyncs-before.Fsyncs < 1 {
		t.Fatalf("msync(MS_SYNC) sent no FSYNC")
	}
	if after.WriteBytes-before.WriteBytes < pages*PageSize {
		t.Fatalf("the kernel wrote back %d bytes of %d dirty", after.WriteBytes-before.WriteBytes, pages*PageSize)
	}
	wantFile(t, p, bytes.Repeat([]byte("a"), pages*PageSize))
	cs := cut(t, f, DropAll)
	if cs.DroppedPages != pages/2 {
		t.Fatalf("cut dropped %d pages, want the %d not msynced", cs.DroppedPages, pages/2)
	}
	wantFile(t, p, append(bytes.Repeat([]byte("a"), pages/2*PageSize), make([]byte, pages/2*PageSize)...))

	// No msync at all: everything the kernel wrote back is dropped.
	runMmapChild(t, p, pages, 0, 'b')
	wantFile(t, p, bytes.Repeat([]byte("b"), pages*PageSize))
	cut(t, f, DropAll)
	wantFile(t, p, append(bytes.Repeat([]byte("a"), pages/2*PageSize), make([]byte, pages/2*PageSize)...))
}

// TestKeepRandom: with KeepRandom each unsynced page is either wholly old
// or wholly new after a cut, and both happen.
func TestKeepRandom(t *testing.T) {
	const pages = 64
	f, _, mnt := mountTest(t, Options{Seed: 7})
	p := filepath.Join(mnt, "r")
	writeFile(t, p, bytes.Repeat([]byte("o"), pages*PageSize), true)
	syncDir(t, mnt)
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt(bytes.Repeat([]byte("n"), pages*PageSize), 0)
	h.Close()
	cs := cut(t, f, KeepRandom)
	got, err := os.ReadFile(p)
	if err != nil || len(got) != pages*PageSize {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	var kept, dropped int
	for i := 0; i < pages; i++ {
		pg := got[i*PageSize : (i+1)*PageSize]
		switch {
		case bytes.Equal(pg, bytes.Repeat([]byte("n"), PageSize)):
			kept++
		case bytes.Equal(pg, bytes.Repeat([]byte("o"), PageSize)):
			dropped++
		default:
			t.Fatalf("page %d is torn", i)
		}
	}
	if kept == 0 || dropped == 0 || kept != cs.KeptPages || dropped != cs.DroppedPages {
		t.Fatalf("kept %d dropped %d pages (cut says %d, %d)", kept, dropped, cs.KeptPages, cs.DroppedPages)
	}
}

// TestKeepRandomNamesArePrefix: KeepRandom keeps the pending namespace
// operations as a prefix, as a journal commits them: if a later create
// survived, every earlier one did.
func TestKeepRandomNamesArePrefix(t *testing.T) {
	const n = 12
	f, _, mnt := mountTest(t, Options{Seed: 3})
	for i := 0; i < n; i++ {
		writeFile(t, filepath.Join(mnt, fmt.Sprint(i)), []byte{byte(i)}, true)
	}
	cs := cut(t, f, KeepRandom)
	if cs.KeptOps+cs.UndoneOps != n {
		t.Fatalf("kept %d + undid %d namespace operations, want %d", cs.KeptOps, cs.UndoneOps, n)
	}
	for i := 0; i < n; i++ {
		p := filepath.Join(mnt, fmt.Sprint(i))
		if i < cs.KeptOps {
			wantFile(t, p, []byte{byte(i)})
		} else {
			wantGone(t, p)
		}
	}
}

// TestTearSectors: with TearSectors each 512-byte sector of an unsynced
// page is wholly old or wholly new after a cut, and some pages are torn.
func TestTearSectors(t *testing.T) {
	const pages = 16
	f, _, mnt := mountTest(t, Options{Seed: 11})
	p := filepath.Join(mnt, "s")
	writeFile(t, p, bytes.Repeat([]byte("o"), pages*PageSize), true)
	syncDir(t, mnt)
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt(bytes.Repeat([]byte("n"), pages*PageSize), 0)
	h.Close()
	cs := cut(t, f, TearSectors)
	got, err := os.ReadFile(p)
	if err != nil || len(got) != pages*PageSize {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	var kept, torn, dropped int
	for i := 0; i < pages; i++ {
		var newSectors int
		for s := 0; s < PageSize; s += SectorSize {
			sec := got[i*PageSize+s : i*PageSize+s+SectorSize]
			switch {
			case bytes.Equal(sec, bytes.Repeat([]byte("n"), SectorSize)):
				newSectors++
			case !bytes.Equal(sec, bytes.Repeat([]byte("o"), SectorSize)):
				t.Fatalf("page %d sector %d is torn inside", i, s/SectorSize)
			}
		}
		switch newSectors {
		case PageSize / SectorSize:
			kept++
		case 0:
			dropped++
		default:
			torn++
		}
	}
	if torn == 0 || kept != cs.KeptPages || torn != cs.TornPages || dropped != cs.DroppedPages {
		t.Fatalf("kept %d torn %d dropped %d pages (cut says %d, %d, %d)", kept, torn, dropped, cs.KeptPages, cs.TornPages, cs.DroppedPages)
	}
}

// TestStrictNames: with StrictNames an fsync of a new directory does not
// make the directory's own entry durable; only an fsync of its parent
// does. Without it (the journal-prefix rule) the inner fsync commits the
// mkdir too.
func TestStrictNames(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprint("strict=", strict), func(t *testing.T) {
			f, _, mnt := mountTest(t, Options{StrictNames: strict})
			sub := filepath.Join(mnt, "new")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(sub, "f"), []byte("x"), true)
			syncDir(t, sub)
			cut(t, f, DropAll)
			if strict {
				wantGone(t, sub)
			} else {
				wantFile(t, filepath.Join(sub, "f"), []byte("x"))
			}
		})
	}
}

package arena

import (
	"errors"
	"os"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

func open(t *testing.T, dir string) *Arena {
	t.Helper()
	a, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAllocSealReopen fills several segments: each full segment is sealed
// at its append offset, the newest stays active, and a reopen sees the
// same seals, base LSNs and allocations.
func TestAllocSealReopen(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir)
	var lsn uint64
	ends := map[uint64]int64{}
	for i := 0; i < 40; i++ {
		seg, off, err := a.Alloc(8<<10, 24, HeaderSize, lsn)
		if err != nil {
			t.Fatal(err)
		}
		if off%8 != 0 || off < HeaderSize || off+8<<10 > seg.Size() {
			t.Fatalf("allocation at %d of segment %d (%d bytes)", off, seg.ID(), seg.Size())
		}
		seg.Bytes()[off] = 1 // the allocated range is backed by blocks
		ends[seg.ID()] = off + 8<<10
		lsn++
	}
	segs := a.Segments()
	if len(segs) < 4 {
		t.Fatalf("%d segments for 320 KiB in 64 KiB segments", len(segs))
	}
	for i, s := range segs {
		end, sealed := s.Sealed()
		if sealed != (i < len(segs)-1) {
			t.Fatalf("segment %d sealed=%v", s.ID(), sealed)
		}
		if sealed && end != ends[s.ID()] {
			t.Fatalf("segment %d sealed at %d, last allocation ended at %d", s.ID(), end, ends[s.ID()])
		}
		if s.AllocatedBytes() > s.Size() || s.AllocatedBytes() < HeaderSize {
			t.Fatalf("segment %d allocated %d of %d", s.ID(), s.AllocatedBytes(), s.Size())
		}
	}
	a.Close()
	b := open(t, dir)
	defer b.Close()
	for i, s := range b.Segments() {
		end, sealed := s.Sealed()
		if sealed != (i < len(segs)-1) || (sealed && end != ends[s.ID()]) {
			t.Fatalf("after reopen segment %d: sealed=%v end=%d", s.ID(), sealed, end)
		}
		if s.BaseLSN() != segs[i].BaseLSN() {
			t.Fatalf("base LSN %d after reopen, was %d", s.BaseLSN(), segs[i].BaseLSN())
		}
	}
}

func TestHeaderAndSealChecks(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir)
	seg, _, err := a.Alloc(64, 0, HeaderSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Rotate(HeaderSize, 1); err != nil { // seals seg, starts another
		t.Fatal(err)
	}
	if _, sealed := seg.Sealed(); !sealed {
		t.Fatal("Rotate did not seal the active segment")
	}
	path := seg.Path()
	a.Close()

	img, _ := os.ReadFile(path)
	bad := append([]byte(nil), img...)
	bad[sealWordOffset] ^= 0xff // garbage seal word: not a commit point
	os.WriteFile(path, bad, 0o644)
	if _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone}); !errors.Is(err, ErrBadSeal) {
		t.Fatalf("garbled seal word: %v, want ErrBadSeal", err)
	}
	bad = append([]byte(nil), img...)
	bad[20] ^= 1 // segment id inside the checksummed header
	os.WriteFile(path, bad, 0o644)
	if _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone}); !errors.Is(err, ErrBadChecksum) {
		t.Fatalf("flipped header bit on an older segment: %v, want ErrBadChecksum", err)
	}
	bad = append([]byte(nil), img...)
	copy(bad, "NOTMAGIC")
	os.WriteFile(path, bad, 0o644)
	if _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone}); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("bad magic: %v, want ErrBadMagic", err)
	}
}

func TestRemoveAndLock(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir)
	defer a.Close()
	first, _, err := a.Alloc(64, 0, HeaderSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Rotate(HeaderSize, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	before := a.Bytes()
	if err := a.Remove(first.ID()); err != nil {
		t.Fatal(err)
	}
	if a.Segment(first.ID()) != nil || a.Bytes() >= before {
		t.Fatalf("segment still listed or counted after Remove")
	}
	if _, err := os.Stat(first.Path()); !os.IsNotExist(err) {
		t.Fatalf("segment file still there: %v", err)
	}
}

package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/wal"
)

func open(t *testing.T, dir string, segSize int64) *keyspace.Keyspace {
	t.Helper()
	ks, _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: segSize})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func set(t *testing.T, ks *keyspace.Keyspace, db int, k, v string) {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	b := ks.NewBatch()
	b.Set(db, []byte(k), []byte(v), 0)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
}

func del(t *testing.T, ks *keyspace.Keyspace, db int, k string) {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	b := ks.NewBatch()
	b.Del(db, []byte(k))
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
}

func get(ks *keyspace.Keyspace, db int, k string) (string, bool) {
	ks.Lock()
	defer ks.Unlock()
	v, ok, _ := ks.Get(db, []byte(k))
	return string(v), ok
}

func TestReopenKeepsKeys(t *testing.T) {
	dir := t.TempDir()
	ks := open(t, dir, 0)
	for i := 0; i < 1000; i++ {
		set(t, ks, i%16, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
	}
	ks.Lock()
	b := ks.NewBatch()
	b.Del(3, []byte("k3"))
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks = open(t, dir, 0)
	defer ks.Close()
	for i := 0; i < 1000; i++ {
		v, ok := get(ks, i%16, fmt.Sprintf("k%d", i))
		if i == 3 {
			if ok {
				t.Fatalf("deleted key k3 came back")
			}
			continue
		}
		if !ok || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("k%d = %q %v", i, v, ok)
		}
	}
}

func TestUncommittedTxnDropped(t *testing.T) {
	dir := t.TempDir()
	ks := open(t, dir, 0)
	set(t, ks, 0, "a", "1")
	ks.Lock()
	ks.BeginTxn()
	b := ks.NewBatch()
	b.Set(0, []byte("a"), []byte("2"), 0)
	ks.Commit(b)
	b = ks.NewBatch()
	b.Set(0, []byte("b"), []byte("2"), 0)
	ks.Commit(b)
	// no EndTxn: simulate a crash mid-EXEC
	ks.Unlock()
	ks.WaitDurable(ks.LastLSN())
	ks.Close()
	ks = open(t, dir, 0)
	if v, _ := get(ks, 0, "a"); v != "1" {
		t.Fatalf("a = %q, want 1 (half-applied transaction)", v)
	}
	if _, ok := get(ks, 0, "b"); ok {
		t.Fatalf("b exists: half-applied transaction")
	}
	// a committed transaction after the abandoned one is applied
	ks.Lock()
	ks.BeginTxn()
	b = ks.NewBatch()
	b.Set(0, []byte("c"), []byte("3"), 0)
	ks.Commit(b)
	if err := ks.EndTxn(); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	ks.Close()
	ks = open(t, dir, 0)
	defer ks.Close()
	if v, _ := get(ks, 0, "c"); v != "3" {
		t.Fatalf("c = %q, want 3", v)
	}
}

// TestTornTailEveryOffset cuts or garbles the active segment at every
// 8-byte boundary across its last records: recovery must keep exactly a
// prefix of the records and start.
func TestTornTailEveryOffset(t *testing.T) {
	base := t.TempDir()
	ks := open(t, base, arena.MinSegmentSize)
	const n = 6
	for i := 0; i < n; i++ {
		set(t, ks, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%s", i, string(make([]byte, i*7))))
	}
	ks.Close()
	segPath := filepath.Join(base, "seg-0000000000000001.arena")
	orig, err := os.ReadFile(segPath)
	if err != nil {
		t.Fatal(err)
	}
	// What a crash leaves: no clean-shutdown mark (with it, damage before
	// the mark is corruption: TestCleanShutdownDamageIsCorruption).
	clear(orig[arena.ShutdownWordOffset : arena.ShutdownWordOffset+8])
	end := int64(arena.HeaderSize)
	var ends []int64
	for {
		rec, err := wal.DecodeRecord(orig, end)
		if err != nil {
			break
		}
		end += rec.Size
		ends = append(ends, end)
	}
	if len(ends) != n {
		t.Fatalf("found %d records, want %d", len(ends), n)
	}
	first := ends[n-4] - 0 // damage within the last 3 records
	for _, garble := range []bool{false, true} {
		for off := first; off < end; off += 8 {
			dir := t.TempDir()
			img := append([]byte(nil), orig...)
			if garble {
				img[off] ^= 0x5a
			} else {
				clear(img[off:end])
			}
			if err := os.WriteFile(filepath.Join(dir, "seg-0000000000000001.arena"), img, 0o644); err != nil {
				t.Fatal(err)
			}
			ks, rep, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
			if err != nil {
				t.Fatalf("garble=%v off=%d: %v", garble, off, err)
			}
			// the records before the first damaged one survive (padding
			// bytes are not part of a record's checksummed bytes)
			keep := 0
			for keep < n && intact(orig, img, ends, keep) {
				keep++
			}
			for i := 0; i < n; i++ {
				_, ok := get(ks, 0, fmt.Sprintf("k%d", i))
				if ok != (i < keep) {
					t.Fatalf("garble=%v off=%d: k%d present=%v, want %v (report %+v)", garble, off, i, ok, i < keep, rep)
				}
			}
			// the server can write after the cut and recover again
			set(t, ks, 0, "after", "x")
			ks.Close()
			ks = open(t, dir, arena.MinSegmentSize)
			if v, ok := get(ks, 0, "after"); !ok || v != "x" {
				t.Fatalf("garble=%v off=%d: write after cut lost", garble, off)
			}
			ks.Close()
		}
	}
}

// TestSealedCorruptionRefusesStart: without the key index every record is
// validated at start-up. With it, a sealed segment its checkpoint covers
// is not read (the restart would otherwise cost a read of all the data):
// persimmon-check verify finds such damage (cmd/persimmon-check).
func TestSealedCorruptionRefusesStart(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "0")
	dir := t.TempDir()
	ks := open(t, dir, arena.MinSegmentSize)
	val := make([]byte, 1000)
	for i := 0; i < 200; i++ { // > 64 KiB: several segments
		set(t, ks, 0, fmt.Sprintf("k%d", i), string(val))
	}
	ks.Close()
	p := filepath.Join(dir, "seg-0000000000000001.arena")
	img, _ := os.ReadFile(p)
	img[arena.HeaderSize+100] ^= 1
	os.WriteFile(p, img, 0o644)
	_, _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if !errors.Is(err, wal.ErrCorruption) {
		t.Fatalf("err = %v, want corruption", err)
	}
	t.Log(err)
}

// intact reports whether record i's header and payload are unchanged.
func intact(orig, img []byte, ends []int64, i int) bool {
	start := int64(arena.HeaderSize)
	if i > 0 {
		start = ends[i-1]
	}
	rec, err := wal.DecodeRecord(orig, start)
	if err != nil {
		panic(err)
	}
	stop := start + wal.HeaderSize + int64(len(rec.Payload))
	return string(orig[start:stop]) == string(img[start:stop])
}

// TestMidSegmentDamageIsCorruption: damage in the active segment followed by
// more valid records than a torn write can leave stops start-up instead of
// cutting acknowledged records; both a flipped bit and a zeroed page. (With
// the key index, damage before its checkpoint is the scrub's to find:
// TestNewestPrefixScrubbed.)
func TestMidSegmentDamageIsCorruption(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "0")
	for _, damage := range []string{"flip", "zero-page"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			ks := open(t, dir, 0)
			for i := 0; i < 3000; i++ { // ~300 KiB in one segment
				set(t, ks, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%080d", i, i))
			}
			ks.Close()
			p := filepath.Join(dir, "seg-0000000000000001.arena")
			img, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "flip" {
				img[100_000] ^= 1
			} else {
				clear(img[98_304 : 98_304+4096])
			}
			os.WriteFile(p, img, 0o644)
			_, _, err = Open(Options{Dir: dir, Mode: pmem.ModeNone})
			if !errors.Is(err, wal.ErrCorruption) {
				t.Fatalf("err = %v, want corruption", err)
			}
			t.Log(err)
		})
	}
}

// TestNewestHeaderDamageIsNotDeleted: a damaged header on a newest segment
// that holds records is an error, not a half-created file to delete; an
// empty one is removed.
func TestNewestHeaderDamageIsNotDeleted(t *testing.T) {
	dir := t.TempDir()
	ks := open(t, dir, 0)
	set(t, ks, 0, "k", "v")
	ks.Close()
	p := filepath.Join(dir, "seg-0000000000000001.arena")
	img, _ := os.ReadFile(p)
	img[9] ^= 1
	os.WriteFile(p, img, 0o644)
	if _, _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone}); err == nil {
		t.Fatalf("started with a damaged header on a segment holding records")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("segment with records was removed: %v", err)
	}
	// an empty half-created newest segment is removed
	clear(img[arena.HeaderSize:])
	os.WriteFile(p, img, 0o644)
	ks, rep, err := Open(Options{Dir: dir, Mode: pmem.ModeNone})
	if err != nil {
		t.Fatal(err)
	}
	ks.Close()
	if rep.Segments != 0 {
		t.Fatalf("%d segments, want the empty half-created one removed", rep.Segments)
	}
}

func TestDirectoryLocked(t *testing.T) {
	dir := t.TempDir()
	ks := open(t, dir, 0)
	defer ks.Close()
	if _, _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone}); !errors.Is(err, arena.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
}

// TestUnsealedBeforeEmptyNewest recreates the state a kill -9 leaves when
// it lands between creating a new segment and sealing the old one (Alloc
// and Rotate do them in that order): two unsealed segments, the newest
// empty. Recovery must keep every record and seal the older one, which
// the cleaner otherwise waits on forever (found by a break-it pass: an
// idle server spinning at 100% CPU while the arena grew without bound).
func TestUnsealedBeforeEmptyNewest(t *testing.T) {
	dir := t.TempDir()
	ks := open(t, dir, 0)
	for i := 0; i < 100; i++ {
		set(t, ks, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
	}
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}

	a, err := arena.Open(arena.Options{Dir: dir, Mode: pmem.ModeNone})
	if err != nil {
		t.Fatal(err)
	}
	segs := a.Segments()
	old := segs[len(segs)-1]
	end, last, err := wal.ScanSegment(old, func(wal.Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	a.Resume(old, end)
	if err := a.Rotate(end, last); err != nil { // new segment, old one sealed...
		t.Fatal(err)
	}
	if err := old.Unseal(); err != nil { // ...as if the crash came before the seal
		t.Fatal(err)
	}
	oldID := old.ID()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	ks = open(t, dir, 0)
	for i := 0; i < 100; i++ {
		if v, ok := get(ks, 0, fmt.Sprintf("k%d", i)); !ok || v != fmt.Sprintf("v%d", i) {
			t.Fatalf("k%d = %q %v after recovery", i, v, ok)
		}
	}
	set(t, ks, 0, "after", "x")
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	a, err = arena.Open(arena.Options{Dir: dir, Mode: pmem.ModeNone})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, seg := range a.Segments() {
		if seg.ID() == oldID {
			if e, ok := seg.Sealed(); !ok || e != end {
				t.Fatalf("segment %d after recovery: sealed %v at %d, want sealed at %d", oldID, ok, e, end)
			}
		}
	}
}

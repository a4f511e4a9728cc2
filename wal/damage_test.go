package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
)

// TestFreeingReserve: after every batch record the active segment keeps
// room, in the segment and allocated on disk, for a freeing record (a
// FLUSHALL's 2-byte payload) followed by a commit record.
func TestFreeingReserve(t *testing.T) {
	a, w := openWAL(t, t.TempDir(), pmem.ModeNone)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		if _, err := w.Append(TypeBatch, 0, make([]byte, r.IntN(3000))); err != nil {
			t.Fatal(err)
		}
		seg, tail := a.Active()
		need := RecordSize(2) + RecordSize(0)
		if seg.Size()-tail < need || seg.AllocatedBytes()-tail < need {
			t.Fatalf("after append %d: %d bytes left in segment %d, %d allocated past the tail; a FLUSHALL and its commit need %d",
				i, seg.Size()-tail, seg.ID(), seg.AllocatedBytes()-tail, need)
		}
	}
	seg, _ := a.Active()
	loc, err := w.AppendFreeing(TypeBatch, FlagTxn, []byte{4, 0})
	if err != nil || loc.Seg != seg {
		t.Fatalf("AppendFreeing: %v, in segment %v (active %d)", err, loc.Seg, seg.ID())
	}
	if loc, err := w.Append(TypeCommit, FlagTxn, nil); err != nil || loc.Seg != seg {
		t.Fatalf("commit after AppendFreeing: %v", err)
	}
}

// TestFreeingReserveAfterCommit: a transaction's commit record keeps the
// freeing reserve too, so a FLUSHALL after an EXEC that filled the segment
// to its last reserved byte still lands in that segment, and so does its
// own commit record.
func TestFreeingReserveAfterCommit(t *testing.T) {
	a, w := openWAL(t, t.TempDir(), pmem.ModeNone)
	if _, err := w.Append(TypeBatch, 0, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	seg, tail := a.Active()
	// A batch that leaves exactly the reserves free at the segment's end.
	n := int(seg.Size() - tail - commitReserve - freeingReserve - HeaderSize)
	if loc, err := w.Append(TypeBatch, FlagTxn, make([]byte, n)); err != nil || loc.Seg != seg {
		t.Fatalf("filling batch: %v (segment %v)", err, segID(loc.Seg))
	}
	if loc, err := w.Append(TypeCommit, FlagTxn, nil); err != nil || loc.Seg != seg {
		t.Fatalf("commit: %v (segment %v, want %d)", err, segID(loc.Seg), seg.ID())
	}
	if loc, err := w.AppendFreeing(TypeBatch, FlagTxn, []byte{4, 0}); err != nil || loc.Seg != seg {
		t.Fatalf("FLUSHALL after a commit moved to segment %v (%v); the reserve was used up", segID(loc.Seg), err)
	}
	if loc, err := w.Append(TypeCommit, FlagTxn, nil); err != nil || loc.Seg != seg {
		t.Fatalf("FLUSHALL's commit: %v (segment %v), want its group's segment", err, segID(loc.Seg))
	}
	if _, tail := a.Active(); tail != seg.Size() {
		t.Fatalf("tail %d, want the segment full (%d)", tail, seg.Size())
	}
}

// TestCloseMarksCleanShutdown: Close leaves the mark at the end of the
// records; ScanSegment then calls a damaged record before it corruption;
// the next Append clears the mark first.
func TestCloseMarksCleanShutdown(t *testing.T) {
	dir := t.TempDir()
	a, w := openWAL(t, dir, pmem.ModeNone)
	for i := 0; i < 20; i++ {
		if _, err := w.Append(TypeBatch, 0, []byte(strings.Repeat("x", 100))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seg, tail := a.Active()
	if end, ok := seg.ShutdownEnd(); !ok || end != tail {
		t.Fatalf("shutdown mark %d (%v), want the tail %d", end, ok, tail)
	}
	seg.Bytes()[tail-50] ^= 1
	if _, _, err := ScanSegment(seg, func(Record) error { return nil }); !errors.Is(err, ErrCorruption) {
		t.Fatalf("damage before the clean-shutdown mark: %v, want corruption", err)
	}
	seg.Bytes()[tail-50] ^= 1
	w2 := Open(a, w.LastLSN())
	if _, err := w2.Append(TypeBatch, 0, []byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, ok := seg.ShutdownEnd(); ok {
		t.Fatal("the clean-shutdown mark survived an append")
	}
}

// TestStaleShutdownMark: records after the clean-shutdown end (appended by
// a binary that predates the mark and does not clear it) are scanned, not
// ignored and overwritten.
func TestStaleShutdownMark(t *testing.T) {
	a, w := openWAL(t, t.TempDir(), pmem.ModeNone)
	for i := 0; i < 5; i++ {
		if _, err := w.Append(TypeBatch, 0, []byte("before")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seg, _ := a.Active()
	mark, _ := seg.ShutdownEnd()
	// An old writer: appends with the mark left in place.
	w.shutdownMarked = false
	for i := 0; i < 3; i++ {
		if _, err := w.Append(TypeBatch, 0, []byte("after")); err != nil {
			t.Fatal(err)
		}
	}
	if end, ok := seg.ShutdownEnd(); !ok || end != mark {
		t.Fatal("the test needs the stale mark in place")
	}
	_, tail := a.Active()
	end, last, err := ScanSegment(seg, func(Record) error { return nil })
	if err != nil || end != tail || last != 8 {
		t.Fatalf("scan with a stale mark: end %d (tail %d), last LSN %d, %v; want all 8 records", end, tail, last, err)
	}
}

// segID names a segment in a failure message (nil: none).
func segID(s *arena.Segment) any {
	if s == nil {
		return nil
	}
	return s.ID()
}

// appendSynced appends n 100-byte batch records, each made durable (Sync)
// before the next is appended, and returns their offsets.
func appendSynced(t *testing.T, w *WAL, n int) []int64 {
	t.Helper()
	offs := make([]int64, n)
	for i := range offs {
		loc, err := w.Append(TypeBatch, 0, []byte(strings.Repeat("d", 100)))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		offs[i] = loc.Off
	}
	return offs
}

// TestDurableRecordDamageIsCorruption: a record that was durable before
// later records were appended cannot be torn by a crash, so a damaged one
// followed by records saying so is corruption, not a torn tail to cut
// (which would drop it and every acknowledged record after it). Records
// persisted by one group commit may still be torn in any order: damage
// among them stays a torn tail.
func TestDurableRecordDamageIsCorruption(t *testing.T) {
	const n = 10
	t.Run("synced one by one", func(t *testing.T) {
		a, w := openWAL(t, t.TempDir(), pmem.ModeMsync)
		offs := appendSynced(t, w, n)
		seg, _ := a.Active()
		seg.Bytes()[offs[n-3]+HeaderSize+10] ^= 1 // the payload of LSN n-2
		end, last, err := ScanSegment(seg, func(Record) error { return nil })
		if !errors.Is(err, ErrCorruption) || IsTornTail(err) {
			t.Fatalf("damaged durable record: end %d, last LSN %d, %v; want corruption (a torn-tail cut loses LSN %d to %d)", end, last, err, n-2, n)
		}
		for _, want := range []string{seg.Path(), fmt.Sprintf("offset %d", offs[n-3]), "persimmon-check repair", fmt.Sprintf("LSN %d", n-2)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not say %q: %v", want, err)
			}
		}
		if end != offs[n-3] || last != n-3 {
			t.Errorf("scan stopped at %d (LSN %d), want the damaged record's offset %d (LSN %d)", end, last, offs[n-3], n-3)
		}
	})
	t.Run("one group commit", func(t *testing.T) {
		a, w := openWAL(t, t.TempDir(), pmem.ModeMsync)
		appendSynced(t, w, 2)
		var offs []int64
		for i := 0; i < n; i++ {
			loc, err := w.Append(TypeBatch, 0, []byte(strings.Repeat("g", 100)))
			if err != nil {
				t.Fatal(err)
			}
			offs = append(offs, loc.Off)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		seg, _ := a.Active()
		seg.Bytes()[offs[n-3]+HeaderSize+10] ^= 1
		end, last, err := ScanSegment(seg, func(Record) error { return nil })
		if !IsTornTail(err) || end != offs[n-3] || last != n-1 {
			t.Fatalf("damage inside the last group commit: end %d, last LSN %d, %v; want a torn tail at %d after LSN %d", end, last, err, offs[n-3], n-1)
		}
	})
}

// reopen closes a and opens its directory again as recovery would after a
// crash: the newest segment resumes where its records end.
func reopen(t *testing.T, a *arena.Arena, mode pmem.Mode) (*arena.Arena, *WAL) {
	t.Helper()
	dir := a.Dir()
	a.Close()
	a, err := arena.Open(arena.Options{Dir: dir, Mode: mode, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	segs := a.Segments()
	seg := segs[len(segs)-1]
	end, last, err := ScanSegment(seg, func(Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	a.Resume(seg, end)
	return a, Open(a, last)
}

// lastGap is the durable gap of the last record of seg.
func lastGap(t *testing.T, seg *arena.Segment) uint16 {
	t.Helper()
	var gap uint16
	if _, _, err := ScanSegment(seg, func(r Record) error { gap = r.Gap; return nil }); err != nil {
		t.Fatal(err)
	}
	return gap
}

// TestGapsAfterReopen: the records recovery found are not claimed durable
// by a record appended after a restart until a group commit has persisted
// them (a crash may have come before their own), in the modes where a
// persist outlives a power cut; that first group commit persists them.
func TestGapsAfterReopen(t *testing.T) {
	a, w := openWAL(t, t.TempDir(), pmem.ModeMsync)
	appendSynced(t, w, 5)
	if seg, _ := a.Active(); lastGap(t, seg) != 1 {
		t.Fatalf("gap of a record appended right after a sync: %d, want 1", lastGap(t, seg))
	}
	a, w = reopen(t, a, pmem.ModeMsync)
	if _, err := w.Append(TypeBatch, 0, []byte("after")); err != nil {
		t.Fatal(err)
	}
	seg, _ := a.Active()
	if g := lastGap(t, seg); g != 6 {
		t.Fatalf("gap of the first record after a reopen: %d, want 6 (LSN 6 back to the segment's base, 0)", g)
	}
	if from := w.flushedIn(seg); from != arena.HeaderSize {
		t.Fatalf("the first group commit after a reopen persists from %d, want the first record %d", from, arena.HeaderSize)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(TypeBatch, 0, []byte("later")); err != nil {
		t.Fatal(err)
	}
	if g := lastGap(t, seg); g != 1 {
		t.Fatalf("gap after the first group commit: %d, want 1", g)
	}
	// none mode: a persist reaches the page cache, where the records
	// found were; nothing to persist again.
	a, w = reopen(t, a, pmem.ModeNone)
	if _, err := w.Append(TypeBatch, 0, []byte("none")); err != nil {
		t.Fatal(err)
	}
	if seg, _ := a.Active(); lastGap(t, seg) != 1 {
		t.Fatalf("none mode: gap after a reopen %d, want 1", lastGap(t, seg))
	}
}

// setVersion rewrites the format version in seg's header (and the
// header checksum over it), as a segment written by another build has.
func setVersion(t *testing.T, path string, v uint32) {
	t.Helper()
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(img[8:], v)
	sum := xxhash.Sum64(img[:40])
	if v >= 2 { // version 2 covers the header page but [40, 48) and [64, 88) (package arena)
		sum = xxhash.Sum64(append(append(append([]byte(nil), img[:40]...), img[48:64]...), img[88:arena.HeaderSize]...))
	}
	binary.LittleEndian.PutUint64(img[40:], sum)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVersion1Segment: a version-1 active segment (written by a build
// that requires zero in bytes 6-7 of a record header) goes on taking
// version-1 records, with no durable gap, so that build can still read it;
// a durable gap in a version-1 segment is an invalid record; damage in it
// is judged by the old rule (at most TornTailLimit bytes after it: a torn
// tail). A segment of a version this build does not know is refused.
func TestVersion1Segment(t *testing.T) {
	a, w := openWAL(t, t.TempDir(), pmem.ModeMsync)
	appendSynced(t, w, 3)
	seg, _ := a.Active()
	path := seg.Path()
	// What a version-1 writer left: the same records with no gap.
	for off := int64(arena.HeaderSize); ; {
		rec, err := DecodeRecord(seg.Bytes(), off)
		if err != nil {
			break
		}
		encodeRecord(seg.Bytes()[off:off+rec.Size], rec.Type, rec.Flags, GapUnknown, rec.LSN, rec.Payload)
		off += rec.Size
	}
	a.Close()
	setVersion(t, path, arena.FormatVersion1)
	a, w = reopen(t, a, pmem.ModeMsync)
	offs := appendSynced(t, w, 5)
	seg, _ = a.Active()
	if seg.Version() != arena.FormatVersion1 {
		t.Fatalf("version %d after reopen, want 1", seg.Version())
	}
	buf := seg.Bytes()
	for _, off := range offs {
		if buf[off+6] != 0 || buf[off+7] != 0 {
			t.Fatalf("record at %d of a version-1 segment has a durable gap %d", off, binary.LittleEndian.Uint16(buf[off+6:]))
		}
	}
	buf[offs[2]+HeaderSize+1] ^= 1
	if end, _, err := ScanSegment(seg, func(Record) error { return nil }); !IsTornTail(err) || end != offs[2] {
		t.Fatalf("damage in a version-1 segment: end %d, %v; want the old rule's torn tail at %d", end, err, offs[2])
	}
	buf[offs[2]+HeaderSize+1] ^= 1
	// A record with a gap, checksum and all, where the version forbids it.
	rec, err := DecodeRecord(buf, offs[4])
	if err != nil {
		t.Fatal(err)
	}
	encodeRecord(buf[offs[4]:offs[4]+rec.Size], rec.Type, rec.Flags, 1, rec.LSN, rec.Payload)
	if end, _, err := ScanSegment(seg, func(Record) error { return nil }); !IsTornTail(err) || end != offs[4] || !strings.Contains(err.Error(), "durable gap") {
		t.Fatalf("a gap in a version-1 segment: end %d, %v; want an invalid record at %d", end, err, offs[4])
	}
	a.Close()
	setVersion(t, path, arena.FormatVersion+1)
	if _, err := arena.Open(arena.Options{Dir: a.Dir(), Mode: pmem.ModeMsync, SegmentSize: arena.MinSegmentSize}); !errors.Is(err, arena.ErrBadVersion) {
		t.Fatalf("a segment of version %d: %v, want ErrBadVersion", arena.FormatVersion+1, err)
	}
}

// TestDamagedShutdownWord: a clean-shutdown word that is set but does not
// verify (a flipped bit; a crash never leaves one) may have been a clean
// shutdown's mark, so the segment is scanned without a torn tail: a bad
// record is corruption naming the word, an intact log scans whole, and
// the next append clears the word.
func TestDamagedShutdownWord(t *testing.T) {
	for _, clean := range []bool{true, false} {
		a, w := openWAL(t, t.TempDir(), pmem.ModeNone)
		var offs []int64
		for i := 0; i < 20; i++ {
			loc, err := w.Append(TypeBatch, 0, []byte(strings.Repeat("s", 100)))
			if err != nil {
				t.Fatal(err)
			}
			offs = append(offs, loc.Off)
		}
		if clean {
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		seg, tail := a.Active()
		seg.Bytes()[arena.ShutdownWordOffset+3] ^= 0x20
		if !seg.ShutdownWordDamaged() {
			t.Fatalf("clean=%v: a flipped bit in the clean-shutdown word is not reported", clean)
		}
		if end, last, err := ScanSegment(seg, func(Record) error { return nil }); err != nil || end != tail || last != 20 {
			t.Fatalf("clean=%v: intact records: end %d (tail %d), last %d, %v", clean, end, tail, last, err)
		}
		seg.Bytes()[offs[19]+HeaderSize+5] ^= 1 // the last record: a torn tail, were the word intact and unset
		_, _, err := ScanSegment(seg, func(Record) error { return nil })
		if !errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), "clean-shutdown word") {
			t.Fatalf("clean=%v: damage with a damaged clean-shutdown word: %v, want corruption naming the word", clean, err)
		}
		seg.Bytes()[offs[19]+HeaderSize+5] ^= 1
		w2 := Open(a, 20)
		if _, err := w2.Append(TypeBatch, 0, []byte("next")); err != nil {
			t.Fatal(err)
		}
		if seg.ShutdownWordDamaged() || binary.LittleEndian.Uint64(seg.Bytes()[arena.ShutdownWordOffset:]) != 0 {
			t.Fatalf("clean=%v: the damaged word survived an append", clean)
		}
	}
}

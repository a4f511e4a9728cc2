package wal

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

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

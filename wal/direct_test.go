package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
)

// TestDirectRecords appends records of at least DirectMin bytes (written
// with pwritev, as one payload and as parts of odd sizes) between small
// ones in every mode and segment size, then checks that the records read
// back whole through the mapping, before and after a reopen, that in
// pmem and none modes the flushed offset moved past each direct record,
// and that a flipped byte inside one is detected.
func TestDirectRecords(t *testing.T) {
	for _, mode := range []pmem.Mode{pmem.ModePmem, pmem.ModeMsync, pmem.ModeNone} {
		for _, segSize := range []int64{arena.MinSegmentSize, 8 << 20} {
			t.Run(fmt.Sprintf("%v/seg%d", mode, segSize), func(t *testing.T) {
				testDirectRecords(t, mode, segSize)
			})
		}
	}
}

func testDirectRecords(t *testing.T, mode pmem.Mode, segSize int64) {
	dir := t.TempDir()
	a, err := arena.Open(arena.Options{Dir: dir, Mode: mode, SegmentSize: segSize})
	if err != nil {
		t.Fatal(err)
	}
	w := Open(a, 0)
	rng := rand.New(rand.NewPCG(1, uint64(segSize)))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	var want [][]byte
	small := func(i int) {
		p := []byte(fmt.Sprintf("small-%d", i))
		if _, err := w.Append(TypeBatch, 0, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	checkFlushed := func(loc Location, n int) {
		t.Helper()
		if mode == pmem.ModeMsync {
			return
		}
		if got, end := w.flushedIn(loc.Seg), loc.Off+RecordSize(n); got != end {
			t.Fatalf("flushed offset %d after a direct record ending at %d", got, end)
		}
	}
	for i := 0; i < 3; i++ {
		small(i)
		// One payload.
		p := random(DirectMin + 3 + i*4096)
		loc, err := w.Append(TypeBatch, FlagTxn|FlagTxnBegin, p)
		if err != nil {
			t.Fatal(err)
		}
		checkFlushed(loc, len(p))
		want = append(want, p)
		small(10 + i)
		// Parts of odd sizes, some empty, one spanning several chunks.
		parts := [][]byte{random(5), nil, random(directChunk*2 + 1), random(DirectMin), random(1)}
		loc, err = w.AppendParts(TypeBatch, 0, parts)
		if err != nil {
			t.Fatal(err)
		}
		checkFlushed(loc, len(bytes.Join(parts, nil)))
		want = append(want, bytes.Join(parts, nil))
		// Small parts go through the mapping.
		sp := [][]byte{[]byte("ab"), []byte("cde")}
		if _, err := w.AppendParts(TypeBatch, 0, sp); err != nil {
			t.Fatal(err)
		}
		want = append(want, []byte("abcde"))
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	scan := func(a *arena.Arena) [][]byte {
		t.Helper()
		var got [][]byte
		for _, seg := range a.Segments() {
			_, _, err := ScanSegment(seg, func(r Record) error {
				got = append(got, append([]byte(nil), r.Payload...))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return got
	}
	compare := func(got [][]byte) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%d records, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d: %d bytes differ from the %d appended", i, len(got[i]), len(want[i]))
			}
		}
	}
	compare(scan(a))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a, err = arena.Open(arena.Options{Dir: dir, Mode: mode, SegmentSize: segSize})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	compare(scan(a))

	// A byte flipped in the middle of a direct record is caught.
	flipped := 0
	for _, seg := range a.Segments() {
		buf := seg.Bytes()
		for off := int64(arena.HeaderSize); ; {
			rec, err := DecodeRecord(buf, off)
			if err != nil {
				break
			}
			if rec.Size >= DirectMin {
				mid := rec.Offset + rec.Size/2
				buf[mid] ^= 0x40
				if _, err := DecodeRecord(buf, off); !errors.Is(err, ErrInvalidRecord) {
					t.Fatalf("flipped byte at %d of %s: %v, want an invalid record", mid, seg.Path(), err)
				}
				buf[mid] ^= 0x40
				flipped++
			}
			off += rec.Size
		}
	}
	if flipped != 6 {
		t.Fatalf("%d direct records found, want 6", flipped)
	}
}

package wal

import (
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
)

// BenchmarkAppendBig appends one 100 MB record per iteration (written with
// pwritev, see writeDirect) into a fresh segment of its own, in pmem mode,
// as a 100 MB SET does: the payload is a request buffer (the first part,
// the operation's head, is small), the segment's pages are new.
func BenchmarkAppendBig(b *testing.B) {
	const size = 100_000_000
	val := make([]byte, size)
	for i := range val {
		val[i] = byte(i * 7)
	}
	head := []byte("\x01\x00\x07big:key\x00\x00\x00\x00\x00\x00\x00\x00\x80\xc2\xd7\x2f")
	a, err := arena.Open(arena.Options{Dir: b.TempDir(), Mode: pmem.ModePmem, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	w := Open(a, 0)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loc, err := w.AppendParts(TypeBatch, 0, [][]byte{head, val})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WaitDurable(loc.LSN); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		// The segment goes, as the cleaner removes it after a DEL.
		if err := w.Rotate(); err != nil {
			b.Fatal(err)
		}
		if err := a.Remove(loc.Seg.ID()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

package keyindex

import (
	"bytes"
	"fmt"
	"testing"
)

// TestDeltaLog adds writes of keys from empty to longer than a chunk,
// reads them back interleaved with more adds (as the migration applies
// its delta in steps while it grows), and checks each write comes back
// in order and whole, and that applied chunks are let go.
func TestDeltaLog(t *testing.T) {
	type w struct {
		key      []byte
		loc      uint64
		expiring bool
	}
	var want []w
	var d deltaLog
	read := 0
	readUpTo := func(n int) {
		for ; read < n; read++ {
			k, loc, exp := d.next()
			if g := want[read]; !bytes.Equal(k, g.key) || loc != g.loc || exp != g.expiring {
				t.Fatalf("write %d: got %q %x %v, want %q %x %v", read, k, loc, exp, g.key, g.loc, g.expiring)
			}
		}
	}
	for i := range 20000 {
		var k []byte
		switch {
		case i%5000 == 17:
			k = bytes.Repeat([]byte{'x'}, deltaChunk+100) // a chunk of its own
		case i%7 == 0:
			k = nil
		default:
			k = fmt.Appendf(nil, "k:%014d", i)
		}
		x := w{k, uint64(i)<<40 | uint64(i*3), i%3 == 0}
		want = append(want, x)
		d.add(x.key, x.loc, x.expiring)
		if d.n != len(want) {
			t.Fatalf("n %d after %d adds", d.n, len(want))
		}
		if i%1000 == 999 {
			readUpTo(len(want) - 500)
		}
	}
	readUpTo(len(want))
	for i, c := range d.chunks[:d.rc] {
		if c != nil {
			t.Fatalf("chunk %d of %d still held after every write of it was read", i, d.rc)
		}
	}
}

// TestDeltaLogCompact bounds the memory a write of a 16-byte key takes
// (the bulk load's case: millions of writes during one migration) and
// checks adding one allocates nothing but whole chunks.
func TestDeltaLogCompact(t *testing.T) {
	var d deltaLog
	key := []byte("k:00000000000042")
	const n = 100000
	for i := range n {
		d.add(key, uint64(i), false)
	}
	total := 0
	for _, c := range d.chunks {
		total += cap(c)
	}
	if per := float64(total) / n; per > 28 {
		t.Fatalf("%.1f bytes a write of a 16-byte key, want <= 28", per)
	}
	allocs := testing.AllocsPerRun(1000, func() { d.add(key, 1, true) })
	if allocs > 0.01 {
		t.Fatalf("%.3f allocations an add, want only a chunk now and then", allocs)
	}
}

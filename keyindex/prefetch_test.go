package keyindex

import (
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"
)

// TestPrefetch: Prefetch of a batch mixing staged, published and absent
// keys changes no answer and no staging (the lookup memo included), and
// asks for the record of a published key whose home slot it is.
func TestPrefetch(t *testing.T) {
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var batch [][]byte
	for i := 0; i < 300; i++ {
		k := fmt.Sprintf("k%d", i)
		loc, _ := l.add(k, false)
		ix.Stage([]byte(k), loc, false)
		batch = append(batch, []byte(k))
	}
	ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))})
	for i := 0; i < 300; i += 3 { // a third staged again, some deleted
		k := fmt.Sprintf("k%d", i)
		loc, _ := l.add(k, i%2 == 0)
		ix.Stage([]byte(k), loc, false)
	}
	for i := 0; i < 50; i++ {
		batch = append(batch, []byte(fmt.Sprintf("absent%d", i)))
	}
	type answer struct {
		loc uint64
		ok  bool
	}
	before := map[string]answer{}
	for _, k := range batch {
		loc, ok := ix.Get(k)
		before[string(k)] = answer{loc, ok}
	}
	ix.Lookup(batch[1]) // a memo Prefetch must leave as it is
	asked := 0
	side := 0
	ix.Prefetch(batch, func(loc uint64) ([]byte, unsafe.Pointer) {
		asked++
		if loc>>40 != 1 || int(loc&(1<<40-1)) >= len(l.buf) {
			t.Fatalf("Prefetch asked for %#x, no record's location", loc)
		}
		return l.buf[loc&(1<<40-1):], unsafe.Pointer(&side)
	})
	if asked == 0 && prefetching {
		t.Fatal("Prefetch asked for no record")
	}
	loc, _ := l.add(string(batch[1]), false)
	if err := ix.Stage(batch[1], loc, false); err != nil {
		t.Fatal(err)
	}
	before[string(batch[1])] = answer{loc, true}
	for _, k := range batch {
		loc, ok := ix.Get(k)
		if a := before[string(k)]; a != (answer{loc, ok}) {
			t.Fatalf("key %q: %#x %v after Prefetch, %#x %v before", k, loc, ok, a.loc, a.ok)
		}
	}
	if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
		t.Fatal(err)
	}
	check(t, ix, l, l.model(len(l.recs)))
	ix.Prefetch(batch, func(uint64) ([]byte, unsafe.Pointer) { return nil, nil }) // an empty overlay, no record
}

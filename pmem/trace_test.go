//go:build pmemtrace && unix

package pmem

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func put(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

// crashPoints replays t and returns a copy of every crash point's dirty
// units and the all-old and all-newest images of file 0.
type pointCopy struct {
	kind         TraceKind
	dirty        []DirtyUnit
	files        int
	oldest, newe []byte
}

func crashPoints(tr *Trace) []pointCopy {
	var out []pointCopy
	events := tr.Events()
	tr.Replay(func(c *CrashPoint) bool {
		p := pointCopy{kind: events[c.Event].Kind, files: len(c.Files)}
		for _, u := range c.Dirty {
			u.New = slices.Clone(u.New)
			p.dirty = append(p.dirty, u)
		}
		if len(c.Files) > 0 {
			p.oldest = slices.Clone(c.Image(func(int) int { return 0 })[0])
			p.newe = slices.Clone(c.Image(func(i int) int { return len(c.Dirty[i].New) })[0])
		}
		out = append(out, p)
		return true
	})
	return out
}

func TestTraceFlushFence(t *testing.T) {
	dir := t.TempDir()
	untraced := mustMap(t, filepath.Join(dir, "before"), pageSize, ModePmem)
	defer mustClose(t, untraced)

	tr := StartTrace()
	defer tr.Stop()
	r := mustMap(t, filepath.Join(dir, "seg"), 2*pageSize, ModePmem)
	b := r.Bytes()
	put(b, 0, 11)
	put(b, 8, 12)
	put(b, 64, 13) // another line, never flushed
	r.Flush(0, 16) // event 1: line 0 only
	put(b, 16, 14) // same line, stored after its flush: not covered
	Drain()        // event 2
	untraced.Bytes()[0] = 1
	untraced.Flush(0, 1)                     // not traced: no event
	if err := r.Persist(64, 8); err != nil { // events 3 (flush line 1), 4 (fence)
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // event 5
		t.Fatal(err)
	}
	os.Remove(r.Path())
	Drain() // event 6 is the removal noticed, 7 the fence
	tr.Stop()
	Drain() // not recorded

	kinds := []TraceKind{TraceMap, TraceFlush, TraceFence, TraceFlush, TraceFence, TraceUnmap, TraceRemove, TraceFence}
	events := tr.Events()
	var got []TraceKind
	for _, ev := range events {
		got = append(got, ev.Kind)
	}
	if !slices.Equal(got, kinds) {
		t.Fatalf("event kinds %v, want %v", got, kinds)
	}
	if ev := events[1]; ev.Lo != 0 || ev.Hi != 64 || len(ev.Stores) != 3 {
		t.Fatalf("first flush %+v, want [0, 64) with the 3 stores before it", ev)
	}

	pts := crashPoints(tr)
	offs := func(p pointCopy) []int64 {
		var o []int64
		for _, u := range p.dirty {
			o = append(o, u.Off)
		}
		return o
	}
	// After the flush, before the fence: all three stores undetermined.
	if o := offs(pts[1]); !slices.Equal(o, []int64{0, 8, 64}) {
		t.Errorf("after the flush: dirty units %v, want [0 8 64]", o)
	}
	// After the fence: line 0 persistent as flushed; 16 (stored after the
	// flush) and 64 (never flushed) undetermined.
	if o := offs(pts[2]); !slices.Equal(o, []int64{16, 64}) {
		t.Errorf("after the fence: dirty units %v, want [16 64]", o)
	}
	if v := binary.LittleEndian.Uint64(pts[2].oldest[8:]); v != 12 {
		t.Errorf("after the fence the persistent unit 8 holds %d, want 12", v)
	}
	if v := binary.LittleEndian.Uint64(pts[2].oldest[16:]); v != 0 {
		t.Errorf("all-old image: unit 16 holds %d, want 0", v)
	}
	if v := binary.LittleEndian.Uint64(pts[2].newe[16:]); v != 14 {
		t.Errorf("all-new image: unit 16 holds %d, want 14", v)
	}
	// After Persist(64, 8): only 16 is left.
	if o := offs(pts[4]); !slices.Equal(o, []int64{16}) {
		t.Errorf("after Persist: dirty units %v, want [16]", o)
	}
	// Closed but present, then removed.
	if pts[5].files != 1 || pts[6].files != 0 {
		t.Errorf("files at the close and after the removal: %d, %d; want 1, 0", pts[5].files, pts[6].files)
	}
}

func TestTraceCandidates(t *testing.T) {
	tr := StartTrace()
	defer tr.Stop()
	r := mustMap(t, filepath.Join(t.TempDir(), "seg"), pageSize, ModePmem)
	defer mustClose(t, r)
	b := r.Bytes()
	put(b, 0, 1)
	Drain() // observes 1 (not flushed)
	put(b, 0, 2)
	Drain() // observes 2
	put(b, 0, 0)
	Drain() // back to the persistent value: 1 and 2 may still be on media
	tr.Stop()
	pts := crashPoints(tr)
	last := pts[len(pts)-1]
	if len(last.dirty) != 1 || !slices.Equal(last.dirty[0].New, []uint64{1, 2}) || last.dirty[0].Old != 0 {
		t.Fatalf("dirty units %+v, want unit 0: old 0, new [1 2]", last.dirty)
	}
}

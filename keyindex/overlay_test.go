package keyindex

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOverlayModel stages more keys than a checkpoint keeps buffers for
// (the hash table rehashes many times), with rewrites and deletions, some
// looked up first (the memo's path) and some not, and checks every
// staged-state view against a map: Lookup, IsStaged, Staged, RangeStaged
// (each key once, with its newest state), Len.
func TestOverlayModel(t *testing.T) {
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(5, 6))
	const keys = overlayKeep + overlayKeep/2
	for round := 0; round < 2; round++ {
		staged := map[string]uint64{}
		for i := 0; i < keys*2; i++ {
			k := fmt.Sprintf("k%d", r.IntN(keys))
			if r.IntN(2) == 0 {
				ix.Lookup([]byte(k))
			}
			loc, _ := l.add(k, r.IntN(8) == 0)
			if err := ix.Stage([]byte(k), loc, loc != 0 && r.IntN(3) == 0); err != nil {
				t.Fatal(err)
			}
			staged[k] = loc
		}
		if ix.Staged() != len(staged) {
			t.Fatalf("Staged %d, want %d", ix.Staged(), len(staged))
		}
		model := l.model(len(l.recs))
		for k, want := range staged {
			got, _, ok := ix.Lookup([]byte(k))
			if ok != (want != 0) || got != want || !ix.IsStaged([]byte(k)) {
				t.Fatalf("key %q: Lookup %#x %v, IsStaged %v; want %#x", k, got, ok, ix.IsStaged([]byte(k)), want)
			}
		}
		if ix.IsStaged([]byte("absent")) {
			t.Fatal("IsStaged of a key never staged")
		}
		seen := map[string]bool{}
		ix.RangeStaged(func(k string, loc uint64, _ bool) bool {
			if seen[k] {
				t.Fatalf("RangeStaged gave %q twice", k)
			}
			seen[k] = true
			if want, ok := staged[k]; !ok || want != loc {
				t.Fatalf("RangeStaged %q at %#x, want %#x (staged %v)", k, loc, want, ok)
			}
			return true
		})
		if len(seen) != len(staged) {
			t.Fatalf("RangeStaged gave %d keys, want %d", len(seen), len(staged))
		}
		if ix.Len() != len(model) {
			t.Fatalf("Len %d, want %d", ix.Len(), len(model))
		}
		if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
			t.Fatal(err)
		}
		check(t, ix, l, model)
	}
}

// TestOverlayKeysOutliveReset: the key strings RangeStaged gives stay
// unchanged after the checkpoint that empties the overlay and after new
// keys of the same lengths are staged (a cursor keeps them), both for a
// small overlay (whose buffers a checkpoint keeps) and a big one.
func TestOverlayKeysOutliveReset(t *testing.T) {
	for _, n := range []int{100, overlayKeep + 1} {
		l := newMemLog()
		ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("a%07d", i)
			loc, _ := l.add(k, false)
			ix.Stage([]byte(k), loc, false)
		}
		var kept []string
		ix.RangeStaged(func(k string, _ uint64, _ bool) bool {
			kept = append(kept, k)
			return true
		})
		want := append([]string(nil), kept...)
		for i := range want {
			want[i] = string([]byte(want[i])) // copies
		}
		for round := 0; round < 2; round++ {
			if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("b%07d", i)
				loc, _ := l.add(k, false)
				ix.Stage([]byte(k), loc, false)
			}
		}
		for i := range kept {
			if kept[i] != want[i] {
				t.Fatalf("n=%d: kept key %d is %q, was %q", n, i, kept[i], want[i])
			}
		}
		ix.Close()
	}
}

// TestRangeStagedStart: RangeStaged starts at a random staged key (as a
// map's iteration did: RANDOMKEY takes the first staged key it accepts).
func TestRangeStagedStart(t *testing.T) {
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for i := 0; i < 8; i++ {
		k := fmt.Sprintf("k%d", i)
		loc, _ := l.add(k, false)
		ix.Stage([]byte(k), loc, false)
	}
	firsts := map[string]bool{}
	for i := 0; i < 400; i++ {
		ix.RangeStaged(func(k string, _ uint64, _ bool) bool {
			firsts[k] = true
			return false
		})
	}
	if len(firsts) != 8 {
		t.Fatalf("RangeStaged started at %d of 8 keys in 400 calls", len(firsts))
	}
}

// BenchmarkLookupStage is a SET's use of the index: a lookup, then the
// staging of the same key, a checkpoint every 4096 stagings (as the
// keyspace's), over 100,000 keys in the table.
func BenchmarkLookupStage(b *testing.B) {
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(b.TempDir(), "idx"), l.opts())
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	const n = 100000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("\x00key:%012d", i))
		loc, _ := l.add(string(keys[i]), false)
		ix.Stage(keys[i], loc, false)
	}
	ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))})
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int, b.N)
	locs := make([]uint64, b.N)
	for i := range order {
		order[i] = r.IntN(n)
		locs[i], _ = l.add(string(keys[order[i]]), false)
	}
	c0 := cpuNanos()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[order[i]]
		ix.Lookup(k)
		ix.Stage(k, locs[i], false)
		if i%4096 == 4095 {
			ix.Checkpoint(Checkpoint{LSN: uint64(i)})
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N), "cpu-ns/op") // the process's CPU time: a loaded machine disturbs it less than ns/op
}

// cpuNanos is the process's user and system CPU time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestRangeStagedCheckpointInside: a callback that stages keys and then
// checkpoints (the overlay reset under the walk) ends the walk without
// visiting an entry of the new overlay.
func TestRangeStagedCheckpointInside(t *testing.T) {
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for i := 0; i < 50; i++ {
		k := fmt.Sprintf("a%d", i)
		loc, _ := l.add(k, false)
		ix.Stage([]byte(k), loc, false)
	}
	calls := 0
	ix.RangeStaged(func(k string, _ uint64, _ bool) bool {
		calls++
		if k[0] != 'a' {
			t.Fatalf("visited %q, staged inside the walk", k)
		}
		for i := 0; i < 100; i++ {
			k := fmt.Sprintf("b%d", i)
			loc, _ := l.add(k, false)
			ix.Stage([]byte(k), loc, false)
		}
		if calls == 2 {
			if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				k := fmt.Sprintf("c%d", i)
				loc, _ := l.add(k, false)
				ix.Stage([]byte(k), loc, false)
			}
		}
		return true
	})
	if calls != 2 {
		t.Fatalf("%d calls, want 2 (the walk ends at the checkpoint)", calls)
	}
}

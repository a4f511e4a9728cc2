package keyindex

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestScanHomesOncePerKey walks the home slots in random steps while keys
// are updated (staged over their stored slots), deleted, created and
// checkpointed between the steps: every key present for the whole walk is
// reported exactly once, and every key reported is present at its newest
// location when it is.
func TestScanHomesOncePerKey(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		l := newMemLog()
		opts := l.opts()
		opts.Capacity = 1 << 14 // no growth during the walk
		ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), opts)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 7))
		const stable, churn = 3000, 2000
		stage := func(k string, del bool) {
			loc, _ := l.add(k, del)
			if err := ix.Stage([]byte(k), loc, false); err != nil {
				t.Fatal(err)
			}
		}
		checkpoint := func() {
			if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs)), Seg: 1, Off: l.next() & (1<<40 - 1)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < stable; i++ {
			stage(fmt.Sprintf("s:%d", i), false)
			if i == stable/2 {
				checkpoint() // half stored, half staged when the walk begins
			}
		}
		for i := 0; i < churn; i++ {
			stage(fmt.Sprintf("c:%d", i), false)
		}
		gen := ix.Generation()
		seen := map[string]int{}
		slots := ix.Stats().Slots
		for pos := 0; pos < slots; {
			step := 1 + r.IntN(64)
			ix.ScanHomes(pos, pos+step, func(key []byte, loc uint64, _ bool) {
				if got, ok := ix.Get(key); !ok || got != loc {
					t.Fatalf("seed %d: %q reported at %#x, its newest is %#x (%v)", seed, key, loc, got, ok)
				}
				seen[string(key)]++
			})
			pos += step
			for j := 0; j < 20; j++ {
				switch r.IntN(4) {
				case 0, 1:
					stage(fmt.Sprintf("s:%d", r.IntN(stable)), false) // an update
				case 2:
					stage(fmt.Sprintf("c:%d", r.IntN(churn)), r.IntN(2) == 0)
				case 3:
					stage(fmt.Sprintf("n:%d", r.IntN(1<<20)), false) // new during the walk
				}
			}
			if r.IntN(8) == 0 {
				checkpoint()
			}
		}
		if ix.Generation() != gen {
			t.Fatalf("seed %d: the table grew during the walk: the test needs a bigger capacity", seed)
		}
		for i := 0; i < stable; i++ {
			if k := fmt.Sprintf("s:%d", i); seen[k] != 1 {
				t.Fatalf("seed %d: %q reported %d times, want once", seed, k, seen[k])
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("seed %d: %q reported %d times", seed, k, n)
			}
		}
		ix.Close()
	}
}

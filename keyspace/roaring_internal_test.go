package keyspace

import (
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestTRComplement: trComplement gives the members and the container kinds
// of roaring.Flip, on the dense path (a range from 0 with a container of
// the source in every window) and on the Flip path (gaps, runs, ranges not
// from 0).
func TestTRComplement(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sparse := roaring.New()
	for i := 0; i < 10000; i++ {
		sparse.Add(uint32(rng.IntN(10000000)) + 1)
	}
	nearlyFull := roaring.New() // complement under 4,096 per window: arrays
	for v := uint32(0); v < 5<<16+123; v++ {
		if rng.IntN(30) != 0 {
			nearlyFull.Add(v) // bitsets, not the runs AddRange makes
		}
	}
	mixed := sparse.Clone()
	mixed.Or(nearlyFull)
	gappy := roaring.BitmapOf(3, 10<<16, 10<<16+5) // windows 1..9 empty: runs
	runs := roaring.New()
	runs.AddRange(100, 200000)
	runs.RunOptimize()
	for _, c := range []struct {
		name       string
		x          *roaring.Bitmap
		start, end uint64
		dense      bool
	}{
		{"sparse", sparse, 0, uint64(sparse.Maximum()) + 1, true},
		{"sparse-past-max", sparse, 0, uint64(sparse.Maximum()) + 77, true},
		{"nearly-full", nearlyFull, 0, uint64(nearlyFull.Maximum()) + 1, true},
		{"mixed", mixed, 0, uint64(mixed.Maximum()) + 1, true},
		{"one", roaring.BitmapOf(0), 0, 1, true},
		{"word-aligned", roaring.BitmapOf(1, 63), 0, 64, true},
		{"gappy", gappy, 0, uint64(gappy.Maximum()) + 1, false},
		{"runs", runs, 0, uint64(runs.Maximum()) + 1, false},
		{"not-from-0", sparse, 65536, uint64(sparse.Maximum()) + 1, false},
	} {
		in := roaring.New()
		in.AddRange(c.start, c.end)
		x := roaring.And(c.x, in)
		want := roaring.Flip(x, c.start, c.end)
		got := trComplement(x.Clone(), c.start, c.end)
		if !got.Equals(want) || got.Stats() != want.Stats() {
			t.Fatalf("%s: %d members %+v, want %d %+v", c.name, got.GetCardinality(), got.Stats(), want.GetCardinality(), want.Stats())
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The result is a value of its own: changing it leaves a second
		// complement (the bitsets share only their own word array) alone.
		again := trComplement(x.Clone(), c.start, c.end)
		got.Flip(c.start, c.end)
		if !again.Equals(want) {
			t.Fatalf("%s: changing one complement changed another", c.name)
		}
		dense := c.start == 0 && !x.HasRunCompression() && uint64(x.Stats().Containers) == (c.end-1)>>16+1
		if dense != c.dense {
			t.Fatalf("%s: dense path %v, want %v", c.name, dense, c.dense)
		}
	}
}

package commands

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// trRandomBitmap is n random offsets in [1, r] (duplicates possible), as
// scripts/bench-roaring.sh loads them.
func trRandomBitmap(seed uint64, n int, r uint32) *roaring.Bitmap {
	rng := rand.New(rand.NewPCG(seed, 1))
	bm := roaring.New()
	for i := 0; i < n; i++ {
		bm.Add(rng.Uint32N(r) + 1)
	}
	return bm
}

// BenchmarkTRAnd compares roaring.And and AndCardinality with the
// serialized AND on the bench's TR.BITOP keys (densities 0.01%, 0.1%, 1%
// of 1~10,000,000). Wall time: on a shared machine read it with
// perf stat -e task-clock.
func BenchmarkTRAnd(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		x, y := trRandomBitmap(1, n, 10000000), trRandomBitmap(2, n, 10000000)
		bms := []*roaring.Bitmap{x, y}
		b.Run(fmt.Sprint("lib/", n), func(b *testing.B) {
			for b.Loop() {
				_ = roaring.And(x, y).GetCardinality()
			}
		})
		b.Run(fmt.Sprint("libcard/", n), func(b *testing.B) {
			for b.Loop() {
				_ = x.AndCardinality(y)
			}
		})
		b.Run(fmt.Sprint("serial/", n), func(b *testing.B) {
			for b.Loop() {
				s := trAndScratchGet()
				s.andAll(bms, false)
				trAndScratchPut(s)
			}
		})
		b.Run(fmt.Sprint("serialcard/", n), func(b *testing.B) {
			for b.Loop() {
				_, _ = trAndCount(bms)
			}
		})
	}
}

// BenchmarkTRAndArrays intersects pairs of array containers of the sizes
// the bench's BITOP keys hold (6.5, 65 and 650 members a container at
// 0.01%, 0.1% and 1% density), 256 pairs per op, counting and storing.
func BenchmarkTRAndArrays(b *testing.B) {
	for _, n := range []int{7, 65, 650} {
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		var pairs [][2][]byte
		for range 256 {
			var p [2][]byte
			for k := range p {
				bm := roaring.New()
				for bm.GetCardinality() < uint64(n) {
					bm.Add(rng.Uint32N(1 << 16))
				}
				for _, v := range bm.ToArray() {
					p[k] = append(p[k], byte(v), byte(v>>8))
				}
			}
			pairs = append(pairs, p)
		}
		s := new(trAndScratch)
		for _, count := range []bool{true, false} {
			b.Run(fmt.Sprintf("%d/count=%v", n, count), func(b *testing.B) {
				for b.Loop() {
					s.data = s.data[:0]
					for _, p := range pairs {
						s.andContainer(p[0], len(p[0])/2, p[1], len(p[1])/2, count)
					}
				}
			})
		}
	}
}

package keyspace

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortOffsets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func(n int) []uint32{
		"random": func(n int) []uint32 {
			s := make([]uint32, n)
			for i := range s {
				s[i] = r.Uint32()
			}
			return s
		},
		"segment": func(n int) []uint32 {
			s := make([]uint32, n)
			for i := range s {
				s[i] = r.Uint32N(64 << 20)
			}
			return s
		},
		"equal": func(n int) []uint32 {
			s := make([]uint32, n)
			for i := range s {
				s[i] = 77 << 16
			}
			return s
		},
		"descending": func(n int) []uint32 {
			s := make([]uint32, n)
			for i := range s {
				s[i] = uint32(n - i)
			}
			return s
		},
		"low byte": func(n int) []uint32 {
			s := make([]uint32, n)
			for i := range s {
				s[i] = 5<<24 | r.Uint32N(256)
			}
			return s
		},
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 255, 256, 1000, 100000} {
			src := gen(n)
			orig := slices.Clone(src)
			got := sortOffsets(src)
			want := slices.Clone(src)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s n=%d: not sorted like slices.Sort", name, n)
			}
			if !slices.Equal(src, orig) {
				t.Fatalf("%s n=%d: the source was changed", name, n)
			}
			if n > 0 && &got[0] == &src[0] {
				t.Fatalf("%s n=%d: the result shares the source's array", name, n)
			}
		}
	}
}

func BenchmarkSortOffsets(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]uint32, 600000)
	for i := range src {
		src[i] = r.Uint32N(64 << 20)
	}
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			sortOffsets(src)
		}
	})
	b.Run("pdq", func(b *testing.B) {
		for b.Loop() {
			s := slices.Clone(src)
			slices.Sort(s)
		}
	})
}

package commands

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// trShape builds a bitmap of one of the container shapes the serialized
// AND meets, over the 2^16-wide windows given.
func trShape(rng *rand.Rand, kind string, windows ...uint32) *roaring.Bitmap {
	bm := roaring.New()
	for _, w := range windows {
		lo := uint64(w) << 16
		switch kind {
		case "empty":
		case "one":
			bm.Add(uint32(lo) + uint32(rng.IntN(1<<16)))
		case "sparse": // ~65 members: an array
			for i := 0; i < 65; i++ {
				bm.Add(uint32(lo) + uint32(rng.IntN(1<<16)))
			}
		case "array-max": // exactly 4,096: the largest array
			for bm.CardinalityInRange(lo, lo+1<<16) < trArrayMax {
				bm.Add(uint32(lo) + uint32(rng.IntN(1<<16)))
			}
		case "dense": // ~1/2: a bitset
			for v := uint64(0); v < 1<<16; v++ {
				if rng.IntN(2) == 0 {
					bm.Add(uint32(lo + v))
				}
			}
		case "thin-bitset": // 4,097..: a bitset just above the array limit
			for bm.CardinalityInRange(lo, lo+1<<16) <= trArrayMax {
				bm.Add(uint32(lo) + uint32(rng.IntN(1<<16)))
			}
		case "full": // 65,536 members, as a bitset (Add and AddRange make a run)
			words := make([]uint64, 1024)
			for i := range words {
				words[i] = ^uint64(0)
			}
			bm.Or(roaring.AddOffset64(roaring.FromDense(words, false), int64(lo)))
		case "edges": // 0 and 65,535 of the window
			bm.AddMany([]uint32{uint32(lo), uint32(lo + 0xFFFF)})
		}
	}
	return bm
}

// TestTRSerialAnd: the serialized AND gives roaring.And's members and
// container kinds (TR.STAT's statistics) for every pair of container
// shapes, including empty bitmaps, full containers, arrays of exactly
// 4,096, results of exactly 4,096 and just above, skewed sizes (the
// binary-search path) and the windows of offsets 0 and 2^32-1; its
// serialization decodes and validates, and the count mode agrees.
func TestTRSerialAnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	kinds := []string{"empty", "one", "sparse", "array-max", "dense", "thin-bitset", "full", "edges"}
	windowSets := [][]uint32{{0}, {0xFFFF}, {0, 1, 7, 0xFFFF}, {3, 5}}
	s := new(trAndScratch)
	for _, ka := range kinds {
		for _, kb := range kinds {
			for wi, wa := range windowSets {
				wb := windowSets[(wi+1)%len(windowSets)]
				if wi%2 == 0 {
					wb = wa // the same windows: every container pairs
				}
				a, b := trShape(rng, ka, wa...), trShape(rng, kb, wb...)
				name := fmt.Sprintf("%s%v&%s%v", ka, wa, kb, wb)
				trCheckSerialAnd(t, s, name, a, b)
			}
		}
	}
	// Skewed sizes within one window: 1..64 members against a large array.
	big := trShape(rng, "array-max", 2)
	for n := 1; n <= 200; n *= 3 {
		small := roaring.New()
		for small.GetCardinality() < uint64(n) {
			if rng.IntN(2) == 0 { // half of them members of big
				v, _ := big.Select(uint32(rng.IntN(trArrayMax)))
				small.Add(v)
			} else {
				small.Add(2<<16 + uint32(rng.IntN(1<<16)))
			}
		}
		trCheckSerialAnd(t, s, fmt.Sprint("skew-", n), small, big)
		trCheckSerialAnd(t, s, fmt.Sprint("skew-rev-", n), big, small)
	}
	// Two bitsets whose AND holds exactly 4,096 members (an array) and
	// 4,097 (a bitset).
	for _, n := range []int{trArrayMax, trArrayMax + 1} {
		a, b := roaring.New(), roaring.New()
		for v := uint32(0); v < 1<<16; v++ {
			switch {
			case v < uint32(n): // in both
				a.Add(v)
				b.Add(v)
			case v%2 == 0:
				a.Add(v)
			default:
				b.Add(v)
			}
		}
		trCheckSerialAnd(t, s, fmt.Sprint("bitsets-to-", n), a, b)
	}
	// Random bitmaps like the benchmark's, and three keys at once.
	x, y, z := trRandomBitmap(1, 10000, 10000000), trRandomBitmap(2, 10000, 10000000), trRandomBitmap(3, 300000, 10000000)
	trCheckSerialAnd(t, s, "random", x, y)
	trCheckSerialAnd(t, s, "random-skew", x, z)
	p, n, ok := s.andAll([]*roaring.Bitmap{x, z, y}, false)
	want := roaring.FastAnd(x, z, y)
	got := roaring.New()
	if !ok || got.UnmarshalBinary(p) != nil || !got.Equals(want) || n != want.GetCardinality() {
		t.Fatalf("three keys: ok %v, %d members, want %d", ok, n, want.GetCardinality())
	}
	if _, n, _ := s.andAll([]*roaring.Bitmap{x, z, y}, true); n != want.GetCardinality() {
		t.Fatalf("three keys, count: %d, want %d", n, want.GetCardinality())
	}
}

func trCheckSerialAnd(t *testing.T, s *trAndScratch, name string, a, b *roaring.Bitmap) {
	t.Helper()
	if a.HasRunCompression() || b.HasRunCompression() {
		t.Fatalf("%s: a shape with run containers", name)
	}
	want := roaring.And(a, b)
	p, n, ok := s.andAll([]*roaring.Bitmap{a, b}, false)
	if !ok {
		t.Fatalf("%s: refused", name)
	}
	got := roaring.New()
	if err := got.UnmarshalBinary(p); err != nil {
		t.Fatalf("%s: the result does not decode: %v", name, err)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("%s: the result does not validate: %v", name, err)
	}
	if !got.Equals(want) || got.Stats() != want.Stats() || n != want.GetCardinality() {
		t.Fatalf("%s: %d members (counted %d) %+v, want %d %+v", name, got.GetCardinality(), n, got.Stats(), want.GetCardinality(), want.Stats())
	}
	if _, n, _ := s.andAll([]*roaring.Bitmap{a, b}, true); n != want.GetCardinality() {
		t.Fatalf("%s: counted %d, want %d", name, n, want.GetCardinality())
	}
	// The scratch bitset is clean again: a second AND is not polluted.
	for i, w := range s.mark {
		if w != 0 {
			t.Fatalf("%s: mark word %d left %x", name, i, w)
		}
	}
}

// TestTRSerialAndRefusesRuns: bitmaps with run containers go to
// roaring.And (the serialization has another form), and the commands
// still answer right for them.
func TestTRSerialAndRefusesRuns(t *testing.T) {
	runs := roaring.New()
	runs.AddRange(0, 100000)
	runs.RunOptimize()
	if trAndFast([]*roaring.Bitmap{runs, roaring.BitmapOf(5)}) {
		t.Fatal("a bitmap with run containers taken by the serialized AND")
	}
	if !trAndFast([]*roaring.Bitmap{roaring.BitmapOf(5), nil}) {
		t.Fatal("two small array bitmaps refused")
	}
	c := newKeyspaceClient(t)
	cmdReply(t, c, "TR.SETRANGE", "r", "0", "99999")
	cmdReply(t, c, "TR.OPTIMIZE", "r")
	cmdReply(t, c, "TR.SETBITS", "s", "5", "99999", "100000", "4294967295")
	cmdReply(t, c, "TR.SETBITS", "u", "0", "5", "4294967295")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"TR.BITOP", "d", "AND", "r", "s"}, rInt(2)},
		{[]string{"TR.BITOPCARD", "AND", "r", "s"}, rInt(2)},
		{[]string{"TR.BITOP", "d", "AND", "s", "u"}, rInt(2)},
		{[]string{"TR.BITOPCARD", "AND", "s", "u", "u"}, rInt(2)},
		{[]string{"TR.BITOP", "d", "AND", "s", "u", "r"}, rInt(1)},
		{[]string{"TR.BITOP", "d", "AND", "s", "missing"}, rInt(0)},
		{[]string{"EXISTS", "d"}, rInt(0)},
		{[]string{"TR.BITOP", "d", "AND", "s", "u"}, rInt(2)},
		{[]string{"TR.RANGE", "d", "0", "4294967295"}, "*2\r\n:5\r\n:4294967295\r\n"},
	} {
		if got := cmdReply(t, c, tc.args...); got != tc.want {
			t.Fatalf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestTRSerialAndStreamSplit: the streamed source may arrive in Writes of
// any size (WriteTo happens to write the header, then one container per
// Write): the same result from pieces of 1 byte up, and a serialization
// cut short, with trailing bytes, or with run containers is refused.
func TestTRSerialAndStreamSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	a := trShape(rng, "sparse", 0, 3, 9, 0xFFFF)
	a.Or(trShape(rng, "dense", 1, 2))
	b := trShape(rng, "sparse", 0, 1, 9)
	b.Or(trShape(rng, "thin-bitset", 2, 3, 0xFFFF))
	want := roaring.And(a, b)
	s := new(trAndScratch)
	x, ok := s.serialize(a)
	if !ok {
		t.Fatal("serialize refused")
	}
	pb, err := b.ToBytes()
	if err != nil {
		t.Fatal(err)
	}
	chunked := func(p []byte, size func() int) func(io.Writer) (int64, error) {
		return func(w io.Writer) (int64, error) {
			for q := p; len(q) > 0; {
				k := min(size(), len(q))
				if _, err := w.Write(q[:k]); err != nil {
					return 0, err
				}
				q = q[k:]
			}
			return int64(len(p)), nil
		}
	}
	for _, size := range []func() int{
		func() int { return 1 },
		func() int { return 3 },
		func() int { return 1 + rng.IntN(9000) },
		func() int { return len(pb) },
	} {
		n, ok := s.and(x, chunked(pb, size), false)
		got := roaring.New()
		if !ok || got.UnmarshalBinary(s.out) != nil || !got.Equals(want) || got.Stats() != want.Stats() || n != want.GetCardinality() {
			t.Fatalf("split stream: ok %v, %d members, want %d", ok, n, want.GetCardinality())
		}
		if n, ok := s.and(x, chunked(pb, size), true); !ok || n != want.GetCardinality() {
			t.Fatalf("split stream, count: ok %v, %d, want %d", ok, n, want.GetCardinality())
		}
	}
	runs := roaring.New()
	runs.AddRange(10, 100000)
	runs.RunOptimize()
	pr, _ := runs.ToBytes()
	for name, p := range map[string][]byte{
		"short":    pb[:len(pb)-1],
		"header":   pb[:20],
		"trailing": append(slices.Clone(pb), 0, 0),
		"runs":     pr,
	} {
		if _, ok := s.and(x, chunked(p, func() int { return 7 }), false); ok {
			t.Fatalf("%s: accepted", name)
		}
	}
}

package commands

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
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

// TestTRSerialAnd: the serialized AND (and DIFF, both ways) gives
// roaring.And's (roaring.AndNot's) members and container kinds (TR.STAT's statistics) for every pair of container
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
	// DIFF both ways: roaring.AndNot's members and container kinds.
	for _, d := range [][2]*roaring.Bitmap{{a, b}, {b, a}, {a, a}} {
		want := roaring.AndNot(d[0], d[1])
		p, n, ok := s.diff(d[0], d[1], false)
		got := roaring.New()
		if !ok || got.UnmarshalBinary(p) != nil || got.Validate() != nil {
			t.Fatalf("%s: DIFF: ok %v, the result does not decode or validate", name, ok)
		}
		if !got.Equals(want) || got.Stats() != want.Stats() || n != want.GetCardinality() {
			t.Fatalf("%s: DIFF: %d members (counted %d) %+v, want %d %+v", name, got.GetCardinality(), n, got.Stats(), want.GetCardinality(), want.Stats())
		}
		if _, n, _ := s.diff(d[0], d[1], true); n != want.GetCardinality() {
			t.Fatalf("%s: DIFF counted %d, want %d", name, n, want.GetCardinality())
		}
	}
	// The scratch bitset is clean again: a second AND is not polluted.
	for i, w := range s.mark {
		if w != 0 {
			t.Fatalf("%s: mark word %d left %x", name, i, w)
		}
	}
}

// TestTRSerialAndRefusesRuns: bitmaps with run containers go to
// roaring.And (the serialization has another form), as do bitmaps of a
// few members a container (trAndMinPerContainer), and the commands still
// answer right for them.
func TestTRSerialAndRefusesRuns(t *testing.T) {
	runs := roaring.New()
	runs.AddRange(0, 100000)
	runs.RunOptimize()
	if trAndFast([]*roaring.Bitmap{runs, roaring.BitmapOf(5)}) {
		t.Fatal("a bitmap with run containers taken by the serialized AND")
	}
	if trAndFast([]*roaring.Bitmap{roaring.BitmapOf(5), nil}) {
		t.Fatal("a bitmap of one member a container taken by the serialized AND")
	}
	dense := trShape(rand.New(rand.NewPCG(1, 1)), "sparse", 0, 0xFFFF)
	if !trAndFast([]*roaring.Bitmap{dense, roaring.BitmapOf(5), nil}) {
		t.Fatal("bitmaps of ~44 members a container refused")
	}
	// The container count trAndFast estimates from the serialized size is
	// exact for arrays: the threshold falls where Stats puts it.
	for _, n := range []int{1000, 2000, 2400, 2500, 3000, 10000} {
		bm := trRandomBitmap(uint64(n), n, 10000000)
		st := bm.Stats()
		want := st.Cardinality >= trAndMinPerContainer*st.Containers
		if got := trAndFast([]*roaring.Bitmap{bm}); got != want {
			t.Fatalf("%d members in %d containers: taken %v, want %v", st.Cardinality, st.Containers, got, want)
		}
	}
	// Bitsets only look denser.
	if !trAndFast([]*roaring.Bitmap{trShape(rand.New(rand.NewPCG(2, 2)), "dense", 0, 1, 2)}) {
		t.Fatal("bitset containers refused")
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
		{[]string{"TR.BITOP", "d", "DIFF", "s", "u"}, rInt(2)},
		{[]string{"TR.RANGE", "d", "0", "4294967295"}, "*2\r\n:99999\r\n:100000\r\n"},
		{[]string{"TR.BITOP", "d", "DIFF", "s", "r"}, rInt(2)},
		{[]string{"TR.RANGE", "d", "0", "4294967295"}, "*2\r\n:100000\r\n:4294967295\r\n"},
		{[]string{"TR.DIFF", "d", "u", "missing"}, "+OK\r\n"},
		{[]string{"TR.RANGE", "d", "0", "4294967295"}, "*3\r\n:0\r\n:5\r\n:4294967295\r\n"},
		{[]string{"TR.BITOP", "d", "DIFF", "missing", "u"}, rInt(0)},
		{[]string{"EXISTS", "d"}, rInt(0)},
		{[]string{"TR.BITOP", "d", "DIFF", "u", "u"}, rInt(0)},
		{[]string{"TR.BITOPCARD", "DIFF", "s", "u"}, rInt(2)},
	} {
		if got := cmdReply(t, c, tc.args...); got != tc.want {
			t.Fatalf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestTRStampWrap: the stamp table gives right answers across its
// wraparound (a new stamp per container, the table zeroed every 255):
// 700 pairs of arrays on one scratch, AND and DIFF, counted and stored,
// against a plain merge.
func TestTRStampWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	s := new(trAndScratch)
	arr := func(n int) []byte {
		bm := roaring.New()
		for bm.GetCardinality() < uint64(n) {
			bm.Add(uint32(rng.IntN(2000))) // crowded: the pairs share members
		}
		var p []byte
		for _, v := range bm.ToArray() {
			p = append(p, byte(v), byte(v>>8))
		}
		return p
	}
	for i := 0; i < 700; i++ {
		a, b := arr(1+rng.IntN(300)), arr(1+rng.IntN(300))
		var and, diff []byte
		set := map[uint16]bool{}
		for k := 0; k < len(b); k += 2 {
			set[binary.LittleEndian.Uint16(b[k:])] = true
		}
		for k := 0; k < len(a); k += 2 {
			if set[binary.LittleEndian.Uint16(a[k:])] {
				and = append(and, a[k], a[k+1])
			} else {
				diff = append(diff, a[k], a[k+1])
			}
		}
		s.data = s.data[:0]
		if n := s.andArraysStamp(a, b, false); n != len(and)/2 || !bytes.Equal(s.data, and) {
			t.Fatalf("pair %d: AND stored %d members, want %d", i, n, len(and)/2)
		}
		if n := s.andArraysStamp(b, a, true); n != len(and)/2 {
			t.Fatalf("pair %d: AND counted %d, want %d", i, n, len(and)/2)
		}
		s.data = s.data[:0]
		if n := s.andNotArraysStamp(a, b, false); n != len(diff)/2 || !bytes.Equal(s.data, diff) {
			t.Fatalf("pair %d: DIFF stored %d members, want %d", i, n, len(diff)/2)
		}
		if n := s.andNotArraysStamp(a, b, true); n != len(diff)/2 {
			t.Fatalf("pair %d: DIFF counted %d, want %d", i, n, len(diff)/2)
		}
	}
}

// TestTRSerialSource: the stored AND copies a first source of at most
// trAndMaxSource serialized bytes, whatever its span, and refuses a larger
// one (which then takes roaring.And); the commands answer the same for a
// refused source.
func TestTRSerialSource(t *testing.T) {
	if !trSerialSource(roaring.New()) || !trSerialSource(roaring.BitmapOf(1, 1<<31)) {
		t.Fatal("a small bitmap refused")
	}
	// 600 bitsets (4.9 MB serialized) against one of 500 (4.1 MB, the bound
	// from the span decides).
	words := make([]uint64, 600*1024)
	for i := range words {
		words[i] = 0x5555555555555555
	}
	big := roaring.FromDense(words, false)
	small := roaring.FromDense(words[:500*1024], false)
	if big.GetSerializedSizeInBytes() <= trAndMaxSource || trSerialSource(big) {
		t.Fatalf("a first source of %d serialized bytes taken", big.GetSerializedSizeInBytes())
	}
	if small.GetSerializedSizeInBytes() > trAndMaxSource || !trSerialSource(small) {
		t.Fatalf("a first source of %d serialized bytes refused", small.GetSerializedSizeInBytes())
	}
	c := newKeyspaceClient(t)
	args := []string{"TR.SETBITS", "b"}
	for v := uint32(0); v < 600<<16; v += 20011 { // a member in most windows of big's span
		args = append(args, fmt.Sprint(v))
	}
	cmdReply(t, c, args...)
	c.KS.Lock()
	bm, _ := c.KS.Roaring(0, []byte("b"))
	want := roaring.And(big, bm)
	b := c.KS.NewBatch()
	b.TRMerge(c.DB, []byte("big"), big)
	err := c.KS.Commit(b)
	c.KS.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := cmdReply(t, c, "TR.BITOP", "d", "AND", "big", "b"); got != rInt(int64(want.GetCardinality())) {
		t.Fatalf("TR.BITOP d AND big b: %q, want %d", got, want.GetCardinality())
	}
	c.KS.Lock()
	d, _ := c.KS.Roaring(0, []byte("d"))
	ok := d != nil && d.Equals(want)
	c.KS.Unlock()
	if !ok {
		t.Fatal("the destination of an AND with a refused first source differs from roaring.And")
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
		wantDiff := roaring.AndNot(a, b)
		n, ok = s.andNot(x, chunked(pb, size), false)
		got = roaring.New()
		if !ok || got.UnmarshalBinary(s.out) != nil || !got.Equals(wantDiff) || got.Stats() != wantDiff.Stats() || n != wantDiff.GetCardinality() {
			t.Fatalf("split stream DIFF: ok %v, %d members, want %d", ok, n, wantDiff.GetCardinality())
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

// TestTRBitOpSerialCommands: the commands that take the serialized AND
// (TR.BITOP AND and DIFF, TR.DIFF, TR.BITOPCARD AND / XOR / DIFF,
// TR.JACCARD, TR.CONTAINS) on keys it takes answer as the library's
// operations on the same bitmaps, and TR.BITOP's destination holds the
// library's members and container kinds (TR.STAT), in windows at 0 and at
// 2^32-1, with a bitset container among the arrays.
func TestTRBitOpSerialCommands(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	c := newKeyspaceClient(t)
	models := map[string]*roaring.Bitmap{}
	for w, k := range []string{"p", "q", "r"} {
		// Windows in common, one of its own (DIFF keeps it) and a bitset
		// in window 2.
		bm := trShape(rng, "sparse", 0, 1, 0xFFFF, uint32(5+w))
		for i := 0; i < 6000; i++ {
			bm.Add(2<<16 + uint32(rng.IntN(1<<16)))
		}
		for i := 0; i < 300; i++ { // crowded at 0..1999: AND and DIFF both keep members there
			bm.Add(uint32(rng.IntN(2000)))
		}
		args := []string{"TR.SETBITS", k}
		for _, v := range bm.ToArray() {
			args = append(args, fmt.Sprint(v))
		}
		cmdReply(t, c, args...)
		models[k] = bm
	}
	bms := []*roaring.Bitmap{models["p"], models["q"]}
	if !trAndFast(bms) {
		t.Fatal("the test's bitmaps are not taken by the serialized AND")
	}
	stat := func(bm *roaring.Bitmap) string {
		st := bm.Stats()
		return fmt.Sprint(st.ArrayContainers, st.BitmapContainers, st.RunContainers, st.Cardinality)
	}
	card := func(bm *roaring.Bitmap) string { return rInt(int64(bm.GetCardinality())) }
	p, q, r := models["p"], models["q"], models["r"]
	for _, tc := range []struct {
		args []string
		want string
		dest *roaring.Bitmap
	}{
		{[]string{"TR.BITOP", "d", "AND", "p", "q"}, card(roaring.And(p, q)), roaring.And(p, q)},
		{[]string{"TR.BITOP", "d", "AND", "p", "q", "r"}, card(roaring.FastAnd(p, q, r)), roaring.FastAnd(p, q, r)},
		{[]string{"TR.BITOP", "d", "DIFF", "p", "q"}, card(roaring.AndNot(p, q)), roaring.AndNot(p, q)},
		{[]string{"TR.BITOP", "d", "DIFF", "q", "p"}, card(roaring.AndNot(q, p)), roaring.AndNot(q, p)},
		{[]string{"TR.DIFF", "d", "r", "p"}, "+OK\r\n", roaring.AndNot(r, p)},
		{[]string{"TR.BITOP", "p", "AND", "p", "q"}, card(roaring.And(p, q)), nil}, // the destination is a source
		{[]string{"TR.BITOPCARD", "AND", "q", "r"}, card(roaring.And(q, r)), nil},
		{[]string{"TR.BITOPCARD", "XOR", "q", "r"}, card(roaring.Xor(q, r)), nil},
		{[]string{"TR.BITOPCARD", "DIFF", "q", "r"}, card(roaring.AndNot(q, r)), nil},
		{[]string{"TR.CONTAINS", "q", "r"}, rInt(0), nil},
	} {
		if got := cmdReply(t, c, tc.args...); got != tc.want {
			t.Fatalf("%.60q: %q, want %q", tc.args, got, tc.want)
		}
		if tc.dest == nil {
			continue
		}
		c.KS.Lock()
		bm, err := c.KS.Roaring(0, []byte(tc.args[1]))
		ok := err == nil && bm != nil && bm.Equals(tc.dest) && stat(bm) == stat(tc.dest)
		got := "missing"
		if bm != nil {
			got = stat(bm)
		}
		c.KS.Unlock()
		if !ok {
			t.Fatalf("%.60q: the destination holds %s (err %v), want %s", tc.args, got, err, stat(tc.dest))
		}
	}
	pq := roaring.And(p, q) // p now holds p AND q: a subset of q
	if got := cmdReply(t, c, "TR.CONTAINS", "p", "q"); got != rInt(1) {
		t.Fatalf("TR.CONTAINS p q after p = p AND q: %q", got)
	}
	j := float64(roaring.And(pq, r).GetCardinality()) / float64(roaring.Or(pq, r).GetCardinality())
	if got := cmdReply(t, c, "TR.JACCARD", "p", "r"); got != fmt.Sprintf("$%d\r\n%s\r\n", len(strconv.FormatFloat(j, 'g', 17, 64)), strconv.FormatFloat(j, 'g', 17, 64)) {
		t.Fatalf("TR.JACCARD p r: %q, want %v", got, j)
	}
}

package keyspace_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/persimmon-db/persimmon/keyspace"
)

// roaringOf returns a copy of the bitmap at key (nil if missing), failing
// the test on a wrong type.
func roaringOf(t *testing.T, ks *keyspace.Keyspace, db int, key string) *roaring.Bitmap {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	bm, err := ks.Roaring(db, []byte(key))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if bm == nil {
		return nil
	}
	return bm.Clone()
}

func wantRoaring(t *testing.T, ks *keyspace.Keyspace, db int, key string, want *roaring.Bitmap, when string) {
	t.Helper()
	got := roaringOf(t, ks, db, key)
	switch {
	case want == nil || want.IsEmpty():
		if got != nil {
			t.Fatalf("%s: %s holds %d bits, want no key", when, key, got.GetCardinality())
		}
	case got == nil:
		t.Fatalf("%s: %s is missing, want %d bits", when, key, want.GetCardinality())
	case !got.Equals(want):
		t.Fatalf("%s: %s holds %d bits (min %d max %d), want %d (min %d max %d)", when, key,
			got.GetCardinality(), got.Minimum(), got.Maximum(), want.GetCardinality(), want.Minimum(), want.Maximum())
	}
}

// TestRoaringOpsReplay applies every TR operation and checks the live
// value and the value recovered from the log agree with a model, including
// the deletion of a bitmap that becomes empty and TYPE / OBJECT ENCODING.
func TestRoaringOpsReplay(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 0)
	defer func() { ks.Close() }()
	k := []byte("bm")
	commit(t, ks, func(b *keyspace.Batch) { b.TRAdd(0, k, 1, 5, 9, 1<<20, 1<<32-1) })
	commit(t, ks, func(b *keyspace.Batch) { b.TRRemove(0, k, 5, 6) })
	commit(t, ks, func(b *keyspace.Batch) { b.TRAddRange(0, k, 100, 200) })
	commit(t, ks, func(b *keyspace.Batch) { b.TRRemoveRange(0, k, 150, 160) })
	commit(t, ks, func(b *keyspace.Batch) { b.TRFlipRange(0, k, 190, 210) })
	commit(t, ks, func(b *keyspace.Batch) { b.TROptimize(0, k) })
	other := roaring.BitmapOf(7, 70000, 4000000)
	commit(t, ks, func(b *keyspace.Batch) { b.TRMerge(0, k, other) })
	// A flip of a missing key creates it; one that empties a key deletes it.
	commit(t, ks, func(b *keyspace.Batch) { b.TRFlipRange(0, []byte("f"), 4294967290, 4294967295) })
	commit(t, ks, func(b *keyspace.Batch) { b.TRAdd(0, []byte("gone"), 3) })
	commit(t, ks, func(b *keyspace.Batch) { b.TRFlipRange(0, []byte("gone"), 3, 3) })

	want := roaring.BitmapOf(1, 9, 1<<20, 1<<32-1)
	want.AddRange(100, 201)
	want.RemoveRange(150, 161)
	want.Flip(190, 211)
	want.Or(other)
	wantF := roaring.New()
	wantF.AddRange(4294967290, 1<<32)
	check := func(when string) {
		t.Helper()
		wantRoaring(t, ks, 0, "bm", want, when)
		wantRoaring(t, ks, 0, "f", wantF, when)
		wantRoaring(t, ks, 0, "gone", nil, when)
		ks.Lock()
		defer ks.Unlock()
		if typ := ks.Type(0, k); typ != "tairroaring" {
			t.Fatalf("%s: TYPE %q", when, typ)
		}
		if enc, _, ok := ks.ObjectEncoding(0, k); !ok || enc != "roaring" {
			t.Fatalf("%s: OBJECT ENCODING %q %v", when, enc, ok)
		}
	}
	check("live")
	ks.Close()
	ks = openKS(t, dir, 0)
	check("reopened")
}

// TestRoaringRebuildHuge copies (rebuilds) the full range 0..2^32-1 and a
// bitmap of 300 bitset containers: the rebuild is bounded by containers,
// split into pieces (a group of records for the big one), and both copies
// come back from the log.
func TestRoaringRebuildHuge(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 0)
	defer func() { ks.Close() }()
	// The full range: 65,536 run containers, 2^32 members.
	commit(t, ks, func(b *keyspace.Batch) { b.TRAddRange(0, []byte("full"), 0, 1<<32-1) })
	// 300 bitset containers (every other bit): too big for one operation.
	dense := roaring.New()
	for hi := uint32(0); hi < 300; hi++ {
		for lo := uint32(0); lo < 1<<16; lo += 2 {
			dense.Add((hi*7)<<16 | lo) // spread over keys 0, 7, 14, ...
		}
	}
	commit(t, ks, func(b *keyspace.Batch) { b.TRMerge(0, []byte("dense"), dense) })

	full := roaring.New()
	full.AddRange(0, 1<<32)
	for _, c := range []struct {
		src  string
		want *roaring.Bitmap
	}{{"full", full}, {"dense", dense}} {
		ks.Lock()
		b := ks.NewBatch()
		if !ks.CopyValue(b, 0, []byte(c.src), 1, []byte(c.src), 0) {
			t.Fatal("no source")
		}
		// Bounded by containers: the full range is ~0.5 MiB of log, and no
		// operation is larger than a piece.
		if b.Size() > 8<<20 {
			t.Fatalf("%s: rebuild of %d bytes", c.src, b.Size())
		}
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		ks.Unlock()
		t.Logf("%s: rebuild %d bytes", c.src, b.Size())
	}
	check := func(when string) {
		for _, db := range []int{0, 1} {
			wantRoaring(t, ks, db, "full", full, when)
			wantRoaring(t, ks, db, "dense", dense, when)
		}
	}
	check("live")
	ks.Close()
	ks = openKS(t, dir, 0)
	check("reopened")
}

// TestRoaringCopyKeepsContainers: COPY (a rebuild from serialized pieces)
// keeps the container kinds TR.STAT reports, run containers included.
func TestRoaringCopyKeepsContainers(t *testing.T) {
	ks := openKS(t, t.TempDir(), 0)
	defer ks.Close()
	commit(t, ks, func(b *keyspace.Batch) {
		b.TRAdd(0, []byte("s"), 1, 2, 3, 4, 5, 6, 7, 8, 9, 1<<20)
		b.TRAddRange(0, []byte("s"), 5<<16, 5<<16+40000)
		b.TROptimize(0, []byte("s"))
	})
	ks.Lock()
	b := ks.NewBatch()
	ks.CopyValue(b, 0, []byte("s"), 0, []byte("d"), 0)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	s, d := roaringOf(t, ks, 0, "s"), roaringOf(t, ks, 0, "d")
	if s.Stats() != d.Stats() || s.Stats().RunContainers == 0 {
		t.Fatalf("stats differ: %+v vs %+v", s.Stats(), d.Stats())
	}
}

// TestRoaringCleaning updates a few bitmaps many times with every kind of
// operation, with small segments and cleaning after every burst, reopening
// now and then, and checks them against a model: the cleaner's rewrite
// (delete + merge pieces at the head of the log) keeps each bitmap exact,
// and deleted or emptied bitmaps do not come back.
func TestRoaringCleaning(t *testing.T) {
	const segSize = 1 << 20
	dir := t.TempDir()
	ks := openKS(t, dir, segSize)
	defer func() { ks.Close() }()
	rng := rand.New(rand.NewPCG(7, 7))
	model := map[string]*roaring.Bitmap{}
	filler := make([]byte, 16<<10)
	var cleaned int64 // bytes cleaned over every open
	steps := 6000
	if testing.Short() {
		steps = 1500
	}
	for step := 0; step < steps; step++ {
		key := fmt.Sprintf("r%d", min(int(rng.ExpFloat64()*3), 9))
		k := []byte(key)
		m := model[key]
		if m == nil {
			m = roaring.New()
		}
		base := uint32(rng.IntN(1 << 22))
		switch r := rng.IntN(100); {
		case r < 35:
			offs := make([]uint32, 1+rng.IntN(20))
			for i := range offs {
				offs[i] = base + uint32(rng.IntN(1<<18))
			}
			commit(t, ks, func(b *keyspace.Batch) { b.TRAdd(0, k, offs...) })
			m.AddMany(offs)
		case r < 50 && !m.IsEmpty():
			offs := make([]uint32, 1+rng.IntN(20))
			for i := range offs {
				v, _ := m.Select(uint32(rng.IntN(int(m.GetCardinality()))))
				offs[i] = v
			}
			commit(t, ks, func(b *keyspace.Batch) { b.TRRemove(0, k, offs...) })
			for _, x := range offs {
				m.Remove(x)
			}
		case r < 60:
			end := base + uint32(rng.IntN(1<<17))
			commit(t, ks, func(b *keyspace.Batch) { b.TRAddRange(0, k, base, end) })
			m.AddRange(uint64(base), uint64(end)+1)
		case r < 68:
			end := base + uint32(rng.IntN(1<<20))
			commit(t, ks, func(b *keyspace.Batch) { b.TRRemoveRange(0, k, base, end) })
			m.RemoveRange(uint64(base), uint64(end)+1)
		case r < 76:
			end := base + uint32(rng.IntN(1<<16))
			commit(t, ks, func(b *keyspace.Batch) { b.TRFlipRange(0, k, base, end) })
			m.Flip(uint64(base), uint64(end)+1)
		case r < 79: // a store: delete and merge
			v := roaring.New()
			v.AddRange(uint64(base), uint64(base)+uint64(rng.IntN(1<<16))+1)
			for i := 0; i < 50; i++ {
				v.Add(uint32(rng.IntN(1 << 24)))
			}
			if rng.IntN(2) == 0 {
				commit(t, ks, func(b *keyspace.Batch) { b.Del(0, k); b.TRMerge(0, k, v) })
				m = v.Clone()
				break
			}
			// A complement store (TR.BITOP NOT), and one ORed into the key.
			end := v.Maximum()
			if rng.IntN(2) == 0 {
				commit(t, ks, func(b *keyspace.Batch) { b.Del(0, k); b.TRMergeComplement(0, k, v, 0, end) })
				m = roaring.Flip(v, 0, uint64(end)+1)
				break
			}
			start := end - min(end, uint32(rng.IntN(1<<18)))
			commit(t, ks, func(b *keyspace.Batch) { b.TRMergeComplement(0, k, v, start, end) })
			c := roaring.Flip(v, uint64(start), uint64(end)+1)
			c.RemoveRange(0, uint64(start))
			m.Or(c)
		case r < 81:
			commit(t, ks, func(b *keyspace.Batch) { b.Del(0, k) })
			m = roaring.New()
		case r < 83 && !m.IsEmpty():
			commit(t, ks, func(b *keyspace.Batch) { b.TROptimize(0, k) })
		default:
			commit(t, ks, func(b *keyspace.Batch) { b.Set(5, []byte("filler"), filler, 0) })
		}
		model[key] = m
		if step%300 == 299 {
			ks.Clean()
			for i := 0; i < 4 && ks.CleanOldest(); i++ {
			}
			for key, m := range model {
				wantRoaring(t, ks, 0, key, m, fmt.Sprintf("step %d, cleaned", step))
			}
		}
		if step%2000 == 1999 {
			cleaned += ks.Stats().CleanedBytes
			ks.Close()
			ks = openKS(t, dir, segSize)
			for key, m := range model {
				wantRoaring(t, ks, 0, key, m, fmt.Sprintf("step %d, reopened", step))
			}
		}
	}
	if cleaned += ks.Stats().CleanedBytes; cleaned < 4*segSize {
		t.Fatalf("only %d bytes were cleaned", cleaned)
	}
	ks.Close()
	ks = openKS(t, dir, segSize)
	for key, m := range model {
		wantRoaring(t, ks, 0, key, m, "final reopen")
	}
}

// TestRoaringMergeComplement stores complements (opTRMergeFlip) of sparse,
// dense, empty and out-of-range sources, over ranges small and huge, one
// operation or many pieces, into new and existing keys, and checks the
// live and the recovered values against the library's Flip.
func TestRoaringMergeComplement(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 0)
	defer func() { ks.Close() }()
	rng := rand.New(rand.NewPCG(3, 4))
	sparse := roaring.New()
	for i := 0; i < 10000; i++ {
		sparse.Add(uint32(rng.IntN(10000000)) + 1)
	}
	dense := roaring.New() // 300 bitset containers: too big for one operation
	for hi := uint32(0); hi < 300; hi++ {
		for lo := uint32(0); lo < 1<<16; lo += 2 {
			dense.Add(hi<<16 | lo)
		}
	}
	edge := roaring.BitmapOf(0, 5, 1<<31, 1<<32-1)
	cases := []struct {
		key        string
		src        *roaring.Bitmap
		start, end uint32
		into       *roaring.Bitmap // the key's value before, or nil
	}{
		{"not-sparse", sparse, 0, sparse.Maximum(), nil},
		{"not-dense", dense, 0, dense.Maximum(), nil},
		{"inner", sparse, 3000000, 3100000, nil},                // src reaches past both ends
		{"dense-part", dense, 70000, 250<<16 + 17, nil},         // many pieces, unaligned ends
		{"full", edge, 0, 1<<32 - 1, nil},                       // the whole space, doubling windows
		{"empty-src", roaring.New(), 10, 20, nil},               // the range itself
		{"into", sparse, 0, 200000, roaring.BitmapOf(7, 1<<30)}, // ORed into a key
		{"all-set", roaring.BitmapOf(1, 2, 3), 1, 3, nil},       // an empty complement: no key
	}
	want := map[string]*roaring.Bitmap{}
	for _, c := range cases {
		k := []byte(c.key)
		if c.into != nil {
			commit(t, ks, func(b *keyspace.Batch) { b.TRMerge(0, k, c.into) })
		}
		commit(t, ks, func(b *keyspace.Batch) { b.TRMergeComplement(0, k, c.src, c.start, c.end) })
		w := roaring.Flip(c.src, uint64(c.start), uint64(c.end)+1)
		w.RemoveRange(0, uint64(c.start))
		w.RemoveRange(uint64(c.end)+1, 1<<32)
		if c.into != nil {
			w.Or(c.into)
		}
		want[c.key] = w
	}
	if want["full"].GetCardinality() != 1<<32-4 || !want["all-set"].IsEmpty() {
		t.Fatalf("model: full %d, all-set %d", want["full"].GetCardinality(), want["all-set"].GetCardinality())
	}
	check := func(when string) {
		t.Helper()
		for k, w := range want {
			wantRoaring(t, ks, 0, k, w, when)
			if got := roaringOf(t, ks, 0, k); got != nil {
				if err := got.Validate(); err != nil {
					t.Fatalf("%s: %s: %v", when, k, err)
				}
			}
		}
		// The complement of a sparse bitmap is bitset containers, as the
		// library's Flip makes them (not 65,536-member arrays).
		if got, w := roaringOf(t, ks, 0, "not-sparse").Stats(), want["not-sparse"].Stats(); got != w || got.BitmapContainers == 0 {
			t.Fatalf("%s: not-sparse containers %+v, want %+v", when, got, w)
		}
	}
	check("live")
	// A rewrite whole (COPY's rebuild, the cleaner's) of a complement.
	ks.Lock()
	b := ks.NewBatch()
	ks.CopyValue(b, 0, []byte("not-sparse"), 1, []byte("copy"), 0)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	wantRoaring(t, ks, 1, "copy", want["not-sparse"], "copied")
	ks.Close()
	ks = openKS(t, dir, 0)
	check("reopened")
	wantRoaring(t, ks, 1, "copy", want["not-sparse"], "copied, reopened")
}

// TestRoaringMergeSerialized: TRMergeSerialized logs a serialization that
// fits one operation as it is, splits a larger one into TRMerge's pieces,
// writes nothing for an empty bitmap, and each comes back from the log
// with its container kinds.
func TestRoaringMergeSerialized(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 0)
	defer func() { ks.Close() }()
	small := roaring.BitmapOf(0, 5, 70000, 1<<32-1)
	big := roaring.New() // 300 bitset containers: 2.4 MB serialized
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 300*8000; i++ {
		big.Add(uint32(rng.IntN(300 << 16)))
	}
	ser := func(bm *roaring.Bitmap) []byte {
		p, err := bm.ToBytes()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	commit(t, ks, func(b *keyspace.Batch) { b.TRMergeSerialized(0, []byte("small"), ser(small)) })
	commit(t, ks, func(b *keyspace.Batch) { b.TRMergeSerialized(0, []byte("big"), ser(big)) })
	commit(t, ks, func(b *keyspace.Batch) {
		b.TRMergeSerialized(0, []byte("empty"), ser(roaring.New()))
		if b.Len() != 0 {
			t.Fatalf("an empty bitmap wrote %d operations", b.Len())
		}
	})
	check := func(when string) {
		t.Helper()
		wantRoaring(t, ks, 0, "small", small, when)
		wantRoaring(t, ks, 0, "big", big, when)
		wantRoaring(t, ks, 0, "empty", nil, when)
		if got := roaringOf(t, ks, 0, "big"); got.Stats() != big.Stats() {
			t.Fatalf("%s: big %+v, want %+v", when, got.Stats(), big.Stats())
		}
	}
	check("live")
	ks.Close()
	ks = openKS(t, dir, 0)
	check("reopened")
}

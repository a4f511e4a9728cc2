package keyspace_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// encodingCase grows a collection past Redis's small-encoding thresholds
// and shrinks it back to a few elements.
type encodingCase struct {
	name         string
	small, big   string // OBJECT ENCODING before and after the conversion
	grow, shrink func(b *keyspace.Batch, key []byte)
}

var long = strings.Repeat("x", 65) // one byte over the 64-byte listpack limit

func encodingCases() []encodingCase {
	nums := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(strconv.Itoa(i))
		}
		return out
	}
	return []encodingCase{
		{"hash-entries", "listpack", "hashtable",
			func(b *keyspace.Batch, k []byte) {
				for i := 0; i < 600; i++ {
					b.HSet(0, k, []byte(fmt.Sprint("f", i)), []byte("v"))
				}
			},
			func(b *keyspace.Batch, k []byte) {
				for i := 2; i < 600; i++ {
					b.HDel(0, k, []byte(fmt.Sprint("f", i)))
				}
			}},
		{"hash-value", "listpack", "hashtable",
			func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte(long), []byte("b"), []byte("1")) },
			func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) }},
		{"zset-entries", "listpack", "skiplist",
			func(b *keyspace.Batch, k []byte) {
				ms := nums(200)
				sc := make([]float64, len(ms))
				b.ZAdd(0, k, ms, sc)
			},
			func(b *keyspace.Batch, k []byte) { b.ZRem(0, k, nums(200)[2:]) }},
		{"zset-member", "listpack", "skiplist",
			func(b *keyspace.Batch, k []byte) {
				b.ZAdd(0, k, [][]byte{[]byte(long), []byte("a"), []byte("b")}, []float64{1, 2, 3})
			},
			func(b *keyspace.Batch, k []byte) { b.ZRem(0, k, [][]byte{[]byte(long)}) }},
		{"set-entries", "intset", "hashtable",
			func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, nums(600)...) },
			func(b *keyspace.Batch, k []byte) { b.SRem(0, k, nums(600)[2:]...) }},
		{"set-member", "intset", "hashtable",
			func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("1"), []byte("2"), []byte("x")) },
			func(b *keyspace.Batch, k []byte) { b.SRem(0, k, []byte("x")) }},
	}
}

func encodingOf(t *testing.T, ks *keyspace.Keyspace, db int, key string) string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	enc, isString, ok := ks.ObjectEncoding(db, []byte(key))
	if !ok || isString {
		t.Fatalf("db%d %q: exists %v, string %v", db, key, ok, isString)
	}
	return enc
}

// TestConvertedEncodingIsSticky: a hash, sorted set or set that converted
// to its big encoding and shrank keeps that encoding, as in Redis 7.0,
// through COPY, RENAME and MOVE (which rebuild it from its elements), the
// cleaner's rewrite, and reopening (replay of those rewrites); one that
// never converted stays small through the same steps.
func TestConvertedEncodingIsSticky(t *testing.T) {
	for _, c := range encodingCases() {
		t.Run(c.name, func(t *testing.T) { testConvertedEncodingIsSticky(t, c) })
	}
}

func testConvertedEncodingIsSticky(t *testing.T, c encodingCase) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	defer func() { ks.Close() }()
	k, small := []byte("k"), []byte("small")
	for _, key := range [][]byte{k, []byte("orig")} { // orig stays where it is
		commit(t, ks, func(b *keyspace.Batch) { c.grow(b, key) })
		commit(t, ks, func(b *keyspace.Batch) { c.shrink(b, key) })
	}
	// The control: the same elements, added to a new key, never converted.
	addSmall(t, ks, c, k, small)

	if e := encodingOf(t, ks, 0, "k"); e != c.big {
		t.Fatalf("after shrinking: %s, want %s", e, c.big)
	}
	if e := encodingOf(t, ks, 0, "small"); e != c.small {
		t.Fatalf("control: %s, want %s", e, c.small)
	}

	// COPY k copy; RENAME k renamed; MOVE renamed 1; and the same for the
	// control.
	commit(t, ks, func(b *keyspace.Batch) { ks.CopyValue(b, 0, k, 0, []byte("copy"), 0) })
	commit(t, ks, func(b *keyspace.Batch) {
		ks.CopyValue(b, 0, k, 0, []byte("renamed"), 0)
		b.Del(0, k)
	})
	if e := encodingOf(t, ks, 0, "renamed"); e != c.big {
		t.Errorf("after RENAME: %s, want %s", e, c.big)
	}
	commit(t, ks, func(b *keyspace.Batch) {
		ks.CopyValue(b, 0, []byte("renamed"), 1, []byte("moved"), ks.NowMs()+3600_000)
		b.Del(0, []byte("renamed"))
	})
	commit(t, ks, func(b *keyspace.Batch) {
		ks.CopyValue(b, 0, small, 1, []byte("small-moved"), 0)
	})
	want := []struct {
		db       int
		key, enc string
	}{{0, "orig", c.big}, {0, "copy", c.big}, {1, "moved", c.big}, {0, "small", c.small}, {1, "small-moved", c.small}}
	check := func(when string) {
		t.Helper()
		for _, w := range want {
			if e := encodingOf(t, ks, w.db, w.key); e != w.enc {
				t.Errorf("%s: db%d %s is %s, want %s", when, w.db, w.key, e, w.enc)
			}
		}
	}
	check("live")

	ks.Close()
	ks = openKS(t, dir, 1<<20)
	check("after reopen")

	// Garbage after them makes the cleaner reclaim every segment holding
	// their operations, rewriting each collection whole.
	ks.Lock()
	var firstSegs []uint64
	for _, w := range want {
		s, ok := ks.ObjectFirstSeg(w.db, []byte(w.key))
		if !ok {
			t.Fatalf("%s is not a collection", w.key)
		}
		firstSegs = append(firstSegs, s)
	}
	ks.Unlock()
	junk := make([]byte, 1000)
	for i := 0; i < 6000; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.Set(5, []byte("junk"), junk, 0) })
	}
	commit(t, ks, func(b *keyspace.Batch) { b.Del(5, []byte("junk")) })
	ks.Clean()
	ks.Lock()
	oldest := ks.OldestSegment()
	for i, w := range want {
		if firstSegs[i] >= oldest {
			t.Fatalf("cleaning left segment %d of %s (oldest is %d): nothing was rewritten", firstSegs[i], w.key, oldest)
		}
		if s, _ := ks.ObjectFirstSeg(w.db, []byte(w.key)); s < oldest {
			t.Fatalf("%s still points at removed segment %d", w.key, s)
		}
	}
	ks.Unlock()
	check("after cleaning")

	ks.Close()
	ks = openKS(t, dir, 1<<20)
	check("after cleaning and reopen")
	if at, _ := func() (int64, bool) { ks.Lock(); defer ks.Unlock(); return ks.ExpireAt(1, []byte("moved")) }(); at == 0 {
		t.Errorf("moved lost its TTL")
	}
}

// addSmall creates dst with the elements of src, written as new elements
// (not a rebuild), so dst never had the big encoding.
func addSmall(t *testing.T, ks *keyspace.Keyspace, c encodingCase, src, dst []byte) {
	t.Helper()
	ks.Lock()
	var fill func(b *keyspace.Batch)
	switch ks.Type(0, src) {
	case keyspace.TypeHash:
		var pairs [][]byte
		ks.HRange(0, src, func(f, v []byte) { pairs = append(pairs, append([]byte(nil), f...), append([]byte(nil), v...)) })
		fill = func(b *keyspace.Batch) { b.HSet(0, dst, pairs...) }
	case keyspace.TypeZSet:
		z, _ := ks.ZSetAt(0, src)
		var ms [][]byte
		var sc []float64
		for x := z.At(0); x != 0; x = z.Next(x) {
			ms = append(ms, append([]byte(nil), z.Member(x)...))
			sc = append(sc, z.ScoreOf(x))
		}
		fill = func(b *keyspace.Batch) { b.ZAdd(0, dst, ms, sc) }
	case keyspace.TypeSet:
		ms, _ := ks.SMembers(0, src)
		fill = func(b *keyspace.Batch) { b.SAdd(0, dst, setArgs(ms...)...) }
	default:
		t.Fatalf("%s: type %s", c.name, ks.Type(0, src))
	}
	ks.Unlock()
	commit(t, ks, fill)
}

// TestLegacySetHashtableOpReplays: opSHashtable (kind 32), which earlier
// versions wrote after rebuilding a converted set, still converts the set.
func TestLegacySetHashtableOpReplays(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	commit(t, ks, func(b *keyspace.Batch) {
		b.SAdd(0, []byte("s"), []byte("1"), []byte("2"))
		b.ObjectOp(32, 0, []byte("s"), nil)
		b.SAdd(0, []byte("t"), []byte("1"), []byte("2"))
	})
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if e := encodingOf(t, ks, 0, "s"); e != "hashtable" {
		t.Errorf("legacy marker: %s", e)
	}
	if e := encodingOf(t, ks, 0, "t"); e != "intset" {
		t.Errorf("no marker: %s", e)
	}
}

package keyspace

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// encodeFields encodes field/value pairs as an opXAdd carries them.
func encodeFields(fv ...string) []byte {
	raw := binary.AppendUvarint(nil, uint64(len(fv)/2))
	for _, s := range fv {
		raw = binary.AppendUvarint(raw, uint64(len(s)))
		raw = append(raw, s...)
	}
	return raw
}

// TestEntryShapeMatchesWalks checks the one-walk entryShape against the
// per-element sizes (lpStrBytes of every name and every value) and
// lpEntryBytesShaped against the listpack rule written out, for entries
// with integer-like, short, long and empty names and values.
func TestEntryShapeMatchesWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 11))
	pick := []string{"", "0", "7", "-3", "12345678901234567890", "f", "field", "abcdefgh", "abcdefghi", "x:%d", "v%063d"}
	for range 2000 {
		var fv []string
		for range 1 + rng.IntN(4) {
			for range 2 {
				s := pick[rng.IntN(len(pick))]
				if len(s) > 0 && s[len(s)-1] == 'd' {
					s = fmt.Sprintf(s, rng.IntN(1000))
				}
				fv = append(fv, s)
			}
		}
		raw := encodeFields(fv...)
		_, names, values := entryShape(raw)
		var wn, wv uint32
		for i := 0; i < len(fv); i += 2 {
			wn += lpStrBytes([]byte(fv[i]))
			wv += lpStrBytes([]byte(fv[i+1]))
		}
		if names != wn || values != wv {
			t.Fatalf("%q: names %d values %d, want %d %d", fv, names, values, wn, wv)
		}
		id, master := StreamID{Ms: 1000 + uint64(rng.IntN(5000)), Seq: uint64(rng.IntN(3))}, StreamID{Ms: 1000}
		nf := int64(len(fv) / 2)
		base := 2 + lpIntBytes(int64(id.Ms-master.Ms)) + lpIntBytes(int64(id.Seq-master.Seq)) + wv
		if got, want := lpEntryBytesShaped(raw, names, values, true, id, master), base+lpIntBytes(nf+3); got != want {
			t.Fatalf("%q same: %d, want %d", fv, got, want)
		}
		if got, want := lpEntryBytesShaped(raw, names, values, false, id, master), base+wn+lpIntBytes(nf)+lpIntBytes(2*nf+4); got != want {
			t.Fatalf("%q: %d, want %d", fv, got, want)
		}
	}
}

// TestFieldNamesFP: equal names give equal fingerprints whatever the
// values; names that differ (in a byte, in length, by a trailing zero
// byte, in order, in number) give different ones.
func TestFieldNamesFP(t *testing.T) {
	fp := func(fv ...string) uint64 { return fieldNamesFP(encodeFields(fv...)) }
	if fp("a", "1", "bb", "2") != fp("a", "x", "bb", "yyyy") {
		t.Fatal("same names, different fingerprints")
	}
	if fp("longfieldname", "1") != fp("longfieldname", "2") {
		t.Fatal("same long name, different fingerprints")
	}
	distinct := [][]string{
		{"a", "1"}, {"b", "1"}, {"a\x00", "1"}, {"", "1"}, {"\x00", "1"},
		{"abcdefgh", "1"}, {"abcdefgi", "1"}, {"abcdefghi", "1"},
		{"a", "1", "b", "2"}, {"b", "1", "a", "2"}, {"ab", "1"},
	}
	seen := map[uint64][]string{}
	for _, fv := range distinct {
		h := fp(fv...)
		if h == 0 {
			t.Fatalf("%q: fingerprint 0", fv)
		}
		if prev, ok := seen[h]; ok {
			t.Fatalf("%q and %q: same fingerprint", prev, fv)
		}
		seen[h] = fv
	}
}

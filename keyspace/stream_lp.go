package keyspace

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
)

// The listpack estimate of a stream node (see Nodes in stream.go): sizes
// by listpack.c's encoding rules. Only sizes: nothing here is stored.

// lpIntBytes is the size of an integer element: encoding and data, and a
// one-byte backlen.
func lpIntBytes(v int64) uint32 {
	switch {
	case v >= 0 && v <= 127:
		return 2
	case v >= -4096 && v <= 4095:
		return 3
	case v >= -1<<15 && v < 1<<15:
		return 4
	case v >= -1<<23 && v < 1<<23:
		return 5
	case v >= -1<<31 && v < 1<<31:
		return 6
	}
	return 10
}

// lpStrBytes is the size of an element holding s, which listpack.c stores
// as an integer when it is one's canonical text.
func lpStrBytes(s []byte) uint32 {
	if v, ok := canonicalInt(s); ok {
		return lpIntBytes(v)
	}
	l := uint32(len(s))
	var n uint32
	switch {
	case l < 64:
		n = 1 + l
	case l < 4096:
		n = 2 + l
	default:
		n = 5 + l
	}
	switch {
	case n <= 127:
		return n + 1
	case n < 16383:
		return n + 2
	case n < 2097151:
		return n + 3
	case n < 268435455:
		return n + 4
	}
	return n + 5
}

// canonicalInt parses s as lpStringToInt64 accepts it: the canonical
// decimal text of an int64 (no sign but '-', no leading zero, no "-0").
func canonicalInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	i, neg := 0, false
	if s[0] == '-' {
		neg, i = true, 1
	}
	if i == len(s) || s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var u uint64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || u > (1<<64-1-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// streamFieldsIter walks the field/value pairs of an entry's encoded
// fields (the nfields uvarint, then uvarint-length strings).
type streamFieldsIter struct {
	p []byte
	i int
	n uint64 // pairs left
}

func newFieldsIter(raw []byte) streamFieldsIter {
	n, w := binary.Uvarint(raw)
	if w <= 0 {
		return streamFieldsIter{}
	}
	return streamFieldsIter{p: raw, i: w, n: n}
}

func (it *streamFieldsIter) next() (f, v []byte, ok bool) {
	if it.n == 0 {
		return nil, nil, false
	}
	it.n--
	f, it.i, ok = readBytes(it.p, it.i)
	if !ok {
		return nil, nil, false
	}
	v, it.i, ok = readBytes(it.p, it.i)
	return f, v, ok
}

// lpMasterBytes is a new node's listpack header and end byte and its master
// entry (fields of raw, the first entry's), the count and deleted integers
// left out.
func lpMasterBytes(raw []byte) uint32 {
	nf, _ := binary.Uvarint(raw)
	n := uint32(7) + lpIntBytes(int64(nf)) + lpIntBytes(0)
	it := newFieldsIter(raw)
	for f, _, ok := it.next(); ok; f, _, ok = it.next() {
		n += lpStrBytes(f)
	}
	return n
}

// lpEntryBytes is what the entry id with fields raw adds to a node whose
// master ID is master and master fields are those of mraw.
func lpEntryBytes(raw, mraw []byte, id, master StreamID) uint32 {
	nf, _ := binary.Uvarint(raw)
	same := true
	if mnf, _ := binary.Uvarint(mraw); mnf != nf {
		same = false
	} else {
		a, b := newFieldsIter(raw), newFieldsIter(mraw)
		for fa, _, ok := a.next(); ok; fa, _, ok = a.next() {
			fb, _, ok2 := b.next()
			if !ok2 || string(fa) != string(fb) {
				same = false
				break
			}
		}
	}
	return lpEntryBytesSame(raw, same, id, master)
}

// fieldNamesFP is a fingerprint of the field names of raw (their number,
// lengths and bytes; never 0): equal names give equal fingerprints, and
// different names the same one with probability 2^-64.
func fieldNamesFP(raw []byte) uint64 {
	fp, _, _ := entryShape(raw)
	return fp
}

// fieldNameHash is the hash of one field name in fieldNamesFP: a name of
// up to 8 bytes is its own bytes (with its length, exact), a longer one
// its xxhash.
func fieldNameHash(f []byte) uint64 {
	if len(f) > 8 {
		return xxhash.Sum64(f)
	}
	var v uint64
	for i, c := range f {
		v |= uint64(c) << (8 * i)
	}
	return v
}

// entryShape is what an append needs of an entry's encoded fields raw, in
// one walk: fieldNamesFP, and the listpack bytes of its field names and of
// its values (lpStrBytes each).
func entryShape(raw []byte) (fp uint64, names, values uint32) {
	nf, _ := binary.Uvarint(raw)
	h := (nf + 1) * 0xbf58476d1ce4e5b9
	it := newFieldsIter(raw)
	for f, v, ok := it.next(); ok; f, v, ok = it.next() {
		h = (h ^ fieldNameHash(f)) * 0x9e3779b97f4a7c15
		h = (h ^ uint64(len(f))) * 0x94d049bb133111eb
		names += lpStrBytes(f)
		values += lpStrBytes(v)
	}
	if h == 0 {
		h = 1
	}
	return h, names, values
}

// lpEntryBytesSame is lpEntryBytes given whether raw's field names are the
// master entry's (same).
func lpEntryBytesSame(raw []byte, same bool, id, master StreamID) uint32 {
	_, names, values := entryShape(raw)
	return lpEntryBytesShaped(raw, names, values, same, id, master)
}

// lpEntryBytesShaped is lpEntryBytesSame given the entry's entryShape
// names and values bytes.
func lpEntryBytesShaped(raw []byte, names, values uint32, same bool, id, master StreamID) uint32 {
	nf, _ := binary.Uvarint(raw)
	n := uint32(2) + lpIntBytes(int64(id.Ms-master.Ms)) + lpIntBytes(int64(id.Seq-master.Seq)) + values
	if same {
		return n + lpIntBytes(int64(nf)+3)
	}
	return n + names + lpIntBytes(int64(nf)) + lpIntBytes(2*int64(nf)+4)
}

// lpEstimate is a node's listpack estimate, its count and deleted integers
// at their current values included.
func (nd *streamNode) lpEstimate() int64 {
	return int64(nd.lpBytes) + int64(lpIntBytes(int64(nd.valid))) + int64(lpIntBytes(int64(nd.total-nd.valid)))
}

package keyspace

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
)

// Hash operations. Bodies (durable, never renumber the kinds):
//
//	opHSet  repeated (field, value), each a uvarint length + bytes
//	opHDel  repeated field
const (
	opHSet = 17
	opHDel = 18
)

// TypeHash is TYPE's reply for a hash.
const TypeHash = "hash"

// hashObj is a hash. Its bytes stay in the log: a field is the location of
// the (name, value) pair inside the HSET operation that last set it, and a
// DRAM index over them holds no pointer (the Go collector never scans a
// hash's elements, and a field costs the heap about 30 bytes):
//
//   - fields is a dense table of hashField, in the hash's order; it gives
//     O(1) HRANDFIELD and an HSCAN cursor that survives deletions, like the
//     databases' key tables;
//   - slots is an open-addressing table (linear probing, backward-shift
//     deletion, load at most 3/4) of tag<<32 | (position in fields + 1),
//     tag being the high 32 bits of the field name's hash; a lookup
//     compares the name in the log only when the tag matches.
//
// HGET and HSET are O(1): a hash, a probe, one comparison in the mapping.
//
// Field order. While the hash is small enough that Redis would keep it in a
// listpack (see hashMaxListpackEntries), Redis replies HGETALL, HKEYS, HVALS and
// HSCAN in insertion order; clients and tests see that order, so a small
// hash deletes by shifting the fields after the hole down (O(n) for n <=
// 512, as a listpack delete is) and keeps insertion order too. Once the hash
// has outgrown a listpack (big, sticky as Redis's conversion to a hashtable
// is) a delete moves the last field into the hole in O(1); Redis's order is
// then arbitrary as well. Both rules depend only on the operations applied,
// so recovery rebuilds the same order.
type hashObj struct {
	idx    slotIndex
	fields []hashField
	bytes  int64
	big    bool // has outgrown a listpack: "hashtable" encoding
}

// Redis 7's defaults for hash-max-listpack-entries and
// hash-max-listpack-value (CONFIG GET on redis-server 7.0: 512 and 64; the
// 128 of zset-max-listpack-entries does not apply to hashes): a hash stays
// a listpack while it has at most 512 fields and every field and value it
// was given is at most 64 bytes.
const (
	hashMaxListpackEntries = 512
	hashMaxListpackValue   = 64
)

// hashField locates one field: loc is the packed location of the field
// name's uvarint length inside a logged HSET body; the value's uvarint
// length and bytes follow the name.
type hashField struct {
	loc  uint64
	nlen uint32
	vlen uint32
}

// valueLoc is the packed location of the field's uvarint-prefixed value.
func (f hashField) valueLoc() uint64 {
	return f.loc + uint64(hashUvarintLen(uint64(f.nlen))) + uint64(f.nlen)
}

// pairLen is the encoded size of the (name, value) pair at loc.
func (f hashField) pairLen() int {
	return hashUvarintLen(uint64(f.nlen)) + int(f.nlen) + hashUvarintLen(uint64(f.vlen)) + int(f.vlen)
}

// hashSeed keys the field hash; the index lives in DRAM only, so a seed
// per process is fine (and slots never decide an observable order).
var hashSeed = maphash.MakeSeed()

func hashFieldTag(name []byte) uint32 { return uint32(maphash.Bytes(hashSeed, name) >> 32) }

func newHash() *hashObj { return &hashObj{} }

func (h *hashObj) typeName() string { return TypeHash }
func (h *hashObj) length() int      { return len(h.fields) }
func (h *hashObj) liveBytes() int64 { return h.bytes }

// hashRawAt returns n bytes of the log at a packed location.
func (ks *Keyspace) hashRawAt(loc uint64, n int) []byte {
	seg := ks.arena.Segment(loc >> 40)
	if seg == nil {
		panic(fmt.Sprintf("keyspace: location %#x names a missing segment", loc))
	}
	off := int(loc & (1<<40 - 1))
	return seg.Bytes()[off : off+n : off+n]
}

// hashFieldName and hashFieldValue return a field's bytes in the mapping.
func (ks *Keyspace) hashFieldName(f hashField) []byte {
	return ks.hashRawAt(f.loc+uint64(hashUvarintLen(uint64(f.nlen))), int(f.nlen))
}

func (ks *Keyspace) hashFieldValue(f hashField) []byte {
	return ks.hashRawAt(f.valueLoc()+uint64(hashUvarintLen(uint64(f.vlen))), int(f.vlen))
}

func (h *hashObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	// Each pair is copied as it is encoded in the log, in ops of bounded
	// size (opChunker).
	c := opChunker{b: b, kind: opHSet, db: db, key: key}
	for _, f := range h.fields {
		n := f.pairLen()
		c.room(n)
		c.body = append(c.body, ks.hashRawAt(f.loc, n)...)
	}
	c.flush()
}

// encoding is OBJECT ENCODING's reply for the hash: "listpack" while Redis
// would keep it in one, "hashtable" once it has outgrown it. A rebuild
// (cleaning, COPY, RENAME, MOVE) keeps "hashtable" through opBigEncoding.
func (h *hashObj) encoding() string {
	if h.big {
		return "hashtable"
	}
	return "listpack"
}

func (h *hashObj) converted() bool { return h.big }
func (h *hashObj) convert()        { h.big = true }

// find returns the position in fields of the field name (-1 if absent)
// and the index slot that holds it.
func (h *hashObj) find(ks *Keyspace, name []byte, tag uint32) (slot int, idx int) {
	return h.idx.find(tag, func(i int) bool {
		f := h.fields[i]
		return int(f.nlen) == len(name) && string(ks.hashFieldName(f)) == string(name)
	})
}

// get returns the field's position in fields, or -1.
func (h *hashObj) get(ks *Keyspace, name []byte) int {
	_, i := h.find(ks, name, hashFieldTag(name))
	return i
}

// set points name at the pair encoded at loc (the name's uvarint length),
// adding the field if it is new; it reports whether it was.
func (h *hashObj) set(ks *Keyspace, name []byte, loc uint64, vlen int) bool {
	if len(name) > hashMaxListpackValue || vlen > hashMaxListpackValue {
		h.big = true
	}
	tag := hashFieldTag(name)
	if _, i := h.find(ks, name, tag); i >= 0 {
		f := &h.fields[i]
		h.bytes += int64(vlen) - int64(f.vlen)
		f.loc, f.vlen = loc, uint32(vlen)
		return false
	}
	h.idx.add(tag, len(h.fields), len(h.fields)+1)
	h.fields = append(h.fields, hashField{loc: loc, nlen: uint32(len(name)), vlen: uint32(vlen)})
	h.bytes += int64(len(name)+vlen) + 4
	if len(h.fields) > hashMaxListpackEntries {
		h.big = true
	}
	return true
}

// del removes name; it reports whether it was there.
func (h *hashObj) del(ks *Keyspace, name []byte) bool {
	s, i := h.find(ks, name, hashFieldTag(name))
	if i < 0 {
		return false
	}
	f := h.fields[i]
	h.bytes -= int64(f.nlen+f.vlen) + 4
	h.idx.remove(s, len(h.fields)-1)
	last := len(h.fields) - 1
	switch {
	case !h.big:
		// Keep insertion order (see hashObj): the fields after the hole
		// move down one place, and so do their positions in the index.
		copy(h.fields[i:], h.fields[i+1:])
		h.idx.shiftDown(i)
	case i != last:
		// The last field moves into the hole: repoint its slot.
		moved := h.fields[last]
		h.idx.repoint(hashFieldTag(ks.hashFieldName(moved)), last, i)
		h.fields[i] = moved
	}
	h.fields[last] = hashField{}
	h.fields = h.fields[:last]
	return true
}

func appendBytes(dst, p []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(p)))
	return append(dst, p...)
}

func registerHashOps(m map[byte]objectApplier) {
	registerOp(m, opHSet, applyHSet)
	registerOp(m, opHDel, applyHDel)
}

func applyHSet(ks *Keyspace, o op, e *entry) error {
	if e != nil && (e.obj == nil || e.obj.coll.typeName() != TypeHash) {
		return fmt.Errorf("%w: HSET on a %s", errOpType, ks.typeOf(e))
	}
	if e == nil {
		e = ks.createObject(o.db, o.key, newHash(), o.loc)
	}
	h := e.obj.coll.(*hashObj)
	base := o.loc + uint64(o.bodyOff)
	p := o.body
	for i := 0; i < len(p); {
		name, j, ok := readBytes(p, i)
		if !ok {
			return fmt.Errorf("%w: HSET field", errBadOp)
		}
		val, k, ok := readBytes(p, j)
		if !ok {
			return fmt.Errorf("%w: HSET value", errBadOp)
		}
		h.set(ks, name, base+uint64(i), len(val))
		i = k
	}
	ks.objectChanged(o.db, e)
	return nil
}

func applyHDel(ks *Keyspace, o op, e *entry) error {
	if e == nil || e.obj == nil || e.obj.coll.typeName() != TypeHash {
		return nil
	}
	h := e.obj.coll.(*hashObj)
	for i := 0; i < len(o.body); {
		name, j, ok := readBytes(o.body, i)
		if !ok {
			return fmt.Errorf("%w: HDEL field", errBadOp)
		}
		h.del(ks, name)
		i = j
	}
	ks.objectChanged(o.db, e)
	return nil
}

func (ks *Keyspace) typeOf(e *entry) string {
	if e.obj == nil {
		return TypeString
	}
	return e.obj.coll.typeName()
}

// HSet appends an operation setting fields of a hash: pairs alternates
// field, value (semantics: redis.io HSET; the caller checks the type). A
// field given twice takes its last value. Very many fields are split into
// several operations (itemOps), applied in order.
func (b *Batch) HSet(db int, key []byte, pairs ...[]byte) {
	if len(pairs)%2 != 0 {
		panic("keyspace: HSet needs field/value pairs")
	}
	b.itemOps(opHSet, db, key, pairs, 2)
}

// HDel appends an operation deleting fields of a hash.
func (b *Batch) HDel(db int, key []byte, fields ...[]byte) {
	b.itemOps(opHDel, db, key, fields, 1)
}

func hashUvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// hash returns the hash at key (nil if missing) or ErrWrongType.
func (ks *Keyspace) hash(db int, key []byte) (*hashObj, error) {
	e, err := ks.lookupObject(db, key, TypeHash)
	if e == nil {
		return nil, err
	}
	return e.obj.coll.(*hashObj), nil
}

// HGet returns the value of field in the hash at key. ok is false when the
// key or field does not exist; err is ErrWrongType for another type.
func (ks *Keyspace) HGet(db int, key, field []byte) (val []byte, ok bool, err error) {
	h, err := ks.hash(db, key)
	if h == nil {
		return nil, false, err
	}
	i := h.get(ks, field)
	if i < 0 {
		return nil, false, nil
	}
	return ks.hashFieldValue(h.fields[i]), true, nil
}

// HLen returns the number of fields (0 for a missing key).
func (ks *Keyspace) HLen(db int, key []byte) (int, error) {
	h, err := ks.hash(db, key)
	if h == nil {
		return 0, err
	}
	return len(h.fields), nil
}

// HRange calls fn for every field and value of the hash at key.
func (ks *Keyspace) HRange(db int, key []byte, fn func(field, val []byte)) error {
	h, err := ks.hash(db, key)
	if h == nil {
		return err
	}
	for _, f := range h.fields {
		fn(ks.hashFieldName(f), ks.hashFieldValue(f))
	}
	return nil
}

// HScan visits about count fields from cursor and returns the next cursor
// (0 when done), with SCAN's guarantee (see Keyspace.Scan). A hash Redis
// would keep in a listpack is visited whole in one call whatever the cursor
// and count, as Redis does.
func (ks *Keyspace) HScan(db int, key []byte, cursor uint64, count int, fn func(field, val []byte)) (uint64, error) {
	h, err := ks.hash(db, key)
	if h == nil {
		return 0, err
	}
	if !h.big {
		for _, f := range h.fields {
			fn(ks.hashFieldName(f), ks.hashFieldValue(f))
		}
		return 0, nil
	}
	pos := uint64(len(h.fields))
	if cursor != 0 && cursor < pos {
		pos = cursor
	}
	for count = max(count, 1); pos > 0 && count > 0; count-- {
		pos--
		f := h.fields[pos]
		fn(ks.hashFieldName(f), ks.hashFieldValue(f))
	}
	return pos, nil
}

// HashEncoding returns OBJECT ENCODING's reply for the hash at key
// ("listpack" or "hashtable"); ok is false for a missing key.
func (ks *Keyspace) HashEncoding(db int, key []byte) (enc string, ok bool, err error) {
	h, err := ks.hash(db, key)
	if h == nil {
		return "", false, err
	}
	return h.encoding(), true, nil
}

// HRandomFields calls fn for count random fields of the hash at key and
// their values. With unique, the fields are distinct, min(count, HLen) of
// them, in the hash's order (Redis's listpack sampling); otherwise count
// independent picks, repeats possible, in random order (HRANDFIELD with a
// negative count). A missing key calls fn for nothing.
func (ks *Keyspace) HRandomFields(db int, key []byte, count int, unique bool, fn func(field, val []byte)) error {
	h, err := ks.hash(db, key)
	if h == nil || count <= 0 {
		return err
	}
	n := len(h.fields)
	visit := func(i int) {
		f := h.fields[i]
		fn(ks.hashFieldName(f), ks.hashFieldValue(f))
	}
	switch {
	case !unique:
		for ; count > 0; count-- {
			visit(rand.IntN(n))
		}
	case count >= n:
		for i := range n {
			visit(i)
		}
	default:
		for _, i := range hashSampleDistinct(n, count) {
			visit(int(i))
		}
	}
	return nil
}

// hashSampleDistinct returns k distinct integers of [0, n), 0 < k < n, in
// increasing order (Floyd's algorithm: O(k) picks, then a sort).
func hashSampleDistinct(n, k int) []int32 {
	chosen := make(map[int32]struct{}, k)
	out := make([]int32, 0, k)
	for j := n - k; j < n; j++ {
		t := int32(rand.IntN(j + 1))
		if _, dup := chosen[t]; dup {
			t = int32(j)
		}
		chosen[t] = struct{}{}
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

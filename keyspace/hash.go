package keyspace

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
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

// hashObj is a hash: a dense table of fields (field name in DRAM, value as
// a location of its bytes in the log) plus a map from field to position.
// The dense table gives O(1) HRANDFIELD and an HSCAN cursor that survives
// deletions, like the databases' key tables.
type hashObj struct {
	index  map[string]int32
	fields []hashField
	bytes  int64
}

type hashField struct {
	name string
	loc  uint64 // packed location of the value's uvarint-prefixed bytes
	vlen int32
}

func newHash() *hashObj { return &hashObj{index: map[string]int32{}} }

func (h *hashObj) typeName() string { return TypeHash }
func (h *hashObj) length() int      { return len(h.fields) }
func (h *hashObj) liveBytes() int64 { return h.bytes }

func (h *hashObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	// One op per chunk of fields keeps ops bounded in size.
	const chunk = 1024
	for i := 0; i < len(h.fields); i += chunk {
		var body []byte
		for _, f := range h.fields[i:min(i+chunk, len(h.fields))] {
			body = appendBytes(body, []byte(f.name))
			body = appendBytes(body, ks.bytesAt(f.loc))
		}
		b.ObjectOp(opHSet, db, key, body)
	}
}

func (h *hashObj) set(name []byte, loc uint64, vlen int) bool {
	if i, ok := h.index[string(name)]; ok {
		f := &h.fields[i]
		h.bytes += int64(vlen) - int64(f.vlen)
		f.loc, f.vlen = loc, int32(vlen)
		return false
	}
	h.index[string(name)] = int32(len(h.fields))
	h.fields = append(h.fields, hashField{name: string(name), loc: loc, vlen: int32(vlen)})
	h.bytes += int64(len(name)+vlen) + 4
	return true
}

func (h *hashObj) del(name []byte) bool {
	i, ok := h.index[string(name)]
	if !ok {
		return false
	}
	f := h.fields[i]
	h.bytes -= int64(len(f.name)+int(f.vlen)) + 4
	last := len(h.fields) - 1
	if int(i) != last {
		h.fields[i] = h.fields[last]
		h.index[h.fields[i].name] = i
	}
	h.fields[last] = hashField{}
	h.fields = h.fields[:last]
	delete(h.index, f.name)
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
		return fmt.Errorf("%w: HSET on a %s", errBadOp, ks.typeOf(e))
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
		h.set(name, base+uint64(j), len(val))
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
		h.del(name)
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
// field, value (semantics: redis.io HSET; the caller checks the type).
func (b *Batch) HSet(db int, key []byte, pairs ...[]byte) {
	if len(pairs)%2 != 0 {
		panic("keyspace: HSet needs field/value pairs")
	}
	var n int
	for _, p := range pairs {
		n += len(p) + binary.MaxVarintLen32
	}
	body := make([]byte, 0, n)
	for _, p := range pairs {
		body = appendBytes(body, p)
	}
	b.ObjectOp(opHSet, db, key, body)
}

// HDel appends an operation deleting fields of a hash.
func (b *Batch) HDel(db int, key []byte, fields ...[]byte) {
	var body []byte
	for _, f := range fields {
		body = appendBytes(body, f)
	}
	b.ObjectOp(opHDel, db, key, body)
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
	i, found := h.index[string(field)]
	if !found {
		return nil, false, nil
	}
	return ks.bytesAt(h.fields[i].loc), true, nil
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
		fn([]byte(f.name), ks.bytesAt(f.loc))
	}
	return nil
}

// HScan visits about count fields from cursor and returns the next cursor
// (0 when done), with SCAN's guarantee (see Keyspace.Scan).
func (ks *Keyspace) HScan(db int, key []byte, cursor uint64, count int, fn func(field, val []byte)) (uint64, error) {
	h, err := ks.hash(db, key)
	if h == nil {
		return 0, err
	}
	pos := uint64(len(h.fields))
	if cursor != 0 && cursor < pos {
		pos = cursor
	}
	for count = max(count, 1); pos > 0 && count > 0; count-- {
		pos--
		f := h.fields[pos]
		fn([]byte(f.name), ks.bytesAt(f.loc))
	}
	return pos, nil
}

// HRandomField returns a random field and its value; ok is false for a
// missing key.
func (ks *Keyspace) HRandomField(db int, key []byte) (field, val []byte, ok bool, err error) {
	h, err := ks.hash(db, key)
	if h == nil || len(h.fields) == 0 {
		return nil, nil, false, err
	}
	f := h.fields[rand.IntN(len(h.fields))]
	return []byte(f.name), ks.bytesAt(f.loc), true, nil
}

// HFieldAt returns the i-th field in the hash's internal order (0 <= i <
// HLen), for sampling without replacement (HRANDFIELD with a count).
func (ks *Keyspace) HFieldAt(db int, key []byte, i int) (field, val []byte) {
	h, _ := ks.hash(db, key)
	f := h.fields[i]
	return []byte(f.name), ks.bytesAt(f.loc)
}

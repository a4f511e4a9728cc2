package keyspace

import (
	"encoding/binary"
	"fmt"
)

// Patched strings.
//
// SETRANGE, APPEND and SETBIT on a large string log only the bytes they
// change, as an opSetRange, instead of the whole new value (which made a
// SETBIT on a 512 MB bitmap write 512 MB). The first patch copies the
// string out of the log into a DRAM buffer that later patches change in
// place; reads serve the buffer. The string's state is then its base
// opSet plus the patches after it, so firstSeg is the base's segment, and
// the cleaner rewrites the whole string (one opSet) when it cleans any
// segment holding part of it — after which the string is served from the
// log again until it is next patched.
//
//	opSetRange  body: offset uvarint | bytes (uvarint length + bytes);
//	            a missing key becomes zeros up to offset, then the bytes
const opSetRange = 50

// stringObj is a string held in DRAM because it has been patched. ref is
// the base it was patched from when that was read through an opSetRef
// (valueref.go): a replay rebuilds it from that base, which the key holds
// until it is next written whole.
type stringObj struct {
	val []byte
	ref uint64
}

func (s *stringObj) typeName() string { return TypeString }
func (s *stringObj) length() int      { return 1 } // an empty string still exists
func (s *stringObj) liveBytes() int64 { return int64(len(s.val)) + 16 }
func (s *stringObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	b.Set(db, key, s.val, 0)
}

func registerStringOps(m map[byte]objectApplier) {
	registerOp(m, opSetRange, applySetRange)
	registerOp(m, opHLLAdd, applyHLLAdd)
}

// patchedString returns the DRAM copy of the string at e (which exists),
// moving it out of the log on its first patch with room for size bytes,
// and the entry, which that move may replace (a key-index entry becomes a
// DRAM one). errOpType when e holds a collection.
func (ks *Keyspace) patchedString(db int, e *entry, size int) (*stringObj, *entry, error) {
	if e.obj != nil {
		if s, ok := e.obj.coll.(*stringObj); ok {
			return s, e, nil
		}
		return nil, e, errOpType
	}
	if e.kix {
		e = ks.kixMaterialize(db, e)
	}
	v, base, err := ks.stringAt(e.loc)
	if err != nil {
		panic(fmt.Sprintf("keyspace: index points at a bad operation: %v", err))
	}
	s := &stringObj{val: append(make([]byte, 0, max(len(v), size)), v...)}
	first := e.loc >> 40
	if base != e.loc { // read through an opSetRef: the base stays held
		s.ref, first = base, base>>40
	}
	ks.liveBytes -= int64(e.size)
	e.obj = &object{coll: s, firstSeg: first}
	e.loc, e.size = 0, 0
	return s, e, nil
}

// SetRange appends an operation overwriting the string at key from offset
// (bytes) with p, zero-padding as needed (semantics: redis.io SETRANGE; the
// caller checks type and limits). The key's expiry is kept.
func (b *Batch) SetRange(db int, key []byte, offset int64, p []byte) {
	body := binary.AppendUvarint(make([]byte, 0, len(p)+2*binary.MaxVarintLen64), uint64(offset))
	body = appendBytes(body, p)
	b.ObjectOp(opSetRange, db, key, body)
}

func applySetRange(ks *Keyspace, o op, e *entry) (err error) {
	off, w := binary.Uvarint(o.body)
	if w <= 0 {
		return fmt.Errorf("%w: setrange offset", errBadOp)
	}
	p, _, ok := readBytes(o.body, w)
	if !ok || off > 1<<40 {
		return fmt.Errorf("%w: setrange bytes", errBadOp)
	}
	var s *stringObj
	if e == nil {
		s = &stringObj{}
		e = ks.createObject(o.db, o.key, s, o.loc)
	} else if s, e, err = ks.patchedString(o.db, e, int(off)+len(p)); err != nil {
		return fmt.Errorf("%w: SETRANGE on a %s", err, ks.typeOf(e))
	}
	end := int(off) + len(p)
	if end > len(s.val) {
		s.val = append(s.val, make([]byte, end-len(s.val))...)
	}
	copy(s.val[off:], p)
	ks.objectChanged(o.db, e)
	return nil
}

package keyspace

import (
	"encoding/binary"
	"fmt"
)

// Patched strings.
//
// SETRANGE, APPEND and SETBIT on a large string log only the bytes they
// change, as an opSetRange, instead of the whole new value (which made a
// SETBIT on a 512 MB bitmap write 512 MB). The string's state is then its
// base (the opSet or opSetRef it had) plus the patches after it, so
// firstSeg is the base's segment, and the cleaner rewrites the whole
// string (one opSet) when it cleans any segment holding part of it —
// after which the string is served from the log again until it is next
// patched.
//
// In DRAM a patched string of less than refMinValue bytes is copied out of
// the log at its first patch into a buffer later patches change in place.
// A larger one stays lazy: it keeps the base's location and the patches
// (their bytes only), so SETRANGE and APPEND of a few bytes on a 512 MB
// value hold a few bytes, live and after a replay; the first read that
// needs the value (GET, GETRANGE, SETBIT's read of its byte, a RENAME's
// copy) builds the buffer once, from the base and the patches, and the
// string is then patched in place as a small one.
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
	// The lazy form (lazy: val is nil): the value is the string operation
	// at base with patches applied in order, n bytes long.
	lazy       bool
	base       uint64
	patches    []stringPatch
	n          int
	patchBytes int // DRAM the patches take, about
}

// stringPatch is one SETRANGE of a lazy string: p written at off.
type stringPatch struct {
	off int
	p   []byte
}

// value returns the string's bytes, building them from the base and the
// patches if it is lazy (it then stays built).
func (s *stringObj) value(ks *Keyspace) []byte {
	if !s.lazy {
		return s.val
	}
	v, _, err := ks.stringAt(s.base)
	if err != nil {
		panic(fmt.Sprintf("keyspace: a patched string's base is gone: %v", err))
	}
	buf := make([]byte, s.n)
	copy(buf, v)
	for _, p := range s.patches {
		copy(buf[p.off:], p.p)
	}
	s.val, s.lazy = buf, false // the patches stay: an APPEND that outgrows buf goes lazy again
	return buf
}

// patch records a SETRANGE of p at off on s, which is lazy or built from
// a base (s.base != 0). If s is still built afterwards, the caller writes
// p into it in place (it fits its capacity).
func (s *stringObj) patch(ks *Keyspace, off int, p []byte) {
	end := off + len(p)
	s.patchBytes += len(p) + 48 // the bytes, the slice and its header
	if s.patchBytes > max(s.n/16, refMinValue) {
		// Too many patches to keep beside the value: it stays built, as
		// a small string does, and the patches go.
		if s.lazy {
			s.value(ks)
		}
		s.patches, s.base, s.patchBytes = nil, 0, 0
		return
	}
	s.patches = append(s.patches, stringPatch{off, append([]byte(nil), p...)})
	s.n = max(s.n, end)
	if !s.lazy && end > cap(s.val) {
		s.val, s.lazy = nil, true // growing would copy the whole value: read it from the base again
	}
}

func (s *stringObj) typeName() string { return TypeString }
func (s *stringObj) length() int      { return 1 } // an empty string still exists
func (s *stringObj) liveBytes() int64 {
	if s.lazy {
		return int64(s.n) + 16
	}
	return int64(len(s.val)) + 16
}
func (s *stringObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	b.Set(db, key, s.value(ks), 0)
}

func registerStringOps(m map[byte]objectApplier) {
	registerOp(m, opSetRange, applySetRange)
	registerOp(m, opHLLAdd, applyHLLAdd)
}

// patchedString returns the DRAM form of the string at e (which exists),
// moving it out of the log on its first patch with room for size bytes
// (lazy for a large value when lazyOK), and the entry, which that move
// may replace (a key-index entry becomes a DRAM one). errOpType when e
// holds a collection.
func (ks *Keyspace) patchedString(db int, e *entry, size int, lazyOK bool) (*stringObj, *entry, error) {
	if e.obj != nil {
		if s, ok := e.obj.coll.(*stringObj); ok {
			if !lazyOK {
				s.value(ks) // built: the caller changes the bytes in place
			}
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
	var s *stringObj
	if lazyOK && len(v) >= refMinValue {
		s = &stringObj{lazy: true, base: e.loc, n: len(v)}
	} else {
		s = &stringObj{val: append(make([]byte, 0, max(len(v), size)), v...)}
	}
	first := e.loc >> 40
	if base != e.loc { // read through an opSetRef: the base stays held
		s.ref, first = base, base>>40
	}
	ks.liveBytes -= int64(e.size)
	e.obj = &object{coll: s, firstSeg: first}
	e.loc, e.size = 0, 0
	return s, e, nil
}

// StringLen returns the length of the string at key without reading its
// bytes (a lazy patched string is not built): STRLEN, and the offsets of
// APPEND and SETRANGE. ok is false when the key does not exist; err is
// ErrWrongType when it is not a string.
func (ks *Keyspace) StringLen(db int, key []byte) (n int, ok bool, err error) {
	e := ks.lookup(db, key)
	switch {
	case e == nil:
		return 0, false, nil
	case e.obj == nil:
		return len(ks.value(e)), true, nil
	}
	if s, isStr := e.obj.coll.(*stringObj); isStr {
		if s.lazy {
			return s.n, true, nil
		}
		return len(s.val), true, nil
	}
	if err := damageOf(e); err != nil {
		return 0, false, err
	}
	return 0, false, ErrWrongType
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
	} else if s, e, err = ks.patchedString(o.db, e, int(off)+len(p), true); err != nil {
		return fmt.Errorf("%w: SETRANGE on a %s", err, ks.typeOf(e))
	}
	end := int(off) + len(p)
	if s.base != 0 {
		s.patch(ks, int(off), p)
		if s.lazy {
			ks.objectChanged(o.db, e)
			return nil
		}
	}
	if end > len(s.val) {
		s.val = append(s.val, make([]byte, end-len(s.val))...)
	}
	copy(s.val[off:], p)
	ks.objectChanged(o.db, e)
	return nil
}

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

// stringObj is a string held in DRAM because it has been patched.
type stringObj struct{ val []byte }

func (s *stringObj) typeName() string { return TypeString }
func (s *stringObj) length() int      { return 1 } // an empty string still exists
func (s *stringObj) liveBytes() int64 { return int64(len(s.val)) + 16 }
func (s *stringObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	b.Set(db, key, s.val, 0)
}

func registerStringOps(m map[byte]objectApplier) {
	registerOp(m, opSetRange, applySetRange)
}

// SetRange appends an operation overwriting the string at key from offset
// (bytes) with p, zero-padding as needed (semantics: redis.io SETRANGE; the
// caller checks type and limits). The key's expiry is kept.
func (b *Batch) SetRange(db int, key []byte, offset int64, p []byte) {
	body := binary.AppendUvarint(make([]byte, 0, len(p)+2*binary.MaxVarintLen64), uint64(offset))
	body = appendBytes(body, p)
	b.ObjectOp(opSetRange, db, key, body)
}

func applySetRange(ks *Keyspace, o op, e *entry) error {
	off, w := binary.Uvarint(o.body)
	if w <= 0 {
		return fmt.Errorf("%w: setrange offset", errBadOp)
	}
	p, _, ok := readBytes(o.body, w)
	if !ok || off > 1<<40 {
		return fmt.Errorf("%w: setrange bytes", errBadOp)
	}
	var s *stringObj
	switch {
	case e == nil:
		s = &stringObj{}
		e = ks.createObject(o.db, o.key, s, o.loc)
	case e.obj == nil:
		// First patch: move the value out of the log into DRAM.
		if e.kix {
			e = ks.kixMaterialize(o.db, e)
		}
		v := ks.value(e)
		s = &stringObj{val: append(make([]byte, 0, max(len(v), int(off)+len(p))), v...)}
		ks.liveBytes -= int64(e.size)
		e.obj = &object{coll: s, firstSeg: e.loc >> 40}
		e.loc, e.size = 0, 0
	default:
		var isString bool
		if s, isString = e.obj.coll.(*stringObj); !isString {
			return fmt.Errorf("%w: SETRANGE on a %s", errOpType, ks.typeOf(e))
		}
	}
	end := int(off) + len(p)
	if end > len(s.val) {
		s.val = append(s.val, make([]byte, end-len(s.val))...)
	}
	copy(s.val[off:], p)
	ks.objectChanged(o.db, e)
	return nil
}

package keyspace

import (
	"encoding/binary"
	"fmt"

	"github.com/persimmon-db/persimmon/hll"
)

// HyperLogLog register updates.
//
// A PFADD that changes an existing HyperLogLog logs the registers it
// raises, a few bytes, instead of the string (a dense HLL is 12304 bytes;
// a sparse one up to hll-sparse-max-bytes, which its insertions shift, so
// a byte patch of it is as long as the string). The string becomes a
// patched string (stringpatch.go): its bytes live in DRAM from the first
// such operation on, and every read, DUMP, COPY and the cleaner's rewrite
// see the plain string Redis would hold.
//
//	opHLLAdd  body: sparse limit uvarint | n × (register u16 LE | value u8)
//
// Applying it raises the registers in order with hll.Set under the logged
// sparse limit (hll-sparse-max-bytes when the command ran), then, if any
// register changed, marks the cached cardinality invalid, as PFADD does.
// hll.Set is Redis's algorithm and deterministic, so the same string and
// the same operation give the same bytes, live and at recovery, whatever
// the limit is configured to by then. A missing key (it expired between the
// command's read and the apply, or at recovery an incarnation the cleaner
// removed) starts from an empty HLL; a value that is no longer an HLL, or
// whose sparse opcodes do not decode, is a stale operation.
const opHLLAdd = 51

// HLLRegister is one register an opHLLAdd raises: Index below
// hll.Registers, Value 1..64-hll.P+1.
type HLLRegister struct {
	Index uint16
	Value uint8
}

// HLLAdd appends an operation raising the given registers of the
// HyperLogLog string at key (which the caller has checked is one), in
// order, with the sparse limit maxSparse (bytes; hll-sparse-max-bytes).
// The key's expiry is kept.
func (b *Batch) HLLAdd(db int, key []byte, maxSparse int, regs []HLLRegister) {
	b.head(opHLLAdd, db)
	b.bytes(key)
	var lim [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(lim[:], uint64(maxSparse))
	b.buf = binary.AppendUvarint(b.buf, uint64(n+3*len(regs)))
	b.buf = append(b.buf, lim[:n]...)
	for _, r := range regs {
		b.buf = append(b.buf, byte(r.Index), byte(r.Index>>8), r.Value)
	}
}

// HLLValue returns the string value of key, as Get, and its absolute
// expiry in Unix ms (0 = none) from the same lookup: PFADD rewrites a
// small sparse HLL whole, keeping the expiry, and a second lookup of the
// key cost it a few percent. A key of the persistent index whose slot
// names a plain opSet with no expiry passed is read straight from that
// operation, decoded once, with no transient entry (find's kixLookup
// allocates one and its key, then value decodes the operation again:
// about a tenth of a small sparse PFADD's handler time); anything else
// (an expired, damaged or referenced value) takes lookup's path.
//
// On that fast path the access (OBJECT IDLETIME, FREQ) is not recorded:
// it is returned, and the caller records it with RecordAccess unless it
// rewrites the value whole, whose write records an access itself (under
// an LFU policy the counter carries over and is incremented, as Redis's
// dbOverwrite keeps it). Redis counts one access per PFADD and per
// PFCOUNT (lookupKeyWrite, then the value changed in place); recording
// both made OBJECT FREQ count two for each PFADD that changed a small
// HLL. Record it before the next write: it names the value's location.
func (ks *Keyspace) HLLValue(db int, key []byte) (val []byte, expireAt int64, acc PendingAccess, ok bool, err error) {
	if _, inDRAM := ks.dbs[db].index[string(key)]; !inDRAM && ks.kixOn() {
		loc, found := ks.kixGet(db, key)
		if !found {
			ks.countLookup(false)
			ks.keyMissed(db, key)
			return nil, 0, PendingAccess{}, false, nil
		}
		var o op
		if err := ks.opInto(loc, &o); err == nil && o.kind == opSet && (o.expireAt == 0 || o.expireAt > ks.NowMs()) {
			ks.countLookup(true)
			return o.val, o.expireAt, PendingAccess{loc}, true, nil
		}
	}
	e := ks.lookup(db, key)
	if e == nil {
		return nil, 0, PendingAccess{}, false, nil
	}
	if e.obj != nil {
		if s, ok := e.obj.coll.(*stringObj); ok {
			return s.value(ks), e.expireAt, PendingAccess{}, true, nil
		}
		if err := damageOf(e); err != nil {
			return nil, 0, PendingAccess{}, false, err
		}
		return nil, 0, PendingAccess{}, false, ErrWrongType
	}
	return ks.value(e), e.expireAt, PendingAccess{}, true, nil
}

// PendingAccess is an access to an indexed key that HLLValue read but did
// not record (the zero value: nothing to record).
type PendingAccess struct{ loc uint64 }

// RecordAccess records a, as the lookup would have.
func (ks *Keyspace) RecordAccess(a PendingAccess) {
	if a.loc != 0 {
		ks.kixAccess.touch(a.loc)
	}
}

// scratchKeep is the largest buffer Scratch keeps for the next batch.
const scratchKeep = 64 << 10

// Scratch returns an empty buffer with room for n bytes that belongs to
// the batch: valid until the next NewBatch, so a value built in it may be
// passed to Set (which copies it into the payload) and committed. PFADD
// builds a small sparse HLL's new bytes in it: one allocation a request
// less, and nothing for the GC.
func (b *Batch) Scratch(n int) []byte {
	if n > scratchKeep {
		return make([]byte, 0, n) // a huge PFADD's: not kept
	}
	if cap(b.scratch) < n {
		b.scratch = make([]byte, 0, max(n, 2*cap(b.scratch)))
	}
	return b.scratch[:0]
}

// hllMaxValue is the largest register value PatLen proposes.
const hllMaxValue = 64 - hll.P + 1

func applyHLLAdd(ks *Keyspace, o op, e *entry) (err error) {
	limit, w := binary.Uvarint(o.body)
	if w <= 0 || limit > 1<<31 || (len(o.body)-w)%3 != 0 {
		return fmt.Errorf("%w: hll body", errBadOp)
	}
	regs := o.body[w:]
	for i := 0; i < len(regs); i += 3 {
		if idx, v := binary.LittleEndian.Uint16(regs[i:]), regs[i+2]; idx >= hll.Registers || v == 0 || v > hllMaxValue {
			return fmt.Errorf("%w: hll register %d value %d", errBadOp, idx, v)
		}
	}
	var s *stringObj
	if e == nil {
		s = &stringObj{val: hll.New()}
		e = ks.createObject(o.db, o.key, s, o.loc)
	} else if s, e, err = ks.patchedString(o.db, e, 0, false); err != nil {
		return fmt.Errorf("%w: PFADD on a %s", err, ks.typeOf(e))
	}
	if hll.Check(s.val) != nil {
		return fmt.Errorf("%w: PFADD on a string that is not an HLL", errStaleOp)
	}
	if n := len(regs) / 3 * 4; !hll.IsDense(s.val) && cap(s.val)-len(s.val) < n {
		// Room for the opcodes the splits may add (4 bytes a register at
		// most) and an eighth more, so hll.Set grows the string in place
		// and the next few operations find room too (a copy of the whole
		// sparse string per operation, else).
		s.val = append(make([]byte, 0, len(s.val)+n+len(s.val)/8), s.val...)
	}
	changed := false
	for i := 0; i < len(regs); i += 3 {
		v, ch, err := hll.Set(s.val, int(binary.LittleEndian.Uint16(regs[i:])), regs[i+2], int(limit))
		if err != nil {
			return fmt.Errorf("%w: PFADD on a corrupt HLL", errStaleOp)
		}
		s.val = v
		changed = changed || ch
	}
	if changed {
		hll.Invalidate(s.val)
	}
	ks.objectChanged(o.db, e)
	return nil
}

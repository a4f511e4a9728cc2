package keyspace

import (
	"encoding/binary"
	"fmt"
)

// The anchor of a patched string.
//
// A plain string is one set operation; its first patch (SETRANGE,
// APPEND, SETBIT, PFADD: stringpatch.go, hllpatch.go) makes it a DRAM
// entry whose state is that set, its base, plus the patches. Such an
// entry needs an anchor (kixanchor.go) for the key index's checkpoint to
// be restartable from, and an anchor must be an object operation of the
// key: the table reads a slot's key back from the operation it names, a
// set reading back as the plain string's slot. So, with the index
// attached, a batch holding the first patch of a plain string begins with
// an opPatchBase naming the base (prepareBatch): its apply makes the key
// a patched string of that base with no patch yet, anchored at the
// opPatchBase, and the patches that follow apply to it as before.
// Recovery's scan from the anchors meets the opPatchBase first; the key
// is not there yet (the table holds only the anchor), so the scan applies
// the base, read by its location, before it (the base is older than the
// anchor and may lie before the scan's first segment; it is held there:
// the cleaner rewrites the string whole when it cleans the base's
// segment, firstSeg). A string whose base is a value reference (opSetRef)
// or an operation naming another database (SWAPDB) gets none and keeps
// the whole-log restart.
//
//	opPatchBase  body: base uvarint, the location of the key's opSet
const opPatchBase = 52

func registerPatchBaseOps(m map[byte]objectApplier) {
	registerOp(m, opPatchBase, applyPatchBase)
}

// applyBase is Keyspace.apply, through a variable: the appliers' table
// cannot name it statically (apply reads the table).
var applyBase func(ks *Keyspace, o *op, loc uint64) error

func init() { applyBase = (*Keyspace).apply }

// appendPatchBase appends an opPatchBase of (db, key) naming base to p.
func appendPatchBase(p []byte, db int, key []byte, base uint64) []byte {
	p = append(p, opPatchBase, byte(db))
	p = binary.AppendUvarint(p, uint64(len(key)))
	p = append(p, key...)
	p = binary.AppendUvarint(p, uint64(uvarintLen(base)))
	return binary.AppendUvarint(p, base)
}

// plainStringBase returns the location of the set operation (dbi, key)
// holds as a plain string, when it is one an opPatchBase may name: an
// opSet of this database and key (not a value reference, not an
// operation SWAPDB moved here from another database).
func (ks *Keyspace) plainStringBase(dbi int, key []byte) (uint64, bool) {
	d := ks.dbs[dbi]
	var loc uint64
	if i, ok := d.index[string(key)]; ok {
		if e := &d.entries[i]; e.obj == nil {
			loc = e.loc
		}
	} else if l, ok := ks.kixGet(dbi, key); ok {
		loc = l
	}
	if loc == 0 {
		return 0, false
	}
	o, err := ks.opAt(loc)
	if err != nil || o.kind != opSet || o.db != dbi || string(o.key) != string(key) {
		return 0, false
	}
	return loc, true
}

func applyPatchBase(ks *Keyspace, o op, e *entry) error {
	base, w := binary.Uvarint(o.body)
	if w <= 0 || w != len(o.body) || base == 0 {
		return fmt.Errorf("%w: patch base body", errBadOp)
	}
	if e == nil && ks.anchorFilter {
		// Recovery's scan from the anchors: the base comes before the
		// anchor, unscanned.
		bo, err := ks.opAt(base)
		if err != nil {
			return err
		}
		if bo.kind != opSet || bo.db != o.db || string(bo.key) != string(o.key) {
			return fmt.Errorf("%w: the patch base at %#x is not a set of the key", errBadOp, base)
		}
		if err := applyBase(ks, &bo, base); err != nil {
			return err
		}
		e = ks.rawEntry(o.db, o.key)
	}
	if e == nil || e.obj != nil || e.loc != base {
		// Gone (expired, or a replay over a partial state: errStaleOp)
		// or no longer that plain string: nothing to anchor.
		return nil
	}
	_, e, err := ks.patchedString(o.db, e, 0, true)
	if err != nil {
		return err
	}
	ks.anchorAdd(o.db, e, o.loc)
	ks.objectChanged(o.db, e)
	return nil
}

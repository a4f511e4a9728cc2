package keyspace

import "fmt"

// Large values by reference.
//
// Changing the expiry of a string (EXPIRE, PEXPIRE, PEXPIREAT, PERSIST)
// or its name or database (RENAME, MOVE) used to log the whole value
// again, since a string's state was one opSet: 512 MB written, on disk
// and in the page cache, for an EXPIRE. For a value of at least
// refMinValue bytes these commands now log an opSetRef instead: the key,
// its expiry and the location of the opSet that holds the value (its
// base). The key's live operation is then the opSetRef (the index slot or
// DRAM entry names it), its value is read through it, and a further
// change writes another opSetRef naming the same base (references never
// chain). Smaller values are still rewritten: a copy of a few KiB costs
// less than a reference the cleaner must track.
//
// Chosen over a value made of chunks: a chunked value would also need
// references for EXPIRE and RENAME (the same tracking, per chunk), and
// GET could no longer return one slice of the mapping; SETRANGE and
// APPEND already log only their bytes (stringpatch.go).
//
// Invariants:
//   - A base has at most one holder: the key whose value it is through an
//     opSetRef (or through a patched string built on one, stringpatch.go).
//     RENAME and MOVE write the destination's opSetRef before the source's
//     delete, in one record; the holder is then the destination, and the
//     source's delete does not release the base (releaseBase compares the
//     holder's name).
//   - refs maps every held base to its holder, live and after a replay
//     alike (apply maintains it; a base is never recorded dead in
//     deadSets while held). The segment cleaner, meeting a held base,
//     writes the holder's value whole (an opSet) before the segment goes,
//     which makes the opSetRef dead; so an opSetRef never outlives its
//     base's segment, and a replay that meets an opSetRef whose base's
//     segment is gone (removed after such a copy) finds that copy later in
//     the log.
//   - The live bytes of a held value count once, with its holder (the
//     opSetRef's own bytes plus the base's).
//   - refs is not in the key index's checkpoint: a checkpoint taken while
//     any base is held counts as one with DRAM entries (cpDRAMKeys), so a
//     restart from it replays the whole log, which rebuilds refs. Keeping
//     the holders in the checkpoint (as the function libraries' location
//     is) would lift that; refs are expected to be few (one per large
//     value whose expiry or name changed), so the map costs nothing per
//     ordinary key.
const refMinValue = 64 << 10

// refHolder is the key a held base is the value of.
type refHolder struct {
	db  int
	key string
}

// stringAt returns the value of the string operation at loc (an opSet, or
// an opSetRef read through its base) and the base's location.
func (ks *Keyspace) stringAt(loc uint64) (val []byte, base uint64, err error) {
	o, err := ks.opAt(loc)
	if err != nil {
		return nil, 0, err
	}
	switch o.kind {
	case opSet:
		return o.val, loc, nil
	case opSetRef:
		b, err := ks.opAt(o.ref)
		if err != nil {
			return nil, 0, fmt.Errorf("value reference at %#x: %w", loc, err)
		}
		if b.kind != opSet {
			return nil, 0, fmt.Errorf("%w: value reference at %#x names an operation of kind %d", errBadOp, loc, b.kind)
		}
		return b.val, o.ref, nil
	}
	return nil, 0, fmt.Errorf("%w: location %#x holds an operation of kind %d, not a string", errBadOp, loc, o.kind)
}

// stringLiveSize is what the string operation o counts in the live bytes:
// its encoding, plus its base's for an opSetRef (nothing when the base's
// segment is gone: a replay before the cleaner's copy; the same figure is
// taken off when the key changes).
func (ks *Keyspace) stringLiveSize(o op) int64 {
	n := int64(o.size)
	if o.kind == opSetRef {
		if b, err := ks.opAt(o.ref); err == nil && b.kind == opSet {
			n += int64(b.size)
		}
	}
	return n
}

// dropString is called when the string operation at loc stops being the
// value of (db, key): it records the dead operations for the cleaner and
// releases a held base, unless keep (the base of the operation replacing
// it) is that base.
func (ks *Keyspace) dropString(db int, key string, loc, keep uint64) {
	if len(ks.refs) == 0 {
		ks.setDied(loc) // no base held: every string operation is an opSet
		return
	}
	base := loc
	if o, err := ks.opAt(loc); err == nil && o.kind == opSetRef {
		ks.setDied(loc)
		base = o.ref
	}
	ks.releaseBase(db, key, base, keep)
}

// releaseBase records base dead unless it is keep or still held by
// another key than (db, key).
func (ks *Keyspace) releaseBase(db int, key string, base, keep uint64) {
	if base == keep {
		return
	}
	if h, ok := ks.refs[base]; ok {
		if h.db != db || h.key != key {
			return // moved on: RENAME's or MOVE's destination holds it
		}
		delete(ks.refs, base)
	}
	ks.setDied(base)
}

// dropEntry releases what the DRAM entry e of db held (its string
// operation, or a patched string's base) as the key goes or changes.
func (ks *Keyspace) dropEntry(db int, e *entry, keep uint64) {
	switch {
	case e.obj == nil:
		ks.dropString(db, e.key, e.loc, keep)
	default:
		if s, ok := e.obj.coll.(*stringObj); ok && s.ref != 0 {
			ks.releaseBase(db, e.key, s.ref, keep)
		}
	}
}

// refsSwapped follows SWAPDB: holders of a and b change database.
func (ks *Keyspace) refsSwapped(a, b int) {
	for base, h := range ks.refs {
		switch h.db {
		case a:
			ks.refs[base] = refHolder{b, h.key}
		case b:
			ks.refs[base] = refHolder{a, h.key}
		}
	}
}

// refsFlushed drops the holders of the databases flushed (all for -1).
func (ks *Keyspace) refsFlushed(db int) {
	for base, h := range ks.refs {
		if db < 0 || h.db == db {
			delete(ks.refs, base)
			ks.setDied(base)
		}
	}
}

// cleanHeldBase adds to b, for the cleaner meeting the held base at loc,
// the holder's value whole, so the segment can go; reset notes the holder
// as written.
func (ks *Keyspace) cleanHeldBase(b *Batch, loc uint64, reset map[string]bool) {
	h := ks.refs[loc]
	delete(ks.refs, loc) // the copy below replaces whatever holds it
	if e := ks.cleanEntry(h.db, []byte(h.key), ks.NowMs()); e != nil {
		ks.copyEntry(b, e, h.db, []byte(h.key), e.expireAt)
		reset[string(append([]byte{byte(h.db)}, h.key...))] = true
	}
}

// refValue returns the base of e's value if it is a plain string of at
// least refMinValue bytes, else 0.
func (ks *Keyspace) refValue(e *entry) uint64 {
	if e.obj != nil || e.size < refMinValue {
		return 0
	}
	val, base, err := ks.stringAt(e.loc)
	if err != nil || len(val) < refMinValue {
		return 0
	}
	return base
}

// MoveValue appends to b what gives (dstDB, dst) the value of (srcDB,
// src) with the expiry expireAtMs, for RENAME and MOVE, which then delete
// src in the same batch: a reference to a large string's value, else
// CopyValue's copy. It returns false when src does not exist.
func (ks *Keyspace) MoveValue(b *Batch, srcDB int, src []byte, dstDB int, dst []byte, expireAtMs int64) bool {
	e := ks.lookup(srcDB, src)
	if e == nil {
		return false
	}
	if base := ks.refValue(e); base != 0 {
		b.SetRef(dstDB, dst, base, expireAtMs)
		return true
	}
	return ks.CopyValue(b, srcDB, src, dstDB, dst, expireAtMs)
}

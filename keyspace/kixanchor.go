package keyspace

// Anchors: collections in the key index's checkpoint.
//
// A DRAM entry's current incarnation (a collection, or a string patched
// from nothing) starts at one exact operation of the log, its anchor: the
// object operation that created it from nothing (createObject), which for
// a rewrite whole (the cleaner, COPY, RENAME, MOVE, the *STORE commands)
// is the creating operation right after the rewrite's delete. Every
// operation that shaped the incarnation's state (its elements, its
// expiry) is at or after the anchor, and every one after it up to now is
// an object operation of the key (a set, a delete, a flush of its
// database would have ended the incarnation). object.anchor holds that
// location, or 0 where no such operation names the entry's database and
// key: a string patched from a set operation (its base, stringpatch.go)
// and the entries SWAPDB moved (their operations name the other
// database).
//
// With the index attached, every entry with an anchor has a slot in the
// index's table under the anchor key (kixAnchorNS|db, then the key)
// naming the anchor operation, whose database and key are read back as
// for a string (IndexKeyAt); the slot is staged where the entry is
// created and removed where it goes (removeKeyKeeping, FLUSHDB,
// FLUSHALL, SWAPDB), and checkpointed with the strings at the same LSN C.
// So the table as of C holds exactly the set {(db, key) -> anchor} of the
// DRAM entries at C that have one. A checkpoint counts the DRAM entries
// without one (cpDRAMKeys: any makes it untrusted, as before) and
// carries the oldest anchor's segment (cpAnchorSeg) and the anchored
// entries' live bytes (cpAnchorBytes). A restart from it re-attaches the
// table, then scans the records from that segment up to C applying only
// the object operations of keys with an anchor slot whose location is at
// or after their anchor (kixAnchorWanted), which rebuilds exactly the
// DRAM entries of C; everything else up to C is in the table already.
// The records after C replay as usual.
const kixAnchorNS = 0x80

// anchorState is the keyspace's account of the anchored entries (index
// attached only).
type anchorState struct {
	counts [NumDBs]int    // entries with an anchor slot, per database
	segs   map[uint64]int // entries anchored in each segment
	bytes  int64          // their live bytes (object.bytes)

	// recovery: records up to scanTo (the checkpoint's LSN) are scanned
	// for the operations of anchored keys from segment scanSeg on.
	scanTo  uint64
	scanSeg uint64
	wanted  map[string]uint64 // anchor keys met by the scan, with their anchor
	key     []byte
	scanned int64 // records scanned up to C
	applied int64 // operations of anchored keys applied from them
}

// kixAnchorKey is the index key of the anchor slot of (dbi, key).
func (ks *Keyspace) kixAnchorKey(dbi int, key []byte) []byte {
	ks.kix.lookBuf = append(append(ks.kix.lookBuf[:0], byte(dbi)|kixAnchorNS), key...)
	return ks.kix.lookBuf
}

// anchorAdd gives the new entry e of (dbi, key) its anchor, the operation
// at loc, and stages its anchor slot.
func (ks *Keyspace) anchorAdd(dbi int, e *entry, loc uint64) {
	e.obj.anchor = loc
	if !ks.kixOn() || loc == 0 {
		return
	}
	a := &ks.kix.anchors
	if a.segs == nil {
		a.segs = map[uint64]int{}
	}
	a.counts[dbi]++
	a.segs[loc>>40]++
	a.bytes += e.obj.bytes
	k := ks.kixAnchorKey(dbi, []byte(e.key))
	if ks.anchorFilter && a.wanted[string(k)] == loc {
		return // recovery's scan re-creating an entry of the checkpoint: its slot is in the table
	}
	ks.kixWriteKey(k, loc, false)
}

// anchorDrop takes the anchor of e (an entry of dbi going away, or one
// that keeps no anchor) out of the account, and its slot out of the
// index when stage is set (a bulk removal takes the slots itself).
func (ks *Keyspace) anchorDrop(dbi int, e *entry, stage bool) {
	if e.obj == nil || e.obj.anchor == 0 {
		return
	}
	loc := e.obj.anchor
	e.obj.anchor = 0
	if !ks.kixOn() {
		return
	}
	a := &ks.kix.anchors
	a.counts[dbi]--
	if a.segs[loc>>40]--; a.segs[loc>>40] <= 0 {
		delete(a.segs, loc>>40)
	}
	a.bytes -= e.obj.bytes
	if stage {
		ks.kixWriteKey(ks.kixAnchorKey(dbi, []byte(e.key)), 0, false)
	}
}

// anchorBytesChanged follows a change of e's counted live bytes from old.
func (ks *Keyspace) anchorBytesChanged(e *entry, old int64) {
	if e.obj.anchor != 0 && ks.kixOn() {
		ks.kix.anchors.bytes += e.obj.bytes - old
	}
}

// anchorLen is the number of anchored entries.
func (ks *Keyspace) anchorLen() int {
	n := 0
	for _, c := range ks.kix.anchors.counts {
		n += c
	}
	return n
}

// anchorOldestSeg is the segment of the oldest anchor (0: none).
func (ks *Keyspace) anchorOldestSeg() uint64 {
	var m uint64
	for s := range ks.kix.anchors.segs {
		if m == 0 || s < m {
			m = s
		}
	}
	return m
}

// anchorsUnindexed removes the anchor slots of dbs (nil: all) from the
// table's account after a bulk change took them out of the table (FLUSHDB,
// FLUSHALL, SWAPDB): each entry of those databases loses its anchor.
func (ks *Keyspace) anchorsUnindexed(dbs []int) {
	for dbi, d := range ks.dbs {
		if dbs != nil && !containsInt(dbs, dbi) {
			continue
		}
		for i := range d.entries {
			ks.anchorDrop(dbi, &d.entries[i], false)
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Anchors calls fn for every DRAM entry that has an anchor (persimmon-check
// compares them with the index's anchor slots); expireAt is the entry's,
// or in a keyspace whose clock is stopped (FreezeClockForReplay) the
// earliest expiry its incarnation was ever given: one that has passed
// means the server may have expired it (no record says so) and what it
// holds under the key began later.
func (ks *Keyspace) Anchors(fn func(db int, key string, anchor uint64, expireAt int64)) {
	for dbi, d := range ks.dbs {
		for i := range d.entries {
			e := &d.entries[i]
			if e.obj == nil || e.obj.anchor == 0 {
				continue
			}
			at := e.expireAt
			if h, ok := ks.expiryHist[string(append([]byte{byte(dbi)}, e.key...))]; ok && (at == 0 || h < at) {
				at = h
			}
			fn(dbi, e.key, e.obj.anchor, at)
		}
	}
}

// AnchorScanFrom is the segment from which recovery must read the records
// up to the index's checkpoint (0: none): the oldest anchor's. Set by
// AttachIndex.
func (ks *Keyspace) AnchorScanFrom() uint64 { return ks.kix.anchors.scanSeg }

// kixAnchorWanted reports whether recovery's scan up to the checkpoint
// applies o, an operation at loc: an object operation of a key with an
// anchor slot as of the checkpoint, at or after its anchor. The anchors
// are read from the table once per key (the scan's own writes re-stage
// the same anchors, or remove one whose key expires meanwhile: its later
// operations are applied all the same, as a whole replay would).
func (ks *Keyspace) kixAnchorWanted(o op, loc uint64) bool {
	if o.kind < opObjectBase || o.db >= NumDBs {
		return false
	}
	a := &ks.kix.anchors
	a.key = append(append(a.key[:0], byte(o.db)|kixAnchorNS), o.key...)
	anchor, ok := a.wanted[string(a.key)]
	if !ok {
		if anchor, ok = ks.kix.ix.Get(a.key); !ok {
			return false
		}
		a.wanted[string(a.key)] = anchor
	}
	return loc >= anchor
}

// AnchorNS is the bit an anchor slot's index key sets in its database
// byte (persimmon-check looks anchors up).
const AnchorNS = kixAnchorNS

package keyindex

// A cursor over home slots (SCAN).
//
// A cursor that walks slot positions and reports the key it finds in each
// slot cannot tell a staged write from a stored one: a key staged when the
// walk began is stored by a later checkpoint wherever its probe run has
// room, behind the cursor or ahead of it (reported twice, or never), and a
// key updated after the walk began has a slot that no longer names its
// newest write. A key's home slot (its hash's low bits) does not change
// while the table keeps its size, whether the key is staged, stored or
// being stored, so ScanHomes reports keys by home: a walk over home
// positions in steps, [0, a), [a, b), ..., reports every key present for
// the whole walk exactly once, whatever is staged, stored or checkpointed
// between its steps, as long as the table's generation does not change
// (a growth or rebuild moves every home: the caller starts over, see
// Generation).

// ScanHomes calls fn, once each, for the keys the index holds (their
// newest writes: a staged write before the table's slot; a staged
// deletion hides the key) whose home slot is in [from, to) of the table's
// Stats().Slots positions, with the key as the index holds it (valid
// during the call only), the location of its operation and whether that
// operation has an expiry (as the slot or staged write records it: the
// caller decodes only those to see if they passed). Slots whose
// operation cannot be read (KeyAt's ok false) are skipped. fn must not
// change the index. Cost: the slots of the range and of the probe runs
// that continue past its end, one KeyAt and one hash each, plus the staged
// writes whose overlay positions fall in the range (every staged write
// when the overlay has more positions than the table).
func (ix *Index) ScanHomes(from, to int, fn func(key []byte, loc uint64, expiring bool)) {
	n := len(ix.slots)
	from, to = max(from, 0), min(to, n)
	if from >= to {
		return
	}
	mask := ix.mask
	inRange := func(h uint64) bool { home := int(h & mask); return home >= from && home < to }
	// The frozen writes of a checkpoint whose stores leave the lock
	// (steps.go): a frozen job may be storing them meanwhile, so whether
	// the table holds such a key yet is not asked. A key with a frozen
	// write is given from the staged writes (its newest: a staging since
	// the freeze, else the frozen one) and skipped by the table walk.
	var fz *overlay
	if ix.fz != nil {
		fz = &ix.fz.ov
	}
	frozen := func(h uint64, key []byte) bool { return fz != nil && fz.find(h, key) >= 0 }
	// Staged writes of keys the table does not hold (new keys, or keys
	// whose slot a bulk change dropped): the table walk below cannot meet
	// them. A staged write of a key the table holds is met there.
	ix.ov.rangeHomes(from, to, mask, func(i int) {
		e := &ix.ov.ents[i]
		if e.loc == 0 || !inRange(e.hash) {
			return
		}
		key := ix.ov.key(i)
		if !frozen(e.hash, key) {
			if _, _, ok, _ := ix.findHashed(e.hash, key); ok {
				return
			}
		}
		fn(key, e.loc, e.expiring)
	})
	if fz != nil {
		fz.rangeHomes(from, to, mask, func(i int) {
			e := &fz.ents[i]
			if e.loc == 0 || !inRange(e.hash) {
				return
			}
			if key := fz.key(i); ix.ov.find(e.hash, key) < 0 { // else given above (or deleted since)
				fn(key, e.loc, e.expiring)
			}
		})
	}
	// The table: the keys homed in the range sit in the probe runs that
	// start in it, which may go on past its end (and wrap past the table's
	// end); a run never has a hole (a deletion leaves a tombstone).
	span := uint64(to - from)
	i := uint64(from)
	for steps := uint64(0); steps <= mask; steps++ {
		w := ix.word(i)
		if w == 0 && steps >= span {
			break
		}
		if w != 0 && w&offMask != 0 {
			loc := ix.unpack(w)
			if key, ok := ix.opts.KeyAt(loc); ok {
				if h := hashKey(key); inRange(h) && !frozen(h, key) {
					if e := ix.ov.find(h, key); e < 0 {
						fn(key, loc, w&expBit != 0)
					} else if s := &ix.ov.ents[e]; s.loc != 0 {
						fn(key, s.loc, s.expiring) // updated since it was stored
					}
				}
			}
		}
		i = (i + 1) & mask
	}
}

// rangeHomes calls fn with the index of every entry that may have a table
// home (hash & mask) in [from, to): the overlay places an entry by the low
// bits of the same hash, so while it has no more positions than the table
// those entries sit in the runs that start at the range's positions
// (taken modulo the overlay's size); otherwise every entry is a candidate.
// The caller checks each candidate's home.
func (o *overlay) rangeHomes(from, to int, mask uint64, fn func(i int)) {
	if len(o.ents) == 0 {
		return
	}
	omask := uint64(len(o.pos) - 1)
	span := uint64(to - from)
	if omask > mask || span > omask {
		for i := range o.ents {
			fn(i)
		}
		return
	}
	p := uint64(from) & omask
	for steps := uint64(0); steps <= omask; steps++ {
		w := o.pos[p]
		if w == 0 && steps >= span {
			break
		}
		if w != 0 {
			fn(int(uint32(w)) - 1)
		}
		p = (p + 1) & omask
	}
}

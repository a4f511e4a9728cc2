package keyspace

import "hash/maphash"

// KeyCursor is a resumable walk over every key of every database, taken a
// chunk at a time under the keyspace lock while writes go on between the
// chunks: a replication snapshot's way of reading the keyspace as it was
// at one instant (the cursor's start) without holding the lock for the
// whole walk, as Redis's fork gives its child a copy-on-write view.
//
// It gives each key at most once, and every key that existed at the start
// and was not changed since, at least once. A key changed (or made)
// since the start is the caller's business: its BeforeWrite hook Claims the
// key before the first change, copying the key's old state if Claim says
// it is the first to see it; the walk never gives a claimed key again. So
// "at least once" needs only the keys no write touched, and they are
// found wherever they sit now:
//
//   - the table is walked by slot position; a slot is stored in place, a
//     deletion is a tombstone, so a key stays where it is unless the table
//     grows or is rebuilt: then its generation changes and the walk starts
//     over on the new table (the claims skip what was given);
//   - a key staged in the index at the start (written since its last
//     checkpoint, not in the table yet) reaches the table at a checkpoint,
//     possibly into a slot behind the walk: the index tells the keyspace
//     of every key it stores into a new slot (keyindex SetPlaced), and one
//     behind the walk is noted on the cursor (missedKix); at the end of
//     the table the walk checkpoints the index itself, so what was staged
//     at the start is in the table and noted, and lists whatever is still
//     staged (normally nothing: a checkpoint cannot run inside a
//     transaction group, which never holds the lock between chunks);
//   - each database's DRAM entries are walked by position; a deletion moves
//     the last entry into the hole (db.remove), so when the hole is behind
//     the walk and the moved entry ahead of it, db.remove notes the moved
//     key on the cursor (missed), which the walk gives next;
//   - a key that moves from the table to DRAM or back (a string patched, a
//     string rewritten whole, the cleaner's copy) goes through a write, and
//     so through the hook (the cleaner's rewrites call it too);
//   - FLUSHDB, FLUSHALL and SWAPDB change whole databases: the hook calls
//     Drain first, which gives every unclaimed key of them at once (one
//     walk of the table, not chunked) and the walk passes over them after.
//
// Claims are 128-bit hashes of database and key (two maphash seeds): a
// collision, which would lose a key, is about 2^-128 per pair. They cost
// about 32 bytes a key on the Go heap, none of it scanned by the collector.
// Expired keys are given like any other (the caller's read finds them
// missing).
type KeyCursor struct {
	ks      *Keyspace
	seeds   [2]maphash.Seed
	claimed map[[2]uint64]struct{}
	kb      []byte // the hashed bytes: database, then key

	missedKix []string // index keys (database byte, then key) stored behind the table walk
	staged    []string // index keys staged after the table walk's checkpoint (cursorTableTail)
	phase     int      // cursorTable, cursorTableTail, cursorDRAM, cursorDone
	pos       int      // the table walk: the next slot position
	gen       int      // the table generation pos belongs to
	dbi       int      // the DRAM walk: database dbi, entry i next
	i         int
	d         *db      // ks.dbs[dbi] when the walk registered on it
	missed    []string // keys of d moved behind i (see db.remove)
	done      [NumDBs]bool

	// Placed counts the index keys noted as stored behind the table walk;
	// Staged the keys listed as staged after the walk's checkpoint.
	Placed, Staged int
	// Restarts counts the table walks started over (growth or rebuild).
	Restarts int
	// Examined counts the entries looked at (given or passed over).
	Examined int
}

const (
	cursorTable = iota
	cursorTableTail
	cursorDRAM
	cursorDone
)

// AllDBs, as the database of a BeforeWrite call with a nil key, names
// every database (FLUSHALL).
const AllDBs = -1

// NewKeyCursor starts a walk at this instant (under the lock). Close it
// when done: an open cursor is told of every DRAM deletion.
func (ks *Keyspace) NewKeyCursor() *KeyCursor {
	c := &KeyCursor{ks: ks, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, claimed: map[[2]uint64]struct{}{}}
	if ks.kixOn() {
		c.gen = ks.kix.ix.Generation()
		ks.cursors = append(ks.cursors, c)
		if len(ks.cursors) == 1 {
			ks.kix.ix.SetPlaced(ks.kixPlaced)
		}
	} else {
		c.phase = cursorDRAM
	}
	return c
}

// kixPlaced is the key index's note that key went into a new slot: a
// cursor whose table walk has passed the slot gives it from missedKix.
func (ks *Keyspace) kixPlaced(slot int, key []byte) {
	gen := ks.kix.ix.Generation()
	for _, c := range ks.cursors {
		if c.phase == cursorTable && c.gen == gen && slot < c.pos {
			c.missedKix = append(c.missedKix, string(key))
			c.Placed++
		}
	}
}

// unregister stops the index's notes for c.
func (c *KeyCursor) unregister() {
	ks := c.ks
	for j, x := range ks.cursors {
		if x == c {
			ks.cursors = append(ks.cursors[:j], ks.cursors[j+1:]...)
			if len(ks.cursors) == 0 && ks.kixOn() {
				ks.kix.ix.SetPlaced(nil)
			}
			return
		}
	}
}

func (c *KeyCursor) hash(db int, key []byte) [2]uint64 {
	c.kb = append(append(c.kb[:0], byte(db)), key...)
	return [2]uint64{maphash.Bytes(c.seeds[0], c.kb), maphash.Bytes(c.seeds[1], c.kb)}
}

// Claim marks key of db as seen and reports whether it was not seen before
// (by the walk or an earlier Claim). Under the lock.
func (c *KeyCursor) Claim(db int, key []byte) bool {
	if c.done[db] || c.claimed == nil {
		return false
	}
	return c.claim(db, key)
}

func (c *KeyCursor) claim(db int, key []byte) bool {
	h := c.hash(db, key)
	if _, ok := c.claimed[h]; ok {
		return false
	}
	c.claimed[h] = struct{}{}
	return true
}

// Claimed is the number of keys claimed or given so far.
func (c *KeyCursor) Claimed() int { return len(c.claimed) }

// Next gives up to n keys not given or claimed before, calling fn for
// each (after the chunk is gathered: fn may read the keyspace; key is
// valid until fn returns), and reports whether the walk has more. Under
// the lock; it looks at no more than 8n entries, so a chunk of keys given
// already (after a restart) is bounded too.
func (c *KeyCursor) Next(n int, fn func(db int, key []byte)) bool {
	return c.NextStrings(n, nil, fn)
}

// NextStrings is Next that gives the plain strings of the key index whose
// slot is their newest state (no staged write, not expired) to str, with
// their value and expiry (0: none) read from the slot's operation, which
// saves the caller looking them up. str is called during the walk: it
// must not read or change the keyspace, and its slices are valid only
// until the lock is released (copy them). A nil str gives every key to fn.
func (c *KeyCursor) NextStrings(n int, str func(db int, key, val []byte, expireAt int64), fn func(db int, key []byte)) bool {
	type found struct {
		db  int
		key string
	}
	var out []found
	given := 0
	give := func(db int, key []byte) {
		// An anchor key (db|kixAnchorNS) names a DRAM entry: the walk of
		// the DRAM entries gives it.
		if db < NumDBs && !c.done[db] && c.claim(db, key) {
			out = append(out, found{db, string(key)})
			given++
		}
	}
	budget := 8 * n
	ks := c.ks
	now := ks.NowMs()
	for given < n && budget > 0 && c.phase != cursorDone {
		switch c.phase {
		case cursorTable:
			ix := ks.kix.ix
			if g := ix.Generation(); g != c.gen {
				c.gen, c.pos = g, 0
				c.missedKix = nil // the new table holds them: the walk over it finds them
				c.Restarts++
			}
			for len(c.missedKix) > 0 && given < n && budget > 0 {
				k := c.missedKix[len(c.missedKix)-1]
				c.missedKix = c.missedKix[:len(c.missedKix)-1]
				budget--
				give(int(k[0]), []byte(k[1:]))
			}
			if given >= n || budget <= 0 {
				break
			}
			c.pos = ix.ScanSlots(c.pos, func(loc uint64) bool {
				budget--
				o, err := ks.opAt(loc)
				switch {
				case err != nil || o.db >= NumDBs || o.kind >= opObjectBase: // an anchor slot: its entry is in DRAM
				case str == nil || o.kind != opSet || expiredAt(o.expireAt, now):
					give(o.db, o.key)
				case !c.done[o.db] && c.claim(o.db, o.key):
					if ix.IsStaged(c.kb) { // c.kb: the index key claim hashed
						out = append(out, found{o.db, string(o.key)})
					} else {
						str(o.db, o.key, o.val, o.expireAt)
					}
					given++
				}
				return given < n && budget > 0
			})
			if c.pos >= ix.Stats().Slots && len(c.missedKix) == 0 {
				// The end of the table: a checkpoint stores what is
				// still staged (its new slots are noted, all behind the
				// walk now), unless a transaction group is open.
				gen := ix.Generation()
				_ = ks.kixCheckpoint() // an error is sticky: the next write reports it; the listing below covers
				if ix.Generation() != gen || len(c.missedKix) > 0 {
					break // the table grew (the walk restarts) or keys were noted: give them first
				}
				ks.kix.ix.RangeStaged(func(k string, loc uint64, _ bool) bool {
					if loc != 0 {
						c.staged = append(c.staged, k)
					}
					return true
				})
				c.Staged += len(c.staged)
				c.phase = cursorTableTail
			}
		case cursorTableTail:
			for len(c.staged) > 0 && given < n && budget > 0 {
				k := c.staged[len(c.staged)-1]
				c.staged = c.staged[:len(c.staged)-1]
				budget--
				give(int(k[0]), []byte(k[1:]))
			}
			if len(c.staged) == 0 {
				c.phase = cursorDRAM
			}
		case cursorDRAM:
			if c.dbi >= NumDBs {
				c.detach()
				c.phase = cursorDone
				break
			}
			d := ks.dbs[c.dbi]
			if c.done[c.dbi] {
				c.nextDB()
				break
			}
			if c.d != d {
				// Registered on another table (a database replaced
				// without Drain cannot happen: FLUSHDB and SWAPDB drain
				// first); start this one over, the claims skip the rest.
				c.detach()
				c.d, c.i = d, 0
				d.walkers = append(d.walkers, c)
			}
			for len(c.missed) > 0 && given < n && budget > 0 {
				k := c.missed[len(c.missed)-1]
				c.missed = c.missed[:len(c.missed)-1]
				budget--
				give(c.dbi, []byte(k))
			}
			for c.i < len(d.entries) && given < n && budget > 0 {
				budget--
				give(c.dbi, []byte(d.entries[c.i].key))
				c.i++
			}
			if c.i >= len(d.entries) && len(c.missed) == 0 {
				c.nextDB()
			}
		}
	}
	c.Examined += 8*n - budget
	for _, f := range out {
		fn(f.db, []byte(f.key))
	}
	return c.phase != cursorDone
}

// nextDB moves the DRAM walk to the next database.
func (c *KeyCursor) nextDB() {
	c.detach()
	c.dbi, c.i = c.dbi+1, 0
}

// detach stops the notes of the database the DRAM walk is on.
func (c *KeyCursor) detach() {
	if c.d == nil {
		return
	}
	w := c.d.walkers
	for j, x := range w {
		if x == c {
			w[j] = w[len(w)-1]
			w[len(w)-1] = nil
			c.d.walkers = w[:len(w)-1]
			break
		}
	}
	c.d, c.missed = nil, nil
}

// Drain gives at once every key of db (AllDBs: of every database) not
// given or claimed before, and the walk gives none of that database
// after: the BeforeWrite hook's step before a FLUSHDB, FLUSHALL or SWAPDB
// changes whole databases. Under the lock; fn as for Next.
func (c *KeyCursor) Drain(db int, fn func(db int, key []byte)) {
	var want [NumDBs]bool
	if db == AllDBs {
		for i := range want {
			want[i] = !c.done[i]
		}
	} else if !c.done[db] {
		want[db] = true
	}
	type found struct {
		db  int
		key string
	}
	var out []found
	give := func(db int, key []byte) {
		if db < NumDBs && want[db] && c.claim(db, key) {
			out = append(out, found{db, string(key)})
		}
	}
	ks := c.ks
	if ks.kixOn() {
		ks.kix.ix.RangeStaged(func(k string, loc uint64, _ bool) bool {
			if loc != 0 {
				give(int(k[0]), []byte(k[1:]))
			}
			return true
		})
		ks.kix.ix.Range(func(loc uint64) bool {
			if o, err := ks.opAt(loc); err == nil && o.kind < opObjectBase { // anchors: DRAM entries, given below
				give(o.db, o.key)
			}
			return true
		})
	}
	for i := range NumDBs {
		if !want[i] {
			continue
		}
		for j := range ks.dbs[i].entries {
			give(i, []byte(ks.dbs[i].entries[j].key))
		}
		c.done[i] = true
		if i == c.dbi {
			c.detach()
		}
	}
	for _, f := range out {
		fn(f.db, []byte(f.key))
	}
}

// Close ends the walk (under the lock).
func (c *KeyCursor) Close() {
	c.detach()
	c.unregister()
	c.phase = cursorDone
	c.staged, c.missedKix = nil, nil
	c.claimed = nil
}

// noteMoved is db.remove's note that the entry at last moved to hole i.
func (d *db) noteMoved(i, last int) {
	for _, c := range d.walkers {
		if i < c.i && last >= c.i {
			c.missed = append(c.missed, d.entries[i].key)
		}
	}
}

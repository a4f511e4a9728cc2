package keyindex

import (
	"math/rand/v2"
	"unsafe"
)

// overlay holds the writes staged since the last checkpoint (Stage), for
// lookups to consult before the table and for Checkpoint to store.
//
// It is an open-addressed hash table keyed by the key's 64-bit xxhash,
// the hash the table's probe uses too (one hash a lookup). Entries are
// kept in staging order in ents; pos is the hash table proper, one word a
// position: the hash's high 32 bits and the entry's index plus one (0: an
// empty position), so a probe compares a position's hash bits, then the
// entry's full hash, then its key, reading an entry only on a hash match.
// The keys are in one append buffer (keys), not a string each: no
// allocation a staging once the buffers have grown to a checkpoint's
// worth of writes. An entry is never removed (a deletion is staged as
// location 0, as before); reset drops them all.
//
// The keys RangeStaged hands out are views of the buffer, which a caller
// may keep (a cursor's listing): the buffer is append-only, and once it
// has lent a view reset gives the overlay a new one rather than reuse it.
type overlay struct {
	pos  []uint64 // len a power of two, at most half full; nil until the first staging
	ents []staged
	keys []byte
	lent bool // a view of keys was handed out (RangeStaged): reset must not reuse them
	gen  int  // resets so far (rangeKeys stops at one)
}

// staged is a write since the last checkpoint: the key (its hash and its
// bytes in the overlay's buffer), its location (0: deleted) and whether
// its operation has an expiry.
//
// hint, when hinted, is the location the table held for the key when it
// was first staged (0: none): Checkpoint's store of the write then knows
// the key's slot by its location, without reading any key back from its
// record (a cache miss per key on the old record). A location names one
// operation for ever (segment ids only grow), so a slot holding hint is
// the key's; between the staging and the checkpoint only Apply can change
// the key's slots outside repair mode, and a direct Apply drops the hint.
type staged struct {
	hash     uint64
	keyOff   int
	keyLen   uint32
	expiring bool
	hinted   bool
	loc      uint64
	hint     uint64
}

// overlayMinPos is the position count of a new overlay's hash table.
const overlayMinPos = 1 << 10

// overlayKeep is the staged-key count up to which reset keeps the
// overlay's buffers for the next writes (a bigger one, after a bulk load
// or a replay, is let go).
const overlayKeep = 1 << 16

func (o *overlay) len() int { return len(o.ents) }

// key returns entry i's key bytes (not to be written; valid while the
// overlay is not reset).
func (o *overlay) key(i int) []byte {
	e := &o.ents[i]
	return o.keys[e.keyOff : e.keyOff+int(e.keyLen) : e.keyOff+int(e.keyLen)]
}

// find returns the index of key's entry (h its hash), or -1.
func (o *overlay) find(h uint64, key []byte) int {
	if len(o.ents) == 0 {
		return -1
	}
	mask := uint64(len(o.pos) - 1)
	tag := h >> 32
	for p := h & mask; ; p = (p + 1) & mask {
		w := o.pos[p]
		if w == 0 {
			return -1
		}
		if w>>32 == tag {
			i := int(uint32(w)) - 1
			if e := &o.ents[i]; e.hash == h && int(e.keyLen) == len(key) && string(o.keys[e.keyOff:e.keyOff+len(key)]) == string(key) {
				return i
			}
		}
	}
}

// insert adds an entry for key (h its hash; the overlay does not hold it)
// and returns its index.
func (o *overlay) insert(h uint64, key []byte, s staged) int {
	if (len(o.ents)+1)*2 > len(o.pos) {
		o.rehash(max(overlayMinPos, 2*len(o.pos)))
	}
	i := len(o.ents)
	s.hash, s.keyOff, s.keyLen = h, len(o.keys), uint32(len(key))
	o.keys = append(o.keys, key...)
	o.ents = append(o.ents, s)
	o.place(h, i)
	return i
}

func (o *overlay) place(h uint64, i int) {
	mask := uint64(len(o.pos) - 1)
	p := h & mask
	for o.pos[p] != 0 {
		p = (p + 1) & mask
	}
	o.pos[p] = h>>32<<32 | uint64(i+1)
}

// rehash rebuilds the hash table with n positions.
func (o *overlay) rehash(n int) {
	o.pos = make([]uint64, n)
	for i := range o.ents {
		o.place(o.ents[i].hash, i)
	}
}

// reset drops every entry (a checkpoint stored them, or a bulk change).
func (o *overlay) reset() {
	o.gen++
	if len(o.ents) > overlayKeep {
		*o = overlay{gen: o.gen} // let a big one go
		return
	}
	if len(o.ents) > 0 {
		clear(o.pos)
	}
	o.ents = o.ents[:0]
	if o.lent {
		o.keys, o.lent = make([]byte, 0, cap(o.keys)), false
	} else {
		o.keys = o.keys[:0]
	}
}

// rangeKeys calls fn with each entry's index and its key as a string (a
// view of the buffer, valid for ever: see lent), starting at a random
// entry (as a map's iteration does: RANDOMKEY samples the staged keys
// this way), until fn returns false. Entries fn stages are not visited
// (as a map's iteration may skip them); a reset by fn ends the walk.
func (o *overlay) rangeKeys(fn func(i int, key string) bool) {
	n := len(o.ents)
	if n == 0 {
		return
	}
	o.lent = true
	start := rand.IntN(n)
	gen := o.gen
	for j := 0; j < n && o.gen == gen; j++ { // stops if fn resets the overlay (a checkpoint)
		i := start + j
		if i >= n {
			i -= n
		}
		e := &o.ents[i]
		if !fn(i, unsafe.String(unsafe.SliceData(o.keys[e.keyOff:]), int(e.keyLen))) {
			return
		}
	}
}

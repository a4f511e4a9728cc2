package keyspace

import "math/bits"

// slotIndex is the pointer-free lookup table of the hash and set types: an
// open-addressing table (linear probing, backward-shift deletion, load at
// most 3/4) of tag<<32 | (position + 1), where position indexes the owner's
// dense element table and tag is the high 32 bits of the element's hash.
// The Go collector never scans it, and a lookup compares element bytes (in
// the log) only when a tag matches. It is resized from the tags alone.
type slotIndex struct{ slots []uint64 }

// home is the first slot probed for tag (Fibonacci hashing of the tag).
func (x *slotIndex) home(tag uint32) int {
	return int((tag * 0x9E3779B9) >> (32 - bits.TrailingZeros(uint(len(x.slots)))))
}

// find returns the position whose element match accepts among those with
// tag (-1 if none) and the slot holding it (-1 when absent).
func (x *slotIndex) find(tag uint32, match func(pos int) bool) (slot, pos int) {
	if len(x.slots) == 0 {
		return -1, -1
	}
	mask := len(x.slots) - 1
	for s := x.home(tag); ; s = (s + 1) & mask {
		v := x.slots[s]
		if v == 0 {
			return -1, -1
		}
		if uint32(v>>32) == tag && match(int(uint32(v))-1) {
			return s, int(uint32(v)) - 1
		}
	}
}

// add records an absent element with tag at pos; count is the number of
// elements once it is added (the table grows to keep load at most 3/4).
func (x *slotIndex) add(tag uint32, pos, count int) {
	if count*4 > len(x.slots)*3 {
		x.resize(max(8, 2*len(x.slots)))
	}
	x.place(uint64(tag)<<32 | uint64(pos+1))
}

func (x *slotIndex) place(v uint64) {
	mask := len(x.slots) - 1
	s := x.home(uint32(v >> 32))
	for x.slots[s] != 0 {
		s = (s + 1) & mask
	}
	x.slots[s] = v
}

// resize rebuilds the table at a capacity (a power of two, at least 8).
func (x *slotIndex) resize(capacity int) {
	old := x.slots
	x.slots = make([]uint64, capacity)
	for _, v := range old {
		if v != 0 {
			x.place(v)
		}
	}
}

// remove empties slot s and shifts back the entries of its probe run that
// would otherwise become unreachable (deletion without tombstones); count
// is the number of elements left (the table shrinks when sparse).
func (x *slotIndex) remove(s, count int) {
	mask := len(x.slots) - 1
	for {
		x.slots[s] = 0
		j := s
		for {
			j = (j + 1) & mask
			v := x.slots[j]
			if v == 0 {
				if len(x.slots) > 64 && count*8 < len(x.slots) {
					x.resize(len(x.slots) / 2)
				}
				return
			}
			k := x.home(uint32(v >> 32))
			// Leave v where it is if its home lies cyclically in (s, j].
			if homeBetween(s, k, j) {
				continue
			}
			x.slots[s] = v
			s = j
			break
		}
	}
}

// repoint changes the position of the element with tag at from to to (the
// owner moved it in its dense table).
func (x *slotIndex) repoint(tag uint32, from, to int) {
	mask := len(x.slots) - 1
	for s := x.home(tag); ; s = (s + 1) & mask {
		if v := x.slots[s]; int(uint32(v)) == from+1 {
			x.slots[s] = uint64(tag)<<32 | uint64(to+1)
			return
		}
	}
}

// shiftDown moves every position above pos down by one (the owner closed a
// hole at pos by shifting, keeping insertion order).
func (x *slotIndex) shiftDown(pos int) {
	for k, v := range x.slots {
		if v != 0 && int(uint32(v))-1 > pos {
			x.slots[k] = v - 1
		}
	}
}

// homeBetween reports whether home slot k lies cyclically in (s, j]: an
// entry at j whose home is there must stay when slot s is emptied by a
// backward-shift deletion (linear probing), since moving it to s would put
// it before its home.
func homeBetween(s, k, j int) bool {
	return (s <= j && s < k && k <= j) || (s > j && (s < k || k <= j))
}

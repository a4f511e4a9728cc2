package keyspace

import "math/bits"

// tagIndex is the pointer-free lookup table of the set and sorted-set
// types, at 4 bytes a slot (slotIndex, the hash's, has 8): an
// open-addressing table (linear probing, backward-shift deletion, load at
// most 3/4) over the owner's element table, whose elements each keep a
// 32-bit tag (the high bits of their hash). With 2^b slots, a slot holds
// the low 32-b bits of the tag in its high 32-b bits and position + 1 in
// its low b bits (0 = empty); the high b bits of the tag are the slot the
// element's probe starts at. So a probe skips other elements by their
// slot alone, as with 8-byte slots, and the tag is whole again from the
// slot's bits and its home: a resize or a backward shift, which need the
// tag, read it from the owner (tagOf), never from the log.
//
// Every position the owner indexes must be below the capacity minus one
// (the limit arguments): a set's positions are dense, a sorted set's are
// node numbers, which may exceed its count after deletions.
type tagIndex struct{ slots []uint32 }

// shift returns b, the number of position bits (len(slots) is 2^b).
func (x *tagIndex) shift() uint { return uint(bits.TrailingZeros(uint(len(x.slots)))) }

func (x *tagIndex) home(tag uint32, b uint) int { return int(uint64(tag) >> (32 - b)) }

// find returns the position whose element match accepts among those with
// tag (-1 if none) and the slot holding it (-1 when absent).
func (x *tagIndex) find(tag uint32, match func(pos int) bool) (slot, pos int) {
	if len(x.slots) == 0 {
		return -1, -1
	}
	b := x.shift()
	mask := len(x.slots) - 1
	pmask := uint32(mask)
	want := uint32(uint64(tag) << b)
	for s := x.home(tag, b); ; s = (s + 1) & mask {
		v := x.slots[s]
		if v == 0 {
			return -1, -1
		}
		if v&^pmask == want && match(int(v&pmask)-1) {
			return s, int(v&pmask) - 1
		}
	}
}

// fits returns the capacity needed for count elements at positions below
// limit, at least min(cur, what count needs) and a power of two.
func tagIndexCap(count, limit int) int {
	c := 8
	for count*4 > c*3 || limit >= c {
		c *= 2
	}
	return c
}

// add records an absent element with tag at pos; count is the number of
// elements once it is added and limit bounds the positions in use (pos
// included); tagOf gives the tag of an indexed position.
func (x *tagIndex) add(tag uint32, pos, count, limit int, tagOf func(pos int) uint32) {
	if count*4 > len(x.slots)*3 || limit >= len(x.slots) {
		x.resize(max(tagIndexCap(count, limit), 2*len(x.slots)), tagOf)
	}
	x.place(tag, pos)
}

func (x *tagIndex) place(tag uint32, pos int) {
	b := x.shift()
	mask := len(x.slots) - 1
	s := x.home(tag, b)
	for x.slots[s] != 0 {
		s = (s + 1) & mask
	}
	x.slots[s] = uint32(uint64(tag)<<b) | uint32(pos+1)
}

// resize rebuilds the table at a capacity (a power of two, at least 8).
func (x *tagIndex) resize(capacity int, tagOf func(pos int) uint32) {
	old := x.slots
	pmask := uint32(len(old) - 1)
	x.slots = make([]uint32, capacity)
	for _, v := range old {
		if v != 0 {
			p := int(v&pmask) - 1
			x.place(tagOf(p), p)
		}
	}
}

// remove empties slot s and shifts back the entries of its probe run that
// would otherwise become unreachable (deletion without tombstones); count
// is the number of elements left and limit bounds their positions (the
// table shrinks when sparse). tagOf must still answer for every position
// indexed, the removed one's aside.
func (x *tagIndex) remove(s, count, limit int, tagOf func(pos int) uint32) {
	b := x.shift()
	mask := len(x.slots) - 1
	pmask := uint32(mask)
	for {
		x.slots[s] = 0
		j := s
		for {
			j = (j + 1) & mask
			v := x.slots[j]
			if v == 0 {
				if count == 0 {
					x.slots = nil
				} else if len(x.slots) > 64 && count*8 < len(x.slots) {
					if c := tagIndexCap(count, limit); c < len(x.slots) {
						x.resize(max(c, len(x.slots)/4), tagOf)
					}
				}
				return
			}
			k := x.home(tagOf(int(v&pmask)-1), b)
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
// owner moved it in its table).
func (x *tagIndex) repoint(tag uint32, from, to int) {
	b := x.shift()
	mask := len(x.slots) - 1
	pmask := uint32(mask)
	for s := x.home(tag, b); ; s = (s + 1) & mask {
		if v := x.slots[s]; v != 0 && int(v&pmask) == from+1 {
			x.slots[s] = v&^pmask | uint32(to+1)
			return
		}
	}
}

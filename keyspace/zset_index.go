package keyspace

import (
	"bytes"

	"github.com/cespare/xxhash/v2"
)

// zsetIndex maps a member to its skiplist node: an open-addressing table
// with linear probing whose 8-byte slots hold the node index and the low
// 32 bits of the member's hash. The hash bits find a slot's home without
// rehashing and let a probe skip other members without touching their
// nodes, so a lookup usually reads one slot, one node and one member. It
// holds no pointer for the garbage collector to scan (a Go map[string]int32
// costs about 40 bytes an entry and its string keys are scanned at every
// collection). Deletion shifts the following entries back: no tombstones.
type zsetIndex struct {
	slots []uint64 // hash<<32 | node index; 0 (node 0 is the header) = empty
	n     int
}

func zsetHash32(h uint64) uint64 { return h & 0xffffffff }

// lookup returns the node of member, 0 if absent.
func (ix *zsetIndex) lookup(z *zskiplist, member []byte) int32 {
	if ix.n == 0 {
		return 0
	}
	h := zsetHash32(xxhash.Sum64(member))
	mask := uint64(len(ix.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := ix.slots[i]
		if s == 0 {
			return 0
		}
		if s>>32 == h {
			if x := int32(uint32(s)); bytes.Equal(z.member(x), member) {
				return x
			}
		}
	}
}

// insert adds node x, whose member is not in the index yet.
func (ix *zsetIndex) insert(x int32, member []byte) {
	if (ix.n+1)*4 > len(ix.slots)*3 {
		ix.resize(max(8, 2*len(ix.slots)))
	}
	ix.place(zsetHash32(xxhash.Sum64(member))<<32 | uint64(uint32(x)))
	ix.n++
}

func (ix *zsetIndex) place(s uint64) {
	mask := uint64(len(ix.slots) - 1)
	i := (s >> 32) & mask
	for ix.slots[i] != 0 {
		i = (i + 1) & mask
	}
	ix.slots[i] = s
}

func (ix *zsetIndex) resize(size int) {
	old := ix.slots
	ix.slots = make([]uint64, size)
	for _, s := range old {
		if s != 0 {
			ix.place(s)
		}
	}
}

// remove takes node x, whose member is member, out of the index.
func (ix *zsetIndex) remove(x int32, member []byte) {
	mask := uint64(len(ix.slots) - 1)
	i := zsetHash32(xxhash.Sum64(member)) & mask
	for uint32(ix.slots[i]) != uint32(x) {
		i = (i + 1) & mask
	}
	// Backward shift: move up every later entry of the run that may not
	// stay behind the hole (its home slot is not in (hole, its slot]).
	for j := (i + 1) & mask; ix.slots[j] != 0; j = (j + 1) & mask {
		home := (ix.slots[j] >> 32) & mask
		if (i < j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = 0
	ix.n--
	if ix.n == 0 {
		ix.slots = nil
	} else if len(ix.slots) > 64 && ix.n*8 < len(ix.slots) {
		ix.resize(len(ix.slots) / 4)
	}
}

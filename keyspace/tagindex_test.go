package keyspace

import (
	"math/rand/v2"
	"testing"
)

// TestTagIndexModel drives a tagIndex over a dense table (the set's use:
// a delete moves the last element into the hole) through growth, colliding
// tags and shrinking, checking every element is found at its position and
// deleted ones are not.
func TestTagIndexModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tagBits := range []uint{32, 12, 3} {
		var x tagIndex
		var elems []uint32 // element ids (tag derived), by position
		where := map[uint32]int{}
		tagOf := func(p int) uint32 { return elemTag(elems[p], tagBits) }
		find := func(id uint32) int {
			_, p := x.find(elemTag(id, tagBits), func(p int) bool { return elems[p] == id })
			return p
		}
		next := uint32(0)
		for step := 0; step < 60000; step++ {
			grow := (step/15000)%2 == 0
			if len(elems) == 0 || (grow && r.IntN(4) != 0) || (!grow && r.IntN(4) == 0) {
				id := next
				next++
				if find(id) >= 0 {
					t.Fatalf("absent %d found", id)
				}
				x.add(elemTag(id, tagBits), len(elems), len(elems)+1, len(elems)+1, tagOf)
				where[id] = len(elems)
				elems = append(elems, id)
				continue
			}
			id := elems[r.IntN(len(elems))]
			slot, p := x.find(elemTag(id, tagBits), func(p int) bool { return elems[p] == id })
			if p != where[id] {
				t.Fatalf("step %d: %d found at %d, is at %d", step, id, p, where[id])
			}
			x.remove(slot, len(elems)-1, len(elems)-1, tagOf)
			last := len(elems) - 1
			if p != last {
				moved := elems[last]
				x.repoint(elemTag(moved, tagBits), last, p)
				elems[p] = moved
				where[moved] = p
			}
			elems = elems[:last]
			delete(where, id)
			if find(id) >= 0 {
				t.Fatalf("deleted %d found", id)
			}
		}
		for id, p := range where {
			if q := find(id); q != p {
				t.Fatalf("tag bits %d: %d found at %d, is at %d", tagBits, id, q, p)
			}
		}
		if n := len(elems); len(x.slots) > 64 && n*8 < len(x.slots)/4 {
			t.Fatalf("%d elements in %d slots: not shrunk", n, len(x.slots))
		}
	}
}

// elemTag gives element id a tag with tagBits random bits (few bits: many
// collisions), in the high bits as a hash's.
func elemTag(id uint32, tagBits uint) uint32 {
	h := uint64(id)*0x9E3779B97F4A7C15 + 12345
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	return uint32(h) >> (32 - tagBits) << (32 - tagBits)
}

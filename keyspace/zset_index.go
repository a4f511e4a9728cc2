package keyspace

import (
	"github.com/cespare/xxhash/v2"
)

// zsetIndex maps a member to its skiplist node: a tagIndex (4-byte slots,
// linear probing, backward-shift deletion: no tombstones) over the nodes,
// each of which keeps its member's tag (the high 32 bits of its xxhash).
// A slot's tag bits let a probe skip other members without touching their
// nodes, so a lookup usually reads one slot, one node and one member. It
// holds no pointer for the garbage collector to scan (a Go map[string]int32
// costs about 40 bytes an entry and its string keys are scanned at every
// collection); with 4-byte slots it costs 4 to 8 bytes a member (8-byte
// slots of hash and node index cost 8 to 16).
type zsetIndex struct {
	tags tagIndex
	n    int
}

func zsetTag(member []byte) uint32 { return uint32(xxhash.Sum64(member) >> 32) }

// lookup returns the node of member, 0 if absent.
func (ix *zsetIndex) lookup(z *zskiplist, member []byte) int32 {
	if ix.n == 0 {
		return 0
	}
	_, p := ix.tags.find(zsetTag(member), func(p int) bool { return string(z.member(int32(p))) == string(member) })
	return int32(max(p, 0))
}

// insert adds node x, whose member is not in the index yet.
func (ix *zsetIndex) insert(z *zskiplist, x int32, member []byte) {
	tag := zsetTag(member)
	z.node(x).tag = tag
	ix.n++
	ix.tags.add(tag, int(x), ix.n, int(z.slots), z.tagOf)
}

// remove takes node x, whose member is member, out of the index (before
// the skiplist frees x).
func (ix *zsetIndex) remove(z *zskiplist, x int32, member []byte) {
	s, _ := ix.tags.find(z.node(x).tag, func(p int) bool { return p == int(x) })
	ix.n--
	ix.tags.remove(s, ix.n, int(z.slots), z.tagOf)
}

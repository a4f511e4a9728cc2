package keyspace

import (
	"bytes"
	"math/rand/v2"
)

// The order-statistics structure of a sorted set: a skiplist ordered by
// (score, member) whose forward links carry spans (the number of level-0
// steps they cover), as in Redis's t_zset.c, so rank queries and access by
// rank are O(log n).
//
// It is pointer-free, so the garbage collector never scans it: nodes live
// in one slice and their levels in another, linked by int32 indexes (0 is
// the header, which is never a forward target, so 0 also means "none"),
// and a node's member is the location of its bytes inside the logged
// operation that set it (served from the mapping, as hash values are). A
// deleted node's slot, with its block of levels, goes on a free list for
// its height and is reused by the next node of that height. A node keeps
// its slot while it lives, also across score updates, which is what the
// ZSCAN cursor relies on.
//
// A small set (what Redis keeps as a listpack: see ZSet.grown) has no
// levels at all: its nodes are kept in order in one array of (score, node)
// entries (ord), searched by binary search over the scores and shifted on
// insertion and removal. On a set of up to 128 members that touches a few
// contiguous cache lines where a skiplist insertion chases a dozen links
// through scattered nodes (zskiplist.link was 12.8% of GEOADD's server
// CPU), and it spares the header's 32 levels (1 KiB). The set becomes a
// skiplist (toBig) when it outgrows the small encoding, for good.
//
// Each link also carries the score and the level block of the node it
// points to. A search then decides whether to step forward from the link
// alone, and touches memory only when it does step (the members are read
// only on equal scores): on a large set, where every step is a cache miss,
// that halves the misses of ZADD, ZRANK and the range commands.
const (
	zslMaxLevel   = 32
	zslPThreshold = 0x4000 // p = 1/4 of 0x10000, as Redis
)

type zslLevel struct {
	next   int32 // node index; 0 = end
	nextLv int32 // first level of next in zskiplist.levels
	span   int32 // level-0 steps from this node to next (to the end when next is 0)
	_      int32
	score  float64 // score of next
}

type zslNode struct {
	loc    uint64 // packed location of the member's uvarint-prefixed bytes
	score  float64
	prev   int32  // level-0 predecessor; 0 = header (first node)
	lv     int32  // first of this node's levels in zsl.levels
	tag    uint32 // the member's tag in ZSet.index (zsetTag)
	height uint8  // number of levels (at most zslMaxLevel); 0 = a free slot (a node is 32 bytes)
}

// zslEntry is one element of a small set's ordered array: its score (so a
// search reads no node) and its node.
type zslEntry struct {
	score float64
	x     int32
}

type zskiplist struct {
	ks     *Keyspace // where member bytes are read (bytesAt)
	nodes  []zslNode
	levels []zslLevel
	// free slots by height (nil until a skiplist frees one: the array is
	// 792 bytes, more than a small set's nodes)
	free  *[zslMaxLevel + 1][]int32
	tail  int32
	level int // levels in use by the header (>= 1)
	n     int
	// small: no levels; ord holds the n nodes in (score, member) order
	// (nodes have height 1 and no level block; freed slots are in sfree).
	small bool
	ord   []zslEntry
	sfree []int32
}

// newSkiplist returns an empty small set (ordered array, no levels).
func newSkiplist(ks *Keyspace) zskiplist {
	z := zskiplist{ks: ks, level: 1, small: true}
	z.nodes = append(z.nodes, zslNode{lv: -1})
	return z
}

// toBig gives every node of a small set a random height and links it:
// the set is a skiplist from then on. Slots freed while it was small stay
// unused (at most 128, of 40 bytes each).
func (z *zskiplist) toBig() {
	if !z.small {
		return
	}
	ord := z.ord
	z.small, z.ord = false, nil
	z.sfree = nil
	z.nodes[0] = zslNode{lv: 0, height: zslMaxLevel}
	z.levels = make([]zslLevel, zslMaxLevel, zslMaxLevel+len(ord)*2)
	z.level, z.n, z.tail = 1, 0, 0
	for _, e := range ord {
		h := zslRandomLevel()
		n := &z.nodes[e.x]
		n.lv, n.height, n.prev = int32(len(z.levels)), uint8(h), 0
		for i := 0; i < h; i++ {
			z.levels = append(z.levels, zslLevel{})
		}
		z.link(e.x, z.member(e.x))
	}
}

// smallBefore reports whether entry e sorts before (score, member).
func (z *zskiplist) smallBefore(e zslEntry, score float64, member []byte) bool {
	return e.score < score || (e.score == score && bytes.Compare(z.member(e.x), member) < 0)
}

// smallSearch returns how many entries of a small set sort before
// (score, member).
func (z *zskiplist) smallSearch(score float64, member []byte) int {
	lo, hi := 0, len(z.ord)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if z.smallBefore(z.ord[m], score, member) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// posOf returns the 0-based position of node x in a small set: a binary
// search over the scores, then a scan of the equal scores for x (no
// member is read).
func (z *zskiplist) posOf(x int32) int {
	s := z.nodes[x].score
	lo, hi := 0, len(z.ord)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if z.ord[m].score < s {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for z.ord[lo].x != x {
		lo++
	}
	return lo
}

// smallInsertAt puts node x at position p of a small set's array.
func (z *zskiplist) smallInsertAt(p int, x int32) {
	z.ord = append(z.ord, zslEntry{})
	copy(z.ord[p+1:], z.ord[p:])
	z.ord[p] = zslEntry{score: z.nodes[x].score, x: x}
	z.n++
	z.tail = z.ord[z.n-1].x
}

// smallRemoveAt takes position p out of a small set's array.
func (z *zskiplist) smallRemoveAt(p int) {
	copy(z.ord[p:], z.ord[p+1:])
	z.ord = z.ord[:len(z.ord)-1]
	z.n--
	z.tail = 0
	if z.n > 0 {
		z.tail = z.ord[z.n-1].x
	}
}

// lv returns level i of node x. The pointer is valid until the next
// allocation of a node.
func (z *zskiplist) lv(x int32, i int) *zslLevel {
	return &z.levels[int(z.nodes[x].lv)+i]
}

// member returns the member bytes of node x (aliasing the mapping: valid
// until the keyspace lock is released).
// tagOf returns the index tag of node x's member.
func (z *zskiplist) tagOf(x int) uint32 { return z.nodes[x].tag }

func (z *zskiplist) member(x int32) []byte { return z.ks.bytesAt(z.nodes[x].loc) }

// before reports whether the node l points to sorts before (score, member).
func (z *zskiplist) before(l *zslLevel, score float64, member []byte) bool {
	return l.score < score || (l.score == score && bytes.Compare(z.member(l.next), member) < 0)
}

func zslRandomLevel() int {
	h := 1
	for h < zslMaxLevel && rand.Uint32()&0xffff < zslPThreshold {
		h++
	}
	return h
}

// alloc returns a slot for a new node of a random height.
func (z *zskiplist) alloc(score float64, loc uint64) int32 {
	if z.small {
		var x int32
		if f := z.sfree; len(f) > 0 {
			x = f[len(f)-1]
			z.sfree = f[:len(f)-1]
		} else {
			x = int32(len(z.nodes))
			z.nodes = append(z.nodes, zslNode{})
		}
		z.nodes[x] = zslNode{loc: loc, score: score, lv: -1, height: 1}
		return x
	}
	h := zslRandomLevel()
	var x int32
	if f := z.freeList(h); len(f) > 0 {
		x = f[len(f)-1]
		z.free[h] = f[:len(f)-1]
	} else {
		x = int32(len(z.nodes))
		z.nodes = append(z.nodes, zslNode{lv: int32(len(z.levels)), height: uint8(h)})
		for i := 0; i < h; i++ {
			z.levels = append(z.levels, zslLevel{})
		}
	}
	n := &z.nodes[x]
	n.loc, n.score, n.height = loc, score, uint8(h)
	return x
}

// freeList returns the free slots of height h.
func (z *zskiplist) freeList(h int) []int32 {
	if z.free == nil {
		return nil
	}
	return z.free[h]
}

// insert adds a new (score, member), which must not be in the list, its
// bytes at loc, and returns its node.
func (z *zskiplist) insert(score float64, member []byte, loc uint64) int32 {
	x := z.alloc(score, loc)
	z.link(x, member)
	return x
}

// pointTo makes link u point to node x.
func (z *zskiplist) pointTo(u *zslLevel, x int32) {
	n := &z.nodes[x]
	u.next, u.nextLv, u.score = x, n.lv, n.score
}

// link puts the allocated, unlinked node x (whose member is member) in
// its place.
func (z *zskiplist) link(x int32, member []byte) {
	if z.small {
		z.smallInsertAt(z.smallSearch(z.nodes[x].score, member), x)
		return
	}
	var update [zslMaxLevel]int32
	var rank [zslMaxLevel]int
	score := z.nodes[x].score
	p, pLv := int32(0), int32(0)
	for i := z.level - 1; i >= 0; i-- {
		if i < z.level-1 {
			rank[i] = rank[i+1]
		}
		for {
			l := &z.levels[int(pLv)+i]
			if l.next == 0 || !z.before(l, score, member) {
				break
			}
			rank[i] += int(l.span)
			p, pLv = l.next, l.nextLv
		}
		update[i] = p
	}
	h := int(z.nodes[x].height)
	if h > z.level {
		for i := z.level; i < h; i++ {
			rank[i] = 0
			update[i] = 0
			z.lv(0, i).span = int32(z.n)
		}
		z.level = h
	}
	for i := 0; i < h; i++ {
		u, l := z.lv(update[i], i), z.lv(x, i)
		l.next, l.nextLv, l.score = u.next, u.nextLv, u.score
		z.pointTo(u, x)
		l.span = u.span - int32(rank[0]-rank[i])
		u.span = int32(rank[0]-rank[i]) + 1
	}
	for i := h; i < z.level; i++ {
		z.lv(update[i], i).span++
	}
	z.nodes[x].prev = update[0]
	if next := z.lv(x, 0).next; next != 0 {
		z.nodes[next].prev = x
	} else {
		z.tail = x
	}
	z.n++
}

// find returns the predecessors of (score, member) at every level and its
// node (0 if absent).
func (z *zskiplist) find(score float64, member []byte, update *[zslMaxLevel]int32) int32 {
	p, pLv := int32(0), int32(0)
	for i := z.level - 1; i >= 0; i-- {
		for {
			l := &z.levels[int(pLv)+i]
			if l.next == 0 || !z.before(l, score, member) {
				break
			}
			p, pLv = l.next, l.nextLv
		}
		update[i] = p
	}
	x := z.levels[pLv].next
	if x != 0 && z.nodes[x].score == score && bytes.Equal(z.member(x), member) {
		return x
	}
	return 0
}

// unlink takes x out of the list (its slot stays allocated).
func (z *zskiplist) unlink(x int32, update *[zslMaxLevel]int32) {
	for i := 0; i < z.level; i++ {
		u := z.lv(update[i], i)
		if u.next == x {
			l := z.lv(x, i)
			u.span += l.span - 1
			u.next, u.nextLv, u.score = l.next, l.nextLv, l.score
		} else {
			u.span--
		}
	}
	if next := z.lv(x, 0).next; next != 0 {
		z.nodes[next].prev = z.nodes[x].prev
	} else {
		z.tail = z.nodes[x].prev
	}
	for z.level > 1 && z.lv(0, z.level-1).next == 0 {
		z.level--
	}
	z.n--
}

// deleteNode removes node x, whose member is member, and frees its slot.
func (z *zskiplist) deleteNode(x int32, member []byte) {
	if !z.small {
		z.delete(z.nodes[x].score, member)
		return
	}
	z.smallRemoveAt(z.posOf(x))
	z.nodes[x] = zslNode{lv: -1}
	z.sfree = append(z.sfree, x)
}

// delete removes (score, member) from a skiplist (not a small set) and
// frees its slot; false if absent.
func (z *zskiplist) delete(score float64, member []byte) bool {
	var update [zslMaxLevel]int32
	x := z.find(score, member, &update)
	if x == 0 {
		return false
	}
	z.unlink(x, &update)
	n := &z.nodes[x]
	h := int32(n.height)
	base := n.lv
	*n = zslNode{lv: base, height: 0}
	for i := int32(0); i < h; i++ {
		z.levels[base+i] = zslLevel{}
	}
	if z.free == nil {
		z.free = new([zslMaxLevel + 1][]int32)
	}
	z.free[h] = append(z.free[h], x)
	return true
}

// updateNode gives node x, whose member is member, the score to, keeping
// its slot.
func (z *zskiplist) updateNode(x int32, member []byte, to float64) {
	if !z.small {
		z.updateScore(z.nodes[x].score, member, to)
		return
	}
	p := z.posOf(x)
	if (p == 0 || z.ord[p-1].score < to) && (p == z.n-1 || z.ord[p+1].score > to) {
		z.ord[p].score = to // still in order
		z.nodes[x].score = to
		return
	}
	z.smallRemoveAt(p)
	z.nodes[x].score = to
	z.smallInsertAt(z.smallSearch(to, member), x)
}

// updateScore moves member from score cur to score to in a skiplist (not
// a small set), keeping its node (and slot); it returns the node.
func (z *zskiplist) updateScore(cur float64, member []byte, to float64) int32 {
	var update [zslMaxLevel]int32
	x := z.find(cur, member, &update)
	if x == 0 {
		panic("keyspace: zset member missing from its skiplist")
	}
	n := &z.nodes[x]
	next := z.lv(x, 0).next
	if (n.prev == 0 || z.nodes[n.prev].score < to) && (next == 0 || z.nodes[next].score > to) {
		// Still in order: no relinking, but the links to x carry its score.
		n.score = to
		for i := 0; i < int(n.height); i++ {
			z.lv(update[i], i).score = to
		}
		return x
	}
	z.unlink(x, &update)
	for i := 0; i < int(n.height); i++ {
		*z.lv(x, i) = zslLevel{}
	}
	z.nodes[x].score = to
	z.link(x, member)
	return x
}

// rank returns the 1-based rank of (score, member), 0 if absent.
func (z *zskiplist) rank(score float64, member []byte) int {
	r := 0
	p, pLv := int32(0), int32(0)
	for i := z.level - 1; i >= 0; i-- {
		for {
			l := &z.levels[int(pLv)+i]
			if l.next == 0 || l.score > score || (l.score == score && bytes.Compare(z.member(l.next), member) > 0) {
				break
			}
			r += int(l.span)
			p, pLv = l.next, l.nextLv
		}
		if p != 0 && bytes.Equal(z.member(p), member) {
			return r
		}
	}
	return 0
}

// rankNode returns the 1-based rank of node x, whose member is member.
func (z *zskiplist) rankNode(x int32, member []byte) int {
	if z.small {
		return z.posOf(x) + 1
	}
	return z.rank(z.nodes[x].score, member)
}

// byRank returns the node of 1-based rank r (0 if out of range).
func (z *zskiplist) byRank(r int) int32 {
	if r < 1 || r > z.n {
		return 0
	}
	if z.small {
		return z.ord[r-1].x
	}
	traversed := 0
	p, pLv := int32(0), int32(0)
	for i := z.level - 1; i >= 0; i-- {
		for {
			l := &z.levels[int(pLv)+i]
			if l.next == 0 || traversed+int(l.span) > r {
				break
			}
			traversed += int(l.span)
			p, pLv = l.next, l.nextLv
		}
		if traversed == r {
			return p
		}
	}
	return 0
}

// next and prev walk level 0 (0 = none); on a small set they search
// (O(log n)): walk a small set's ord instead.
func (z *zskiplist) next(x int32) int32 {
	if z.small {
		if p := z.posOf(x) + 1; p < z.n {
			return z.ord[p].x
		}
		return 0
	}
	return z.lv(x, 0).next
}

func (z *zskiplist) prev(x int32) int32 {
	if z.small {
		if p := z.posOf(x); p > 0 {
			return z.ord[p-1].x
		}
		return 0
	}
	return z.nodes[x].prev
}

func (z *zskiplist) first() int32 {
	if z.small {
		if z.n == 0 {
			return 0
		}
		return z.ord[0].x
	}
	return z.levels[0].next
}

// countWhile returns how many nodes from the start satisfy in (given the
// node and its score), which must hold for a prefix of the list (a score
// or lex bound): O(log n).
func (z *zskiplist) countWhile(in func(x int32, score float64) bool) int {
	if z.small {
		lo, hi := 0, z.n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if e := z.ord[m]; in(e.x, e.score) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	r := 0
	pLv := int32(0)
	for i := z.level - 1; i >= 0; i-- {
		for {
			l := &z.levels[int(pLv)+i]
			if l.next == 0 || !in(l.next, l.score) {
				break
			}
			r += int(l.span)
			pLv = l.nextLv
		}
	}
	return r
}

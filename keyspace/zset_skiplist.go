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
// in fixed chunks of zslChunk and their upper levels in one slice, linked
// by int32 indexes (0 is the header, which is never a forward target, so 0
// also means "none"), and a node's member is the location of its bytes
// inside the logged operation that set it (served from the mapping, as
// hash values are). A deleted node's slot, with its block of levels, goes
// on a free list for its height and is reused by the next node of that
// height. A node keeps its slot while it lives, also across score updates,
// which is what the ZSCAN cursor relies on.
//
// Level 0 lives in the node itself (next, prev): its span is always 1 and
// the score of the node it points to is read from that node, which a
// search touches anyway at the end. Only the levels above it (a quarter
// of the nodes have any: p = 1/4, as Redis) take a block in levels, so an
// element costs a 32-byte node plus a third of a 24-byte level on average.
// Chunks never move, so the nodes cost no growth slack beyond the last
// chunk (a slice grown by append keeps up to half its capacity unused).
//
// A small set (what Redis keeps as a listpack: see ZSet.grown) has no
// levels at all: its nodes are kept in order in one array of (score, node)
// entries (ord), searched by binary search over the scores and shifted on
// insertion and removal. On a set of up to 128 members that touches a few
// contiguous cache lines where a skiplist insertion chases a dozen links
// through scattered nodes (zskiplist.link was 12.8% of GEOADD's server
// CPU), and it spares the header's levels. The set becomes a skiplist
// (toBig) when it outgrows the small encoding, for good.
//
// Each upper link also carries the score and the level block of the node
// it points to. A search then decides whether to step forward from the
// link alone, and touches memory only when it does step (the members are
// read only on equal scores): on a large set, where every step is a cache
// miss, that halves the misses of ZADD, ZRANK and the range commands.
const (
	zslMaxLevel   = 32
	zslPThreshold = 0x4000 // p = 1/4 of 0x10000, as Redis
	zslChunkShift = 7
	zslChunk      = 1 << zslChunkShift // nodes a chunk (4 KiB)
)

// zslLevel is one link above level 0.
type zslLevel struct {
	next   int32   // node index; 0 = end
	nextUp int32   // first upper level of next in zskiplist.levels
	span   int32   // level-0 steps from this node to next (to the end when next is 0)
	height int32   // on the first level of a block: the owner's height
	score  float64 // score of next
}

type zslNode struct {
	loc   uint64 // packed location of the member's uvarint-prefixed bytes
	score float64
	next  int32  // level-0 successor; 0 = end
	prev  int32  // level-0 predecessor; 0 = header (first node); -1 = a free slot
	tag   uint32 // the member's tag in ZSet.index (zsetTag)
	up    int32  // first of the node's upper levels in zsl.levels; -1 = height 1
}

// zslEntry is one element of a small set's ordered array: its score (so a
// search reads no node) and its node.
type zslEntry struct {
	score float64
	x     int32
}

type zskiplist struct {
	ks     *Keyspace   // where member bytes are read (bytesAt)
	chunks [][]zslNode // node x is chunks[x>>zslChunkShift][x&(zslChunk-1)]
	slots  int32       // nodes allocated (live, free and the header)
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
	z.newNode(zslNode{up: -1})
	return z
}

// node returns node x. Chunks never move: the pointer stays valid while
// the set lives.
func (z *zskiplist) node(x int32) *zslNode {
	return &z.chunks[x>>zslChunkShift][x&(zslChunk-1)]
}

// newNode appends a node slot and returns its index. The first chunk grows
// by append (a small set pays for what it holds), the others are allocated
// whole.
func (z *zskiplist) newNode(n zslNode) int32 {
	x := z.slots
	c := len(z.chunks) - 1
	if c < 0 || len(z.chunks[c]) == zslChunk {
		var ch []zslNode
		if c >= 0 {
			ch = make([]zslNode, 0, zslChunk)
		}
		z.chunks = append(z.chunks, ch)
		c++
	}
	z.chunks[c] = append(z.chunks[c], n)
	z.slots++
	return x
}

// height returns the number of levels of node x.
func (z *zskiplist) height(x int32) int {
	if up := z.node(x).up; up >= 0 {
		return int(z.levels[up].height)
	}
	return 1
}

// upper returns level i (>= 1) of node x. The pointer is valid until the
// next allocation of a level block.
func (z *zskiplist) upper(x int32, i int) *zslLevel {
	return &z.levels[int(z.node(x).up)+i-1]
}

// newLevels appends a block for a node of height h (> 1) and returns its
// first index.
func (z *zskiplist) newLevels(h int) int32 {
	base := int32(len(z.levels))
	for i := 1; i < h; i++ {
		z.levels = append(z.levels, zslLevel{})
	}
	z.levels[base].height = int32(h)
	return base
}

// toBig gives every node of a small set a random height and links it:
// the set is a skiplist from then on. Slots freed while it was small stay
// unused (at most 128, of 32 bytes each).
func (z *zskiplist) toBig() {
	if !z.small {
		return
	}
	ord := z.ord
	z.small, z.ord = false, nil
	z.sfree = nil
	z.levels = make([]zslLevel, 0, zslMaxLevel-1+len(ord)/2)
	*z.node(0) = zslNode{up: z.newLevels(zslMaxLevel)}
	z.level, z.n, z.tail = 1, 0, 0
	for _, e := range ord {
		h := zslRandomLevel()
		n := z.node(e.x)
		n.up, n.prev, n.next = -1, 0, 0
		if h > 1 {
			n.up = z.newLevels(h)
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
	s := z.node(x).score
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
	z.ord[p] = zslEntry{score: z.node(x).score, x: x}
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

// tagOf returns the index tag of node x's member.
func (z *zskiplist) tagOf(x int) uint32 { return z.node(int32(x)).tag }

// member returns the member bytes of node x (aliasing the mapping: valid
// until the keyspace lock is released).
func (z *zskiplist) member(x int32) []byte { return z.ks.bytesAt(z.node(x).loc) }

// before reports whether node x, of score xs, sorts before (score, member).
func (z *zskiplist) before(xs float64, x int32, score float64, member []byte) bool {
	return xs < score || (xs == score && bytes.Compare(z.member(x), member) < 0)
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
		n := zslNode{loc: loc, score: score, up: -1}
		if f := z.sfree; len(f) > 0 {
			x := f[len(f)-1]
			z.sfree = f[:len(f)-1]
			*z.node(x) = n
			return x
		}
		return z.newNode(n)
	}
	h := zslRandomLevel()
	if f := z.freeList(h); len(f) > 0 {
		x := f[len(f)-1]
		z.free[h] = f[:len(f)-1]
		n := z.node(x)
		n.loc, n.score, n.prev, n.next = loc, score, 0, 0
		return x
	}
	up := int32(-1)
	if h > 1 {
		up = z.newLevels(h)
	}
	return z.newNode(zslNode{loc: loc, score: score, up: up})
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

// search finds the last node before (score, member) at every level into
// update and, when rank is not nil, its rank at every level; it returns
// the node of rank update[0] + 1 (0 at the end).
func (z *zskiplist) search(score float64, member []byte, update *[zslMaxLevel]int32, rank *[zslMaxLevel]int) int32 {
	p, pUp := int32(0), z.node(0).up
	r := 0
	for i := z.level - 1; i >= 1; i-- {
		for {
			l := &z.levels[int(pUp)+i-1]
			if l.next == 0 || !z.before(l.score, l.next, score, member) {
				break
			}
			r += int(l.span)
			p, pUp = l.next, l.nextUp
		}
		update[i] = p
		if rank != nil {
			rank[i] = r
		}
	}
	for {
		nx := z.node(p).next
		if nx == 0 || !z.before(z.node(nx).score, nx, score, member) {
			update[0] = p
			if rank != nil {
				rank[0] = r
			}
			return nx
		}
		r++
		p = nx
	}
}

// link puts the allocated, unlinked node x (whose member is member) in
// its place.
func (z *zskiplist) link(x int32, member []byte) {
	if z.small {
		z.smallInsertAt(z.smallSearch(z.node(x).score, member), x)
		return
	}
	var update [zslMaxLevel]int32
	var rank [zslMaxLevel]int
	xn := z.node(x)
	z.search(xn.score, member, &update, &rank)
	h := z.height(x)
	if h > z.level {
		for i := z.level; i < h; i++ {
			rank[i] = 0
			update[i] = 0
			z.upper(0, i).span = int32(z.n)
		}
		z.level = h
	}
	for i := 1; i < h; i++ {
		u, l := z.upper(update[i], i), z.upper(x, i)
		l.next, l.nextUp, l.score = u.next, u.nextUp, u.score
		u.next, u.nextUp, u.score = x, xn.up, xn.score
		l.span = u.span - int32(rank[0]-rank[i])
		u.span = int32(rank[0]-rank[i]) + 1
	}
	for i := max(h, 1); i < z.level; i++ {
		z.upper(update[i], i).span++
	}
	pn := z.node(update[0])
	xn.next, xn.prev = pn.next, update[0]
	pn.next = x
	if xn.next != 0 {
		z.node(xn.next).prev = x
	} else {
		z.tail = x
	}
	z.n++
}

// find returns the predecessors of (score, member) at every level and its
// node (0 if absent).
func (z *zskiplist) find(score float64, member []byte, update *[zslMaxLevel]int32) int32 {
	x := z.search(score, member, update, nil)
	if x != 0 && z.node(x).score == score && bytes.Equal(z.member(x), member) {
		return x
	}
	return 0
}

// unlink takes x out of the list (its slot stays allocated).
func (z *zskiplist) unlink(x int32, update *[zslMaxLevel]int32) {
	xn := z.node(x)
	for i := 1; i < z.level; i++ {
		u := z.upper(update[i], i)
		if u.next == x {
			l := z.upper(x, i)
			u.span += l.span - 1
			u.next, u.nextUp, u.score = l.next, l.nextUp, l.score
		} else {
			u.span--
		}
	}
	z.node(update[0]).next = xn.next
	if xn.next != 0 {
		z.node(xn.next).prev = xn.prev
	} else {
		z.tail = xn.prev
	}
	for z.level > 1 && z.upper(0, z.level-1).next == 0 {
		z.level--
	}
	z.n--
}

// clearLinks empties the links of node x, which is unlinked, keeping its
// level block.
func (z *zskiplist) clearLinks(x int32) {
	xn := z.node(x)
	xn.next, xn.prev = 0, 0
	for i := 1; i < z.height(x); i++ {
		l := z.upper(x, i)
		l.next, l.nextUp, l.span, l.score = 0, 0, 0, 0
	}
}

// deleteNode removes node x, whose member is member, and frees its slot.
func (z *zskiplist) deleteNode(x int32, member []byte) {
	if !z.small {
		z.delete(z.node(x).score, member)
		return
	}
	z.smallRemoveAt(z.posOf(x))
	*z.node(x) = zslNode{up: -1, prev: -1}
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
	z.clearLinks(x)
	n := z.node(x)
	n.loc, n.score, n.tag, n.prev = 0, 0, 0, -1
	if z.free == nil {
		z.free = new([zslMaxLevel + 1][]int32)
	}
	h := z.height(x)
	z.free[h] = append(z.free[h], x)
	return true
}

// updateNode gives node x, whose member is member, the score to, keeping
// its slot.
func (z *zskiplist) updateNode(x int32, member []byte, to float64) {
	if !z.small {
		z.updateScore(z.node(x).score, member, to)
		return
	}
	p := z.posOf(x)
	if (p == 0 || z.ord[p-1].score < to) && (p == z.n-1 || z.ord[p+1].score > to) {
		z.ord[p].score = to // still in order
		z.node(x).score = to
		return
	}
	z.smallRemoveAt(p)
	z.node(x).score = to
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
	n := z.node(x)
	if (n.prev == 0 || z.node(n.prev).score < to) && (n.next == 0 || z.node(n.next).score > to) {
		// Still in order: no relinking, but the upper links to x carry
		// its score.
		n.score = to
		for i := 1; i < z.height(x); i++ {
			z.upper(update[i], i).score = to
		}
		return x
	}
	z.unlink(x, &update)
	z.clearLinks(x)
	n.score = to
	z.link(x, member)
	return x
}

// rank returns the 1-based rank of (score, member), 0 if absent.
func (z *zskiplist) rank(score float64, member []byte) int {
	after := func(xs float64, x int32) bool {
		return xs > score || (xs == score && bytes.Compare(z.member(x), member) > 0)
	}
	r := 0
	p, pUp := int32(0), z.node(0).up
	for i := z.level - 1; i >= 1; i-- {
		for {
			l := &z.levels[int(pUp)+i-1]
			if l.next == 0 || after(l.score, l.next) {
				break
			}
			r += int(l.span)
			p, pUp = l.next, l.nextUp
		}
		if p != 0 && bytes.Equal(z.member(p), member) {
			return r
		}
	}
	for {
		nx := z.node(p).next
		if nx == 0 || after(z.node(nx).score, nx) {
			break
		}
		r++
		p = nx
	}
	if p != 0 && bytes.Equal(z.member(p), member) {
		return r
	}
	return 0
}

// rankNode returns the 1-based rank of node x, whose member is member.
func (z *zskiplist) rankNode(x int32, member []byte) int {
	if z.small {
		return z.posOf(x) + 1
	}
	return z.rank(z.node(x).score, member)
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
	p, pUp := int32(0), z.node(0).up
	for i := z.level - 1; i >= 1; i-- {
		for {
			l := &z.levels[int(pUp)+i-1]
			if l.next == 0 || traversed+int(l.span) > r {
				break
			}
			traversed += int(l.span)
			p, pUp = l.next, l.nextUp
		}
		if traversed == r {
			return p
		}
	}
	for ; traversed < r; traversed++ {
		if p = z.node(p).next; p == 0 {
			return 0
		}
	}
	return p
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
	return z.node(x).next
}

func (z *zskiplist) prev(x int32) int32 {
	if z.small {
		if p := z.posOf(x); p > 0 {
			return z.ord[p-1].x
		}
		return 0
	}
	return z.node(x).prev
}

func (z *zskiplist) first() int32 {
	if z.small {
		if z.n == 0 {
			return 0
		}
		return z.ord[0].x
	}
	return z.node(0).next
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
	p, pUp := int32(0), z.node(0).up
	for i := z.level - 1; i >= 1; i-- {
		for {
			l := &z.levels[int(pUp)+i-1]
			if l.next == 0 || !in(l.next, l.score) {
				break
			}
			r += int(l.span)
			p, pUp = l.next, l.nextUp
		}
	}
	for {
		nx := z.node(p).next
		if nx == 0 || !in(nx, z.node(nx).score) {
			return r
		}
		r++
		p = nx
	}
}

package keyspace

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// Sorted set operations. Bodies (durable, never renumber the kinds):
//
//	opZAdd  repeated (score float64 LE, member as a uvarint length + bytes):
//	        each member gets exactly that score (added, or moved)
//	opZRem  repeated member (absent members are ignored)
//
// Ops carry results, never deltas: ZINCRBY logs the new score, ZADD with
// NX/XX/GT/LT logs only the members it actually set, with their final
// scores, so replay is deterministic whatever the order of evaluation was.
// The *STORE commands are a delete of the destination followed by ZAdd ops,
// in one batch.
const (
	opZAdd = 40
	opZRem = 41
)

// TypeZSet is TYPE's reply for a sorted set.
const TypeZSet = "zset"

// Redis keeps a small sorted set as a listpack (zset-max-listpack-entries
// 128, zset-max-listpack-value 64); ZSCAN then returns it whole in order.
const (
	zsetSmallEntries = 128
	zsetSmallValue   = 64
)

// ZSet is a sorted set: an index from member to its skiplist node (so
// ZSCORE is O(1)) and the skiplist ordered by (score, member) with spans
// (ZRANK, ZADD, ZREM, ranges in O(log n)). The member bytes stay in the
// arena: a node holds the location of its member inside the logged
// operation that set it, so the DRAM part is pointer-free (nothing for the
// garbage collector to scan) and about 50 bytes a member. Those locations
// stay valid as long as the set: its operations live in segments at or
// after its firstSeg, and cleaning such a segment rewrites the set whole
// (a new set, new locations) before the segment goes. Read methods must be
// called with the keyspace lock held; member bytes they return alias the
// mapping and are valid until Unlock.
type ZSet struct {
	index zsetIndex
	zsl   zskiplist
	bytes int64
	// grown is set once the set has outgrown what Redis keeps as a
	// listpack (more than 128 members, or a member over 64 bytes); like
	// Redis's conversion to a skiplist it is not undone when it shrinks.
	grown bool
}

// ZNode designates one element of a ZSet while the keyspace lock is held
// and the set is not changed (0 = none): its node in a skiplist, its
// 1-based rank in a small set (an ordered array, see zskiplist).
type ZNode int32

func newZSet(ks *Keyspace) *ZSet { return &ZSet{zsl: newSkiplist(ks)} }

func (z *ZSet) typeName() string { return TypeZSet }
func (z *ZSet) length() int      { return z.zsl.n }
func (z *ZSet) liveBytes() int64 { return z.bytes }

func (z *ZSet) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	c := opChunker{b: b, kind: opZAdd, db: db, key: key}
	for x := z.At(0); x != 0; x = z.Next(x) {
		m := z.Member(x)
		c.room(8 + uvarintLen(uint64(len(m))) + len(m))
		c.body = appendZMember(c.body, z.ScoreOf(x), m)
	}
	c.flush()
}

func memberBytes(m []byte) int64 { return int64(len(m)) + 10 }

// set gives member, whose bytes are at loc in the log, the score (adding
// it if new). An existing member keeps its location: the one it has is as
// live as the set (see ZSet).
func (z *ZSet) set(member []byte, loc uint64, score float64) {
	if x := z.index.lookup(&z.zsl, member); x != 0 {
		if math.Float64bits(z.zsl.node(x).score) != math.Float64bits(score) {
			z.zsl.updateNode(x, member, score)
		}
		return
	}
	z.index.insert(&z.zsl, z.zsl.insert(score, member, loc), member)
	z.bytes += memberBytes(member)
	if !z.grown && (len(member) > zsetSmallValue || z.zsl.n > zsetSmallEntries) {
		z.convert()
	}
}

func (z *ZSet) del(member []byte) bool {
	x := z.index.lookup(&z.zsl, member)
	if x == 0 {
		return false
	}
	z.index.remove(&z.zsl, x, member)
	z.zsl.deleteNode(x, member)
	z.bytes -= memberBytes(member)
	return true
}

func appendZMember[T string | []byte](dst []byte, score float64, member T) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(score))
	dst = binary.AppendUvarint(dst, uint64(len(member)))
	return append(dst, member...)
}

func registerZSetOps(m map[byte]objectApplier) {
	registerOp(m, opZAdd, applyZAdd)
	registerOp(m, opZRem, applyZRem)
}

func applyZAdd(ks *Keyspace, o op, e *entry) error {
	if e != nil && (e.obj == nil || e.obj.coll.typeName() != TypeZSet) {
		return fmt.Errorf("%w: ZADD on a %s", errOpType, ks.typeOf(e))
	}
	p := o.body
	// Validate first: a bad op must not leave a half-applied set behind.
	for i := 0; i < len(p); {
		if len(p)-i < 8 {
			return fmt.Errorf("%w: ZADD score", errBadOp)
		}
		if math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(p[i:]))) {
			return fmt.Errorf("%w: ZADD NaN score", errBadOp)
		}
		_, j, ok := readBytes(p, i+8)
		if !ok {
			return fmt.Errorf("%w: ZADD member", errBadOp)
		}
		i = j
	}
	if len(p) == 0 {
		return nil
	}
	if e == nil {
		e = ks.createObject(o.db, o.key, newZSet(ks), o.loc)
	}
	z := e.obj.coll.(*ZSet)
	base := o.loc + uint64(o.bodyOff)
	for i := 0; i < len(p); {
		score := math.Float64frombits(binary.LittleEndian.Uint64(p[i:]))
		member, j, _ := readBytes(p, i+8)
		z.set(member, base+uint64(i+8), score)
		i = j
	}
	ks.objectChanged(o.db, e)
	ks.keyReady(o.db, o.key) // BZPOPMIN/BZPOPMAX waiters
	return nil
}

func applyZRem(ks *Keyspace, o op, e *entry) error {
	if e == nil || e.obj == nil || e.obj.coll.typeName() != TypeZSet {
		return nil
	}
	z := e.obj.coll.(*ZSet)
	for i := 0; i < len(o.body); {
		member, j, ok := readBytes(o.body, i)
		if !ok {
			return fmt.Errorf("%w: ZREM member", errBadOp)
		}
		z.del(member)
		i = j
	}
	ks.objectChanged(o.db, e)
	return nil
}

// ZAdd appends operations giving each members[i] the score scores[i]
// (absolute scores: the caller has applied NX/XX/GT/LT/INCR already).
func (b *Batch) ZAdd(db int, key []byte, members [][]byte, scores []float64) {
	zaddChunks(b, db, key, members, scores)
}

// ZAddStrings is ZAdd for members held as strings (results of ranges and
// of the set-algebra commands).
func (b *Batch) ZAddStrings(db int, key []byte, members []string, scores []float64) {
	zaddChunks(b, db, key, members, scores)
}

func zaddChunks[T string | []byte](b *Batch, db int, key []byte, members []T, scores []float64) {
	if len(members) != len(scores) {
		panic("keyspace: ZAdd needs one score per member")
	}
	c := opChunker{b: b, kind: opZAdd, db: db, key: key}
	for i, m := range members {
		c.room(8 + uvarintLen(uint64(len(m))) + len(m))
		c.body = appendZMember(c.body, scores[i], m)
	}
	c.flush()
}

// ZRem appends operations removing members from a sorted set.
func (b *Batch) ZRem(db int, key []byte, members [][]byte) { zremChunks(b, db, key, members) }

// ZRemStrings is ZRem for members held as strings.
func (b *Batch) ZRemStrings(db int, key []byte, members []string) { zremChunks(b, db, key, members) }

func zremChunks[T string | []byte](b *Batch, db int, key []byte, members []T) {
	c := opChunker{b: b, kind: opZRem, db: db, key: key}
	for _, m := range members {
		c.room(uvarintLen(uint64(len(m))) + len(m))
		c.body = binary.AppendUvarint(c.body, uint64(len(m)))
		c.body = append(c.body, m...)
	}
	c.flush()
}

// ZSetAt returns the sorted set at key: nil, nil when the key does not
// exist, ErrWrongType when it holds another type. The ZSet is valid while
// the lock is held.
func (ks *Keyspace) ZSetAt(db int, key []byte) (*ZSet, error) {
	e, err := ks.lookupObject(db, key, TypeZSet)
	if e == nil {
		return nil, err
	}
	return e.obj.coll.(*ZSet), nil
}

// Len is the number of members.
func (z *ZSet) Len() int { return z.zsl.n }

// ZSetListpackFits reports whether a sorted set of n members, none longer
// than maxLen bytes, is in Redis's small encoding (listpack:
// zset-max-listpack-entries 128, zset-max-listpack-value 64).
func ZSetListpackFits(n, maxLen int) bool {
	return n <= zsetSmallEntries && maxLen <= zsetSmallValue
}

// Score returns member's score: O(1).
func (z *ZSet) Score(member []byte) (float64, bool) {
	x := z.index.lookup(&z.zsl, member)
	if x == 0 {
		return 0, false
	}
	return z.zsl.node(x).score, true
}

// Rank returns member's 0-based rank in ascending order: O(log n).
func (z *ZSet) Rank(member []byte) (int, bool) {
	x := z.index.lookup(&z.zsl, member)
	if x == 0 {
		return 0, false
	}
	return z.zsl.rankNode(x, member) - 1, true
}

// At returns the element of 0-based rank r (0 when out of range): O(log n).
func (z *ZSet) At(r int) ZNode {
	if z.zsl.small {
		if r < 0 || r >= z.zsl.n {
			return 0
		}
		return ZNode(r + 1)
	}
	return ZNode(z.zsl.byRank(r + 1))
}

// Next and Prev step through the order (0 past either end).
func (z *ZSet) Next(x ZNode) ZNode {
	if z.zsl.small {
		if int(x) >= z.zsl.n {
			return 0
		}
		return x + 1
	}
	return ZNode(z.zsl.next(int32(x)))
}

func (z *ZSet) Prev(x ZNode) ZNode {
	if z.zsl.small {
		return x - 1
	}
	return ZNode(z.zsl.prev(int32(x)))
}

// Member and ScoreOf read an element.
func (z *ZSet) Member(x ZNode) []byte {
	if z.zsl.small {
		return z.zsl.member(z.zsl.ord[x-1].x)
	}
	return z.zsl.member(int32(x))
}

func (z *ZSet) ScoreOf(x ZNode) float64 {
	if z.zsl.small {
		return z.zsl.ord[x-1].score
	}
	return z.zsl.node(int32(x)).score
}
func (z *ZSet) Random() ZNode             { return z.At(rand.IntN(z.zsl.n)) }
func (z *ZSet) Small() bool               { return !z.grown }
func (z *ZSet) nodeMember(x int32) []byte { return z.zsl.member(x) }
func (z *ZSet) nodeScore(x int32) float64 { return z.zsl.node(x).score }

// ScoreRange is a score interval (semantics: redis.io ZRANGEBYSCORE).
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

// Empty reports whether no score can be in r.
func (r ScoreRange) Empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

func (r ScoreRange) gteMin(s float64) bool {
	if r.MinEx {
		return s > r.Min
	}
	return s >= r.Min
}

func (r ScoreRange) lteMax(s float64) bool {
	if r.MaxEx {
		return s < r.Max
	}
	return s <= r.Max
}

// ScoreRanks returns the 0-based ranks [lo, hi) of the elements whose
// score is in r (lo >= hi: none): O(log n).
func (z *ZSet) ScoreRanks(r ScoreRange) (lo, hi int) {
	if r.Empty() {
		return 0, 0
	}
	lo = z.zsl.countWhile(func(_ int32, s float64) bool { return !r.gteMin(s) })
	hi = z.zsl.countWhile(func(_ int32, s float64) bool { return r.lteMax(s) })
	return lo, hi
}

// LexBound is one end of a lexicographic range: Inf -1 is "-" (below
// everything), +1 is "+" (above everything), 0 a value, exclusive if Ex.
type LexBound struct {
	Value string
	Ex    bool
	Inf   int8
}

// LexRange is a lexicographic interval (semantics: redis.io ZRANGEBYLEX).
type LexRange struct{ Min, Max LexBound }

// memberVsBound compares a member with a bound, as cmpLex.
func memberVsBound(m []byte, b LexBound) int {
	switch {
	case b.Inf < 0:
		return 1
	case b.Inf > 0:
		return -1
	case string(m) < b.Value:
		return -1
	case string(m) > b.Value:
		return 1
	}
	return 0
}

// cmpLex compares a bound with a member (or two bounds) as Redis's
// sdscmplex does with its minstring/maxstring sentinels.
func cmpLex(a LexBound, b LexBound) int {
	if a.Inf == b.Inf && a.Inf != 0 {
		return 0
	}
	if a.Inf < 0 || b.Inf > 0 {
		return -1
	}
	if a.Inf > 0 || b.Inf < 0 {
		return 1
	}
	switch {
	case a.Value < b.Value:
		return -1
	case a.Value > b.Value:
		return 1
	}
	return 0
}

// Empty reports whether no member can be in r.
func (r LexRange) Empty() bool {
	c := cmpLex(r.Min, r.Max)
	return c > 0 || (c == 0 && (r.Min.Ex || r.Max.Ex))
}

func (r LexRange) gteMin(m []byte) bool {
	c := memberVsBound(m, r.Min)
	if r.Min.Ex {
		return c > 0
	}
	return c >= 0
}

func (r LexRange) lteMax(m []byte) bool {
	c := memberVsBound(m, r.Max)
	if r.Max.Ex {
		return c < 0
	}
	return c <= 0
}

// LexRanks returns the 0-based ranks [lo, hi) of the elements whose member
// is in r, for a walk in ascending order (reverse false) or descending
// order: O(log n). Lex ranges assume that all scores are equal; when they
// are not, the result is what Redis gives: nothing unless the last member
// is >= min and the first <= max, and for a small set (a listpack in
// Redis) the run that a linear walk from the head (from the tail when
// reverse) finds.
func (z *ZSet) LexRanks(r LexRange, reverse bool) (lo, hi int) {
	n := z.zsl.n
	if r.Empty() || n == 0 || !r.gteMin(z.nodeMember(z.zsl.tail)) || !r.lteMax(z.nodeMember(z.zsl.first())) {
		return 0, 0
	}
	if !z.Small() {
		lo = z.zsl.countWhile(func(x int32, _ float64) bool { return !r.gteMin(z.nodeMember(x)) })
		hi = z.zsl.countWhile(func(x int32, _ float64) bool { return r.lteMax(z.nodeMember(x)) })
		return lo, hi
	}
	if !reverse {
		x := z.At(0)
		for ; x != 0 && !r.gteMin(z.Member(x)); x = z.Next(x) {
			lo++
		}
		hi = lo
		for ; x != 0 && r.lteMax(z.Member(x)); x = z.Next(x) {
			hi++
		}
		return lo, hi
	}
	hi = n
	x := z.At(n - 1)
	for ; x != 0 && !r.lteMax(z.Member(x)); x = z.Prev(x) {
		hi--
	}
	lo = hi
	for ; x != 0 && r.gteMin(z.Member(x)); x = z.Prev(x) {
		lo--
	}
	return lo, hi
}

// Encoding is OBJECT ENCODING's reply: "listpack" while the set is small
// enough for Redis to keep it as one, else "skiplist" (for good, a rebuild
// included: see opBigEncoding).
func (z *ZSet) Encoding() string {
	if z.grown {
		return "skiplist"
	}
	return "listpack"
}

func (z *ZSet) encoding() string { return z.Encoding() }
func (z *ZSet) converted() bool  { return z.grown }

// convert makes the set a skiplist for good (Redis's conversion from a
// listpack).
func (z *ZSet) convert() {
	z.grown = true
	z.zsl.toBig()
}

// Scan visits about count elements from cursor and returns the next cursor
// (0 when done). Elements keep their node slot while they live (a score
// change relinks the node in place), and the cursor walks the slots
// upwards, so every element present for the whole iteration is visited
// (semantics: redis.io SCAN). A small set (what Redis keeps as a listpack)
// is returned whole, in order, with cursor 0, as Redis does.
func (z *ZSet) Scan(cursor uint64, count int, fn func(member []byte, score float64)) uint64 {
	if z.Small() {
		for x := z.At(0); x != 0; x = z.Next(x) {
			fn(z.Member(x), z.ScoreOf(x))
		}
		return 0
	}
	slots := uint64(z.zsl.slots)
	pos := max(cursor, 1)
	for count = max(count, 1); pos < slots && count > 0; pos++ {
		if n := z.zsl.node(int32(pos)); n.prev >= 0 {
			fn(z.zsl.member(int32(pos)), n.score)
			count--
		}
	}
	if pos >= slots {
		return 0
	}
	return pos
}

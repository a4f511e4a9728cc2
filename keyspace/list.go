package keyspace

import (
	"encoding/binary"
	"fmt"
	"math"
)

// List operations. Bodies (durable, never renumber the kinds):
//
//	opLPush   repeated value (uvarint length + bytes), each pushed at the
//	          head in turn (so "a b c" leaves c first, as LPUSH a b c)
//	opRPush   repeated value, each appended at the tail
//	opLPop    uvarint count: remove min(count, length) from the head
//	opRPop    uvarint count: remove min(count, length) from the tail
//	opLSet    uvarint index | value: replace the element at index
//	opLInsert uvarint index | value: insert so the value ends up at index
//	          (0 <= index <= length); LINSERT resolves its pivot to an
//	          index before logging, so replay does no comparison
//	opLRem    varint count (zigzag) | value: LREM's rule (count > 0: the
//	          first count equal elements from the head; < 0: from the tail;
//	          0: all); replay scans the same list, so removes the same ones
//	opLTrim   uvarint start | uvarint n: keep elements [start, start+n)
//
// Indexes in operations are absolute (0 = head, never negative): the
// command handler resolves Redis's negative indexes against the length it
// saw, which is the length at replay too.
const (
	opLPush   = 19
	opRPush   = 20
	opLPop    = 21
	opRPop    = 22
	opLSet    = 23
	opLInsert = 24
	opLRem    = 25
	opLTrim   = 26
)

// TypeList is TYPE's reply for a list.
const TypeList = "list"

// listObj is a list: a ring buffer (a power-of-two slice used as a deque)
// of element locations. Each location points at the uvarint-prefixed bytes
// of the element inside the operation that pushed (or LSET/LINSERTed) it,
// served from the mapping. Element i is ring[(head+i) & (len(ring)-1)], so
// LINDEX and LSET are O(1) at any index, pushes and pops at either end are
// O(1) amortised, and the DRAM cost is 8 bytes per element, pointer-free.
type listObj struct {
	ring  []uint64
	head  int
	n     int
	bytes int64 // live-bytes estimate: element bytes plus per-element overhead
}

// elemOverhead is what an element costs in the log besides its bytes (its
// length prefix and its share of the operation).
const elemOverhead = 2

func (l *listObj) typeName() string { return TypeList }
func (l *listObj) length() int      { return l.n }
func (l *listObj) liveBytes() int64 { return l.bytes }

// encoding is OBJECT ENCODING's reply: Redis 7.0 encodes every list as a
// quicklist.
func (l *listObj) encoding() string { return "quicklist" }

func (l *listObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	// Ops of bounded size (opChunker).
	c := opChunker{b: b, kind: opRPush, db: db, key: key}
	for j := 0; j < l.n; j++ {
		v := ks.bytesAt(l.at(j))
		c.room(uvarintLen(uint64(len(v))) + len(v))
		c.body = appendBytes(c.body, v)
	}
	c.flush()
}

func (l *listObj) mask() int { return len(l.ring) - 1 }

// at returns the location of element i (0 <= i < n).
func (l *listObj) at(i int) uint64 { return l.ring[(l.head+i)&l.mask()] }

func (l *listObj) setAt(i int, loc uint64) { l.ring[(l.head+i)&l.mask()] = loc }

// resize moves the elements into a ring of capacity c (a power of two >= n).
func (l *listObj) resize(c int) {
	r := make([]uint64, c)
	for i := 0; i < l.n; i++ {
		r[i] = l.at(i)
	}
	l.ring, l.head = r, 0
}

func (l *listObj) grow() {
	if l.n == len(l.ring) {
		l.resize(max(8, 2*len(l.ring)))
	}
}

// shrink gives memory back once the list is a quarter of its ring.
func (l *listObj) shrink() {
	if len(l.ring) > 64 && l.n < len(l.ring)/4 {
		l.resize(len(l.ring) / 2)
	}
}

func (l *listObj) pushFront(loc uint64) {
	l.grow()
	l.head = (l.head - 1) & l.mask()
	l.ring[l.head] = loc
	l.n++
}

func (l *listObj) pushBack(loc uint64) {
	l.grow()
	l.ring[(l.head+l.n)&l.mask()] = loc
	l.n++
}

func (l *listObj) popFront() uint64 {
	loc := l.ring[l.head]
	l.head = (l.head + 1) & l.mask()
	l.n--
	return loc
}

func (l *listObj) popBack() uint64 {
	l.n--
	return l.ring[(l.head+l.n)&l.mask()]
}

// insert puts loc at index i (0 <= i <= n), moving the shorter side.
func (l *listObj) insert(i int, loc uint64) {
	if i <= l.n/2 {
		l.pushFront(0)
		for j := 0; j < i; j++ {
			l.setAt(j, l.at(j+1))
		}
	} else {
		l.pushBack(0)
		for j := l.n - 1; j > i; j-- {
			l.setAt(j, l.at(j-1))
		}
	}
	l.setAt(i, loc)
}

// elemBytes is what an element counts in the live bytes.
func (ks *Keyspace) elemBytes(loc uint64) int64 {
	return int64(len(ks.bytesAt(loc))) + elemOverhead
}

func registerListOps(m map[byte]objectApplier) {
	registerOp(m, opLPush, applyLPush)
	registerOp(m, opRPush, applyRPush)
	registerOp(m, opLPop, applyLPop)
	registerOp(m, opRPop, applyLPop)
	registerOp(m, opLSet, applyLSet)
	registerOp(m, opLInsert, applyLInsert)
	registerOp(m, opLRem, applyLRem)
	registerOp(m, opLTrim, applyLTrim)
}

// listOf returns the list of e for an applier; e must hold a list.
func (ks *Keyspace) listOf(o op, e *entry) (*listObj, error) {
	if e == nil || e.obj == nil || e.obj.coll.typeName() != TypeList {
		if e == nil {
			return nil, fmt.Errorf("%w: list op %d on a missing key", errStaleOp, o.kind)
		}
		return nil, fmt.Errorf("%w: list op %d on a %s", errOpType, o.kind, ks.typeOf(e))
	}
	return e.obj.coll.(*listObj), nil
}

func applyLPush(ks *Keyspace, o op, e *entry) error { return applyPush(ks, o, e, true) }
func applyRPush(ks *Keyspace, o op, e *entry) error { return applyPush(ks, o, e, false) }

func applyPush(ks *Keyspace, o op, e *entry, front bool) error {
	if e != nil && (e.obj == nil || e.obj.coll.typeName() != TypeList) {
		return fmt.Errorf("%w: push on a %s", errOpType, ks.typeOf(e))
	}
	if len(o.body) == 0 {
		return nil
	}
	if e == nil {
		e = ks.createObject(o.db, o.key, &listObj{}, o.loc)
	}
	l := e.obj.coll.(*listObj)
	base := o.loc + uint64(o.bodyOff)
	for i := 0; i < len(o.body); {
		val, j, ok := readBytes(o.body, i)
		if !ok {
			return fmt.Errorf("%w: push value", errBadOp)
		}
		if front {
			l.pushFront(base + uint64(i))
		} else {
			l.pushBack(base + uint64(i))
		}
		l.bytes += int64(len(val)) + elemOverhead
		i = j
	}
	ks.objectChanged(o.db, e)
	if !ks.cleaning {
		ks.keyReady(o.db, o.key)
	}
	return nil
}

func applyLPop(ks *Keyspace, o op, e *entry) error {
	l, err := ks.listOf(o, e)
	if err != nil {
		return err
	}
	count, w := binary.Uvarint(o.body)
	if w <= 0 || w != len(o.body) {
		return fmt.Errorf("%w: pop count", errBadOp)
	}
	for n := min(count, uint64(l.n)); n > 0; n-- {
		var loc uint64
		if o.kind == opLPop {
			loc = l.popFront()
		} else {
			loc = l.popBack()
		}
		l.bytes -= ks.elemBytes(loc)
	}
	l.shrink()
	ks.objectChanged(o.db, e)
	return nil
}

// indexAndValue decodes "uvarint index | value" and returns the location
// of the value.
func indexAndValue(o op) (idx uint64, loc uint64, vlen int, err error) {
	idx, w := binary.Uvarint(o.body)
	if w <= 0 {
		return 0, 0, 0, fmt.Errorf("%w: list index", errBadOp)
	}
	val, end, ok := readBytes(o.body, w)
	if !ok || end != len(o.body) {
		return 0, 0, 0, fmt.Errorf("%w: list value", errBadOp)
	}
	return idx, o.loc + uint64(o.bodyOff) + uint64(w), len(val), nil
}

func applyLSet(ks *Keyspace, o op, e *entry) error {
	l, err := ks.listOf(o, e)
	if err != nil {
		return err
	}
	idx, loc, vlen, err := indexAndValue(o)
	if err != nil {
		return err
	}
	if idx >= uint64(l.n) {
		return fmt.Errorf("%w: LSET index %d of %d", errStaleOp, idx, l.n)
	}
	l.bytes += int64(vlen) + elemOverhead - ks.elemBytes(l.at(int(idx)))
	l.setAt(int(idx), loc)
	ks.objectChanged(o.db, e)
	return nil
}

func applyLInsert(ks *Keyspace, o op, e *entry) error {
	l, err := ks.listOf(o, e)
	if err != nil {
		return err
	}
	idx, loc, vlen, err := indexAndValue(o)
	if err != nil {
		return err
	}
	if idx > uint64(l.n) {
		return fmt.Errorf("%w: LINSERT index %d of %d", errStaleOp, idx, l.n)
	}
	l.insert(int(idx), loc)
	l.bytes += int64(vlen) + elemOverhead
	ks.objectChanged(o.db, e)
	if !ks.cleaning {
		ks.keyReady(o.db, o.key)
	}
	return nil
}

func applyLRem(ks *Keyspace, o op, e *entry) error {
	l, err := ks.listOf(o, e)
	if err != nil {
		return err
	}
	count, w := binary.Varint(o.body)
	if w <= 0 {
		return fmt.Errorf("%w: LREM count", errBadOp)
	}
	val, end, ok := readBytes(o.body, w)
	if !ok || end != len(o.body) {
		return fmt.Errorf("%w: LREM value", errBadOp)
	}
	l.bytes -= int64(len(val)+elemOverhead) * int64(l.remove(ks, count, val))
	l.shrink()
	ks.objectChanged(o.db, e)
	return nil
}

// remove deletes elements equal to val by LREM's rule and returns how many.
func (l *listObj) remove(ks *Keyspace, count int64, val []byte) int {
	drop := make([]bool, l.n)
	removed := 0
	if count >= 0 {
		for i := 0; i < l.n && (count == 0 || int64(removed) < count); i++ {
			if string(ks.bytesAt(l.at(i))) == string(val) {
				drop[i] = true
				removed++
			}
		}
	} else {
		limit := -count
		if limit < 0 { // -MinInt64
			limit = math.MaxInt64
		}
		for i := l.n - 1; i >= 0 && int64(removed) < limit; i-- {
			if string(ks.bytesAt(l.at(i))) == string(val) {
				drop[i] = true
				removed++
			}
		}
	}
	if removed == 0 {
		return 0
	}
	w := 0
	for r := 0; r < l.n; r++ {
		if !drop[r] {
			l.setAt(w, l.at(r))
			w++
		}
	}
	l.n = w
	return removed
}

func applyLTrim(ks *Keyspace, o op, e *entry) error {
	l, err := ks.listOf(o, e)
	if err != nil {
		return err
	}
	start, w := binary.Uvarint(o.body)
	if w <= 0 {
		return fmt.Errorf("%w: LTRIM start", errBadOp)
	}
	n, w2 := binary.Uvarint(o.body[w:])
	if w2 <= 0 || w+w2 != len(o.body) {
		return fmt.Errorf("%w: LTRIM range", errBadOp)
	}
	if start > uint64(l.n) || n > uint64(l.n)-start {
		return fmt.Errorf("%w: LTRIM range %d+%d of %d", errStaleOp, start, n, l.n)
	}
	for i := 0; i < int(start); i++ {
		l.bytes -= ks.elemBytes(l.at(i))
	}
	for i := int(start + n); i < l.n; i++ {
		l.bytes -= ks.elemBytes(l.at(i))
	}
	l.head = (l.head + int(start)) & l.mask()
	l.n = int(n)
	l.shrink()
	ks.objectChanged(o.db, e)
	return nil
}

// LPush appends an operation pushing vals at the head of the list at key,
// one after the other (LPUSH semantics; the caller checks the type).
func (b *Batch) LPush(db int, key []byte, vals ...[]byte) { b.push(opLPush, db, key, vals) }

// RPush appends an operation pushing vals at the tail of the list at key.
func (b *Batch) RPush(db int, key []byte, vals ...[]byte) { b.push(opRPush, db, key, vals) }

// push writes one operation, or several of bounded size when vals are
// very many (itemOps): pushing them in turn gives the same list.
func (b *Batch) push(kind byte, db int, key []byte, vals [][]byte) {
	b.itemOps(kind, db, key, vals, 1)
}

// LPop appends an operation removing count elements from the head (at most
// the list's length; the caller reads them first to reply).
func (b *Batch) LPop(db int, key []byte, count int) { b.pop(opLPop, db, key, count) }

// RPop appends an operation removing count elements from the tail.
func (b *Batch) RPop(db int, key []byte, count int) { b.pop(opRPop, db, key, count) }

func (b *Batch) pop(kind byte, db int, key []byte, count int) {
	var body [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(body[:], uint64(count))
	b.ObjectOp(kind, db, key, body[:n])
}

// LSet appends an operation replacing element index (0 <= index < length).
func (b *Batch) LSet(db int, key []byte, index int, val []byte) {
	b.indexed(opLSet, db, key, index, val)
}

// LInsert appends an operation inserting val so that it becomes element
// index (0 <= index <= length).
func (b *Batch) LInsert(db int, key []byte, index int, val []byte) {
	b.indexed(opLInsert, db, key, index, val)
}

func (b *Batch) indexed(kind byte, db int, key []byte, index int, val []byte) {
	var stack [256]byte
	body := stack[:0]
	if n := len(val) + 2*binary.MaxVarintLen64; n > len(stack) {
		body = make([]byte, 0, n)
	}
	body = binary.AppendUvarint(body, uint64(index))
	body = appendBytes(body, val)
	b.ObjectOp(kind, db, key, body)
}

// LRem appends an operation removing elements equal to val (LREM's count
// rule).
func (b *Batch) LRem(db int, key []byte, count int64, val []byte) {
	body := make([]byte, 0, len(val)+2*binary.MaxVarintLen64)
	body = binary.AppendVarint(body, count)
	body = appendBytes(body, val)
	b.ObjectOp(opLRem, db, key, body)
}

// LTrim appends an operation keeping only elements [start, start+n) (both
// within the list; n > 0; to empty a list delete the key).
func (b *Batch) LTrim(db int, key []byte, start, n int) {
	var body [2 * binary.MaxVarintLen64]byte
	w := binary.PutUvarint(body[:], uint64(start))
	w += binary.PutUvarint(body[w:], uint64(n))
	b.ObjectOp(opLTrim, db, key, body[:w])
}

// List is a read-only view of a list for command handlers, valid until
// Unlock. The zero List is an empty (missing) list.
type List struct {
	ks *Keyspace
	l  *listObj
}

// List returns a view of the list at key; the zero List when the key does
// not exist; ErrWrongType when it holds another type.
func (ks *Keyspace) List(db int, key []byte) (List, error) {
	e, err := ks.lookupObject(db, key, TypeList)
	if e == nil {
		return List{}, err
	}
	return List{ks: ks, l: e.obj.coll.(*listObj)}, nil
}

// Exists reports whether the list exists (is not empty).
func (v List) Exists() bool { return v.l != nil }

// Len returns the number of elements. O(1).
func (v List) Len() int {
	if v.l == nil {
		return 0
	}
	return v.l.n
}

// At returns element i, 0 <= i < Len (0 = head). O(1) at any index.
func (v List) At(i int) []byte { return v.ks.bytesAt(v.l.at(i)) }

// OnKeyReady sets fn to be called whenever a key gains elements a blocked
// client could take (a list push or insert, including the pushes that
// RENAME, COPY, MOVE are made of; not the cleaner's rewrites). fn runs
// with the keyspace lock held, while the batch is applied: it must only
// take note (signal a channel), never call back into the keyspace. Call
// with the lock held.
func (ks *Keyspace) OnKeyReady(fn func(db int, key []byte)) {
	ks.keyReadyFn = fn
}

// keyReady calls the OnKeyReady hook, if any, for (db, key). Types whose
// elements blocking commands take (lists, sorted sets) call it from the
// appliers that add elements.
func (ks *Keyspace) keyReady(db int, key []byte) {
	if ks.keyReadyFn != nil && !ks.cleaning {
		ks.keyReadyFn(db, key)
	}
}

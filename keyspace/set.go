package keyspace

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Set operations. Bodies (durable, never renumber the kinds):
//
//	opSAdd        repeated member, each a uvarint length + bytes
//	opSRem        repeated member
//	opSHashtable  empty: the set has Redis's "hashtable" encoding even if
//	              its members alone would not give it. Written by earlier
//	              versions' rebuild; now CopyValue writes the generic
//	              opBigEncoding (object.go), which has the same effect, and
//	              opSHashtable is only replayed.
//
// Commands log results, never choices: SPOP picks its victims when the
// command runs and logs an opSRem of exactly those members, so replay is
// deterministic. SMOVE is an opSRem and an opSAdd in one batch; the *STORE
// commands are a delete of the destination plus an opSAdd of the result in
// one batch, so each is recovered whole or not at all.
const (
	opSAdd       = 30
	opSRem       = 31
	opSHashtable = 32
)

// TypeSet is TYPE's reply for a set.
const TypeSet = "set"

// setMaxIntsetEntries is Redis's set-max-intset-entries: a set of integers
// with at most this many members is "intset"-encoded.
const setMaxIntsetEntries = 512

// setObj is a set. Its members' bytes stay in the log: a member is the
// location of its uvarint-prefixed bytes inside the SADD operation that
// added it, and the DRAM index over them holds no pointer (the Go collector
// never scans a set's members; a member costs the heap about 25 bytes):
//
//   - members is a dense table of setMember; it gives O(1) SRANDMEMBER and
//     SPOP per element and an SSCAN cursor that survives deletions, like
//     the databases' key tables (a delete moves the last member into the
//     hole);
//   - idx is an open-addressing table (tagIndex: linear probing,
//     backward-shift deletion, load at most 3/4) of 4-byte slots holding
//     the position in members and the bits of the member's tag (the high
//     32 bits of its hash) that its home slot does not give; a lookup
//     compares bytes in the log only when the tag matches.
//
// SISMEMBER, SADD and SREM of one member are O(1): a hash, a probe, one
// comparison in the mapping.
type setObj struct {
	idx     tagIndex
	members []setMember
	bytes   int64
	// hashtable records that the set has left Redis's intset encoding (a
	// member that is not an integer, or more than setMaxIntsetEntries
	// members): Redis never converts back, so neither does this flag.
	hashtable bool
}

// setMember locates one member: loc is the packed location of its uvarint
// length inside a logged SADD body, n its length, tag its hash tag (kept
// so that moving a member or resizing never reads the log).
type setMember struct {
	loc uint64
	n   uint32
	tag uint32
}

// setSeed keys the member hash; the index lives in DRAM only, so a seed
// per process is fine (slots never decide an observable order).
var setSeed = maphash.MakeSeed()

func setMemberTag(m []byte) uint32 { return uint32(maphash.Bytes(setSeed, m) >> 32) }

func newSet() *setObj { return &setObj{} }

func (s *setObj) typeName() string { return TypeSet }
func (s *setObj) length() int      { return len(s.members) }
func (s *setObj) liveBytes() int64 { return s.bytes }

// setMemberOverhead approximates the log bytes of a member beyond its
// bytes (length prefix, share of the op header).
const setMemberOverhead = 2

// setRaw returns n bytes of the log at a packed location.
func (ks *Keyspace) setRaw(loc uint64, n int) []byte {
	seg := ks.arena.Segment(loc >> 40)
	if seg == nil {
		panic(fmt.Sprintf("keyspace: location %#x names a missing segment", loc))
	}
	off := int(loc & (1<<40 - 1))
	return seg.Bytes()[off : off+n : off+n]
}

// memberBytes returns a member's bytes in the mapping.
func (ks *Keyspace) memberBytes(m setMember) []byte {
	return ks.setRaw(m.loc+uint64(uvarintLen(uint64(m.n))), int(m.n))
}

func (s *setObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	// Each member is copied as it is encoded in the log, in ops of bounded
	// size (opChunker).
	c := opChunker{b: b, kind: opSAdd, db: db, key: key}
	for _, m := range s.members {
		n := uvarintLen(uint64(m.n)) + int(m.n)
		c.room(n)
		c.body = append(c.body, ks.setRaw(m.loc, n)...)
	}
	c.flush()
}

// find returns the position in members of m (-1 if absent) and the index
// slot that holds it.
func (s *setObj) find(ks *Keyspace, m []byte, tag uint32) (slot, pos int) {
	return s.idx.find(tag, func(p int) bool {
		mm := s.members[p]
		return int(mm.n) == len(m) && string(ks.memberBytes(mm)) == string(m)
	})
}

// has reports whether m is a member.
func (s *setObj) has(ks *Keyspace, m []byte) bool {
	_, p := s.find(ks, m, setMemberTag(m))
	return p >= 0
}

// add inserts m, whose uvarint-prefixed bytes are logged at loc; false if
// it was already a member (the member keeps its older location).
func (s *setObj) add(ks *Keyspace, m []byte, loc uint64) bool {
	tag := setMemberTag(m)
	if _, p := s.find(ks, m, tag); p >= 0 {
		return false
	}
	s.idx.add(tag, len(s.members), len(s.members)+1, len(s.members)+1, s.tagOf)
	s.members = append(s.members, setMember{loc: loc, n: uint32(len(m)), tag: tag})
	s.bytes += int64(len(m)) + setMemberOverhead
	if !s.hashtable && (len(s.members) > setMaxIntsetEntries || !setMemberIsInt(m)) {
		s.hashtable = true
	}
	return true
}

// del removes m by moving the last member into its slot; false if m was
// not a member.
func (s *setObj) del(ks *Keyspace, m []byte) bool {
	slot, p := s.find(ks, m, setMemberTag(m))
	if p < 0 {
		return false
	}
	s.bytes -= int64(s.members[p].n) + setMemberOverhead
	s.idx.remove(slot, len(s.members)-1, len(s.members)-1, s.tagOf)
	last := len(s.members) - 1
	if p != last {
		moved := s.members[last]
		s.idx.repoint(moved.tag, last, p)
		s.members[p] = moved
	}
	s.members[last] = setMember{}
	s.members = s.members[:last]
	return true
}

// tagOf returns the tag of the member at pos (for the index).
func (s *setObj) tagOf(pos int) uint32 { return s.members[pos].tag }

func (s *setObj) converted() bool { return s.hashtable }
func (s *setObj) convert()        { s.hashtable = true }

// encoding is what Redis 7.0's OBJECT ENCODING says for this set.
func (s *setObj) encoding() string {
	if s.hashtable {
		return "hashtable"
	}
	return "intset"
}

// setMemberIsInt reports whether m is an integer as Redis's string2ll
// reads it (the test for intset membership): an optional '-', digits
// without a leading zero ("0" alone excepted), within int64.
func setMemberIsInt(m []byte) bool {
	_, ok := setMemberInt(m)
	return ok
}

func setMemberInt(m []byte) (int64, bool) {
	n := len(m)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && m[0] == '0' {
		return 0, true
	}
	i := 0
	if m[0] == '-' {
		i = 1
	}
	if i == n || m[i] < '1' || m[i] > '9' {
		return 0, false
	}
	for j := i + 1; j < n; j++ {
		if m[j] < '0' || m[j] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(m), 10, 64)
	return v, err == nil
}

func registerSetOps(m map[byte]objectApplier) {
	registerOp(m, opSAdd, applySAdd)
	registerOp(m, opSRem, applySRem)
	registerOp(m, opSHashtable, applySHashtable)
}

func applySAdd(ks *Keyspace, o op, e *entry) error {
	if e != nil && (e.obj == nil || e.obj.coll.typeName() != TypeSet) {
		return fmt.Errorf("%w: SADD on a %s", errOpType, ks.typeOf(e))
	}
	if len(o.body) == 0 {
		return nil // nothing to add: an empty set does not exist
	}
	if e == nil {
		e = ks.createObject(o.db, o.key, newSet(), o.loc)
	}
	s := e.obj.coll.(*setObj)
	base := o.loc + uint64(o.bodyOff)
	for i := 0; i < len(o.body); {
		m, j, ok := readBytes(o.body, i)
		if !ok {
			return fmt.Errorf("%w: SADD member", errBadOp)
		}
		s.add(ks, m, base+uint64(i))
		i = j
	}
	ks.objectChanged(o.db, e)
	return nil
}

func applySRem(ks *Keyspace, o op, e *entry) error {
	if e == nil || e.obj == nil || e.obj.coll.typeName() != TypeSet {
		return nil
	}
	s := e.obj.coll.(*setObj)
	for i := 0; i < len(o.body); {
		m, j, ok := readBytes(o.body, i)
		if !ok {
			return fmt.Errorf("%w: SREM member", errBadOp)
		}
		s.del(ks, m)
		i = j
	}
	ks.objectChanged(o.db, e)
	return nil
}

func applySHashtable(ks *Keyspace, o op, e *entry) error {
	if e == nil || e.obj == nil || e.obj.coll.typeName() != TypeSet {
		return nil
	}
	e.obj.coll.(*setObj).hashtable = true
	return nil
}

// SAdd appends an operation adding members to the set at key, creating it
// if needed (the caller checks the type; members already present are
// ignored at apply time, so a caller logs only the new ones). The members
// are copied into the batch: they may alias the mapping. Very many members
// (a *STORE result) are split into several operations (itemOps).
func (b *Batch) SAdd(db int, key []byte, members ...[]byte) {
	b.itemOps(opSAdd, db, key, members, 1)
}

// SRem appends an operation removing members from the set at key (the
// key is deleted when it becomes empty).
func (b *Batch) SRem(db int, key []byte, members ...[]byte) {
	b.itemOps(opSRem, db, key, members, 1)
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// set returns the set at key (nil if missing) or ErrWrongType.
func (ks *Keyspace) set(db int, key []byte) (*setObj, error) {
	e, err := ks.lookupObject(db, key, TypeSet)
	if e == nil {
		return nil, err
	}
	return e.obj.coll.(*setObj), nil
}

// Members returned by the read methods below alias the mapping: they are
// valid until Unlock (handlers copy them into their reply, or into a batch,
// before they commit, as with every value read from the arena).

// SIsMember reports whether member is in the set at key (O(1)).
func (ks *Keyspace) SIsMember(db int, key, member []byte) (bool, error) {
	s, err := ks.set(db, key)
	if s == nil {
		return false, err
	}
	return s.has(ks, member), nil
}

// SFilter returns the distinct members of ms that are in the set at key
// (present true) or are not (present false), in argument order: what SREM
// removes and what SADD adds. A missing key is an empty set.
func (ks *Keyspace) SFilter(db int, key []byte, ms [][]byte, present bool) ([][]byte, error) {
	s, err := ks.set(db, key)
	if err != nil {
		return nil, err
	}
	var seen map[string]struct{}
	if len(ms) > 8 {
		seen = make(map[string]struct{}, len(ms))
	}
	var out [][]byte
	for _, m := range ms {
		if (s != nil && s.has(ks, m)) != present {
			continue
		}
		if seen != nil {
			if _, dup := seen[string(m)]; dup {
				continue
			}
			seen[string(m)] = struct{}{}
		} else if slices.ContainsFunc(out, func(o []byte) bool { return string(o) == string(m) }) {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// SCard returns the number of members (0 for a missing key).
func (ks *Keyspace) SCard(db int, key []byte) (int, error) {
	s, err := ks.set(db, key)
	if s == nil {
		return 0, err
	}
	return len(s.members), nil
}

// SMemberBytes returns the members of the set at key (nil for a missing
// key), aliasing the mapping. A set Redis would keep as an intset comes
// out in ascending numeric order, as Redis replies it; any other set in no
// particular order.
func (ks *Keyspace) SMemberBytes(db int, key []byte) ([][]byte, error) {
	s, err := ks.set(db, key)
	if s == nil {
		return nil, err
	}
	out := make([][]byte, len(s.members))
	for i, m := range s.members {
		out[i] = ks.memberBytes(m)
	}
	if !s.hashtable {
		sortIntsetMembers(out)
	}
	return out, nil
}

// SMembers is SMemberBytes with the members copied into strings (valid
// after Unlock; for other types' commands that read a set, such as
// ZUNIONSTORE).
func (ks *Keyspace) SMembers(db int, key []byte) ([]string, error) {
	mb, err := ks.SMemberBytes(db, key)
	if mb == nil {
		return nil, err
	}
	out := make([]string, len(mb))
	for i, m := range mb {
		out[i] = string(m)
	}
	return out, nil
}

// sortIntsetMembers sorts members that are all integers numerically.
func sortIntsetMembers(ms [][]byte) {
	type num struct {
		v int64
		m []byte
	}
	nums := make([]num, len(ms))
	for i, m := range ms {
		v, _ := setMemberInt(m)
		nums[i] = num{v, m}
	}
	slices.SortFunc(nums, func(a, b num) int { return cmp.Compare(a.v, b.v) })
	for i := range nums {
		ms[i] = nums[i].m
	}
}

// SortLikeIntset puts a result of set algebra in the order Redis replies
// it: a result that Redis would build as an intset (integers only, at most
// set-max-intset-entries) ascending; any other left as it is.
func SortLikeIntset(ms [][]byte) {
	if len(ms) > setMaxIntsetEntries {
		return
	}
	for _, m := range ms {
		if !setMemberIsInt(m) {
			return
		}
	}
	sortIntsetMembers(ms)
}

// SetEncoding returns what OBJECT ENCODING replies for the set at key in
// Redis 7.0: "intset" for a set of integers that never held more than 512
// members or a non-integer, else "hashtable". ok is false for a missing
// key.
func (ks *Keyspace) SetEncoding(db int, key []byte) (enc string, ok bool, err error) {
	s, err := ks.set(db, key)
	if s == nil {
		return "", false, err
	}
	return s.encoding(), true, nil
}

// SScan visits about count members from cursor and returns the next
// cursor (0 when done), with SCAN's guarantee (see Keyspace.Scan): the
// cursor counts the positions of the dense table still to visit, walking
// down. An intset-encoded set is returned whole, in order, with cursor 0,
// as Redis does.
func (ks *Keyspace) SScan(db int, key []byte, cursor uint64, count int, fn func(member []byte)) (uint64, error) {
	s, err := ks.set(db, key)
	if s == nil {
		return 0, err
	}
	if !s.hashtable {
		ms, _ := ks.SMemberBytes(db, key)
		for _, m := range ms {
			fn(m)
		}
		return 0, nil
	}
	pos := uint64(len(s.members))
	if cursor != 0 && cursor < pos {
		pos = cursor
	}
	for count = max(count, 1); pos > 0 && count > 0; count-- {
		pos--
		fn(ks.memberBytes(s.members[pos]))
	}
	return pos, nil
}

// SRandomMember returns a random member; ok is false for a missing key.
func (ks *Keyspace) SRandomMember(db int, key []byte) (member []byte, ok bool, err error) {
	s, err := ks.set(db, key)
	if s == nil {
		return nil, false, err
	}
	return ks.memberBytes(s.members[rand.IntN(len(s.members))]), true, nil
}

// SRandomMembers calls fn with n members chosen at random with repeats
// (SRANDMEMBER with a negative count); nothing for a missing key.
func (ks *Keyspace) SRandomMembers(db int, key []byte, n int, fn func(member []byte)) error {
	s, err := ks.set(db, key)
	if s == nil {
		return err
	}
	for ; n > 0; n-- {
		fn(ks.memberBytes(s.members[rand.IntN(len(s.members))]))
	}
	return nil
}

// SSample returns min(n, SCARD) distinct members chosen at random
// (SRANDMEMBER and SPOP with a positive count); all of them in SMembers's
// order when n >= SCARD, as Redis replies then. It takes O(n): a
// Fisher-Yates shuffle of the first n positions whose swaps are kept in a
// map instead of the table. A missing key gives nil.
func (ks *Keyspace) SSample(db int, key []byte, n int) ([][]byte, error) {
	s, err := ks.set(db, key)
	if s == nil {
		return nil, err
	}
	size := len(s.members)
	if n >= size {
		return ks.SMemberBytes(db, key)
	}
	swapped := make(map[int]int, n)
	at := func(i int) int {
		if j, ok := swapped[i]; ok {
			return j
		}
		return i
	}
	out := make([][]byte, n)
	for i := 0; i < n; i++ {
		j := i + rand.IntN(size-i)
		pi, pj := at(i), at(j)
		swapped[j] = pi
		out[i] = ks.memberBytes(s.members[pj])
	}
	return out, nil
}

// setsOf looks up every key as a set before anything else: one key of
// another type is ErrWrongType whatever the other keys hold, as in Redis.
// A missing key is a nil entry.
func (ks *Keyspace) setsOf(db int, keys [][]byte) ([]*setObj, error) {
	out := make([]*setObj, len(keys))
	var wrong error
	for i, k := range keys {
		s, err := ks.set(db, k)
		if err != nil && wrong == nil {
			wrong = err
		}
		out[i] = s
	}
	if wrong != nil {
		return nil, wrong
	}
	return out, nil
}

// SInter returns the intersection of the sets at keys, stopping after
// limit members (0 = no limit): O(N*M) worst case with N the smallest set
// and M the number of keys, as in Redis. A missing key is an empty set.
func (ks *Keyspace) SInter(db int, keys [][]byte, limit int) ([][]byte, error) {
	sets, err := ks.setsOf(db, keys)
	if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if s == nil {
			return nil, nil
		}
	}
	slices.SortStableFunc(sets, func(a, b *setObj) int { return cmp.Compare(len(a.members), len(b.members)) })
	var out [][]byte
	for _, mm := range sets[0].members {
		m := ks.memberBytes(mm)
		in := true
		for _, other := range sets[1:] {
			if other != sets[0] && !other.has(ks, m) {
				in = false
				break
			}
		}
		if in {
			out = append(out, m)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	return out, nil
}

// SUnion returns the union of the sets at keys (O(N), N the total number
// of members).
func (ks *Keyspace) SUnion(db int, keys [][]byte) ([][]byte, error) {
	sets, err := ks.setsOf(db, keys)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	var seen map[string]struct{}
	var first *setObj
	for _, s := range sets {
		switch {
		case s == nil || s == first:
		case first == nil:
			// The first set's members are distinct: no check needed.
			first = s
			for _, mm := range s.members {
				out = append(out, ks.memberBytes(mm))
			}
		default:
			if seen == nil {
				seen = make(map[string]struct{}, 2*len(out))
				for _, m := range out {
					seen[string(m)] = struct{}{}
				}
			}
			for _, mm := range s.members {
				m := ks.memberBytes(mm)
				if _, dup := seen[string(m)]; !dup {
					seen[string(m)] = struct{}{}
					out = append(out, m)
				}
			}
		}
	}
	return out, nil
}

// SDiff returns the members of the first set that are in none of the
// others (O(N*K) with N the first set's size and K the number of keys).
func (ks *Keyspace) SDiff(db int, keys [][]byte) ([][]byte, error) {
	sets, err := ks.setsOf(db, keys)
	if err != nil {
		return nil, err
	}
	first := sets[0]
	if first == nil {
		return nil, nil
	}
	for _, other := range sets[1:] {
		if other == first {
			return nil, nil
		}
	}
	var out [][]byte
	for _, mm := range first.members {
		m := ks.memberBytes(mm)
		keep := true
		for _, other := range sets[1:] {
			if other != nil && other.has(ks, m) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, m)
		}
	}
	return out, nil
}

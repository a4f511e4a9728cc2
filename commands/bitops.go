package commands

import (
	"encoding/binary"
	"slices"
)

// BITOP, BITFIELD and BITFIELD_RO (redis.io group "bitmap").
//
// BITOP writes its destination as one Set (or one Del when the result is
// empty), so the old value and its TTL go and recovery sees the whole new
// value or the old one. BITFIELD applies its sub-operations left to right to
// a view of the string (bitString) and then writes the key's changes as one
// batch: the whole new value for a string under patchThreshold, else only
// the changed bytes (keyspace Batch.SetRange), so an INCRBY on a big bitmap
// logs a few bytes. Parse errors are found before anything is read, and a
// command that fails writes nothing.

func bitopCommands() []Command {
	return []Command{
		{Name: "bitop", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 2, LastKey: -1, Step: 1, Group: "bitmap", Since: "2.6.0",
			Summary: "Perform bitwise operations between strings", Run: cmdBitOp,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 2), keyRange(KeyRO|KeyAccess, 3, -1, 1)}},
		{Name: "bitfield", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "3.2.0",
			Summary: "Perform arbitrary bitfield integer operations on strings", Run: cmdBitField,
			KeySpecs: []KeySpec{{Notes: "This command allows both access and modification of the key",
				Flags: KeyRW | KeyAccess | KeyUpdate | KeyVariableFlags, Index: 1, KeyStep: 1}},
			GetKeys: bitfieldGetKeys},
		{Name: "bitfield_ro", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "6.0.0",
			Summary: "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", Run: cmdBitFieldRO,
			KeySpecs: key1(KeyRO | KeyAccess)},
	}
}

// ---- BITOP ----

// bitopKind is BITOP's operation.
type bitopKind uint8

const (
	bitopAnd bitopKind = iota
	bitopOr
	bitopXor
	bitopNot
)

var errBitopNot = replyError("ERR BITOP NOT must be called with a single source key.")

// parseBitop parses BITOP's operation name (any case) and checks that NOT
// has exactly one source; nsrc is the number of source keys.
func parseBitop(name []byte, nsrc int) (bitopKind, error) {
	var op bitopKind
	switch {
	case argIs(name, "and"):
		op = bitopAnd
	case argIs(name, "or"):
		op = bitopOr
	case argIs(name, "xor"):
		op = bitopXor
	case argIs(name, "not"):
		op = bitopNot
	default:
		return 0, errSyntax
	}
	if op == bitopNot && nsrc != 1 {
		return 0, errBitopNot
	}
	return op, nil
}

// bitop returns op applied byte by byte to srcs (semantics: redis.io
// BITOP). The result is as long as the longest source; a shorter source
// (a missing key is an empty one) reads as zero bytes past its end. NOT
// takes srcs[0] alone. An empty result is nil.
func bitop(op bitopKind, srcs [][]byte) []byte {
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	if n == 0 {
		return nil
	}
	dst := make([]byte, n)
	if op == bitopNot {
		src := srcs[0]
		i := 0
		for ; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], ^binary.LittleEndian.Uint64(src[i:]))
		}
		for ; i < n; i++ {
			dst[i] = ^src[i]
		}
		return dst
	}
	// AND starts from all ones and is cut to zero past the end of each
	// shorter source; OR and XOR start from zero and only the bytes a
	// source has can change the result.
	if op == bitopAnd {
		for i := range dst {
			dst[i] = 0xff
		}
	}
	for _, src := range srcs {
		i := 0
		for ; i+8 <= len(src); i += 8 {
			a, b := binary.LittleEndian.Uint64(dst[i:]), binary.LittleEndian.Uint64(src[i:])
			switch op {
			case bitopAnd:
				a &= b
			case bitopOr:
				a |= b
			case bitopXor:
				a ^= b
			}
			binary.LittleEndian.PutUint64(dst[i:], a)
		}
		for ; i < len(src); i++ {
			switch op {
			case bitopAnd:
				dst[i] &= src[i]
			case bitopOr:
				dst[i] |= src[i]
			case bitopXor:
				dst[i] ^= src[i]
			}
		}
		if op == bitopAnd {
			clear(dst[len(src):])
		}
	}
	return dst
}

// BITOP AND|OR|XOR|NOT destkey srckey [srckey ...]. The reply is the
// length of the result; an empty result deletes destkey.
func cmdBitOp(c *Client, args [][]byte) {
	dest, keys := args[2], args[3:]
	op, err := parseBitop(args[1], len(keys))
	if err != nil {
		c.WriteErr(err)
		return
	}
	srcs := make([][]byte, len(keys))
	// Redis reads the sources with lookupKeyRead: they count in
	// keyspace_hits/misses although BITOP is a write command.
	c.KS.CountLookups(true)
	for i, key := range keys {
		val, _, err := c.KS.Get(c.DB, key)
		if err != nil {
			c.KS.CountLookups(false)
			c.WriteErr(err)
			return
		}
		srcs[i] = val // nil for a missing key
	}
	c.KS.CountLookups(false)
	// The sources may point into the arena; bitop copies before the commit.
	res := bitop(op, srcs)
	b := c.KS.NewBatch()
	existed := c.KS.Exists(c.DB, dest)
	if len(res) > 0 {
		b.Set(c.DB, dest, res, 0)
		if len(res) <= encEmbstrMaxLen {
			markRaw(b, c.DB, dest) // Redis's createObject: raw
		}
	} else if existed {
		b.Del(c.DB, dest)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(res)))
		notifyStore(c, notifyString, "set", dest, len(res) > 0, existed)
	}
}

// ---- BITFIELD ----

// bitfieldOpKind is a BITFIELD sub-operation that names a field.
type bitfieldOpKind uint8

const (
	bitfieldGet bitfieldOpKind = iota
	bitfieldSet
	bitfieldIncrBy
)

// overflowMode is BITFIELD's OVERFLOW setting for the operations after it.
type overflowMode uint8

const (
	overflowWrap overflowMode = iota // modular arithmetic (the default)
	overflowSat                      // clamp to the type's minimum or maximum
	overflowFail                     // do nothing and reply nil
)

// bitfieldOp is one parsed GET, SET or INCRBY of BITFIELD.
type bitfieldOp struct {
	kind     bitfieldOpKind
	signed   bool
	bits     uint  // 1..64 signed, 1..63 unsigned
	offset   int64 // in bits, '#' offsets already multiplied out
	arg      int64 // SET's value or INCRBY's increment
	overflow overflowMode
}

var (
	errBitfieldType = replyError("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
	errOverflowType = replyError("ERR Invalid OVERFLOW type specified")
	errBitfieldRO   = replyError("ERR BITFIELD_RO only supports the GET subcommand")
)

// parseBitfieldType parses a field type: 'i' or 'u' (lower case) and a
// width, i1..i64 or u1..u63. As in Redis the width is read as a C string,
// so it ends at a NUL byte.
func parseBitfieldType(b []byte) (signed bool, bits uint, err error) {
	if len(b) == 0 || (b[0] != 'i' && b[0] != 'u') {
		return false, 0, errBitfieldType
	}
	signed = b[0] == 'i'
	w := b[1:]
	if i := slices.Index(w, 0); i >= 0 {
		w = w[:i]
	}
	n, ok := parseInt64(w)
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, errBitfieldType
	}
	return signed, uint(n), nil
}

// parseBitfieldOffset parses a field offset in bits: an integer, or '#'
// and an integer counted in fields of the given width. The result must be
// at least 0 and address a byte below limit (proto-max-bulk-len,
// Client.StringLimit). The multiplication wraps on overflow as Redis's
// does (it is unchecked there), so the same offsets are accepted.
func parseBitfieldOffset(b []byte, bits uint, limit int64) (int64, error) {
	hash := len(b) > 0 && b[0] == '#'
	if hash {
		b = b[1:]
	}
	off, ok := parseInt64(b)
	if !ok {
		return 0, errBitOffset
	}
	if hash {
		off *= int64(bits)
	}
	if off < 0 || off>>3 >= limit {
		return 0, errBitOffset
	}
	return off, nil
}

// parseBitfield parses BITFIELD's arguments after the key into its field
// operations, in order, each carrying the OVERFLOW mode in force for it.
// writes says whether any is a SET or INCRBY. Errors come in Redis's
// order: the first bad sub-command (unknown or short of arguments: syntax
// error; bad OVERFLOW mode), type, offset or value stops the parse.
func parseBitfield(args [][]byte, limit int64) (ops []bitfieldOp, writes bool, err error) {
	mode := overflowWrap
	for i := 0; i < len(args); {
		more := len(args) - i - 1 // arguments after the sub-command
		var op bitfieldOp
		switch a := args[i]; {
		case argIs(a, "get") && more >= 2:
			op.kind = bitfieldGet
		case argIs(a, "set") && more >= 3:
			op.kind = bitfieldSet
		case argIs(a, "incrby") && more >= 3:
			op.kind = bitfieldIncrBy
		case argIs(a, "overflow") && more >= 1:
			switch m := args[i+1]; {
			case argIs(m, "wrap"):
				mode = overflowWrap
			case argIs(m, "sat"):
				mode = overflowSat
			case argIs(m, "fail"):
				mode = overflowFail
			default:
				return nil, false, errOverflowType
			}
			i += 2
			continue
		default:
			return nil, false, errSyntax
		}
		if op.signed, op.bits, err = parseBitfieldType(args[i+1]); err != nil {
			return nil, false, err
		}
		if op.offset, err = parseBitfieldOffset(args[i+2], op.bits, limit); err != nil {
			return nil, false, err
		}
		i += 3
		if op.kind != bitfieldGet {
			if op.arg, err = argInt64(args[i]); err != nil {
				return nil, false, err
			}
			i++
			writes = true
		}
		op.overflow = mode
		ops = append(ops, op)
	}
	return ops, writes, nil
}

// bitfieldGetKeys is Redis 7.0's bitfieldGetKeys: the key is "RO access"
// when every sub-command is a GET or OVERFLOW (skipping their arguments),
// else "RW access update" (also when the arguments do not parse).
func bitfieldGetKeys(args [][]byte) []KeyRef {
	flags := KeyRO | KeyAccess
	for i := 2; i < len(args); i++ {
		more := len(args) - i - 1
		a := args[i]
		if argIs(a, "get") && more >= 2 {
			i += 2
		} else if argIs(a, "overflow") && more >= 1 {
			i++
		} else {
			flags = KeyRW | KeyAccess | KeyUpdate
			break
		}
	}
	return []KeyRef{{Pos: 1, Flags: flags}}
}

// fieldLimits returns the smallest and largest value of a signed field of
// the given width.
func fieldLimits(bits uint) (lo, hi int64) {
	hi = int64(^uint64(0) >> (65 - bits))
	return -hi - 1, hi
}

// signedFieldAdd returns value+incr as stored in a signed field of the
// given width under mode (semantics: redis.io BITFIELD). The sum is exact:
// it overflows when it is above the field's maximum or below its minimum,
// then WRAP keeps its low bits (sign-extended), SAT clamps, and FAIL
// returns ok false. SET passes the new value with incr 0, so a value out
// of the field's range is handled the same way.
func signedFieldAdd(value, incr int64, bits uint, mode overflowMode) (res int64, ok bool) {
	lo, hi := fieldLimits(bits)
	// hi-value and lo-value are only computed where they cannot overflow:
	// below 64 bits value+incr fits when value is in range; at 64 bits
	// only same-signed operands can overflow.
	over := value > hi || (incr > 0 && (bits < 64 || value >= 0) && value >= lo && incr > hi-value)
	under := value < lo || (incr < 0 && (bits < 64 || value < 0) && value <= hi && incr < lo-value)
	if !over && !under {
		return value + incr, true
	}
	switch mode {
	case overflowSat:
		if over {
			return hi, true
		}
		return lo, true
	case overflowFail:
		return 0, false
	}
	sum := uint64(value) + uint64(incr) // modular, as two's complement
	shift := 64 - bits
	return int64(sum<<shift) >> shift, true
}

// unsignedFieldAdd is signedFieldAdd for an unsigned field (at most 63
// bits). value is the stored value, or SET's argument read as unsigned (a
// negative one is above every field's maximum, so it overflows).
func unsignedFieldAdd(value uint64, incr int64, bits uint, mode overflowMode) (res uint64, ok bool) {
	hi := uint64(1)<<bits - 1
	over := value > hi || (incr > 0 && uint64(incr) > hi-value)
	under := !over && incr < 0 && uint64(-incr) > value // -MinInt64 as uint64 is 2^63, as wanted
	if !over && !under {
		return value + uint64(incr), true
	}
	switch mode {
	case overflowSat:
		if over {
			return hi, true
		}
		return 0, true
	case overflowFail:
		return 0, false
	}
	return (value + uint64(incr)) & hi, true
}

// bitString is a string as BITFIELD's sub-operations see it: reads see the
// writes before them. A string under patchThreshold (or a missing key) is
// copied and changed in place; a larger one keeps the stored bytes
// read-only and collects the changed bytes, so only they are logged.
type bitString struct {
	base  []byte         // the stored value, never written
	own   []byte         // small strings: the whole new value
	dirty map[int64]byte // large strings: changed bytes by index
	size  int64          // the length after growth
}

// newBitString returns the view of stored value base (nil for a missing
// key) grown with zeros to size bytes if it is shorter.
func newBitString(base []byte, found bool, size int64) *bitString {
	size = max(size, int64(len(base)))
	s := &bitString{base: base, size: size}
	if found && len(base) >= patchThreshold {
		s.dirty = map[int64]byte{}
	} else {
		s.own = make([]byte, size)
		copy(s.own, base)
	}
	return s
}

// byteAt returns byte i of the string; bytes past its end read as zero
// (a GET may name a field beyond the highest one written).
func (s *bitString) byteAt(i int64) byte {
	switch {
	case i >= s.size:
		return 0
	case s.own != nil:
		return s.own[i]
	}
	if v, ok := s.dirty[i]; ok {
		return v
	}
	if i < int64(len(s.base)) {
		return s.base[i]
	}
	return 0
}

func (s *bitString) setByte(i int64, v byte) {
	if s.own != nil {
		s.own[i] = v
	} else {
		s.dirty[i] = v
	}
}

// field reads the bits-wide field at bit offset off (big-endian: bit 0 is
// the most significant bit of byte 0) as an unsigned number; bits past
// the end read as zero.
func (s *bitString) field(off int64, bits uint) uint64 {
	var v uint64
	for p := off; p < off+int64(bits); p++ {
		v = v<<1 | uint64(s.byteAt(p>>3)>>(7-p&7)&1)
	}
	return v
}

// setField writes the low bits of v as the field at bit offset off, which
// lies within s.size.
func (s *bitString) setField(off int64, bits uint, v uint64) {
	for p := off + int64(bits) - 1; p >= off; p-- {
		idx, mask := p>>3, byte(0x80)>>(p&7)
		b := s.byteAt(idx)
		if v&1 != 0 {
			b |= mask
		} else {
			b &^= mask
		}
		s.setByte(idx, b)
		v >>= 1
	}
}

// signedField reads a field sign-extended from its width.
func (s *bitString) signedField(off int64, bits uint) int64 {
	shift := 64 - bits
	return int64(s.field(off, bits)<<shift) >> shift
}

// patches returns the byte runs of a large string that differ from the
// stored value (including growth past its end), as offset and bytes, in
// offset order. Runs separated by a few unchanged bytes are merged.
func (s *bitString) patches() (offs []int64, runs [][]byte) {
	idx := make([]int64, 0, len(s.dirty)+1)
	for i, v := range s.dirty {
		if i >= int64(len(s.base)) || s.base[i] != v {
			idx = append(idx, i)
		}
	}
	if s.size > int64(len(s.base)) {
		if _, ok := s.dirty[s.size-1]; !ok {
			idx = append(idx, s.size-1) // the growth must be logged even if nothing was set there
		}
	}
	slices.Sort(idx)
	const gap = 8
	for k := 0; k < len(idx); {
		start, end := idx[k], idx[k]
		for k++; k < len(idx) && idx[k]-end <= gap; k++ {
			end = idx[k]
		}
		run := make([]byte, end-start+1)
		for i := range run {
			run[i] = s.byteAt(start + int64(i))
		}
		offs, runs = append(offs, start), append(runs, run)
	}
	return offs, runs
}

// bitfieldResult is one reply element of BITFIELD: a number, or nil when
// OVERFLOW FAIL stopped the operation.
type bitfieldResult struct {
	v   int64
	nil bool
}

// runBitfield applies ops to s left to right and returns their replies:
// GET the field, SET the old value, INCRBY the new one.
func runBitfield(s *bitString, ops []bitfieldOp) []bitfieldResult {
	out := make([]bitfieldResult, len(ops))
	for i, op := range ops {
		var old int64
		if op.signed {
			old = s.signedField(op.offset, op.bits)
		} else {
			old = int64(s.field(op.offset, op.bits))
		}
		if op.kind == bitfieldGet {
			out[i].v = old
			continue
		}
		var nv int64
		var ok bool
		switch {
		case op.signed && op.kind == bitfieldSet:
			nv, ok = signedFieldAdd(op.arg, 0, op.bits, op.overflow)
		case op.signed:
			nv, ok = signedFieldAdd(old, op.arg, op.bits, op.overflow)
		case op.kind == bitfieldSet:
			var u uint64
			u, ok = unsignedFieldAdd(uint64(op.arg), 0, op.bits, op.overflow)
			nv = int64(u)
		default:
			var u uint64
			u, ok = unsignedFieldAdd(uint64(old), op.arg, op.bits, op.overflow)
			nv = int64(u)
		}
		if !ok {
			out[i].nil = true
			continue
		}
		s.setField(op.offset, op.bits, uint64(nv))
		if op.kind == bitfieldSet {
			out[i].v = old
		} else {
			out[i].v = nv
		}
	}
	return out
}

func writeBitfieldResults(c *Client, res []bitfieldResult) {
	c.WriteArray(len(res))
	for _, r := range res {
		if r.nil {
			c.WriteNull()
		} else {
			c.WriteInt(r.v)
		}
	}
}

// BITFIELD key [GET type offset] [SET type offset value]
// [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] ...
func cmdBitField(c *Client, args [][]byte) { bitfield(c, args, false) }

// BITFIELD_RO key [GET type offset] ...: SET and INCRBY are refused.
func cmdBitFieldRO(c *Client, args [][]byte) { bitfield(c, args, true) }

func bitfield(c *Client, args [][]byte, readonly bool) {
	key := args[1]
	ops, writes, err := parseBitfield(args[2:], c.StringLimit())
	if err == nil && writes && readonly {
		err = errBitfieldRO
	}
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !writes && !readonly {
		// A BITFIELD of GETs only reads the key as Redis's lookupKeyRead
		// does, which counts in keyspace_hits/misses (BITFIELD_RO is a
		// read-only command and counted by the dispatcher).
		c.KS.CountLookups(true)
	}
	old, found, err := c.KS.Get(c.DB, key)
	if !writes && !readonly {
		c.KS.CountLookups(false)
	}
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !writes {
		writeBitfieldResults(c, runBitfield(newReadOnlyBitString(old), ops))
		return
	}
	// As in Redis, the string first grows to hold the highest field any
	// SET or INCRBY names, whether or not OVERFLOW FAIL then stops it.
	var size int64
	for _, op := range ops {
		if op.kind != bitfieldGet {
			size = max(size, (op.offset+int64(op.bits)-1)>>3+1)
		}
	}
	s := newBitString(old, found, size)
	res := runBitfield(s, ops)
	mark := len(c.Out)
	writeBitfieldResults(c, res)
	b := c.KS.NewBatch()
	switch {
	case s.own == nil:
		offs, runs := s.patches()
		for i := range offs {
			b.SetRange(c.DB, key, offs[i], runs[i])
		}
	case (!found || !slices.Equal(s.own, old)) && len(s.own) <= encEmbstrMaxLen:
		// The whole value as one patch from 0 (it only grows): Redis
		// unshares the string first, so it is raw (see rawString).
		b.SetRange(c.DB, key, 0, s.own)
	case !found || !slices.Equal(s.own, old):
		var expireAt int64
		if found {
			expireAt = expireAtOf(c, key)
		}
		b.Set(c.DB, key, s.own, expireAt) // raw by its length
	}
	if b.Len() == 0 && needsRawMark(c, key, len(old)) {
		markRaw(b, c.DB, key) // nothing changed, but the string is raw
	}
	if commitReply(c, b, mark) && bitfieldWrote(ops, res) {
		c.Notify(notifyString, "setbit", key)
	}
}

// newReadOnlyBitString is a view for GETs only: nothing is copied.
func newReadOnlyBitString(val []byte) *bitString {
	return &bitString{base: val, size: int64(len(val)), dirty: map[int64]byte{}}
}

package commands

import (
	"fmt"
	"math"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
)

// TairRoaring commands (TR.*; semantics: spec/tairroaring.md, Tair V2.2).
//
// A bitmap is a set of uint32 offsets (keyspace/roaring.go). Choices where
// the spec leaves them open (its §9):
//
//   - An emptied bitmap is deleted (Q2, Redis-collection style): TR.SETBIT k
//     x 0 on a missing key creates nothing, TR.CLEARBITS of the last bit and
//     a TR.BITOP with an empty result leave no key; commands then answer as
//     for a missing key (TR.MIN -1, TR.STAT nil, ...).
//   - TYPE replies "tairroaring" (Q12); OBJECT ENCODING "roaring".
//   - TR.SETRANGE, TR.FLIPRANGE reply the cardinality after the command (Q4).
//   - TR.BITOP overwrites a destination of any type and drops its TTL;
//     missing sources are empty bitmaps; NOT complements over [0, max of
//     the source] (empty stays empty); NOT with other than one key, DIFF
//     with other than two: "invalid arguments" (Q5). TR.SETINTARRAY and
//     TR.SETBITARRAY replace a bitmap but answer WRONGTYPE for a key of
//     another type, as every other TR command does.
//   - TR.BITPOS (Q6): a count beyond the matches answers -1, count 0 is
//     "invalid arguments", a count that is not an integer "ERR value is
//     not an integer or out of range"; zeros are searched in
//     [0, 4294967295] (a negative count counts down from 4294967295); a
//     missing key answers -1 for either value.
//   - TR.JACCARD of two empty or missing bitmaps answers "0" (Q7);
//     TR.CONTAINS with an empty or missing first key answers 1.
//   - A value argument of TR.SETBIT/TR.BITPOS other than 0 or 1, and a bit
//     array that is empty or holds a byte other than '0'/'1', is "invalid
//     arguments" and writes nothing (Q9).
//   - Reply caps (Q10): TR.RANGE and TR.SCAN's COUNT refuse more than
//     trMaxReplyElements offsets, TR.RANGEBITARRAY a range longer than
//     trMaxBitArrayReply, with an "ERR reply too large" error, rather than
//     build a huge reply in memory. TR.GETBITS needs no cap: its reply is
//     smaller than its request, which proto-max-bulk-len and the request
//     limits already bound.
//   - TR.BITOPCARD stores nothing and is flagged readonly (the spec's
//     advice). Keywords (AND, COUNT, JSON) are case-insensitive (Q11).
//   - TR.DIFF (undocumented, client SDKs call it) is TR.BITOP DIFF with an
//     OK reply. TR.LOAD and TR.LOADSTRING are not implemented.
//
// Writes log results (the bits or ranges that change, or a whole value as
// bounded merge pieces) and are durable before the reply, like every write.

// Reply caps (spec Q10).
const (
	// trMaxReplyElements bounds the offsets one TR.RANGE or TR.SCAN
	// replies (4,194,304: ~55 MB of RESP integers).
	trMaxReplyElements = 1 << 22
	// trMaxBitArrayReply bounds TR.RANGEBITARRAY's range, in bits (64 MiB
	// of '0'/'1' characters).
	trMaxBitArrayReply = 1 << 26
)

// Error replies of the TR commands (spec §2.2).
var (
	errTRBadUint32 = replyError("ERR bad arguments, must be unsigned 32-bit integer")
	errTRInvalid   = replyError("ERR invalid arguments, maybe out of range or illegal")
)

func roaringCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast = FlagDenyOOM, FlagFast
	const g, since = "module", "1.0.0"
	return []Command{
		{Name: "tr.setbit", Arity: 4, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Set or clear one bit of a TairRoaring bitmap; replies its previous value", Run: cmdTRSetBit,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "tr.setbits", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Set bits of a TairRoaring bitmap; replies its cardinality after", Run: cmdTRSetBits,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "tr.clearbits", Arity: -3, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Clear bits of a TairRoaring bitmap; replies how many were set", Run: cmdTRClearBits,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "tr.setrange", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Set every bit of a closed range; replies the cardinality after", Run: cmdTRSetRange,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "tr.appendbitarray", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Overwrite the bits after an offset with a '0'/'1' string; replies the cardinality after", Run: cmdTRAppendBitArray,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "tr.fliprange", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Invert every bit of a closed range; replies the cardinality after", Run: cmdTRFlipRange,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "tr.appendintarray", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Set bits of a TairRoaring bitmap; replies OK", Run: cmdTRAppendIntArray,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "tr.setintarray", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Replace a TairRoaring bitmap with the given offsets", Run: cmdTRSetIntArray,
			KeySpecs: key1(KeyOW | KeyUpdate)},
		{Name: "tr.setbitarray", Arity: 3, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Replace a TairRoaring bitmap with the one a '0'/'1' string describes", Run: cmdTRSetBitArray,
			KeySpecs: key1(KeyOW | KeyUpdate)},
		// The operation sits between the destination and the sources: as
		// Redis derives it from such key specs, the keys are "movable" and
		// the legacy range covers the destination only.
		{Name: "tr.bitop", Arity: -4, Flags: w | dm | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Store AND, OR, XOR, NOT or DIFF of TairRoaring bitmaps; replies the result's cardinality", Run: cmdTRBitOp,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyRange(KeyRO|KeyAccess, 3, -1, 1)}, GetKeys: trBitOpGetKeys},
		{Name: "tr.bitopcard", Arity: -3, Flags: r, FirstKey: 2, LastKey: -1, Step: 1, Group: g, Since: since,
			Summary: "Cardinality of AND, OR, XOR, NOT or DIFF of TairRoaring bitmaps", Run: cmdTRBitOpCard,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 2, -1, 1)}},
		{Name: "tr.diff", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 3, Step: 1, Group: g, Since: since,
			Summary: "Store key1 minus key2 (TR.BITOP DIFF with an OK reply)", Run: cmdTRDiff,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyRange(KeyRO|KeyAccess, 2, 1, 1)}},
		{Name: "tr.optimize", Arity: 2, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Run-length encode a TairRoaring bitmap's containers where smaller", Run: cmdTROptimize,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "tr.getbit", Arity: 3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Get one bit of a TairRoaring bitmap", Run: cmdTRGetBit,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.getbits", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Get bits of a TairRoaring bitmap, in request order", Run: cmdTRGetBits,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.bitcount", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Count the set bits of a TairRoaring bitmap, or of a closed range", Run: cmdTRBitCount,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.bitpos", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Find the count-th bit set to 0 or 1", Run: cmdTRBitPos,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.scan", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Iterate the set bits from an offset", Run: cmdTRScan,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.range", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "The set offsets within a closed range", Run: cmdTRRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.rangebitarray", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "The bits of a closed range as a '0'/'1' string", Run: cmdTRRangeBitArray,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.min", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "The smallest set offset, or -1", Run: cmdTRMin,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.max", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "The largest set offset, or -1", Run: cmdTRMax,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.stat", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "Statistics of a TairRoaring bitmap, as text or JSON", Run: cmdTRStat,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "tr.jaccard", Arity: 3, Flags: r, FirstKey: 1, LastKey: 2, Step: 1, Group: g, Since: since,
			Summary: "The Jaccard index of two TairRoaring bitmaps", Run: cmdTRJaccard,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 1, 1, 1)}},
		{Name: "tr.contains", Arity: 3, Flags: r, FirstKey: 1, LastKey: 2, Step: 1, Group: g, Since: since,
			Summary: "Whether the first TairRoaring bitmap is a subset of the second", Run: cmdTRContains,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 1, 1, 1)}},
		{Name: "tr.rank", Arity: 3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: since,
			Summary: "The number of set bits at or below an offset", Run: cmdTRRank,
			KeySpecs: key1(KeyRO | KeyAccess)},
	}
}

// trBitOpGetKeys lists TR.BITOP's keys: the destination, then every
// argument after the operation.
func trBitOpGetKeys(args [][]byte) []KeyRef {
	if len(args) < 4 {
		return nil
	}
	refs := []KeyRef{{Pos: 1, Flags: KeyOW | KeyUpdate}}
	for i := 3; i < len(args); i++ {
		refs = append(refs, KeyRef{Pos: i, Flags: KeyRO | KeyAccess})
	}
	return refs
}

// ---- argument parsing ----

// trUint32 parses an offset or range bound: an integer in 0..4294967295.
func trUint32(b []byte) (uint32, error) {
	v, ok := parseInt64(b)
	if !ok || v < 0 || v > math.MaxUint32 {
		return 0, errTRBadUint32
	}
	return uint32(v), nil
}

func trUint32s(args [][]byte) ([]uint32, error) {
	out := make([]uint32, len(args))
	for i, a := range args {
		v, err := trUint32(a)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// trRange parses a closed range start end with start <= end.
func trRange(a, b []byte) (start, end uint32, err error) {
	if start, err = trUint32(a); err != nil {
		return 0, 0, err
	}
	if end, err = trUint32(b); err != nil {
		return 0, 0, err
	}
	if start > end {
		return 0, 0, errTRInvalid
	}
	return start, end, nil
}

// trBit parses a bit value: 0 or 1.
func trBit(b []byte) (bool, error) {
	switch string(b) {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, errTRInvalid
}

// trBitArray builds the bitmap of a '0'/'1' string whose character i is
// bit base+i (runs of '1' become ranges). The string must not be empty and
// must fit below 2^32 from base.
func trBitArray(s []byte, base uint64) (*roaring.Bitmap, error) {
	ones, runs, err := trBitArrayOnes(s, base)
	if err != nil {
		return nil, err
	}
	return trOnesBitmap(ones, runs), nil
}

// trBitArrayOnes reads a '0'/'1' string whose character i is bit base+i:
// the offsets of its ones (ascending) and the number of runs of ones. The
// string must not be empty and must fit below 2^32 from base.
func trBitArrayOnes(s []byte, base uint64) ([]uint32, int, error) {
	if len(s) == 0 || base+uint64(len(s)) > 1<<32 {
		return nil, 0, errTRInvalid
	}
	// One pass collects the set offsets and one AddMany builds the
	// containers: an AddRange per run of ones reallocated an array
	// container each time, quadratic for "0101…".
	ones := make([]uint32, 0, len(s)/2+1)
	runs := 0
	for i, ch := range s {
		switch ch {
		case '0':
		case '1':
			if i == 0 || s[i-1] != '1' {
				runs++
			}
			ones = append(ones, uint32(base)+uint32(i))
		default:
			return nil, 0, errTRInvalid
		}
	}
	return ones, runs, nil
}

// trLongRuns reports whether ones (in runs runs) is mostly long runs of
// ones, which a bitmap holds as run containers, as AddRange made them.
func trLongRuns(ones []uint32, runs int) bool { return runs*8 < len(ones) }

// trOnesBitmap builds the bitmap of ascending offsets in runs runs.
func trOnesBitmap(ones []uint32, runs int) *roaring.Bitmap {
	bm := roaring.New()
	bm.AddMany(ones)
	if trLongRuns(ones, runs) {
		bm.RunOptimize()
	}
	return bm
}

// trCard is the cardinality of bm (0 for nil).
func trCard(bm *roaring.Bitmap) uint64 {
	if bm == nil {
		return 0
	}
	return bm.GetCardinality()
}

// trInRange counts the set bits of bm in [start, end] (nil: 0).
func trInRange(bm *roaring.Bitmap, start, end uint32) uint64 {
	if bm == nil {
		return 0
	}
	return bm.CardinalityInRange(uint64(start), uint64(end)+1)
}

// ---- writes ----

// TR.SETBIT key offset value: the bit's previous value (spec §4.1).
func cmdTRSetBit(c *Client, args [][]byte) {
	off, err := trUint32(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	val, err := trBit(args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	prev := bm != nil && bm.Contains(off)
	if prev == val {
		c.WriteInt(setBoolInt(prev))
		return
	}
	b := c.KS.NewBatch()
	if val {
		b.TRAdd(c.DB, args[1], off)
	} else {
		b.TRRemove(c.DB, args[1], off)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(setBoolInt(prev))
	}
}

// trAddOffsets parses offsets and logs the ones not yet set; it returns
// the cardinality after, or false after replying an error.
func trAddOffsets(c *Client, key []byte, offArgs [][]byte) (uint64, bool) {
	offs, err := trUint32s(offArgs)
	if err != nil {
		c.WriteErr(err)
		return 0, false
	}
	bm, err := c.KS.Roaring(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return 0, false
	}
	added := roaring.BitmapOf(offs...)
	if bm != nil {
		added.AndNot(bm)
	}
	// Counted before the commit, which changes bm.
	n, after := added.GetCardinality(), trCard(bm)+added.GetCardinality()
	if n > 0 {
		b := c.KS.NewBatch()
		b.TRAdd(c.DB, key, added.ToArray()...)
		if !commitReply(c, b, len(c.Out)) {
			return 0, false
		}
	}
	return after, true
}

// TR.SETBITS key offset [offset ...]: the cardinality after (spec §4.2).
func cmdTRSetBits(c *Client, args [][]byte) {
	if n, ok := trAddOffsets(c, args[1], args[2:]); ok {
		c.WriteInt(int64(n))
	}
}

// TR.APPENDINTARRAY key value [value ...]: OK (spec §4.7).
func cmdTRAppendIntArray(c *Client, args [][]byte) {
	if _, ok := trAddOffsets(c, args[1], args[2:]); ok {
		c.WriteOK()
	}
}

// TR.CLEARBITS key offset [offset ...]: how many of the bits were set
// (spec §4.3).
func cmdTRClearBits(c *Client, args [][]byte) {
	offs, err := trUint32s(args[2:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil || bm == nil {
		trIntOrErr(c, 0, err)
		return
	}
	cleared := roaring.BitmapOf(offs...)
	cleared.And(bm)
	n := cleared.GetCardinality()
	if n == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.TRRemove(c.DB, args[1], cleared.ToArray()...)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(n))
	}
}

func trIntOrErr(c *Client, n int64, err error) {
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(n)
}

// TR.SETRANGE key start end: the cardinality after (spec §4.4, Q4).
func cmdTRSetRange(c *Client, args [][]byte) {
	start, end, err := trRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	width := uint64(end) - uint64(start) + 1
	had := trInRange(bm, start, end)
	after := trCard(bm) - had + width
	if had == width {
		c.WriteInt(int64(after))
		return
	}
	b := c.KS.NewBatch()
	b.TRAddRange(c.DB, args[1], start, end)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(after))
	}
}

// TR.FLIPRANGE key start end: the cardinality after (spec §4.6, Q4). A
// missing key is an empty bitmap.
func cmdTRFlipRange(c *Client, args [][]byte) {
	start, end, err := trRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	width := uint64(end) - uint64(start) + 1
	had := trInRange(bm, start, end)
	after := trCard(bm) - had + (width - had)
	b := c.KS.NewBatch()
	b.TRFlipRange(c.DB, args[1], start, end)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(after))
	}
}

// TR.APPENDBITARRAY key offset bitarray: writes character i to bit
// offset+1+i (offset may be -1); replies the cardinality after (spec §4.5).
func cmdTRAppendBitArray(c *Client, args [][]byte) {
	off, ok := parseInt64(args[2])
	if !ok || off < -1 || off > math.MaxUint32 {
		c.WriteErr(errTRBadUint32)
		return
	}
	first := uint64(off + 1)
	ones, runs, err := trBitArrayOnes(args[3], first)
	if err != nil {
		c.WriteErr(err)
		return
	}
	last := first + uint64(len(args[3])) - 1
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	had := trInRange(bm, uint32(first), uint32(last))
	after := trCard(bm) - had + uint64(len(ones))
	b := c.KS.NewBatch()
	if had > 0 {
		b.TRRemoveRange(c.DB, args[1], uint32(first), uint32(last))
	}
	// Long runs are logged as a merge of run containers (a few bytes a
	// run); other ones as their offsets, added to the key by the apply.
	// Building a bitmap of them (AddMany into arrays), serializing it and
	// decoding it again in the apply took 27% of the server's CPU for
	// 1,000 bits, half set, on a 10% dense key; the offsets cost twice the
	// log bytes (more cleaning) but 5-15% less CPU per request overall.
	if trLongRuns(ones, runs) {
		b.TRMerge(c.DB, args[1], trOnesBitmap(ones, runs))
	} else {
		b.TRAdd(c.DB, args[1], ones...)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(after))
	}
}

// trStore replaces key (whatever it holds) with bm in one batch: a delete
// and the merge pieces of bm; an empty bm leaves no key.
func trStore(c *Client, key []byte, bm *roaring.Bitmap) bool {
	b := c.KS.NewBatch()
	if c.KS.Exists(c.DB, key) {
		b.Del(c.DB, key)
	}
	b.TRMerge(c.DB, key, bm)
	return commitReply(c, b, len(c.Out))
}

// TR.SETINTARRAY key value [value ...]: replaces the bitmap; OK (spec §4.8).
func cmdTRSetIntArray(c *Client, args [][]byte) {
	offs, err := trUint32s(args[2:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if _, err := c.KS.Roaring(c.DB, args[1]); err != nil {
		c.WriteErr(err)
		return
	}
	if trStore(c, args[1], roaring.BitmapOf(offs...)) {
		c.WriteOK()
	}
}

// TR.SETBITARRAY key value: replaces the bitmap with the one the '0'/'1'
// string describes (character i is bit i); OK (spec §4.9).
func cmdTRSetBitArray(c *Client, args [][]byte) {
	bm, err := trBitArray(args[2], 0)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if _, err := c.KS.Roaring(c.DB, args[1]); err != nil {
		c.WriteErr(err)
		return
	}
	if trStore(c, args[1], bm) {
		c.WriteOK()
	}
}

// trBitOp computes a TR.BITOP operation over the bitmaps at keys (spec
// §4.10, Q5): an unknown operation is a syntax error, NOT takes one key and
// DIFF two, a missing key is an empty bitmap. The result is a new bitmap.
// trOp reads a TR.BITOP operation name and checks its key count: the
// syntax error comes before the arity error, both before any key is read.
func trOp(opName []byte, nkeys int) (string, error) {
	var op string
	for _, name := range []string{"and", "or", "xor", "not", "diff"} {
		if argIs(opName, name) {
			op = name
		}
	}
	switch {
	case op == "":
		return "", errSyntax
	case op == "not" && nkeys != 1, op == "diff" && nkeys != 2:
		return "", errTRInvalid
	}
	return op, nil
}

func trBitOp(c *Client, opName []byte, keys [][]byte) (*roaring.Bitmap, error) {
	op, err := trOp(opName, len(keys))
	if err != nil {
		return nil, err
	}
	bms, err := c.KS.Roarings(c.DB, keys)
	if err != nil {
		return nil, err
	}
	for i, bm := range bms {
		if bm == nil {
			bms[i] = roaring.New()
		}
	}
	switch op {
	case "and":
		if len(bms) == 1 {
			return bms[0].Clone(), nil
		}
		return roaring.FastAnd(bms...), nil
	case "or":
		if len(bms) == 1 {
			return bms[0].Clone(), nil
		}
		return roaring.FastOr(bms...), nil
	case "xor":
		// Not the in-place (*Bitmap).Xor: in roaring v2.30.0 it XORs an
		// array or run container with the argument's bitset container by
		// changing that container, i.e. it would change a source key
		// (arrayContainer.ixorBitmap calls value2.ixor). The two-operand
		// roaring.Xor leaves both inputs alone.
		// roaring.Xor returns a new bitmap: only one key needs a copy.
		if len(bms) == 1 {
			return bms[0].Clone(), nil
		}
		out := roaring.Xor(bms[0], bms[1])
		for _, bm := range bms[2:] {
			out = roaring.Xor(out, bm)
		}
		return out, nil
	case "not":
		if bms[0].IsEmpty() {
			return roaring.New(), nil
		}
		return roaring.Flip(bms[0], 0, uint64(bms[0].Maximum())+1), nil
	default: // diff
		return roaring.AndNot(bms[0], bms[1]), nil
	}
}

// TR.BITOP destkey operation key [key ...]: the result's cardinality.
// NOT is logged as the complement of its source (Batch.TRMergeComplement)
// and built only by the apply: its result is dense where the source is
// sparse.
func cmdTRBitOp(c *Client, args [][]byte) {
	if op, err := trOp(args[2], len(args)-3); err == nil {
		switch {
		case op == "not":
			cmdTRBitOpNot(c, args[1], args[3])
			return
		case op == "and" && len(args) > 4, op == "diff":
			if cmdTRBitOpSerial(c, args[1], op, args[3:], false) {
				return
			}
		}
	}
	res, err := trBitOp(c, args[2], args[3:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if trStore(c, args[1], res) {
		c.WriteInt(int64(res.GetCardinality()))
	}
}

// cmdTRBitOpNot stores the complement of src over [0, max of src] in
// dest (nothing for an empty or missing src) and replies its cardinality.
func cmdTRBitOpNot(c *Client, dest, srcKey []byte) {
	src, err := c.KS.Roaring(c.DB, srcKey)
	if err != nil {
		c.WriteErr(err)
		return
	}
	b := c.KS.NewBatch()
	if c.KS.Exists(c.DB, dest) {
		b.Del(c.DB, dest)
	}
	var n uint64
	if src != nil && !src.IsEmpty() {
		// Counted before the commit: dest may be src.
		n = uint64(src.Maximum()) + 1 - src.GetCardinality()
		b.TRMergeComplement(c.DB, dest, src, 0, src.Maximum())
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(n))
	}
}

// TR.DIFF destkey key1 key2: stores key1 minus key2; OK (spec §4.25).
func cmdTRDiff(c *Client, args [][]byte) {
	if cmdTRBitOpSerial(c, args[1], "diff", args[2:4], true) {
		return
	}
	res, err := trBitOp(c, []byte("diff"), args[2:4])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if trStore(c, args[1], res) {
		c.WriteOK()
	}
}

// TR.BITOPCARD operation key [key ...]: the cardinality TR.BITOP would
// store (spec §4.11).
func cmdTRBitOpCard(c *Client, args [][]byte) {
	op, err := trOp(args[1], len(args)-2)
	if err != nil {
		c.WriteErr(err)
		return
	}
	var n uint64
	if len(args)-2 <= 2 || op == "and" {
		n, err = trBitOpCount(c, op, args[2:])
	} else {
		var res *roaring.Bitmap
		if res, err = trBitOp(c, args[1], args[2:]); err == nil {
			n = res.GetCardinality()
		}
	}
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(int64(n))
}

// trBitOpCount counts the result of op (checked by trOp) over one or two
// keys, or AND over any number, without building it.
func trBitOpCount(c *Client, op string, keys [][]byte) (uint64, error) {
	bms, err := c.KS.Roarings(c.DB, keys)
	if err != nil {
		return 0, err
	}
	for i, bm := range bms {
		if bm == nil {
			bms[i] = roaring.New()
		}
	}
	a := bms[0]
	if op == "not" {
		if a.IsEmpty() {
			return 0, nil
		}
		return uint64(a.Maximum()) + 1 - a.GetCardinality(), nil
	}
	if len(bms) == 1 { // AND, OR, XOR of one key: the key itself
		return a.GetCardinality(), nil
	}
	b := bms[1]
	switch op {
	case "and":
		if len(bms) > 2 {
			if n, ok := trAndCount(bms); ok {
				return n, nil
			}
			return roaring.FastAnd(bms...).GetCardinality(), nil
		}
		return trAndCard(a, b), nil
	case "or":
		return a.OrCardinality(b), nil
	case "xor":
		return a.GetCardinality() + b.GetCardinality() - 2*trAndCard(a, b), nil
	default: // diff
		return a.GetCardinality() - trAndCard(a, b), nil
	}
}

// trAndCard is |a AND b|: the serialized AND's count where it takes a and
// b, else the library's AndCardinality.
func trAndCard(a, b *roaring.Bitmap) uint64 {
	if n, ok := trAndCount([]*roaring.Bitmap{a, b}); ok {
		return n
	}
	return a.AndCardinality(b)
}

// TR.OPTIMIZE key: OK, nil for a missing key (spec §4.12). Logged, so that
// the container kinds TR.STAT shows survive a restart.
func cmdTROptimize(c *Client, args [][]byte) {
	bm, err := c.KS.Roaring(c.DB, args[1])
	switch {
	case err != nil:
		c.WriteErr(err)
		return
	case bm == nil:
		c.WriteNull()
		return
	}
	b := c.KS.NewBatch()
	b.TROptimize(c.DB, args[1])
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
	}
}

// ---- reads ----

// TR.GETBIT key offset: 0 or 1; 0 for a missing key (spec §4.13, Q3).
func cmdTRGetBit(c *Client, args [][]byte) {
	off, err := trUint32(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	trIntOrErr(c, setBoolInt(bm != nil && bm.Contains(off)), err)
}

// TR.GETBITS key offset [offset ...]: the bits in request order; an empty
// array for a missing key (spec §4.14).
func cmdTRGetBits(c *Client, args [][]byte) {
	offs, err := trUint32s(args[2:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if bm == nil {
		c.WriteArray(0)
		return
	}
	c.WriteArray(len(offs))
	for _, x := range offs {
		c.WriteInt(setBoolInt(bm.Contains(x)))
	}
}

// TR.BITCOUNT key [start end]: the set bits, of the closed range if given
// (spec §4.15).
func cmdTRBitCount(c *Client, args [][]byte) {
	if len(args) != 2 && len(args) != 4 {
		c.WriteErr(errSyntax)
		return
	}
	start, end := uint32(0), uint32(math.MaxUint32)
	if len(args) == 4 {
		var err error
		if start, end, err = trRange(args[2], args[3]); err != nil {
			c.WriteErr(err)
			return
		}
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	trIntOrErr(c, int64(trInRange(bm, start, end)), err)
}

// TR.BITPOS key value [count]: the offset of the count-th bit equal to
// value (count < 0 counts from the top), or -1 (spec §4.16, Q6).
func cmdTRBitPos(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.WriteErr(errSyntax)
		return
	}
	val, err := trBit(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	count := int64(1)
	if len(args) == 4 {
		n, ok := parseInt64(args[3])
		switch {
		case !ok:
			c.WriteErr(errNotInteger)
			return
		case n == 0:
			c.WriteErr(errTRInvalid)
			return
		}
		count = n
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil || bm == nil {
		trIntOrErr(c, -1, err)
		return
	}
	if val {
		c.WriteInt(trNthOne(bm, count))
	} else {
		c.WriteInt(trNthZero(bm, count))
	}
}

// trNthOne is the offset of the n-th set bit (n > 0 from the bottom, n < 0
// from the top), or -1.
func trNthOne(bm *roaring.Bitmap, n int64) int64 {
	card := bm.GetCardinality()
	idx := uint64(n - 1)
	if n < 0 {
		if uint64(-n) > card {
			return -1
		}
		idx = card - uint64(-n)
	} else if uint64(n) > card {
		return -1
	}
	v, err := bm.Select(uint32(idx))
	if err != nil {
		return -1
	}
	return int64(v)
}

// trNthZero is the offset of the n-th clear bit of [0, 2^32) (n > 0 from
// 0 up, n < 0 from 4294967295 down), or -1: a binary search on the number
// of zeros below an offset, O(32 × containers).
func trNthZero(bm *roaring.Bitmap, n int64) int64 {
	const top = uint64(1) << 32
	zeros := top - bm.GetCardinality()
	if n > 0 {
		if uint64(n) > zeros {
			return -1
		}
		// Smallest x with zeros in [0, x] >= n.
		lo, hi := uint64(0), top-1
		for lo < hi {
			mid := lo + (hi-lo)/2
			if mid+1-bm.CardinalityInRange(0, mid+1) >= uint64(n) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return int64(lo)
	}
	m := uint64(-n)
	if m > zeros {
		return -1
	}
	// Largest x with zeros in [x, top) >= m.
	lo, hi := uint64(0), top-1
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if top-mid-bm.CardinalityInRange(mid, top) >= m {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return int64(lo)
}

// TR.SCAN key start_offset [COUNT count]: [next cursor, offsets]; the
// cursor is the next set offset after the last one returned, 0 when done
// (spec §4.17, Q13).
func cmdTRScan(c *Client, args [][]byte) {
	start, err := trUint32(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	count := uint32(10)
	switch {
	case len(args) == 3:
	case len(args) == 5 && argIs(args[3], "count"):
		if count, err = trUint32(args[4]); err != nil {
			c.WriteErr(err)
			return
		}
		if count == 0 {
			c.WriteErr(errTRInvalid)
			return
		}
		if count > trMaxReplyElements {
			c.WriteErr(trTooLarge("TR.SCAN COUNT", trMaxReplyElements))
			return
		}
	default:
		c.WriteErr(errSyntax)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	var got []uint32
	next := int64(0)
	if bm != nil {
		it := bm.Iterator()
		it.AdvanceIfNeeded(start)
		for it.HasNext() && len(got) < int(count) {
			got = append(got, it.Next())
		}
		if it.HasNext() {
			next = int64(it.PeekNext())
		}
	}
	c.WriteArray(2)
	c.WriteInt(next)
	c.WriteArray(len(got))
	for _, x := range got {
		c.WriteInt(int64(x))
	}
}

func trTooLarge(what string, limit int) error {
	return replyError(fmt.Sprintf("ERR reply too large: %s is limited to %d", what, limit))
}

// TR.RANGE key start end: the set offsets in [start, end] ascending (spec
// §4.18); refused beyond trMaxReplyElements.
func cmdTRRange(c *Client, args [][]byte) {
	start, end, err := trRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	n := trInRange(bm, start, end)
	if n > trMaxReplyElements {
		c.WriteErr(trTooLarge("the number of offsets TR.RANGE replies", trMaxReplyElements))
		return
	}
	c.WriteArray(int(n))
	if n == 0 {
		return
	}
	it := bm.Iterator()
	it.AdvanceIfNeeded(start)
	for i := uint64(0); i < n; i++ {
		c.WriteInt(int64(it.Next()))
	}
}

// TR.RANGEBITARRAY key start end: the bits of [start, end] as '0'/'1'; nil
// for a missing key (spec §4.19); refused beyond trMaxBitArrayReply bits.
func cmdTRRangeBitArray(c *Client, args [][]byte) {
	start, end, err := trRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	width := uint64(end) - uint64(start) + 1
	if width > trMaxBitArrayReply {
		c.WriteErr(trTooLarge("the range of TR.RANGEBITARRAY", trMaxBitArrayReply))
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	switch {
	case err != nil:
		c.WriteErr(err)
		return
	case bm == nil:
		c.WriteNull()
		return
	}
	out := make([]byte, width)
	for i := range out {
		out[i] = '0'
	}
	it := bm.Iterator()
	it.AdvanceIfNeeded(start)
	for it.HasNext() {
		x := it.Next()
		if x > end {
			break
		}
		out[x-start] = '1'
	}
	c.WriteBulk(out)
}

// TR.MIN key: the smallest set offset; -1 when missing (spec §4.20).
func cmdTRMin(c *Client, args [][]byte) {
	bm, err := c.KS.Roaring(c.DB, args[1])
	if bm == nil {
		trIntOrErr(c, -1, err)
		return
	}
	c.WriteInt(int64(bm.Minimum()))
}

// TR.MAX key: the largest set offset; -1 when missing (spec §4.20).
func cmdTRMax(c *Client, args [][]byte) {
	bm, err := c.KS.Roaring(c.DB, args[1])
	if bm == nil {
		trIntOrErr(c, -1, err)
		return
	}
	c.WriteInt(int64(bm.Maximum()))
}

// TR.RANK key offset: the set bits at or below offset; -1 when missing
// (spec §4.24).
func cmdTRRank(c *Client, args [][]byte) {
	off, err := trUint32(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	if bm == nil {
		trIntOrErr(c, -1, err)
		return
	}
	c.WriteInt(int64(bm.Rank(off)))
}

// TR.JACCARD key1 key2: |A∩B| / |A∪B| as a bulk string with 17
// significant digits ("0" for two empty bitmaps) (spec §4.22, Q7).
func cmdTRJaccard(c *Client, args [][]byte) {
	bms, err := c.KS.Roarings(c.DB, args[1:3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	a, b := bms[0], bms[1]
	if a == nil {
		a = roaring.New()
	}
	if b == nil {
		b = roaring.New()
	}
	union := a.OrCardinality(b)
	if union == 0 {
		c.WriteBulkString("0")
		return
	}
	j := float64(trAndCard(a, b)) / float64(union)
	c.WriteBulkString(strconv.FormatFloat(j, 'g', 17, 64))
}

// TR.CONTAINS key1 key2: 1 if key1 is a subset of key2 (spec §4.23, Q7).
func cmdTRContains(c *Client, args [][]byte) {
	bms, err := c.KS.Roarings(c.DB, args[1:3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	a, b := bms[0], bms[1]
	switch {
	case a == nil:
		c.WriteInt(1)
	case b == nil:
		c.WriteInt(0)
	default:
		c.WriteInt(setBoolInt(trAndCard(a, b) == a.GetCardinality()))
	}
}

// TR.STAT key [JSON]: statistics as text (fourteen CRLF-terminated lines)
// or compact JSON; nil for a missing key (spec §5). Container counts and
// bytes are RoaringBitmap/roaring's (spec Q8); the sum is computed per
// container, O(1) for a full one and O(members) for the others.
func cmdTRStat(c *Client, args [][]byte) {
	asJSON := false
	switch {
	case len(args) == 2:
	case len(args) == 3 && argIs(args[2], "json"):
		asJSON = true
	default:
		c.WriteErr(errSyntax)
		return
	}
	bm, err := c.KS.Roaring(c.DB, args[1])
	switch {
	case err != nil:
		c.WriteErr(err)
		return
	case bm == nil:
		c.WriteNull()
		return
	}
	st := bm.Stats()
	lo, hi, sum := uint64(bm.Minimum()), uint64(bm.Maximum()), trSum(bm)
	var s string
	if asJSON {
		s = fmt.Sprintf(`{"cardinality":%d,"number_of_containers":%d,"max_value":%d,"min_value":%d,"sum_value":%d,`+
			`"array_container":{"number_of_containers":%d,"container_cardinality":%d,"container_allocated_bytes":%d},`+
			`"bitset_container":{"number_of_containers":%d,"container_cardinality":%d,"container_allocated_bytes":%d},`+
			`"run_container":{"number_of_containers":%d,"container_cardinality":%d,"container_allocated_bytes":%d}}`,
			st.Cardinality, st.Containers, hi, lo, sum,
			st.ArrayContainers, st.ArrayContainerValues, st.ArrayContainerBytes,
			st.BitmapContainers, st.BitmapContainerValues, st.BitmapContainerBytes,
			st.RunContainers, st.RunContainerValues, st.RunContainerBytes)
	} else {
		s = fmt.Sprintf("cardinality: %d\r\nnumber of containers: %d\r\nmax value: %d\r\nmin value: %d\r\nsum value: %d\r\n"+
			"number of array containers: %d\r\n\tarray container values: %d\r\n\tarray container bytes: %d\r\n"+
			"number of bitset containers: %d\r\n\tbitset container values: %d\r\n\tbitset container bytes: %d\r\n"+
			"number of run containers: %d\r\n\trun container values: %d\r\n\trun container bytes: %d\r\n",
			st.Cardinality, st.Containers, hi, lo, sum,
			st.ArrayContainers, st.ArrayContainerValues, st.ArrayContainerBytes,
			st.BitmapContainers, st.BitmapContainerValues, st.BitmapContainerBytes,
			st.RunContainers, st.RunContainerValues, st.RunContainerBytes)
	}
	c.WriteBulkString(s)
}

// trSum is the sum of the members (at most ~2^63, fits a uint64): per
// 2^16-wide container, closed form when it is full, else its members.
func trSum(bm *roaring.Bitmap) uint64 {
	var sum uint64
	it := bm.Iterator()
	for next := bm.NextValue(0); next >= 0; {
		lo := uint64(next) &^ 0xFFFF
		hi := lo + 1<<16
		if bm.CardinalityInRange(lo, hi) == 1<<16 {
			sum += (lo + hi - 1) * (1 << 16) / 2
		} else {
			it.AdvanceIfNeeded(uint32(lo))
			for it.HasNext() && uint64(it.PeekNext()) < hi {
				sum += uint64(it.Next())
			}
		}
		if hi == 1<<32 {
			break
		}
		next = bm.NextValue(uint32(hi))
	}
	return sum
}

package keyspace

import (
	"encoding/binary"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// TairRoaring bitmaps (the TR.* commands; semantics: spec/tairroaring.md).
//
// A bitmap is a set of uint32 offsets held in DRAM as a *roaring.Bitmap
// (RoaringBitmap/roaring). Unlike the other collections its bytes do not
// stay in the log: a roaring container is a compact structure of its own
// (an 8 KiB bitset holds 65,536 members), so the log holds the operations
// and DRAM the value.
//
// Operations (durable, never renumber the kinds; every integer is little
// endian, ranges are closed [start, end] with start <= end):
//
//	opTRAdd          repeated offset u32: set these bits (creates the key)
//	opTRRemove       repeated offset u32: clear these bits
//	opTRAddRange     start u32 | end u32: set every bit of the range (creates)
//	opTRRemoveRange  start u32 | end u32: clear every bit of the range
//	opTRFlipRange    start u32 | end u32: invert every bit of the range
//	                 (creates the key if the result is not empty)
//	opTRMerge        a bitmap in the portable roaring serialization
//	                 (RoaringFormatSpec): OR it into the key (creates)
//	opTROptimize     empty: run-length encode the containers where smaller
//	                 (TR.OPTIMIZE; no change to the members, but TR.STAT
//	                 shows the container kinds, so replay must reach them)
//	opTRMergeFlip    start u32 | end u32 | a bitmap X in the portable
//	                 serialization, every member in [start, end]: OR the
//	                 complement [start, end] minus X into the key (creates
//	                 the key if that is not empty)
//
// Commands log results, not choices: TR.SETBIT logs the one bit it changes
// (nothing when it changes none), TR.SETBITS and TR.CLEARBITS the bits
// that change, TR.APPENDBITARRAY a range clear and the ones it writes
// (their offsets, or a merge where they form long runs). A whole value
// (TR.BITOP's destination, TR.SETINTARRAY, TR.SETBITARRAY, and a rebuild
// for the cleaner, COPY, RENAME, MOVE) is a delete and one or more opTRMerge pieces (Batch.TRMerge;
// TR.BITOP AND hands over the serialization it built, Batch.TRMergeSerialized), each of at most
// trPieceContainers containers: a huge bitmap is logged in bounded pieces
// (and Commit writes many pieces as a group of bounded records), and the
// work of a rebuild follows the number of containers, never the number of
// members (the full range 0..2^32-1 is 65,536 run containers, about 1 MiB
// of log). TR.BITOP NOT logs its result as opTRMergeFlip pieces of the
// source (Batch.TRMergeComplement): the complement of a sparse bitmap is
// dense (NOT of 10,000 bits spread over 10,000,000 is 1.2 MB of bitset
// containers, 20 KB as the source's arrays), and writing it whole (page
// faults on fresh segment pages, checksums, serialization, cleaning) made
// the command cost 10-13 ms of CPU, 1-1.3 ms now. The record is still the result, not the operation over
// other keys: it replays the same whatever the source key holds later, and
// the cleaner rewrites it like any other operation of the key.
//
// A bitmap that becomes empty is deleted, like every collection here
// (Redis's SREM/HDEL rule; spec Q2 leaves the choice open): TR.CLEARBITS of
// the last bit, a TR.FLIPRANGE that clears everything, a TR.BITOP whose
// result is empty all leave no key.
const (
	opTRAdd         = 61
	opTRRemove      = 62
	opTRAddRange    = 63
	opTRRemoveRange = 64
	opTRFlipRange   = 65
	opTRMerge       = 66
	opTROptimize    = 67
	opTRMergeFlip   = 68
)

// TypeRoaring is TYPE's reply for a TairRoaring bitmap (spec Q12: Tair's
// own module type name is undocumented; this one is ours).
const TypeRoaring = "tairroaring"

// EncodingRoaring is OBJECT ENCODING's reply for a TairRoaring bitmap.
const EncodingRoaring = "roaring"

// trPieceContainers is the narrowest merge piece: at most this many
// 2^16-wide containers, so at most 16 × 8 KiB of bitset plus headers
// (~128 KiB, half of maxOpBody) whatever the containers hold. Pieces of
// sparser containers (arrays, runs) span more of them (see TRMerge).
const trPieceContainers = 16

// trRecountEvery bounds how stale liveBytes may get: the serialized size
// costs a walk over every container, so single-bit operations recount it
// only every trRecountEvery operations (ranges, merges and large adds
// recount at once).
const trRecountEvery = 64

// roaringObj is a TairRoaring bitmap.
type roaringObj struct {
	bm *roaring.Bitmap
	// bytes is the log size a rebuild would write (serialized size plus
	// per-piece overhead) as last counted; pending counts the small
	// operations since, and big is set by one that may change it a lot.
	bytes   int64
	pending int
	big     bool
}

func (r *roaringObj) typeName() string { return TypeRoaring }

// length is 1 for a bitmap with members and 0 for an empty one: the
// keyspace only asks whether it is empty, and a bitmap's cardinality costs
// a walk over its containers.
func (r *roaringObj) length() int {
	if r.bm.IsEmpty() {
		return 0
	}
	return 1
}

// liveBytes is the serialized size, recounted (a walk over the containers)
// after a big operation or every trRecountEvery small ones.
func (r *roaringObj) liveBytes() int64 {
	if r.big || r.pending >= trRecountEvery || r.bytes == 0 {
		n := int64(r.bm.GetSerializedSizeInBytes())
		// A piece costs an operation header and a serialization header.
		r.bytes = n + 16*(n/(maxOpBody/2)+1)
		r.pending, r.big = 0, false
	}
	return r.bytes
}

// changed notes an operation before objectChanged asks for liveBytes.
func (r *roaringObj) changed(big bool) {
	r.pending++
	r.big = r.big || big
}

// merged notes a merge of a piece of n serialized bytes. The pieces of one
// rebuild are disjoint, so the count grows by the piece's size and its
// headers instead of being recounted: recounting after every piece made a
// rebuild (COPY, RENAME, recovery) quadratic in the bitmap's containers.
// Overlapping merges overcount until the next periodic recount.
func (r *roaringObj) merged(n int) {
	if r.bytes == 0 || r.big {
		r.changed(true)
		return
	}
	r.bytes += int64(n) + 16
	r.changed(false)
}

func (r *roaringObj) encoding() string { return EncodingRoaring }

func (r *roaringObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	b.TRMerge(db, key, r.bm)
}

func registerRoaringOps(m map[byte]objectApplier) {
	registerOp(m, opTRAdd, applyTRAdd)
	registerOp(m, opTRRemove, applyTRRemove)
	registerOp(m, opTRAddRange, applyTRRange)
	registerOp(m, opTRRemoveRange, applyTRRange)
	registerOp(m, opTRFlipRange, applyTRRange)
	registerOp(m, opTRMerge, applyTRMerge)
	registerOp(m, opTROptimize, applyTROptimize)
	registerOp(m, opTRMergeFlip, applyTRMergeFlip)
}

// roaringFor returns the bitmap of e for an operation: errOpType if e holds
// another type; nil if e is nil and create is false; a new, empty bitmap
// under o's key if e is nil and create is true.
func (ks *Keyspace) roaringFor(o op, e *entry, create bool) (*roaringObj, *entry, error) {
	if e != nil {
		var r *roaringObj
		if e.obj != nil {
			r, _ = e.obj.coll.(*roaringObj)
		}
		if r == nil {
			return nil, nil, fmt.Errorf("%w: TR op %d on a %s", errOpType, o.kind, ks.typeOf(e))
		}
		return r, e, nil
	}
	if !create {
		return nil, nil, nil
	}
	r := &roaringObj{bm: roaring.New()}
	return r, ks.createObject(o.db, o.key, r, o.loc), nil
}

// trOffsets decodes a body of little-endian u32 offsets.
func trOffsets(body []byte) ([]uint32, error) {
	if len(body)%4 != 0 {
		return nil, fmt.Errorf("%w: TR offsets body of %d bytes", errBadOp, len(body))
	}
	out := make([]uint32, len(body)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(body[4*i:])
	}
	return out, nil
}

func applyTRAdd(ks *Keyspace, o op, e *entry) error {
	if len(o.body) == 4 { // TR.SETBIT: no slice of offsets to decode into
		r, e, err := ks.roaringFor(o, e, true)
		if r == nil {
			return err
		}
		r.bm.Add(binary.LittleEndian.Uint32(o.body))
		r.changed(false)
		ks.objectChanged(o.db, e)
		return nil
	}
	offs, err := trOffsets(o.body)
	if err != nil {
		return err
	}
	r, e, err := ks.roaringFor(o, e, len(offs) > 0)
	if r == nil {
		return err
	}
	r.bm.AddMany(offs)
	r.changed(len(offs) > 1)
	ks.objectChanged(o.db, e)
	return nil
}

func applyTRRemove(ks *Keyspace, o op, e *entry) error {
	if len(o.body) == 4 {
		r, e, err := ks.roaringFor(o, e, false)
		if r == nil {
			return err
		}
		r.bm.Remove(binary.LittleEndian.Uint32(o.body))
		r.changed(false)
		ks.objectChanged(o.db, e)
		return nil
	}
	offs, err := trOffsets(o.body)
	if err != nil {
		return err
	}
	r, e, err := ks.roaringFor(o, e, false)
	if r == nil {
		return err
	}
	for _, x := range offs {
		r.bm.Remove(x)
	}
	r.changed(len(offs) > 1)
	ks.objectChanged(o.db, e)
	return nil
}

// applyTRRange applies opTRAddRange, opTRRemoveRange and opTRFlipRange.
func applyTRRange(ks *Keyspace, o op, e *entry) error {
	if len(o.body) != 8 {
		return fmt.Errorf("%w: TR range body of %d bytes", errBadOp, len(o.body))
	}
	start := uint64(binary.LittleEndian.Uint32(o.body))
	end := uint64(binary.LittleEndian.Uint32(o.body[4:])) + 1 // the library's ranges are half-open
	if start >= end {
		return fmt.Errorf("%w: TR range [%d, %d]", errBadOp, start, end-1)
	}
	r, e, err := ks.roaringFor(o, e, o.kind != opTRRemoveRange)
	if r == nil {
		return err
	}
	switch o.kind {
	case opTRAddRange:
		r.bm.AddRange(start, end)
	case opTRRemoveRange:
		r.bm.RemoveRange(start, end)
	default:
		r.bm.Flip(start, end)
	}
	r.changed(true)
	ks.objectChanged(o.db, e)
	return nil
}

func applyTRMerge(ks *Keyspace, o op, e *entry) error {
	piece := roaring.New()
	// UnmarshalBinary copies: the piece must not alias the mapping, whose
	// segment the cleaner may delete.
	if err := piece.UnmarshalBinary(o.body); err != nil {
		return fmt.Errorf("%w: TR merge piece: %v", errBadOp, err)
	}
	if err := piece.Validate(); err != nil {
		return fmt.Errorf("%w: TR merge piece: %v", errBadOp, err)
	}
	created := e == nil
	r, e, err := ks.roaringFor(o, e, !piece.IsEmpty())
	if r == nil {
		return err
	}
	if created {
		// The piece is a fresh copy: a new key takes it as its value (an Or
		// into the empty bitmap would copy every container again).
		r.bm = piece
	} else {
		r.bm.Or(piece)
	}
	r.merged(len(o.body))
	ks.objectChanged(o.db, e)
	return nil
}

func applyTRMergeFlip(ks *Keyspace, o op, e *entry) error {
	if len(o.body) < 8 {
		return fmt.Errorf("%w: TR complement merge body of %d bytes", errBadOp, len(o.body))
	}
	start := uint64(binary.LittleEndian.Uint32(o.body))
	end := uint64(binary.LittleEndian.Uint32(o.body[4:])) + 1
	if start >= end {
		return fmt.Errorf("%w: TR complement range [%d, %d]", errBadOp, start, end-1)
	}
	x := roaring.New()
	if err := x.UnmarshalBinary(o.body[8:]); err != nil {
		return fmt.Errorf("%w: TR complement piece: %v", errBadOp, err)
	}
	if err := x.Validate(); err != nil {
		return fmt.Errorf("%w: TR complement piece: %v", errBadOp, err)
	}
	if !x.IsEmpty() && (uint64(x.Minimum()) < start || uint64(x.Maximum()) >= end) {
		return fmt.Errorf("%w: TR complement piece [%d, %d] outside [%d, %d]", errBadOp, x.Minimum(), x.Maximum(), start, end-1)
	}
	x = trComplement(x, start, end)
	created := e == nil
	r, e, err := ks.roaringFor(o, e, !x.IsEmpty())
	if r == nil {
		return err
	}
	if created {
		r.bm = x
	} else {
		r.bm.Or(x)
	}
	r.changed(true)
	ks.objectChanged(o.db, e)
	return nil
}

func applyTROptimize(ks *Keyspace, o op, e *entry) error {
	if len(o.body) != 0 {
		return fmt.Errorf("%w: TR optimize body of %d bytes", errBadOp, len(o.body))
	}
	r, e, err := ks.roaringFor(o, e, false)
	if r == nil {
		return err
	}
	r.bm.RunOptimize()
	r.changed(true)
	ks.objectChanged(o.db, e)
	return nil
}

// trDenseComplementMax bounds the range trComplement builds as one dense
// word array (2^28 bits: 32 MiB).
const trDenseComplementMax = 1 << 28

// trComplement returns [start, end) minus x, every member of x in that
// range, with the containers roaring.Flip would give it (a bitset where
// more than 4,096 members remain, else an array; a run container for a
// window x has no container in, or flipped from a run container).
//
// roaring.Flip allocates two 8 KiB bitsets per array container it flips
// (the array as a bitset, then its negation), 2 ms for a NOT of 10,000
// bits over 10,000,000, most of it allocation and GC. When the range starts
// at 0, is at most trDenseComplementMax bits, and every window of it holds
// an array or bitset container of x, the same containers come from one
// word array: all ones, x's members cleared, handed to roaring.FromDense
// without a copy (its bitsets share the array, copy-on-write). Not the
// in-place (*Bitmap).Flip either: in roaring v2.30.0 flipping an array
// container into a bitset also refills the replaced array with up to
// 65,536 members, only to drop it (arrayContainer.inotClose), 40 ms for
// the NOT above.
func trComplement(x *roaring.Bitmap, start, end uint64) *roaring.Bitmap {
	if start != 0 || end > trDenseComplementMax || x.HasRunCompression() ||
		uint64(x.Stats().Containers) != (end-1)>>16+1 {
		return roaring.Flip(x, start, end)
	}
	words := make([]uint64, (end+63)/64)
	for i := range words {
		words[i] = ^uint64(0)
	}
	if r := end % 64; r != 0 {
		words[len(words)-1] = 1<<r - 1
	}
	var buf [256]uint32
	for it := x.ManyIterator(); ; {
		n := it.NextMany(buf[:])
		if n == 0 {
			break
		}
		for _, v := range buf[:n] {
			words[v>>6] &^= 1 << (v & 63)
		}
	}
	return roaring.FromDense(words, false)
}

// trOps appends operations of kind holding offsets, at most maxOpBody
// bytes (maxOpBody/4 offsets) each. No offsets writes nothing.
func (b *Batch) trOps(kind byte, db int, key []byte, offsets []uint32) {
	const per = maxOpBody / 4
	if len(offsets) == 1 { // TR.SETBIT: the body on the stack (ObjectOp copies it)
		var body [4]byte
		binary.LittleEndian.PutUint32(body[:], offsets[0])
		b.ObjectOp(kind, db, key, body[:])
		return
	}
	for len(offsets) > 0 {
		n := min(len(offsets), per)
		body := make([]byte, 4*n)
		for i, x := range offsets[:n] {
			binary.LittleEndian.PutUint32(body[4*i:], x)
		}
		b.ObjectOp(kind, db, key, body)
		offsets = offsets[n:]
	}
}

// TRAdd appends operations setting the bits at offsets in the bitmap at
// key, creating it (the caller checks the type). No offsets writes
// nothing.
func (b *Batch) TRAdd(db int, key []byte, offsets ...uint32) { b.trOps(opTRAdd, db, key, offsets) }

// TRRemove appends operations clearing the bits at offsets (a bitmap left
// empty is deleted).
func (b *Batch) TRRemove(db int, key []byte, offsets ...uint32) {
	b.trOps(opTRRemove, db, key, offsets)
}

func (b *Batch) trRange(kind byte, db int, key []byte, start, end uint32) {
	if start > end {
		panic(fmt.Sprintf("keyspace: TR range [%d, %d]", start, end))
	}
	var body [8]byte
	binary.LittleEndian.PutUint32(body[:], start)
	binary.LittleEndian.PutUint32(body[4:], end)
	b.ObjectOp(kind, db, key, body[:])
}

// TRAddRange appends an operation setting every bit of the closed range
// [start, end] (start <= end), creating the key.
func (b *Batch) TRAddRange(db int, key []byte, start, end uint32) {
	b.trRange(opTRAddRange, db, key, start, end)
}

// TRRemoveRange appends an operation clearing every bit of [start, end].
func (b *Batch) TRRemoveRange(db int, key []byte, start, end uint32) {
	b.trRange(opTRRemoveRange, db, key, start, end)
}

// TRFlipRange appends an operation inverting every bit of [start, end]
// (a missing key is an empty bitmap).
func (b *Batch) TRFlipRange(db int, key []byte, start, end uint32) {
	b.trRange(opTRFlipRange, db, key, start, end)
}

// TROptimize appends an operation run-length encoding the bitmap's
// containers where that is smaller (TR.OPTIMIZE).
func (b *Batch) TROptimize(db int, key []byte) { b.ObjectOp(opTROptimize, db, key, nil) }

// TRMerge appends operations ORing bm into the bitmap at key (creating it):
// with a Del before it, it stores bm whole. bm is logged in pieces of at
// most trPieceContainers containers each (one piece if its serialization
// is at most maxOpBody bytes); the work is proportional to bm's containers.
// An empty bm writes nothing. bm is only read.
func (b *Batch) TRMerge(db int, key []byte, bm *roaring.Bitmap) {
	if bm.IsEmpty() {
		return
	}
	if bm.GetSerializedSizeInBytes() <= maxOpBody {
		b.ObjectOp(opTRMerge, db, key, trSerialize(bm))
		return
	}
	// Pieces cover a window of containers that starts at trPieceContainers
	// and doubles while the pieces stay small (sparse or run containers:
	// a full 2^32 range is a few pieces, not 4,096), halving again when a
	// wider window would pass half of maxOpBody.
	window := roaring.New()
	width := uint64(trPieceContainers)
	for next := bm.NextValue(0); next >= 0; {
		lo := uint64(next) &^ 0xFFFF
		var hi uint64
		var piece *roaring.Bitmap
		for {
			hi = min(lo+width<<16, 1<<32)
			window.Clear()
			window.AddRange(lo, hi)
			piece = roaring.And(bm, window)
			if width > trPieceContainers && piece.GetSerializedSizeInBytes() > maxOpBody/2 {
				width /= 2
				continue
			}
			break
		}
		b.ObjectOp(opTRMerge, db, key, trSerialize(piece))
		if hi == 1<<32 {
			break
		}
		if piece.GetSerializedSizeInBytes() < maxOpBody/8 && width < 1<<16 {
			width *= 2
		}
		next = bm.NextValue(uint32(hi))
	}
}

// TRMergeSerialized appends operations ORing the bitmap whose portable
// serialization is p into the bitmap at key (creating it), as TRMerge does
// for the decoded bitmap: one operation holding p when it fits one, else
// TRMerge's pieces of it. p must be a valid serialization (the apply
// checks it as it checks every merge piece); an empty bitmap writes
// nothing. p is only read.
func (b *Batch) TRMergeSerialized(db int, key []byte, p []byte) {
	if len(p) <= maxOpBody {
		if trSerialEmpty(p) {
			return
		}
		b.ObjectOp(opTRMerge, db, key, p)
		return
	}
	bm := roaring.New()
	if err := bm.UnmarshalBinary(p); err != nil {
		panic(fmt.Sprintf("keyspace: a bitmap serialized in memory does not decode: %v", err))
	}
	b.TRMerge(db, key, bm)
}

// trSerialEmpty reports whether p serializes a bitmap of no containers
// (the no-run form's cookie and a zero count; the run form always has one).
func trSerialEmpty(p []byte) bool {
	return len(p) == 8 && binary.LittleEndian.Uint32(p) == 12346 && binary.LittleEndian.Uint32(p[4:]) == 0
}

// TRMergeComplement appends operations ORing the complement of src within
// the closed range [start, end] (start <= end) into the bitmap at key,
// creating it: with a Del before it, it stores that complement whole. Only
// src's members in the range are logged (opTRMergeFlip), in pieces of at
// most trPieceContainers containers of src (one piece when src fits one
// operation); the pieces cover the range without gaps. src is only read.
func (b *Batch) TRMergeComplement(db int, key []byte, src *roaring.Bitmap, start, end uint32) {
	if start > end {
		panic(fmt.Sprintf("keyspace: TR complement range [%d, %d]", start, end))
	}
	inRange := src.IsEmpty() || (src.Minimum() >= start && src.Maximum() <= end)
	if inRange && src.GetSerializedSizeInBytes() <= maxOpBody-8 {
		b.trFlipOp(db, key, start, end, src)
		return
	}
	// Windows of containers from start to end, narrowest trPieceContainers
	// wide, doubling while the pieces stay small (as TRMerge's).
	window := roaring.New()
	width := uint64(trPieceContainers) << 16
	for lo, stop := uint64(start), uint64(end)+1; lo < stop; {
		var hi uint64
		var piece *roaring.Bitmap
		for {
			hi = min((lo&^0xFFFF)+width, stop)
			window.Clear()
			window.AddRange(lo, hi)
			piece = roaring.And(src, window)
			if width > trPieceContainers<<16 && piece.GetSerializedSizeInBytes() > maxOpBody/2 {
				width /= 2
				continue
			}
			break
		}
		b.trFlipOp(db, key, uint32(lo), uint32(hi-1), piece)
		if piece.GetSerializedSizeInBytes() < maxOpBody/8 && width < 1<<32 {
			width *= 2
		}
		lo = hi
	}
}

// trFlipOp appends one opTRMergeFlip of x (every member in [start, end]).
func (b *Batch) trFlipOp(db int, key []byte, start, end uint32, x *roaring.Bitmap) {
	p := trSerialize(x)
	body := make([]byte, 8+len(p))
	binary.LittleEndian.PutUint32(body, start)
	binary.LittleEndian.PutUint32(body[4:], end)
	copy(body[8:], p)
	b.ObjectOp(opTRMergeFlip, db, key, body)
}

func trSerialize(bm *roaring.Bitmap) []byte {
	p, err := bm.ToBytes()
	if err != nil {
		panic(fmt.Sprintf("keyspace: serializing a bitmap in memory: %v", err))
	}
	return p
}

// Roaring returns the bitmap at key (nil for a missing key) or
// ErrWrongType. The bitmap is the live value: callers only read it, and
// only until Unlock.
func (ks *Keyspace) Roaring(db int, key []byte) (*roaring.Bitmap, error) {
	e, err := ks.lookupObject(db, key, TypeRoaring)
	if e == nil {
		return nil, err
	}
	return e.obj.coll.(*roaringObj).bm, nil
}

// Roarings looks up every key as a bitmap before anything else: one key of
// another type is ErrWrongType whatever the others hold. A missing key is a
// nil entry. The bitmaps are live values (see Roaring).
func (ks *Keyspace) Roarings(db int, keys [][]byte) ([]*roaring.Bitmap, error) {
	out := make([]*roaring.Bitmap, len(keys))
	for i, k := range keys {
		bm, err := ks.Roaring(db, k)
		if err != nil {
			return nil, err
		}
		out[i] = bm
	}
	return out, nil
}

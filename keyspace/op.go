package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Operation kinds inside a batch record payload. Part of the on-disk
// format: never renumber.
//
// A batch payload is a sequence of operations, each:
//
//	kind u8 | db u8 | body
//
//	opSet      key | expireAt int64 LE (Unix ms, 0 = none) | value
//	opDel      key
//	opFlushDB  (empty)
//	opFlushAll (empty; db is 0)
//	opSwapDB   other db u8
//	opFunctions (6) the function libraries: see functions.go
//	opReplPosition (7) a replica's replication position: see replpos.go
//	opSetRef   key | expireAt int64 LE | base uvarint: the value of the
//	           opSet at location base (see valueref.go)
//	opClock (9) time int64 LE: the time the record's expiry decisions
//	           are made at (applyclock.go)
//
// where key and value are a uvarint length followed by the bytes. Kinds 16
// and up are object operations (collections, patched strings, the
// big-encoding marker): their layout and kind table are in object.go. An opSet
// holds the whole state of a string key, so the key's live data is always
// exactly one operation (the one the index points at), or, for a large
// value whose expiry, name or database changed, an opSetRef plus the opSet
// it names (valueref.go).
const (
	opSet      = 1
	opDel      = 2
	opFlushDB  = 3
	opFlushAll = 4
	opSwapDB   = 5
	opSetRef   = 8
)

var errBadOp = errors.New("keyspace: malformed operation")

// Operations that are well formed but do not fit the key's state. Live,
// they mean a bug. At recovery they are expected where segment cleaning
// removed a collection's earlier operations: the operations of that
// incarnation still in later segments replay over a partial state (a
// pop of a missing list, an index past its end). The cleaner wrote a
// reset of that key (its value whole, or a delete) later in the log
// (cleanOp), so whatever the partial state becomes is replaced there:
// replay skips such operations (errStaleOp) or, for an operation of
// another type, drops the partial value and applies the operation to a
// fresh key (errOpType).
var (
	errStaleOp = fmt.Errorf("%w: does not fit the key's state", errBadOp)
	errOpType  = fmt.Errorf("%w: of another type than the key", errBadOp)
)

// op is one decoded operation; slices alias the payload.
type op struct {
	kind     byte
	db       int
	key      []byte
	expireAt int64
	val      []byte
	db2      int
	body     []byte // object operations: the type's encoding
	bodyOff  int    // offset of body from the start of the operation
	ref      uint64 // opSetRef: location of the opSet holding the value
	loc      uint64 // packed location of the operation (set by apply)
	size     int    // encoded bytes
}

// decodeOp decodes the operation at the start of p.
func decodeOp(p []byte) (op, error) {
	var o op
	if err := o.decode(p); err != nil {
		return op{}, err
	}
	return o, nil
}

// decode is decodeOp into o, for the paths every write takes (a lookup's
// opInto, applyPayload): an op is 136 bytes, and returning one by value
// copies the local the fields were just stored into with 16-byte loads
// that span those 8-byte stores, a failed store forwarding that waits for
// the store buffer to drain (75% of decodeOp's samples were that copy,
// ~2% of a SET's CPU by perf). On error o holds a partial decode.
func (o *op) decode(p []byte) error {
	*o = op{}
	if len(p) < 2 {
		return fmt.Errorf("%w: %d bytes left", errBadOp, len(p))
	}
	o.kind, o.db = p[0], int(p[1])
	if o.db >= NumDBs {
		return fmt.Errorf("%w: db %d", errBadOp, o.db)
	}
	i := 2
	var ok bool
	switch o.kind {
	case opSet:
		if o.key, i, ok = readBytes(p, i); !ok || len(p)-i < 8 {
			return fmt.Errorf("%w: truncated set", errBadOp)
		}
		o.expireAt = int64(binary.LittleEndian.Uint64(p[i:]))
		i += 8
		if o.val, i, ok = readBytes(p, i); !ok {
			return fmt.Errorf("%w: truncated set value", errBadOp)
		}
	case opSetRef:
		if o.key, i, ok = readBytes(p, i); !ok || len(p)-i < 8 {
			return fmt.Errorf("%w: truncated value reference", errBadOp)
		}
		o.expireAt = int64(binary.LittleEndian.Uint64(p[i:]))
		i += 8
		n, w := binary.Uvarint(p[i:])
		if w <= 0 || n == 0 {
			return fmt.Errorf("%w: value reference location", errBadOp)
		}
		o.ref, i = n, i+w
	case opDel:
		if o.key, i, ok = readBytes(p, i); !ok {
			return fmt.Errorf("%w: truncated del", errBadOp)
		}
	case opFlushDB, opFlushAll:
	case opClock: // applyclock.go
		if len(p) < clockOpSize {
			return fmt.Errorf("%w: truncated clock", errBadOp)
		}
		o.body, i = p[2:clockOpSize], clockOpSize
	case opFunctions: // functions.go
		if o.body, i, ok = readBytes(p, i); !ok {
			return fmt.Errorf("%w: truncated functions", errBadOp)
		}
	case opReplPosition: // replpos.go
		if o.body, i, ok = readBytes(p, i); !ok {
			return fmt.Errorf("%w: truncated replication position", errBadOp)
		}
	case opSwapDB:
		if len(p) < 3 || int(p[2]) >= NumDBs {
			return fmt.Errorf("%w: swapdb", errBadOp)
		}
		o.db2 = int(p[2])
		i = 3
	default:
		if o.kind < opObjectBase {
			return fmt.Errorf("%w: kind %d", errBadOp, o.kind)
		}
		if o.key, i, ok = readBytes(p, i); !ok {
			return fmt.Errorf("%w: truncated key of kind %d", errBadOp, o.kind)
		}
		n, w := binary.Uvarint(p[i:])
		if w <= 0 || (w > 1 && p[i+w-1] == 0) || n > uint64(len(p)-i-w) {
			return fmt.Errorf("%w: truncated body of kind %d", errBadOp, o.kind)
		}
		o.bodyOff = i + w
		o.body = p[o.bodyOff : o.bodyOff+int(n)]
		i = o.bodyOff + int(n)
	}
	o.size = i
	return nil
}

func readBytes(p []byte, i int) ([]byte, int, bool) {
	n, w := binary.Uvarint(p[i:])
	// A length must be in its shortest form (a last byte of 0 after a
	// continuation is a padded encoding no writer produces).
	if w <= 0 || (w > 1 && p[i+w-1] == 0) || n > uint64(len(p)-i-w) {
		return nil, i, false
	}
	i += w
	return p[i : i+int(n)], i + int(n), true
}

// Bounds on what one write puts in the log (not durable: records written
// under other bounds replay the same).
//
// maxRecordPayload: Commit writes a batch larger than this as a
// transaction group of several records, each at most this size, split
// between operations (an operation larger than it gets a record of its
// own); recovery applies the group whole or not at all.
//
// maxOpBody and maxOpElems: the operations that carry many elements (adds,
// removes, pushes, a collection's rebuild) are split into operations of at
// most maxOpBody body bytes (an element larger than that gets an operation
// of its own), and a rebuild also puts at most maxOpElems elements in one,
// so a multi-GB collection or *STORE result never needs a multi-GB record.
const (
	maxRecordPayload = 1 << 20
	maxOpBody        = 256 << 10
	maxOpElems       = 1024
)

// borrowMin is the value size from which Set borrows the value instead of
// copying it into the batch: Commit hands it to the wal as a part of the
// record's payload (written with pwritev, wal.DirectMin), so a 100 MB SET
// copies its value once, from the request into the log.
const borrowMin = 1 << 20

// Batch collects the operations of one command. Methods only encode;
// nothing is visible until Keyspace.Commit writes it as one record.
//
// Set borrows a value of at least borrowMin bytes: the batch keeps the
// slice, not a copy, until Commit or Reset, and the caller must not
// change those bytes meanwhile (a command's arguments, a value in the
// mapping, a freshly built result all qualify). Commit lets go of them,
// written or not, so such a batch is committed once.
type Batch struct {
	buf []byte
	n   int
	// borrowed are the values Set did not copy, in order: each belongs
	// in the payload at offset at of buf (where its length prefix ends).
	borrowed []borrowedValue
	nBorrow  int // bytes in borrowed
	// spent: Commit let go of the borrowed values (a 512 MB request
	// buffer must not stay reachable until the next write); the batch
	// cannot be committed again until Reset.
	spent bool
	// err, once set, is what Commit answers instead of writing: the
	// batch names a value that cannot be read (a RENAME, MOVE or COPY of
	// a damaged key), so writing it would lose that key.
	err error
	// scratch is Scratch's buffer, kept across batches.
	scratch []byte
	// objDBs has bit db set for each database an object operation of
	// the batch names (prepareBatch).
	objDBs uint16
	// patches: the batch holds a string patch (opSetRange, opHLLAdd).
	patches bool
}

// errSpent is what Commit answers for a batch whose borrowed values it
// already let go of.
var errSpent = errors.New("ERR internal error: a batch holding borrowed values was committed twice")

// letGo drops the borrowed values after Commit (their sizes stay counted
// in Size): nothing of the caller's stays reachable through the batch.
func (b *Batch) letGo() {
	for i := range b.borrowed {
		b.borrowed[i].val = nil
	}
	b.spent = true
}

// fail makes Commit answer err instead of writing the batch (the first
// such error counts).
func (b *Batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// borrowedValue is a value Set borrowed and where it goes in buf.
type borrowedValue struct {
	start int // where the set operation starts in buf
	at    int // where its value goes (the end of its bytes in buf)
	val   []byte
}

// split cuts the batch's payload into runs of whole operations of at
// most limit bytes each, as splitPayload does, counting borrowed values
// where they go; it returns each run's end (offsets in the payload).
func (b *Batch) split(limit int) ([]int, error) {
	if len(b.borrowed) == 0 {
		return splitPayload(b.buf, limit)
	}
	var ends []int
	start, pos, next := 0, 0, 0 // payload offsets; next borrowed value
	for off := 0; off < len(b.buf); {
		var size, bufSize int
		if next < len(b.borrowed) && b.borrowed[next].start == off {
			v := b.borrowed[next]
			bufSize, size = v.at-off, v.at-off+len(v.val)
			next++
		} else {
			o, err := decodeOp(b.buf[off:])
			if err != nil {
				return nil, err
			}
			bufSize, size = o.size, o.size
		}
		if pos > start && pos+size-start > limit {
			ends = append(ends, pos)
			start = pos
		}
		off += bufSize
		pos += size
	}
	return append(ends, pos), nil
}

// partsIn returns the payload bytes [start, end) (payload offsets, as
// split returns) as parts to concatenate, borrowed values in place.
func (b *Batch) partsIn(start, end int) [][]byte {
	var parts [][]byte
	pos := 0 // payload offset of the piece below
	add := func(p []byte) {
		lo, hi := max(start, pos), min(end, pos+len(p))
		if lo < hi {
			parts = append(parts, p[lo-pos:hi-pos])
		}
		pos += len(p)
	}
	from := 0
	for _, v := range b.borrowed {
		add(b.buf[from:v.at])
		add(v.val)
		from = v.at
	}
	add(b.buf[from:])
	return parts
}

// parts returns the batch's payload as the parts to concatenate: buf cut
// around the borrowed values.
func (b *Batch) parts() [][]byte {
	parts := make([][]byte, 0, 2*len(b.borrowed)+1)
	start := 0
	for _, v := range b.borrowed {
		parts = append(parts, b.buf[start:v.at], v.val)
		start = v.at
	}
	return append(parts, b.buf[start:])
}

// materialize copies the borrowed values into buf, for the path that
// reads the payload as one slice (the BeforeWrite hook).
func (b *Batch) materialize() {
	if len(b.borrowed) == 0 {
		return
	}
	buf := make([]byte, 0, len(b.buf)+b.nBorrow)
	for _, p := range b.parts() {
		buf = append(buf, p...)
	}
	b.buf = buf
	clear(b.borrowed)
	b.borrowed, b.nBorrow = b.borrowed[:0], 0
}

func (b *Batch) head(kind byte, db int) {
	if db < 0 || db >= NumDBs {
		panic(fmt.Sprintf("keyspace: db %d out of range", db))
	}
	b.buf = append(b.buf, kind, byte(db))
	b.n++
	if kind >= opObjectBase {
		b.objDBs |= 1 << db
		b.patches = b.patches || kind == opSetRange || kind == opHLLAdd
	}
}

func (b *Batch) bytes(p []byte) {
	b.buf = binary.AppendUvarint(b.buf, uint64(len(p)))
	b.buf = append(b.buf, p...)
}

// itemOps appends operations of kind whose bodies are items, each a uvarint
// length and the bytes, encoded straight into the batch (no body copy:
// HSET and SADD are hot paths). The items are split into several
// operations when one body would exceed maxOpBody, between groups of unit
// items (a hash field stays with its value); a group larger than that gets
// an operation of its own. No items still writes one, empty, operation.
func (b *Batch) itemOps(kind byte, db int, key []byte, items [][]byte, unit int) {
	for start := 0; ; {
		n, end := 0, start
		for end < len(items) {
			next := min(end+unit, len(items))
			g := 0
			for _, p := range items[end:next] {
				g += uvarintLen(uint64(len(p))) + len(p)
			}
			if end > start && n+g > maxOpBody {
				break
			}
			n, end = n+g, next
		}
		b.head(kind, db)
		b.bytes(key)
		b.buf = binary.AppendUvarint(b.buf, uint64(n))
		for _, p := range items[start:end] {
			b.bytes(p)
		}
		if start = end; start >= len(items) {
			return
		}
	}
}

// opChunker writes the elements of a collection's rebuild as operations of
// one kind, each holding at most maxOpElems elements and, unless one
// element is larger, maxOpBody body bytes. Per element: room(size of its
// encoding), then append the encoding to body; flush at the end.
type opChunker struct {
	b    *Batch
	kind byte
	db   int
	key  []byte
	body []byte
	k    int // elements in body
}

func (c *opChunker) room(n int) {
	if c.k > 0 && (c.k == maxOpElems || len(c.body)+n > maxOpBody) {
		c.flush()
	}
	c.k++
}

func (c *opChunker) flush() {
	if c.k > 0 {
		c.b.ObjectOp(c.kind, c.db, c.key, c.body)
		c.body, c.k = c.body[:0], 0
	}
}

// splitPayload cuts a batch payload into runs of whole operations of at
// most limit bytes each (one operation larger than limit is a run of its
// own). It returns the end offset of each run.
func splitPayload(p []byte, limit int) ([]int, error) {
	var ends []int
	start := 0
	for off := 0; off < len(p); {
		o, err := decodeOp(p[off:])
		if err != nil {
			return nil, err
		}
		if off > start && off+o.size-start > limit {
			ends = append(ends, off)
			start = off
		}
		off += o.size
	}
	return append(ends, len(p)), nil
}

// Set stores a string value with an absolute expiry (Unix ms, 0 = none).
// A value of at least borrowMin bytes is borrowed, not copied (see Batch).
func (b *Batch) Set(db int, key, val []byte, expireAtMs int64) {
	start := len(b.buf)
	b.head(opSet, db)
	b.bytes(key)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(expireAtMs))
	if len(val) < borrowMin {
		b.bytes(val)
		return
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(len(val)))
	b.borrowed = append(b.borrowed, borrowedValue{start: start, at: len(b.buf), val: val})
	b.nBorrow += len(val)
}

// SetRef gives key the value of the set operation at base (a location),
// with an absolute expiry (Unix ms, 0 = none): an opSetRef (valueref.go).
func (b *Batch) SetRef(db int, key []byte, base uint64, expireAtMs int64) {
	b.head(opSetRef, db)
	b.bytes(key)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(expireAtMs))
	b.buf = binary.AppendUvarint(b.buf, base)
}

// Del deletes key (no-op at apply time if it does not exist).
func (b *Batch) Del(db int, key []byte) {
	b.head(opDel, db)
	b.bytes(key)
}

// FlushDB deletes every key of db.
func (b *Batch) FlushDB(db int) { b.head(opFlushDB, db) }

// FlushAll deletes every key of every database.
func (b *Batch) FlushAll() { b.head(opFlushAll, 0) }

// SwapDB exchanges the contents of two databases.
func (b *Batch) SwapDB(a, c int) {
	if c < 0 || c >= NumDBs {
		panic(fmt.Sprintf("keyspace: db %d out of range", c))
	}
	b.head(opSwapDB, a)
	b.buf = append(b.buf, byte(c))
}

// Len is the number of operations in the batch.
func (b *Batch) Len() int { return b.n }

// Size is the encoded size of the batch in bytes.
func (b *Batch) Size() int { return len(b.buf) + b.nBorrow }

// Reset empties the batch for reuse (and lets go of borrowed values).
func (b *Batch) Reset() {
	b.buf, b.n, b.err, b.spent, b.objDBs, b.patches = b.buf[:0], 0, nil, false, 0, false
	clear(b.borrowed)
	b.borrowed, b.nBorrow = b.borrowed[:0], 0
}

// DescribePayload renders a batch payload for persimmon-check dump: one line
// per operation.
func DescribePayload(p []byte) ([]string, error) {
	var out []string
	for len(p) > 0 {
		o, err := decodeOp(p)
		if err != nil {
			return out, err
		}
		switch o.kind {
		case opSet:
			out = append(out, fmt.Sprintf("set db=%d key=%q expire_at_ms=%d value_bytes=%d", o.db, clip(o.key), o.expireAt, len(o.val)))
		case opSetRef:
			out = append(out, fmt.Sprintf("setref db=%d key=%q expire_at_ms=%d base=%d:%d", o.db, clip(o.key), o.expireAt, o.ref>>40, o.ref&(1<<40-1)))
		case opDel:
			out = append(out, fmt.Sprintf("del db=%d key=%q", o.db, clip(o.key)))
		case opFlushDB:
			out = append(out, fmt.Sprintf("flushdb db=%d", o.db))
		case opFlushAll:
			out = append(out, "flushall")
		case opSwapDB:
			out = append(out, fmt.Sprintf("swapdb %d %d", o.db, o.db2))
		case opClock:
			out = append(out, fmt.Sprintf("clock ms=%d", int64(binary.LittleEndian.Uint64(o.body))))
		case opReplPosition:
			if rp, err := decodeReplPosition(o.body); err == nil {
				out = append(out, fmt.Sprintf("replication position replid=%q offset=%d db=%d", rp.replid, rp.offset, rp.db))
			}
		default:
			out = append(out, fmt.Sprintf("object op %d db=%d key=%q body_bytes=%d", o.kind, o.db, clip(o.key), len(o.body)))
		}
		p = p[o.size:]
	}
	return out, nil
}

func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

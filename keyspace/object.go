package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Collections (hashes, lists, sets, sorted sets) and the operations that
// change them.
//
// A collection lives in DRAM as a typed structure whose element bytes, where
// practical, are locations of bytes inside logged operations (served from the
// mapping). Every mutation is one object operation in the log:
//
//	kind u8 (>= opObjectBase) | db u8 | key | body
//
// where key and body are a uvarint length and the bytes; the body is the
// type's own encoding (see each type's file). Recovery applies them in log
// order exactly as live commands do, through the same apply function.
//
// Cleaning a collection: its operations since it was last written whole
// are spread over segments, and the object remembers the oldest segment
// that may hold one of them (firstSeg). When the cleaner cleans a segment at
// or after firstSeg and meets an operation of the object there, it rewrites
// the whole object as one batch (delete, the operations that rebuild it, its
// expiry; a large batch is several bounded records forming one group, see
// Keyspace.Commit), which makes every older operation of the key dead. So a key
// updated a million times keeps one compact copy alive, not a million
// records.
//
// Encodings. A hash, set or sorted set starts in Redis's small encoding
// (listpack, or intset for a set of integers) and converts to its big one
// (hashtable, skiplist) once it outgrows the thresholds; Redis never
// converts back, and RENAME, MOVE and COPY keep the converted encoding. The
// conversion itself needs no operation: it follows from the operations
// applied, so replay reaches it again. A rebuild does not replay those
// operations, so CopyValue ends the rebuild of a converted collection with
// an opBigEncoding, and the copy (or the cleaner's rewrite) is converted
// too, live and after recovery.
const (
	opObjectBase = 16
	// opExpire sets or clears (0) a collection's expiry: body is int64 LE.
	opExpire = 16
	// opBigEncoding has an empty body: the collection at key takes its big
	// encoding (see convertible) whatever its elements. A missing key or a
	// collection with one encoding ignores it. Records written before it
	// existed (no marker after a rebuild) replay as they always did.
	opBigEncoding = 60
)

// collection is the in-memory form of a hash, list, set or sorted set.
type collection interface {
	// typeName is the TYPE reply ("hash", "list", "set", "zset").
	typeName() string
	// length is the number of elements (the key is deleted at 0).
	length() int
	// rebuild appends to b the operations that recreate the collection
	// under (db, key) from nothing (the cleaner, COPY, RENAME, MOVE).
	rebuild(ks *Keyspace, b *Batch, db int, key []byte)
	// liveBytes estimates the log bytes its current state needs.
	liveBytes() int64
}

// convertible is a collection with a small and a big encoding (hash, set,
// sorted set). converted reports whether it has its big encoding; convert
// gives it that encoding for good.
type convertible interface {
	converted() bool
	convert()
}

// object is a collection plus what the keyspace tracks about it.
type object struct {
	coll     collection
	firstSeg uint64 // oldest segment that may hold a live operation of it
	bytes    int64  // liveBytes as last counted into Keyspace.liveBytes
	// anchored: the operation that created it came right after a delete of
	// its key in the same record (a rewrite whole: CopyValue, the cleaner,
	// RENAME, the *STORE commands). Replay then wipes whatever came before
	// firstSeg, so the cleaner drops older segments' operations of the key
	// without resetting it (see cleanOp).
	anchored bool
	// anchor is the location of the operation this incarnation of the key
	// began at (kixanchor.go), 0 for one that no operation naming its
	// database and key began (a string patched from a set, an entry SWAPDB
	// moved).
	anchor uint64
}

// objectApplier applies one object operation of a kind to the entry of
// (db, key): e is nil when the key does not exist (the applier creates it
// through ks.createObject if the op creates). Registered per kind by each
// type's file in objectAppliers.
type objectApplier func(ks *Keyspace, o op, e *entry) error

// objectAppliers maps an op kind to its applier: the one table of object
// operations, assembled from each type's register function.
var objectAppliers = buildObjectAppliers()

// Op kind ranges, one per type (durable: never renumber):
//
//	16      expire
//	17-18   hash  (hash.go)
//	19-29   list  (list.go)
//	30-39   set   (set.go)
//	40-49   zset  (zset.go)
//	50-59   patched strings (stringpatch.go; 51 HLL registers, hllpatch.go;
//	        52 a patched string's base, patchbase.go)
//	60      big encoding (any convertible collection)
//	61-69   TairRoaring bitmap (roaring.go)
//	70-89   stream (stream.go)
func buildObjectAppliers() map[byte]objectApplier {
	m := map[byte]objectApplier{opExpire: applyExpire, opBigEncoding: applyBigEncoding}
	for _, register := range []func(map[byte]objectApplier){registerHashOps, registerListOps, registerSetOps, registerZSetOps, registerStringOps, registerPatchBaseOps, registerRoaringOps, registerStreamOps} {
		register(m)
	}
	return m
}

// registerOp adds one applier; a kind registered twice is a programming
// error.
func registerOp(m map[byte]objectApplier, kind byte, fn objectApplier) {
	if _, dup := m[kind]; dup || kind < opObjectBase {
		panic(fmt.Errorf("keyspace: object op kind %d registered twice or out of range", kind))
	}
	m[kind] = fn
}

// ObjectOp appends an object operation with a prepared body.
func (b *Batch) ObjectOp(kind byte, db int, key, body []byte) {
	if kind < opObjectBase {
		panic(fmt.Sprintf("keyspace: object op kind %d below %d", kind, opObjectBase))
	}
	b.head(kind, db)
	b.bytes(key)
	b.bytes(body)
}

// Expire sets (or with 0 clears) the expiry of a collection key.
func (b *Batch) Expire(db int, key []byte, expireAtMs int64) {
	var body [8]byte
	binary.LittleEndian.PutUint64(body[:], uint64(expireAtMs))
	b.ObjectOp(opExpire, db, key, body[:])
}

func applyExpire(ks *Keyspace, o op, e *entry) error {
	if len(o.body) != 8 {
		return fmt.Errorf("%w: expire body of %d bytes", errBadOp, len(o.body))
	}
	if e == nil || e.obj == nil {
		return nil // the key went away, or is a string (strings carry their own expiry)
	}
	at := int64(binary.LittleEndian.Uint64(o.body))
	if ks.expiryHist != nil && at != 0 {
		k := string(append([]byte{byte(o.db)}, o.key...))
		if old, ok := ks.expiryHist[k]; !ok || at < old {
			ks.expiryHist[k] = at
		}
	}
	d := ks.dbs[o.db]
	if ks.dropsAtExpiry(o.db, o.key, at) {
		ks.removeKey(o.db, e.key)
		return nil
	}
	if at != 0 && ks.rx.on {
		ks.trackExpiry(o.db, o.key)
	}
	if e.expireAt != 0 {
		d.volatile--
	}
	e.expireAt = at
	if at != 0 {
		d.volatile++
		ks.expires.push(expiryItem{at: at, db: o.db, key: e.key})
	}
	return nil
}

// BigEncoding marks the collection at key as converted to its big encoding
// (opBigEncoding).
func (b *Batch) BigEncoding(db int, key []byte) { b.ObjectOp(opBigEncoding, db, key, nil) }

func applyBigEncoding(ks *Keyspace, o op, e *entry) error {
	if len(o.body) != 0 {
		return fmt.Errorf("%w: big-encoding body of %d bytes", errBadOp, len(o.body))
	}
	if e == nil || e.obj == nil {
		return nil
	}
	if c, ok := e.obj.coll.(convertible); ok {
		c.convert()
	}
	return nil
}

// lookupObject returns the live entry of key if it holds a collection of
// the given type name; ErrWrongType if it holds something else; nil, nil if
// it does not exist.
func (ks *Keyspace) lookupObject(db int, key []byte, typ string) (*entry, error) {
	e := ks.lookup(db, key)
	if e == nil {
		return nil, nil
	}
	if err := damageOf(e); err != nil {
		return nil, err
	}
	if e.obj == nil || e.obj.coll.typeName() != typ {
		return nil, ErrWrongType
	}
	return e, nil
}

// createObject inserts a new collection under (db, key), which must not
// exist, created by the operation at loc.
func (ks *Keyspace) createObject(db int, key []byte, c collection, loc uint64) *entry {
	d := ks.dbs[db]
	anchored := ks.lastDel.ok && ks.lastDel.db == db && string(ks.lastDel.key) == string(key)
	d.insert(entry{key: string(key), obj: &object{coll: c, firstSeg: loc >> 40, anchored: anchored}})
	ks.keyCreated(db, key)
	e := &d.entries[d.index[string(key)]]
	ks.anchorAdd(db, e, loc)
	if ks.expiryHist != nil {
		delete(ks.expiryHist, string(append([]byte{byte(db)}, key...))) // a new incarnation
	}
	return e
}

// objectChanged re-counts the live bytes of e's collection after an
// operation and deletes the key if the collection became empty.
func (ks *Keyspace) objectChanged(db int, e *entry) {
	if e.obj.coll.length() == 0 {
		ks.removeKey(db, e.key)
		return
	}
	n, old := e.obj.coll.liveBytes(), e.obj.bytes
	ks.liveBytes += n - old
	e.obj.bytes = n
	ks.anchorBytesChanged(e, old)
}

// applyObject applies an object operation; it sets o.loc.
func (ks *Keyspace) applyObject(o *op, loc uint64) error {
	fn := objectAppliers[o.kind]
	if fn == nil {
		return fmt.Errorf("%w: no applier for kind %d", errBadOp, o.kind)
	}
	o.loc = loc
	d := ks.dbs[o.db]
	var e *entry
	if i, ok := d.index[string(o.key)]; ok {
		e = &d.entries[i]
	} else {
		e = ks.rawEntry(o.db, o.key) // transient: an applier that changes a string materializes it
	}
	// A key whose time had passed when the operation was written was
	// gone then (applyclock.go): the operation begins a new one.
	if e != nil && ks.expiredApplying(e.expireAt) && !ks.keepExpiredApply() {
		ks.expire(o.db, e.key)
		e = nil
	}
	err := fn(ks, *o, e)
	if err != nil && ks.replaying {
		// See errStaleOp.
		if errors.Is(err, errOpType) && e != nil {
			ks.removeKey(o.db, e.key)
			err = fn(ks, *o, nil)
		}
		if errors.Is(err, errStaleOp) || errors.Is(err, errOpType) {
			ks.replaySkipped++
			err = nil
		}
	}
	if err != nil {
		return err
	}
	ks.touch(o.db, o.key)
	return nil
}

// bytesAt returns the uvarint-prefixed bytes stored at a packed location
// (a value inside a logged operation).
func (ks *Keyspace) bytesAt(loc uint64) []byte {
	seg := ks.arena.Segment(loc >> 40)
	if seg == nil {
		panic(fmt.Sprintf("keyspace: location %#x names a missing segment", loc))
	}
	b, _, ok := readBytes(seg.Bytes(), int(loc&(1<<40-1)))
	if !ok {
		panic(fmt.Sprintf("keyspace: location %#x holds no value", loc))
	}
	return b
}

// CopyValue appends to b the operations that give (dstDB, dst) the value
// of (srcDB, src) with the expiry expireAtMs: a string Set, or for a
// collection a delete of dst, the operations rebuilding it, the marker of
// its big encoding if it has converted (Redis's RENAME and MOVE move the
// object, and COPY duplicates its encoding), and its expiry. It returns
// false when src does not exist. A damaged src (ErrDamaged) adds nothing
// and makes Commit of b answer the damage, so the key is kept as it is.
// (RENAME, COPY, MOVE, and the cleaner's rewrite.)
func (ks *Keyspace) CopyValue(b *Batch, srcDB int, src []byte, dstDB int, dst []byte, expireAtMs int64) bool {
	e := ks.lookup(srcDB, src)
	if e == nil {
		return false
	}
	return ks.copyEntry(b, e, dstDB, dst, expireAtMs)
}

// copyEntry is CopyValue of the entry e, found already (the cleaner's
// copy of a key it keeps although its time has passed).
func (ks *Keyspace) copyEntry(b *Batch, e *entry, dstDB int, dst []byte, expireAtMs int64) bool {
	if err := damageOf(e); err != nil {
		// Nothing to copy: the commit answers the damage (and RENAME's
		// or MOVE's delete of the source is not written).
		b.fail(err)
		return true
	}
	if e.obj == nil {
		b.Set(dstDB, dst, ks.value(e), expireAtMs)
		return true
	}
	if s, ok := e.obj.coll.(*stringObj); ok {
		b.Set(dstDB, dst, s.value(ks), expireAtMs)
		return true
	}
	b.Del(dstDB, dst)
	e.obj.coll.rebuild(ks, b, dstDB, dst)
	if c, ok := e.obj.coll.(convertible); ok && c.converted() {
		b.BigEncoding(dstDB, dst)
	}
	if expireAtMs != 0 {
		b.Expire(dstDB, dst, expireAtMs)
	}
	return true
}

// SetExpire appends to b what changes key's expiry to expireAtMs (0 =
// persist): a re-Set of a string's value (a reference to it for a large
// one), or an expire operation for a collection. It returns false when the key does not exist.
func (ks *Keyspace) SetExpire(b *Batch, db int, key []byte, expireAtMs int64) bool {
	e := ks.lookup(db, key)
	if e == nil {
		return false
	}
	switch base := ks.refValue(e); {
	case base != 0:
		b.SetRef(db, key, base, expireAtMs) // a large value is not copied (valueref.go)
	case e.obj == nil:
		b.Set(db, key, ks.value(e), expireAtMs)
	default:
		b.Expire(db, key, expireAtMs)
	}
	return true
}

// ObjectEncoding returns what OBJECT ENCODING replies for a collection
// ("listpack", "hashtable", "intset", "quicklist", "skiplist", following
// Redis 7.0's conversion rules as each type tracks them). isString is true
// when the key holds a string (the caller derives its encoding from the
// value); ok is false when the key does not exist.
func (ks *Keyspace) ObjectEncoding(db int, key []byte) (enc string, isString, ok bool) {
	e := ks.peek(db, key)
	switch {
	case e == nil:
		return "", false, false
	case e.obj == nil:
		return "", true, true
	}
	if _, ok := e.obj.coll.(*stringObj); ok {
		return "raw", false, true // Redis: a string changed in place is raw
	}
	if en, has := e.obj.coll.(interface{ encoding() string }); has {
		return en.encoding(), false, true
	}
	return "hashtable", false, true
}

package keyspace

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/persimmon-db/persimmon/keyindex"
	"github.com/persimmon-db/persimmon/wal"
)

// The persistent key index (package keyindex; "kix" here), when attached
// (AttachIndex), holds every string key whose value is one set operation,
// with or without an expiry, whatever its database. Such a key has no
// entry in its db's DRAM tables: its slot names the set operation holding
// its value, and the key, its database, its size and its expiry are read
// back from that operation (the slot's expiring bit only lets the
// active-expiry cursor skip the others). Everything else (collections,
// patched strings) keeps its DRAM entry as before; a key is in exactly one
// of the two. A DRAM entry with an anchor also has an anchor slot, under
// the database byte with kixAnchorNS set (kixanchor.go): IndexKeyAt reads
// an object operation's key back into that namespace, and every walk of
// the table over strings skips them (an anchor key's database byte is no
// database; its operation is not a set).
//
// Expiry of an indexed key. A lookup that finds its time passed removes
// it (a staged deletion, no record: expiry is absolute, so a restart that
// finds the slot again finds it expired again). The active-expiry cycle
// walks the table with a cursor (kixActiveExpire), reading slot words and
// decoding only the operations whose expiring bit is set, a bounded number
// per cycle, plus the staged writes while they are few: no DRAM structure
// per key and nothing to rebuild at restart, at the price of Redis's
// imprecision (an expired key nobody reads may stay in the table until the
// cursor reaches it; it is never served). The deletions by expiry are the
// only changes to the table not justified by a record, so after a crash
// inside a checkpoint (repair mode, where the table may hold any part of
// the checkpoint's writes) recovery recounts the keys, the keys with an
// expiry and the live bytes from the table (kixRecount: a read of every
// indexed operation, in that rare case only).
//
// The index's key is the database byte followed by the key. Writes are
// staged with the LSN of their record (held until the commit record of a
// transaction group) and published once durable (keyindex's invariant).
// FLUSHDB, FLUSHALL and SWAPDB invalidate the index's checkpoint durably
// before they change the table in bulk (a crash before the next
// checkpoint rebuilds it from the log); SWAPDB first moves the indexed
// keys of both databases into DRAM entries, since their operations name
// the database they were written in.
//
// Prefetch (called by the server with a pipelined batch's SET and GET
// keys) only asks the processor for the index's words, the records and
// the access-table slots those lookups will read; it changes nothing.

// kixState is the keyspace's side of the index.
type kixState struct {
	ix         *keyindex.Index
	keyBuf     []byte   // KeyAt's result
	lookBuf    []byte   // the composite key of a lookup
	pfBuf      []byte   // Prefetch's composite keys
	pfKeys     [][]byte // views of pfBuf
	lastCP     uint64   // LSN of the last checkpoint
	replayCP   uint64   // recovery: records up to this LSN are in the index already
	applyingTo uint64   // recovery: records up to this LSN were being applied by a checkpoint (repair mode)
	repaired   bool
	report     IndexReport
	counts     [NumDBs]int // indexed keys per database
	ttlCounts  [NumDBs]int // indexed keys with an expiry per database
	expPos     int         // the active-expiry cursor: the next slot position
	expGen     int         // the table generation expPos belongs to

	growing     bool          // kixGrow is running
	growStepMax time.Duration // longest growth step under the lock
	growErr     error         // the last growth's failure
	lastDRAM    uint64        // DRAM entries at the last checkpoint
	anchors     anchorState   // the anchored DRAM entries (kixanchor.go)

	endSeg, endOff uint64 // where the record after the last one appended (or replayed) starts
	// old is what kixExists read of the plain set operation a key's
	// lookup found (see oldMemo): the write that follows on SET's path
	// reads the same operation's size and expiry (kixOld) without
	// decoding it again.
	old       oldMemo
	metDamage uint64 // an unreadable slot IndexKeyAt met during the current lookup (damage.go)

	firstTail uint64 // recovery: location of the first record replayed after the checkpoint
	replayed  int64  // recovery: records replayed into the index
	swept     int

	checkpoints  atomic.Int64
	lastCPMicros atomic.Int64
	cpTimes      atomic.Pointer[CheckpointTimes] // the last checkpoint's breakdown
	cpHoldMax    atomic.Int64                    // longest checkpoint lock hold (µs) since ResetStats
	cpHolds1ms   atomic.Int64                    // checkpoints since ResetStats whose lock hold was 1 ms or more
	snap         atomic.Pointer[IndexStats]
}

// Checkpoint user words (keyindex.Checkpoint.User).
const (
	cpDRAMKeys     = iota // keys with a DRAM entry but no anchor slot at the checkpoint (and held bases): a restart from it needs the whole log replayed
	cpLiveBytes           // ks.liveBytes
	cpSwappedSeg          // ks.swappedSeg
	cpFlushAllSeg         // ks.flushAllSeg
	cpMagic               // cpMagicValue: written by this keyspace
	cpDRAMKeysBase        // all DRAM entries (anchored or not) at the checkpoint before (an applying block's base)
	cpFunctionsLoc        // location of the live function libraries' operation (0: none)
	cpReplPosLoc          // location of a replica's live replication position operation (0: none)
)

// cpMagicValue marks a checkpoint written by this keyspace, with anchor
// slots (kixanchor.go); cpMagicNoAnchors one of the keyspace before them,
// whose cpDRAMKeys counted every DRAM entry (still trusted when 0). A
// keyspace that knows only the latter does not trust the former.
const (
	cpMagicValue     = 0x6b69_7833 // "kix3"
	cpMagicNoAnchors = 0x6b69_7832 // "kix2": keys with an expiry are indexed
)

// Checkpoint user words of the anchored entries (kixanchor.go), after the
// per-database counts.
const (
	cpAnchorKeys  = cpTTLCounts + NumDBs + iota // DRAM entries with an anchor slot
	cpAnchorSeg                                 // segment of the oldest anchor (0: none)
	cpAnchorBytes                               // their live bytes
)

// kixOn reports whether the index is attached.
func (ks *Keyspace) kixOn() bool { return ks.kix.ix != nil }

// IndexKeyAt is the key index's KeyAt (keyindex.Options): the index key
// (database byte, then the key) of the set operation at loc; the bytes are
// valid until the next call.
func (ks *Keyspace) IndexKeyAt(loc uint64) ([]byte, bool) {
	if db, key, ok := ks.setKeyAt(loc); ok {
		ks.kix.keyBuf = append(append(ks.kix.keyBuf[:0], byte(db)), key...)
		return ks.kix.keyBuf, true
	}
	o, err := ks.opAt(loc)
	if err == nil && o.kind >= opObjectBase {
		// An anchor slot (kixanchor.go): the operation a DRAM entry began at.
		ks.kix.keyBuf = append(append(ks.kix.keyBuf[:0], byte(o.db)|kixAnchorNS), o.key...)
		return ks.kix.keyBuf, true
	}
	if err == nil && o.kind != opSet && o.kind != opSetRef {
		err = fmt.Errorf("%w: kind %d where the key index expects a string or an anchor", errBadOp, o.kind)
	}
	if err != nil {
		// A consistent table names only readable operations (a replay
		// may meet slots past a torn tail: not damage). Noted for
		// kixGet, and logged: a slot no lookup can match is never
		// skipped silently.
		if !ks.replaying {
			ks.kix.metDamage = loc
			ks.noteDamage(loc, nil, err)
		}
		return nil, false
	}
	ks.kix.keyBuf = append(append(ks.kix.keyBuf[:0], byte(o.db)), o.key...)
	return ks.kix.keyBuf, true
}

// setKeyAt is IndexKeyAt's fast path: the database and key of a well
// formed set operation (opSet or opSetRef) at loc, with decodeOp's checks
// of the whole operation but without building it (a lookup probe reads
// only the key; it is on every SET and GET). ok is false for anything
// else, which IndexKeyAt then decodes in full to say what is wrong.
func (ks *Keyspace) setKeyAt(loc uint64) (db int, key []byte, ok bool) {
	if rec, hit := ks.rcOn.get(loc); hit { // the record cache's copy: its page is not touched
		return setKeyOf(rec)
	}
	seg := ks.arena.Segment(loc >> 40)
	if seg == nil {
		return 0, nil, false
	}
	b := seg.Bytes()
	off := loc & (1<<40 - 1)
	if off >= uint64(len(b)) {
		return 0, nil, false
	}
	return setKeyOf(b[off:])
}

// setKeyOf is setKeyAt on the bytes at the operation's start.
func setKeyOf(p []byte) (db int, key []byte, ok bool) {
	if len(p) < 2 || p[0] != opSet && p[0] != opSetRef || int(p[1]) >= NumDBs {
		return 0, nil, false
	}
	key, i, ok := readBytes(p, 2)
	if !ok || len(p)-i < 8 {
		return 0, nil, false
	}
	i += 8
	if p[0] == opSet {
		if _, _, ok = readBytes(p, i); !ok {
			return 0, nil, false
		}
	} else if n, w := binary.Uvarint(p[i:]); w <= 0 || n == 0 {
		return 0, nil, false
	}
	return int(p[1]), key, true
}

func (ks *Keyspace) kixComposite(dbi int, key []byte) []byte {
	ks.kix.lookBuf = append(append(ks.kix.lookBuf[:0], byte(dbi)), key...)
	return ks.kix.lookBuf
}

// Prefetch prepares the lookups of keys in database db that commands
// about to run will make (a pipelined batch's keys): the key index asks
// the processor for their slots, overlay entries and records all at once,
// so that each lookup after it finds them in cache instead of waiting for
// its cache misses in turn (keyindex Prefetch). It changes nothing; the
// caller holds the lock.
func (ks *Keyspace) Prefetch(db int, keys [][]byte) {
	if !ks.kixOn() || db < 0 || db >= NumDBs || len(keys) < 2 {
		return
	}
	buf, kk := ks.kix.pfBuf[:0], ks.kix.pfKeys[:0]
	for _, k := range keys {
		buf = append(append(buf, byte(db)), k...)
	}
	off := 0
	for _, k := range keys {
		kk = append(kk, buf[off:off+1+len(k)])
		off += 1 + len(k)
	}
	ks.kix.pfBuf, ks.kix.pfKeys = buf, kk
	ks.kix.ix.Prefetch(kk, ks.prefetchAt)
}

// prefetchAt is Prefetch's view of what a command reads for the indexed
// key whose operation is at loc: the bytes of the segment from loc on
// (nil if loc names no segment's byte), and its access data's slot (a
// GET's touch reads it; nil before the table is made).
func (ks *Keyspace) prefetchAt(loc uint64) (record []byte, side unsafe.Pointer) {
	if ks.kixAccess.slots != nil {
		side = unsafe.Pointer(ks.kixAccess.slot(loc))
	}
	seg := ks.arena.Segment(loc >> 40)
	if seg == nil {
		return nil, side
	}
	b := seg.Bytes()
	if off := loc & (1<<40 - 1); off < uint64(len(b)) {
		return b[off:], side
	}
	return nil, side
}

// kixGet returns the location of the indexed plain string (dbi, key).
func (ks *Keyspace) kixGet(dbi int, key []byte) (uint64, bool) {
	if !ks.kixOn() {
		return 0, false
	}
	ks.kix.metDamage = 0
	loc, ok := ks.kix.ix.Get(ks.kixComposite(dbi, key))
	if !ok && ks.kix.metDamage != 0 {
		// The probe met an unreadable slot with the key's tag: it may be
		// the key's, so the key reads as damaged (kixEntry), not missing.
		return ks.kix.metDamage, true
	}
	return loc, ok
}

// kixEntry makes a transient entry for an indexed key (its fields are
// read from the set operation; changing them changes nothing). A slot
// whose operation cannot be read (damage: see damagedValue) gives an
// entry holding the damage, which reads answer as an error.
func (ks *Keyspace) kixEntry(key string, loc uint64) *entry {
	o, err := ks.opAt(loc)
	if err == nil && o.kind == opSetRef && !ks.replaying {
		_, _, err = ks.stringAt(loc) // its base must be there too (a replay may meet it cleaned: valueref.go)
	}
	if err == nil && o.kind != opSet && o.kind != opSetRef {
		err = fmt.Errorf("%w: kind %d where the key index expects a string", errBadOp, o.kind)
	}
	if err != nil {
		return ks.damagedEntry(key, loc, o, err)
	}
	return &entry{key: key, loc: loc, size: uint32(ks.stringLiveSize(o)), expireAt: o.expireAt, kix: true}
}

// kixOld returns the live size and expiry of the indexed string at loc,
// as kixEntry's entry has them, without making the entry for a plain
// set operation (a write replacing it reads them on every SET).
func (ks *Keyspace) kixOld(loc uint64) (size uint32, expireAt int64) {
	if m := &ks.kix.old; m.loc == loc && loc != 0 {
		m.loc = 0
		return m.size, m.expireAt
	}
	var o op
	if err := ks.opInto(loc, &o); err == nil && o.kind == opSet {
		return uint32(o.size), o.expireAt
	}
	e := ks.kixEntry("", loc)
	return e.size, e.expireAt
}

// kixLookup returns a transient entry for the indexed key (dbi, key), or
// nil if it is not indexed; a key whose expiry has passed is removed
// (counted as expired) and nil returned.
func (ks *Keyspace) kixLookup(dbi int, key []byte) *entry {
	loc, ok := ks.kixGet(dbi, key)
	if !ok {
		return nil
	}
	e := ks.kixEntry(string(key), loc)
	if !ks.liveAt(e.expireAt) {
		if !ks.keepExpired() { // CLIENT PAUSE, a replica: read as missing, kept
			ks.expire(dbi, e.key)
		}
		return nil
	}
	return e
}

// kixExists is Exists for a key without a DRAM entry: find's peek
// without making a transient entry (no allocation: it is on every SET).
// A key it cannot vouch for cheaply (expired, damaged, a value reference)
// takes find's path, which does what that needs.
func (ks *Keyspace) kixExists(dbi int, key []byte) bool {
	loc, ok := ks.kixGet(dbi, key)
	if !ok {
		ks.countLookup(false)
		ks.keyMissed(dbi, key)
		return false
	}
	var o op
	if err := ks.opInto(loc, &o); err != nil || o.kind != opSet || ks.expiredNow(o.expireAt) {
		return ks.peek(dbi, key) != nil
	}
	ks.kix.old = oldMemo{loc: loc, size: uint32(o.size), expireAt: o.expireAt}
	ks.countLookup(true)
	return true
}

// kixString is Get for a key without a DRAM entry: the value of a plain
// string straight from its set operation, with find's lookup counting,
// miss notification and access touch, but without find's transient entry
// (two allocations, on every GET). done is false for a key it cannot
// vouch for cheaply (expired, damaged, a value reference): Get then takes
// find's path, which does what that needs.
func (ks *Keyspace) kixString(dbi int, key []byte) (val []byte, ok, done bool) {
	loc, found := ks.kixGet(dbi, key)
	if !found {
		ks.countLookup(false)
		ks.keyMissed(dbi, key)
		return nil, false, true
	}
	var o op
	if err := ks.opInto(loc, &o); err != nil || o.kind != opSet || ks.expiredNow(o.expireAt) {
		return nil, false, false
	}
	ks.countLookup(true)
	ks.kixAccess.touch(loc)
	return o.val, true, true
}

// oldMemo is the size and expiry of the plain set operation (opSet) at
// loc, as decoded by the last kixExists (loc 0: none). An operation's
// bytes never change while its segment exists and segment ids are never
// reused, so the memo stays true of loc; it is still dropped once used
// and after every applied record (applyRecord), so that it only ever
// carries a lookup to the write of the same command. It saves SET the
// second decode of the record it replaces (a decode was 3% of the
// server's CPU at SET -P 16).
type oldMemo struct {
	loc      uint64
	size     uint32
	expireAt int64
}

// kixHolds reports whether the indexed key (dbi, key) exists and has not
// expired at now, changing nothing.
func (ks *Keyspace) kixHolds(dbi int, key []byte, now int64) bool {
	loc, ok := ks.kixGet(dbi, key)
	if !ok {
		return false
	}
	var o op
	return ks.opInto(loc, &o) == nil && !expiredAt(o.expireAt, now)
}

// kixWrite records (dbi, key) -> loc (0: deleted; expiring: the operation
// has an expiry) in the index: staged until the next checkpoint, or, while
// recovery replays the records a checkpoint was applying (AttachIndex),
// stored at once in repair mode.
func (ks *Keyspace) kixWrite(dbi int, key []byte, loc uint64, expiring bool) {
	ks.kixWriteKey(ks.kixComposite(dbi, key), loc, expiring)
}

// kixWriteKey is kixWrite of an index key k (a string's or an anchor's).
func (ks *Keyspace) kixWriteKey(k []byte, loc uint64, expiring bool) {
	var err error
	if loc != 0 {
		ks.kix.ix.SetNewest(loc >> 40)
	}
	if ks.replaying && ks.curLSN <= ks.kix.applyingTo {
		err = ks.kix.ix.Apply(k, loc, expiring)
	} else {
		err = ks.kix.ix.Stage(k, loc, expiring)
	}
	if err != nil {
		panic(fmt.Sprintf("keyspace: key index: %v", err))
	}
}

// kixRemove removes the indexed key (dbi, key) if it is there, with the
// accounting removeKey does; it reports whether it was.
func (ks *Keyspace) kixRemove(dbi int, key []byte) bool {
	if ks.kixRepairing() {
		ks.kixWrite(dbi, key, 0, false) // repair mode removes every copy; counts come from the checkpoint
		return false
	}
	loc, ok := ks.kixGet(dbi, key)
	if !ok {
		return false
	}
	size, expireAt := ks.kixOld(loc)
	ks.liveBytes -= int64(size)
	ks.dropString(dbi, string(key), loc, 0)
	ks.kixWrite(dbi, key, 0, false)
	ks.kix.counts[dbi]--
	if expireAt != 0 {
		ks.kix.ttlCounts[dbi]--
	}
	return true
}

// kixRepairing reports whether recovery is replaying the records a
// checkpoint was applying when the process stopped: the table may hold
// any part of their writes, so nothing is counted (the checkpoint's
// counters already include them).
func (ks *Keyspace) kixRepairing() bool {
	return ks.replaying && ks.kix.applyingTo != 0 && ks.curLSN <= ks.kix.applyingTo
}

// kixMaterialize moves the indexed key of e (a transient entry) into a
// DRAM entry of its db and returns that entry. The key's access data
// (OBJECT IDLETIME, FREQ) moves with it: the command patching it has
// recorded its access already, and a fresh field reset an LFU counter to
// its initial value at every first patch (Redis keeps it: the value
// changes in place).
func (ks *Keyspace) kixMaterialize(dbi int, e *entry) *entry {
	ks.kixWrite(dbi, []byte(e.key), 0, false)
	ks.kix.counts[dbi]--
	d := ks.dbs[dbi]
	d.insert(entry{key: e.key, loc: e.loc, size: e.size, expireAt: e.expireAt})
	ne := &d.entries[d.index[e.key]]
	if !ks.replaying {
		ne.lru = ks.kixAccess.field(e.loc)
	}
	if e.expireAt != 0 {
		ks.kix.ttlCounts[dbi]--
		d.volatile++
		ks.expires.push(expiryItem{at: e.expireAt, db: dbi, key: e.key})
	}
	return ne
}

// kixInvalidate makes the index's checkpoint void (durably) before a bulk
// change, so that a crash before the next checkpoint rebuilds the index
// from the log, and publishes every staged write.
func (ks *Keyspace) kixInvalidate() {
	if err := ks.kix.ix.Invalidate(); err != nil {
		panic(fmt.Sprintf("keyspace: key index: %v", err))
	}
}

// kixFlushDB removes every indexed key of the databases in dbs (all of
// them for nil), calling each for each key removed.
func (ks *Keyspace) kixFlushDB(dbs []int, each func(key []byte, loc uint64)) {
	ks.kixInvalidate()
	if dbs == nil && each == nil {
		ks.kix.ix.Clear()
		ks.kix.counts = [NumDBs]int{}
		ks.kix.ttlCounts = [NumDBs]int{}
		return
	}
	ks.kix.ix.RemoveIf(func(loc uint64) bool {
		o, err := ks.opAt(loc)
		if err != nil || dbs != nil && !slices.Contains(dbs, o.db) {
			return false
		}
		if o.kind >= opObjectBase {
			return true // an anchor slot: the caller drops the entries' anchors (anchorsUnindexed)
		}
		if each != nil {
			each(o.key, loc)
		}
		return true
	})
	for _, d := range dbs {
		ks.kix.counts[d] = 0
		ks.kix.ttlCounts[d] = 0
	}
}

// kixLen is the number of indexed keys of dbi.
func (ks *Keyspace) kixLen(dbi int) int {
	if !ks.kixOn() {
		return 0
	}
	return ks.kix.counts[dbi]
}

// kixRandom returns a random indexed key of dbi.
func (ks *Keyspace) kixRandom(dbi int) (string, bool) {
	if ks.kixLen(dbi) == 0 {
		return "", false
	}
	found := ""
	ok := false
	now := ks.NowMs()
	ks.kix.ix.RangeStaged(func(k string, loc uint64, _ bool) bool {
		if loc != 0 && int(k[0]) == dbi && rand.IntN(4) == 0 && ks.kixHolds(dbi, []byte(k[1:]), now) {
			found, ok = k[1:], true
			return false
		}
		return true
	})
	if ok {
		return found, true
	}
	slots := ks.kix.ix.Stats().Slots
	for tries := 0; tries < 64; tries++ {
		loc, any := ks.kix.ix.RandomLoc(rand.IntN(slots))
		if !any {
			break
		}
		if o, err := ks.opAt(loc); err == nil && o.db == dbi && !expiredAt(o.expireAt, now) {
			if l, ok := ks.kixGet(dbi, o.key); ok && l == loc {
				return string(o.key), true
			}
		}
	}
	// Few keys of dbi among many: walk. The empty name is a key like any
	// other, so the walk says whether it found one.
	var key string
	walked := false
	ks.kixKeys(dbi, func(k string) bool { key, walked = k, true; return false })
	return key, walked
}

// kixKeys calls fn for every indexed key of dbi that has not expired
// until fn returns false.
func (ks *Keyspace) kixKeys(dbi int, fn func(key string) bool) {
	if !ks.kixOn() {
		return
	}
	now := ks.NowMs()
	var staged []string
	ks.kix.ix.RangeStaged(func(k string, loc uint64, _ bool) bool {
		if loc != 0 && int(k[0]) == dbi && ks.kixHolds(dbi, []byte(k[1:]), now) {
			staged = append(staged, k[1:])
		}
		return true
	})
	for _, k := range staged {
		if !fn(k) {
			return
		}
	}
	ks.kix.ix.Range(func(loc uint64) bool {
		o, err := ks.opAt(loc)
		if err != nil || o.db != dbi || expiredAt(o.expireAt, now) {
			return true
		}
		if l, ok := ks.kixGet(dbi, o.key); !ok || l != loc {
			return true // superseded by a staged write (visited above) or deleted
		}
		return fn(string(o.key))
	})
}

// AttachIndex attaches the persistent key index to a keyspace made by
// NewRecovering, before any record is replayed; cp and ok are what
// keyindex.Open found. If the checkpoint can be trusted (written by this
// keyspace, with no DRAM entry without an anchor at the time: every key
// then was a plain string in the index or a DRAM entry whose anchor slot
// is there) the keyspace takes its counters from it and from returns the
// checkpoint's LSN: recovery replays only the records after it, and of
// those up to it only the anchored entries' operations from the oldest
// anchor's segment on (AnchorScanFrom; ReplayRecord skips the others);
// after a crash inside a checkpoint whose base had no DRAM entry, from
// the base in repair mode. Otherwise the index is emptied and from is 0:
// the whole log is replayed into it.
func (ks *Keyspace) AttachIndex(ix *keyindex.Index, cp keyindex.Checkpoint, ok bool) (from uint64, err error) {
	ks.kix.ix = ix
	magic := cp.User[cpMagic]
	trusted := ok && (magic == cpMagicValue || magic == cpMagicNoAnchors) && cp.User[cpDRAMKeys] == 0
	if trusted && cp.Applying && (cp.BaseLSN == 0 || cp.User[cpDRAMKeysBase] != 0) {
		trusted = false // no base to start from, or one with DRAM entries
	}
	var anchored, anchorSeg, anchorBytes uint64
	if trusted && magic == cpMagicValue && !cp.Applying {
		// A repair replays everything after a base without DRAM entries;
		// otherwise the anchored entries are rebuilt by the scan from the
		// oldest anchor (kixAnchorWanted), whose segment must be there.
		anchored, anchorSeg, anchorBytes = cp.User[cpAnchorKeys], cp.User[cpAnchorSeg], cp.User[cpAnchorBytes]
		if anchored != 0 && (anchorSeg == 0 || ks.arena.Segment(anchorSeg) == nil || anchorBytes > cp.User[cpLiveBytes]) {
			trusted = false
		}
	}
	if trusted && cp.User[cpFunctionsLoc] != 0 {
		// The function libraries are not in the table: read them back
		// from the operation the checkpoint names.
		loc := cp.User[cpFunctionsLoc]
		o, err := ks.opAt(loc)
		var codes [][]byte
		if err == nil && o.kind == opFunctions {
			codes, err = decodeFunctions(o.body)
		}
		if err != nil || o.kind != opFunctions {
			trusted = false
		} else {
			ks.fn = functionsState{codes: codes, loc: loc, size: o.size}
		}
	}
	if trusted && cp.User[cpReplPosLoc] != 0 {
		// Nor is a replica's position (replpos.go): read it back too.
		loc := cp.User[cpReplPosLoc]
		o, err := ks.opAt(loc)
		var p replPosition
		if err == nil && o.kind == opReplPosition {
			p, err = decodeReplPosition(o.body)
		}
		if err != nil || o.kind != opReplPosition {
			trusted = false
		} else {
			p.loc, p.size = loc, o.size
			ks.repl = p
		}
	}
	if trusted {
		ks.liveBytes = int64(cp.User[cpLiveBytes] - anchorBytes) // the scan counts the anchored entries again
		if anchored != 0 {
			ks.kix.anchors.scanTo, ks.kix.anchors.scanSeg = cp.LSN, anchorSeg
			ks.kix.anchors.wanted = map[string]uint64{}
		}
		ks.swappedSeg = cp.User[cpSwappedSeg]
		ks.flushAllSeg = cp.User[cpFlushAllSeg]
		for i := range ks.kix.counts {
			ks.kix.counts[i] = int(cp.User[cpCounts+i])
			ks.kix.ttlCounts[i] = int(cp.User[cpTTLCounts+i])
		}
		from, ks.kix.endSeg, ks.kix.endOff = cp.LSN, cp.Seg, cp.Off
		if cp.Applying {
			ix.SetRepair(true)
			ks.kix.applyingTo, ks.kix.repaired = cp.LSN, true
			from, ks.kix.endSeg, ks.kix.endOff = cp.BaseLSN, cp.BaseSeg, cp.BaseOff
		}
		ks.kix.replayCP, ks.kix.lastCP = from, cp.LSN
		return from, nil
	}
	if ok {
		if err := ix.Invalidate(); err != nil {
			return 0, err
		}
	}
	ix.Clear()
	return 0, nil
}

// cpCounts is the first of NumDBs user words holding the indexed keys
// per database, cpTTLCounts the first of those holding the indexed keys
// with an expiry.
const (
	cpCounts    = 8
	cpTTLCounts = cpCounts + NumDBs
)

// kixAppended notes the record of n payload bytes just appended at loc:
// a checkpoint at its LSN says replay starts after it.
func (ks *Keyspace) kixAppended(loc wal.Location, n int) {
	ks.kix.endSeg, ks.kix.endOff = loc.Seg.ID(), uint64(loc.Off+wal.RecordSize(n))
}

// kixCheckpoint makes the index consistent as of the last record appended
// (waiting for it to be durable) and checkpoints it, unless nothing was
// written since the last checkpoint; a checkpoint still in flight (the
// background loop's, kixCheckpointBegin) is ended first. The whole
// checkpoint holds the lock. Call with the lock held, outside any
// transaction group (its LSN must be a group boundary).
func (ks *Keyspace) kixCheckpoint() error {
	j, err := ks.kixCheckpointBegin(false)
	if j == nil || err != nil {
		return err
	}
	j.Run()
	return ks.kix.ix.EndCheckpoint(j)
}

// kixCheckpointBegin is kixCheckpoint's first half (lock held): the log
// waited for, the applying block, the staged writes stored into the
// table. The job it returns (nil: nothing to do, or an error) persists
// the dirty pages and the final block: the background loop runs it
// without the lock and ends it under the lock again (kixCheckpointEnd);
// anything that needs the checkpoint done (another checkpoint, the
// cleaner's removal of a segment, growth's swap, a bulk change, Close)
// settles it first. async says the job will run without the lock (for
// the hold time reported).
func (ks *Keyspace) kixCheckpointBegin(async bool) (*keyindex.CheckpointJob, error) {
	c, cp, dram, held, waited, ok, err := ks.kixCheckpointPrep()
	if !ok || err != nil {
		return nil, err
	}
	j, err := ks.kix.ix.BeginCheckpoint(cp)
	if err != nil {
		return nil, err
	}
	begun := time.Since(held)
	// The bookkeeping of a checkpoint taken happens when the index
	// records the job's outcome (under the lock, before any next
	// checkpoint can begin: its base counts are these).
	j.OnEnd = ks.kixCheckpointOnEnd(c, dram, waited, func() time.Duration {
		if !async {
			return time.Since(held)
		}
		return begun
	})
	return j, nil
}

// kixCheckpointFreeze is kixCheckpointBegin for the checkpointer (lock
// held): the log waited for, the applying block, the staged writes
// frozen (keyindex.FreezeCheckpoint). Either it returns the job, which
// stores them and persists the pages and the final block, to run
// without the lock and end under it as kixCheckpointBegin's; or stepping
// is true, and the caller stores them a step at a time
// (keyindex.CheckpointStep), releasing the lock between steps, and runs
// the last step's job.
func (ks *Keyspace) kixCheckpointFreeze() (job *keyindex.CheckpointJob, stepping bool, err error) {
	c, cp, dram, held, waited, ok, err := ks.kixCheckpointPrep()
	if !ok || err != nil {
		return nil, false, err
	}
	var frozeHold time.Duration
	onEnd := ks.kixCheckpointOnEnd(c, dram, waited, func() time.Duration {
		// The longest of its holds: the freeze, or a step (the lock is
		// released between them; a step's hold is its stores).
		return max(frozeHold, ks.kix.ix.LastCheckpointTimes().StepMax)
	})
	job, err = ks.kix.ix.FreezeCheckpoint(cp, onEnd)
	if err != nil {
		return nil, false, err
	}
	frozeHold = time.Since(held)
	return job, job == nil, nil
}

// kixCheckpointPrep is the first part of a checkpoint (lock held): it
// ends the one in flight, says whether anything was written since the
// last (ok false: nothing to do), waits for the last record appended, C,
// to be durable and fills in the checkpoint of C with the keyspace's
// counters as of C; dram is the number of keys the checkpoint does not
// hold, held when the wait began and waited how long it took.
func (ks *Keyspace) kixCheckpointPrep() (c uint64, cp keyindex.Checkpoint, dram int, held time.Time, waited time.Duration, ok bool, err error) {
	if !ks.kixOn() || ks.txnOpen || ks.failed != nil || ks.wal == nil {
		return
	}
	if err = ks.kix.ix.Settle(); err != nil {
		return
	}
	c = ks.wal.LastLSN()
	if last, _ := ks.kix.ix.Checkpointed(); c == ks.kix.lastCP && ks.kix.ix.Valid() && !last.Applying && ks.kix.ix.Staged() == 0 {
		return
	}
	held = time.Now()
	if err = ks.wal.WaitDurable(c); err != nil {
		return
	}
	waited = time.Since(held)
	cp = keyindex.Checkpoint{LSN: c, Seg: ks.kix.endSeg, Off: ks.kix.endOff}
	for i, d := range ks.dbs {
		dram += len(d.entries)
		cp.User[cpCounts+i] = uint64(ks.kix.counts[i])
		cp.User[cpTTLCounts+i] = uint64(ks.kix.ttlCounts[i])
	}
	// Held bases (valueref.go) are not in the checkpoint either: a
	// restart from it must replay the log, as for DRAM entries.
	dram += len(ks.refs)
	anchored := ks.anchorLen()
	cp.User[cpDRAMKeys] = uint64(dram - anchored) // an entry without an anchor slot is not restartable from the table
	cp.User[cpAnchorKeys] = uint64(anchored)
	cp.User[cpAnchorSeg] = ks.anchorOldestSeg()
	cp.User[cpAnchorBytes] = uint64(ks.kix.anchors.bytes)
	cp.User[cpDRAMKeysBase] = ks.kix.lastDRAM
	cp.User[cpLiveBytes] = uint64(ks.liveBytes)
	cp.User[cpSwappedSeg] = ks.swappedSeg
	cp.User[cpFlushAllSeg] = ks.flushAllSeg
	cp.User[cpMagic] = cpMagicValue
	if len(ks.fn.codes) > 0 { // an empty set's operation is not kept by the cleaner
		cp.User[cpFunctionsLoc] = ks.fn.loc
	}
	if ks.repl.replid != "" && ks.repl.loc != 0 { // a cleared position is not kept either
		cp.User[cpReplPosLoc] = ks.repl.loc
	}
	return c, cp, dram, held, waited, true, nil
}

// kixCheckpointOnEnd returns the checkpoint of C's OnEnd: the keyspace's
// bookkeeping of a checkpoint taken (under the lock); hold says how long
// the checkpoint held the lock at most.
func (ks *Keyspace) kixCheckpointOnEnd(c uint64, dram int, waited time.Duration, hold func() time.Duration) func(error) {
	return func(err error) {
		if err != nil {
			return
		}
		ks.kix.lastCP, ks.kix.lastDRAM = c, uint64(dram)
		ks.kix.checkpoints.Add(1)
		t := ks.kix.ix.LastCheckpointTimes()
		ks.kix.lastCPMicros.Store((t.Apply + t.Persist).Microseconds())
		h := hold()
		ks.kix.cpTimes.Store(&CheckpointTimes{Hold: h, Wait: waited, Apply: t.Apply, Persist: t.Persist, Staged: t.Staged, Pages: t.Pages,
			Faults: t.Faults, Steps: t.Steps})
		if us := h.Microseconds(); us > ks.kix.cpHoldMax.Load() {
			ks.kix.cpHoldMax.Store(us) // one writer: the lock holder
		}
		if h >= time.Millisecond {
			ks.kix.cpHolds1ms.Add(1)
		}
	}
}

// kixCheckpointEnd ends the background loop's checkpoint job after its Run
// (lock held); the error, if any, is the job's (the next checkpoint
// retries its pages; see keyindex.EndCheckpoint).
func (ks *Keyspace) kixCheckpointEnd(j *keyindex.CheckpointJob) error {
	return ks.kix.ix.EndCheckpoint(j)
}

// CheckpointTimes break down the last key-index checkpoint (INFO): Hold
// is the time it held the keyspace lock (Wait for the log to be durable,
// Apply of the staged writes into the table, and Persist of the dirty
// pages and the final block only for a checkpoint that ran whole under
// the lock: the background loop's runs it without).
type CheckpointTimes struct {
	Hold, Wait, Apply, Persist time.Duration
	Staged, Pages              int
	Faults                     int64         // page faults during the apply (its thread's; not counted for one in steps)
	Steps                      int           // the steps its stores took (a checkpoint in steps; 0: in one go)
	HoldMax                    time.Duration // the longest Hold since ResetStats
	Holds1ms                   int64         // checkpoints since ResetStats whose Hold was 1 ms or more
}

// kixFinishReplay ends recovery's replay after a checkpoint: the slots
// stored after it that a crash left cut off or duplicated are removed.
func (ks *Keyspace) kixFinishReplay() error {
	if !ks.kixOn() {
		return nil
	}
	defer ks.kix.ix.SetRepair(false)
	ks.kix.applyingTo = 0
	if ks.kix.replayCP == 0 || ks.kix.firstTail == 0 || !ks.kix.ix.Repairing() {
		return nil
	}
	n, err := ks.kix.ix.Sweep(ks.kix.firstTail)
	ks.kix.swept = n
	if err != nil {
		return err
	}
	ks.kixRecount()
	return nil
}

// kixRecount recounts, after a repair replay, what the checkpoint's
// counters cannot be trusted for: a deletion by expiry staged before the
// crash (no record says so) may or may not have reached the table. The
// indexed keys and keys with an expiry per database come from the table
// (and the staged writes), the live bytes from the table and the DRAM
// entries. It reads every indexed operation once.
func (ks *Keyspace) kixRecount() {
	var counts, ttl [NumDBs]int
	var bytes int64
	visit := func(loc uint64) {
		o, err := ks.opAt(loc)
		if err != nil {
			return
		}
		if l, ok := ks.kixGet(o.db, o.key); !ok || l != loc {
			return // superseded by a staged write (counted there) or deleted
		}
		counts[o.db]++
		if o.expireAt != 0 {
			ttl[o.db]++
		}
		bytes += int64(o.size)
	}
	ks.kix.ix.RangeStaged(func(_ string, loc uint64, _ bool) bool {
		if loc != 0 {
			visit(loc)
		}
		return true
	})
	ks.kix.ix.Range(func(loc uint64) bool {
		visit(loc) // a slot a staged write supersedes fails visit's check
		return true
	})
	for _, d := range ks.dbs {
		for i := range d.entries {
			bytes += entryBytes(&d.entries[i])
		}
	}
	ks.kix.counts, ks.kix.ttlCounts = counts, ttl
	ks.liveBytes = bytes + int64(ks.fn.size)
}

// IndexReport describes how recovery used the key index.
type IndexReport struct {
	Attached bool   // the index is on
	FromLSN  uint64 // records up to this LSN came from the index's checkpoint (0: rebuilt from the whole log)
	Replayed int64  // records replayed into it
	Swept    int    // leftover slots removed after the replay
	// The anchored DRAM entries (kixanchor.go): AnchorScanned records up
	// to the checkpoint read from segment AnchorSeg on, AnchorApplied of
	// their operations applied (those of anchored keys), Anchored entries
	// in the table after the replay.
	AnchorSeg                              uint64
	AnchorScanned, AnchorApplied, Anchored int64
	Repaired                               bool  // a checkpoint was being applied: the table was repaired from FromLSN on
	TableBytes                             int64 // size of the index file
}

// IndexReport returns the key index's part of the recovery (as of Start;
// safe without the lock).
func (ks *Keyspace) IndexReport() IndexReport { return ks.kix.report }

// kixReport records the recovery's figures (Start, lock held).
func (ks *Keyspace) kixReport() {
	if ks.kixOn() {
		a := &ks.kix.anchors
		ks.kix.report = IndexReport{Attached: true, FromLSN: ks.kix.replayCP, Repaired: ks.kix.repaired, Replayed: ks.kix.replayed, Swept: ks.kix.swept, TableBytes: ks.kix.ix.Stats().FileBytes,
			AnchorSeg: a.scanSeg, AnchorScanned: a.scanned, AnchorApplied: a.applied, Anchored: int64(ks.anchorLen())}
		a.wanted = nil
	}
}

// IndexStats is the key index's part of Stats.
type IndexStats struct {
	On                   bool
	FileBytes            int64 // bytes of the mapped index file (file-backed, not heap)
	Slots                int64 // slots in the table
	Keys                 int64 // plain string keys in it
	Anchors              int64 // anchor slots (DRAM entries restartable from it: kixanchor.go)
	Staged               int64 // keys written since the last checkpoint (heap overlay)
	Checkpoints          int64 // checkpoints since start
	CheckpointLSN        uint64
	LastCheckpointMicros int64 // duration of the last checkpoint
	Last                 CheckpointTimes
}

// snapshotIndex publishes the index's figures for Stats (lock held).
func (ks *Keyspace) snapshotIndex() {
	ks.snapshotTiers()
	if !ks.kixOn() {
		return
	}
	st := ks.kix.ix.Stats()
	n := 0
	for _, c := range ks.kix.counts {
		n += c
	}
	s := &IndexStats{On: true, FileBytes: st.FileBytes, Slots: int64(st.Slots), Keys: int64(n), Anchors: int64(ks.anchorLen()), Staged: int64(st.Staged),
		Checkpoints: ks.kix.checkpoints.Load(), CheckpointLSN: ks.kix.lastCP, LastCheckpointMicros: ks.kix.lastCPMicros.Load()}
	if t := ks.kix.cpTimes.Load(); t != nil {
		s.Last = *t
	}
	s.Last.HoldMax = time.Duration(ks.kix.cpHoldMax.Load()) * time.Microsecond
	s.Last.Holds1ms = ks.kix.cpHolds1ms.Load()
	ks.kix.snap.Store(s)
}

// PlainStrings calls fn for every key that is a string held by one set
// operation (not patched; with its expiry, 0 for none) in a DRAM entry:
// what the key index holds when it is attached. For persimmon-check, which replays the log into a keyspace
// without the index and compares.
func (ks *Keyspace) PlainStrings(fn func(db int, key string, loc uint64, expireAt int64)) {
	for dbi, d := range ks.dbs {
		for i := range d.entries {
			if e := &d.entries[i]; e.obj == nil {
				fn(dbi, e.key, e.loc, e.expireAt)
			}
		}
	}
}

// DRAMKeys is the number of keys in DRAM entries (collections, keys with
// an expiry, patched strings; every key when the index is not attached).
func (ks *Keyspace) DRAMKeys() int {
	n := 0
	for _, d := range ks.dbs {
		n += len(d.entries)
	}
	return n
}

// IndexCheckpointUser decodes the keyspace's counters in a key index
// checkpoint (persimmon-check): keys in DRAM entries at the checkpoint,
// indexed keys per database and those with an expiry, whether this
// keyspace wrote it.
func IndexCheckpointUser(cp keyindex.Checkpoint) (dramKeys uint64, counts, ttlCounts [NumDBs]uint64, ours bool) {
	for i := range counts {
		counts[i] = cp.User[cpCounts+i]
		ttlCounts[i] = cp.User[cpTTLCounts+i]
	}
	return cp.User[cpDRAMKeys], counts, ttlCounts, cp.User[cpMagic] == cpMagicValue
}

// kixTTLLen is the number of indexed keys of dbi with an expiry.
func (ks *Keyspace) kixTTLLen(dbi int) int {
	if !ks.kixOn() {
		return 0
	}
	return ks.kix.ttlCounts[dbi]
}

// kixSampleTTL calls add with the expiry of up to probes indexed keys of
// dbi that have one: staged ones (a bounded look), then the table's from
// a random position on (at most kixSampleSlots slot words).
func (ks *Keyspace) kixSampleTTL(dbi, probes int, add func(at int64)) {
	n := 0
	visited := 0 // the newest writes are not in the table yet: a bounded look
	ks.kix.ix.RangeStaged(func(_ string, loc uint64, expiring bool) bool {
		visited++
		if !expiring {
			return visited < kixStagedScan
		}
		if o, err := ks.opAt(loc); err == nil && o.db == dbi {
			add(o.expireAt)
			n++
		}
		return n < probes/2 && visited < kixStagedScan
	})
	slots := ks.kix.ix.Stats().Slots
	pos := rand.IntN(slots)
	for read := 0; read < kixSampleSlots && n < probes; {
		next := ks.kix.ix.ScanExpiring(pos, kixSampleSlots-read, func(loc uint64) bool {
			if o, err := ks.opAt(loc); err == nil && o.db == dbi {
				add(o.expireAt)
				n++
			}
			return n < probes
		})
		read += next - pos
		if pos = next; pos >= slots {
			pos = 0
		}
	}
}

// Active expiry of indexed keys (kixActiveExpire), per background cycle:
// at most kixExpireSlots slot words read and kixExpireDecodes operations
// decoded, so the lock is held for well under a millisecond whatever the
// table's size; while more than a quarter of the operations decoded had
// expired, the cycle goes on, up to kixExpireRounds times those bounds
// (Redis's active-expire cycle repeats its sampling the same way).
const (
	kixExpireSlots   = 1 << 16
	kixExpireDecodes = 1 << 11
	kixExpireRounds  = 8
	kixStagedScan    = 1 << 12 // staged writes are looked at while at most this many
	kixSampleSlots   = 1 << 16
)

// kixActiveExpire removes indexed keys whose expiry has passed: the staged
// ones while they are few, then the table from the cursor on; it returns
// the number removed, at most limit.
func (ks *Keyspace) kixActiveExpire(now int64, limit int) int {
	if !ks.kixOn() || limit <= 0 {
		return 0
	}
	ix := ks.kix.ix
	type victim struct {
		db  int
		key string
	}
	var due []victim
	if ix.Staged() <= kixStagedScan {
		ix.RangeStaged(func(k string, loc uint64, expiring bool) bool {
			if loc != 0 && expiring {
				if o, err := ks.opAt(loc); err == nil && expiredAt(o.expireAt, now) {
					due = append(due, victim{int(k[0]), k[1:]})
				}
			}
			return len(due) < limit
		})
	}
	if g := ix.Generation(); g != ks.kix.expGen {
		ks.kix.expGen, ks.kix.expPos = g, 0 // slots moved: start over
	}
	slots := ix.Stats().Slots
	for round := 0; round < kixExpireRounds && len(due) < limit; round++ {
		decoded, expired := 0, 0
		pos := ks.kix.expPos
		next := ix.ScanExpiring(pos, kixExpireSlots, func(loc uint64) bool {
			decoded++
			o, err := ks.opAt(loc)
			if err == nil && expiredAt(o.expireAt, now) {
				if l, ok := ks.kixGet(o.db, o.key); ok && l == loc {
					expired++
					due = append(due, victim{o.db, string(o.key)})
				}
			}
			return decoded < kixExpireDecodes && len(due) < limit
		})
		if next >= slots {
			next = 0
		}
		ks.kix.expPos = next
		if expired*4 <= decoded || next == 0 {
			break
		}
	}
	n := 0
	for _, v := range due {
		// A staged key may also be met in the table (its old slot, whose
		// location the check above rejects) but not twice as staged.
		// kixLookup expires it (expire runs the OnKeyTouched hooks once);
		// only the watchers are left to mark, as for a DRAM key.
		if _, ok := ks.kixGet(v.db, []byte(v.key)); ok && ks.kixLookup(v.db, []byte(v.key)) == nil {
			n++
			ks.touchWatchers(v.db, []byte(v.key))
		}
	}
	return n
}

// FreezeClockForReplay stops the keyspace's clock before the epoch, so
// that nothing it replays expires (persimmon-check compares the index with
// every string the log holds, whatever its expiry). For a model keyspace
// only, before any record is replayed.
func (ks *Keyspace) FreezeClockForReplay() {
	ks.clockSkew.Store(-time.Now().UnixMilli() - 1)
	ks.expiryHist = map[string]int64{}
}

// Growth of the index runs beside the commands (keyindex's incremental
// growth): when the table wants it, the background loop starts kixGrow,
// which copies kixGrowBudget slots per step under the lock, then sleeps as
// long as the step took (so commands get at least half the time), persists
// the finished side file without the lock, and swaps it in under the lock.
const kixGrowBudget = 8192

// kixMaybeGrow starts kixGrow if the table wants to grow (lock held).
func (ks *Keyspace) kixMaybeGrow() {
	if !ks.kixOn() || ks.kix.growing || ks.closed || !ks.kix.ix.WantsGrow() {
		return
	}
	ks.kix.growing = true
	ks.stopped.Add(1)
	go ks.kixGrow()
}

func (ks *Keyspace) kixGrow() {
	defer ks.stopped.Done()
	for {
		select {
		case <-ks.stop:
			ks.mu.Lock()
			ks.kix.growing = false
			ks.mu.Unlock()
			return
		default:
		}
		ks.mu.Lock()
		start := time.Now()
		phase, err := ks.kix.ix.GrowStep(kixGrowBudget)
		var job *keyindex.GrowJob
		if err == nil && phase == keyindex.GrowNeedsPersist {
			job = ks.kix.ix.BeginGrowPersist()
		}
		took := time.Since(start)
		ks.kix.growStepMax = max(ks.kix.growStepMax, took)
		if err != nil || phase == keyindex.GrowIdle {
			ks.kix.growing = false
			if err != nil {
				ks.kix.growErr = err // a later growth in one go meets it again, in a checkpoint
			}
			ks.mu.Unlock()
			return
		}
		ks.mu.Unlock()
		if job != nil {
			err := job.Run()
			ks.mu.Lock()
			ks.kix.ix.EndGrowPersist(job, err)
			ks.mu.Unlock()
			continue
		}
		if phase == keyindex.GrowWaitsCheckpoint {
			took = max(took, time.Millisecond) // a checkpoint's job (~1 ms) in flight: retry after it, not in a loop
		}
		time.Sleep(took) // pacing, not synchronisation: half the time to the commands
	}
}

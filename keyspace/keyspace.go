package keyspace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyindex"
	"github.com/persimmon-db/persimmon/wal"
)

// Keyspace is the set of 16 databases. Every method except Lock, Unlock,
// LastLSN, WaitDurable, Stats and Close must be called with the lock held;
// slices returned by reads alias the arena mapping and are valid only until
// Unlock.
type Keyspace struct {
	mu    sync.Mutex
	arena *arena.Arena
	wal   *wal.WAL
	dbs   [NumDBs]*db

	batch       Batch // scratch batch handed out by NewBatch
	recordLimit int   // maxRecordPayload (tests lower it)
	txnOpen     bool
	txnWrote    bool
	cleaning    bool // applying the cleaner's copies: not a change WATCH sees
	noActiveExp bool // DEBUG SET-ACTIVE-EXPIRE 0: the background cycle expires nothing (expire.go); mu
	seeExpired  bool // WithExpiredVisible: expired keys read as live (replica_expiry.go); mu
	cronPaused  bool // DEBUG PAUSE-CRON 1: the background loop does nothing (PauseBackground); mu
	// expiryPaused: CLIENT PAUSE; expired keys read as missing and stay
	// (PauseExpiry).
	expiryPaused atomic.Bool
	// rx: expiry on a replica (replica_expiry.go); mu.
	rx replicaExpiry
	// latencyObs receives the background loop's latency events (expire.go:
	// SetLatencyObserver); mu.
	latencyObs func(event string, d time.Duration)
	// swappedSeg is 1 + the segment of the last SWAPDB applied (0: none).
	// Operations in segments up to it may name the database their key was
	// in before the swap; the cleaner then looks for it in every database.
	swappedSeg uint64
	// deadSets holds, per segment ID, the offsets of set operations that
	// no longer hold their key's value (overwritten, deleted, expired,
	// flushed): hints that let the cleaner skip them without a key lookup.
	deadSets map[uint64][]uint32
	// refs maps each base held through an opSetRef to its holder
	// (valueref.go).
	refs      map[uint64]refHolder
	failed    error // set when the in-memory state may be ahead of the log
	liveBytes int64
	fn        functionsState // the function libraries (functions.go)
	repl      replPosition   // a replica's replication position (replpos.go)

	expires expiryHeap
	watched map[watchKey][]*Watcher

	kix kixState // the persistent key index, when attached (kix.go)
	// kixAccess holds the access data of recently used indexed keys
	// (lru.go).
	kixAccess accessTable
	curLSN    uint64 // LSN of the record being applied

	// The memory tiers (memtier.go): the record cache (reccache.go; nil:
	// off) and its size setting, the index's lock budget, the setting
	// waiting for an Unlock, the published figures.
	rc           *recCache
	rcOn         *recCache // rc while it is read and filled: under memory pressure (coldread.go), or forced; else nil
	rcForce      bool      // tests: rc always in use
	rcSize       int64
	tierLock     int64
	tiersApplied bool        // a setting was applied (the first one is logged whatever it is)
	coldMode     atomic.Bool // the process took major faults in the last stats tick (coldread.go)
	lastMajflt   int64
	coldWarmed   int64     // pages ColdPages found to warm since start
	coldUntil    time.Time // ColdReads stays on until then (coldread.go)
	tiersPending atomic.Pointer[MemoryTiers]
	tierSnap     atomic.Pointer[TierStats]

	keyReadyFn func(db int, key []byte) // OnKeyReady: wakes blocked clients
	events     eventHooks               // OnKeyEvents (notify.go): keyspace notifications
	touchedFn  func(db int, key []byte) // OnKeyTouched (stream.go): blocked group readers, tracking
	expiredFn  func(db int, key string) // OnExpired: the replication stream's DEL
	// beforeWrite: BeforeWrite's hook (beforewrite.go), nil when unset.
	beforeWrite func(db int, key []byte)
	cursors     []*KeyCursor // open KeyCursors over the key index (cursor.go: kixPlaced)
	// trailer: operations armed to end the next batch committed
	// (SetReplPositionTrailer, replpos.go) while trailerSet.
	trailer    []byte
	trailerN   int
	trailerSet bool

	// recovery state
	pending       []pendingRecord
	replaying     bool // applying records at recovery (see errStaleOp)
	replaySkipped int  // operations recovery skipped as stale
	// applyNow is the time the operations being applied judge expiries
	// by, from their record's opClock (0: none, the clock's); replayExpired
	// are the keys a replay kept past their deadline (applyclock.go).
	applyNow      int64
	replayExpired []dbKey
	preBuf        []byte // prepareBatch's scratch
	anchorFilter  bool   // applying only the operations of anchored entries (kixAnchorWanted)

	// lastDel is the last key deleted in the record being applied (see
	// object.anchored); key aliases the record, valid while it is applied.
	lastDel struct {
		db  int
		key []byte
		ok  bool
	}

	clockSkew   atomic.Int64 // ms added to the wall clock (tests)
	expiring    bool         // the touched hooks run for an expiry (Expiring)
	frozenMs    atomic.Int64 // NowMs while FreezeClock lasts; 0: the wall clock
	clockDepth  int          // FreezeClock calls not yet thawed
	expiredKeys atomic.Int64
	lazyFreed   atomic.Int64 // INFO lazyfreed_objects (lazyfree.go)
	lazyExpire  atomic.Bool  // lazyfree-lazy-expire (lazyfree.go)
	// countLookups makes lookup count hits and misses (set under the lock
	// for the span of a read-only command, see CountLookups).
	countLookups bool
	hits, misses atomic.Int64
	// writeFailing records that the last commit failed (full disk, a
	// persistence failure); the next successful one clears it, unless
	// writes are refused for lack of space (noSpace).
	writeFailing atomic.Bool
	// noSpace: a commit failed for lack of disk space and writes are
	// refused until CheckWritable finds room for noSpaceNeed bytes of
	// payload (guarded by mu; noSpace is read without it).
	noSpace     atomic.Bool
	noSpaceNeed int
	// flushAllSeg is the segment holding the last FLUSHALL applied (0:
	// none): nothing in an older segment is live (cleanSegment).
	flushAllSeg  uint64
	cleanedBytes atomic.Int64
	appended     atomic.Int64 // record bytes appended since start (commits and the cleaner's copies)
	damagedKeys  atomic.Int64 // locations found unreadable while serving (damage.go)
	scrubbed     atomic.Int64 // segments trusted at start-up verified since (scrub.go)
	scrubDamaged atomic.Int64 // of those, the ones that did not verify
	damageLogged map[uint64]bool
	logf         func(format string, args ...any)
	liveSnapshot atomic.Int64
	keysSnapshot [NumDBs]atomic.Int64
	volSnapshot  [NumDBs]atomic.Int64

	cleanMu  sync.Mutex // one cleaner at a time
	stop     chan struct{}
	stopped  sync.WaitGroup
	closed   bool
	closeErr error
	// expiryHist is, for a model keyspace whose clock is stopped
	// (FreezeClockForReplay), the earliest expiry each collection's
	// incarnation was ever given (db byte, then the key): the server may
	// have expired it there and begun a new one (Anchors).
	expiryHist map[string]int64
	// noCloseCheckpoint: Close leaves the key index at its last
	// checkpoint, as a kill would (tests: KillAtClose).
	noCloseCheckpoint bool
}

func newKeyspace(a *arena.Arena) *Keyspace {
	ks := &Keyspace{arena: a, watched: map[watchKey][]*Watcher{}, stop: make(chan struct{}), recordLimit: maxRecordPayload, deadSets: map[uint64][]uint32{}, refs: map[uint64]refHolder{}}
	for i := range ks.dbs {
		ks.dbs[i] = newDB()
	}
	return ks
}

// Lock takes the keyspace lock (one lock for all databases).
func (ks *Keyspace) Lock() { ks.mu.Lock() }

// TryLock takes the keyspace lock if it is free, without waiting.
func (ks *Keyspace) TryLock() bool { return ks.mu.TryLock() }

// Unlock releases the keyspace lock.
func (ks *Keyspace) Unlock() {
	ks.liveSnapshot.Store(ks.liveBytes)
	if ks.rc != nil {
		ks.rc.epoch++ // the values read from the record cache are let go
	}
	if ks.tiersPending.Load() != nil {
		ks.applyTiers()
	}
	ks.mu.Unlock()
}

// PauseExpiry stops (on) or resumes the removal of expired keys, lazy and
// active, while CLIENT PAUSE lasts: an expired key reads as missing but
// stays, and INFO expired_keys does not move, as in Redis. Safe without
// the lock.
func (ks *Keyspace) PauseExpiry(on bool) { ks.expiryPaused.Store(on) }

// NowMs is the current time in Unix milliseconds as the keyspace sees it
// (tests move it forward with a skew).
// While a FreezeClock lasts it is the time the outermost freeze began.
func (ks *Keyspace) NowMs() int64 {
	if f := ks.frozenMs.Load(); f != 0 {
		return f
	}
	return time.Now().UnixMilli() + ks.clockSkew.Load()
}

// FreezeClock stops the keyspace's clock (NowMs) at the current time until
// the matching ThawClock, as Redis 7.0 fixes the time a command and
// everything it calls see (server.mstime under fixed_time_expire, the
// script's time snapshot): a MULTI/EXEC block or a script runs at one
// instant, so a key cannot expire between two of its commands (issue
// 1525 of redis/redis) and a replica applying the block agrees. Calls
// nest; the outermost one sets the time. Call with the lock held.
func (ks *Keyspace) FreezeClock() {
	if ks.clockDepth == 0 {
		ks.frozenMs.Store(time.Now().UnixMilli() + ks.clockSkew.Load())
	}
	ks.clockDepth++
}

// ThawClock ends a FreezeClock. Call with the lock held.
func (ks *Keyspace) ThawClock() {
	if ks.clockDepth--; ks.clockDepth == 0 {
		ks.frozenMs.Store(0)
	}
}

// lookup returns the live entry of key, removing it first if it expired,
// and records the access (OBJECT IDLETIME, FREQ).
func (ks *Keyspace) lookup(dbi int, key []byte) *entry { return ks.find(dbi, key, true) }

// peek is lookup without touching the key's access time (Redis's
// LOOKUP_NOTOUCH: TYPE, EXISTS, TTL, OBJECT, MEMORY USAGE).
func (ks *Keyspace) peek(dbi int, key []byte) *entry { return ks.find(dbi, key, false) }

// find is lookup (touch) and peek (!touch).
func (ks *Keyspace) find(dbi int, key []byte, touch bool) *entry {
	i, ok := ks.dbs[dbi].index[string(key)]
	if !ok {
		e := ks.kixLookup(dbi, key)
		ks.countLookup(e != nil)
		if e == nil {
			ks.keyMissed(dbi, key)
		} else if touch {
			ks.kixAccess.touch(e.loc)
		}
		return e
	}
	return ks.foundAt(dbi, i, key, touch)
}

// foundAt is find's DRAM hit: the entry at index i of database dbi, whose
// key is key, or nil (lazily expired) if its TTL has passed.
func (ks *Keyspace) foundAt(dbi int, i int32, key []byte, touch bool) *entry {
	e := &ks.dbs[dbi].entries[i]
	if !ks.liveAt(e.expireAt) {
		if !ks.keepExpired() { // CLIENT PAUSE, a replica: read as missing, kept
			ks.expire(dbi, e.key)
		}
		ks.countLookup(false)
		ks.keyMissed(dbi, key)
		return nil
	}
	ks.countLookup(true)
	if touch {
		e.lru.touch()
	}
	return e
}

// countLookup counts a lookup into keyspace_hits/misses while counting is
// on.
func (ks *Keyspace) countLookup(hit bool) {
	switch {
	case !ks.countLookups:
	case hit:
		ks.hits.Add(1)
	default:
		ks.misses.Add(1)
	}
}

// CountLookups turns the keyspace_hits/keyspace_misses counters on or off
// for the key lookups that follow; call it under the lock. The server turns
// them on for the span of a read-only command, so, as in Redis, the keys
// a read looks up are counted (found or not: a key of another type is a
// hit) and the keys a write changes are not (semantics: redis.io INFO,
// keyspace_hits).
// It returns the previous setting, for a handler that stops counting
// while it looks a key up a second time (Redis looks each argument up
// once) and then goes on.
func (ks *Keyspace) CountLookups(on bool) (was bool) {
	was, ks.countLookups = ks.countLookups, on
	return was
}

// ResetStats zeroes the counters CONFIG RESETSTAT resets: expired keys,
// keyspace hits and misses.
func (ks *Keyspace) ResetStats() {
	ks.expiredKeys.Store(0)
	ks.lazyFreed.Store(0)
	ks.hits.Store(0)
	ks.misses.Store(0)
	ks.kix.cpHoldMax.Store(0)
	ks.kix.cpHolds1ms.Store(0)
}

// OnExpired sets fn, called under the lock each time a key is removed
// because its expiry passed (read lazily or by the background cycle),
// before it goes: a master propagates it as DEL, as Redis does, so its
// replicas drop it too. Set it before serving; nil turns it off.
func (ks *Keyspace) OnExpired(fn func(db int, key string)) { ks.expiredFn = fn }

// expire removes a key whose time has come (no record: recovery drops it
// again because its expiry is absolute).
// expire removes a key whose time has passed (lazily, at a lookup, or by
// active expiry) and tells the OnKeyTouched hooks (client-side caching
// invalidates it, as Redis's deleteExpiredKeyAndPropagate does).
func (ks *Keyspace) expire(dbi int, key string) {
	if ks.expiredFn != nil {
		ks.expiredFn(dbi, key)
	}
	if ks.lazyExpire.Load() && ks.FreeEffort(dbi, []byte(key)) > LazyFreeThreshold {
		ks.lazyFreed.Add(1)
	}
	ks.removeKey(dbi, key)
	ks.expiredKeys.Add(1)
	ks.keyExpired(dbi, key)
	if ks.touchedFn != nil && !ks.cleaning {
		ks.expiring = true
		ks.touchedFn(dbi, []byte(key))
		ks.expiring = false
	}
}

// Expiring reports whether the OnKeyTouched hooks running now were called
// for a key's expiry (lazy or active), not for a write. Call with the lock
// held.
func (ks *Keyspace) Expiring() bool { return ks.expiring }

func (ks *Keyspace) value(e *entry) []byte {
	v, _, err := ks.stringAt(e.loc)
	if err != nil {
		panic(fmt.Sprintf("keyspace: index points at a bad operation: %v", err))
	}
	return v
}

// opAt decodes the operation at a packed location (from the record
// cache's copy when it holds one: the record's page is not touched).
func (ks *Keyspace) opAt(loc uint64) (op, error) {
	var o op
	if err := ks.opInto(loc, &o); err != nil {
		return op{}, err
	}
	return o, nil
}

// opInto is opAt decoding into o (op.decode says why the lookups on
// every write use it); on error o holds nothing useful.
func (ks *Keyspace) opInto(loc uint64, o *op) error {
	if rec, ok := ks.rcOn.get(loc); ok {
		return o.decode(rec)
	}
	seg := ks.arena.Segment(loc >> 40)
	if seg == nil {
		return fmt.Errorf("keyspace: location %#x names a missing segment", loc)
	}
	b := seg.Bytes()
	if off := loc & (1<<40 - 1); off < uint64(len(b)) {
		return o.decode(b[off:])
	}
	return fmt.Errorf("keyspace: location %#x is past the end of its segment (%d bytes)", loc, len(b))
}

// Get returns the string value of key. ok is false when the key does not
// exist (or has expired); err is ErrWrongType when it is not a string.
func (ks *Keyspace) Get(db int, key []byte) (val []byte, ok bool, err error) {
	// The fast path for an indexed plain string, unless the record cache
	// is in use (under memory pressure: reccache.go), whose admission is
	// cachedValue's.
	if _, inDRAM := ks.dbs[db].index[string(key)]; !inDRAM && ks.kixOn() && ks.rcOn == nil {
		if val, ok, done := ks.kixString(db, key); done {
			return val, ok, nil
		}
	}
	e := ks.lookup(db, key)
	if e == nil {
		return nil, false, nil
	}
	if e.obj != nil {
		if s, ok := e.obj.coll.(*stringObj); ok {
			return s.value(ks), true, nil
		}
		if err := damageOf(e); err != nil {
			return nil, false, err
		}
		return nil, false, ErrWrongType
	}
	if e.kix && ks.rcOn != nil {
		return ks.cachedValue(e), true, nil
	}
	return ks.value(e), true, nil
}

// Exists reports whether key exists (not expired).
func (ks *Keyspace) Exists(db int, key []byte) bool {
	// One map lookup: a DRAM hit goes straight to foundAt (find would look
	// the key up again); a miss goes to the key index or counts the miss.
	i, inDRAM := ks.dbs[db].index[string(key)]
	switch {
	case inDRAM:
		return ks.foundAt(db, i, key, false) != nil
	case ks.kixOn():
		return ks.kixExists(db, key)
	}
	ks.countLookup(false)
	ks.keyMissed(db, key)
	return false
}

// Type returns the TYPE reply for key: TypeNone or TypeString.
func (ks *Keyspace) Type(db int, key []byte) string {
	e := ks.peek(db, key)
	switch {
	case e == nil:
		return TypeNone
	case e.obj != nil:
		return e.obj.coll.typeName()
	}
	return TypeString
}

// MemoryUsage estimates the bytes key and its value take (semantics:
// redis.io MEMORY USAGE; ok is false when the key does not exist). It
// counts the key, the index entry and map slot (entryOverhead), the
// value's bytes in the arena (a string's logged operation; a collection's
// live operations) and, for a collection, collElemHeap bytes of Go heap per
// element for its in-memory index. An estimate, as Redis's is.
func (ks *Keyspace) MemoryUsage(db int, key []byte) (n int64, ok bool) {
	e := ks.peek(db, key)
	if e == nil {
		return 0, false
	}
	n = entryOverhead + int64(len(e.key))
	if e.obj == nil {
		return n + int64(e.size), true
	}
	return n + e.obj.coll.liveBytes() + collElemHeap*int64(e.obj.coll.length()), true
}

// Per-key and per-element overheads for MemoryUsage: an entry (40 bytes)
// plus its map slot and string header (~32); a collection element's index
// slot and location (~30 bytes measured for sets and hashes, see the
// benchmark's memory table).
const (
	entryOverhead = 72
	collElemHeap  = 32
)

// ExpireAt returns the key's absolute expiry in Unix ms (0 = no expiry);
// ok is false when the key does not exist.
func (ks *Keyspace) ExpireAt(db int, key []byte) (ms int64, ok bool) {
	e := ks.peek(db, key)
	if e == nil {
		return 0, false
	}
	return e.expireAt, true
}

// DBSize returns the number of keys in db (keys that expired but were not
// yet reclaimed may be counted, as in Redis).
func (ks *Keyspace) DBSize(db int) int { return len(ks.dbs[db].entries) + ks.kixLen(db) }

// RandomKey returns a random existing key of db; ok is false if db is empty.
func (ks *Keyspace) RandomKey(db int) (key string, ok bool) {
	d := ks.dbs[db]
	if n := ks.kixLen(db); n > 0 && rand.IntN(n+len(d.entries)) < n {
		if k, ok := ks.kixRandom(db); ok || !ks.rx.on {
			return k, ok
		}
		return ks.randomKeyGiveUp(db, "") // every indexed key it met had expired
	}
	for tries := 0; len(d.entries) > 0; tries++ {
		e := &d.entries[rand.IntN(len(d.entries))]
		if ks.expiredNow(e.expireAt) {
			if ks.keepExpired() {
				if tries >= 100 { // expired keys stay while paused or on a replica
					return ks.randomKeyGiveUp(db, e.key)
				}
				continue
			}
			ks.expire(db, e.key)
			continue
		}
		return e.key, true
	}
	return "", false
}

// randomKeyGiveUp is RandomKey's answer after 100 expired keys in a row
// that stay where they are (last, the last of them, or "" when the key
// index's draw found none). A replica answers with an expired key if
// every key of db has an expiry (Redis's dbRandomKey: all of them may
// have passed, and the loop must end) and otherwise with a key that has
// not expired, if there is one; CLIENT PAUSE on a master answers none.
func (ks *Keyspace) randomKeyGiveUp(db int, last string) (string, bool) {
	if !ks.rx.on {
		return "", false
	}
	if ks.allVolatile(db) {
		if last != "" {
			return last, true
		}
		return ks.anyKey(db)
	}
	key, found := "", false
	ks.Keys(db, func(k string) {
		if !found {
			key, found = k, true
		}
	})
	return key, found
}

// anyKey returns a key of db, expired or not: a random DRAM entry, else
// the first indexed key found.
func (ks *Keyspace) anyKey(db int) (string, bool) {
	if d := ks.dbs[db]; len(d.entries) > 0 {
		return d.entries[rand.IntN(len(d.entries))].key, true
	}
	if !ks.kixOn() {
		return "", false
	}
	key, found := "", false
	ks.kix.ix.RangeStaged(func(k string, loc uint64, _ bool) bool {
		if loc != 0 && int(k[0]) == db {
			key, found = k[1:], true
		}
		return !found
	})
	if found {
		return key, true
	}
	ks.kix.ix.ScanSlots(0, func(loc uint64) bool {
		if o, err := ks.opAt(loc); err == nil && o.db == db {
			if l, ok := ks.kixGet(db, o.key); ok && l == loc {
				key, found = string(o.key), true
			}
		}
		return !found
	})
	return key, found
}

// allVolatile reports whether every key of db has an expiry (INFO
// keyspace's keys == expires).
func (ks *Keyspace) allVolatile(db int) bool {
	d := ks.dbs[db]
	n := len(d.entries) + ks.kixLen(db)
	v := d.volatile
	if ks.kixOn() {
		v += ks.kix.ttlCounts[db]
	}
	return n > 0 && v == n
}

// Scan visits up to about count keys starting at cursor and returns the next
// cursor (0 when the iteration is complete). Every key present for the whole
// iteration is visited at least once (semantics: redis.io SCAN). The cursor
// counts the positions of the dense key table still to visit, walking down:
// deletions move the last key into the hole, which is either already
// visited or still ahead, so no key present throughout is missed. An
// expired key it meets is removed, as Redis's SCAN does (expireIfNeeded:
// expired_keys, the expired event, DEL to replicas), except where expired
// keys stay (a replica, CLIENT PAUSE).
func (ks *Keyspace) Scan(db int, cursor uint64, count int, fn func(key string)) (next uint64) {
	if count < 1 {
		count = 1
	}
	if ks.kixLen(db) > 0 || cursor&kixCursor != 0 {
		if cursor == 0 || cursor&kixCursor != 0 {
			var done bool
			if cursor, done = ks.kixScan(db, cursor, &count, fn); !done {
				return cursor
			}
			cursor = 0 // the indexed keys are done: on to the DRAM entries
			if len(ks.dbs[db].entries) == 0 {
				return 0
			}
			if count == 0 {
				return uint64(len(ks.dbs[db].entries))
			}
		}
	}
	d := ks.dbs[db]
	pos := uint64(len(d.entries))
	if cursor != 0 && cursor < pos {
		pos = cursor
	}
	now := ks.NowMs()
	for ; pos > 0 && count > 0; count-- {
		pos--
		e := &d.entries[pos]
		if expiredAt(e.expireAt, now) {
			// Redis's SCAN removes the expired keys it meets
			// (expireIfNeeded). The removal moves the last entry,
			// visited already, to pos, which the walk has passed.
			if !ks.keepExpired() {
				ks.expire(db, e.key)
			}
			continue
		}
		fn(e.key)
	}
	return pos
}

// kixCursor marks a SCAN cursor inside the indexed keys: bit 62 set, the
// index generation in bits 54-61 (a growth moves every key's home: the
// walk starts over, which may repeat keys but never misses one), the next
// home slot to visit below.
const (
	kixCursor    = uint64(1) << 62
	kixGenShift  = 54
	kixSlotsMask = uint64(1)<<kixGenShift - 1
)

// kixScan visits indexed keys of db from cursor, by home slot
// (keyindex.ScanHomes: each key present throughout is visited once per
// table generation, staged, stored or checkpointed meanwhile); done
// reports that the table is finished. It visits about count keys (count
// is decreased by the keys visited), looking at no more than 10*count
// home slots a call, as Redis's SCAN bounds its empty buckets, or 4096
// if more: Redis sizes its table to the keys, so a small keyspace is one
// call, and so it is here, in a table of at least 1024 slots.
func (ks *Keyspace) kixScan(db int, cursor uint64, count *int, fn func(key string)) (next uint64, done bool) {
	ix := ks.kix.ix
	if ix == nil {
		return 0, true
	}
	gen := uint64(ix.Generation()) & 0xff
	pos := int(cursor & kixSlotsMask)
	if cursor>>kixGenShift&0xff != gen {
		pos = 0
	}
	now := ks.NowMs()
	slots := ix.Stats().Slots
	budget := max(10**count, 4096)
	var expired []string // met by this step, removed after it as Redis's SCAN does
	for pos < slots && *count > 0 && budget > 0 {
		step := min(max(*count, 16), budget, slots-pos)
		ix.ScanHomes(pos, pos+step, func(key []byte, loc uint64, expiring bool) {
			if int(key[0]) != db {
				return
			}
			if expiring { // only then is the operation read again, for its expiry
				o, err := ks.opAt(loc)
				if err != nil {
					return
				}
				if expiredAt(o.expireAt, now) {
					if !ks.keepExpired() {
						expired = append(expired, string(key[1:]))
					}
					return
				}
			}
			fn(string(key[1:]))
			*count--
		})
		// Not inside ScanHomes: the removal stages a write in the index
		// (its table, which the walk reads, changes only at checkpoints).
		for _, k := range expired {
			ks.expire(db, k)
		}
		expired = expired[:0]
		pos += step
		budget -= step
	}
	if pos >= slots {
		return 0, true
	}
	return kixCursor | gen<<kixGenShift | uint64(pos), false
}

// Keys calls fn for every existing key of db.
func (ks *Keyspace) Keys(db int, fn func(key string)) {
	ks.kixKeys(db, func(k string) bool { fn(k); return true })
	now := ks.NowMs()
	for i := range ks.dbs[db].entries {
		e := &ks.dbs[db].entries[i]
		if !expiredAt(e.expireAt, now) {
			fn(e.key)
		}
	}
}

// NewBatch returns an empty batch. A batch is the unit of atomicity: it is
// recovered whole or not at all. The batch is reused: it is valid until the
// next NewBatch.
func (ks *Keyspace) NewBatch() *Batch {
	ks.batch.Reset()
	return &ks.batch
}

// Commit writes b to the log and applies it to the in-memory index. A batch
// of at most maxRecordPayload bytes, or of one operation, is one record
// (marked as part of the open transaction if BeginTxn was called); a larger
// one is several (see commitGroup). It returns ErrNoSpace or ErrTooLarge without applying
// anything when the batch cannot be written, and the damage error (ErrDamaged)
// for a batch that copies a damaged value (CopyValue, MoveValue). An empty batch is a no-op.
func (ks *Keyspace) Commit(b *Batch) error {
	if b.err != nil {
		return b.err // the batch copies a damaged value (CopyValue)
	}
	if len(b.borrowed) > 0 {
		if b.spent {
			return errSpent
		}
		defer b.letGo()
	}
	if b.n == 0 {
		return nil
	}
	if ks.failed != nil {
		ks.writeFailing.Store(true)
		return ks.failed
	}
	flushAll := b.n == 1 && b.buf[0] == opFlushAll
	if ks.noSpace.Load() && !ks.cleaning && !flushAll {
		if err := ks.CheckWritable(); err != nil {
			return err
		}
	}
	ks.prepareBatch(b)         // applyclock.go
	if ks.beforeWrite != nil { // the cleaner's rewrites too (beforewrite.go)
		b.materialize()           // the hook reads the operations whole
		ks.callBeforeWrite(b.buf) // beforewrite.go
	}
	// A FLUSHALL alone is written into the freeing reserve (8 bytes of
	// payload: AppendFreeing), where the position does not fit: it rides
	// with the next batch, or goes as its own (ReplPositionTrailerPending).
	trailed := ks.trailerSet && !ks.cleaning && !flushAll
	if trailed { // replpos.go: the position rides with this batch
		b.buf = append(b.buf, ks.trailer...)
		b.n += ks.trailerN
	}
	if b.Size() > ks.recordLimit && b.n > 1 {
		// Several operations: several records, split between operations.
		ends, err := b.split(ks.recordLimit)
		if err != nil {
			panic(fmt.Sprintf("keyspace: batch does not decode: %v", err))
		}
		if len(ends) > 1 {
			err := ks.commitGroup(b, ends)
			if err == nil && trailed {
				ks.trailerSet = false
			}
			return err
		}
		// One operation larger than the limit (a huge string value): a
		// record of its own, as any single operation.
	}
	var flags uint8
	if ks.txnOpen {
		flags = wal.FlagTxn
		if !ks.txnWrote {
			flags |= wal.FlagTxnBegin
		}
	}
	appendRecord := ks.wal.Append
	if flushAll {
		appendRecord = ks.wal.AppendFreeing // may use the space kept for it
	}
	n := b.Size()
	if ks.kixAccess.slots != nil && len(b.buf) > 0 && b.buf[0] == opSet && ks.kixOn() {
		// apply will store the access data of the batch's first
		// operation, a set, at the start of the record's payload: ask
		// for its slot now, so that its cache miss (the access table is
		// 1 MB, read at random; accessTable.put was 3% of the server's
		// CPU at SET -P 16) overlaps the record's encoding and the
		// replaced record's bookkeeping. A hint: should the record not
		// start there (a new segment), nothing but the line is lost.
		keyindex.PrefetchAddr(unsafe.Pointer(ks.kixAccess.slot(ks.kix.endSeg<<40 | (ks.kix.endOff + wal.HeaderSize))))
	}
	var loc wal.Location
	var err error
	if len(b.borrowed) > 0 {
		// A borrowed value goes from where it is to the log (wal.DirectMin).
		loc, err = ks.wal.AppendParts(wal.TypeBatch, flags, b.parts())
	} else {
		loc, err = appendRecord(wal.TypeBatch, flags, b.buf)
	}
	if err != nil {
		return ks.writeError(err, n)
	}
	ks.kixAppended(loc, n)
	ks.appended.Add(int64(wal.RecordSize(n)))
	ks.writeSucceeded()
	if ks.txnOpen {
		ks.txnWrote = true
	}
	if trailed {
		ks.trailerSet = false
	}
	ks.applyRecord(loc, n)
	ks.applyNow = 0 // its opClock, if any, judged this batch alone
	return nil
}

// commitGroup writes a batch larger than one record may be as records of
// at most recordLimit bytes (ends: each record's end in b's payload, from
// Batch.split; borrowed values go from where they are) that form a transaction group, so a rewrite of
// a huge collection (the cleaner, COPY, RENAME, MOVE, a *STORE) never makes
// a huge record and recovery still applies it whole or not at all:
//
//   - outside a transaction the records are a group of their own (the first
//     flagged txn-begin) followed by a commit record;
//   - inside one (MULTI/EXEC, scripts) they join the open group, whose
//     commit record EndTxn writes.
//
// Nothing is applied until every record is written, so a failed append
// applies nothing: the records already written are an unfinished group,
// which the next record (outside any group, or beginning one) abandons
// and recovery drops. The one exception is a failure inside a transaction
// group whose earlier records are already applied: the group can then be
// neither committed (this command would be half done) nor abandoned (the
// earlier commands are in memory), so the keyspace fails-stop as EndTxn
// does.
//
// Each record but the last is made durable before the next is appended.
// Recovery takes a damaged record in the active segment for a torn tail
// only if at most wal.TornTailLimit bytes of valid records follow it (a
// torn write of one group commit); a group persisted by one flush could
// leave a damaged early record followed by megabytes of intact ones, which
// recovery would have to call corruption. Persisting record by record
// leaves at most the record in flight (and the 24-byte commit record)
// after a damaged one. It costs one flush+fence or msync per record
// instead of one per batch.
//
// The keyspace lock is held throughout, as for any commit: a record of
// another writer between two records of the group would end the group
// (the wal's groups cannot interleave), and the in-memory state must not
// show half a batch.
func (ks *Keyspace) commitGroup(b *Batch, ends []int) error {
	joined := ks.txnOpen && ks.txnWrote // earlier records of the group are applied
	locs := make([]wal.Location, 0, len(ends))
	start := 0
	for i, end := range ends {
		flags := uint8(wal.FlagTxn)
		if i == 0 && !joined {
			flags |= wal.FlagTxnBegin
		}
		var loc wal.Location
		var err error
		if len(b.borrowed) > 0 {
			loc, err = ks.wal.AppendParts(wal.TypeBatch, flags, b.partsIn(start, end))
		} else {
			loc, err = ks.wal.Append(wal.TypeBatch, flags, b.buf[start:end])
		}
		if err == nil && i < len(ends)-1 {
			err = ks.wal.WaitDurable(loc.LSN)
			if err == nil && i == 0 && ks.cleaning {
				pauseHook("clean:group")
			}
		}
		if err != nil {
			if joined && i > 0 {
				ks.failed = fmt.Errorf("ERR persistence failure, writes refused: a transaction's records were cut short: %v", err)
				ks.writeFailing.Store(true)
				return ks.failed
			}
			return ks.writeError(err, end-start)
		}
		locs = append(locs, loc)
		ks.kixAppended(loc, end-start)
		ks.appended.Add(int64(wal.RecordSize(end - start)))
		start = end
	}
	if ks.txnOpen {
		ks.txnWrote = true
	} else if c, err := ks.wal.Append(wal.TypeCommit, wal.FlagTxn, nil); err != nil {
		return ks.writeError(err, 0)
	} else {
		ks.kixAppended(c, 0)
	}
	ks.writeSucceeded()
	start = 0
	for i, loc := range locs {
		ks.applyRecord(loc, ends[i]-start)
		start = ends[i]
	}
	ks.applyNow = 0 // an opClock in the first record judged them all
	return nil
}

// applyRecord applies the batch record of n payload bytes just written at
// loc.
func (ks *Keyspace) applyRecord(loc wal.Location, n int) {
	ks.curLSN = loc.LSN
	start := loc.Off + wal.HeaderSize
	if err := ks.applyPayload(loc.Seg, start, start+int64(n)); err != nil {
		panic(fmt.Sprintf("keyspace: record just written does not decode: %v", err))
	}
	ks.kix.old.loc = 0 // kixExists's memo serves one command's write only
}

// writeError records a failed commit of a record with an n-byte payload
// (INFO aof_last_write_status) and maps err to the reply clients get. A
// full disk starts refusing writes (see CheckWritable).
func (ks *Keyspace) writeError(err error, n int) error {
	ks.writeFailing.Store(true)
	if errors.Is(err, arena.ErrNoSpace) {
		ks.noSpaceNeed = max(ks.noSpaceNeed, n)
		if !ks.noSpace.Swap(true) && ks.logf != nil {
			// Once per episode, as redis-server logs its failed AOF write.
			ks.logf("Error writing to the log: %v; write commands get MISCONF until there is room again", err)
		}
	}
	return mapWriteError(err)
}

// writeSucceeded clears the failed-commit mark after a successful append
// (not while writes are refused: FLUSHALL and the cleaner still write).
func (ks *Keyspace) writeSucceeded() {
	if ks.writeFailing.Load() && !ks.noSpace.Load() {
		ks.writeFailing.Store(false)
	}
}

// Full disk.
//
// Redis, once a write to its AOF fails, refuses every write command (and
// PING) with MISCONF until a retry of the write succeeds (in its cron and
// before each event loop sleep), and INFO says aof_last_write_status:err
// meanwhile. Persimmon does the same: the first commit that fails for
// lack of space starts refusing (writeError), whatever the size of later
// writes, so a small write that happens to fit the blocks already
// allocated does not succeed between failed ones. The retry is
// CheckWritable: room for the failed record (at most maxNoSpaceProbe
// bytes) in the active segment, or free space on the filesystem for a new
// segment holding it. It runs before a write is refused and every 100 ms
// in the background (so INFO turns ok without a write). Two exceptions,
// both because they free space: FLUSHALL (its record may use the few
// bytes every other record leaves free after it, wal.AppendFreeing, and
// the cleaner then removes every segment older than it without copying)
// and the cleaner's own copies.

// maxNoSpaceProbe caps the room CheckWritable asks for: one huge failed
// value must not keep every small write refused after space is freed.
const maxNoSpaceProbe = 1 << 20

// RefusingWrites reports (without the lock) whether writes may be refused
// for lack of space; CheckWritable gives the answer.
func (ks *Keyspace) RefusingWrites() bool { return ks.noSpace.Load() }

// CheckWritable returns ErrNoSpace while writes are refused for lack of
// disk space, after retrying: if the log has room again it stops refusing
// and returns nil. Call with the lock held.
func (ks *Keyspace) CheckWritable() error {
	if !ks.noSpace.Load() {
		return nil
	}
	if ks.wal.Writable(min(ks.noSpaceNeed, maxNoSpaceProbe)) != nil {
		return ErrNoSpace
	}
	ks.noSpace.Store(false)
	ks.noSpaceNeed = 0
	ks.writeFailing.Store(false)
	if ks.logf != nil {
		ks.logf("Log write error looks solved: there is room again, writes are accepted") // Redis: "AOF write error looks solved, Redis can write again."
	}
	return nil
}

func mapWriteError(err error) error {
	switch {
	case errors.Is(err, arena.ErrNoSpace):
		return ErrNoSpace
	}
	return fmt.Errorf("ERR persistence failure, writes refused: %v", err)
}

// applyPayload applies the operations of the batch payload [off, end) of
// seg. Locations point into the mapping, so the index refers to the logged
// bytes themselves.
func (ks *Keyspace) applyPayload(seg *arena.Segment, off, end int64) error {
	buf := seg.Bytes()[:end]
	ks.lastDel.ok = false // anchoring is within one record (object.anchored)
	var o op
	for off < end {
		if err := o.decode(buf[off:]); err != nil {
			return fmt.Errorf("%s offset %d: %w", seg.Path(), off, err)
		}
		if ks.anchorFilter {
			if !ks.kixAnchorWanted(o, seg.ID()<<40|uint64(off)) {
				if o.kind == opDel { // a rewrite's delete: the anchor after it is anchored
					ks.lastDel.db, ks.lastDel.key, ks.lastDel.ok = o.db, o.key, true
				}
				off += int64(o.size)
				continue
			}
			ks.kix.anchors.applied++
		}
		if err := ks.apply(&o, seg.ID()<<40|uint64(off)); err != nil {
			return fmt.Errorf("%s offset %d: %w", seg.Path(), off, err)
		}
		off += int64(o.size)
	}
	return nil
}

// apply is the single place where the in-memory state changes, for live
// commands and for recovery alike. It may change *o (applyObject sets
// its loc); o is a pointer so that the operation applyPayload decoded is
// not copied again (op.decode).
func (ks *Keyspace) apply(o *op, loc uint64) error {
	switch o.kind {
	case opSet, opSetRef:
		if ks.dropsAtExpiry(o.db, o.key, o.expireAt) {
			ks.removeKey(o.db, string(o.key))
			ks.touch(o.db, o.key)
			return nil
		}
		if o.expireAt != 0 && ks.rx.on {
			ks.trackExpiry(o.db, o.key)
		}
		size := int64(o.size)
		if o.kind == opSetRef {
			size = ks.stringLiveSize(*o)
			ks.refs[o.ref] = refHolder{o.db, string(o.key)}
		}
		d := ks.dbs[o.db]
		if ks.kixOn() {
			// A string of one operation: into the index, out of DRAM.
			_, inDRAM := d.index[string(o.key)]
			if inDRAM {
				ks.removeKeyKeeping(o.db, string(o.key), o.ref)
			}
			old, ok := ks.kixGet(o.db, o.key)
			oldLoc := old
			switch {
			case ks.kixRepairing(): // counted in the checkpoint
			case ok:
				size, expireAt := ks.kixOld(old)
				ks.liveBytes -= int64(size)
				ks.dropString(o.db, string(o.key), old, o.ref)
				if expireAt != 0 {
					ks.kix.ttlCounts[o.db]--
				}
			default:
				ks.kix.counts[o.db]++
				if !inDRAM {
					ks.keyCreated(o.db, o.key)
				}
			}
			ks.kixWrite(o.db, o.key, loc, o.expireAt != 0)
			if !ks.replaying {
				ks.kixAccess.rewrite(oldLoc, loc) // a loaded key's idle time counts from the load, as in Redis
			}
			if !ks.kixRepairing() {
				ks.liveBytes += size
				if o.expireAt != 0 {
					ks.kix.ttlCounts[o.db]++
				}
			}
			ks.touch(o.db, o.key)
			return nil
		}
		if i, ok := d.index[string(o.key)]; ok {
			e := &d.entries[i]
			ks.liveBytes -= entryBytes(e)
			if e.expireAt != 0 {
				d.volatile--
			}
			ks.dropEntry(o.db, e, o.ref)
			e.loc, e.expireAt, e.size, e.obj = loc, o.expireAt, uint32(size), nil
		} else {
			d.insert(entry{key: string(o.key), loc: loc, expireAt: o.expireAt, size: uint32(size)})
			ks.keyCreated(o.db, o.key)
		}
		ks.liveBytes += size
		if o.expireAt != 0 {
			d.volatile++
			ks.expires.push(expiryItem{at: o.expireAt, db: o.db, key: d.entries[d.index[string(o.key)]].key})
		}
		ks.touch(o.db, o.key)
	case opDel:
		ks.removeKey(o.db, string(o.key))
		ks.touch(o.db, o.key)
		ks.lastDel.db, ks.lastDel.key, ks.lastDel.ok = o.db, o.key, true
	case opFlushDB:
		ks.flushDB(o.db)
	case opFlushAll:
		if ks.kixOn() {
			for i := range ks.dbs {
				ks.touchDB(i, nil) // before the indexed keys go (see touchDB)
			}
			ks.kixFlushDB(nil, func(_ []byte, l uint64) {
				ks.liveBytes -= int64(ks.kixEntry("", l).size)
				ks.setDied(l)
			})
			ks.anchorsUnindexed(nil) // the anchor slots went too
		}
		for i := range ks.dbs {
			ks.flushDB(i)
		}
		ks.refsFlushed(-1)
		ks.flushAllSeg = loc >> 40
		ks.flushTracked()
	case opClock:
		return ks.applyClock(*o)
	case opFunctions:
		return ks.applyFunctions(*o, loc)
	case opReplPosition:
		return ks.applyReplPosition(*o, loc)
	case opSwapDB:
		// The anchors of both databases' entries name the database they
		// were written in too: the entries keep none (kixanchor.go).
		swapped := []int{o.db, o.db2}
		if ks.kixOn() && (ks.kixLen(o.db) > 0 || ks.kixLen(o.db2) > 0 || ks.kix.anchors.counts[o.db] > 0 || ks.kix.anchors.counts[o.db2] > 0) {
			// The operations of indexed keys name the database they were
			// written in: move both databases' keys to DRAM entries.
			ks.kixFlushDB(swapped, func(key []byte, l uint64) {
				if o2, err := ks.opAt(l); err == nil {
					d := ks.dbs[o2.db]
					d.insert(entry{key: string(key), loc: l, size: uint32(ks.stringLiveSize(o2)), expireAt: o2.expireAt})
					if o2.expireAt != 0 {
						d.volatile++ // the expiry heap is rebuilt below
					}
				}
			})
		}
		ks.anchorsUnindexed(swapped)
		ks.touchDB(o.db, ks.dbs[o.db2])
		ks.touchDB(o.db2, ks.dbs[o.db])
		ks.dbs[o.db], ks.dbs[o.db2] = ks.dbs[o.db2], ks.dbs[o.db]
		ks.refsSwapped(o.db, o.db2)
		ks.replayExpiredSwapped(o.db, o.db2)
		ks.swappedSeg = max(ks.swappedSeg, loc>>40+1)
		ks.expires.rebuild(ks.dbs[:])
		ks.flushTracked()
	default:
		return ks.applyObject(o, loc)
	}
	return nil
}

// entryBytes is what an entry counts in the live bytes.
func entryBytes(e *entry) int64 {
	if e.obj != nil {
		return e.obj.bytes
	}
	return int64(e.size)
}

func (ks *Keyspace) removeKey(dbi int, key string) { ks.removeKeyKeeping(dbi, key, 0) }

// removeKeyKeeping is removeKey for a key being replaced by an opSetRef
// naming keep, which stays held.
func (ks *Keyspace) removeKeyKeeping(dbi int, key string, keep uint64) {
	if e, ok := ks.dbs[dbi].remove(key); ok {
		ks.anchorDrop(dbi, &e, true)
		ks.liveBytes -= entryBytes(&e)
		ks.dropEntry(dbi, &e, keep)
		return
	}
	if ks.kixOn() {
		ks.kixRemove(dbi, []byte(key))
	}
}

// setDied records that the set operation at loc no longer holds its key's
// value (see deadSets). Only a string entry's own location may be given:
// the base value of a patched string (stringpatch) stays live inside its
// object and must not be recorded. Offsets past 4 GiB get no hint.
func (ks *Keyspace) setDied(loc uint64) {
	if off := loc & (1<<40 - 1); off < 1<<32 {
		ks.deadSets[loc>>40] = append(ks.deadSets[loc>>40], uint32(off))
	}
}

func (ks *Keyspace) flushDB(dbi int) {
	ks.touchDB(dbi, nil)
	if ks.kixLen(dbi) > 0 || ks.kix.anchors.counts[dbi] > 0 {
		ks.kixFlushDB([]int{dbi}, func(_ []byte, l uint64) {
			ks.liveBytes -= int64(ks.kixEntry("", l).size)
			ks.setDied(l)
		})
	}
	for i := range ks.dbs[dbi].entries {
		e := &ks.dbs[dbi].entries[i]
		ks.liveBytes -= entryBytes(e)
		if e.obj == nil {
			ks.setDied(e.loc) // an opSetRef's base: refsFlushed
		}
	}
	ks.anchorsUnindexed([]int{dbi}) // their slots went with kixFlushDB's
	ks.refsFlushed(dbi)
	ks.dbs[dbi] = newDB()
}

// BeginTxn starts a transaction group (MULTI/EXEC, scripts): every batch
// committed until EndTxn belongs to it, and recovery applies the group only
// if its commit marker was written.
func (ks *Keyspace) BeginTxn() {
	ks.txnOpen, ks.txnWrote = true, false
}

// EndTxn writes the group's commit marker (if the group wrote anything).
// If the marker cannot be written the in-memory state is ahead of the log:
// the keyspace then refuses every further write (fail-stop).
func (ks *Keyspace) EndTxn() error {
	wrote := ks.txnWrote
	ks.txnOpen, ks.txnWrote = false, false
	if !wrote {
		return nil
	}
	loc, err := ks.wal.Append(wal.TypeCommit, wal.FlagTxn, nil)
	if err != nil {
		// Fail-stop: the held writes are never published.
		ks.failed = fmt.Errorf("ERR persistence failure, writes refused: commit marker not written: %v", err)
		return ks.failed
	}
	ks.kixAppended(loc, 0)
	return nil
}

// LastLSN is the LSN of the last record appended (durable or not). Safe
// without the lock.
func (ks *Keyspace) LastLSN() uint64 { return ks.wal.LastLSN() }

// WaitDurable blocks until every record up to lsn is durable under the
// durability mode in force (group commit). Call it without the lock.
func (ks *Keyspace) WaitDurable(lsn uint64) error { return ks.wal.WaitDurable(lsn) }

// WaitDurableNow is WaitDurable for the event loop and its committer
// (wal.WAL.WaitDurableNow). Call it without the lock.
func (ks *Keyspace) WaitDurableNow(lsn uint64) error { return ks.wal.WaitDurableNow(lsn) }

// AsyncSync enables the wal's asynchronous group commit (io_uring, wal
// async.go) and returns the wal, whose StartAsync, ReapAsync and
// AsyncEventFd the server's event loop then calls; an error where io_uring
// is unavailable. Safe without the lock.
func (ks *Keyspace) AsyncSync() (*wal.WAL, error) {
	if err := ks.wal.EnableAsync(); err != nil {
		return nil, err
	}
	return ks.wal, nil
}

// DurableLSN is the highest LSN known durable; safe without the lock.
func (ks *Keyspace) DurableLSN() uint64 { return ks.wal.DurableLSN() }

// SyncStats is what the wal's group commits so far cost and covered; safe
// without the lock.
func (ks *Keyspace) SyncStats() wal.SyncStats { return ks.wal.SyncStats() }

// Stats is a snapshot for INFO.
type Stats struct {
	Keys          [NumDBs]int // keys per db
	Expires       [NumDBs]int // keys with an expiry per db
	ArenaBytes    int64       // bytes of segment files on disk
	LiveBytes     int64       // bytes of live records
	Segments      int         // segment files
	ExpiredKeys   int64       // keys removed by expiry since start (or CONFIG RESETSTAT)
	LazyFreed     int64       // values removed through an asynchronous path above LazyFreeThreshold (lazyfree.go)
	TrackedKeys   int64       // keys a writable replica expires itself (INFO slave_expires_tracked_keys)
	KeyspaceHits  int64       // keys found by read-only commands' lookups (see CountLookups)
	KeyspaceMiss  int64       // keys those lookups did not find
	WriteFailing  bool        // the last commit failed (disk full, persistence failure)
	CleanedBytes  int64       // bytes reclaimed by segment cleaning since start
	AppendedBytes int64       // bytes of batch records appended since start (headers included; the cleaner's copies too)
	DamagedKeys   int64       // locations the key index names that could not be read while serving (damage.go)
	Scrubbed      int64       // segments trusted at start-up verified in the background since (scrub.go)
	ScrubDamaged  int64       // of those, the ones that did not verify
	Flushes       int64       // group commits (flush+fence or msync) since start
	SyncedRecords int64       // records made durable by those group commits
	Mode          string      // durability mode in force
	LastLSN       uint64
	DurableLSN    uint64

	// Sync is what the group commits' syncs cost and covered.
	Sync wal.SyncStats

	// Index is the persistent key index (On false when not attached).
	Index IndexStats
	// Tiers are the index's lock and the record cache (memtier.go).
	Tiers TierStats
}

// Stats returns a snapshot; safe without the lock (key counts are as of the
// last Unlock).
func (ks *Keyspace) Stats() Stats {
	s := Stats{
		ArenaBytes:    ks.arena.Bytes(),
		LiveBytes:     ks.liveSnapshot.Load(),
		Segments:      len(ks.arena.Segments()),
		ExpiredKeys:   ks.expiredKeys.Load(),
		LazyFreed:     ks.lazyFreed.Load(),
		TrackedKeys:   ks.rx.trackedN.Load(),
		KeyspaceHits:  ks.hits.Load(),
		KeyspaceMiss:  ks.misses.Load(),
		WriteFailing:  ks.writeFailing.Load(),
		CleanedBytes:  ks.cleanedBytes.Load(),
		AppendedBytes: ks.appended.Load(),
		DamagedKeys:   ks.damagedKeys.Load(),
		Scrubbed:      ks.scrubbed.Load(),
		ScrubDamaged:  ks.scrubDamaged.Load(),
		Flushes:       ks.wal.Flushes(),
		SyncedRecords: ks.wal.SyncedRecords(),
		Sync:          ks.wal.SyncStats(),
		Mode:          ks.arena.Mode().String(),
		LastLSN:       ks.wal.LastLSN(),
		DurableLSN:    ks.wal.DurableLSN(),
	}
	if p := ks.kix.snap.Load(); p != nil {
		s.Index = *p
	}
	if p := ks.tierSnap.Load(); p != nil {
		s.Tiers = *p
	}
	for i := range s.Keys {
		s.Keys[i] = int(ks.keysSnapshot[i].Load())
		s.Expires[i] = int(ks.volSnapshot[i].Load())
	}
	return s
}

// snapshotCounts publishes per-db counts for Stats; called by the
// background loop under the lock.
func (ks *Keyspace) snapshotCounts() {
	for i, d := range ks.dbs {
		ks.keysSnapshot[i].Store(int64(len(d.entries) + ks.kixLen(i)))
		ks.volSnapshot[i].Store(int64(d.volatile + ks.kixTTLLen(i)))
	}
}

// Close stops background work, makes everything durable and unmaps the
// arena. It is idempotent.
func (ks *Keyspace) Close() error {
	ks.mu.Lock()
	if ks.closed {
		ks.mu.Unlock()
		return ks.closeErr
	}
	ks.closed = true
	close(ks.stop)
	ks.mu.Unlock()
	ks.stopped.Wait()

	ks.mu.Lock()
	defer ks.mu.Unlock()
	var err error
	if !ks.noCloseCheckpoint {
		err = ks.kixCheckpoint() // a restart then replays nothing
	} else if ks.kixOn() {
		err = ks.kix.ix.Settle() // a job in flight ends (a kill may land after it as well)
	}
	if werr := ks.wal.Close(); err == nil { // persists everything, then the clean-shutdown mark
		err = werr
	}
	if ks.kixOn() {
		if cerr := ks.kix.ix.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := ks.arena.Close(); err == nil {
		err = cerr
	}
	ks.rc.close()
	ks.rc, ks.rcOn = nil, nil
	ks.closeErr = err
	return err
}

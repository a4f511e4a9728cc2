package keyspace

import (
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Access times and frequencies for OBJECT IDLETIME and OBJECT FREQ
// (semantics: redis.io OBJECT), kept as Redis keeps them in 24 bits per
// key, in DRAM only (a restart starts every key afresh, as Redis loading
// an RDB without LRU/LFU data does):
//
//   - LRU (every maxmemory-policy but the LFU ones): the last access in
//     seconds, modulo 2^24 (Redis's LRU clock).
//   - LFU (volatile-lfu, allkeys-lfu): the last decrement time in minutes
//     (16 bits) and a logarithmic access counter (8 bits), starting at 5,
//     incremented with probability 1/((counter-5)*lfu-log-factor+1), and
//     decremented by one per lfu-decay-time minutes of idleness.
//
// A lookup touches the key (lookup); TYPE, EXISTS, TTL, OBJECT and MEMORY
// USAGE do not (peek). Keys served from the persistent key index
// (--key-index yes) have no DRAM entry: their access data lives in a
// bounded side table (accessTable) keyed by the location of the key's
// live operation. The clock is one process-wide value refreshed by every
// keyspace's background tick (100 ms), as Redis's cached lruclock.

// lruField is the 24 bits of a key's access data, 3 bytes of an entry.
// It is a struct of bytes, not a [3]byte: the compiler keeps a small
// struct in registers, but an array of more than one element always in
// memory, so every lruField passed or returned went through the stack
// as three byte stores read back by a wider load, a failed store
// forwarding that waits for the store buffer to drain. On a SET, whose
// record stores into the mapping are still in flight at that point, the
// wait was ~80 ns (newLRU was 3.9% of BenchmarkCommands/SET's CPU by perf,
// the largest single function).
type lruField struct{ b0, b1, b2 byte }

func (f lruField) get() uint32 { return uint32(f.b0) | uint32(f.b1)<<8 | uint32(f.b2)<<16 }

// lruOf is the field holding v's low 24 bits. Fields are built by value
// (f = lruOf(v)), never through a pointer to a local, which would put the
// local back on the stack.
func lruOf(v uint32) lruField { return lruField{byte(v), byte(v >> 8), byte(v >> 16)} }

const (
	lruClockMax = 1<<24 - 1
	lfuInitVal  = 5
)

var (
	// lruSeconds is the LRU clock: Unix seconds modulo 2^24.
	lruSeconds atomic.Uint32
	// lruSkew moves the clock on (seconds; tests).
	lruSkew atomic.Int64
	// lfuMode: an LFU maxmemory-policy is in force (SetAccessPolicy).
	lfuMode atomic.Bool
	// lfuLogFactor and lfuDecayTime are lfu-log-factor and lfu-decay-time.
	lfuLogFactor atomic.Int64
	lfuDecayTime atomic.Int64
)

func init() {
	tickLRUClock()
	lfuLogFactor.Store(10)
	lfuDecayTime.Store(1)
}

func tickLRUClock() {
	now := time.Now().Unix() + lruSkew.Load()
	lruUnix.Store(now)
	lruSeconds.Store(uint32(now) & lruClockMax)
}

// lruUnix is the LRU clock's time in whole Unix seconds (not wrapped):
// an access table slot's time, the clock its access data was read from,
// so a touch reads no system clock.
var lruUnix atomic.Int64

// SetAccessPolicy says whether keys count access frequency (an LFU
// maxmemory-policy) or time, and the LFU parameters (lfu-log-factor,
// lfu-decay-time in minutes). Keys keep their 24 bits; switched at run
// time, old values read in the other meaning until the keys are touched,
// as in Redis.
func SetAccessPolicy(lfu bool, logFactor, decayMinutes int64) {
	lfuMode.Store(lfu)
	lfuLogFactor.Store(logFactor)
	lfuDecayTime.Store(decayMinutes)
}

func lfuMinutes() uint32 { return uint32(time.Now().Unix()/60) & 0xffff }

// newLRU is a new key's access data.
func newLRU() lruField {
	if lfuMode.Load() {
		return lruOf(lfuMinutes()<<8 | lfuInitVal)
	}
	return lruOf(lruSeconds.Load())
}

// touch records an access.
func (f *lruField) touch() { *f = f.touched() }

// touched is f after an access.
func (f lruField) touched() lruField {
	if !lfuMode.Load() {
		return lruOf(lruSeconds.Load())
	}
	c := f.lfuCounter()
	if c < 255 {
		base := max(int64(c)-lfuInitVal, 0)
		if rand.Float64() < 1/float64(base*lfuLogFactor.Load()+1) {
			c++
		}
	}
	return lruOf(lfuMinutes()<<8 | uint32(c))
}

// lfuCounter is the counter decayed by the minutes since its last
// decrement.
func (f lruField) lfuCounter() uint8 {
	v := f.get()
	ldt, c := v>>8, int64(v&0xff)
	now := lfuMinutes()
	elapsed := int64(now) - int64(ldt)
	if now < ldt {
		elapsed = 65535 - int64(ldt) + int64(now)
	}
	if d := lfuDecayTime.Load(); d > 0 {
		c = max(c-elapsed/d, 0)
	}
	return uint8(c)
}

// idleSeconds is the time since the last access, by the LRU clock.
func (f lruField) idleSeconds() int64 {
	now, then := lruSeconds.Load(), f.get()
	if now >= then {
		return int64(now - then)
	}
	return int64(lruClockMax - then + now) // the clock wrapped
}

// Touch is TOUCH: it reports whether key exists, and counts as an access.
func (ks *Keyspace) Touch(db int, key []byte) bool { return ks.lookup(db, key) != nil }

// PeekString returns the string value of key without counting an access
// (Redis's LOOKUP_NOTOUCH: OBJECT ENCODING and DEBUG OBJECT read a
// string's bytes to name its encoding); ok is false when the key does not
// exist or is not a string.
func (ks *Keyspace) PeekString(db int, key []byte) (val []byte, ok bool) {
	e := ks.peek(db, key)
	switch {
	case e == nil:
		return nil, false
	case e.obj == nil:
		return ks.value(e), true
	}
	if s, isStr := e.obj.coll.(*stringObj); isStr {
		return s.value(ks), true
	}
	return nil, false
}

// IdleTime is OBJECT IDLETIME: the seconds since key was last accessed;
// ok is false when it does not exist. Reading it is no access.
func (ks *Keyspace) IdleTime(db int, key []byte) (sec int64, ok bool) {
	e := ks.peek(db, key)
	switch {
	case e == nil:
		return 0, false
	case e.kix:
		return ks.kixAccess.field(e.loc).idleSeconds(), true
	}
	return e.lru.idleSeconds(), true
}

// AccessFrequency is OBJECT FREQ: the key's logarithmic access counter
// (meaningful under an LFU policy); ok is false when it does not exist.
func (ks *Keyspace) AccessFrequency(db int, key []byte) (freq int64, ok bool) {
	e := ks.peek(db, key)
	switch {
	case e == nil:
		return 0, false
	case e.kix:
		return int64(ks.kixAccess.field(e.loc).lfuCounter()), true
	}
	return int64(e.lru.lfuCounter()), true
}

// accessTable holds the access data of the indexed keys written or read
// recently, keyed by the location of each one's live operation (unique
// for the key's current value: a write gets a new location, and
// locations are never reused). It is a direct-mapped cache of
// accessTableMax slots (a hash of the location picks the slot; a key
// touched takes its slot over from whatever was there), so a touch is one
// store into a 1 MB array, not a map insertion: it is on every GET and SET
// of an indexed key. A key not in it reads as last accessed at the floor:
// the start (Redis's keys loaded at start-up count their idle time from
// the load) or the access time of the newest entry evicted, whichever is
// later, which never exceeds the key's real idle time. Cost: 16 bytes a
// slot, 1 MB whatever the number of keys (0.1 byte a key at 10 M keys;
// target 1 of issue 11 is 40 bytes a key).
type accessTable struct {
	slots []accessSlot // nil until the first touch
	// floorSec is the floor in Unix seconds.
	floorSec int64
}

type accessSlot struct {
	loc uint64 // 0: empty
	at  uint32 // Unix seconds of the access (the floor after its eviction)
	f   lruField
}

// accessTableMax is the number of slots of an accessTable.
const accessTableMax = 1 << 16

func (t *accessTable) slot(loc uint64) *accessSlot {
	return &t.slots[(loc*0x9e3779b97f4a7c15)>>(64-16)]
}

// field returns the access data of the indexed key whose live operation
// is at loc.
func (t *accessTable) field(loc uint64) lruField {
	t.init()
	if a := t.slot(loc); a.loc == loc {
		return a.f
	}
	return t.floorField()
}

// floorField is the floor in the form the policy in force reads.
func (t *accessTable) floorField() lruField {
	if lfuMode.Load() {
		return lruOf(uint32(t.floorSec/60)&0xffff<<8 | lfuInitVal)
	}
	return lruOf(uint32(t.floorSec) & lruClockMax)
}

func (t *accessTable) init() {
	if t.slots == nil {
		t.slots = make([]accessSlot, accessTableMax)
		t.floorSec = time.Now().Unix() + lruSkew.Load()
	}
}

// touch records a read access to the key whose live operation is at loc.
func (t *accessTable) touch(loc uint64) {
	t.put(loc, t.field(loc).touched())
}

// rewrite records a write giving the key at old (0: a new key) a new
// value at loc: fresh data, except that under an LFU policy the counter
// carries over, as Redis 7.0's dbOverwrite keeps the old object's.
func (t *accessTable) rewrite(old, loc uint64) {
	t.init()
	if old != 0 && lfuMode.Load() {
		t.put(loc, t.field(old).touched())
		return
	}
	t.put(loc, newLRU())
}

func (t *accessTable) put(loc uint64, f lruField) {
	a := t.slot(loc)
	if a.loc != 0 && a.loc != loc {
		// The evicted key's last access is the newest the floor can
		// vouch for: every key not in the table was accessed no later.
		t.floorSec = max(t.floorSec, int64(a.at))
	}
	a.loc, a.at, a.f = loc, uint32(lruUnix.Load()), f // field by field: a composite literal is built on the stack and copied
}

// SetAccess sets key's access data as RESTORE's IDLETIME and FREQ do
// (Redis's objectSetLRUOrLFU): under an LFU policy the counter becomes
// freq, if freq >= 0; under any other policy the last access becomes idle
// seconds ago, if idle >= 0. The other argument is ignored, as in Redis.
// It reports whether it set anything.
func (ks *Keyspace) SetAccess(db int, key []byte, idle int64, freq int) bool {
	var f lruField
	at := lruUnix.Load()
	switch {
	case lfuMode.Load() && freq >= 0:
		f = lruOf(lfuMinutes()<<8 | uint32(min(freq, 255)))
	case !lfuMode.Load() && idle >= 0:
		v := int64(lruSeconds.Load()) - idle%(lruClockMax+1)
		if v < 0 {
			v += lruClockMax + 1
		}
		f = lruOf(uint32(v))
		at -= idle
	default:
		return false
	}
	e := ks.peek(db, key)
	if e == nil {
		return false
	}
	if !e.kix {
		e.lru = f // peek's entry is the database's own
		return true
	}
	t := &ks.kixAccess
	t.init()
	t.put(e.loc, f)
	t.slot(e.loc).at = uint32(max(at, 0)) // the access it stands for: the floor stays a lower bound
	return true
}

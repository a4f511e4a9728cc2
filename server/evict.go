package server

import (
	"math"
	"strconv"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Key eviction (semantics: redis.io "Key eviction"; Redis 7.0's evict.c).
// Before each command, while maxmemory is set and used memory is above it,
// the server deletes keys chosen by maxmemory-policy until it is under:
//
//   - allkeys-random, volatile-random: a random key (of those with an
//     expiry, for volatile-*), the databases taken in turn;
//   - allkeys-lru, volatile-lru, allkeys-lfu, volatile-lfu, volatile-ttl:
//     maxmemory-samples random keys of every database go into a pool of
//     the 16 best candidates so far (kept between evictions, as Redis's
//     EvictionPoolLRU), ranked by idle time, by 255 minus the decayed LFU
//     counter, or by how soon the key expires; the best one that still
//     exists is deleted.
//
// An evicted key is deleted as DEL deletes it: a logged delete record (a
// restart does not bring it back), the replicas get DEL (UNLINK with
// lazyfree-lazy-eviction), "evicted" is published to keyspace-event
// subscribers (class e), client-side caches are invalidated before the
// reply of the command that made room (Redis's order), WATCH sees it
// touched, and INFO evicted_keys counts it.
//
// The loop stops when used memory is under the limit, when no key can be
// chosen (noeviction, or no key with an expiry for a volatile policy): the
// command is then answered as over maxmemory (maxmemory.go), or after the
// time maxmemory-eviction-tenacity allows (Redis's evictionTimeLimitUs):
// the command runs and the next one evicts further, as Redis's
// EVICT_RUNNING. Nothing is evicted on a replica with
// replica-ignore-maxmemory yes (it follows its master's deletes) or while
// clients are paused (CLIENT PAUSE), as in Redis.
//
// Used memory (usedMemory, INFO used_memory) is the live Go heap as of the
// last collection plus the arena's live record bytes (values and
// collections' element bytes live there, not on the heap), less an
// estimate of the heap the keys evicted recently held: a heap reading
// sees a deletion only once a collection has completed after it. Garbage
// not yet collected is not counted (Redis's allocator has none), so
// mem_not_counted_for_evict is 0.

// Eviction policies (maxmemory-policy).
const (
	policyNoEviction int32 = iota
	policyAllkeysLRU
	policyAllkeysLFU
	policyAllkeysRandom
	policyVolatileLRU
	policyVolatileLFU
	policyVolatileRandom
	policyVolatileTTL
)

var policyByName = map[string]int32{
	"noeviction": policyNoEviction, "allkeys-lru": policyAllkeysLRU, "allkeys-lfu": policyAllkeysLFU,
	"allkeys-random": policyAllkeysRandom, "volatile-lru": policyVolatileLRU, "volatile-lfu": policyVolatileLFU,
	"volatile-random": policyVolatileRandom, "volatile-ttl": policyVolatileTTL,
}

func policyVolatile(p int32) bool { return p >= policyVolatileLRU }

func policyRandom(p int32) bool { return p == policyAllkeysRandom || p == policyVolatileRandom }

// evictPoolSize is Redis's EVPOOL_SIZE.
const evictPoolSize = 16

// evictCandidate is one pool entry: higher score evicts first.
type evictCandidate struct {
	score uint64
	db    int
	key   string
}

// evictState is the eviction loop's state (keyspace lock), beside the
// settings it reads (memoryLimit's atomics).
type evictState struct {
	pool   []evictCandidate // ascending score, at most evictPoolSize
	gen    int64            // memoryLimit.policyGen the pool was ranked under
	nextDB int              // the random policies' next database
	sample []keyspace.EvictionSample
}

// evictResult is performEvictions' outcome (Redis's EVICT_OK,
// EVICT_RUNNING, EVICT_FAIL).
type evictResult int

const (
	evictOK      evictResult = iota // under the limit (or nothing to do)
	evictRunning                    // out of time with keys evicted: the command runs
	evictFail                       // over the limit and nothing more to evict
)

// evictTimeLimit is Redis's evictionTimeLimitUs for a tenacity (0-100):
// 50 µs a step up to 10, then 15% more a step; 100 has no limit.
func evictTimeLimit(tenacity int64) time.Duration {
	if tenacity <= 10 {
		return time.Duration(50*tenacity) * time.Microsecond
	}
	if tenacity < 100 {
		return time.Duration(500*math.Pow(1.15, float64(tenacity-10))) * time.Microsecond
	}
	return time.Duration(math.MaxInt64)
}

// performEvictions evicts keys until used memory is under maxmemory
// (Redis's performEvictions). c is the connection whose command is about
// to run: the invalidations it has to get go into its output first. Where
// eviction may not run (a replica ignoring maxmemory, CLIENT PAUSE) it
// reports evictOK, so nothing is refused, as Redis's
// isSafeToPerformEvictions; noeviction reports evictFail.
func (s *Server) performEvictions(c *conn) evictResult {
	limit := s.mem.max.Load()
	policy := s.mem.policy.Load()
	ks := s.ks
	switch {
	case limit == 0 || ks == nil:
		return evictOK
	case s.replicaStatus() != nil && s.mem.replicaIgnore.Load():
		return evictOK
	case s.pause.typ.Load() != pauseOff:
		return evictOK // Redis's isPausedActionsWithUpdate(PAUSE_ACTION_EVICT)
	case policy == policyNoEviction:
		return evictFail
	}
	env := &s.env
	env.lock()
	select {
	case <-s.closing: // a background eviction as the server closes: the keyspace goes next
		env.unlock()
		return evictOK
	default:
	}
	tr := s.track
	prev := tr.cur
	tr.cur = nil    // eviction is nobody's write: NOLOOP does not hide it
	tr.evictFor = c // c delivers the invalidations (below), no task races it
	if g := s.mem.policyGen.Load(); g != s.evict.gen {
		s.evict.pool, s.evict.gen = s.evict.pool[:0], g
	}
	res, evicted := evictOK, 0
	start := time.Now()
	budget := evictTimeLimit(s.mem.tenacity.Load())
	for s.usedMemory(true) > limit {
		db, key, ok := s.pickVictim(policy)
		if !ok || !s.evictKey(db, key, c == nil && s.loop != nil) {
			res = evictFail
			break
		}
		evicted++
		if evicted%16 == 0 && time.Since(start) > budget {
			res = evictRunning
			break
		}
	}
	tr.cur, tr.evictFor = prev, nil
	env.unlock()
	if evicted > 0 {
		if c != nil {
			tr.deliver(c) // before the command's reply (Redis's order)
		} else if tr.pending.Load() {
			tr.kick()
		}
	}
	return res
}

// evictInBackground evicts until used memory is under maxmemory (or
// nothing more can go) without waiting for a command: CONFIG SET maxmemory
// below used memory starts it, as Redis 7.0's updateMaxmemory starts its
// eviction time proc. One runs at a time.
func (s *Server) evictInBackground() {
	if s.mem.policy.Load() == policyNoEviction || !s.mem.evicting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.mem.evicting.Store(false)
		for s.outOfMemory() && s.performEvictions(nil) == evictRunning {
		}
	}()
}

// pickVictim chooses the next key to evict, or reports that there is none.
func (s *Server) pickVictim(policy int32) (db int, key string, ok bool) {
	ks, st := s.ks, &s.evict
	volatile := policyVolatile(policy)
	if policyRandom(policy) {
		for range keyspace.NumDBs * 2 {
			db = st.nextDB
			st.nextDB = (st.nextDB + 1) % keyspace.NumDBs
			st.sample = ks.SampleKeys(st.sample[:0], db, 1, volatile)
			if len(st.sample) > 0 {
				return db, st.sample[0].Key, true
			}
		}
		return 0, "", false
	}
	samples := int(s.mem.samples.Load())
	for range 3 { // a draw may find nothing among many non-volatile keys: retry
		for d := range keyspace.NumDBs {
			st.sample = ks.SampleKeys(st.sample[:0], d, samples, volatile)
			for _, k := range st.sample {
				st.offer(evictCandidate{score: evictScore(policy, k), db: d, key: k.Key})
			}
		}
		for len(st.pool) > 0 {
			best := st.pool[len(st.pool)-1]
			st.pool = st.pool[:len(st.pool)-1]
			at, exists := ks.ExpireAt(best.db, []byte(best.key))
			if exists && (!volatile || at != 0) {
				return best.db, best.key, true
			}
		}
	}
	return 0, "", false
}

// evictScore ranks a sample for policy: higher is evicted first.
func evictScore(policy int32, k keyspace.EvictionSample) uint64 {
	switch policy {
	case policyAllkeysLFU, policyVolatileLFU:
		return 255 - uint64(k.Freq)
	case policyVolatileTTL:
		return math.MaxUint64 - uint64(k.ExpireAt)
	}
	return uint64(k.Idle)
}

// offer inserts cand into the pool if it ranks among the best, replacing
// an entry for the same key.
func (st *evictState) offer(cand evictCandidate) {
	for i, e := range st.pool {
		if e.db == cand.db && e.key == cand.key {
			st.pool = append(st.pool[:i], st.pool[i+1:]...)
			break
		}
	}
	if len(st.pool) == evictPoolSize && cand.score <= st.pool[0].score {
		return
	}
	i := 0
	for i < len(st.pool) && st.pool[i].score < cand.score {
		i++
	}
	st.pool = append(st.pool, evictCandidate{})
	copy(st.pool[i+1:], st.pool[i:])
	st.pool[i] = cand
	if len(st.pool) > evictPoolSize {
		st.pool = append(st.pool[:0], st.pool[1:]...)
	}
}

// evictKey deletes key from db as an eviction (keyspace lock held); false
// if the delete could not be logged (a full disk: nothing more is evicted
// this time). offLoop: the caller is not on the event loop (notify.go).
func (s *Server) evictKey(db int, key string, offLoop bool) bool {
	ks := s.ks
	k := []byte(key)
	usage, ok := ks.MemoryUsage(db, k)
	if !ok {
		return true // gone meanwhile: nothing freed, the loop re-checks
	}
	before := ks.LiveBytes()
	b := ks.NewBatch()
	b.Del(db, k)
	if err := ks.Commit(b); err != nil {
		return false
	}
	if heap := usage - (before - ks.LiveBytes()); heap > 0 {
		s.mem.creditHeap(heap)
	}
	s.stats.evictedKeys.Add(1)
	if m := s.master; m != nil && m.Streaming() {
		name := "DEL"
		if s.mem.lazyEvict.Load() {
			name = "UNLINK"
		}
		m.Propagate(db, []byte(name), k)
	}
	if f := s.notify.flags.Load(); f&notifyEvicted != 0 {
		s.emitKeyEvent(f, "evicted", k, db, offLoop)
	}
	return true
}

// setEvictionConfig applies one of the eviction settings (config table).
func (s *Server) setEvictionConfig(name, v string) {
	switch name {
	case "maxmemory-policy":
		s.mem.policy.Store(policyByName[v])
		s.mem.policyGen.Add(1) // the pool's ranking means nothing now (performEvictions resets it)
	case "maxmemory-samples":
		n, _ := strconv.ParseInt(v, 10, 64)
		s.mem.samples.Store(max(n, 1))
	case "maxmemory-eviction-tenacity":
		n, _ := strconv.ParseInt(v, 10, 64)
		s.mem.tenacity.Store(n)
	case "lazyfree-lazy-eviction":
		s.mem.lazyEvict.Store(v == "yes")
	case "replica-ignore-maxmemory":
		s.mem.replicaIgnore.Store(v == "yes")
	}
}

package keyspace

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Memory tiers for a data set larger than memory: the key index's mapping
// kept resident (keyindex SetLockBudget) and the record cache
// (reccache.go), both sized from what the process may use.
//
// Auto sizing, with M the memory the process may use (the smaller of the
// machine's and its memory cgroup's limit, MemoryLimit):
//   - record cache: M/8, at most 64 MiB (a few hundred thousand hot
//     records of 100 bytes: under zipfian 0.99 over 10 M keys the 270,000
//     hottest take about 3/4 of the reads);
//   - index lock: M/2 less the record cache, and within RLIMIT_MEMLOCK
//     unless the process may lock without limit (CAP_IPC_LOCK). Locked
//     pages are never reclaimed, so the rest of M stays for the Go heap,
//     the page cache of the records and everything else. A table larger
//     than the budget has its first budget bytes locked: keys hash
//     uniformly over the slots, so that part saves its share of faults.
//
// Settings are applied at an Unlock (SetMemoryTiers takes effect at once
// when the lock is free, else when its holder lets it go): a record
// cache is only unmapped when no value read from it is held, and the
// setter may run with the lock held (CONFIG SET inside EXEC).

// MemoryTiers is a setting of the tiers: bytes, or -1 for auto.
type MemoryTiers struct {
	IndexLock   int64 // bytes of the key index's mapping kept resident
	RecordCache int64 // bytes of the record cache (0: off)
}

// TierStats is what INFO memory reports of the tiers.
type TierStats struct {
	IndexLockBudget  int64 // bytes the index may have locked (the setting, resolved)
	IndexLocked      int64 // bytes of the index's mapping locked
	RecordCacheBytes int64 // the record cache's mapping (arena, table, ghost)
	RecordCacheUsed  int64 // bytes of live entries in its arena
	RecordCacheKeys  int64 // entries
	RecordCacheHits  int64 // GETs served from it since start
	RecordCacheMiss  int64 // GETs of a cacheable indexed key that missed it
	RecordCacheAdmit int64 // entries admitted
	RecordCacheEvict int64 // entries evicted
	ColdReads        bool  // GETs are being warmed (coldread.go)
	ColdWarmed       int64 // pages found to warm since start
}

// SetMemoryTiers sets the tiers (applied at the next Unlock, or now if the
// lock is free). Safe with or without the lock held by the caller.
func (ks *Keyspace) SetMemoryTiers(t MemoryTiers) {
	ks.tiersPending.Store(&t)
	if ks.mu.TryLock() {
		ks.Unlock()
	}
}

// applyTiers applies a pending SetMemoryTiers (under the lock, at an
// Unlock: no value read from the record cache is held).
func (ks *Keyspace) applyTiers() {
	t := ks.tiersPending.Swap(nil)
	if t == nil || ks.closed {
		return
	}
	logf := ks.logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	limit := MemoryLimit()
	cache := t.RecordCache
	if cache < 0 {
		cache = min(limit/8, 64<<20)
	}
	if cache != ks.rcSize || !ks.tiersApplied {
		ks.tiersApplied = true
		ks.rc.close()
		ks.rc, ks.rcSize = nil, cache
		if cache > 0 {
			rc, err := newRecCache(cache)
			if err != nil {
				logf("record cache: %v; running without it", err)
			}
			ks.rc = rc
		}
		ks.useRecordCache()
		logf("record cache: %d bytes (setting %d, memory limit %d)", ks.rc.bytes(), t.RecordCache, limit)
	}
	lock := t.IndexLock
	if lock < 0 {
		lock = max(limit/2-ks.rc.bytes(), 0)
		if !canLockUnlimited() {
			var rl unix.Rlimit
			if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
				lock = min(lock, int64(rl.Cur))
			}
		}
	}
	ks.tierLock = lock
	if ks.kixOn() && lock != ks.kix.ix.LockBudget() {
		n, err := ks.kix.ix.SetLockBudget(lock)
		size := ks.kix.ix.Stats().FileBytes
		if err != nil {
			logf("key index: not locked in memory (budget %d of its %d bytes): %v; running unlocked", lock, size, err)
		} else {
			logf("key index: %d of its %d bytes locked in memory (budget %d, setting %d, memory limit %d)", n, size, lock, t.IndexLock, limit)
		}
	}
	ks.snapshotTiers()
}

// snapshotTiers publishes TierStats (under the lock).
func (ks *Keyspace) snapshotTiers() {
	ks.noteFaults() // coldread.go
	s := &TierStats{IndexLockBudget: ks.tierLock, ColdReads: ks.coldMode.Load(), ColdWarmed: ks.coldWarmed}
	if ks.kixOn() {
		s.IndexLocked = ks.kix.ix.LockedBytes()
	}
	if c := ks.rc; c != nil {
		s.RecordCacheBytes, s.RecordCacheUsed, s.RecordCacheKeys = c.bytes(), c.liveBytes, int64(c.count)
		s.RecordCacheHits, s.RecordCacheMiss, s.RecordCacheAdmit, s.RecordCacheEvict = c.hits, c.misses, c.admitted, c.evicted
	}
	ks.tierSnap.Store(s)
}

// MemoryLimit is the memory this process may use: the smaller of the
// machine's (MemTotal) and its memory cgroup's limit (cgroup v1
// hierarchical_memory_limit or memory.limit_in_bytes, cgroup v2
// memory.max of its group and every ancestor).
func MemoryLimit() int64 {
	limit := int64(1) << 62
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					limit = kb << 10
				}
			}
		}
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return limit
	}
	num := func(path string) (int64, bool) {
		v, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		return n, err == nil && n > 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case strings.Contains(","+f[1]+",", ",memory,"): // v1
			dir := "/sys/fs/cgroup/memory" + strings.TrimSuffix(f[2], "/")
			if st, err := os.ReadFile(dir + "/memory.stat"); err == nil {
				for _, sl := range strings.Split(string(st), "\n") {
					if v, ok := strings.CutPrefix(sl, "hierarchical_memory_limit "); ok {
						if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
							limit = min(limit, n)
						}
					}
				}
			}
			if n, ok := num(dir + "/memory.limit_in_bytes"); ok {
				limit = min(limit, n)
			}
		case f[0] == "0" && f[1] == "": // v2
			for dir := strings.TrimSuffix(f[2], "/"); ; {
				if n, ok := num("/sys/fs/cgroup" + dir + "/memory.max"); ok {
					limit = min(limit, n)
				}
				i := strings.LastIndexByte(dir, '/')
				if i < 0 {
					break
				}
				dir = dir[:i]
			}
		}
	}
	return limit
}

// canLockUnlimited reports whether the process has CAP_IPC_LOCK in its
// effective set (mlock then ignores RLIMIT_MEMLOCK).
func canLockUnlimited() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_IPC_LOCK) != 0
		}
	}
	return false
}

package keyspace

import "math/rand/v2"

// Sampling for maxmemory eviction (package server runs the policies; see
// its maxmemory.go). Redis picks its victims from a few random keys per
// database (maxmemory-samples), from the whole keyspace or from the keys
// with an expiry only (the volatile policies); SampleKeys offers the same
// choice over both homes of a key here, the DRAM entries and the
// persistent key index, in proportion to how many keys each holds.

// EvictionSample is one key offered for eviction, with what the policies
// rank it by.
type EvictionSample struct {
	Key      string
	ExpireAt int64 // Unix ms; 0: no expiry
	Idle     int64 // seconds since the last access (the LRU clock)
	Freq     uint8 // the LFU counter, decayed to now
}

// evictScanBudget bounds the slot words and heap items one SampleKeys call
// looks at for keys with an expiry, so a database whose volatile keys are
// rare among many costs a bounded time (it then offers fewer).
const evictScanBudget = 1 << 12

// SampleKeys appends to dst up to n random keys of db, or only keys with
// an expiry if volatile, without counting as an access and without
// expiring any. A key may be offered twice; fewer than n come back when
// db has fewer (or they are hard to find among many others). Call with
// the lock held.
func (ks *Keyspace) SampleKeys(dst []EvictionSample, db, n int, volatile bool) []EvictionSample {
	d := ks.dbs[db]
	dram, kix := len(d.entries), ks.kixLen(db)
	if volatile {
		dram, kix = d.volatile, ks.kixTTLLen(db)
	}
	if dram+kix == 0 || n <= 0 {
		return dst
	}
	nk := n * kix / (dram + kix)
	if kix > 0 && nk == 0 && rand.IntN(dram+kix) < kix {
		nk = 1
	}
	dst = ks.sampleDRAM(dst, db, n-nk, volatile)
	if nk > 0 {
		dst = ks.sampleIndexed(dst, db, nk, volatile)
	}
	return dst
}

// sampleDRAM offers n random DRAM entries of db (with an expiry, if
// volatile: drawn from the expiry heap, whose stale items are skipped).
func (ks *Keyspace) sampleDRAM(dst []EvictionSample, db, n int, volatile bool) []EvictionSample {
	d := ks.dbs[db]
	if n <= 0 || len(d.entries) == 0 {
		return dst
	}
	offer := func(e *entry) {
		s := EvictionSample{Key: e.key, ExpireAt: e.expireAt, Idle: e.lru.idleSeconds(), Freq: e.lru.lfuCounter()}
		if e.kix {
			f := ks.kixAccess.field(e.loc)
			s.Idle, s.Freq = f.idleSeconds(), f.lfuCounter()
		}
		dst = append(dst, s)
	}
	if !volatile {
		for range n {
			offer(&d.entries[rand.IntN(len(d.entries))])
		}
		return dst
	}
	if d.volatile == 0 || len(ks.expires) == 0 {
		return dst
	}
	got := 0
	for tries := 0; got < n && tries < evictScanBudget; tries++ {
		it := ks.expires[rand.IntN(len(ks.expires))]
		if it.db != db {
			continue
		}
		i, ok := d.index[it.key]
		if !ok || d.entries[i].expireAt != it.at {
			continue // stale: the key went or its expiry changed
		}
		offer(&d.entries[i])
		got++
	}
	return dst
}

// sampleIndexed offers up to n random keys of db from the persistent key
// index (with an expiry, if volatile). The index holds a key in one of two
// places, the staged writes since the last checkpoint (the newest) and the
// table, so each sample is drawn from one of them in proportion to their
// sizes: drawing from the staged ones first would offer only the keys
// written last (volatile-ttl would evict the keys that expire latest).
func (ks *Keyspace) sampleIndexed(dst []EvictionSample, db, n int, volatile bool) []EvictionSample {
	ix := ks.kix.ix
	st := ix.Stats()
	fromStaged := 0
	if st.Staged > 0 {
		for range n {
			if rand.IntN(st.Staged+st.Live) < st.Staged {
				fromStaged++
			}
		}
	}
	got := 0
	try := func(loc uint64) bool {
		o, err := ks.opAt(loc)
		if err != nil || o.db != db || volatile && o.expireAt == 0 {
			return false
		}
		if l, ok := ks.kixGet(db, o.key); !ok || l != loc {
			return false // overwritten or deleted since (a staged state stands)
		}
		f := ks.kixAccess.field(loc)
		dst = append(dst, EvictionSample{Key: string(o.key), ExpireAt: o.expireAt, Idle: f.idleSeconds(), Freq: f.lfuCounter()})
		got++
		return true
	}
	// The staged writes: a uniform pick of n of those that qualify among
	// the first evictScanBudget (reservoir sampling); fromStaged of them
	// are offered first, the others if the table offers too few.
	var pick []uint64
	if st.Staged > 0 {
		seen, looked := 0, 0
		ix.RangeStaged(func(k string, loc uint64, expiring bool) bool {
			looked++
			if loc != 0 && int(k[0]) == db && (expiring || !volatile) {
				if seen++; len(pick) < n {
					pick = append(pick, loc)
				} else if j := rand.IntN(seen); j < n {
					pick[j] = loc
				}
			}
			return looked < evictScanBudget
		})
	}
	for len(pick) > 0 && got < fromStaged {
		try(pick[len(pick)-1])
		pick = pick[:len(pick)-1]
	}
	if slots := st.Slots; slots > 0 && st.Live > 0 {
		pos := rand.IntN(slots)
		if volatile {
			for read := 0; read < evictScanBudget && got < n; {
				next := ix.ScanExpiring(pos, evictScanBudget-read, func(loc uint64) bool {
					try(loc)
					return got < n
				})
				read += max(next-pos, 1)
				if pos = next; pos >= slots {
					pos = 0
				}
			}
		} else {
			for tries := 0; tries < 4*n && got < n; tries++ {
				if loc, ok := ix.RandomLoc(rand.IntN(slots)); ok {
					try(loc)
				}
			}
		}
	}
	for len(pick) > 0 && got < n {
		try(pick[len(pick)-1])
		pick = pick[:len(pick)-1]
	}
	return dst
}

// LiveBytes is the bytes of live records in the arena now (INFO
// live_bytes is the value at the last unlock). Call with the lock held.
func (ks *Keyspace) LiveBytes() int64 { return ks.liveBytes }

// LiveBytesSnapshot is LiveBytes as of the last time the lock was
// released; safe without the lock.
func (ks *Keyspace) LiveBytesSnapshot() int64 { return ks.liveSnapshot.Load() }

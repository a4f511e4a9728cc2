package keyspace_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestRecordCache: with the key index and the record cache on, GETs of
// indexed strings answer what was written, cached or not: after a
// second read a key's record is cached, and every cached GET is answered
// with each segment's mapping unreadable (the record's page is not
// touched at all, neither by the index's key comparison nor by the value's
// read); overwrites are read at their new location; a cache much smaller
// than the data evicts; the cleaner's removal of a segment drops its
// entries; a restart starts with an empty cache and answers the same.
func TestRecordCache(t *testing.T) {
	dir := t.TempDir()
	ks, _ := openKix(t, dir)
	ks.SetMemoryTiers(keyspace.MemoryTiers{IndexLock: 0, RecordCache: 256 << 10})
	ks.ForceRecordCache() // in use without memory pressure
	const n = 3000
	model := map[string]string{}
	key := func(i int) []byte { return []byte(fmt.Sprintf("key:%06d", i)) }
	write := func(from, to int, gen string) {
		for base := from; base < to; base += 100 {
			commit(t, ks, func(b *keyspace.Batch) {
				for i := base; i < min(base+100, to); i++ {
					v := fmt.Sprintf("%s-value-%06d-%s", gen, i, bytes.Repeat([]byte{'x'}, i%40))
					b.Set(0, key(i), []byte(v), 0)
					model[string(key(i))] = v
				}
			})
		}
	}
	get := func(when string, i int) {
		t.Helper()
		v, ok, err := ks.Get(0, key(i))
		if err != nil || !ok || string(v) != model[string(key(i))] {
			t.Fatalf("%s: GET %s = %q %v %v, want %q", when, key(i), v, ok, err, model[string(key(i))])
		}
	}
	readAll := func(when string, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			ks.Lock()
			get(when, i)
			ks.Unlock()
		}
	}
	write(0, n, "a")
	if len(ks.SegmentIDs()) < 3 {
		t.Fatalf("%d segments: the test needs several", len(ks.SegmentIDs()))
	}
	// A hot set small enough for the cache, read three times: cached.
	const hot = 400
	for r := 0; r < 3; r++ {
		readAll("hot", 0, hot)
	}
	ks.Lock()
	cached := ks.RecordCacheEntries(0)
	if cached < hot*9/10 {
		ks.Unlock()
		t.Fatalf("%d entries cached after reading %d keys three times", cached, hot)
	}
	if err := ks.ProtectSegments(true); err != nil {
		ks.Unlock()
		t.Fatal(err)
	}
	hits := 0
	for i := 0; i < hot; i++ {
		loc, _ := ks.IndexedLoc(0, key(i))
		if !ks.RecordCacheHas(loc) {
			continue
		}
		get("segments unreadable", i) // a fault here kills the test: the page was touched
		hits++
	}
	if err := ks.ProtectSegments(false); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	if hits < hot*9/10 {
		t.Fatalf("only %d of %d hot keys served from the cache", hits, hot)
	}
	// Everything, several times: far more than the cache holds.
	for r := 0; r < 3; r++ {
		readAll("all", 0, n)
	}
	st := stats(ks)
	if st.RecordCacheEvict == 0 || st.RecordCacheHits == 0 || st.RecordCacheUsed > st.RecordCacheBytes {
		t.Fatalf("after reading %d keys: %+v", n, st)
	}
	// Overwrites: new locations, new values.
	write(0, n/2, "b")
	readAll("overwritten", 0, n)
	readAll("overwritten, again", 0, n)
	// The cleaner removes the oldest segments (their live records copied
	// on): their entries go.
	for i := 0; i < 2; i++ {
		oldest := ks.OldestSegment()
		ks.Lock()
		before := ks.RecordCacheEntries(oldest)
		ks.Unlock()
		if !ks.CleanOldest() {
			t.Fatalf("could not clean segment %d", oldest)
		}
		ks.Lock()
		after := ks.RecordCacheEntries(oldest)
		ks.Unlock()
		if after != 0 {
			t.Fatalf("segment %d removed with %d of its %d cache entries left", oldest, after, before)
		}
		t.Logf("segment %d cleaned: %d cache entries dropped", oldest, before)
		readAll("after cleaning", 0, n)
	}
	ks.Close()
	ks, _ = openKix(t, dir)
	defer ks.Close()
	ks.SetMemoryTiers(keyspace.MemoryTiers{IndexLock: 0, RecordCache: 256 << 10})
	ks.ForceRecordCache() // in use without memory pressure
	ks.Lock()
	if e := ks.RecordCacheEntries(0); e != 0 {
		t.Fatalf("%d entries in a new cache", e)
	}
	ks.Unlock()
	readAll("restarted", 0, n)
	readAll("restarted, cached", 0, n)
}

func stats(ks *keyspace.Keyspace) keyspace.TierStats {
	ks.Lock()
	ks.PublishStats()
	ks.Unlock()
	return ks.Stats().Tiers
}

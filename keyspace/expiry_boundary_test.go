package keyspace_test

import (
	"slices"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestExpiryBoundary: a key lives through the millisecond of its expiry
// and is gone from the next one, as in Redis (keyIsExpired and the active
// cycle expire when now > when), for a string and a collection, in DRAM
// and in the key index: at the expiry's millisecond every read (GET,
// EXISTS, TTL's ExpireAt, KEYS, SCAN, RANDOMKEY) finds the key, the active
// cycle leaves it and WATCH does not see it expire; a millisecond later
// they all find it gone and OnExpired (the replication stream's DEL) ran
// once per key. A master that dropped or hid a key in that millisecond
// disagreed with its Redis replicas, which apply the same rule to the
// same absolute time (TestReplicationEffectsProperty's "keys differ").
//
// The keyspace's clock is the wall clock plus a skew: the test writes the
// keys to expire 1000 ms from now and moves the clock 1000 ms on, which
// lands on the expiry's millisecond unless the wall clock ticked in
// between; such tries are discarded (checked before and after the reads).
func TestExpiryBoundary(t *testing.T) {
	for _, kix := range []string{"0", "1"} {
		t.Run("key-index="+kix, func(t *testing.T) {
			t.Setenv("PERSIMMON_TEST_KEY_INDEX", kix)
			testExpiryBoundary(t, kix == "1")
		})
	}
}

func testExpiryBoundary(t *testing.T, kix bool) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	var expired []string
	ks.Lock()
	ks.OnExpired(func(db int, key string) { expired = append(expired, key) })
	ks.Unlock()
	keys := []string{"s", "h"}
	decisive, decisiveTable := 0, 0
	for try := 0; try < 400 && (decisive < 6 || kix && decisiveTable < 3); try++ {
		expired = expired[:0]
		var at int64
		commit(t, ks, func(b *keyspace.Batch) {
			at = ks.NowMs() + 1000
			b.Set(0, []byte("s"), []byte("v"), at)
			b.HSet(0, []byte("h"), []byte("f"), []byte("v"))
		})
		commit(t, ks, func(b *keyspace.Batch) { ks.SetExpire(b, 0, []byte("h"), at) })
		checkpointed := kix && try%2 == 1
		if checkpointed { // the string in the index's table, else staged
			if err := ks.KixCheckpoint(); err != nil {
				t.Fatal(err)
			}
		}
		w := &keyspace.Watcher{}
		ks.Lock()
		for _, k := range keys {
			ks.Watch(w, 0, []byte(k))
		}
		ks.Unlock()
		ks.AdvanceClock(1000)

		ks.Lock()
		if dram := ks.DRAMKeys(); kix && dram != 1 || !kix && dram != 2 {
			t.Fatalf("%d DRAM entries: want the string in the key index (%v)", dram, kix)
		}
		before := ks.NowMs()
		// The reads that change nothing first, then the active cycle,
		// then the lookups that would expire the key (each checked on
		// its own: a lookup that dropped it would hide the others).
		var listed, scanned []string
		ks.Keys(0, func(k string) { listed = append(listed, k) })
		for cur := uint64(0); ; {
			if cur = ks.Scan(0, cur, 100, func(k string) { scanned = append(scanned, k) }); cur == 0 {
				break
			}
		}
		dirty := w.Dirty()
		ks.RunActiveExpire()
		size := ks.DBSize(0)
		_, random := ks.RandomKey(0)
		var exists []bool
		var ttlAt []int64
		for _, k := range keys {
			exists = append(exists, ks.Exists(0, []byte(k)))
			ms, _ := ks.ExpireAt(0, []byte(k))
			ttlAt = append(ttlAt, ms)
		}
		_, gotS, errS := ks.Get(0, []byte("s"))
		_, gotF, errF := ks.HGet(0, []byte("h"), []byte("f"))
		// A write to the key in that ms changes the live key (its other
		// field and its expiry stay), as HSET does in Redis then.
		b := ks.NewBatch()
		b.HSet(0, []byte("h"), []byte("g"), []byte("w"))
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		_, keptF, _ := ks.HGet(0, []byte("h"), []byte("f"))
		keptAt, _ := ks.ExpireAt(0, []byte("h"))
		after := ks.NowMs()
		ks.Unlock()
		if before != at || after != at {
			// The wall clock ticked: not the expiry's millisecond.
			// Start over with fresh keys.
			commit(t, ks, func(b *keyspace.Batch) { b.Del(0, []byte("s")); b.Del(0, []byte("h")) })
			ks.Lock()
			ks.Unwatch(w)
			ks.Unlock()
			continue
		}
		decisive++
		if checkpointed {
			decisiveTable++
		}
		slices.Sort(listed)
		slices.Sort(scanned)
		if !slices.Equal(listed, []string{"h", "s"}) || !slices.Equal(scanned, []string{"h", "s"}) || !random {
			t.Fatalf("at the expiry's ms %d: KEYS %v, SCAN %v, RANDOMKEY found one %v: want h and s", at, listed, scanned, random)
		}
		if size != 2 || dirty || len(expired) != 0 {
			t.Fatalf("at the expiry's ms %d: after the active cycle DBSIZE %d (want 2), WATCH dirty %v, expired %v", at, size, dirty, expired)
		}
		if errS != nil || errF != nil || !gotS || !gotF || !exists[0] || !exists[1] || ttlAt[0] != at || ttlAt[1] != at {
			t.Fatalf("at the expiry's ms %d: GET s %v %v, HGET h f %v %v, EXISTS %v, expiry %v: want both keys there", at, gotS, errS, gotF, errF, exists, ttlAt)
		}
		if !keptF || keptAt != at {
			t.Fatalf("at the expiry's ms %d: after HSET h g, HGET h f found %v, expiry %d: want the live hash written, f and its expiry kept", at, keptF, keptAt)
		}

		ks.AdvanceClock(1)
		ks.Lock()
		dirty = w.Dirty()
		_, gotS, _ = ks.Get(0, []byte("s"))
		existsH := ks.Exists(0, []byte("h"))
		ks.RunActiveExpire()
		size = ks.DBSize(0)
		ks.Unwatch(w)
		ks.Unlock()
		slices.Sort(expired)
		if !dirty || gotS || existsH || size != 0 || !slices.Equal(expired, []string{"h", "s"}) {
			t.Fatalf("a ms past the expiry %d: WATCH dirty %v, GET s %v, EXISTS h %v, DBSIZE %d, expired %v: want both gone, each expired once", at, dirty, gotS, existsH, size, expired)
		}
	}
	if decisive == 0 || kix && decisiveTable == 0 {
		t.Fatalf("%d tries landed on the expiry's millisecond (%d with the string in the index's table)", decisive, decisiveTable)
	}
	t.Logf("%d tries checked at the expiry's millisecond, %d with the string in the index's table", decisive, decisiveTable)
}

package keyspace_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// expiringKeys writes, to db 0 with an expiry at, a string "s", a hash
// "h" and a list "l", and "plain" with none.
func expiringKeys(t *testing.T, ks *keyspace.Keyspace, at int64) {
	t.Helper()
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("s"), []byte("sv"), at)
		b.HSet(0, []byte("h"), []byte("f"), []byte("hv"))
		b.Expire(0, []byte("h"), at)
		b.RPush(0, []byte("l"), []byte("a"), []byte("b"))
		b.Expire(0, []byte("l"), at)
		b.Set(0, []byte("plain"), []byte("pv"), 0)
	})
}

// visible is what a client's reads see of db 0: the keys KEYS and a whole
// SCAN list, sorted, and those of s, h, l, plain EXISTS finds.
func visible(ks *keyspace.Keyspace) (keys, scanned, exist []string) {
	ks.Keys(0, func(k string) { keys = append(keys, k) })
	for cur := uint64(0); ; {
		cur = ks.Scan(0, cur, 100, func(k string) { scanned = append(scanned, k) })
		if cur == 0 {
			break
		}
	}
	for _, k := range []string{"s", "h", "l", "plain"} {
		if ks.Exists(0, []byte(k)) {
			exist = append(exist, k)
		}
	}
	slices.Sort(keys)
	slices.Sort(scanned)
	return keys, scanned, exist
}

// TestReplicaKeepsExpiredKeys: on a replica a key whose time has passed
// reads as missing (EXISTS, TTL, GET, KEYS, SCAN) but stays: DBSIZE counts
// it, the active cycle leaves it and no expiry is counted; the master's
// own commands still see it whole, and its DEL removes it. Promoted, the
// server expires the rest itself.
func TestReplicaKeepsExpiredKeys(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	var propagated []string
	ks.Lock()
	ks.SetReplica(true)
	ks.OnExpired(func(db int, key string) { propagated = append(propagated, key) })
	ks.Unlock()
	expiringKeys(t, ks, ks.NowMs()+10)
	ks.AdvanceClock(1000)
	ks.Lock()
	keys, scanned, exist := visible(ks)
	if want := []string{"plain"}; !slices.Equal(keys, want) || !slices.Equal(scanned, want) || !slices.Equal(exist, want) {
		t.Errorf("a replica's reads past the expiry: KEYS %q SCAN %q EXISTS %q, want only plain", keys, scanned, exist)
	}
	if _, ok := ks.ExpireAt(0, []byte("s")); ok {
		t.Error("TTL finds the expired string")
	}
	if _, ok, _ := ks.Get(0, []byte("s")); ok {
		t.Error("GET finds the expired string")
	}
	ks.RunActiveExpire()
	if n := ks.DBSize(0); n != 4 {
		t.Errorf("DBSIZE %d after the active cycle, want 4 (expired keys stay on a replica)", n)
	}
	if n := ks.Stats().ExpiredKeys; n != 0 || len(propagated) != 0 {
		t.Errorf("expired_keys %d, expiries reported %q: a replica expired keys itself", n, propagated)
	}
	// The master's commands: no key is expired for them.
	ks.SetApplyingMaster(true)
	v, ok, err := ks.Get(0, []byte("s"))
	hv, hok, _ := ks.HGet(0, []byte("h"), []byte("f"))
	ks.SetApplyingMaster(false)
	if !ok || err != nil || string(v) != "sv" || !hok || string(hv) != "hv" {
		t.Errorf("the master's reads: s %q %v %v, h.f %q %v; want sv and hv", v, ok, err, hv, hok)
	}
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) { b.Del(0, []byte("s")) }) // the master's DEL
	ks.Lock()
	if n := ks.DBSize(0); n != 3 {
		t.Errorf("DBSIZE %d after the master's DEL, want 3", n)
	}
	ks.SetReplica(false) // REPLICAOF NO ONE
	ks.RunActiveExpire()
	n := ks.DBSize(0)
	ks.Unlock()
	slices.Sort(propagated)
	if n != 1 || !slices.Equal(propagated, []string{"h", "l"}) {
		t.Fatalf("promoted: DBSIZE %d, expiries propagated %q; want 1 and [h l]", n, propagated)
	}
}

// TestReplicaMasterWriteOnExpiredKey: a write of the master's to a key
// whose time has passed here applies to the key as it is (the master
// still had it: its clock, not ours, decides), where a master would have
// expired it first and started a new one.
func TestReplicaMasterWriteOnExpiredKey(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	ks.Lock()
	ks.SetReplica(true)
	ks.Unlock()
	at := ks.NowMs() + 10
	expiringKeys(t, ks, at)
	ks.AdvanceClock(1000)
	ks.Lock()
	ks.SetApplyingMaster(true)
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) { b.RPush(0, []byte("l"), []byte("c")) })
	ks.Lock()
	defer ks.Unlock()
	lv, _ := ks.List(0, []byte("l"))
	n := lv.Len()
	exp, ok := ks.ExpireAt(0, []byte("l"))
	ks.SetApplyingMaster(false)
	if n != 3 || !ok || exp != at {
		t.Fatalf("the master's RPUSH to an expired list: LLEN %d, expiry %d %v; want 3 and %d", n, exp, ok, at)
	}
}

// TestReplicaCleanerKeepsExpired: the cleaner, meeting a key whose time
// has passed, keeps it on a replica (and on a master with DEBUG
// SET-ACTIVE-EXPIRE 0, or while CLIENT PAUSE holds expiry), copying it
// like a live key: once the segment is gone the key is still there, whole,
// with its expiry. Before, the cleaner expired it (a replica's, or a
// master's with the cycle off), or, on a pause, hid it from itself and
// removed the segment its value was in.
func TestReplicaCleanerKeepsExpired(t *testing.T) {
	for _, mode := range []string{"replica", "active-expire-off", "paused"} {
		t.Run(mode, func(t *testing.T) {
			const segSize = 1 << 20
			ks := openKS(t, t.TempDir(), segSize)
			defer ks.Close()
			// Live data keeps the background cleaner away (its bound is
			// twice the live bytes plus a segment): the test cleans by hand.
			for i := 0; i < 4; i++ {
				commit(t, ks, func(b *keyspace.Batch) { b.Set(2, []byte(fmt.Sprint("big", i)), bytes.Repeat([]byte("b"), 700<<10), 0) })
			}
			expired := 0
			ks.OnExpired(func(int, string) { expired++ })
			at := ks.NowMs() + 60_000
			expiringKeys(t, ks, at)
			ks.Lock()
			created, _ := ks.ObjectFirstSeg(0, []byte("h"))
			ks.Unlock()
			for i := 0; i < 150; i++ { // the next writes land in a later segment
				commit(t, ks, func(b *keyspace.Batch) { b.Set(1, []byte("filler"), bytes.Repeat([]byte("f"), 8<<10), 0) })
			}
			ks.Lock()
			switch mode {
			case "replica":
				ks.SetReplica(true)
			case "active-expire-off":
				ks.SetActiveExpire(false)
			case "paused":
				ks.PauseExpiry(true)
			}
			ks.Unlock()
			ks.AdvanceClock(120_000)
			for ks.OldestSegment() <= created {
				if !ks.CleanOldest() {
					t.Fatalf("could not clean segment %d", ks.OldestSegment())
				}
			}
			ks.Lock()
			defer ks.Unlock()
			if n := ks.DBSize(0); n != 4 || expired != 0 {
				t.Fatalf("after cleaning the keys' segments: DBSIZE %d, %d expired; want 4 and 0", n, expired)
			}
			// Whole: the master's reads (a replica) or the reads once the
			// setting is back (they expire them) find the values.
			switch mode {
			case "replica":
				ks.SetApplyingMaster(true)
				defer ks.SetApplyingMaster(false)
			default:
				ks.AdvanceClock(-120_000)
			}
			v, ok, err := ks.Get(0, []byte("s"))
			hv, hok, _ := ks.HGet(0, []byte("h"), []byte("f"))
			lv, _ := ks.List(0, []byte("l"))
			n := lv.Len()
			exp, _ := ks.ExpireAt(0, []byte("h"))
			if !ok || err != nil || string(v) != "sv" || !hok || string(hv) != "hv" || n != 2 || exp != at {
				t.Fatalf("the kept keys: s %q %v %v, h.f %q %v, LLEN l %d, h expires %d; want sv, hv, 2, %d", v, ok, err, hv, hok, n, exp, at)
			}
			if d := ks.Stats().DamagedKeys; d != 0 {
				t.Fatalf("%d damaged keys", d)
			}
		})
	}
}

// TestWritableReplicaExpiry: on a writable replica the expiries its own
// clients set are tracked and expired by the active cycle; the master's
// are not; the expired keys a client's write meets are removed (the
// master's write leaves them); FLUSHALL forgets the tracked keys.
func TestWritableReplicaExpiry(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	ks.Lock()
	ks.SetReplica(true)
	ks.SetApplyingMaster(true)
	ks.Unlock()
	at := ks.NowMs() + 10
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("m"), []byte("v"), at)
		b.Set(0, []byte("m2"), []byte("v"), at)
	})
	ks.Lock()
	ks.SetApplyingMaster(false)
	if n := ks.TrackedExpires(); n != 0 {
		t.Errorf("%d tracked after the master's writes, want 0", n)
	}
	ks.SetClientWrite(true)
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("c"), []byte("v"), at)
		b.Set(3, []byte("c"), []byte("v"), at)
		b.HSet(0, []byte("ch"), []byte("f"), []byte("v"))
		b.Expire(0, []byte("ch"), at)
	})
	ks.Lock()
	ks.SetClientWrite(false)
	if n := ks.TrackedExpires(); n != 2 {
		t.Errorf("%d tracked after the client's writes, want 2 (c in two databases, ch)", n)
	}
	ks.AdvanceClock(1000)
	ks.RunActiveExpire()
	left := []int{ks.DBSize(0), ks.DBSize(3)}
	if !slices.Equal(left, []int{2, 0}) || ks.TrackedExpires() != 0 || ks.Stats().ExpiredKeys != 3 {
		t.Errorf("after the cycle: DBSIZE of db 0 and 3 %v, %d tracked, expired_keys %d; want [2 0], 0, 3", left, ks.TrackedExpires(), ks.Stats().ExpiredKeys)
	}
	// A client's write removes the expired key it looks up.
	ks.SetClientWrite(true)
	found := ks.Exists(0, []byte("m"))
	ks.SetClientWrite(false)
	if found || ks.DBSize(0) != 1 {
		t.Errorf("a client's write looking up m: found %v, DBSIZE %d; want false, 1", found, ks.DBSize(0))
	}
	ks.SetClientWrite(true)
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("c"), []byte("v"), ks.NowMs()+60_000) })
	ks.Lock()
	ks.SetClientWrite(false)
	tracked := ks.TrackedExpires()
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) { b.FlushAll() })
	if tracked != 1 || ks.TrackedExpires() != 0 {
		t.Fatalf("tracked %d before FLUSHALL and %d after, want 1 and 0", tracked, ks.TrackedExpires())
	}
}

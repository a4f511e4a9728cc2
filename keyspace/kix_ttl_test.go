package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

func openKix(t *testing.T, dir string) (*keyspace.Keyspace, recovery.Report) {
	t.Helper()
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "1") // whatever the run's setting
	ks, rep, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	return ks, rep
}

// TestKeyIndexTTL: strings with an expiry live in the key index (no DRAM
// entry), keep their expiry across a restart that re-attaches the index,
// are counted in INFO's expires, expire when read and by the active
// cycle (staged or in the table), and stay expired after the next restart.
func TestKeyIndexTTL(t *testing.T) {
	dir := t.TempDir()
	ks, _ := openKix(t, dir)
	now := ks.NowMs()
	long, short := now+3600_000, now+10_000 // far enough that the background cycle leaves them
	key := func(kind string, i int) []byte { return []byte(fmt.Sprintf("%s:%d", kind, i)) }
	for base := 0; base < 2000; base += 100 {
		commit(t, ks, func(b *keyspace.Batch) {
			for i := base; i < base+100; i++ {
				b.Set(0, key("plain", i), []byte("v"), 0)
				b.Set(0, key("long", i), []byte("v"), long)
				if i < 300 {
					b.Set(0, key("short", i), []byte("v"), short)
				}
			}
		})
	}
	check := func(when string, keys, expires int) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		if n := ks.DRAMKeys(); n != 0 {
			t.Fatalf("%s: %d DRAM entries, want every string in the index", when, n)
		}
		if n, info := ks.DBSize(0), ks.DBInfo(0); n != keys || info.Expires != expires {
			t.Fatalf("%s: DBSIZE %d expires %d, want %d and %d", when, n, info.Expires, keys, expires)
		}
		if at, ok := ks.ExpireAt(0, key("long", 7)); !ok || at != long {
			t.Fatalf("%s: long:7 expires at %d (%v), want %d", when, at, ok, long)
		}
		if at, ok := ks.ExpireAt(0, key("plain", 7)); !ok || at != 0 {
			t.Fatalf("%s: plain:7 expires at %d (%v), want none", when, at, ok)
		}
		if avg := ks.DBInfo(0).AvgTTL; expires > 0 && (avg <= 0 || avg > 3600_000) {
			t.Fatalf("%s: avg_ttl %d", when, avg)
		}
	}
	check("written", 4300, 2300)
	ks.Close()

	ks, rep := openKix(t, dir)
	if rep.Index.FromLSN == 0 {
		t.Fatalf("the restart did not re-attach the index: %+v", rep.Index)
	}
	check("re-attached", 4300, 2300)
	ks.AdvanceClock(20_000) // the short keys' time has come
	ks.Lock()
	if _, ok, _ := ks.Get(0, key("short", 0)); ok {
		t.Fatal("short:0 served after its expiry")
	}
	// The table's cursor: the other 299, a bounded number of operations
	// decoded per cycle (a few cycles here).
	for cycle := 0; cycle < 10 && ks.DBSize(0) > 4000; cycle++ {
		ks.RunActiveExpire()
	}
	ks.Unlock()
	check("expired", 4000, 2000)
	if n := ks.Stats().ExpiredKeys; n != 300 {
		t.Fatalf("%d keys expired, want 300", n)
	}
	// Staged (not yet checkpointed) keys with an expiry are expired by the
	// cycle too.
	short = ks.NowMs() + 10_000
	commit(t, ks, func(b *keyspace.Batch) {
		for i := 0; i < 10; i++ {
			b.Set(0, key("staged", i), []byte("v"), short)
		}
		b.Set(0, key("long", 0), []byte("v"), 0) // PERSIST: the bit goes
	})
	check("staged", 4010, 2009)
	ks.AdvanceClock(20_000)
	ks.Lock()
	ks.RunActiveExpire()
	ks.Unlock()
	check("staged expired", 4000, 1999)
	ks.Close()

	ks, rep = openKix(t, dir)
	defer ks.Close()
	if rep.Index.FromLSN == 0 {
		t.Fatalf("the second restart did not re-attach the index: %+v", rep.Index)
	}
	check("restarted", 4000, 1999)
}

// TestKeyIndexActiveExpiryTouchesOnce: the active cycle's expiry of an
// indexed key runs the OnKeyTouched hooks once, as for a DRAM key (client
// tracking sent two invalidations for one expired key before: expire ran
// the hooks, then the cycle touched the key again).
func TestKeyIndexActiveExpiryTouchesOnce(t *testing.T) {
	dir := t.TempDir()
	ks, _ := openKix(t, dir)
	at := ks.NowMs() + 10_000
	key := func(i int) []byte { return []byte(fmt.Sprintf("k:%d", i)) }
	commit(t, ks, func(b *keyspace.Batch) {
		for i := 0; i < 200; i++ {
			b.Set(0, key(i), []byte("v"), at)
		}
	})
	ks.Close()
	ks, rep := openKix(t, dir) // those 200 are in the table now
	defer ks.Close()
	if rep.Index.FromLSN == 0 {
		t.Fatalf("the restart did not re-attach the index: %+v", rep.Index)
	}
	commit(t, ks, func(b *keyspace.Batch) { // and these are staged
		for i := 200; i < 300; i++ {
			b.Set(0, key(i), []byte("v"), at)
		}
	})
	touched := map[string]int{}
	ks.OnKeyTouched(func(_ int, k []byte) { touched[string(k)]++ })
	ks.AdvanceClock(20_000)
	ks.Lock()
	defer ks.Unlock()
	for cycle := 0; cycle < 100 && ks.DBSize(0) > 0; cycle++ {
		ks.RunActiveExpire()
	}
	if n := ks.DBSize(0); n != 0 {
		t.Fatalf("%d keys left after the active cycles", n)
	}
	for i := 0; i < 300; i++ {
		if n := touched[string(key(i))]; n != 1 {
			t.Fatalf("%s touched %d times by its expiry, want 1", key(i), n)
		}
	}
}

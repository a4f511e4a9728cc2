package keyspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestKeyIndexScanUnderWrites: a SCAN of indexed keys returns every key
// present for the whole iteration exactly once while, between its calls,
// those keys are updated (staged over their stored slots), others are
// created and deleted, and checkpoints store the staged writes. (A walk
// by slot position missed updated keys and repeated keys a checkpoint
// stored ahead of it.)
func TestKeyIndexScanUnderWrites(t *testing.T) {
	ks, _ := openKix(t, t.TempDir())
	defer ks.Close()
	const n = 5000
	key := func(kind string, i int) []byte { return []byte(fmt.Sprintf("%s:%d", kind, i)) }
	for base := 0; base < n; base += 500 {
		commit(t, ks, func(b *keyspace.Batch) {
			for i := base; i < base+500; i++ {
				b.Set(0, key("k", i), []byte("v1"), 0)
			}
		})
		if base == n/2 {
			ks.Lock()
			if err := ks.CheckpointIndex(); err != nil { // half stored, half staged
				t.Fatal(err)
			}
			ks.Unlock()
		}
	}
	// A growth of the table during a walk moves every home: the walk
	// starts over and may repeat keys (as SCAN allows). The walk is
	// retried until one runs within one table generation.
	for attempt := 0; attempt < 5; attempt++ {
		gen := ks.IndexGeneration()
		seen, calls := scanUnderWrites(t, ks, n, key)
		for i := 0; i < n; i++ {
			if k := string(key("k", i)); seen[k] < 1 {
				t.Fatalf("%s was not returned (%d keys in %d calls)", k, len(seen), calls)
			}
		}
		if ks.IndexGeneration() != gen {
			continue
		}
		for i := 0; i < n; i++ {
			if k := string(key("k", i)); seen[k] != 1 {
				t.Fatalf("%s returned %d times, want once (%d keys returned in all)", k, seen[k], len(seen))
			}
		}
		return
	}
	t.Fatalf("the table's generation changed during every walk")
}

func scanUnderWrites(t *testing.T, ks *keyspace.Keyspace, n int, key func(string, int) []byte) (map[string]int, int) {
	seen := map[string]int{}
	var cursor uint64
	calls := 0
	for call := 0; call < 20000; call++ {
		calls++
		ks.Lock()
		cursor = ks.Scan(0, cursor, 10, func(k string) { seen[k]++ })
		ks.Unlock()
		if cursor == 0 {
			break
		}
		commit(t, ks, func(b *keyspace.Batch) {
			for j := 0; j < 20; j++ {
				i := (call*20 + j) % n
				b.Set(0, key("k", i), []byte("v2"), 0) // an update of a key present throughout
				c := key("churn", (call*20+j)%500)     // created, deleted, created again: a bounded
				if call%2 == 0 {                       // population, so the table does not grow
					b.Set(0, c, []byte("v"), 0)
				} else {
					b.Del(0, c)
				}
			}
		})
		if call%7 == 0 {
			ks.Lock()
			if err := ks.CheckpointIndex(); err != nil {
				t.Fatal(err)
			}
			ks.Unlock()
		}
	}
	return seen, calls
}

// TestKeyIndexScanSkipsExpired: SCAN leaves out indexed keys whose expiry
// has passed, stored in the table or staged, and returns those that have
// none or a later one (the slot's expiring bit says which operations to
// read again).
func TestKeyIndexScanSkipsExpired(t *testing.T) {
	ks, _ := openKix(t, t.TempDir())
	defer ks.Close()
	ks.Lock()
	ks.SetActiveExpire(false)
	ks.Unlock()
	now := ks.NowMs()
	set := func(prefix string, expireAt int64) {
		commit(t, ks, func(b *keyspace.Batch) {
			for i := 0; i < 50; i++ {
				b.Set(0, []byte(fmt.Sprintf("%s:%d", prefix, i)), []byte("v"), expireAt)
			}
		})
	}
	set("stored-short", now+1000)
	set("stored-long", now+3600_000)
	set("stored-none", 0)
	ks.Lock()
	if err := ks.CheckpointIndex(); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	set("staged-short", now+1000)
	set("staged-none", 0)
	ks.AdvanceClock(2000)
	got := map[string]int{}
	var cursor uint64
	for {
		ks.Lock()
		cursor = ks.Scan(0, cursor, 10, func(k string) { got[k[:strings.IndexByte(k, ':')]]++ })
		ks.Unlock()
		if cursor == 0 {
			break
		}
	}
	want := map[string]int{"stored-long": 50, "stored-none": 50, "staged-none": 50}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("SCAN returned %v, want %v", got, want)
	}
	// The expired keys it met are gone, as Redis's SCAN removes them.
	ks.Lock()
	n := ks.DBSize(0)
	ks.Unlock()
	if exp := ks.Stats().ExpiredKeys; n != 150 || exp != 100 {
		t.Fatalf("after SCAN: DBSIZE %d, expired_keys %d; want 150, 100", n, exp)
	}
}

// TestScanRemovesExpired: SCAN removes the expired DRAM entries it meets
// (counted in expired_keys, each reported to OnExpired for the replication
// stream) and returns every live key once, however many removals move
// entries under the walk; while expiry is paused it removes nothing.
func TestScanRemovesExpired(t *testing.T) {
	for _, paused := range []bool{false, true} {
		ks := openKS(t, t.TempDir(), 1<<20)
		var reported []string
		ks.OnExpired(func(_ int, key string) { reported = append(reported, key) })
		ks.Lock()
		ks.SetActiveExpire(false)
		ks.Unlock()
		now := ks.NowMs()
		commit(t, ks, func(b *keyspace.Batch) {
			for i := range 300 {
				b.HSet(0, []byte(fmt.Sprintf("h%d", i)), []byte("f"), []byte("v"))
			}
		})
		commit(t, ks, func(b *keyspace.Batch) {
			for i := range 300 {
				if i%3 != 0 {
					ks.SetExpire(b, 0, []byte(fmt.Sprintf("h%d", i)), now+1000)
				}
			}
		})
		ks.AdvanceClock(2000)
		if paused {
			ks.PauseExpiry(true)
		}
		got := map[string]int{}
		var cursor uint64
		for {
			ks.Lock()
			cursor = ks.Scan(0, cursor, 7, func(k string) { got[k]++ })
			ks.Unlock()
			if cursor == 0 {
				break
			}
		}
		for k, n := range got {
			var i int
			fmt.Sscanf(k, "h%d", &i)
			if n != 1 || i%3 != 0 {
				t.Fatalf("paused %v: SCAN returned %s %d times", paused, k, n)
			}
		}
		ks.Lock()
		size := ks.DBSize(0)
		ks.Unlock()
		wantSize, wantExp := 100, 200
		if paused {
			wantSize, wantExp = 300, 0
		}
		if exp := ks.Stats().ExpiredKeys; len(got) != 100 || size != wantSize || exp != int64(wantExp) || len(reported) != wantExp {
			t.Fatalf("paused %v: %d keys returned, DBSIZE %d, expired_keys %d, %d reported; want 100, %d, %d, %d",
				paused, len(got), size, exp, len(reported), wantSize, wantExp, wantExp)
		}
		ks.Close()
	}
}

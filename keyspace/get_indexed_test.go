package keyspace_test

import (
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// TestGetIndexedNoAlloc: GET of a key held only by the key index (the
// plain string of every SET) reads its value straight from the set
// operation, counted as a hit or a miss as find counts it, with no
// allocation, found or not; an expired key still reads as missing.
func TestGetIndexedNoAlloc(t *testing.T) {
	ks, _, err := recovery.Open(recovery.Options{Dir: t.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	b := ks.NewBatch()
	b.Set(0, []byte("k"), []byte("value"), 0)
	b.Set(0, []byte("gone"), []byte("old"), 1) // expired long ago (ms since the epoch)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	if !func() bool { _, ok := ks.IndexedLoc(0, []byte("k")); return ok }() {
		t.Skip("the key index is off (PERSIMMON_TEST_KEY_INDEX=0)")
	}
	key, missing := []byte("k"), []byte("nope")
	ks.CountLookups(true)
	defer ks.CountLookups(false)
	before := ks.Stats()
	v, ok, err := ks.Get(0, key)
	if err != nil || !ok || string(v) != "value" {
		t.Fatalf("Get(k) = %q, %v, %v; want value, true, nil", v, ok, err)
	}
	if v, ok, err := ks.Get(0, missing); err != nil || ok || v != nil {
		t.Fatalf("Get(nope) = %q, %v, %v; want nil, false, nil", v, ok, err)
	}
	if v, ok, err := ks.Get(0, []byte("gone")); err != nil || ok || v != nil {
		t.Fatalf("Get(gone) = %q, %v, %v; want an expired key missing", v, ok, err)
	}
	after := ks.Stats()
	if h, m := after.KeyspaceHits-before.KeyspaceHits, after.KeyspaceMiss-before.KeyspaceMiss; h != 1 || m != 2 {
		t.Fatalf("hits, misses = %d, %d; want 1, 2", h, m)
	}
	if n := testing.AllocsPerRun(100, func() {
		ks.Get(0, key)
		ks.Get(0, missing)
	}); n > 0 {
		t.Fatalf("%v allocations per GET hit and miss of indexed keys", n)
	}
}

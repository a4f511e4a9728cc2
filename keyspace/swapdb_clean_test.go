package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestCleaningAfterSwapDB: a key written to db 0 and then moved to db 1 by
// SWAPDB must survive the cleaning of the segment that holds its write, and
// a reopen.
func TestCleaningAfterSwapDB(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 8<<20)
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("moved"), []byte("v0"), 0)
		b.HSet(0, []byte("hmoved"), []byte("f"), []byte("v"))
	})
	commit(t, ks, func(b *keyspace.Batch) { b.SwapDB(0, 1) })
	val := make([]byte, 1000)
	for i := 0; i < 40000; i++ { // ~40 MB of overwrites: the first segments get cleaned
		commit(t, ks, func(b *keyspace.Batch) { b.Set(2, []byte(fmt.Sprintf("fill:%d", i%100)), val, 0) })
	}
	ks.Clean()
	if seg := ks.OldestSegment(); seg == 0 {
		t.Fatalf("the first segment was not cleaned")
	}
	ks.Close()
	ks = openKS(t, dir, 8<<20)
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	if v, ok, _ := ks.Get(1, []byte("moved")); !ok || string(v) != "v0" {
		t.Fatalf("db 1 moved = %q, %v after cleaning and reopen; want v0", v, ok)
	}
	if !ks.Exists(1, []byte("hmoved")) {
		t.Fatalf("db 1 hmoved missing after cleaning and reopen")
	}
	if v, ok, _ := ks.Get(0, []byte("moved")); ok {
		t.Fatalf("db 0 moved = %q after reopen; want none", v)
	}
}

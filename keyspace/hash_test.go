package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestHashUpdatedManyTimesStaysCompact updates one hash field 200,000
// times: cleaning rewrites the hash whole, so the arena stays small, and
// the hash survives reopening with its last values and its TTL.
func TestHashUpdatedManyTimesStaysCompact(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	for i := 0; i < 50; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.HSet(0, []byte("h"), []byte(fmt.Sprintf("f%d", i)), []byte(fmt.Sprintf("v%d", i)))
		})
	}
	for i := 0; i < 200000; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.HSet(0, []byte("h"), []byte("hot"), []byte(fmt.Sprintf("value-%d", i)))
		})
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.HDel(0, []byte("h"), []byte("f0"))
		b.Expire(0, []byte("h"), ks.NowMs()+3600_000)
	})
	ks.Clean()
	st := ks.Stats()
	if st.ArenaBytes > 8<<20 {
		t.Fatalf("arena %d bytes after 200,000 updates of one field: not compacted (live %d)", st.ArenaBytes, st.LiveBytes)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	if n, _ := ks.HLen(0, []byte("h")); n != 50 {
		t.Fatalf("HLEN %d, want 50", n)
	}
	if v, ok, _ := ks.HGet(0, []byte("h"), []byte("hot")); !ok || string(v) != "value-199999" {
		t.Fatalf("hot = %q", v)
	}
	if _, ok, _ := ks.HGet(0, []byte("h"), []byte("f0")); ok {
		t.Fatalf("deleted field came back")
	}
	if at, _ := ks.ExpireAt(0, []byte("h")); at == 0 {
		t.Fatalf("TTL lost")
	}
	if ks.Type(0, []byte("h")) != keyspace.TypeHash {
		t.Fatalf("type %s", ks.Type(0, []byte("h")))
	}
	if _, _, err := ks.Get(0, []byte("h")); err != keyspace.ErrWrongType {
		t.Fatalf("GET on a hash: %v", err)
	}
}

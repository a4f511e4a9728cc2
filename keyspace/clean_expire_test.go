package keyspace_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestCleaningExpiredCollection: a hash created with a TTL in one segment
// and updated in a later one expires (no record is written for that).
// Cleaning drops the first segment; the update left in the later segment
// must not bring the hash back, without its TTL, at the next start. The
// same for a patched string.
func TestCleaningExpiredCollection(t *testing.T) {
	const segSize = 1 << 20
	dir := t.TempDir()
	ks := openKS(t, dir, segSize)
	// 2.8 MB of live data keeps the background cleaner away (its bound is
	// twice the live bytes plus a segment): this test cleans by hand.
	for i := 0; i < 4; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.Set(2, []byte(fmt.Sprint("big", i)), bytes.Repeat([]byte("b"), 700<<10), 0) })
	}
	ttl := ks.NowMs() + 3600_000
	commit(t, ks, func(b *keyspace.Batch) {
		b.HSet(0, []byte("session"), []byte("user"), []byte("ann"))
		b.Expire(0, []byte("session"), ttl)
		b.Set(0, []byte("patched"), bytes.Repeat([]byte("p"), 2048), ttl)
	})
	ks.Lock()
	created, _ := ks.ObjectFirstSeg(0, []byte("session"))
	ks.Unlock()
	for i := 0; i < 150; i++ { // 1.2 MB of overwrites: the next writes land in a later segment
		commit(t, ks, func(b *keyspace.Batch) { b.Set(1, []byte("filler"), bytes.Repeat([]byte("f"), 8<<10), 0) })
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.HSet(0, []byte("session"), []byte("seen"), []byte("now"))
		b.SetRange(0, []byte("patched"), 10, []byte("xx"))
	})
	ks.AdvanceClock(2 * 3600_000) // both keys expire
	ks.Lock()
	if ks.Exists(0, []byte("session")) || ks.Exists(0, []byte("patched")) {
		t.Fatalf("keys did not expire")
	}
	ks.Unlock()
	for ks.OldestSegment() <= created {
		if !ks.CleanOldest() {
			t.Fatalf("could not clean segment %d", ks.OldestSegment())
		}
	}
	ks.Close()
	ks = openKS(t, dir, segSize) // the real clock again: the TTL is an hour away
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	for _, k := range []string{"session", "patched"} {
		if ks.Exists(0, []byte(k)) {
			at, _ := ks.ExpireAt(0, []byte(k))
			t.Errorf("expired %s is back after cleaning and a restart (type %s, expireAt %d)", k, ks.Type(0, []byte(k)), at)
		}
	}
	if n := ks.DBSize(2); n != 4 {
		t.Errorf("db 2 holds %d keys after the restart, want 4", n)
	}
}

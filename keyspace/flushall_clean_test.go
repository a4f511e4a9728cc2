package keyspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestCleanAfterFlushAllCopiesNothing: segments older than a FLUSHALL are
// removed without writing anything (what lets FLUSHALL give space back on
// a full disk, where no copy could be written), collections included,
// which the cleaner otherwise resets at the head of the log.
func TestCleanAfterFlushAllCopiesNothing(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 64<<10)
	pad := strings.Repeat("p", 900)
	for i := 0; i < 300; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.Set(i%4, []byte(fmt.Sprintf("k%d", i)), []byte(pad), 0)
			// Collections: without the FLUSHALL rule the cleaner writes a
			// reset (a delete) for each one it finds in a segment.
			b.RPush(i%4, []byte(fmt.Sprintf("list%d", i%50)), []byte(pad[:100]))
			b.HSet(i%4, []byte(fmt.Sprintf("hash%d", i%50)), []byte(fmt.Sprint(i)), []byte(pad[:100]))
		})
	}
	commit(t, ks, func(b *keyspace.Batch) { b.FlushAll() })
	stats := func() keyspace.Stats {
		ks.Lock()
		defer ks.Unlock()
		return ks.Stats()
	}
	before := stats()
	ks.Clean()
	after := stats()
	if after.LastLSN != before.LastLSN {
		t.Fatalf("cleaning after FLUSHALL wrote %d records, want none", after.LastLSN-before.LastLSN)
	}
	if after.Segments > 2 || after.ArenaBytes >= before.ArenaBytes/2 {
		t.Fatalf("after FLUSHALL and cleaning: %d segments, %d bytes (were %d, %d)", after.Segments, after.ArenaBytes, before.Segments, before.ArenaBytes)
	}
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	for db := 0; db < 4; db++ {
		if n := ks.DBSize(db); n != 0 {
			t.Fatalf("db %d has %d keys after FLUSHALL, cleaning and a restart", db, n)
		}
	}
}

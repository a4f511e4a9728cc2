package keyspace_test

import (
	"fmt"
	"github.com/persimmon-db/persimmon/keyspace"
	"math/rand/v2"
	"testing"
)

// TestCleaningManyCollectionsConverges updates many hashes that together
// outgrow a segment, so every segment holds operations of every hash.
// Cleaning rewrites each hash at most once per pass over the segments
// (after a rewrite whole, older segments' operations of it are dropped
// without another one): cleaning the segments that existed when it
// started must shrink the arena. It used to rewrite every hash for every
// segment cleaned, writing more than it freed, without end (a break-it
// pass saw an idle server cleaning 45 MB/s forever).
func TestCleaningManyCollectionsConverges(t *testing.T) {
	const seg = 256 << 10
	ks := openKS(t, t.TempDir(), seg)
	defer ks.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	val := make([]byte, 100)
	const hashes, fields = 40, 200 // ~900 KB live: more than three segments
	for h := 0; h < hashes; h++ {
		for f := 0; f < fields; f += 20 {
			commit(t, ks, func(b *keyspace.Batch) {
				for i := f; i < f+20; i++ {
					b.HSet(0, []byte(fmt.Sprint("h", h)), []byte(fmt.Sprint("f", i)), val)
				}
			})
		}
	}
	for i := 0; i < 20000; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.HSet(0, []byte(fmt.Sprint("h", rng.IntN(hashes))), []byte(fmt.Sprint("f", rng.IntN(fields))), val)
		})
	}
	before := ks.Stats()
	oldest := ks.OldestSegment()
	for ks.OldestSegment() <= oldest+uint64(before.Segments) {
		if !ks.CleanOldest() {
			break
		}
	}
	after := ks.Stats()
	t.Logf("arena %d -> %d bytes, live %d, cleaned %d", before.ArenaBytes, after.ArenaBytes, after.LiveBytes, after.CleanedBytes)
	if after.ArenaBytes >= before.ArenaBytes {
		t.Fatalf("cleaning every segment of the arena grew it: %d -> %d bytes (live %d)", before.ArenaBytes, after.ArenaBytes, after.LiveBytes)
	}
	if bound := 2*after.LiveBytes + 2*seg; after.ArenaBytes > bound {
		t.Fatalf("arena %d bytes after a full pass, over 2x live + 2 segments (%d)", after.ArenaBytes, bound)
	}
}

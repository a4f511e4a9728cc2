package keyspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestSetPathOldMemo: a write that replaces an indexed key right after
// Exists looked it up (SET's path, which takes the replaced operation's
// size and expiry from that lookup instead of decoding it again) leaves
// the live bytes and the expiry counts exactly as the same writes do
// without the lookups, over keys with and without an expiry replaced by
// values of other sizes with and without one; and an Exists whose key is
// then not written (SET NX) leaves nothing that a later write of another
// key picks up.
func TestSetPathOldMemo(t *testing.T) {
	later := func(ks *keyspace.Keyspace) int64 { return ks.NowMs() + 3600_000 }
	run := func(lookups bool) (live int64, keys, expires int) {
		ks, _ := openKix(t, t.TempDir())
		defer ks.Close()
		at := later(ks)
		key := func(i int) []byte { return []byte(fmt.Sprintf("k:%d", i)) }
		commit(t, ks, func(b *keyspace.Batch) {
			for i := 0; i < 200; i++ {
				exp := int64(0)
				if i%2 == 0 {
					exp = at
				}
				b.Set(0, key(i), []byte(strings.Repeat("v", 1+i%7)), exp)
			}
		})
		for i := 0; i < 200; i++ {
			ks.Lock()
			if lookups {
				ks.Exists(0, key((i+1)%200)) // another key's lookup first: its memo is replaced
				if !ks.Exists(0, key(i)) {
					ks.Unlock()
					t.Fatalf("k:%d missing", i)
				}
			}
			exp := int64(0)
			if i%3 == 0 {
				exp = at
			}
			b := ks.NewBatch()
			b.Set(0, key(i), []byte(strings.Repeat("w", 20+i%11)), exp)
			if err := ks.Commit(b); err != nil {
				ks.Unlock()
				t.Fatal(err)
			}
			if lookups {
				ks.Exists(0, key(i)) // looked up, then not written (NX)
				b := ks.NewBatch()
				b.Set(0, key(1000+i), []byte("x"), 0) // a new key after it
				if err := ks.Commit(b); err != nil {
					ks.Unlock()
					t.Fatal(err)
				}
			}
			ks.Unlock()
		}
		if !lookups {
			commit(t, ks, func(b *keyspace.Batch) {
				for i := 0; i < 200; i++ {
					b.Set(0, key(1000+i), []byte("x"), 0)
				}
			})
		}
		ks.Lock()
		defer ks.Unlock()
		return ks.Stats().LiveBytes, ks.DBSize(0), ks.DBInfo(0).Expires
	}
	live0, keys0, exp0 := run(false)
	live1, keys1, exp1 := run(true)
	if keys0 != 400 || exp0 != 67 {
		t.Fatalf("without lookups: %d keys, %d with an expiry; want 400 and 67", keys0, exp0)
	}
	if live1 != live0 || keys1 != keys0 || exp1 != exp0 {
		t.Fatalf("with lookups: live bytes %d, %d keys, %d expires; without: %d, %d, %d", live1, keys1, exp1, live0, keys0, exp0)
	}
}

// TestCommitPredictsSetLoc: the location Commit prefetches the access
// data of (NextSetLoc, taken before the commit) is where the batch's
// first set lands, for every single-SET commit but the first of each new
// segment.
func TestCommitPredictsSetLoc(t *testing.T) {
	ks, _ := openKix(t, t.TempDir())
	defer ks.Close()
	hit, miss := 0, 0
	segs := map[uint64]bool{}
	for i := 0; i < 3000; i++ {
		key := []byte(fmt.Sprintf("k:%d", i%700))
		ks.Lock()
		want := ks.NextSetLoc()
		b := ks.NewBatch()
		b.Set(0, key, []byte(strings.Repeat("v", i%90)), 0)
		if err := ks.Commit(b); err != nil {
			ks.Unlock()
			t.Fatal(err)
		}
		got, ok := ks.IndexedLoc(0, key)
		ks.Unlock()
		if !ok {
			t.Fatalf("%s not indexed", key)
		}
		if got == want {
			hit++
		} else if segs[got>>40] || got&(1<<40-1) != 4096+24 {
			t.Fatalf("commit %d: %s at %#x, predicted %#x (not a new segment's first record)", i, key, got, want)
		} else {
			miss++
		}
		segs[got>>40] = true
	}
	t.Logf("%d predicted, %d in a new segment (%d segments)", hit, miss, len(segs))
	if hit < 2900 {
		t.Fatalf("only %d of 3000 predicted", hit)
	}
}

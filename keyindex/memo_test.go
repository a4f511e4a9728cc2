package keyindex

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// countingKeyAt wraps l's KeyAt, counting the calls.
func countingKeyAt(l *memLog, n *int) Options {
	o := l.opts()
	o.KeyAt = func(loc uint64) ([]byte, bool) { *n++; return l.keyAt(loc) }
	return o
}

// TestModelLookedUp is TestModel with each write looked up before it is
// staged, as the keyspace does (so the staging is hinted by the lookup
// memo), and with some writes applied directly in between (which must
// drop the hint), checked against the model after each checkpoint.
func TestModelLookedUp(t *testing.T) {
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(3, 4))
	direct := 0
	for round := 0; round < 6; round++ {
		for i := 0; i < 8000; i++ {
			k := []byte(fmt.Sprintf("key:%d", r.IntN(4000+round*2000)))
			ix.Lookup(k)
			loc, lsn := l.add(string(k), r.IntN(4) == 0)
			if r.IntN(50) == 0 {
				// A direct store of a durable write (recovery's repair
				// replay; a deletion by expiry), then the same write staged.
				if err := ix.Apply(k, loc, false); err != nil {
					t.Fatal(err)
				}
				direct++
			}
			if err := ix.Stage(k, loc, false); err != nil {
				t.Fatal(err)
			}
			if int(lsn)%701 == 0 {
				if err := ix.Checkpoint(Checkpoint{LSN: lsn}); err != nil {
					t.Fatal(err)
				}
				check(t, ix, l, l.model(len(l.recs)))
			}
		}
		if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
			t.Fatal(err)
		}
		check(t, ix, l, l.model(len(l.recs)))
	}
	if ix.Grows == 0 || direct == 0 {
		t.Fatalf("grows %d, direct applies %d", ix.Grows, direct)
	}
}

// TestHintedCheckpointReadsNoKey: a key looked up and then overwritten is
// stored at the checkpoint without reading any key back (the slot is
// known by its location), and the second lookup of the same key is
// answered without a probe.
func TestHintedCheckpointReadsNoKey(t *testing.T) {
	l := newMemLog()
	var calls int
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), countingKeyAt(l, &calls))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	const n = 500
	for i := 0; i < n; i++ {
		loc, _ := l.add(fmt.Sprintf("k%d", i), false)
		ix.Stage([]byte(fmt.Sprintf("k%d", i)), loc, false)
	}
	if err := ix.Checkpoint(Checkpoint{LSN: n}); err != nil {
		t.Fatal(err)
	}
	calls = 0
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		old, _ := ix.Get(k)
		if again, _ := ix.Get(k); again != old {
			t.Fatalf("second lookup of %s: %#x, first %#x", k, again, old)
		}
		loc, _ := l.add(string(k), false)
		ix.Stage(k, loc, false)
	}
	lookups := calls
	if lookups > n+n/20 { // one read per key, a few more for tag collisions
		t.Fatalf("%d key reads for %d keys looked up twice", lookups, n)
	}
	if err := ix.Checkpoint(Checkpoint{LSN: 2 * n}); err != nil {
		t.Fatal(err)
	}
	if calls != lookups {
		t.Fatalf("the checkpoint read %d keys back", calls-lookups)
	}
	check(t, ix, l, l.model(len(l.recs)))
}

// TestMemoSkipsUnreadable: a lookup whose probe met a slot whose key
// cannot be read is not remembered: the next lookup probes (and meets it)
// again, so the caller notes the damage each time.
func TestMemoSkipsUnreadable(t *testing.T) {
	l := newMemLog()
	var calls int
	broken := uint64(0)
	o := l.opts()
	o.KeyAt = func(loc uint64) ([]byte, bool) {
		calls++
		if loc == broken {
			return nil, false
		}
		return l.keyAt(loc)
	}
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), o)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	loc, _ := l.add("a", false)
	ix.Stage([]byte("a"), loc, false)
	if err := ix.Checkpoint(Checkpoint{LSN: 1}); err != nil {
		t.Fatal(err)
	}
	broken = loc
	for i := 1; i <= 2; i++ {
		if _, ok := ix.Get([]byte("a")); ok {
			t.Fatal("an unreadable slot matched")
		}
		if calls != i {
			t.Fatalf("lookup %d: %d key reads", i, calls)
		}
	}
}

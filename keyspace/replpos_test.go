package keyspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

func replPosition(ks *keyspace.Keyspace) string {
	ks.Lock()
	defer ks.Unlock()
	id, off, db, ok := ks.ReplPosition()
	return fmt.Sprintf("%s %d %d %v", id, off, db, ok)
}

// TestReplPositionRecoveredWithItsGroup: the position is recovered with
// the writes of its transaction group, whole or not at all (a group cut
// short leaves the previous position and none of its writes); FLUSHALL
// leaves it; an empty replid is recovered as no position; cleaning
// copies it forward, even past a FLUSHALL that empties its segment.
func TestReplPositionRecoveredWithItsGroup(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 64<<10)
	id := strings.Repeat("a", 40)
	group := func(off int64, key string, end bool) {
		ks.Lock()
		defer ks.Unlock()
		ks.BeginTxn()
		b := ks.NewBatch()
		b.Set(0, []byte(key), []byte("v"), 0)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		b = ks.NewBatch()
		b.SetReplPosition(id, off, 3)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		if end {
			if err := ks.EndTxn(); err != nil {
				t.Fatal(err)
			}
		}
	}
	group(100, "a", true)
	commit(t, ks, func(b *keyspace.Batch) { b.FlushAll() })
	group(200, "b", true)
	group(300, "c", false) // never committed: a kill -9 before its marker
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	if got, want := replPosition(ks), id+" 200 3 true"; got != want {
		t.Fatalf("after reopen: %q, want %q", got, want)
	}
	if has(t, ks, "c") || !has(t, ks, "b") {
		t.Fatal("the recovered keys do not match the recovered position")
	}
	pad := strings.Repeat("p", 900)
	for i := range 300 {
		commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte(fmt.Sprint("k", i%10)), []byte(pad), 0) })
	}
	commit(t, ks, func(b *keyspace.Batch) { b.FlushAll() })
	first := ks.OldestSegment()
	for ks.CleanOldest() {
	}
	if ks.OldestSegment() == first {
		t.Fatal("nothing was cleaned")
	}
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	if got, want := replPosition(ks), id+" 200 3 true"; got != want {
		t.Fatalf("after cleaning and reopen: %q, want %q", got, want)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SetReplPosition("", 0, 0) })
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	defer ks.Close()
	if got := replPosition(ks); got != " 0 0 false" {
		t.Fatalf("after clearing: %q", got)
	}
}

func has(t *testing.T, ks *keyspace.Keyspace, key string) bool {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	_, ok, _ := ks.Get(0, []byte(key))
	return ok
}

// TestReplPositionTrailer: an armed position rides in the next batch
// committed (one record, not two, besides the group's commit marker), is
// recovered with that batch's write, and a group cut short (no marker)
// recovers neither; with no commit it stays pending.
func TestReplPositionTrailer(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 64<<10)
	id := strings.Repeat("b", 40)
	unit := func(off int64, key string, end bool) uint64 {
		ks.Lock()
		defer ks.Unlock()
		before := ks.LastLSN()
		ks.BeginTxn()
		ks.SetReplPositionTrailer(id, off, 2)
		b := ks.NewBatch()
		b.Set(0, []byte(key), []byte("v"), 0)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		if ks.ReplPositionTrailerPending() {
			t.Fatal("the trailer is still pending after a commit")
		}
		if end {
			if err := ks.EndTxn(); err != nil {
				t.Fatal(err)
			}
		}
		return ks.LastLSN() - before
	}
	if n := unit(100, "a", true); n != 2 {
		t.Fatalf("a unit of one write made %d records, want 2 (the write with its position, the marker)", n)
	}
	if got, want := replPosition(ks), id+" 100 2 true"; got != want {
		t.Fatalf("live: %q, want %q", got, want)
	}
	unit(200, "b", false) // a kill -9 before its marker
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	if got, want := replPosition(ks), id+" 100 2 true"; got != want {
		t.Fatalf("after reopen: %q, want %q", got, want)
	}
	if !has(t, ks, "a") || has(t, ks, "b") {
		t.Fatal("the recovered keys do not match the recovered position")
	}
	ks.Lock()
	ks.SetReplPositionTrailer(id, 300, 0)
	pending := ks.ReplPositionTrailerPending()
	ks.Unlock()
	if !pending {
		t.Fatal("a trailer no commit took is not pending")
	}
	ks.Close()
}

// TestReplPositionTrailerSkipsFlushAll: a replica's unit that is the
// master's FLUSHALL commits the FLUSHALL alone (the freeing record, which
// has no room for the position) and leaves the armed position pending
// for its own record. Before, the trailer rode along and the wal panicked
// ("AppendFreeing of a 55-byte payload, more than the reserve holds"): a
// Persimmon replica died on its master's FLUSHALL.
func TestReplPositionTrailerSkipsFlushAll(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 64<<10)
	id := strings.Repeat("b", 40)
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("k"), []byte("v"), 0) })
	ks.Lock()
	ks.BeginTxn()
	ks.SetReplPositionTrailer(id, 77, 0)
	b := ks.NewBatch()
	b.FlushAll()
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	if !ks.ReplPositionTrailerPending() {
		t.Fatal("the FLUSHALL took the position")
	}
	b = ks.NewBatch()
	b.SetReplPosition(id, 77, 0)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := ks.EndTxn(); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	defer ks.Close()
	if got, want := replPosition(ks), id+" 77 0 true"; got != want {
		t.Fatalf("after reopen: %q, want %q", got, want)
	}
	if has(t, ks, "k") {
		t.Fatal("the FLUSHALL was not recovered")
	}
}

package keyspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

func functionCodes(t *testing.T, ks *keyspace.Keyspace) string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	var s []string
	for _, c := range ks.Functions() {
		s = append(s, string(c))
	}
	return strings.Join(s, "|")
}

// TestFunctionsSurviveReopen: the last set of libraries logged is the one
// recovered; FLUSHALL and FLUSHDB leave it alone; an empty set (FUNCTION
// FLUSH) is recovered empty; a transaction group cut short is not applied.
func TestFunctionsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 64<<10)
	lib1 := "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"
	lib2 := "#!lua name=lib2\nredis.register_function('f2', function() return 2 end)"
	commit(t, ks, func(b *keyspace.Batch) { b.SetFunctions([][]byte{[]byte(lib1)}) })
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("k"), []byte("v"), 0) })
	commit(t, ks, func(b *keyspace.Batch) { b.SetFunctions([][]byte{[]byte(lib1), []byte(lib2)}) })
	commit(t, ks, func(b *keyspace.Batch) { b.FlushAll() })
	commit(t, ks, func(b *keyspace.Batch) { b.FlushDB(0) })
	if got := functionCodes(t, ks); got != lib1+"|"+lib2 {
		t.Fatalf("live: %q", got)
	}
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	if got := functionCodes(t, ks); got != lib1+"|"+lib2 {
		t.Fatalf("after reopen: %q", got)
	}
	// A group that never commits (an EXEC cut short) is dropped.
	ks.Lock()
	ks.BeginTxn()
	b := ks.NewBatch()
	b.SetFunctions(nil)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	if got := functionCodes(t, ks); got != lib1+"|"+lib2 {
		t.Fatalf("after an uncommitted group: %q", got)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SetFunctions(nil) })
	ks.Close()
	ks = openKS(t, dir, 64<<10)
	defer ks.Close()
	if got := functionCodes(t, ks); got != "" {
		t.Fatalf("after FUNCTION FLUSH and reopen: %q", got)
	}
}

// TestFunctionsSurviveCleaning: the libraries' record is copied forward
// when its segment is cleaned, even when a FLUSHALL later in the log lets
// the cleaner drop everything else in the segment.
func TestFunctionsSurviveCleaning(t *testing.T) {
	for _, flushAll := range []bool{false, true} {
		t.Run(fmt.Sprint("flushall=", flushAll), func(t *testing.T) {
			dir := t.TempDir()
			ks := openKS(t, dir, 64<<10)
			lib := "#!lua name=lib\nredis.register_function('f', function() return 1 end)\n" + strings.Repeat("-- pad\n", 50)
			commit(t, ks, func(b *keyspace.Batch) { b.SetFunctions([][]byte{[]byte(lib)}) })
			pad := strings.Repeat("p", 900)
			for i := 0; i < 300; i++ {
				commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte(fmt.Sprint("k", i%10)), []byte(pad), 0) })
			}
			if flushAll {
				commit(t, ks, func(b *keyspace.Batch) { b.FlushAll() })
			}
			first := ks.OldestSegment()
			for ks.CleanOldest() {
			}
			if ks.OldestSegment() == first {
				t.Fatal("nothing was cleaned")
			}
			if got := functionCodes(t, ks); got != lib {
				t.Fatalf("live after cleaning: %q", got)
			}
			ks.Close()
			ks = openKS(t, dir, 64<<10)
			defer ks.Close()
			if got := functionCodes(t, ks); got != lib {
				t.Fatalf("after cleaning and reopen: %q", got)
			}
		})
	}
}

package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// TestCleaningBoundsSpace overwrites 100,000 keys ten times and checks the
// arena's disk space ends within the cleaner's bound (twice the live bytes
// plus one segment), and that every key still has its last value after a
// reopen.
func TestCleaningBoundsSpace(t *testing.T) {
	for _, segSize := range []int64{8 << 20, 64 << 20} {
		t.Run(fmt.Sprintf("segment=%dMiB", segSize>>20), func(t *testing.T) { testCleaningBoundsSpace(t, segSize) })
	}
}

func testCleaningBoundsSpace(t *testing.T, segSize int64) {
	if testing.Short() {
		t.Skip("writes 100,000 keys ten times")
	}
	dir := t.TempDir()
	open := func() *keyspace.Keyspace {
		ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: segSize})
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	ks := open()
	const keys, rounds = 100000, 10
	val := make([]byte, 64)
	for r := 0; r < rounds; r++ {
		for i := 0; i < keys; i++ {
			copy(val, fmt.Sprintf("round-%d-key-%d", r, i))
			ks.Lock()
			b := ks.NewBatch()
			b.Set(0, []byte(fmt.Sprintf("key:%08d", i)), val, 0)
			if err := ks.Commit(b); err != nil {
				t.Fatal(err)
			}
			ks.Unlock()
		}
	}
	// The background cleaner may be mid-way; finish the job synchronously.
	ks.Clean()
	st := ks.Stats()
	t.Logf("arena %d bytes, live %d bytes (%.2fx), %d segments, cleaned %d bytes", st.ArenaBytes, st.LiveBytes, float64(st.ArenaBytes)/float64(st.LiveBytes), st.Segments, st.CleanedBytes)
	if st.ArenaBytes > 2*st.LiveBytes+segSize {
		t.Fatalf("arena %d bytes > 2 × live %d bytes + one segment", st.ArenaBytes, st.LiveBytes)
	}
	if st.CleanedBytes == 0 {
		t.Fatalf("no segment was cleaned")
	}
	ks.Close()
	ks = open()
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	if n := ks.DBSize(0); n != keys {
		t.Fatalf("DBSIZE %d after reopen, want %d", n, keys)
	}
	for i := 0; i < keys; i += 997 {
		v, ok, _ := ks.Get(0, []byte(fmt.Sprintf("key:%08d", i)))
		want := fmt.Sprintf("round-%d-key-%d", rounds-1, i)
		if !ok || string(v[:len(want)]) != want {
			t.Fatalf("key %d = %q, want prefix %q", i, v, want)
		}
	}
}

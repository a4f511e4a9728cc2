package keyspace_test

import (
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// TestRandomKeyEmptyName: the empty name is a key like any other, so
// RANDOMKEY of a database that holds only "" (or "" and one more key, both
// still staged in the key index) answers a key, not nil, with the index on
// and off.
func TestRandomKeyEmptyName(t *testing.T) {
	for _, kix := range []string{"1", "0"} {
		t.Run("index="+kix, func(t *testing.T) {
			t.Setenv("PERSIMMON_TEST_KEY_INDEX", kix)
			ks, _, err := recovery.Open(recovery.Options{Dir: t.TempDir(), Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
			if err != nil {
				t.Fatal(err)
			}
			defer ks.Close()
			ks.Lock()
			defer ks.Unlock()
			set := func(key string) {
				b := ks.NewBatch()
				b.Set(0, []byte(key), []byte("v"), 0)
				if err := ks.Commit(b); err != nil {
					t.Fatal(err)
				}
			}
			set("")
			for i := 0; i < 50; i++ {
				if k, ok := ks.RandomKey(0); !ok || k != "" {
					t.Fatalf("RandomKey with only \"\": %q %v", k, ok)
				}
			}
			set("a")
			for i := 0; i < 50; i++ {
				if k, ok := ks.RandomKey(0); !ok || k != "" && k != "a" {
					t.Fatalf("RandomKey with \"\" and \"a\": %q %v", k, ok)
				}
			}
			if _, ok := ks.RandomKey(1); ok {
				t.Fatal("RandomKey of an empty database found a key")
			}
		})
	}
}

package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestKeyIndexPrefetch: Prefetch of a batch of keys (indexed and staged,
// published by a checkpoint, deleted, absent, of another database, and
// an empty key) changes no answer, and the writes after it land as
// without it.
func TestKeyIndexPrefetch(t *testing.T) {
	ks, _ := openKix(t, t.TempDir())
	defer ks.Close()
	key := func(i int) []byte { return []byte(fmt.Sprintf("k:%d", i)) }
	commit(t, ks, func(b *keyspace.Batch) {
		for i := 0; i < 500; i++ {
			b.Set(0, key(i), []byte(fmt.Sprint("v", i)), 0)
		}
		b.Set(1, key(0), []byte("db1"), 0)
	})
	ks.Lock()
	ks.CheckpointIndex()
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) {
		for i := 0; i < 500; i += 5 {
			b.Del(0, key(i))
		}
	})
	var batch [][]byte
	for i := 0; i < 600; i += 3 {
		batch = append(batch, key(i))
	}
	batch = append(batch, []byte{})
	value := func(db int, k []byte) string {
		v, ok, err := ks.Get(db, k)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s %v", v, ok)
	}
	ks.Lock()
	locked := true
	defer func() {
		if locked {
			ks.Unlock() // a failure inside: Close takes the lock
		}
	}()
	before := map[string]string{}
	for _, k := range batch {
		before[string(k)] = value(0, k)
	}
	ks.Prefetch(0, batch)
	ks.Prefetch(1, batch)
	for _, k := range batch {
		if got := value(0, k); got != before[string(k)] {
			t.Fatalf("%q: %s after Prefetch, %s before", k, got, before[string(k)])
		}
	}
	if got := value(1, key(0)); got != "db1 true" {
		t.Fatalf("db 1: %s", got)
	}
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, key(3), []byte("new"), 0) })
	ks.Lock()
	if got := value(0, key(3)); got != "new true" {
		t.Fatalf("k:3 after a write: %s", got)
	}
}

package keyspace_test

import (
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// openKS opens (recovers) a keyspace on dir with durability off (the tests
// reopen directories; crash durability is the e2e package's business).
// PERSIMMON_TEST_KEY_INDEX=1 runs them with the persistent key index.
func openKS(t testing.TB, dir string, segSize int64) *keyspace.Keyspace {
	t.Helper()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: segSize}) // PERSIMMON_TEST_KEY_INDEX=0: without the key index (recovery)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func commit(t *testing.T, ks *keyspace.Keyspace, fill func(b *keyspace.Batch)) {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	b := ks.NewBatch()
	fill(b)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
}

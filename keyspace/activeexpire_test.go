package keyspace_test

import (
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestSetActiveExpire: with the cycle off (DEBUG SET-ACTIVE-EXPIRE 0) a
// key past its expiry stays in the database until the cycle is back on.
func TestSetActiveExpire(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	commit(t, ks, func(b *keyspace.Batch) {
		b.HSet(0, []byte("h"), []byte("f"), []byte("v"))
	})
	commit(t, ks, func(b *keyspace.Batch) {
		ks.SetExpire(b, 0, []byte("h"), ks.NowMs()+10)
	})
	ks.AdvanceClock(1000)
	ks.Lock()
	ks.SetActiveExpire(false)
	ks.RunActiveExpire()
	off := ks.DBSize(0)
	ks.SetActiveExpire(true)
	ks.RunActiveExpire()
	on := ks.DBSize(0)
	ks.Unlock()
	if off != 1 || on != 0 {
		t.Fatalf("DBSIZE with the cycle off %d (want 1), back on %d (want 0)", off, on)
	}
}

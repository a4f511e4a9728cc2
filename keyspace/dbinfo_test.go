package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestDBInfo: keys and expires are counted at once (no background
// snapshot), and avg_ttl estimates the mean remaining TTL, also for a
// database that holds a small share of the keys with a TTL (the fallback
// that probes the database's own entries).
func TestDBInfo(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	now := ks.NowMs()
	commit(t, ks, func(b *keyspace.Batch) {
		for i := range 2000 { // db 0: every key expires in 100 s
			b.Set(0, fmt.Appendf(nil, "k%d", i), []byte("v"), now+100_000)
		}
		b.Set(3, []byte("only"), []byte("v"), now+500_000) // db 3: one key in 500 s
		b.Set(3, []byte("plain"), []byte("v"), 0)
		b.Set(5, []byte("plain"), []byte("v"), 0) // db 5: no TTL
	})
	ks.Lock()
	defer ks.Unlock()
	for _, c := range []struct {
		db, keys, expires int
		lo, hi            int64
	}{
		{0, 2000, 2000, 99_000, 100_000},
		{3, 2, 1, 499_000, 500_000},
		{5, 1, 0, 0, 0},
		{7, 0, 0, 0, 0},
	} {
		in := ks.DBInfo(c.db)
		if in.Keys != c.keys || in.Expires != c.expires || in.AvgTTL < c.lo || in.AvgTTL > c.hi {
			t.Errorf("db%d: %+v, want keys=%d expires=%d avg_ttl in %d..%d", c.db, in, c.keys, c.expires, c.lo, c.hi)
		}
	}
}

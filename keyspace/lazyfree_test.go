package keyspace_test

import (
	"strconv"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestLazyExpireCountsLazyFreed: with lazyfree-lazy-expire (SetLazyExpire)
// an expired set of more than LazyFreeThreshold hashtable members counts
// one lazy free when it is removed, a small one and a removal with the
// setting off count nothing; FreeEffort follows Redis's rule.
func TestLazyExpireCountsLazyFreed(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	members := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte("m" + strconv.Itoa(i))
		}
		return out
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.SAdd(0, []byte("big"), members(100)...)
		b.SAdd(0, []byte("small"), members(10)...)
		b.SAdd(0, []byte("off"), members(100)...)
		b.SAdd(0, []byte("ints"), []byte("1"), []byte("2"))
	})
	ks.Lock()
	efforts := []int64{ks.FreeEffort(0, []byte("big")), ks.FreeEffort(0, []byte("small")), ks.FreeEffort(0, []byte("ints"))}
	ks.Unlock()
	if efforts[0] != 100 || efforts[1] != 10 || efforts[2] != 1 {
		t.Fatalf("free efforts %v, want [100 10 1]", efforts)
	}
	commit(t, ks, func(b *keyspace.Batch) {
		for _, k := range []string{"big", "small", "off"} {
			ks.SetExpire(b, 0, []byte(k), ks.NowMs()+10)
		}
	})
	ks.AdvanceClock(1000)
	ks.Lock()
	ks.SetLazyExpire(false)
	ks.Exists(0, []byte("off"))
	ks.SetLazyExpire(true)
	ks.RunActiveExpire()
	ks.Unlock()
	if st := ks.Stats(); st.LazyFreed != 1 || st.ExpiredKeys != 3 {
		t.Fatalf("lazy freed %d, expired %d; want 1, 3", st.LazyFreed, st.ExpiredKeys)
	}
	ks.ResetStats()
	if n := ks.Stats().LazyFreed; n != 0 {
		t.Fatalf("after ResetStats: %d", n)
	}
}

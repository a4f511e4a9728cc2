package keyspace_test

import (
	"strconv"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
)

// BenchmarkHSetExpiring: HSET of one field on a hash with an expiry (each
// batch carries an opClock, applyclock.go) and on one without.
func BenchmarkHSetExpiring(b *testing.B) {
	for _, expiring := range []bool{false, true} {
		b.Run("expiring="+strconv.FormatBool(expiring), func(b *testing.B) {
			ks := openKS(b, b.TempDir(), arena.MinSegmentSize)
			defer ks.Close()
			ks.Lock()
			defer ks.Unlock()
			key := []byte("h")
			bt := ks.NewBatch()
			bt.HSet(0, key, []byte("f"), []byte("v"))
			if expiring {
				bt.Expire(0, key, ks.NowMs()+3600_000)
			}
			if err := ks.Commit(bt); err != nil {
				b.Fatal(err)
			}
			fields := make([][]byte, 1024)
			for i := range fields {
				fields[i] = []byte("field:" + strconv.Itoa(i))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bt := ks.NewBatch()
				bt.HSet(0, key, fields[i&1023], []byte("value"))
				if err := ks.Commit(bt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

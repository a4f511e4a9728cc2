package commands

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkGeoAddCommand runs GEOADD key lon lat member through its
// handler with fresh random coordinates, as the benchmark row does
// (1,000 keys, members from 10,000 names): every 100,000 requests the keys
// change, so the sets grow to about 100 members, the size a few seconds
// of the benchmark after FLUSHALL leaves them at (what Redis keeps as a
// listpack). For profiles of the small sorted set path.
func BenchmarkGeoAddCommand(b *testing.B) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	c := &Client{KS: ks}
	r := rand.New(rand.NewPCG(1, 2))
	const prepared = 1 << 16
	lons, lats, members := make([][]byte, prepared), make([][]byte, prepared), make([][]byte, prepared)
	for i := range lons {
		lons[i] = fmt.Appendf(nil, "%d.%d", r.IntN(179), r.IntN(1000000))
		lats[i] = fmt.Appendf(nil, "%d.%d", r.IntN(84), r.IntN(1000000))
		members[i] = fmt.Appendf(nil, "key:%010d", r.IntN(10000))
	}
	keys := make([][]byte, 1000)
	args := make([][]byte, 5)
	args[0] = []byte("GEOADD")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%100000 == 0 {
			for k := range keys {
				keys[k] = fmt.Appendf(nil, "geo:%d:%d", i, k)
			}
		}
		j := r.IntN(prepared)
		args[1], args[2], args[3], args[4] = keys[r.IntN(len(keys))], lons[j], lats[(j+7)%prepared], members[(j+13)%prepared]
		c.Out = c.Out[:0]
		ks.Lock()
		cmdGeoAdd(c, args)
		ks.Unlock()
		if len(c.Out) == 0 || c.Out[0] == '-' {
			b.Fatalf("GEOADD: %q", c.Out)
		}
	}
}

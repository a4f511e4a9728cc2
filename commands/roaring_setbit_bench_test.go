package commands

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkTRSetBitCommand runs TR.SETBIT and the native SETBIT through
// their handlers (commit and apply included, no network, no flush) on the
// bench's setbit row's data: 1,000,000 random offsets in 1~10,000,000
// loaded, then bits set at random offsets in the same range. The two
// sub-benchmarks differ only in the command, so their difference is the TR
// path's own cost. Wall time: on a shared machine compare runs of one
// invocation.
func BenchmarkTRSetBitCommand(b *testing.B) {
	for _, tc := range []struct {
		name string
		run  func(*Client, [][]byte)
		cmd  string
	}{{"tr", cmdTRSetBit, "TR.SETBIT"}, {"native", cmdSetBit, "SETBIT"}} {
		b.Run(tc.name, func(b *testing.B) {
			ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
			if err != nil {
				b.Fatal(err)
			}
			defer ks.Close()
			c := &Client{KS: ks}
			rng := rand.New(rand.NewPCG(42, 1))
			args := [][]byte{[]byte(tc.cmd), []byte("k"), nil, []byte("1")}
			set := func() {
				args[2] = strconv.AppendUint(args[2][:0], uint64(rng.Uint32N(10000000)+1), 10)
				c.Out = c.Out[:0]
				ks.Lock()
				tc.run(c, args)
				ks.Unlock()
				if len(c.Out) == 0 || c.Out[0] != ':' {
					b.Fatalf("%s: %q", tc.cmd, c.Out)
				}
			}
			for range 1000000 {
				set()
			}
			b.ResetTimer()
			for b.Loop() {
				set()
			}
		})
	}
}

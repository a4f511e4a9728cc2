package commands

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkPFAddCommand runs PFADD key element through its handler with
// fresh 16-byte elements on 10,000 keys, as the PFADD-sparse row
// does: small sparse HLLs, each PFADD a read of the key and a rewrite of
// its value. For profiles of the sparse path.
func BenchmarkPFAddCommand(b *testing.B) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	c := &Client{KS: ks}
	r := rand.New(rand.NewPCG(3, 4))
	keys := make([][]byte, 10000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "hll:%010d", i)
	}
	args := [][]byte{[]byte("PFADD"), nil, make([]byte, 16)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args[1] = keys[r.IntN(len(keys))]
		args[2] = fmt.Appendf(args[2][:0], "%016x", r.Uint64())
		c.Out = c.Out[:0]
		ks.Lock()
		cmdPFAdd(c, args)
		ks.Unlock()
		if len(c.Out) == 0 || c.Out[0] == '-' {
			b.Fatalf("PFADD: %q", c.Out)
		}
	}
}

package commands

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkXAddCommand runs XADD key * field <64 bytes> through its
// handler (parse, ID, node decision, one committed batch) on 1,000 keys,
// as the benchmark row does; for profiles of the XADD path.
func BenchmarkXAddCommand(b *testing.B) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	c := &Client{KS: ks}
	args := [][]byte{[]byte("XADD"), nil, []byte("*"), []byte("field"), bytes.Repeat([]byte("v"), 64)}
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("xkey:%d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args[1] = keys[i%len(keys)]
		c.Out = c.Out[:0]
		ks.Lock()
		cmdXAdd(c, args)
		ks.Unlock()
		if len(c.Out) == 0 || c.Out[0] == '-' {
			b.Fatalf("XADD: %q", c.Out)
		}
	}
}

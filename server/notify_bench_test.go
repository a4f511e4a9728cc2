package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// BenchmarkSetNotify is BenchmarkSetGet's path with SET only, in none
// mode (no flushes to hide the difference), with notify-keyspace-events
// empty (the default: Notify must cost nothing measurable) and with KEA
// but no subscriber (each SET formats and publishes its two messages).
func BenchmarkSetNotify(b *testing.B) {
	for _, flags := range []string{"", "KEA"} {
		name := flags
		if name == "" {
			name = "off"
		}
		b.Run(name, func(b *testing.B) {
			c := benchConn(b, pmem.ModeNone) // bench_test.go
			val := strings.Repeat("v", 64)
			var batch strings.Builder
			const perBatch = 32
			batch.WriteString(multibulk("CONFIG", "SET", "notify-keyspace-events", flags))
			for i := 0; i < perBatch; i++ {
				batch.WriteString(multibulk("SET", fmt.Sprintf("key:%06d", i*7919%100000), val))
			}
			in := []byte(batch.String())
			c.rbuf = append(c.rbuf[:0], in...)
			c.processInput()
			in = in[len(multibulk("CONFIG", "SET", "notify-keyspace-events", flags)):]
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += perBatch {
				c.rbuf = append(c.rbuf[:0], in...)
				if !c.processInput() {
					b.Fatal("connection closed")
				}
			}
		})
	}
}

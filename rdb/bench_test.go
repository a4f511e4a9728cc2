package rdb

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDumpHash dumps a hash of 1000 fields with 100-byte values (the
// plain encoding: every value is its own LZF attempt).
func BenchmarkDumpHash(b *testing.B) {
	v := Value{Kind: KindHash}
	for i := range 1000 {
		v.Items = append(v.Items, []byte(fmt.Sprintf("field:%d", i)), []byte(strings.Repeat(fmt.Sprint(i), 100)[:100]))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Dump(&v); err != nil {
			b.Fatal(err)
		}
	}
}

package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkSetGet is the hot path of every command over the real keyspace
// on a temporary directory: read a pipelined batch of SET and GET
// requests, dispatch them, write their replies. One op is one request.
// pmem mode includes the cache-line flushes of each SET; none mode leaves
// the request reader, dispatch, the keyspace and the reply writer.
func BenchmarkSetGet(b *testing.B) {
	for _, mode := range []pmem.Mode{pmem.ModePmem, pmem.ModeNone} {
		b.Run(mode.String(), func(b *testing.B) { benchSetGet(b, mode) })
	}
}

// benchConn is a connection whose replies are discarded, on a server over
// a fresh keyspace in mode; the server closes with the benchmark.
func benchConn(b *testing.B, mode pmem.Mode) *conn {
	b.Helper()
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: mode})
	if err != nil {
		b.Fatal(err)
	}
	s := NewServer(Config{}, ks, nil, testFamilies)
	b.Cleanup(func() { s.Close() })
	return newConn(s, discardConn{}, 1)
}

func benchSetGet(b *testing.B, mode pmem.Mode) {
	c := benchConn(b, mode)
	val := strings.Repeat("v", 64)
	var batch strings.Builder
	const perBatch = 32
	for i := 0; i < perBatch/2; i++ {
		k := fmt.Sprintf("key:%06d", i*7919%100000)
		batch.WriteString(multibulk("SET", k, val))
		batch.WriteString(multibulk("GET", k))
	}
	in := []byte(batch.String())
	b.ReportAllocs()
	b.SetBytes(int64(len(in) / perBatch))
	b.ResetTimer()
	for i := 0; i < b.N; i += perBatch {
		c.rbuf = append(c.rbuf[:0], in...)
		if !c.processInput() {
			b.Fatal("connection closed")
		}
	}
}

// BenchmarkOneRequestBatch is BenchmarkSetGet's path with one request per
// batch, the shape of redis-benchmark -c 50 (every read holds one
// request): each op is one processInput of one SET or GET, so what a
// batch costs once (its clock reads, its stats and durability wait, the
// reply's write) counts for every request.
func BenchmarkOneRequestBatch(b *testing.B) {
	c := benchConn(b, pmem.ModePmem)
	val := strings.Repeat("v", 64)
	const keys = 1024
	reqs := make([][]byte, 0, 2*keys)
	for i := 0; i < keys; i++ {
		k := fmt.Sprintf("key:%06d", i*7919%100000)
		reqs = append(reqs, []byte(multibulk("SET", k, val)), []byte(multibulk("GET", k)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.rbuf = append(c.rbuf[:0], reqs[i%len(reqs)]...)
		if !c.processInput() {
			b.Fatal("connection closed")
		}
	}
}

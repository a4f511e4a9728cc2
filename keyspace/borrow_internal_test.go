package keyspace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBatchSplitBorrowed checks Batch.split and Batch.partsIn on batches
// mixing borrowed values with other operations against the same batch
// materialized: the same record ends as splitPayload finds, and parts
// that concatenate to the same payload bytes, for several record limits.
func TestBatchSplitBorrowed(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	big := make([]byte, 3*borrowMin)
	for i := range big {
		big[i] = byte(i * 13)
	}
	for round := 0; round < 40; round++ {
		var b Batch
		for i, n := 0, 1+rng.IntN(6); i < n; i++ {
			key := []byte(fmt.Sprintf("k%d", i))
			switch rng.IntN(4) {
			case 0:
				v := big[rng.IntN(borrowMin):]
				v = v[:borrowMin+rng.IntN(len(v)-borrowMin+1)]
				b.Set(0, key, v, int64(rng.IntN(2)))
			case 1:
				b.Set(1, key, big[:rng.IntN(300)], 0)
			case 2:
				b.Del(0, key)
			default:
				b.SAdd(0, key, []byte("a"), []byte("bc"))
			}
		}
		var flat Batch
		flat.buf = slices.Clone(b.buf)
		flat.borrowed = slices.Clone(b.borrowed)
		flat.nBorrow = b.nBorrow
		flat.materialize()
		if b.Size() != len(flat.buf) {
			t.Fatalf("round %d: Size %d, materialized %d bytes", round, b.Size(), len(flat.buf))
		}
		for _, limit := range []int{64, 4096, borrowMin, 2 * borrowMin, 1 << 30} {
			ends, err := b.split(limit)
			if err != nil {
				t.Fatalf("round %d limit %d: %v", round, limit, err)
			}
			want, err := splitPayload(flat.buf, limit)
			if err != nil {
				t.Fatalf("round %d limit %d: materialized: %v", round, limit, err)
			}
			if !slices.Equal(ends, want) {
				t.Fatalf("round %d limit %d: ends %v, materialized %v", round, limit, ends, want)
			}
			start := 0
			for _, end := range ends {
				got := bytes.Join(b.partsIn(start, end), nil)
				if !bytes.Equal(got, flat.buf[start:end]) {
					t.Fatalf("round %d limit %d: parts of [%d, %d) differ from the materialized payload", round, limit, start, end)
				}
				start = end
			}
		}
	}
}

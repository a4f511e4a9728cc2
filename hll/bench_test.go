package hll

import (
	"fmt"
	"testing"
)

// smallSparse returns sparse HLLs after n elements each, the shape of
// the PFADD-sparse row's values (10,000 keys, a few dozen elements each).
func smallSparse(keys, n int) [][]byte {
	out := make([][]byte, keys)
	for k := range out {
		v := New()
		for e := range n {
			v, _, _ = Add(v, fmt.Appendf(nil, "k%d-e%d", k, e), DefaultSparseMaxBytes)
		}
		out[k] = v
	}
	return out
}

// BenchmarkAddSmallSparse is one Add of a fresh element to a copy of a
// sparse HLL of about 30 registers (the copy as PFADD makes it, into a
// buffer with room).
func BenchmarkAddSmallSparse(b *testing.B) {
	hs := smallSparse(256, 30)
	elems := make([][]byte, 4096)
	for i := range elems {
		elems[i] = fmt.Appendf(nil, "fresh-%d", i)
	}
	buf := make([]byte, 0, DefaultSparseMaxBytes+4)
	b.ResetTimer()
	for i := range b.N {
		v := append(buf[:0], hs[i%len(hs)]...)
		v, _, _ = Add(v, elems[i%len(elems)], DefaultSparseMaxBytes)
		buf = v[:0]
	}
}

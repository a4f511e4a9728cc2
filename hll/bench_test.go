package hll

import (
	"crypto/sha256"
	"encoding/hex"
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

// TestSetBytesGolden pins Set's output byte for byte: the SHA-256 of every
// intermediate string of sparse HLLs grown element by element under
// several sparse limits, through splits of every opcode, merges and
// promotion to dense. The digest is redis-server 7.0.15's for the same
// commands (CONFIG SET hll-sparse-max-bytes to each limit, then per
// element PFADD g <element> and GET g, hashing each GET's bytes until the
// string is dense); a change of the algorithm that moves one byte
// changes it.
func TestSetBytesGolden(t *testing.T) {
	h := sha256.New()
	for _, limit := range []int{40, 300, DefaultSparseMaxBytes} {
		for k := range 8 {
			v := New()
			for e := range 3000 {
				var err error
				if v, _, err = Add(v, fmt.Appendf(nil, "g%d-%d-%d", limit, k, e), limit); err != nil {
					t.Fatal(err)
				}
				h.Write(v)
				if IsDense(v) {
					break
				}
			}
		}
	}
	const want = "f4658276c353119961994e9bd68a36f1443823c7b0e31b8dddc409d8b5c2f29a"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("digest %s, want %s", got, want)
	}
}

package hll

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
)

// The hash's agreement with Redis is proven by the e2e differential test
// hll.txt, which compares whole HLL strings written by redis-server; here,
// that the seed and every tail length take part in the hash.
func TestMurmurHash64ATail(t *testing.T) {
	seen := map[uint64]string{}
	for n := 0; n <= 17; n++ {
		s := bytes.Repeat([]byte{'a'}, n)
		h := MurmurHash64A(s, hashSeed)
		if prev, ok := seen[h]; ok {
			t.Fatalf("len %d collides with %q", n, prev)
		}
		seen[h] = string(s)
		if MurmurHash64A(s, hashSeed+1) == h {
			t.Fatalf("len %d: the seed does not change the hash", n)
		}
	}
}

func TestNewIsEmptySparse(t *testing.T) {
	v := New()
	if err := Check(v); err != nil || IsDense(v) {
		t.Fatalf("New: %v dense %v", err, IsDense(v))
	}
	if want := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"; string(v) != want {
		t.Fatalf("New = %q, want %q", v, want)
	}
	if c, ok := Cached(v); !ok || c != 0 {
		t.Fatalf("cache %d %v", c, ok)
	}
	if Decode(v) != "Z:16384" {
		t.Fatalf("Decode = %q", Decode(v))
	}
}

func TestDenseRegisterPacking(t *testing.T) {
	regs := make([]byte, DenseSize-HeaderSize)
	for i := 0; i < Registers; i++ {
		denseSet(regs, i, uint8(i%64))
	}
	for i := 0; i < Registers; i++ {
		if g := denseGet(regs, i); g != uint8(i%64) {
			t.Fatalf("register %d = %d", i, g)
		}
	}
	// Register 1 spans bytes 0 and 1: bits 6..11.
	regs = make([]byte, DenseSize-HeaderSize)
	denseSet(regs, 1, 63)
	if regs[0] != 0xc0 || regs[1] != 0x0f {
		t.Fatalf("register 1 at 63 packs as % x", regs[:2])
	}
}

// Every sparse insertion path (ZERO, XZERO and VAL splits, merges,
// promotion by value and by size) must leave the same registers as the
// dense encoding, and the opcodes must stay canonical enough to cover
// exactly Registers registers.
func TestSparseMatchesDense(t *testing.T) {
	for _, maxSparse := range []int{30, 300, DefaultSparseMaxBytes, 1 << 20} {
		sp, dn := New(), New()
		dn, _ = ToDense(dn)
		promoted := false
		for n := 0; n < 20000; n++ {
			e := []byte(fmt.Sprintf("el-%d", n))
			var err error
			if sp, _, err = Add(sp, e, maxSparse); err != nil {
				t.Fatal(err)
			}
			dn, _, _ = Add(dn, e, maxSparse)
			if !IsDense(sp) && len(sp) > maxSparse {
				t.Fatalf("max %d: sparse grew to %d", maxSparse, len(sp))
			}
			if IsDense(sp) {
				promoted = true
			}
			if n%997 == 0 || n < 50 {
				d, err := ToDense(sp)
				if err != nil {
					t.Fatalf("max %d n %d: %v", maxSparse, n, err)
				}
				if !bytes.Equal(d[HeaderSize:], dn[HeaderSize:]) {
					t.Fatalf("max %d n %d: registers differ", maxSparse, n)
				}
				a, _ := Estimate(sp)
				b, _ := Estimate(dn)
				if a != b {
					t.Fatalf("max %d n %d: counts %d %d", maxSparse, n, a, b)
				}
			}
		}
		if maxSparse <= DefaultSparseMaxBytes && !promoted {
			t.Fatalf("max %d: 20000 elements never promoted", maxSparse)
		}
	}
}

func TestCorruptSparse(t *testing.T) {
	short := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xf0")
	long := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x7f\xff")
	cut := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f")
	for _, v := range [][]byte{short, long, cut} {
		if err := Check(v); err != nil {
			t.Fatalf("%q: Check %v", v, err)
		}
		if _, err := Estimate(v); err != ErrCorrupt {
			t.Fatalf("%q: Estimate %v", v, err)
		}
		if _, err := ToDense(v); err != ErrCorrupt {
			t.Fatalf("%q: ToDense %v", v, err)
		}
		var max [Registers]uint8
		if err := Merge(&max, v); err != ErrCorrupt {
			t.Fatalf("%q: Merge %v", v, err)
		}
	}
	for _, v := range []string{"", "HYLL", "HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff",
		"HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff", "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"} {
		if Check([]byte(v)) != ErrNotHLL {
			t.Fatalf("%q accepted as an HLL", v)
		}
	}
}

func TestEstimateAccuracy(t *testing.T) {
	if err := SelfTest(); err != nil {
		t.Fatal(err)
	}
	var max [Registers]uint8
	if EstimateRegisters(&max) != 0 {
		t.Fatal("empty registers do not count 0")
	}
}

func TestCache(t *testing.T) {
	v := New()
	SetCached(v, 12345)
	if c, ok := Cached(v); !ok || c != 12345 {
		t.Fatalf("%d %v", c, ok)
	}
	Invalidate(v)
	if _, ok := Cached(v); ok {
		t.Fatal("still valid")
	}
}

// TestSetInPlaceMatchesCopy checks that Set on a sparse HLL with spare
// capacity (grown in place) writes the bytes it writes on an exact-size
// one (a new slice), insertion after insertion, across the promotion to
// dense.
func TestSetInPlaceMatchesCopy(t *testing.T) {
	exact, roomy := New(), New()
	for e := 0; e < 3000; e++ {
		i, c := PatLen([]byte(fmt.Sprintf("elem-%d", e)))
		var err error
		var ch1, ch2 bool
		exact = append([]byte(nil), exact...) // no spare capacity
		if exact, ch1, err = Set(exact, i, c, DefaultSparseMaxBytes); err != nil {
			t.Fatal(err)
		}
		roomy = append(make([]byte, 0, len(roomy)+8), roomy...)
		if roomy, ch2, err = Set(roomy, i, c, DefaultSparseMaxBytes); err != nil {
			t.Fatal(err)
		}
		if ch1 != ch2 || !bytes.Equal(exact, roomy) {
			t.Fatalf("element %d: in place %x (changed %v), copied %x (changed %v)", e, roomy, ch2, exact, ch1)
		}
	}
	if !IsDense(exact) {
		t.Fatalf("3000 elements still sparse")
	}
}

// TestGetMatchesDense checks Get on a sparse HLL against the dense form's
// registers, every register, as elements go in, and that Get reports
// whether Set would change a register: Set changes it exactly when the
// proposed value is above what Get read. A sparse string whose opcodes stop
// short is ErrCorrupt.
func TestGetMatchesDense(t *testing.T) {
	v := New()
	for e := 0; e < 1500; e++ {
		i, c := PatLen([]byte(fmt.Sprintf("get-%d", e)))
		before, err := Get(v, i)
		if err != nil {
			t.Fatal(err)
		}
		var changed bool
		if v, changed, err = Set(v, i, c, DefaultSparseMaxBytes); err != nil {
			t.Fatal(err)
		}
		if changed != (before < c) {
			t.Fatalf("element %d: register %d was %d, Set of %d changed %v", e, i, before, c, changed)
		}
		if e%250 != 0 {
			continue
		}
		d, err := ToDense(v)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < Registers; r++ {
			got, err := Get(v, r)
			if want := Register(d, r); err != nil || got != want {
				t.Fatalf("after %d elements (%s): register %d is %d (%v), dense %d", e, map[bool]string{true: "dense", false: "sparse"}[IsDense(v)], r, got, err, want)
			}
		}
	}
	short := New()[:HeaderSize+1] // half an XZERO
	if _, err := Get(short, 5); err != ErrCorrupt {
		t.Fatalf("truncated XZERO: %v", err)
	}
	if _, err := Get(append(New()[:HeaderSize], 0x00), 1); err != ErrCorrupt { // one ZERO of 1 register
		t.Fatalf("opcodes covering one register, read register 1: %v", err)
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

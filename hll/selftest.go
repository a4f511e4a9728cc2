package hll

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// SelfTest is PFSELFTEST: it checks, as Redis's does, that dense register
// packing round-trips random values, that a sparse HLL and a dense one fed
// the same elements hold the same registers and count, and that the
// estimate stays within Redis's error bound (5 standard errors, 1.04/√m
// each) at growing cardinalities. The error says which check failed.
func SelfTest() error {
	rng := rand.New(rand.NewPCG(1, 2))
	// Register packing, twice over random values.
	regs := make([]byte, DenseSize-HeaderSize)
	want := make([]uint8, Registers)
	for round := 0; round < 2; round++ {
		for i := range want {
			want[i] = uint8(rng.IntN(regMax + 1))
			denseSet(regs, i, want[i])
		}
		for i, w := range want {
			if got := denseGet(regs, i); got != w {
				return fmt.Errorf("Register error at %d: %d != %d", i, got, w)
			}
		}
	}
	// Sparse and dense views of the same elements, and the error bound.
	sparse, dense := New(), New()
	dense, _ = ToDense(dense)
	relerr := 1.04 / math.Sqrt(Registers)
	var elem [8]byte
	checkpoint := uint64(1)
	for n := uint64(1); n <= 1<<17; n++ {
		binary.LittleEndian.PutUint64(elem[:], rng.Uint64())
		var err error
		if sparse, _, err = Add(sparse, elem[:], DefaultSparseMaxBytes); err != nil {
			return err
		}
		if dense, _, err = Add(dense, elem[:], DefaultSparseMaxBytes); err != nil {
			return err
		}
		if n != checkpoint {
			continue
		}
		checkpoint *= 2
		d1, err := ToDense(sparse)
		if err != nil {
			return err
		}
		if !bytes.Equal(d1[HeaderSize:], dense[HeaderSize:]) {
			return fmt.Errorf("Sparse and dense registers differ at cardinality %d", n)
		}
		c1, err := Estimate(sparse)
		if err != nil {
			return err
		}
		c2, _ := Estimate(dense)
		if c1 != c2 {
			return fmt.Errorf("Sparse count %d != dense count %d at cardinality %d", c1, c2, n)
		}
		maxerr := math.Ceil(relerr * 5 * float64(n))
		if n < 10 {
			maxerr = 1 // tiny sets are near exact
		}
		if math.Abs(float64(c2)-float64(n)) > maxerr {
			return fmt.Errorf("Error: %d vs %d (max error %.0f)", c2, n, maxerr)
		}
	}
	return nil
}

package main

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// Key generators. Every generator is safe for concurrent use: the state that
// changes per draw is either the caller's *rand.Rand or an atomic counter.

type keyGen interface {
	next(r *rand.Rand) uint64
}

type uniformGen struct{ n uint64 }

func (g uniformGen) next(r *rand.Rand) uint64 { return r.Uint64N(g.n) }

// sequenceGen hands out 0, 1, … n-1, 0, 1, … across all workers.
type sequenceGen struct {
	n   uint64
	ctr atomic.Uint64
}

func (g *sequenceGen) next(*rand.Rand) uint64 { return (g.ctr.Add(1) - 1) % g.n }

// zipfianGen is YCSB's ZipfianGenerator (Gray et al., "Quickly generating
// billion-record synthetic databases"): item 0 is the most popular, item i has
// probability (1/(i+1)^theta) / zeta(n, theta).
type zipfianGen struct {
	items                          uint64
	theta, alpha, zetan, eta, half float64
}

const zipfianConstant = 0.99

func zeta(n uint64, theta float64) float64 {
	s := 0.0
	for i := uint64(0); i < n; i++ {
		s += 1 / math.Pow(float64(i+1), theta)
	}
	return s
}

func newZipfian(items uint64, theta float64) *zipfianGen {
	return newZipfianZeta(items, theta, zeta(items, theta))
}

func newZipfianZeta(items uint64, theta, zetan float64) *zipfianGen {
	zeta2 := zeta(2, theta)
	return &zipfianGen{
		items: items, theta: theta, zetan: zetan,
		alpha: 1 / (1 - theta),
		eta:   (1 - math.Pow(2/float64(items), 1-theta)) / (1 - zeta2/zetan),
		half:  1 + math.Pow(0.5, theta),
	}
}

func (g *zipfianGen) next(r *rand.Rand) uint64 {
	u := r.Float64()
	uz := u * g.zetan
	if uz < 1 {
		return 0
	}
	if uz < g.half {
		return 1
	}
	v := uint64(float64(g.items) * math.Pow(g.eta*u-g.eta+1, g.alpha))
	if v >= g.items {
		v = g.items - 1
	}
	return v
}

// scrambledZipfianGen is YCSB's ScrambledZipfianGenerator: draw from a
// zipfian over 10^10 items (zeta precomputed by YCSB for constant 0.99), then
// spread the popular items over the key range with FNV-1a 64 so that the hot
// keys are not clustered at the start of the range.
type scrambledZipfianGen struct {
	min, n uint64
	gen    *zipfianGen
}

const (
	scrambledItemCount = 10_000_000_000
	scrambledZetan     = 26.46902820178302
)

var bigZipfian = newZipfianZeta(scrambledItemCount, zipfianConstant, scrambledZetan)

func newScrambledZipfian(min, max uint64) *scrambledZipfianGen {
	return &scrambledZipfianGen{min: min, n: max - min + 1, gen: bigZipfian}
}

func (g *scrambledZipfianGen) next(r *rand.Rand) uint64 {
	return g.min + fnvHash64(g.gen.next(r))%g.n
}

// latestGen is YCSB's SkewedLatestGenerator with a fixed basis: the most
// recently inserted record is the most popular. The workloads run here insert
// nothing during the transaction phase, so the basis is recordcount-1.
type latestGen struct {
	last uint64
	gen  *zipfianGen
}

func newLatest(count uint64) *latestGen {
	return &latestGen{last: count - 1, gen: newZipfian(count, zipfianConstant)}
}

func (g *latestGen) next(r *rand.Rand) uint64 { return g.last - g.gen.next(r) }

// fnvHash64 is YCSB's Utils.fnvhash64 (FNV-1a over the 8 bytes of the value,
// low byte first, result made non-negative).
func fnvHash64(v uint64) uint64 {
	const offset, prime = 0xCBF29CE484222325, 1099511628211
	h := uint64(offset)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= prime
		v >>= 8
	}
	if int64(h) < 0 {
		h = uint64(-int64(h))
	}
	return h
}

// randomBytes is a shared read-only pool of printable random bytes; values
// are slices of it at random offsets, so producing a 4 KiB value costs no
// allocation and no per-byte random draws.
var randomBytes = func() []byte {
	const size = 1 << 20
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, size)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}()

// randomValue returns n pseudo-random bytes (n ≤ 512 KiB).
func randomValue(r *rand.Rand, n int) []byte {
	if n > len(randomBytes)/2 {
		n = len(randomBytes) / 2
	}
	off := r.IntN(len(randomBytes) - n + 1)
	return randomBytes[off : off+n]
}

// fixedValue returns n bytes determined by seed (the same seed, the same bytes).
func fixedValue(seed uint64, n int) []byte {
	if n > len(randomBytes)/2 {
		n = len(randomBytes) / 2
	}
	off := int(fnvHash64(seed) % uint64(len(randomBytes)-n+1))
	return randomBytes[off : off+n]
}

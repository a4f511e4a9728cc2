package hll

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Format constants (never change: they are Redis's).
const (
	P            = 14             // register index bits
	Registers    = 1 << P         // 16384
	q            = 64 - P         // hash bits left for the zero run
	regBits      = 6              // bits of a dense register
	regMax       = 1<<regBits - 1 // 63
	HeaderSize   = 16
	DenseSize    = HeaderSize + (Registers*regBits+7)/8 // 12304
	encDense     = 0
	encSparse    = 1
	sparseValMax = 32    // VAL opcode's largest value
	sparseValLen = 4     // VAL opcode's longest run
	zeroMaxLen   = 64    // ZERO opcode's longest run
	xzeroMaxLen  = 16384 // XZERO opcode's longest run
	hashSeed     = 0xadc83b19

	// DefaultSparseMaxBytes is Redis's hll-sparse-max-bytes default: the
	// longest a sparse HLL (header included) may grow before it is
	// converted to dense.
	DefaultSparseMaxBytes = 3000
)

var (
	// ErrCorrupt is a string that has an HLL header but registers that do
	// not decode (Redis: "INVALIDOBJ Corrupted HLL object detected").
	ErrCorrupt = errors.New("corrupted HLL object")
	// ErrNotHLL is a string that is not an HLL at all (Redis: "WRONGTYPE
	// Key is not a valid HyperLogLog string value.").
	ErrNotHLL = errors.New("not a valid HyperLogLog string value")
)

// New returns an empty HLL: sparse, one XZERO opcode covering every
// register, a valid cached cardinality of 0.
func New() []byte {
	v := make([]byte, HeaderSize+2)
	copy(v, "HYLL")
	v[4] = encSparse
	putXZero(v[HeaderSize:], Registers)
	return v
}

// Check reports ErrNotHLL unless v has the HLL magic, a known encoding,
// and, when dense, exactly DenseSize bytes (Redis's isHLLObjectOrReply).
// A sparse v that passes can still be ErrCorrupt for the other functions.
func Check(v []byte) error {
	if len(v) < HeaderSize || string(v[:4]) != "HYLL" || v[4] > encSparse {
		return ErrNotHLL
	}
	if v[4] == encDense && len(v) != DenseSize {
		return ErrNotHLL
	}
	return nil
}

// IsDense reports whether a checked v is dense.
func IsDense(v []byte) bool { return v[4] == encDense }

// Cached returns the cached cardinality of a checked v, ok false when the
// cache is invalid.
func Cached(v []byte) (card uint64, ok bool) {
	if v[15]&0x80 != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(v[8:16]), true
}

// SetCached stores card as v's valid cached cardinality.
func SetCached(v []byte, card uint64) { binary.LittleEndian.PutUint64(v[8:16], card) }

// Invalidate marks v's cached cardinality invalid.
func Invalidate(v []byte) { v[15] |= 0x80 }

// ---- hashing ----

// MurmurHash64A is Austin Appleby's 64-bit MurmurHash2 for 64-bit
// platforms, reading blocks little-endian as Redis does on every platform.
func MurmurHash64A(data []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(data)) * m)
	for len(data) >= 8 {
		k := binary.LittleEndian.Uint64(data)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		data = data[8:]
	}
	if n := len(data); n > 0 {
		for i := n - 1; i >= 0; i-- {
			h ^= uint64(data[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// PatLen returns the register elem hashes to and the value it proposes
// (the position of the first 1 bit above the index bits, 1..51).
func PatLen(elem []byte) (index int, count uint8) {
	h := MurmurHash64A(elem, hashSeed)
	index = int(h & (Registers - 1))
	h >>= P
	h |= 1 << q
	return index, uint8(bits.TrailingZeros64(h) + 1)
}

// ---- dense registers ----

func denseGet(regs []byte, i int) uint8 {
	b := i * regBits / 8
	fb := uint(i*regBits) & 7
	v := uint(regs[b]) >> fb
	if b+1 < len(regs) {
		v |= uint(regs[b+1]) << (8 - fb)
	}
	return uint8(v & regMax)
}

func denseSet(regs []byte, i int, val uint8) {
	b := i * regBits / 8
	fb := uint(i*regBits) & 7
	regs[b] &^= byte(regMax << fb)
	regs[b] |= byte(uint(val) << fb)
	if b+1 < len(regs) {
		regs[b+1] &^= byte(regMax >> (8 - fb))
		regs[b+1] |= byte(uint(val) >> (8 - fb))
	}
}

// ---- sparse opcodes ----

func isZero(c byte) bool  { return c&0xc0 == 0 }
func isXZero(c byte) bool { return c&0xc0 == 0x40 }
func zeroLen(c byte) int  { return int(c&0x3f) + 1 }
func xzeroLen(p []byte) int {
	return (int(p[0]&0x3f)<<8 | int(p[1])) + 1
}
func valValue(c byte) uint8 { return (c>>2)&0x1f + 1 }
func valLen(c byte) int     { return int(c&3) + 1 }

// opSpan is the registers a one-byte opcode covers: ZERO's 1..64 and
// VAL's 1..4, 0 for a byte that starts an XZERO (its span needs the next
// byte). The walks to a register (Set, Get) read it instead of telling
// the three opcodes apart with two tests a byte.
var opSpan = func() (t [256]uint8) {
	for c := range t {
		switch b := byte(c); {
		case isZero(b):
			t[c] = uint8(zeroLen(b))
		case isXZero(b):
			t[c] = 0
		default:
			t[c] = uint8(valLen(b))
		}
	}
	return t
}()

func putXZero(p []byte, n int) {
	n--
	p[0] = byte(n>>8) | 0x40
	p[1] = byte(n)
}
func zeroOp(n int) byte           { return byte(n - 1) }
func valOp(val uint8, n int) byte { return byte(int(val-1)<<2|(n-1)) | 0x80 }

// runs calls fn for each opcode of sparse registers p: val 0 for the zero
// opcodes. It stops at the end or when fn returns false.
func runs(p []byte, fn func(val uint8, n int) bool) error {
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case isZero(c):
			if !fn(0, zeroLen(c)) {
				return nil
			}
			i++
		case isXZero(c):
			if i+1 >= len(p) {
				return ErrCorrupt
			}
			if !fn(0, xzeroLen(p[i:])) {
				return nil
			}
			i += 2
		default:
			if !fn(valValue(c), valLen(c)) {
				return nil
			}
			i++
		}
	}
	return nil
}

// ToDense returns v in the dense encoding (v itself when it already is),
// header copied, cache included. ErrCorrupt when the sparse opcodes do not
// cover exactly Registers registers.
func ToDense(v []byte) ([]byte, error) {
	if IsDense(v) {
		return v, nil
	}
	d := make([]byte, DenseSize)
	copy(d, v[:HeaderSize])
	d[4] = encDense
	regs := d[HeaderSize:]
	idx := 0
	bad := false
	err := runs(v[HeaderSize:], func(val uint8, n int) bool {
		if val != 0 {
			if idx+n > Registers {
				bad = true
				return false
			}
			for j := 0; j < n; j++ {
				denseSet(regs, idx+j, val)
			}
		}
		idx += n
		return true
	})
	if err != nil || bad || idx != Registers {
		return nil, ErrCorrupt
	}
	return d, nil
}

// Add adds elem to the checked HLL v, returning the HLL (v changed in
// place, or a new slice when it grew or became dense) and whether a
// register changed. maxSparse is hll-sparse-max-bytes. The cached
// cardinality is left to the caller (Redis invalidates it once per PFADD).
func Add(v []byte, elem []byte, maxSparse int) ([]byte, bool, error) {
	i, c := PatLen(elem)
	return Set(v, i, c, maxSparse)
}

// Set raises register i of v to count if it is lower, with Redis's
// sparse algorithm (the run holding i is split into at most five opcodes,
// then equal neighbouring VAL opcodes are merged), so the bytes are the
// ones Redis writes; a sparse HLL that would need a value above 32, or grow
// past maxSparse bytes, is converted to dense first. A sparse change marks
// the cache invalid, as Redis's does. v is changed in place (within its
// capacity when a run splits): the caller owns it.
func Set(v []byte, i int, count uint8, maxSparse int) ([]byte, bool, error) {
	if IsDense(v) {
		regs := v[HeaderSize:]
		if denseGet(regs, i) >= count {
			return v, false, nil
		}
		denseSet(regs, i, count)
		return v, true, nil
	}
	if count > sparseValMax {
		return promote(v, i, count)
	}
	// Step 1: the opcode whose run holds i.
	sp := v[HeaderSize:]
	pos, prev, first, span := 0, -1, 0, 0
	for pos < len(sp) {
		oplen := 1
		c := sp[pos]
		if span = int(opSpan[c]); span == 0 { // XZERO
			if pos+1 >= len(sp) {
				return v, false, ErrCorrupt
			}
			span = (int(c&0x3f)<<8 | int(sp[pos+1])) + 1
			oplen = 2
		}
		if i < first+span {
			break
		}
		prev = pos
		pos += oplen
		first += span
	}
	if span == 0 || pos >= len(sp) {
		return v, false, ErrCorrupt
	}
	c := sp[pos]
	var runlen int
	switch {
	case isZero(c):
		runlen = zeroLen(c)
	case isXZero(c):
		runlen = xzeroLen(sp[pos:])
	default:
		runlen = valLen(c)
		if valValue(c) >= count {
			return v, false, nil
		}
	}
	if runlen == 1 && !isXZero(c) { // a ZERO or VAL of one register
		sp[pos] = valOp(count, 1)
	} else {
		// Step 3: split the run into up to five opcodes.
		var seq [5]byte
		n := 0
		last := first + span - 1
		zeros := func(l int) {
			if l > zeroMaxLen {
				putXZero(seq[n:], l)
				n += 2
			} else {
				seq[n] = zeroOp(l)
				n++
			}
		}
		if isZero(c) || isXZero(c) {
			if i != first {
				zeros(i - first)
			}
			seq[n] = valOp(count, 1)
			n++
			if i != last {
				zeros(last - i)
			}
		} else {
			cur := valValue(c)
			if i != first {
				seq[n] = valOp(cur, i-first)
				n++
			}
			seq[n] = valOp(count, 1)
			n++
			if i != last {
				seq[n] = valOp(cur, last-i)
				n++
			}
		}
		oldlen := 1
		if isXZero(c) {
			oldlen = 2
		}
		delta := n - oldlen
		if delta > 0 && len(v)+delta > maxSparse {
			return promote(v, i, count)
		}
		if end := len(v) + delta; cap(v) >= end {
			// In place (v is the caller's to change, as in the other
			// steps): the tail moves by delta, the opcodes go between.
			old := len(v)
			v = v[:max(old, end)]
			copy(v[HeaderSize+pos+n:], v[HeaderSize+pos+oldlen:old])
			copy(v[HeaderSize+pos:], seq[:n])
			v = v[:end]
		} else {
			nv := make([]byte, 0, end)
			nv = append(nv, v[:HeaderSize+pos]...)
			nv = append(nv, seq[:n]...)
			nv = append(nv, v[HeaderSize+pos+oldlen:]...)
			v = nv
		}
		sp = v[HeaderSize:]
	}
	// Step 4: merge equal VAL neighbours near the change.
	p := 0
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < len(sp) && scan > 0; scan-- {
		c := sp[p]
		if isXZero(c) {
			p += 2
			continue
		}
		if isZero(c) {
			p++
			continue
		}
		if p+1 < len(sp) && sp[p+1]&0x80 != 0 {
			v1, v2 := valValue(c), valValue(sp[p+1])
			if v1 == v2 {
				if l := valLen(c) + valLen(sp[p+1]); l <= sparseValLen {
					sp[p+1] = valOp(v1, l)
					copy(sp[p:], sp[p+1:])
					v = v[:len(v)-1]
					sp = v[HeaderSize:]
					continue
				}
			}
		}
		p++
	}
	Invalidate(v)
	return v, true, nil
}

func promote(v []byte, i int, count uint8) ([]byte, bool, error) {
	d, err := ToDense(v)
	if err != nil {
		return v, false, err
	}
	regs := d[HeaderSize:]
	if denseGet(regs, i) < count {
		denseSet(regs, i, count)
	}
	return d, true, nil
}

// ---- counting ----

// histogram counts v's registers by value (ErrCorrupt for a sparse v
// whose opcodes do not cover exactly Registers registers).
func histogram(v []byte, h *[64]int) error {
	if IsDense(v) {
		regs := v[HeaderSize:]
		for i := 0; i < Registers; i++ {
			h[denseGet(regs, i)]++
		}
		return nil
	}
	idx := 0
	err := runs(v[HeaderSize:], func(val uint8, n int) bool {
		if val != 0 && idx+n > Registers {
			return false
		}
		idx += n
		h[val] += n
		return true
	})
	if err != nil || idx != Registers {
		return ErrCorrupt
	}
	return nil
}

// Estimate computes v's cardinality from its registers (ignoring the
// cache).
func Estimate(v []byte) (uint64, error) {
	var h [64]int
	if err := histogram(v, &h); err != nil {
		return 0, err
	}
	return estimate(&h), nil
}

// EstimateRegisters computes the cardinality of one register a byte.
func EstimateRegisters(regs *[Registers]uint8) uint64 {
	var h [64]int
	for _, r := range regs {
		h[r]++
	}
	return estimate(&h)
}

// estimate is Ertl's estimator as Redis 7.0's hllCount evaluates it; the
// float64 conversions keep each product rounded on its own (no fused
// multiply-add), as in Redis's C.
func estimate(h *[64]int) uint64 {
	const m = float64(Registers)
	const alphaInf = 0.721347520444481703680 // 1/(2 ln 2)
	z := m * tau(float64(m-float64(h[q+1]))/m)
	for j := q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * sigma(float64(h[0])/m))
	return uint64(math.Round(float64(float64(alphaInf*m)*m) / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if prev == z {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if prev == z {
			return z / 3
		}
	}
}

// Merge raises each max[i] to register i of v (PFMERGE, PFCOUNT of many
// keys).
func Merge(max *[Registers]uint8, v []byte) error {
	if IsDense(v) {
		regs := v[HeaderSize:]
		for i := range max {
			if r := denseGet(regs, i); r > max[i] {
				max[i] = r
			}
		}
		return nil
	}
	idx := 0
	err := runs(v[HeaderSize:], func(val uint8, n int) bool {
		if val != 0 {
			if idx+n > Registers {
				return false
			}
			for j := idx; j < idx+n; j++ {
				if val > max[j] {
					max[j] = val
				}
			}
		}
		idx += n
		return true
	})
	if err != nil || idx != Registers {
		return ErrCorrupt
	}
	return nil
}

// Get returns register i of a checked v, sparse or dense, reading the
// sparse opcodes in place (no copy, no conversion): PFADD learns from it
// which registers an element raises before it changes anything.
// ErrCorrupt when the sparse opcodes end before register i.
func Get(v []byte, i int) (uint8, error) {
	if IsDense(v) {
		return denseGet(v[HeaderSize:], i), nil
	}
	sp := v[HeaderSize:]
	first := 0
	for pos := 0; pos < len(sp); {
		c := sp[pos]
		span := int(opSpan[c])
		if span == 0 { // XZERO
			if pos+1 >= len(sp) {
				return 0, ErrCorrupt
			}
			span = (int(c&0x3f)<<8 | int(sp[pos+1])) + 1
			pos++
		}
		pos++
		if first += span; i < first {
			if c&0x80 != 0 {
				return valValue(c), nil
			}
			return 0, nil
		}
	}
	return 0, ErrCorrupt
}

// Register returns register i of a dense v.
func Register(v []byte, i int) uint8 { return denseGet(v[HeaderSize:], i) }

// Decode renders a sparse v's opcodes as PFDEBUG DECODE does
// ("z:3 Z:100 v:5,2").
func Decode(v []byte) string {
	var sb strings.Builder
	sp := v[HeaderSize:]
	for i := 0; i < len(sp); {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		c := sp[i]
		switch {
		case isZero(c):
			sb.WriteString("z:" + strconv.Itoa(zeroLen(c)))
			i++
		case isXZero(c):
			n := int(c&0x3f)<<8 + 1
			if i+1 < len(sp) {
				n = xzeroLen(sp[i:])
			}
			sb.WriteString("Z:" + strconv.Itoa(n))
			i += 2
		default:
			sb.WriteString("v:" + strconv.Itoa(int(valValue(c))) + "," + strconv.Itoa(valLen(c)))
			i++
		}
	}
	return sb.String()
}

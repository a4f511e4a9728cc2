package commands

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// TR.BITOP AND and DIFF over the portable roaring serialization.
//
// roaring.And merges two array containers with a branchy two-pointer loop
// (localintersect2by2): on random members nearly every step mispredicts, 74%
// of the CPU of an AND of two 100,000-member bitmaps over 10,000,000 (1.1 ms
// a request), and it allocates a result container for every pair of
// containers with the same key, most of them empty for sparse bitmaps
// (AndNot and AndCardinality run the same kind of merge). The library gives
// no access to its containers, but its serialization (RoaringFormatSpec) is
// their bytes: WriteTo writes each array or bitset with one memmove. So the
// first source is serialized into a reused buffer, the next is read as
// WriteTo streams it (trAndStream), container by container, and the
// containers are combined there: an array with an array by stamping the
// smaller's members in a 64 KiB table of one byte a value (stampArray;
// above 1,024 members, marking them in a 2^16-bit scratch bitset) and
// probing it with the other, four members per load, no branch on the
// data; with a bitset by a probe per member; bitsets word by word. The result is written straight in the same serialization,
// which is the merge record TR.BITOP logs (Batch.TRMergeSerialized). It
// has the containers roaring.And / AndNot give (an array where at most
// 4,096 members remain, else a bitset; no empty containers; a DIFF keeps
// the first source's other containers as they are), so TR.STAT reads the
// same. Sources with run containers, a first source serializing to more
// than trAndMaxSource bytes, and (for counts only) sources of few members
// a container take the library's operations.
//
// The scratch is pooled (trAndScratchPool) and holds no bitmap: nothing
// read through it outlives the command, which holds the keys' lock.

// trSerialNoRunCookie is the portable serialization's first word when the
// bitmap has no run containers (RoaringFormatSpec: SERIAL_COOKIE_NO_RUNCONTAINER).
const trSerialNoRunCookie = 12346

// trArrayMax is the largest array container: more members are a bitset.
const trArrayMax = 4096

// trSerial is a bitmap in the portable serialization without run
// containers: cookie u32 (12346), n u32, n × (key u16, cardinality - 1
// u16), n × offset u32 (from the start), then each container: cardinality
// × u16 members ascending when the cardinality is at most 4,096, else a
// bitset of 1,024 u64 words. Little endian throughout.
type trSerial struct {
	p []byte
	n int
}

// trParseSerial reads the header of p; false if p is not in that form.
func trParseSerial(p []byte) (trSerial, bool) {
	if len(p) < 8 || binary.LittleEndian.Uint32(p) != trSerialNoRunCookie {
		return trSerial{}, false
	}
	n := int(binary.LittleEndian.Uint32(p[4:]))
	if n > 1<<16 || len(p) < 8+8*n {
		return trSerial{}, false
	}
	return trSerial{p: p, n: n}, true
}

func (s trSerial) key(i int) uint16 { return binary.LittleEndian.Uint16(s.p[8+4*i:]) }
func (s trSerial) card(i int) int   { return int(binary.LittleEndian.Uint16(s.p[10+4*i:])) + 1 }

// data is container i's bytes: 2 × cardinality for an array, 8 KiB for a
// bitset.
func (s trSerial) data(i int) []byte {
	off := int(binary.LittleEndian.Uint32(s.p[8+4*s.n+4*i:]))
	size := 8192
	if c := s.card(i); c <= trArrayMax {
		size = 2 * c
	}
	return s.p[off : off+size]
}

// trAndScratch holds the buffers of one AND: the first source's
// serialization, the stream the others are read from, the result's
// containers and its header, and the marks of one container.
type trAndScratch struct {
	src    bytes.Buffer
	stream trAndStream
	heads  []uint32 // key | (cardinality - 1) << 16 per result container: its descriptive header
	data   []byte
	out    []byte
	mark   [1024]uint64
	words  [1024]uint64
	stamps *[1 << 16]uint8 // the stamp table (stampArray), allocated on first use
	stamp  uint8           // the last stamp it gave
}

var trAndScratchPool = sync.Pool{New: func() any { return new(trAndScratch) }}

// and intersects x with the bitmap writeTo (a Bitmap's WriteTo) streams:
// the serialization is read container by container as it arrives, without a
// copy when a Write holds a whole container (WriteTo writes the header,
// then each container's bytes straight from its memory), through a buffer
// otherwise. With count set it only counts; otherwise s.out is the
// result's serialization (see trSerial). It returns the result's
// cardinality, or false if bm's serialization is not of trSerial's form.
func (s *trAndScratch) and(x trSerial, writeTo func(io.Writer) (int64, error), count bool) (uint64, bool) {
	return s.combine(x, writeTo, false, count)
}

// andNot is and's difference: the members of x not in the streamed
// bitmap (TR.BITOP DIFF), with roaring.AndNot's container kinds (x's
// containers without a counterpart kept as they are).
func (s *trAndScratch) andNot(x trSerial, writeTo func(io.Writer) (int64, error), count bool) (uint64, bool) {
	return s.combine(x, writeTo, true, count)
}

func (s *trAndScratch) combine(x trSerial, writeTo func(io.Writer) (int64, error), diff, count bool) (uint64, bool) {
	s.heads, s.data = s.heads[:0], s.data[:0]
	w := &s.stream
	*w = trAndStream{s: s, x: x, diff: diff, count: count, hdr: w.hdr[:0], pend: w.pend[:0], need: 8, yn: -1}
	if _, err := writeTo(w); err != nil || w.yn < 0 || w.j != w.yn {
		return 0, false
	}
	for ; diff && w.i < x.n; w.i++ {
		w.keep(w.i)
	}
	if !count {
		s.out = trWriteSerial(s.out[:0], s.heads, s.data)
	}
	return w.total, true
}

// trAndStream is the io.Writer the second source of an AND is serialized
// into (see and).
type trAndStream struct {
	s     *trAndScratch
	x     trSerial
	diff  bool // x minus the source, else x and the source
	count bool
	hdr   []byte // the source's header: cookie, count, (key, cardinality - 1) pairs, offsets
	need  int    // bytes of header wanted: 8, then all of it
	yn    int    // the source's container count, -1 until its header is read
	j     int    // the next container of the source
	i     int    // the first container of x not yet passed
	pend  []byte // a container's bytes split across Writes
	total uint64
}

var errTRStream = errors.New("commands: unexpected roaring serialization")

func (w *trAndStream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if w.yn < 0 {
			take := min(w.need-len(w.hdr), len(p))
			w.hdr, p = append(w.hdr, p[:take]...), p[take:]
			if len(w.hdr) < w.need {
				continue
			}
			if w.need == 8 {
				if binary.LittleEndian.Uint32(w.hdr) != trSerialNoRunCookie {
					return 0, errTRStream
				}
				w.need = 8 + 8*int(binary.LittleEndian.Uint32(w.hdr[4:]))
				if w.need > 8 {
					continue
				}
			}
			w.yn = (w.need - 8) / 8
			continue
		}
		if w.j >= w.yn {
			return 0, errTRStream
		}
		card := int(binary.LittleEndian.Uint16(w.hdr[10+4*w.j:])) + 1
		size := 8192
		if card <= trArrayMax {
			size = 2 * card
		}
		if len(w.pend) == 0 && len(p) >= size {
			w.container(p[:size], card)
			p = p[size:]
			continue
		}
		take := min(size-len(w.pend), len(p))
		w.pend, p = append(w.pend, p[:take]...), p[take:]
		if len(w.pend) == size {
			w.container(w.pend, card)
			w.pend = w.pend[:0]
		}
	}
	return n, nil
}

// container intersects the source's next container (its bytes, which are
// read only, and not kept) with x's of the same key, if any.
func (w *trAndStream) container(data []byte, card int) {
	key := binary.LittleEndian.Uint16(w.hdr[8+4*w.j:])
	w.j++
	x := w.x
	for ; w.i < x.n && x.key(w.i) < key; w.i++ {
		if w.diff {
			w.keep(w.i)
		}
	}
	if w.i == x.n || x.key(w.i) != key {
		return
	}
	s := w.s
	var n int
	if w.diff {
		n = s.andNotContainer(x.data(w.i), x.card(w.i), data, card, w.count)
	} else {
		n = s.andContainer(x.data(w.i), x.card(w.i), data, card, w.count)
	}
	w.i++
	if n == 0 {
		return
	}
	w.total += uint64(n)
	if !w.count {
		s.heads = append(s.heads, uint32(key)|uint32(n-1)<<16)
	}
}

// trWriteSerial appends to out the serialization of the containers whose
// headers are heads and whose bytes are data, in order.
func trWriteSerial(out []byte, heads []uint32, data []byte) []byte {
	n := len(heads)
	out = slices.Grow(out, 8+8*n+len(data))
	out = binary.LittleEndian.AppendUint32(out, trSerialNoRunCookie)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	for _, h := range heads {
		out = binary.LittleEndian.AppendUint32(out, h)
	}
	off := 8 + 8*n
	for _, h := range heads {
		out = binary.LittleEndian.AppendUint32(out, uint32(off))
		if c := int(h>>16) + 1; c <= trArrayMax {
			off += 2 * c
		} else {
			off += 8192
		}
	}
	return append(out, data...)
}

// keep adds x's container i to the result as it is (a DIFF's container
// the source has no counterpart for).
func (w *trAndStream) keep(i int) {
	n := w.x.card(i)
	w.total += uint64(n)
	if !w.count {
		s := w.s
		s.data = append(s.data, w.x.data(i)...)
		s.heads = append(s.heads, uint32(w.x.key(i))|uint32(n-1)<<16)
	}
}

// andContainer intersects two containers of the same key (bytes a of
// cardinality na, b of nb), appends the result's bytes to s.data unless
// count is set, and returns its cardinality.
func (s *trAndScratch) andContainer(a []byte, na int, b []byte, nb int, count bool) int {
	aBits, bBits := na > trArrayMax, nb > trArrayMax
	switch {
	case aBits && bBits:
		return s.andBitsets((*[8192]byte)(a), (*[8192]byte)(b), count)
	case aBits:
		return s.andArrayBitset(b, (*[8192]byte)(a), count)
	case bBits:
		return s.andArrayBitset(a, (*[8192]byte)(b), count)
	}
	if na > nb {
		a, b, na, nb = b, a, nb, na
	}
	if na*32 < nb {
		return s.andGallop(a, b, count)
	}
	if na >= trStampMin && na <= trStampMax {
		return s.andArraysStamp(a, b, count)
	}
	// Mark the smaller array, probe with the larger (its order is the
	// result's), then clear the marks it set. Members are read four at a
	// time (one 8-byte load).
	m := &s.mark
	trMarkArray(m, a)
	n := 0
	if count {
		n = trProbeCount(m, b)
	} else {
		d := trProbeArray(m, b, slices.Grow(s.data, len(a)))
		n = (len(d) - len(s.data)) / 2
		s.data = d
	}
	trUnmarkArray(m, a)
	return n
}

// trStampMin and trStampMax bound the arrays the stamp table marks
// (andArraysStamp, andNotArraysStamp); others are marked in s.mark. The
// table (64 KiB) does not stay in a 32 KiB L1 cache: each stamp and
// probe of a member misses it, which the instructions saved pay for at 65
// members a container but not at 6.5 (the bench's 0.01% keys: 1,900 more
// L1 misses and 22,000 fewer instructions an AND, cachegrind; the
// serialized AND of BenchmarkTRAnd took 29-32 µs instead of 18-20, fastest
// of 8 runs). The 8 KiB bitset stays in L1.
const (
	trStampMin = 16
	trStampMax = 1024
)

// stampArray gives the members of array a the next stamp in the stamp
// table and returns it: a member is in a while its entry holds that stamp,
// until the next call. A store a member to mark, a load and compare to
// probe, and nothing to clear: the next container takes the next stamp;
// the table is zeroed once every 255 calls, when the stamp wraps. Marking
// a 2^16-bit set instead costs a read-modify-write a member, a probe, and
// a store a member to clear: 2,083 instructions per pair of 65-member
// containers (the bench's 0.1% density) against 1,240 with stamps
// (cachegrind, BenchmarkTRAndArrays); under TR.BITOP AND at 0.1%
// clearing the marks was 14% of the server's CPU.
func (s *trAndScratch) stampArray(a []byte) uint8 {
	if s.stamps == nil {
		s.stamps = new([1 << 16]uint8)
	}
	if s.stamp == 255 {
		clear(s.stamps[:])
		s.stamp = 0
	}
	s.stamp++
	st, g := s.stamps, s.stamp
	for p := a; len(p) >= 8; p = p[8:] {
		x := binary.LittleEndian.Uint64(p)
		st[uint16(x)] = g
		st[uint16(x>>16)] = g
		st[uint16(x>>32)] = g
		st[uint16(x>>48)] = g
	}
	for k := len(a) &^ 7; k+1 < len(a); k += 2 {
		st[binary.LittleEndian.Uint16(a[k:])] = g
	}
	return g
}

// andArraysStamp intersects arrays a (at most trStampMax members) and b:
// a stamped, b probing (its order is the result's).
func (s *trAndScratch) andArraysStamp(a, b []byte, count bool) int {
	g := s.stampArray(a)
	st := s.stamps
	n := 0
	if count {
		for p := b; len(p) >= 8; p = p[8:] {
			x := binary.LittleEndian.Uint64(p)
			n += trB2i(st[uint16(x)] == g) + trB2i(st[uint16(x>>16)] == g) + trB2i(st[uint16(x>>32)] == g) + trB2i(st[uint16(x>>48)] == g)
		}
		for k := len(b) &^ 7; k+1 < len(b); k += 2 {
			n += trB2i(st[binary.LittleEndian.Uint16(b[k:])] == g)
		}
		return n
	}
	d := slices.Grow(s.data, len(a))
	for p := b; len(p) >= 8; p = p[8:] {
		x := binary.LittleEndian.Uint64(p)
		v0, v1, v2, v3 := uint16(x), uint16(x>>16), uint16(x>>32), uint16(x>>48)
		// One test for the four (most probes miss), then each.
		if st[v0] != g && st[v1] != g && st[v2] != g && st[v3] != g {
			continue
		}
		for _, v := range [4]uint16{v0, v1, v2, v3} {
			if st[v] == g {
				d = binary.LittleEndian.AppendUint16(d, v)
			}
		}
	}
	for k := len(b) &^ 7; k+1 < len(b); k += 2 {
		if v := binary.LittleEndian.Uint16(b[k:]); st[v] == g {
			d = binary.LittleEndian.AppendUint16(d, v)
		}
	}
	n = (len(d) - len(s.data)) / 2
	s.data = d
	return n
}

// andNotArraysStamp keeps the members of array a not in array b (at most
// trStampMax members): b stamped, a probing.
func (s *trAndScratch) andNotArraysStamp(a, b []byte, count bool) int {
	g := s.stampArray(b)
	st := s.stamps
	if count {
		n := len(a) / 2
		for k := 0; k+1 < len(a); k += 2 {
			n -= trB2i(st[binary.LittleEndian.Uint16(a[k:])] == g)
		}
		return n
	}
	d := slices.Grow(s.data, len(a))
	for k := 0; k+1 < len(a); k += 2 {
		if v := binary.LittleEndian.Uint16(a[k:]); st[v] != g {
			d = binary.LittleEndian.AppendUint16(d, v)
		}
	}
	n := (len(d) - len(s.data)) / 2
	s.data = d
	return n
}

// trB2i is 1 for true, 0 for false.
func trB2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// trMarkArray sets the bit of every member of array a in m.
func trMarkArray(m *[1024]uint64, a []byte) {
	for ; len(a) >= 8; a = a[8:] {
		x := binary.LittleEndian.Uint64(a)
		v0, v1, v2, v3 := uint16(x), uint16(x>>16), uint16(x>>32), uint16(x>>48)
		m[v0>>6] |= 1 << (v0 & 63)
		m[v1>>6] |= 1 << (v1 & 63)
		m[v2>>6] |= 1 << (v2 & 63)
		m[v3>>6] |= 1 << (v3 & 63)
	}
	for ; len(a) >= 2; a = a[2:] {
		v := binary.LittleEndian.Uint16(a)
		m[v>>6] |= 1 << (v & 63)
	}
}

// trUnmarkArray clears the words trMarkArray set for a.
func trUnmarkArray(m *[1024]uint64, a []byte) {
	for ; len(a) >= 8; a = a[8:] {
		x := binary.LittleEndian.Uint64(a)
		m[uint16(x)>>6] = 0
		m[uint16(x>>16)>>6] = 0
		m[uint16(x>>32)>>6] = 0
		m[uint16(x>>48)>>6] = 0
	}
	for ; len(a) >= 2; a = a[2:] {
		m[binary.LittleEndian.Uint16(a)>>6] = 0
	}
}

// trProbeCount counts the members of array b marked in m.
func trProbeCount(m *[1024]uint64, b []byte) int {
	n := uint64(0)
	for ; len(b) >= 8; b = b[8:] {
		x := binary.LittleEndian.Uint64(b)
		v0, v1, v2, v3 := uint16(x), uint16(x>>16), uint16(x>>32), uint16(x>>48)
		n += m[v0>>6]>>(v0&63)&1 + m[v1>>6]>>(v1&63)&1 + m[v2>>6]>>(v2&63)&1 + m[v3>>6]>>(v3&63)&1
	}
	for ; len(b) >= 2; b = b[2:] {
		v := binary.LittleEndian.Uint16(b)
		n += m[v>>6] >> (v & 63) & 1
	}
	return int(n)
}

// trProbeArray appends to d the members of array b marked in m.
func trProbeArray(m *[1024]uint64, b []byte, d []byte) []byte {
	for ; len(b) >= 8; b = b[8:] {
		x := binary.LittleEndian.Uint64(b)
		v0, v1, v2, v3 := uint16(x), uint16(x>>16), uint16(x>>32), uint16(x>>48)
		// One test for the four (most probes miss), then each.
		if m[v0>>6]>>(v0&63)&1|m[v1>>6]>>(v1&63)&1|m[v2>>6]>>(v2&63)&1|m[v3>>6]>>(v3&63)&1 == 0 {
			continue
		}
		for _, v := range [4]uint16{v0, v1, v2, v3} {
			if m[v>>6]>>(v&63)&1 != 0 {
				d = binary.LittleEndian.AppendUint16(d, v)
			}
		}
	}
	for ; len(b) >= 2; b = b[2:] {
		v := binary.LittleEndian.Uint16(b)
		if m[v>>6]>>(v&63)&1 != 0 {
			d = binary.LittleEndian.AppendUint16(d, v)
		}
	}
	return d
}

// andGallop intersects a small array a with a much larger array b: a
// binary search in b for each member of a, from where the last one ended.
func (s *trAndScratch) andGallop(a, b []byte, count bool) int {
	n, lo := 0, 0
	nb := len(b) / 2
	for k := 0; k+1 < len(a); k += 2 {
		v := uint16(a[k]) | uint16(a[k+1])<<8
		hi := nb
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if binary.LittleEndian.Uint16(b[2*mid:]) < v {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo == nb {
			break
		}
		if binary.LittleEndian.Uint16(b[2*lo:]) == v {
			n++
			if !count {
				s.data = append(s.data, byte(v), byte(v>>8))
			}
			lo++
		}
	}
	return n
}

// andArrayBitset keeps the members of array a set in bitset b.
func (s *trAndScratch) andArrayBitset(a []byte, b *[8192]byte, count bool) int {
	n := 0
	if count {
		for k := 0; k+1 < len(a); k += 2 {
			v := uint16(a[k]) | uint16(a[k+1])<<8
			n += int(b[v>>3] >> (v & 7) & 1)
		}
		return n
	}
	d := slices.Grow(s.data, len(a))
	for k := 0; k+1 < len(a); k += 2 {
		v := uint16(a[k]) | uint16(a[k+1])<<8
		if b[v>>3]>>(v&7)&1 != 0 {
			d = append(d, byte(v), byte(v>>8))
		}
	}
	n = (len(d) - len(s.data)) / 2
	s.data = d
	return n
}

// andBitsets intersects two bitsets: a bitset result above 4,096 members,
// else the array of its members (as roaring's andBitmap).
func (s *trAndScratch) andBitsets(a, b *[8192]byte, count bool) int {
	w := &s.words
	n := 0
	for k := range w {
		x := binary.LittleEndian.Uint64(a[8*k:]) & binary.LittleEndian.Uint64(b[8*k:])
		w[k] = x
		n += bits.OnesCount64(x)
	}
	if !count {
		s.appendWords(n)
	}
	return n
}

// appendWords appends s.words, of n members, as a container: a bitset
// above 4,096 members, else the array of its members (as roaring's
// andBitmap and andNotBitmap); nothing for none.
func (s *trAndScratch) appendWords(n int) {
	w := &s.words
	if n == 0 {
		return
	}
	if n > trArrayMax {
		d := slices.Grow(s.data, 8192)
		for _, x := range w {
			d = binary.LittleEndian.AppendUint64(d, x)
		}
		s.data = d
		return
	}
	d := slices.Grow(s.data, 2*n)
	for k, x := range w {
		for x != 0 {
			v := uint16(k<<6 | bits.TrailingZeros64(x))
			d = append(d, byte(v), byte(v>>8))
			x &= x - 1
		}
	}
	s.data = d
}

// andNotContainer subtracts container b (nb members) from container a of
// the same key (na members), appends the result's bytes to s.data unless
// count is set, and returns its cardinality.
func (s *trAndScratch) andNotContainer(a []byte, na int, b []byte, nb int, count bool) int {
	aBits, bBits := na > trArrayMax, nb > trArrayMax
	switch {
	case aBits:
		w := &s.words
		n := 0
		if bBits {
			for k := range w {
				x := binary.LittleEndian.Uint64(a[8*k:]) &^ binary.LittleEndian.Uint64(b[8*k:])
				w[k] = x
				n += bits.OnesCount64(x)
			}
		} else {
			for k := range w {
				w[k] = binary.LittleEndian.Uint64(a[8*k:])
			}
			n = na
			for ; len(b) >= 2; b = b[2:] {
				v := binary.LittleEndian.Uint16(b)
				n -= int(w[v>>6] >> (v & 63) & 1)
				w[v>>6] &^= 1 << (v & 63)
			}
		}
		if !count {
			s.appendWords(n)
		}
		return n
	case bBits:
		bs := (*[8192]byte)(b)
		if count {
			n := 0
			for ; len(a) >= 2; a = a[2:] {
				v := binary.LittleEndian.Uint16(a)
				n += int(^bs[v>>3] >> (v & 7) & 1)
			}
			return n
		}
		d := slices.Grow(s.data, len(a))
		for ; len(a) >= 2; a = a[2:] {
			v := binary.LittleEndian.Uint16(a)
			if bs[v>>3]>>(v&7)&1 == 0 {
				d = binary.LittleEndian.AppendUint16(d, v)
			}
		}
		n := (len(d) - len(s.data)) / 2
		s.data = d
		return n
	}
	if nb >= trStampMin && nb <= trStampMax {
		return s.andNotArraysStamp(a, b, count)
	}
	// Mark b, keep the members of a it does not mark, clear the marks.
	m := &s.mark
	trMarkArray(m, b)
	var n int
	if count {
		n = na - trProbeCount(m, a)
	} else {
		d := trProbeArrayNot(m, a, slices.Grow(s.data, len(a)))
		n = (len(d) - len(s.data)) / 2
		s.data = d
	}
	trUnmarkArray(m, b)
	return n
}

// trProbeArrayNot appends to d the members of array a not marked in m.
func trProbeArrayNot(m *[1024]uint64, a []byte, d []byte) []byte {
	for ; len(a) >= 8; a = a[8:] {
		x := binary.LittleEndian.Uint64(a)
		for _, v := range [4]uint16{uint16(x), uint16(x >> 16), uint16(x >> 32), uint16(x >> 48)} {
			if m[v>>6]>>(v&63)&1 == 0 {
				d = binary.LittleEndian.AppendUint16(d, v)
			}
		}
	}
	for ; len(a) >= 2; a = a[2:] {
		v := binary.LittleEndian.Uint16(a)
		if m[v>>6]>>(v&63)&1 == 0 {
			d = binary.LittleEndian.AppendUint16(d, v)
		}
	}
	return d
}

// serialize writes bm into the source buffer and parses it: false for a
// bitmap with run containers (the serialization's other form).
func (s *trAndScratch) serialize(bm *roaring.Bitmap) (trSerial, bool) {
	buf := &s.src
	buf.Reset()
	if _, err := bm.WriteTo(buf); err != nil {
		return trSerial{}, false
	}
	return trParseSerial(buf.Bytes())
}

// andAll intersects bms (at least two, none nil): the cardinality and,
// unless count is set, the result's serialization, valid until s is
// reused. An empty result is an empty bitmap's serialization.
func (s *trAndScratch) andAll(bms []*roaring.Bitmap, count bool) (p []byte, n uint64, ok bool) {
	x, ok := s.serialize(bms[0])
	if !ok {
		return nil, 0, false
	}
	for k, bm := range bms[1:] {
		last := k == len(bms)-2
		if n, ok = s.and(x, bm.WriteTo, count && last); !ok {
			return nil, 0, false
		}
		if last {
			break
		}
		// The result is the next left side.
		s.src.Reset()
		s.src.Write(s.out)
		x, _ = trParseSerial(s.src.Bytes())
	}
	if count {
		return nil, n, true
	}
	return s.out, n, true
}

// diff subtracts b from a (neither nil): the cardinality and, unless
// count is set, the result's serialization, valid until s is reused.
func (s *trAndScratch) diff(a, b *roaring.Bitmap, count bool) (p []byte, n uint64, ok bool) {
	x, ok := s.serialize(a)
	if !ok {
		return nil, 0, false
	}
	if n, ok = s.andNot(x, b.WriteTo, count); !ok || count {
		return nil, n, ok
	}
	return s.out, n, true
}

// trAndMaxSource bounds the serialized size of a source the serialized
// AND copies (a bitset-heavy bitmap costs as much either way: roaring.And
// takes it without the copy); buffers past it are not kept for reuse.
const trAndMaxSource = 4 << 20

// trAndMinPerContainer is the fewest members per container, on average
// over the sources, for which the serialized AND pays: each container
// costs it a Write, a header lookup and its marks (~0.1 µs), roaring's
// merge ~3 ns a member (mostly mispredicted branches) and an allocation.
// TR.BITOPCARD AND over two keys of 6.5 members a container (1,000 bits
// over 10,000,000) cost 18.5 µs of server CPU per request serialized and
// 8.4 µs with AndCardinality; at 65 a container 37 against 52.
const trAndMinPerContainer = 16

// trAndFast reports whether the serialized AND takes bms (nil ones are
// missing keys): none has run containers or serializes to more than
// trAndMaxSource bytes, and their containers hold trAndMinPerContainer
// members on average.
func trAndFast(bms []*roaring.Bitmap) bool {
	var members, containers uint64
	for _, bm := range bms {
		if bm == nil {
			continue
		}
		// Three walks over the containers, each an interface call a
		// container: Stats, one walk, costs more (3% of the server's CPU
		// under TR.BITOP AND at 0.1%).
		if bm.HasRunCompression() {
			return false
		}
		size := bm.GetSerializedSizeInBytes()
		if size > trAndMaxSource {
			return false
		}
		card := bm.GetCardinality()
		members += card
		// Without runs the size is 8 + 8 a container + the containers'
		// bytes, 2 a member in an array and fewer in a bitset: so this is
		// the container count for arrays only, less with bitsets (which
		// only makes a dense bitmap look denser).
		if est := int64(size) - 8 - 2*int64(card); est > 0 {
			containers += uint64(est) / 8
		}
	}
	return members >= trAndMinPerContainer*containers
}

// trSerialSource reports whether the serialized AND may copy bm as its
// first source: its serialization is at most trAndMaxSource bytes. A bound
// from bm's span (a bitset in every 2^16 window from its minimum to its
// maximum) answers for most bitmaps without a walk over the containers;
// past it, the serialized size itself.
func trSerialSource(bm *roaring.Bitmap) bool {
	if bm.IsEmpty() {
		return true
	}
	windows := uint64(bm.Maximum()>>16) - uint64(bm.Minimum()>>16) + 1
	if 8+windows*(8+8192) <= trAndMaxSource {
		return true
	}
	return bm.GetSerializedSizeInBytes() <= trAndMaxSource
}

func trAndScratchGet() *trAndScratch { return trAndScratchPool.Get().(*trAndScratch) }

func trAndScratchPut(s *trAndScratch) {
	if s.src.Cap() > trAndMaxSource || cap(s.out) > trAndMaxSource {
		return
	}
	trAndScratchPool.Put(s)
}

// cmdTRBitOpSerial is TR.BITOP dest AND keys... (at least two keys) or
// dest DIFF a b by the serialized AND, the result logged as the merge
// piece it builds; it replies the result's cardinality, or OK with ok set
// (TR.DIFF). False, having written nothing, when the first source is too
// large to copy (trSerialSource) or a source has run containers (its
// serialization has another form).
//
// It takes sources of any density, unlike the count (trAndCount): below
// trAndMinPerContainer members a container the library's merge is cheaper
// than the serialized one, but a stored result costs the library path
// more: trAndFast's walks over every container of every source (2.7 µs
// for the two 1,000-member keys of the bench's 0.01% row), a result
// bitmap of allocated containers, and serializing it for the log. The
// serialized AND of those keys took 18.3 µs a call where roaring.And
// alone took 21.9 (BenchmarkTRAnd, fastest of 10 runs on a busy
// machine).
func cmdTRBitOpSerial(c *Client, dest []byte, op string, keys [][]byte, ok bool) bool {
	bms, err := c.KS.Roarings(c.DB, keys)
	if err != nil {
		c.WriteErr(err)
		return true
	}
	if bms[0] != nil && !trSerialSource(bms[0]) {
		return false
	}
	s := trAndScratchGet()
	defer trAndScratchPut(s)
	var p []byte
	var n uint64
	done := true
	switch {
	case op == "diff" && bms[0] != nil: // a missing key is empty
		b := bms[1]
		if b == nil {
			b = roaring.New()
		}
		p, n, done = s.diff(bms[0], b, false)
	case op == "and" && !slices.Contains(bms, nil):
		p, n, done = s.andAll(bms, false)
	}
	if !done { // a serialization of another form: nothing written yet
		return false
	}
	b := c.KS.NewBatch()
	if c.KS.Exists(c.DB, dest) {
		b.Del(c.DB, dest)
	}
	if n > 0 {
		b.TRMergeSerialized(c.DB, dest, p)
	}
	if commitReply(c, b, len(c.Out)) {
		if ok {
			c.WriteOK()
		} else {
			c.WriteInt(int64(n))
		}
	}
	return true
}

// trAndCount is the cardinality of the AND of bms (at least two, none
// nil) by the serialized AND; false when trAndFast refuses them.
func trAndCount(bms []*roaring.Bitmap) (uint64, bool) {
	if !trAndFast(bms) {
		return 0, false
	}
	s := trAndScratchGet()
	defer trAndScratchPut(s)
	_, n, ok := s.andAll(bms, true)
	return n, ok
}

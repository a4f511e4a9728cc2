package rdb

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Listpack layout (Redis's listpack.c), all integers little-endian:
//
//	total-bytes u32 | num-elements u16 (65535: count them) | entry* | 0xFF
//	entry = encoding+data | backlen (1-5 bytes, the entry's size without it)
//
// Encodings: 0xxxxxxx 7-bit uint; 10xxxxxx 6-bit-length string;
// 110xxxxx +1 byte 13-bit int; 1110xxxx +1 byte 12-bit-length string;
// 0xF0 +u32 length string; 0xF1/0xF2/0xF3/0xF4 16/24/32/64-bit int.
const (
	lpHeaderSize = 6
	lpEOF        = 0xff
	lpUnknownNum = 65535
)

// lpDecode returns the elements of a listpack; integers come back as their
// decimal text.
func lpDecode(p []byte) ([][]byte, error) {
	if len(p) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(p)) != len(p) {
		return nil, errf("listpack header")
	}
	if p[len(p)-1] != lpEOF {
		return nil, errf("listpack has no end mark")
	}
	num := int(binary.LittleEndian.Uint16(p[4:]))
	var out [][]byte
	i := lpHeaderSize
	for p[i] != lpEOF {
		start := i
		b := p[i]
		var ele []byte
		var n int // bytes of encoding+data
		var ival int64
		isInt := true
		switch {
		case b&0x80 == 0:
			n, ival = 1, int64(b)
		case b&0xc0 == 0x80:
			n, isInt = 1+int(b&0x3f), false
		case b&0xe0 == 0xc0:
			if i+2 > len(p) {
				return nil, errf("listpack truncated")
			}
			u := int64(b&0x1f)<<8 | int64(p[i+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			n, ival = 2, u
		case b&0xf0 == 0xe0:
			if i+2 > len(p) {
				return nil, errf("listpack truncated")
			}
			n, isInt = 2+(int(b&0x0f)<<8|int(p[i+1])), false
		case b == 0xf0:
			if i+5 > len(p) {
				return nil, errf("listpack truncated")
			}
			l := binary.LittleEndian.Uint32(p[i+1:])
			if uint64(l) > uint64(len(p)) {
				return nil, errf("listpack string too long")
			}
			n, isInt = 5+int(l), false
		case b >= 0xf1 && b <= 0xf4:
			w := [...]int{2, 3, 4, 8}[b-0xf1]
			if i+1+w > len(p) {
				return nil, errf("listpack truncated")
			}
			var u uint64
			for k := w - 1; k >= 0; k-- {
				u = u<<8 | uint64(p[i+1+k])
			}
			shift := 64 - 8*uint(w)
			n, ival = 1+w, int64(u<<shift)>>shift
		default:
			return nil, errf("listpack encoding %#x", b)
		}
		if i+n > len(p)-1 {
			return nil, errf("listpack entry past the end")
		}
		if isInt {
			ele = strconv.AppendInt(nil, ival, 10)
		} else {
			hdr := map[bool]int{true: 1, false: 2}[b&0xc0 == 0x80]
			if b == 0xf0 {
				hdr = 5
			}
			ele = p[i+hdr : i+n]
		}
		i += n
		bl := backlenSize(n)
		if i+bl > len(p)-1 || decodeBacklen(p[i:i+bl]) != n {
			return nil, errf("listpack backlen at %d", start)
		}
		i += bl
		out = append(out, ele)
	}
	if i != len(p)-1 {
		return nil, errf("listpack bytes after the end mark")
	}
	if num != lpUnknownNum && num != len(out) {
		return nil, errf("listpack says %d elements, has %d", num, len(out))
	}
	return out, nil
}

func backlenSize(n int) int {
	switch {
	case n <= 127:
		return 1
	case n < 16383:
		return 2
	case n < 2097151:
		return 3
	case n < 268435455:
		return 4
	}
	return 5
}

// decodeBacklen reads a backlen stored left to right (most significant 7
// bits first, every byte but the first flagged with 0x80).
func decodeBacklen(b []byte) int {
	v := 0
	for _, c := range b {
		v = v<<7 | int(c&0x7f)
	}
	return v
}

func appendBacklen(dst []byte, n int) []byte {
	k := backlenSize(n)
	for j := k - 1; j >= 0; j-- {
		c := byte(n >> (7 * uint(j)) & 0x7f)
		if j != k-1 {
			c |= 0x80
		}
		dst = append(dst, c)
	}
	return dst
}

// lpBuilder builds a listpack element by element, encoding each as Redis's
// lpAppend does: a string that is the canonical text of an int64 is stored
// as an integer.
type lpBuilder struct {
	buf []byte
	n   int
}

func newLP() *lpBuilder { return &lpBuilder{buf: make([]byte, lpHeaderSize, 64)} }

// size is the listpack's size so far, end mark included.
func (b *lpBuilder) size() int { return len(b.buf) + 1 }

func (b *lpBuilder) add(s []byte) {
	start := len(b.buf)
	if v, ok := strictInt(s); ok {
		b.buf = appendLPInt(b.buf, v)
	} else {
		switch l := len(s); {
		case l < 64:
			b.buf = append(b.buf, 0x80|byte(l))
		case l < 4096:
			b.buf = append(b.buf, 0xe0|byte(l>>8), byte(l))
		default:
			b.buf = binary.LittleEndian.AppendUint32(append(b.buf, 0xf0), uint32(l))
		}
		b.buf = append(b.buf, s...)
	}
	b.buf = appendBacklen(b.buf, len(b.buf)-start)
	b.n++
}

func appendLPInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 127:
		return append(dst, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint16(v) & 0x1fff
		return append(dst, 0xc0|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(dst, 0xf1), uint16(v))
	case v >= -1<<23 && v < 1<<23:
		u := uint32(v)
		return append(dst, 0xf2, byte(u), byte(u>>8), byte(u>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(dst, 0xf3), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(dst, 0xf4), uint64(v))
}

// bytes finishes the listpack: header filled in, end mark appended.
func (b *lpBuilder) bytes() []byte {
	out := append(b.buf, lpEOF)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	num := b.n
	if num >= lpUnknownNum {
		num = lpUnknownNum
	}
	binary.LittleEndian.PutUint16(out[4:], uint16(num))
	return out
}

// lpEncode is the listpack of elems.
func lpEncode(elems [][]byte) []byte {
	b := newLP()
	for _, e := range elems {
		b.add(e)
	}
	return b.bytes()
}

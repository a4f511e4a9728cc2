package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrBadFormat is wrapped by every error about malformed bytes: a length
// past the end, an unknown encoding, an inconsistent container.
var ErrBadFormat = errors.New("rdb: bad data format")

// ErrUnsupported is wrapped when the bytes are well formed but hold a type
// this package does not decode (modules).
var ErrUnsupported = errors.New("rdb: unsupported type")

func errf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadFormat, fmt.Sprintf(format, args...))
}

// Length-encoding prefixes (the top two bits of the first byte). Durable.
const (
	len6     = 0    // 00xxxxxx
	len14    = 1    // 01xxxxxx xxxxxxxx
	len32    = 0x80 // then 4 bytes big-endian
	len64    = 0x81 // then 8 bytes big-endian
	encValue = 3    // 11xxxxxx: a special string encoding follows
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// decoder reads RDB encodings from p starting at i.
type decoder struct {
	p []byte
	i int
}

func (d *decoder) need(n int) error {
	if n < 0 || len(d.p)-d.i < n {
		return errf("%d bytes needed at offset %d, %d left", n, d.i, len(d.p)-d.i)
	}
	return nil
}

func (d *decoder) byte() (byte, error) {
	if err := d.need(1); err != nil {
		return 0, err
	}
	d.i++
	return d.p[d.i-1], nil
}

func (d *decoder) bytes(n int) ([]byte, error) {
	if err := d.need(n); err != nil {
		return nil, err
	}
	d.i += n
	return d.p[d.i-n : d.i], nil
}

// length reads a length; encoded is true (and n the encoding number) when
// the first byte is 11xxxxxx, a special string encoding.
func (d *decoder) length() (n uint64, encoded bool, err error) {
	b, err := d.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case len6:
		return uint64(b & 0x3f), false, nil
	case len14:
		b2, err := d.byte()
		return uint64(b&0x3f)<<8 | uint64(b2), false, err
	case encValue:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case len32:
		p, err := d.bytes(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case len64:
		p, err := d.bytes(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, errf("unknown length encoding %#x", b)
}

// count reads a plain length that must be a count of items each taking at
// least one byte of what is left.
func (d *decoder) count() (int, error) {
	n, enc, err := d.length()
	if err != nil {
		return 0, err
	}
	if enc || n > uint64(len(d.p)-d.i) {
		return 0, errf("bad count %d", n)
	}
	return int(n), nil
}

// string reads a string in any of its encodings; integer-encoded strings come
// back as their decimal text. The result may alias d.p.
func (d *decoder) string() ([]byte, error) {
	n, enc, err := d.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > uint64(len(d.p)-d.i) {
			return nil, errf("string of %d bytes, %d left", n, len(d.p)-d.i)
		}
		return d.bytes(int(n))
	}
	switch n {
	case encInt8:
		b, err := d.bytes(1)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int8(b[0])), 10), nil
	case encInt16:
		b, err := d.bytes(2)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10), nil
	case encInt32:
		b, err := d.bytes(4)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10), nil
	case encLZF:
		clen, e1, err := d.length()
		if err != nil {
			return nil, err
		}
		ulen, e2, err := d.length()
		if err != nil {
			return nil, err
		}
		// An LZF back-reference of 3 bytes expands to at most 264, so a
		// longer claimed length is corrupt (and must not be allocated).
		if e1 || e2 || clen > uint64(len(d.p)-d.i) || ulen == 0 || ulen > clen*lzfMaxRef/3+lzfMaxLit {
			return nil, errf("bad lzf lengths %d/%d", clen, ulen)
		}
		c, _ := d.bytes(int(clen))
		return lzfDecompress(c, int(ulen))
	}
	return nil, errf("unknown string encoding %d", n)
}

// asciiDouble reads a type-3 sorted set score: a length byte (253 NaN, 254
// +inf, 255 -inf) then that many bytes of decimal text.
func (d *decoder) asciiDouble() (float64, error) {
	n, err := d.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := d.bytes(int(n))
	if err != nil {
		return 0, err
	}
	return parseScore(b)
}

func (d *decoder) binaryDouble() (float64, error) {
	b, err := d.bytes(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// parseScore parses a score written as text (strtod's syntax, with inf
// and nan as Redis accepts them).
func parseScore(b []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, nil
		}
		return 0, errf("bad score %q", b)
	}
	return f, nil
}

// appendLength appends n in the shortest length encoding.
func appendLength(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, len32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, len64), n)
}

// appendString appends s as Redis's rdbSaveRawString does with
// rdbcompression on: an integer encoding when s (at most 11 bytes) is the
// canonical text of a 32-bit integer; else, for more than 20 bytes, LZF
// when that saves at least 4 bytes; else the length and the bytes.
func appendString(dst, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := strictInt(s); ok {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return append(dst, 0xc0|encInt8, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return binary.LittleEndian.AppendUint16(append(dst, 0xc0|encInt16), uint16(v))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return binary.LittleEndian.AppendUint32(append(dst, 0xc0|encInt32), uint32(v))
			}
		}
	}
	if len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			dst = append(dst, 0xc0|encLZF)
			dst = appendLength(appendLength(dst, uint64(len(c))), uint64(len(s)))
			return append(dst, c...)
		}
	}
	return append(appendLength(dst, uint64(len(s))), s...)
}

// strictInt parses s as Redis's string2ll does: an optional '-', no leading
// zeros, no '+', no spaces, within int64. "-0" is refused.
func strictInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	i, neg := 0, false
	if s[0] == '-' {
		neg, i = true, 1
		if len(s) == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var u uint64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// formatScore renders a score as Redis's d2string does when it stores one
// in a listpack: integers in range as integers, else %.17g.
func formatScore(f float64) []byte {
	switch {
	case math.IsNaN(f):
		return []byte("nan")
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	case f == 0:
		if math.Signbit(f) {
			return []byte("-0")
		}
		return []byte("0")
	}
	const half = float64(math.MaxInt64 / 2)
	if f >= -half && f <= half && f == math.Trunc(f) {
		return strconv.AppendInt(nil, int64(f), 10)
	}
	return strconv.AppendFloat(nil, f, 'g', 17, 64)
}

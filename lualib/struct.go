package lualib

import (
	"bytes"
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// struct: Roberto Ierusalimschy's struct library as Redis 7.0 ships it
// (deps/lua/src/lua_struct.c), with x86-64's C sizes. Format letters:
// > < (endianness), ![n] (maximum alignment, default 8), x (a pad byte),
// b B h H l L T i[n] I[n] (signed/unsigned integers of 1, 2, 8, 8 and n
// bytes, n default 4, at most 32), f d (float, double), c[n] (n chars;
// c0 packs the whole string and unpacks a length read just before), s
// (a zero-terminated string), ' ' (ignored). The format ends at its first
// NUL byte, as a C string does.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

type structHeader struct {
	little bool
	align  int
}

// OpenStruct returns a new struct library table.
func OpenStruct(L *lua.LState) *lua.LTable {
	return funcs(L, map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
}

// structFormat is a format string read as C reads it: up to its NUL.
type structFormat struct {
	s string
	i int
}

func newStructFormat(s string) *structFormat {
	if i := bytes.IndexByte([]byte(s), 0); i >= 0 {
		s = s[:i]
	}
	return &structFormat{s: s}
}

func (f *structFormat) more() bool { return f.i < len(f.s) }

func (f *structFormat) next() byte {
	c := f.s[f.i]
	f.i++
	return c
}

// num is getnum: the digits at the format's position, or def.
func (f *structFormat) num(L *lua.LState, def int) int {
	if !f.more() || !isDigit(f.s[f.i]) {
		return def
	}
	a := 0
	for f.more() && isDigit(f.s[f.i]) {
		d := int(f.s[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			raise(L, "integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

// optSize is optsize: the size of the item opt (0 for options that are
// not items).
func (f *structFormat) optSize(L *lua.LState, opt byte) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return f.num(L, 1)
	case 'i', 'I':
		sz := f.num(L, 4)
		if sz > structMaxIntSize {
			raise(L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

// toAlign is gettoalign: padding before an item of size at offset n.
func (h *structHeader) toAlign(n int, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

// control is controloptions: endianness, alignment, spaces; anything
// else is an invalid option.
func (h *structHeader) control(L *lua.LState, opt byte, f *structFormat, fname string) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := f.num(L, structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			raise(L, "alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		argError(L, 1, fname, "invalid format option '"+string(opt)+"'")
	}
}

func defaultHeader() structHeader { return structHeader{little: true, align: 1} }

func structPack(L *lua.LState) int {
	f := newStructFormat(checkString(L, 1, "pack"))
	h := defaultHeader()
	arg := 2
	L.Push(lua.LNil) // struct.c's mark after the arguments: a missing one is "got nil"
	var b []byte
	for f.more() {
		opt := f.next()
		size := f.optSize(L, opt)
		pad := h.toAlign(len(b), opt, size)
		b = append(b, make([]byte, pad)...)
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := checkNumber(L, arg, "pack")
			arg++
			var v uint64
			if n < 0 {
				v = uint64(cInt64(n))
			} else {
				v = cUint64(n)
			}
			b = appendStructInt(b, v, size, h.little)
		case 'x':
			b = append(b, 0)
		case 'f':
			v := math.Float32bits(float32(checkNumber(L, arg, "pack")))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint32(b, v)
			} else {
				b = binary.BigEndian.AppendUint32(b, v)
			}
		case 'd':
			v := math.Float64bits(checkNumber(L, arg, "pack"))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint64(b, v)
			} else {
				b = binary.BigEndian.AppendUint64(b, v)
			}
		case 'c', 's':
			s := checkString(L, arg, "pack")
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				argError(L, arg, "pack", "string too short") // arg is already the next one, as in struct.c
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			h.control(L, opt, f, "pack")
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// cUint64 converts a non-negative double to uint64 as x86-64's C cast
// does (2^64 and above, and NaN, give the value gcc's conversion yields:
// 2^63 for out of range).
func cUint64(f float64) uint64 {
	switch {
	case math.IsNaN(f) || f >= 1<<64:
		return 1 << 63
	case f >= 1<<63:
		return uint64(f-(1<<63)) | 1<<63
	}
	return uint64(f)
}

func appendStructInt(b []byte, v uint64, size int, little bool) []byte {
	start := len(b)
	b = append(b, make([]byte, size)...)
	buf := b[start:]
	for i := range size {
		j := i
		if !little {
			j = size - 1 - i
		}
		buf[j] = byte(v)
		v >>= 8
	}
	return b
}

// structInt is getinteger: size bytes as an integer; a signed one is
// sign-extended from its top bit (C's shift of a 64-bit word, so the
// count is taken modulo 64 for sizes over 8).
func structInt(data []byte, little, signed bool, size int) float64 {
	var l uint64
	for i := range size {
		j := i
		if little {
			j = size - 1 - i
		}
		l = l<<8 | uint64(data[j])
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := newStructFormat(checkString(L, 1, "unpack"))
	data := checkString(L, 2, "unpack")
	ld := len(data)
	start := 1
	if L.GetTop() >= 3 && L.Get(3) != lua.LNil {
		start = int(cInt64(checkNumber(L, 3, "unpack")))
	}
	if start <= 0 {
		argError(L, 3, "unpack", "offset must be 1 or greater")
	}
	pos := start - 1
	h := defaultHeader()
	var out []lua.LValue
	for f.more() {
		opt := f.next()
		size := f.optSize(L, opt)
		pos += h.toAlign(pos, opt, size)
		if pos+size > ld {
			argError(L, 2, "unpack", "data string too short")
		}
		if len(out)+2 > luaMaxCStack {
			raise(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a'
			out = append(out, lua.LNumber(structInt([]byte(data[pos:pos+size]), h.little, signed, size)))
		case 'x':
		case 'f':
			var v uint32
			if h.little {
				v = binary.LittleEndian.Uint32([]byte(data[pos:]))
			} else {
				v = binary.BigEndian.Uint32([]byte(data[pos:]))
			}
			out = append(out, lua.LNumber(math.Float32frombits(v)))
		case 'd':
			var v uint64
			if h.little {
				v = binary.LittleEndian.Uint64([]byte(data[pos:]))
			} else {
				v = binary.BigEndian.Uint64([]byte(data[pos:]))
			}
			out = append(out, lua.LNumber(math.Float64frombits(v)))
		case 'c':
			if size == 0 {
				var n lua.LNumber
				ok := false
				if len(out) > 0 {
					n, ok = out[len(out)-1].(lua.LNumber)
				}
				if !ok {
					raise(L, "format 'c0' needs a previous size")
				}
				size = int(cInt64(float64(n)))
				out = out[:len(out)-1]
				if size < 0 || pos+size > ld {
					argError(L, 2, "unpack", "data string too short")
				}
			}
			out = append(out, lua.LString(data[pos:pos+size]))
		case 's':
			e := bytes.IndexByte([]byte(data[pos:]), 0)
			if e < 0 {
				raise(L, "unfinished string in data")
			}
			size = e + 1
			out = append(out, lua.LString(data[pos:pos+e]))
		default:
			h.control(L, opt, f, "unpack")
		}
		pos += size
	}
	for _, v := range out {
		L.Push(v)
	}
	L.Push(lua.LNumber(pos + 1))
	return len(out) + 1
}

func structSize(L *lua.LState) int {
	f := newStructFormat(checkString(L, 1, "size"))
	h := defaultHeader()
	pos := 0
	for f.more() {
		opt := f.next()
		size := f.optSize(L, opt)
		pos += h.toAlign(pos, opt, size)
		switch {
		case opt == 's':
			argError(L, 1, "size", "option 's' has no fixed size")
		case opt == 'c' && size == 0:
			argError(L, 1, "size", "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			h.control(L, opt, f, "size")
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(c byte) bool { return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z') }

package lualib

import (
	"math"
	"math/bits"

	lua "github.com/yuin/gopher-lua"
)

// bit: LuaBitOp as Redis 7.0 ships it (deps/lua/src/lua_bit.c). Every
// argument is reduced to 32 bits the way LuaBitOp does on doubles (add
// 2^52+2^51, keep the low word of the result: rounding to nearest, then
// modulo 2^32), and every result is a signed 32-bit number.

// OpenBit returns a new bit library table.
func OpenBit(L *lua.LState) *lua.LTable {
	shift := func(name string, op func(b uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			b := bitArg(L, 1, name)
			n := uint(bitArg(L, 2, name) & 31)
			return bitReturn(L, op(b, n))
		}
	}
	fold := func(name string, op func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			b := bitArg(L, 1, name)
			for i := L.GetTop(); i > 1; i-- {
				b = op(b, bitArg(L, i, name))
			}
			return bitReturn(L, b)
		}
	}
	return funcs(L, map[string]lua.LGFunction{
		"tobit":  func(L *lua.LState) int { return bitReturn(L, bitArg(L, 1, "tobit")) },
		"bnot":   func(L *lua.LState) int { return bitReturn(L, ^bitArg(L, 1, "bnot")) },
		"bswap":  func(L *lua.LState) int { return bitReturn(L, bits.ReverseBytes32(bitArg(L, 1, "bswap"))) },
		"band":   fold("band", func(a, b uint32) uint32 { return a & b }),
		"bor":    fold("bor", func(a, b uint32) uint32 { return a | b }),
		"bxor":   fold("bxor", func(a, b uint32) uint32 { return a ^ b }),
		"lshift": shift("lshift", func(b uint32, n uint) uint32 { return b << n }),
		"rshift": shift("rshift", func(b uint32, n uint) uint32 { return b >> n }),
		"arshift": shift("arshift", func(b uint32, n uint) uint32 {
			return uint32(int32(b) >> n)
		}),
		"rol":   shift("rol", func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, int(n)) }),
		"ror":   shift("ror", func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, -int(n)) }),
		"tohex": bitToHex,
	})
}

// ToBit reduces f to 32 bits as LuaBitOp's barg does.
func ToBit(f float64) uint32 {
	return uint32(math.Float64bits(f + 6755399441055744.0))
}

// bitArg is barg: argument n as 32 bits; a value that is not a number
// (nor a string Lua reads as one) is a type error.
func bitArg(L *lua.LState, n int, fname string) uint32 {
	f, ok := toNumber(L, n)
	b := ToBit(f)
	if b == 0 && !ok {
		typeError(L, n, fname, "number")
	}
	return b
}

func bitReturn(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

// bitToHex is bit.tohex(x [, n]): the low n hex digits of x (default 8,
// at most 8; a negative n gives upper-case digits).
func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1, "tohex")
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(bitArg(L, 2, "tohex"))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	n = min(max(n, 0), 8) // -MinInt32 stays negative: no digits
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}

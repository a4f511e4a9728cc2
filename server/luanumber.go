package server

import (
	"bytes"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// luaToNumber is Lua 5.1's tonumber, the one redis-server's scripts see;
// gopher-lua's own accepts only integers unless the text holds a '.', so
// tonumber("1e3"), tonumber("inf") and tonumber("nan") were nil.
//
// In base 10 (the default) a string converts as lua_str2number does:
// strtod over the whole string, leading and trailing white space allowed
// (so "inf", "nan", "0x1A", "1e400" = inf are numbers); any other base
// (2 to 36) uses strtoul. The string ends at its first NUL byte, as the C
// string both functions see.
func luaToNumber(L *lua.LState) int {
	base := L.OptInt(2, 10)
	if base == 10 {
		switch v := L.CheckAny(1).(type) {
		case lua.LNumber:
			L.Push(v)
			return 1
		case lua.LString:
			if f, ok := luaStr2d([]byte(v)); ok {
				L.Push(lua.LNumber(f))
				return 1
			}
		}
		L.Push(lua.LNil)
		return 1
	}
	s := L.CheckString(1)
	if base < 2 || base > 36 {
		L.RaiseError("bad argument #2 to 'tonumber' (base out of range)") // Lua 5.1's text
	}
	if n, ok := luaStrtoul([]byte(s), base); ok {
		L.Push(lua.LNumber(float64(n)))
	} else {
		L.Push(lua.LNil)
	}
	return 1
}

// luaStr2d is Lua 5.1's luaO_str2d over glibc's strtod.
func luaStr2d(b []byte) (float64, bool) {
	b = bytes.TrimRightFunc(CString(b), func(r rune) bool { return r < 0x80 && IsSpace(byte(r)) })
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	b = b[i:]
	if len(b) == 0 {
		return 0, false // strtod converted nothing
	}
	if isNaNText(b) {
		return math.NaN(), true
	}
	return ParseStrtod(b)
}

// isNaNText: glibc strtod's "nan" or "nan(chars)", signed, any case.
func isNaNText(b []byte) bool {
	if b[0] == '+' || b[0] == '-' {
		b = b[1:]
	}
	if len(b) < 3 || !ArgIs(b[:3], "nan") {
		return false
	}
	b = b[3:]
	if len(b) == 0 {
		return true
	}
	if b[0] != '(' || b[len(b)-1] != ')' {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// luaStrtoul is C's strtoul in base 2..36 followed by Lua's check that
// only white space remains: an optional sign ('-' negates modulo 2^64), in
// base 16 an optional 0x, at least one digit; an overflow saturates.
func luaStrtoul(b []byte, base int) (uint64, bool) {
	b = CString(b)
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	digit := func(c byte) int {
		switch {
		case '0' <= c && c <= '9':
			return int(c - '0')
		case 'a' <= c && c <= 'z':
			return int(c-'a') + 10
		case 'A' <= c && c <= 'Z':
			return int(c-'A') + 10
		}
		return 99
	}
	if base == 16 && i+2 < len(b) && b[i] == '0' && (b[i+1] == 'x' || b[i+1] == 'X') && digit(b[i+2]) < 16 {
		i += 2
	}
	var n uint64
	digits, overflow := 0, false
	for ; i < len(b) && digit(b[i]) < base; i++ {
		d := uint64(digit(b[i]))
		if n > (math.MaxUint64-d)/uint64(base) {
			overflow = true
		}
		n = n*uint64(base) + d
		digits++
	}
	if digits == 0 {
		return 0, false
	}
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	if i != len(b) {
		return 0, false
	}
	switch {
	case overflow:
		return math.MaxUint64, true
	case neg:
		return -n, true
	}
	return n, true
}

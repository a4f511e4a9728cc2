package lualib

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Open loads cjson, cmsgpack, bit and struct into L's global table, as
// Redis's scriptingInit does. Call it before the globals are protected.
func Open(L *lua.LState) {
	g := L.G.Global
	g.RawSetString("cjson", OpenCJSON(L))
	g.RawSetString("cmsgpack", OpenCMsgpack(L))
	g.RawSetString("bit", OpenBit(L))
	g.RawSetString("struct", OpenStruct(L))
}

// funcs makes a library table from Go functions.
func funcs(L *lua.LState, fns map[string]lua.LGFunction) *lua.LTable {
	t := L.CreateTable(0, len(fns))
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// raise is luaL_error: the message, prefixed with where the caller of
// the running Go function is when that caller is Lua code
// ("user_script:3: "), as luaL_where(L, 1) does; called from a Go
// function (pcall(cjson.encode, ...)) it has no prefix.
func raise(L *lua.LState, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, nil); err == nil && dbg.What != "G" && dbg.CurrentLine > 0 {
			msg = dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": " + msg
		}
	}
	L.Error(lua.LString(msg), 0)
}

// argError raises Lua 5.1's luaL_argerror text for argument n of the
// library function fname, positioned at the calling Lua line.
func argError(L *lua.LState, n int, fname, msg string) {
	raise(L, "bad argument #%d to '%s' (%s)", n, fname, msg)
}

// typeError raises luaL_typerror's text: "<want> expected, got <type>".
func typeError(L *lua.LState, n int, fname, want string) {
	got := "no value"
	if n <= L.GetTop() {
		got = L.Get(n).Type().String()
	}
	argError(L, n, fname, want+" expected, got "+got)
}

// checkString is luaL_checklstring: a string, or a number converted to
// its Lua 5.1 text.
func checkString(L *lua.LState, n int, fname string) string {
	if n <= L.GetTop() {
		switch v := L.Get(n).(type) {
		case lua.LString:
			return string(v)
		case lua.LNumber:
			return NumberString(float64(v))
		}
	}
	typeError(L, n, fname, "string")
	return ""
}

// toNumber is lua_tonumber: a number, or a string Lua 5.1 reads as one.
func toNumber(L *lua.LState, n int) (float64, bool) {
	if n > L.GetTop() {
		return 0, false
	}
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return StringNumber(string(v))
	}
	return 0, false
}

// checkNumber is luaL_checknumber.
func checkNumber(L *lua.LState, n int, fname string) float64 {
	f, ok := toNumber(L, n)
	if !ok {
		typeError(L, n, fname, "number")
	}
	return f
}

// checkInt is luaL_checkinteger stored in a C int, as the libraries do:
// truncated toward zero to 64 bits, then to the low 32.
func checkInt(L *lua.LState, n int, fname string) int {
	return int(int32(cInt64(checkNumber(L, n, fname))))
}

// optInt is luaL_optinteger stored in a C int: def when argument n is
// absent or nil.
func optInt(L *lua.LState, n int, fname string, def int) int {
	if n > L.GetTop() || L.Get(n) == lua.LNil {
		return def
	}
	return checkInt(L, n, fname)
}

// cInt64 converts as a C cast from double to int64_t does on x86-64:
// toward zero, and NaN or out of range gives the minimum.
func cInt64(f float64) int64 {
	if math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return math.MinInt64
	}
	return int64(f)
}

// cInt32 converts as a C cast from double to int does on x86-64: out of
// range (and NaN) gives INT_MIN.
func cInt32(f float64) int {
	if math.IsNaN(f) || f >= math.MaxInt32+1 || f <= math.MinInt32-1 {
		return math.MinInt32
	}
	return int(int32(f))
}

// NumberString formats f as Lua 5.1 prints numbers (LUAI_NUMFFORMAT
// "%.14g" with glibc's inf, -inf, nan and -nan).
func NumberString(f float64) string {
	return string(appendNumber(nil, f, 14))
}

// appendNumber appends f formatted as C's "%.<prec>g".
func appendNumber(b []byte, f float64, prec int) []byte {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', prec, 64)
}

// StringNumber reads s as Lua 5.1's lua_str2number does: C's strtod
// (decimal, hexadecimal, inf, nan) or a 0x integer, with surrounding
// white space allowed and nothing else after the number.
func StringNumber(s string) (float64, bool) {
	b := []byte(s)
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	f, end := strtod(b, i)
	if end == i {
		return 0, false
	}
	for end < len(b) && isSpace(b[end]) {
		end++
	}
	return f, end == len(b)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

// strtod reads the longest prefix of b[i:] that C's strtod accepts
// (without its leading white space) and returns the value and where the
// number ends; end == i when there is no number.
func strtod(b []byte, i int) (float64, int) {
	at := func(j int) byte {
		if j < len(b) {
			return b[j]
		}
		return 0
	}
	j := i
	neg := false
	if c := at(j); c == '+' || c == '-' {
		neg = c == '-'
		j++
	}
	word := func(j int, w string) bool {
		return len(b)-j >= len(w) && strings.EqualFold(string(b[j:j+len(w)]), w)
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	switch {
	case word(j, "infinity"):
		return sign(math.Inf(1)), j + 8
	case word(j, "inf"):
		return sign(math.Inf(1)), j + 3
	case word(j, "nan"):
		j += 3
		if at(j) == '(' {
			k := j + 1
			for c := at(k); isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z') || c == '_'; c = at(k) {
				k++
			}
			if at(k) == ')' {
				j = k + 1
			}
		}
		nan := math.NaN()
		if neg {
			nan = math.Copysign(nan, -1)
		}
		return nan, j
	}
	if at(j) == '0' && at(j+1)|0x20 == 'x' && (isHex(at(j+2)) || (at(j+2) == '.' && isHex(at(j+3)))) {
		k := j + 2
		start := k
		for isHex(at(k)) {
			k++
		}
		if at(k) == '.' {
			k++
			for isHex(at(k)) {
				k++
			}
		}
		mant := string(b[start:k])
		exp := "p0"
		if at(k)|0x20 == 'p' {
			e := k + 1
			if c := at(e); c == '+' || c == '-' {
				e++
			}
			if isDigit(at(e)) {
				for isDigit(at(e)) {
					e++
				}
				exp = string(b[k:e])
				k = e
			}
		}
		f, _ := strconv.ParseFloat("0x"+mant+exp, 64)
		return sign(f), k
	}
	k := j
	digits := 0
	for isDigit(at(k)) {
		k++
		digits++
	}
	if at(k) == '.' {
		k++
		for isDigit(at(k)) {
			k++
			digits++
		}
	}
	if digits == 0 {
		return 0, i
	}
	if at(k)|0x20 == 'e' {
		e := k + 1
		if c := at(e); c == '+' || c == '-' {
			e++
		}
		if isDigit(at(e)) {
			for isDigit(at(e)) {
				e++
			}
			k = e
		}
	}
	f, _ := strconv.ParseFloat(string(b[j:k]), 64) // a range error gives ±Inf or 0, as strtod
	return sign(f), k
}

// ToString is Lua 5.1's lua_tostring for messages: numbers as "%.14g",
// strings as they are, and the type's name for others (as tostring
// without a __tostring metamethod, minus the address).
func ToString(v lua.LValue) string {
	switch v := v.(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return NumberString(float64(v))
	}
	return v.String()
}

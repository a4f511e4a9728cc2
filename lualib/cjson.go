package lualib

import (
	"math"
	"strconv"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// cjson: Lua CJSON 2.1.0 as Redis 7.0 ships it (deps/lua/src/lua_cjson.c).
// Numbers are written with "%.14g" (encode_number_precision), tables with
// keys 1..n (not too sparse) as arrays, other tables as objects, the
// empty table as {}; JSON null decodes to cjson.null, a light userdata
// NULL that encodes back to null.

// Defaults of Lua CJSON.
const (
	cjsonSparseRatio     = 2
	cjsonSparseSafe      = 10
	cjsonMaxDepth        = 1000
	cjsonNumberPrecision = 14
)

// cjsonConfig is one cjson instance's settings (cjson.new makes another).
type cjsonConfig struct {
	sparseConvert  bool
	sparseRatio    int
	sparseSafe     int
	encodeMaxDepth int
	decodeMaxDepth int
	invalidNumbers int // encode: 0 off, 1 on, 2 null
	decodeInvalid  bool
	keepBuffer     bool
	precision      int
	null           *lua.LUserData
}

// Null is the value cjson.null stands for in a Lua state: a userdata
// holding nil (Lua's light userdata NULL). IsNull reports it.
func IsNull(v lua.LValue) bool {
	u, ok := v.(*lua.LUserData)
	return ok && u.Value == nil && u.Metatable == lua.LNil
}

// OpenCJSON returns a new cjson library table with Lua CJSON's defaults.
func OpenCJSON(L *lua.LState) *lua.LTable {
	cfg := &cjsonConfig{
		sparseRatio:    cjsonSparseRatio,
		sparseSafe:     cjsonSparseSafe,
		encodeMaxDepth: cjsonMaxDepth,
		decodeMaxDepth: cjsonMaxDepth,
		decodeInvalid:  true,
		keepBuffer:     true,
		precision:      cjsonNumberPrecision,
		null:           L.NewUserData(),
	}
	t := funcs(L, map[string]lua.LGFunction{
		"encode":                  cfg.encode,
		"decode":                  cfg.decode,
		"encode_sparse_array":     cfg.encodeSparseArray,
		"encode_max_depth":        cfg.encodeMaxDepthOpt,
		"decode_max_depth":        cfg.decodeMaxDepthOpt,
		"encode_number_precision": cfg.encodeNumberPrecision,
		"encode_keep_buffer":      cfg.encodeKeepBuffer,
		"encode_invalid_numbers":  cfg.encodeInvalidNumbers,
		"decode_invalid_numbers":  cfg.decodeInvalidNumbers,
		"new":                     func(L *lua.LState) int { L.Push(OpenCJSON(L)); return 1 },
	})
	t.RawSetString("null", cfg.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// ---- options ----

// argCount is json_arg_check: at most max arguments.
func argCount(L *lua.LState, max int, fname string) {
	if L.GetTop() > max {
		argError(L, max+1, fname, "found too many arguments")
	}
}

// intOption is json_integer_option for argument n.
func intOption(L *lua.LState, n int, setting *int, min, max int, fname string) {
	if n <= L.GetTop() && L.Get(n) != lua.LNil {
		v := checkInt(L, n, fname)
		if v < min || v > max {
			argError(L, 1, fname, "expected integer between "+strconv.Itoa(min)+" and "+strconv.Itoa(max))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
}

// enumOption is json_enum_option for argument n: a boolean or one of
// options ("off", "on", ...); it pushes the setting, as a boolean when it
// is off or on.
func enumOption(L *lua.LState, n int, setting *int, options []string, fname string) {
	if n <= L.GetTop() && L.Get(n) != lua.LNil {
		switch v := L.Get(n).(type) {
		case lua.LBool:
			*setting = 0
			if v {
				*setting = 1
			}
		default:
			s := checkString(L, n, fname)
			found := false
			for i, o := range options {
				if o == s {
					*setting, found = i, true
					break
				}
			}
			if !found {
				argError(L, n, fname, "invalid option '"+s+"'")
			}
		}
	}
	if *setting <= 1 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
}

var boolOptions = []string{"off", "on"}

func boolOption(L *lua.LState, n int, setting *bool, fname string) {
	v := 0
	if *setting {
		v = 1
	}
	enumOption(L, n, &v, boolOptions, fname)
	*setting = v == 1
}

func (cfg *cjsonConfig) encodeSparseArray(L *lua.LState) int {
	const fname = "encode_sparse_array"
	argCount(L, 3, fname)
	boolOption(L, 1, &cfg.sparseConvert, fname)
	intOption(L, 2, &cfg.sparseRatio, 0, math.MaxInt32, fname)
	intOption(L, 3, &cfg.sparseSafe, 0, math.MaxInt32, fname)
	return 3
}

func (cfg *cjsonConfig) encodeMaxDepthOpt(L *lua.LState) int {
	argCount(L, 1, "encode_max_depth")
	intOption(L, 1, &cfg.encodeMaxDepth, 1, math.MaxInt32, "encode_max_depth")
	return 1
}

func (cfg *cjsonConfig) decodeMaxDepthOpt(L *lua.LState) int {
	argCount(L, 1, "decode_max_depth")
	intOption(L, 1, &cfg.decodeMaxDepth, 1, math.MaxInt32, "decode_max_depth")
	return 1
}

func (cfg *cjsonConfig) encodeNumberPrecision(L *lua.LState) int {
	argCount(L, 1, "encode_number_precision")
	intOption(L, 1, &cfg.precision, 1, 14, "encode_number_precision")
	return 1
}

func (cfg *cjsonConfig) encodeKeepBuffer(L *lua.LState) int {
	argCount(L, 1, "encode_keep_buffer")
	boolOption(L, 1, &cfg.keepBuffer, "encode_keep_buffer")
	return 1
}

func (cfg *cjsonConfig) encodeInvalidNumbers(L *lua.LState) int {
	argCount(L, 1, "encode_invalid_numbers")
	enumOption(L, 1, &cfg.invalidNumbers, []string{"off", "on", "null"}, "encode_invalid_numbers")
	return 1
}

func (cfg *cjsonConfig) decodeInvalidNumbers(L *lua.LState) int {
	argCount(L, 1, "decode_invalid_numbers")
	boolOption(L, 1, &cfg.decodeInvalid, "decode_invalid_numbers")
	return 1
}

// ---- encode ----

func (cfg *cjsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "encode", "expected 1 argument")
	}
	b := cfg.appendValue(L, nil, L.Get(1), 0, 1)
	L.Push(lua.LString(b))
	return 1
}

// encodeError is json_encode_exception.
func encodeError(L *lua.LState, v lua.LValue, reason string) {
	raise(L, "Cannot serialise %s: %s", v.Type().String(), reason)
}

// appendValue encodes v at nesting depth. slots counts the Lua stack
// values Lua CJSON would hold here (1 per array level, 2 per object
// level): it fails at Lua 5.1's stack limit (8000) as lua_checkstack
// does, which also bounds the recursion when encode_max_depth is raised.
func (cfg *cjsonConfig) appendValue(L *lua.LState, b []byte, v lua.LValue, depth, slots int) []byte {
	switch v := v.(type) {
	case lua.LString:
		return appendJSONString(b, string(v))
	case lua.LNumber:
		return cfg.appendJSONNumber(L, b, v)
	case lua.LBool:
		if v {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case *lua.LNilType:
		return append(b, "null"...)
	case *lua.LTable:
		depth++
		if depth > cfg.encodeMaxDepth || slots+3 > luaMaxCStack {
			raise(L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := cfg.arrayLength(L, v); n > 0 {
			b = append(b, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b = append(b, ',')
				}
				b = cfg.appendValue(L, b, v.RawGetInt(i), depth, slots+1)
			}
			return append(b, ']')
		}
		b = append(b, '{')
		first := true
		for k, e := v.Next(lua.LNil); k != lua.LNil; k, e = v.Next(k) {
			if !first {
				b = append(b, ',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				b = appendJSONString(b, string(k))
			case lua.LNumber:
				b = append(b, '"')
				b = cfg.appendJSONNumber(L, b, k)
				b = append(b, '"')
			default:
				encodeError(L, k, "table key must be a number or string")
			}
			b = append(b, ':')
			b = cfg.appendValue(L, b, e, depth, slots+2)
		}
		return append(b, '}')
	case *lua.LUserData:
		if v == cfg.null || IsNull(v) {
			return append(b, "null"...)
		}
	}
	encodeError(L, v, "type not supported")
	return nil
}

func (cfg *cjsonConfig) appendJSONNumber(L *lua.LState, b []byte, n lua.LNumber) []byte {
	f := float64(n)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch cfg.invalidNumbers {
		case 0:
			encodeError(L, n, "must not be NaN or Inf")
		case 2:
			return append(b, "null"...)
		}
		if math.IsNaN(f) {
			return append(b, "nan"...) // never "-nan"
		}
	}
	return appendNumber(b, f, cfg.precision)
}

// arrayLength is lua_array_length: n > 0 when the table's keys are all
// integers >= 1 (the largest is n) and it is not excessively sparse, 0
// for an empty table, -1 for an object.
func (cfg *cjsonConfig) arrayLength(L *lua.LState, t *lua.LTable) int {
	max, items := 0, 0 // C ints
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f == 0 || math.Floor(f) != f || f < 1 {
			return -1
		}
		if f > float64(max) {
			max = cInt32(f) // a key past INT_MAX makes max INT_MIN, as on x86-64: an object
		}
		items++
	}
	if cfg.sparseRatio > 0 && max > items*cfg.sparseRatio && max > cfg.sparseSafe {
		if !cfg.sparseConvert {
			encodeError(L, t, "excessively sparse array")
		}
		return -1
	}
	return max
}

// jsonEscapes is Lua CJSON's char2escape table: control characters, '"',
// '\\', '/' and DEL are escaped; every other byte is written as is.
var jsonEscapes = func() [256]string {
	var e [256]string
	const hex = "0123456789abcdef"
	for c := 0; c < 0x20; c++ {
		e[c] = "\\u00" + string(hex[c>>4]) + string(hex[c&15])
	}
	e['\b'], e['\t'], e['\n'], e['\f'], e['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	e['"'], e['\\'], e['/'], e[0x7f] = `\"`, `\\`, `\/`, `\u007f`
	return e
}()

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if esc := jsonEscapes[s[i]]; esc != "" {
			b = append(b, esc...)
		} else {
			b = append(b, s[i])
		}
	}
	return append(b, '"')
}

// ---- decode ----

type jsonToken int

// Token types, named as Lua CJSON names them in its error messages.
const (
	tObjBegin jsonToken = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

// jsonCharTokens is ch2token: what a token's first byte says.
var jsonCharTokens = func() [256]jsonToken {
	var t [256]jsonToken
	for i := range t {
		t[i] = tError
	}
	t['{'], t['}'], t['['], t[']'], t[','], t[':'] = tObjBegin, tObjEnd, tArrBegin, tArrEnd, tComma, tColon
	t[0] = tEnd
	t[' '], t['\t'], t['\n'], t['\r'] = tWhitespace, tWhitespace, tWhitespace, tWhitespace
	for _, c := range "fiInNt\"+-0123456789" {
		t[c] = tUnknown
	}
	return t
}()

type token struct {
	typ   jsonToken
	index int // 0-based offset of the token in the text
	str   string
	num   float64
	bool  bool
	err   string // for tError
}

type jsonParser struct {
	L     *lua.LState
	cfg   *cjsonConfig
	data  []byte
	pos   int
	depth int
	slots int // Lua stack values the C decoder would hold: the argument, then 1 per array, 2 per object
}

// at is the byte at i, 0 past the end: the C parser reads a
// NUL-terminated string, so an embedded NUL ends the text too.
func (p *jsonParser) at(i int) byte {
	if i < len(p.data) {
		return p.data[i]
	}
	return 0
}

func (cfg *cjsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "decode", "expected 1 argument")
	}
	s := checkString(L, 1, "decode")
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		raise(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	p := &jsonParser{L: L, cfg: cfg, data: []byte(s), slots: 1}
	var t token
	p.next(&t)
	v := p.value(&t)
	p.next(&t)
	if t.typ != tEnd {
		p.parseError("the end", &t)
	}
	L.Push(v)
	return 1
}

func (p *jsonParser) parseError(expected string, t *token) {
	found := jsonTokenNames[t.typ]
	if t.typ == tError {
		found = t.err
	}
	raise(p.L, "Expected %s but found %s at character %d", expected, found, t.index+1)
}

func (p *jsonParser) tokenError(t *token, msg string) {
	t.typ, t.index, t.err = tError, p.pos, msg
}

func (p *jsonParser) next(t *token) {
	for jsonCharTokens[p.at(p.pos)] == tWhitespace {
		p.pos++
	}
	t.index = p.pos
	c := p.at(p.pos)
	t.typ = jsonCharTokens[c]
	switch t.typ {
	case tError:
		p.tokenError(t, "invalid token")
		return
	case tEnd:
		return
	case tUnknown:
	default:
		p.pos++
		return
	}
	rest := p.data[min(p.pos, len(p.data)):]
	switch {
	case c == '"':
		p.stringToken(t)
	case c == '-' || isDigit(c):
		if !p.cfg.decodeInvalid && p.invalidNumber() {
			p.tokenError(t, "invalid number")
			return
		}
		p.numberToken(t)
	case hasPrefix(rest, "true"):
		t.typ, t.bool = tBoolean, true
		p.pos += 4
	case hasPrefix(rest, "false"):
		t.typ, t.bool = tBoolean, false
		p.pos += 5
	case hasPrefix(rest, "null"):
		t.typ = tNull
		p.pos += 4
	case p.cfg.decodeInvalid && p.invalidNumber():
		p.numberToken(t)
	default:
		p.tokenError(t, "invalid token")
	}
}

func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

// invalidNumber is json_is_invalid_number: a number JSON does not allow
// (leading +, hex, leading zeros, inf, nan) that strtod would still read.
func (p *jsonParser) invalidNumber() bool {
	i := p.pos
	if p.at(i) == '+' {
		return true
	}
	if p.at(i) == '-' {
		i++
	}
	switch c := p.at(i); {
	case c == '0':
		c2 := p.at(i + 1)
		return c2|0x20 == 'x' || isDigit(c2)
	case c <= '9':
		return false
	}
	word := func(w string) bool {
		for j := 0; j < len(w); j++ {
			if p.at(i+j)|0x20 != w[j] {
				return false
			}
		}
		return true
	}
	return word("inf") || word("nan")
}

func (p *jsonParser) numberToken(t *token) {
	end := p.pos
	for end < len(p.data) && p.data[end] != 0 {
		end++
	}
	f, e := strtod(p.data[:end], p.pos)
	if e == p.pos {
		p.tokenError(t, "invalid number")
		return
	}
	t.typ, t.num = tNumber, f
	p.pos = e
}

func (p *jsonParser) stringToken(t *token) {
	p.pos++ // the opening quote
	var b []byte
	for {
		c := p.at(p.pos)
		if c == '"' {
			break
		}
		if c == 0 {
			p.tokenError(t, "unexpected end of string")
			return
		}
		if c == '\\' {
			switch p.at(p.pos + 1) {
			case '"', '\\', '/':
				c = p.at(p.pos + 1)
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				var ok bool
				if b, ok = p.unicodeEscape(b); !ok {
					p.tokenError(t, "invalid unicode escape code")
					return
				}
				continue
			default:
				p.tokenError(t, "invalid escape code")
				return
			}
			p.pos++
		}
		b = append(b, c)
		p.pos++
	}
	p.pos++ // the closing quote
	t.typ, t.str = tString, string(b)
}

func (p *jsonParser) hex4(i int) int {
	v := 0
	for j := range 4 {
		c := p.at(i + j)
		var d int
		switch {
		case isDigit(c):
			d = int(c - '0')
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			d = int(c|0x20-'a') + 10
		default:
			return -1
		}
		v = v<<4 | d
	}
	return v
}

// unicodeEscape decodes \uXXXX (or a surrogate pair of them) at p.pos
// into UTF-8.
func (p *jsonParser) unicodeEscape(b []byte) ([]byte, bool) {
	cp := p.hex4(p.pos + 2)
	if cp < 0 {
		return b, false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || p.at(p.pos+6) != '\\' || p.at(p.pos+7) != 'u' {
			return b, false
		}
		low := p.hex4(p.pos + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return b, false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		n = 12
	}
	b = utf8.AppendRune(b, rune(cp))
	p.pos += n
	return b, true
}

// descend enters an array (need 2 Lua stack slots, holding 1 while
// inside) or object (3, holding 2), failing past decode_max_depth or the
// Lua stack's 8000 slots as json_decode_descend does.
func (p *jsonParser) descend(need, hold int) {
	p.depth++
	if p.depth > p.cfg.decodeMaxDepth || p.slots+need > luaMaxCStack {
		raise(p.L, "Found too many nested data structures (%d) at character %d", p.depth, p.pos)
	}
	p.slots += hold
}

func (p *jsonParser) ascend(hold int) {
	p.depth--
	p.slots -= hold
}

func (p *jsonParser) value(t *token) lua.LValue {
	switch t.typ {
	case tString:
		return lua.LString(t.str)
	case tNumber:
		return lua.LNumber(t.num)
	case tBoolean:
		return lua.LBool(t.bool)
	case tNull:
		return p.cfg.null
	case tObjBegin:
		p.descend(3, 2)
		obj := p.L.NewTable()
		p.next(t)
		if t.typ == tObjEnd {
			p.ascend(2)
			return obj
		}
		for {
			if t.typ != tString {
				p.parseError("object key string", t)
			}
			key := t.str
			p.next(t)
			if t.typ != tColon {
				p.parseError("colon", t)
			}
			p.next(t)
			obj.RawSetString(key, p.value(t))
			p.next(t)
			if t.typ == tObjEnd {
				p.ascend(2)
				return obj
			}
			if t.typ != tComma {
				p.parseError("comma or object end", t)
			}
			p.next(t)
		}
	case tArrBegin:
		p.descend(2, 1)
		arr := p.L.NewTable()
		p.next(t)
		if t.typ == tArrEnd {
			p.ascend(1)
			return arr
		}
		for i := 1; ; i++ {
			arr.RawSetInt(i, p.value(t))
			p.next(t)
			if t.typ == tArrEnd {
				p.ascend(1)
				return arr
			}
			if t.typ != tComma {
				p.parseError("comma or array end", t)
			}
			p.next(t)
		}
	}
	p.parseError("value", t)
	return nil
}

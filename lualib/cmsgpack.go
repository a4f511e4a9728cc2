package lualib

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// cmsgpack: lua-cmsgpack 0.4.0 as Redis 7.0 ships it
// (deps/lua/src/lua_cmsgpack.c). Encoding choices: a number that is an
// int64 is written in the smallest integer form (positive/negative fixnum,
// uint8..uint64, int8..int64), any other number as float32 when it
// converts back exactly, else float64; strings as fixstr/str8/str16/str32;
// a table whose keys are exactly 1..n (or that is empty) as an array,
// others as a map; a table nested 16 deep, functions and userdata as nil.
// Decoding reads every type but bin and ext (a bad format error).

// msgpackMaxNesting is LUACMSGPACK_MAX_NESTING: a table at this depth is
// packed as nil (so circular references end).
const msgpackMaxNesting = 16

// luaMaxCStack is LUAI_MAXCSTACK, the Lua 5.1 stack Redis's unpack runs
// out of ("too many return values at once...").
const luaMaxCStack = 8000

// OpenCMsgpack returns a new cmsgpack library table.
func OpenCMsgpack(L *lua.LState) *lua.LTable {
	t := funcs(L, map[string]lua.LGFunction{
		"pack":         msgpackPack,
		"unpack":       func(L *lua.LState) int { return msgpackUnpack(L, "unpack", 0, 0) },
		"unpack_one":   msgpackUnpackOne,
		"unpack_limit": msgpackUnpackLimit,
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "pack", "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = appendMsgpack(b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func appendMsgpack(b []byte, v lua.LValue, level int) []byte {
	switch v := v.(type) {
	case lua.LString:
		return appendMsgpackString(b, string(v))
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(v)
		if !math.IsInf(f, 0) && f >= math.MinInt64 && f < math.MaxInt64 && math.Trunc(f) == f {
			return appendMsgpackInt(b, int64(f))
		}
		if float64(float32(f)) == f {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f)))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case *lua.LTable:
		if level == msgpackMaxNesting {
			break
		}
		if n, ok := msgpackArrayLen(v); ok {
			b = appendMsgpackHeader(b, 0x90, 0xdc, n)
			for i := 1; i <= n; i++ {
				b = appendMsgpack(b, v.RawGetInt(i), level+1)
			}
			return b
		}
		n := 0
		for k, _ := v.Next(lua.LNil); k != lua.LNil; k, _ = v.Next(k) {
			n++
		}
		b = appendMsgpackHeader(b, 0x80, 0xde, n)
		for k, e := v.Next(lua.LNil); k != lua.LNil; k, e = v.Next(k) {
			b = appendMsgpack(b, k, level+1)
			b = appendMsgpack(b, e, level+1)
		}
		return b
	}
	return append(b, 0xc0)
}

// msgpackArrayLen is table_is_an_array: the keys are all numbers that are
// C ints >= 1, and there are as many as the largest.
func msgpackArrayLen(t *lua.LTable) (int, bool) {
	count, max := 0, 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f <= 0 || f > math.MaxInt32 || math.Trunc(f) != f {
			return 0, false
		}
		max = int(math.Max(f, float64(max)))
		count++
	}
	return count, max == count
}

// appendMsgpackHeader writes an array (fix 0x90, 16-bit 0xdc, 32-bit 0xdd)
// or map (0x80, 0xde, 0xdf) header.
func appendMsgpackHeader(b []byte, fix, code16 byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, code16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, code16+1), uint32(n))
}

func appendMsgpackString(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

func appendMsgpackInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// ---- unpack ----

func msgpackUnpackOne(L *lua.LState) int {
	offset := optInt(L, 2, "unpack_one", 0)
	L.SetTop(1)
	return msgpackUnpack(L, "unpack_one", 1, offset)
}

func msgpackUnpackLimit(L *lua.LState) int {
	limit := checkInt(L, 2, "unpack_limit")
	offset := optInt(L, 3, "unpack_limit", 0)
	L.SetTop(1)
	return msgpackUnpack(L, "unpack_limit", limit, offset)
}

// msgpack decoding errors, as mp_cur's.
const (
	mpOK = iota
	mpEOF
	mpBadFormat
	mpStack // the Lua stack would overflow
)

type msgpackCursor struct {
	L     *lua.LState
	b     []byte
	err   int
	slots int // Lua stack slots Redis's decoder would hold now
}

// msgpackUnpack is mp_unpack_full: limit objects from offset (both 0:
// every object, without the next offset).
func msgpackUnpack(L *lua.LState, fname string, limit, offset int) int {
	s := checkString(L, 1, fname)
	decodeAll := limit == 0 && offset == 0
	switch {
	case offset < 0 || limit < 0:
		raise(L, "Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
	case offset > len(s):
		raise(L, "Start offset %d greater than input length %d.", offset, len(s))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	c := &msgpackCursor{L: L, b: []byte(s)[offset:], slots: 1}
	var vals []lua.LValue
	for len(c.b) > 0 && len(vals) < limit {
		v := c.decode()
		c.slots++
		switch c.err {
		case mpEOF:
			raise(L, "Missing bytes in input.")
		case mpBadFormat:
			raise(L, "Bad data format in input.")
		}
		vals = append(vals, v)
	}
	if !decodeAll {
		next := len(s) - len(c.b)
		if len(c.b) == 0 {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range vals {
		L.Push(v)
	}
	if decodeAll {
		return len(vals)
	}
	return len(vals) + 1
}

func (c *msgpackCursor) need(n int) bool {
	if len(c.b) < n {
		c.err = mpEOF
		return false
	}
	return true
}

// decode reads one object. Lua stack checks happen where Redis's decoder
// calls luaL_checkstack, with the same messages.
func (c *msgpackCursor) decode() lua.LValue {
	if !c.need(1) {
		return lua.LNil
	}
	if c.slots+1 > luaMaxCStack {
		raise(c.L, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
	}
	b := c.b
	be16 := func() uint64 { return uint64(binary.BigEndian.Uint16(b[1:])) }
	be32 := func() uint64 { return uint64(binary.BigEndian.Uint32(b[1:])) }
	be64 := func() uint64 { return binary.BigEndian.Uint64(b[1:]) }
	fixed := func(n int, v lua.LValue) lua.LValue {
		if !c.need(n) {
			return lua.LNil
		}
		c.b = c.b[n:]
		return v
	}
	switch t := b[0]; t {
	case 0xcc:
		if !c.need(2) {
			return lua.LNil
		}
		return fixed(2, lua.LNumber(b[1]))
	case 0xd0:
		if !c.need(2) {
			return lua.LNil
		}
		return fixed(2, lua.LNumber(int8(b[1])))
	case 0xcd:
		if !c.need(3) {
			return lua.LNil
		}
		return fixed(3, lua.LNumber(be16()))
	case 0xd1:
		if !c.need(3) {
			return lua.LNil
		}
		return fixed(3, lua.LNumber(int16(be16())))
	case 0xce:
		if !c.need(5) {
			return lua.LNil
		}
		return fixed(5, lua.LNumber(be32()))
	case 0xd2:
		if !c.need(5) {
			return lua.LNil
		}
		return fixed(5, lua.LNumber(int32(be32())))
	case 0xcf:
		if !c.need(9) {
			return lua.LNil
		}
		return fixed(9, lua.LNumber(int64(be64()))) // lua_pushinteger: 2^63 and above wrap, as in Redis
	case 0xd3:
		if !c.need(9) {
			return lua.LNil
		}
		return fixed(9, lua.LNumber(int64(be64())))
	case 0xc0:
		return fixed(1, lua.LNil)
	case 0xc3:
		return fixed(1, lua.LTrue)
	case 0xc2:
		return fixed(1, lua.LFalse)
	case 0xca:
		if !c.need(5) {
			return lua.LNil
		}
		return fixed(5, lua.LNumber(math.Float32frombits(uint32(be32()))))
	case 0xcb:
		if !c.need(9) {
			return lua.LNil
		}
		return fixed(9, lua.LNumber(math.Float64frombits(be64())))
	case 0xd9:
		if !c.need(2) {
			return lua.LNil
		}
		return c.str(2, uint64(b[1]))
	case 0xda:
		if !c.need(3) {
			return lua.LNil
		}
		return c.str(3, be16())
	case 0xdb:
		if !c.need(5) {
			return lua.LNil
		}
		return c.str(5, be32())
	case 0xdc:
		if !c.need(3) {
			return lua.LNil
		}
		c.b = c.b[3:]
		return c.array(be16())
	case 0xdd:
		if !c.need(5) {
			return lua.LNil
		}
		c.b = c.b[5:]
		return c.array(be32())
	case 0xde:
		if !c.need(3) {
			return lua.LNil
		}
		c.b = c.b[3:]
		return c.hash(be16())
	case 0xdf:
		if !c.need(5) {
			return lua.LNil
		}
		c.b = c.b[5:]
		return c.hash(be32())
	default:
		switch {
		case t&0x80 == 0:
			return fixed(1, lua.LNumber(t))
		case t&0xe0 == 0xe0:
			return fixed(1, lua.LNumber(int8(t)))
		case t&0xe0 == 0xa0:
			return c.str(1, uint64(t&0x1f))
		case t&0xf0 == 0x90:
			c.b = c.b[1:]
			return c.array(uint64(t & 0xf))
		case t&0xf0 == 0x80:
			c.b = c.b[1:]
			return c.hash(uint64(t & 0xf))
		}
		c.err = mpBadFormat
		return lua.LNil
	}
}

func (c *msgpackCursor) str(hdr int, n uint64) lua.LValue {
	if uint64(len(c.b)) < uint64(hdr)+n {
		c.err = mpEOF
		return lua.LNil
	}
	s := lua.LString(c.b[hdr : hdr+int(n)])
	c.b = c.b[hdr+int(n):]
	return s
}

func (c *msgpackCursor) array(n uint64) lua.LValue {
	c.slots++ // the table
	defer func() { c.slots-- }()
	if c.slots+1 > luaMaxCStack {
		raise(c.L, "stack overflow (in function mp_decode_to_lua_array)")
	}
	t := c.L.NewTable()
	for i := 1; uint64(i) <= n; i++ {
		c.slots++ // the index
		v := c.decode()
		c.slots--
		if c.err != mpOK {
			return t
		}
		t.RawSetInt(i, v)
	}
	return t
}

func (c *msgpackCursor) hash(n uint64) lua.LValue {
	c.slots++ // the table
	defer func() { c.slots-- }()
	t := c.L.NewTable()
	for ; n > 0; n-- {
		k := c.decode()
		if c.err != mpOK {
			return t
		}
		c.slots++ // the key
		v := c.decode()
		c.slots--
		if c.err != mpOK {
			return t
		}
		// lua_settable's errors, raised without a position as Lua's VM
		// raises them from inside a C function.
		switch kk := k.(type) {
		case *lua.LNilType:
			c.L.Error(lua.LString("table index is nil"), 0)
		case lua.LNumber:
			if math.IsNaN(float64(kk)) {
				c.L.Error(lua.LString("table index is NaN"), 0)
			}
		}
		t.RawSet(k, v)
	}
	return t
}

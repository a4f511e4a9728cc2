package commands

import (
	"math"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/recovery"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them.
var stringCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"set", -3, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"get", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"getset", 3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"getdel", 2, FlagWrite | FlagFast, 1, 1, 1},
	{"getex", -2, FlagWrite | FlagFast, 1, 1, 1},
	{"setnx", 3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"setex", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"psetex", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"mset", -3, FlagWrite | FlagDenyOOM, 1, -1, 2},
	{"msetnx", -3, FlagWrite | FlagDenyOOM, 1, -1, 2},
	{"mget", -2, FlagReadonly | FlagFast, 1, -1, 1},
	{"incr", 2, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"decr", 2, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"incrby", 3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"decrby", 3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"incrbyfloat", 3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"append", 3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"strlen", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"getrange", 4, FlagReadonly, 1, 1, 1},
	{"substr", 4, FlagReadonly, 1, 1, 1},
	{"setrange", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"setbit", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"getbit", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"bitcount", -2, FlagReadonly, 1, 1, 1},
	{"bitpos", -3, FlagReadonly, 1, 1, 1},
}

func TestStringCommandInfo(t *testing.T) {
	checkCommandInfo(t, stringCommands(), stringCommandInfo)
}

func checkCommandInfo(t *testing.T, cmds []Command, want []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}) {
	t.Helper()
	byName := map[string]Command{}
	for _, c := range cmds {
		byName[c.Name] = c
		for _, sub := range c.Subcommands {
			byName[sub.Name] = sub
		}
	}
	if len(byName) != len(want) {
		t.Errorf("%d commands in the table, %d expected", len(byName), len(want))
	}
	for _, w := range want {
		c, ok := byName[w.name]
		if !ok {
			t.Errorf("%s: missing", w.name)
			continue
		}
		if c.Arity != w.arity || c.Flags != w.flags || c.FirstKey != w.firstKey || c.LastKey != w.lastKey || c.Step != w.step {
			t.Errorf("%s: arity %d flags %#x keys %d %d %d; want %d %#x %d %d %d", w.name,
				c.Arity, c.Flags, c.FirstKey, c.LastKey, c.Step, w.arity, w.flags, w.firstKey, w.lastKey, w.step)
		}
	}
}

func TestParseSetOptions(t *testing.T) {
	a := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	tests := []struct {
		name  string
		args  [][]byte
		getex bool
		want  setOptions
		err   string
	}{
		{"none", a(), false, setOptions{}, ""},
		{"nx", a("NX"), false, setOptions{nx: true}, ""},
		{"xx", a("xx"), false, setOptions{xx: true}, ""},
		{"nx twice", a("nx", "NX"), false, setOptions{nx: true}, ""},
		{"nx xx", a("nx", "xx"), false, setOptions{}, ErrSyntax},
		{"xx nx", a("xx", "nx"), false, setOptions{}, ErrSyntax},
		{"get", a("GET"), false, setOptions{get: true}, ""},
		{"nx get", a("NX", "GET"), false, setOptions{nx: true, get: true}, ""},
		{"ex", a("EX", "10"), false, setOptions{expire: expireEX, expireAt: []byte("10")}, ""},
		{"px", a("px", "10"), false, setOptions{expire: expirePX, expireAt: []byte("10")}, ""},
		{"exat", a("exat", "10"), false, setOptions{expire: expireEXAT, expireAt: []byte("10")}, ""},
		{"pxat", a("PXAT", "10"), false, setOptions{expire: expirePXAT, expireAt: []byte("10")}, ""},
		{"ex repeated, last wins", a("ex", "10", "ex", "20"), false, setOptions{expire: expireEX, expireAt: []byte("20")}, ""},
		{"ex number not checked here", a("ex", "x"), false, setOptions{expire: expireEX, expireAt: []byte("x")}, ""},
		{"ex px", a("ex", "10", "px", "10"), false, setOptions{}, ErrSyntax},
		{"pxat exat", a("pxat", "10", "exat", "10"), false, setOptions{}, ErrSyntax},
		{"ex without value", a("ex"), false, setOptions{}, ErrSyntax},
		{"ex value then junk", a("ex", "1", "foo"), false, setOptions{}, ErrSyntax},
		{"keepttl", a("KEEPTTL"), false, setOptions{keepTTL: true}, ""},
		{"keepttl ex", a("keepttl", "ex", "10"), false, setOptions{}, ErrSyntax},
		{"ex keepttl", a("ex", "10", "keepttl"), false, setOptions{}, ErrSyntax},
		{"all compatible", a("xx", "get", "px", "5"), false, setOptions{xx: true, get: true, expire: expirePX, expireAt: []byte("5")}, ""},
		{"persist on set", a("persist"), false, setOptions{}, ErrSyntax},
		{"unknown", a("foo"), false, setOptions{}, ErrSyntax},
		{"value-like token", a("10"), false, setOptions{}, ErrSyntax},
		{"getex none", a(), true, setOptions{}, ""},
		{"getex persist", a("PERSIST"), true, setOptions{persist: true}, ""},
		{"getex ex", a("ex", "5"), true, setOptions{expire: expireEX, expireAt: []byte("5")}, ""},
		{"getex persist ex", a("persist", "ex", "10"), true, setOptions{}, ErrSyntax},
		{"getex ex persist", a("ex", "10", "persist"), true, setOptions{}, ErrSyntax},
		{"getex nx", a("nx"), true, setOptions{}, ErrSyntax},
		{"getex xx", a("xx"), true, setOptions{}, ErrSyntax},
		{"getex get", a("get"), true, setOptions{}, ErrSyntax},
		{"getex keepttl", a("keepttl"), true, setOptions{}, ErrSyntax},
		{"getex ex without value", a("ex"), true, setOptions{}, ErrSyntax},
	}
	for _, tt := range tests {
		got, err := parseSetOptions(tt.args, tt.getex)
		if errText(err) != tt.err {
			t.Errorf("%s: error %q, want %q", tt.name, errText(err), tt.err)
			continue
		}
		if got.nx != tt.want.nx || got.xx != tt.want.xx || got.get != tt.want.get || got.keepTTL != tt.want.keepTTL ||
			got.persist != tt.want.persist || got.expire != tt.want.expire || string(got.expireAt) != string(tt.want.expireAt) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestExpireAtMs(t *testing.T) {
	const now = 1_700_000_000_000
	tests := []struct {
		kind expireKind
		arg  string
		want int64
		err  string
	}{
		{expireNone, "", 0, ""},
		{expireEX, "10", now + 10_000, ""},
		{expirePX, "10", now + 10, ""},
		{expireEXAT, "10", 10_000, ""},
		{expirePXAT, "10", 10, ""},
		{expirePXAT, "9223372036854775807", math.MaxInt64, ""},
		{expireEX, "0", 0, "ERR invalid expire time in 'set' command"},
		{expireEX, "-1", 0, "ERR invalid expire time in 'set' command"},
		{expirePXAT, "0", 0, "ERR invalid expire time in 'set' command"},
		{expireEX, "9223372036854775", 0, "ERR invalid expire time in 'set' command"}, // fits *1000, not +now
		{expireEXAT, "9223372036854775", 9223372036854775000, ""},
		{expireEXAT, "9223372036854776", 0, "ERR invalid expire time in 'set' command"}, // *1000 overflows
		{expirePX, "9223372036854775807", 0, "ERR invalid expire time in 'set' command"},
		{expireEX, "x", 0, "ERR value is not an integer or out of range"},
		{expireEX, "1.5", 0, "ERR value is not an integer or out of range"},
		{expireEX, "", 0, "ERR value is not an integer or out of range"},
	}
	for _, tt := range tests {
		got, err := expireAtMs(tt.kind, []byte(tt.arg), now, "set")
		if errText(err) != tt.err || got != tt.want {
			t.Errorf("expireAtMs(%d, %q) = %d, %q; want %d, %q", tt.kind, tt.arg, got, errText(err), tt.want, tt.err)
		}
	}
	if _, err := expireAtMs(expireEX, []byte("0"), now, "getex"); errText(err) != "ERR invalid expire time in 'getex' command" {
		t.Errorf("getex error text %q", errText(err))
	}
}

func TestSubstring(t *testing.T) {
	s := []byte("hello world")
	tests := []struct {
		start, end int64
		want       string
	}{
		{0, 4, "hello"},
		{-5, -1, "world"},
		{-1, -5, ""},
		{0, 100, "hello world"},
		{100, 200, ""},
		{-100, 2, "hel"},
		{3, 2, ""},
		{0, -1, "hello world"},
		{5, 5, " "},
		{math.MinInt64, math.MaxInt64, "hello world"},
	}
	for _, tt := range tests {
		if got := string(substring(s, tt.start, tt.end)); got != tt.want {
			t.Errorf("substring(%d, %d) = %q, want %q", tt.start, tt.end, got, tt.want)
		}
	}
	// Redis checks "both negative, start after end" before clamping: on a
	// one-byte string -1 -5 would otherwise clamp to 0 0.
	if got := substring([]byte("x"), -1, -5); len(got) != 0 {
		t.Errorf("substring(x, -1, -5) = %q, want empty", got)
	}
	if got := substring(nil, 0, -1); len(got) != 0 {
		t.Errorf("substring of empty = %q", got)
	}
}

func TestParseSetRangeOffset(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		err  string
	}{
		{"0", 0, ""},
		{"536870912", 536870912, ""}, // the size check comes later, with the value's length
		{"-1", 0, "ERR offset is out of range"},
		{"x", 0, "ERR value is not an integer or out of range"},
	} {
		got, err := parseSetRangeOffset([]byte(tt.in))
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("parseSetRangeOffset(%q) = %d, %q", tt.in, got, errText(err))
		}
	}
}

func TestParseBitOffsetAndValue(t *testing.T) {
	const offErr = "ERR bit offset is not an integer or out of range"
	for _, tt := range []struct {
		in   string
		want int64
		err  string
	}{
		{"0", 0, ""},
		{"4294967295", 4294967295, ""},
		{"4294967296", 0, offErr},
		{"-1", 0, offErr},
		{"x", 0, offErr},
		{"#1", 0, offErr}, // the #n form is BITFIELD's only
	} {
		got, err := parseBitOffset([]byte(tt.in), DefaultProtoMaxBulkLen)
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("parseBitOffset(%q) = %d, %q", tt.in, got, errText(err))
		}
	}
	const bitErr = "ERR bit is not an integer or out of range"
	for _, tt := range []struct {
		in   string
		want byte
		err  string
	}{
		{"0", 0, ""},
		{"1", 1, ""},
		{"2", 0, bitErr},
		{"-1", 0, bitErr},
		{"y", 0, bitErr},
	} {
		got, err := parseBitValue([]byte(tt.in))
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("parseBitValue(%q) = %d, %q", tt.in, got, errText(err))
		}
	}
}

func TestParseBitCountRange(t *testing.T) {
	a := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	tests := []struct {
		args [][]byte
		want bitRange
		err  string
	}{
		{a(), bitRange{}, ""},
		{a("0", "-1"), bitRange{given: true, endGiven: true, start: 0, end: -1}, ""},
		{a("1", "2", "BIT"), bitRange{given: true, endGiven: true, start: 1, end: 2, bitUnit: true}, ""},
		{a("1", "2", "byte"), bitRange{given: true, endGiven: true, start: 1, end: 2}, ""},
		{a("1"), bitRange{}, ErrSyntax},
		{a("1", "2", "bit", "x"), bitRange{}, ErrSyntax},
		{a("a", "b"), bitRange{}, ErrNotInteger},
		{a("0", "b"), bitRange{}, ErrNotInteger},
		{a("0", "-1", "bad"), bitRange{}, ErrSyntax},
		// Redis answers 0 for a negative start past a negative end before
		// it looks at the unit.
		{a("-1", "-2", "bad"), bitRange{given: true, endGiven: true, start: -1, end: -2, empty: true}, ""},
	}
	for _, tt := range tests {
		got, err := parseBitCountRange(tt.args)
		if errText(err) != tt.err || got != tt.want {
			t.Errorf("parseBitCountRange(%q) = %+v, %q; want %+v, %q", tt.args, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestParseBitPos(t *testing.T) {
	a := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	for _, tt := range []struct {
		in   string
		want byte
		err  string
	}{
		{"0", 0, ""},
		{"1", 1, ""},
		{"2", 0, "ERR The bit argument must be 1 or 0."},
		{"-1", 0, "ERR The bit argument must be 1 or 0."},
		{"x", 0, ErrNotInteger},
	} {
		got, err := parseBitPosBit([]byte(tt.in))
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("parseBitPosBit(%q) = %d, %q", tt.in, got, errText(err))
		}
	}
	tests := []struct {
		args [][]byte
		want bitRange
		err  string
	}{
		{a(), bitRange{}, ""},
		{a("2"), bitRange{given: true, start: 2}, ""},
		{a("2", "-1"), bitRange{given: true, start: 2, end: -1, endGiven: true}, ""},
		{a("7", "15", "BIT"), bitRange{given: true, start: 7, end: 15, endGiven: true, bitUnit: true}, ""},
		{a("7", "15", "Byte"), bitRange{given: true, start: 7, end: 15, endGiven: true}, ""},
		{a("x"), bitRange{}, ErrNotInteger},
		{a("1", "x"), bitRange{}, ErrNotInteger},
		{a("1", "x", "bad"), bitRange{}, ErrSyntax}, // the unit is checked before the end
		{a("1", "2", "bad"), bitRange{}, ErrSyntax},
		{a("1", "2", "3", "4"), bitRange{}, ErrSyntax},
	}
	for _, tt := range tests {
		got, err := parseBitPosRange(tt.args)
		if errText(err) != tt.err || got != tt.want {
			t.Errorf("parseBitPosRange(%q) = %+v, %q; want %+v, %q", tt.args, got, errText(err), tt.want, tt.err)
		}
	}
}

// Expected values are Redis 7.0.15's replies for the same string and range.
func TestBitCountAndBitPos(t *testing.T) {
	foobar := []byte("foobar")
	ff := []byte{0xff, 0xff}
	mixed := []byte{0x00, 0xff, 0xf0}
	count := []struct {
		s          []byte
		start, end int64
		unit       bool
		given      bool
		want       int64
	}{
		{foobar, 0, 0, false, false, 26},
		{foobar, 0, 0, false, true, 4},
		{foobar, 1, 1, false, true, 6},
		{foobar, 5, 30, true, true, 17},
		{foobar, 0, -1, true, true, 26},
		{foobar, -100, 100, false, true, 26},
		{foobar, 3, 2, false, true, 0},
		{[]byte{}, 0, -1, false, true, 0},
		{[]byte{0xff}, 1, 1, true, true, 1},
		{[]byte{0xff}, 8, 100, true, true, 0},
	}
	for _, tt := range count {
		r := bitRange{given: tt.given, endGiven: tt.given, start: tt.start, end: tt.end, bitUnit: tt.unit}
		if got := bitCount(tt.s, r); got != tt.want {
			t.Errorf("bitCount(%x, %+v) = %d, want %d", tt.s, r, got, tt.want)
		}
	}
	pos := []struct {
		s    []byte
		bit  byte
		r    bitRange
		want int64
	}{
		{[]byte{0xff, 0xf0, 0x00}, 0, bitRange{}, 12},
		{mixed, 1, bitRange{given: true, start: 0}, 8},
		{mixed, 1, bitRange{given: true, start: 2}, 16},
		{mixed, 1, bitRange{given: true, start: 2, end: -1, endGiven: true}, 16},
		{mixed, 1, bitRange{given: true, start: 7, end: 15, endGiven: true, bitUnit: true}, 8},
		{[]byte{0, 0, 0}, 1, bitRange{}, -1},
		{[]byte{0, 0, 0}, 1, bitRange{given: true, start: 7, end: -3, endGiven: true, bitUnit: true}, -1},
		{ff, 0, bitRange{}, 16},                                                              // zero padded on the right
		{ff, 0, bitRange{given: true, start: 0}, 16},                                         // still padded: no end given
		{ff, 0, bitRange{given: true, start: 0, end: -1, endGiven: true}, -1},                // explicit end: not padded
		{ff, 0, bitRange{given: true, start: 5}, -1},                                         // start past the end: empty
		{ff, 0, bitRange{given: true, start: 0, end: 15, endGiven: true, bitUnit: true}, -1}, // BIT implies an end
		{[]byte{}, 0, bitRange{}, -1},
		{[]byte{}, 1, bitRange{}, -1},
		{[]byte{0x80}, 0, bitRange{given: true, start: 0, end: 0, endGiven: true, bitUnit: true}, -1},
		{[]byte{0x80}, 0, bitRange{given: true, start: 0, end: 1, endGiven: true, bitUnit: true}, 1},
	}
	for _, tt := range pos {
		if got := bitPos(tt.s, tt.bit, tt.r); got != tt.want {
			t.Errorf("bitPos(%x, %d, %+v) = %d, want %d", tt.s, tt.bit, tt.r, got, tt.want)
		}
	}
}

func TestAddInt64(t *testing.T) {
	for _, tt := range []struct {
		a, b int64
		ok   bool
	}{
		{1, 2, true},
		{math.MaxInt64, 0, true},
		{math.MaxInt64, 1, false},
		{math.MinInt64, -1, false},
		{math.MinInt64, 1, true},
		{math.MaxInt64, math.MinInt64, true},
		{-1, math.MinInt64, false},
	} {
		if _, ok := addInt64(tt.a, tt.b); ok != tt.ok {
			t.Errorf("addInt64(%d, %d) ok = %v", tt.a, tt.b, ok)
		}
	}
}

// Scripts and replies recorded from Redis 7.0.15 (each on an empty server).
// TTLs are whole seconds far from a rounding edge, so they are exact.
func TestStringCommands(t *testing.T) {
	runRecordedScripts(t, []struct {
		name  string
		steps []scriptStep
	}{
		{"set", []scriptStep{
			{[]string{"SET", "k", "v"}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$1\r\nv\r\n"},
			{[]string{"SET", "k", "v2", "NX"}, "$-1\r\n"},
			{[]string{"GET", "k"}, "$1\r\nv\r\n"},
			{[]string{"SET", "k", "v2", "XX"}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$2\r\nv2\r\n"},
			{[]string{"SET", "missing", "v", "XX"}, "$-1\r\n"},
			{[]string{"EXISTS", "missing"}, ":0\r\n"},
			{[]string{"SET", "k", "v3", "GET"}, "$2\r\nv2\r\n"},
			{[]string{"SET", "k2", "v", "GET"}, "$-1\r\n"},
			{[]string{"GET", "k2"}, "$1\r\nv\r\n"},
			{[]string{"SET", "k", "v", "nx", "xx"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v", "xx", "nx"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v", "ex", "10", "px", "10"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v", "EX", "0"}, "-ERR invalid expire time in 'set' command\r\n"},
			{[]string{"SET", "k", "v", "ex", "-1"}, "-ERR invalid expire time in 'set' command\r\n"},
			{[]string{"SET", "k", "v", "ex", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "k", "v", "ex"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v", "keepttl", "ex", "10"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v", "ex", "10", "keepttl"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v", "persist"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v", "nx", "nx"}, "$-1\r\n"},
			{[]string{"GET", "k"}, "$2\r\nv3\r\n"},
			{[]string{"SET", "k", "v", "get", "get", "nx"}, "$2\r\nv3\r\n"},
			{[]string{"SET", "k", "v", "ex", "10", "ex", "100"}, "+OK\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"SET", "k", "v4", "KEEPTTL"}, "+OK\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"GET", "k"}, "$2\r\nv4\r\n"},
			{[]string{"SET", "k", "v5"}, "+OK\r\n"},
			{[]string{"TTL", "k"}, ":-1\r\n"},
			{[]string{"SET", "k", "v", "exat", "1"}, "+OK\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"SET", "k", "v", "PXAT", "4102444800000"}, "+OK\r\n"},
			{[]string{"PEXPIRETIME", "k"}, ":4102444800000\r\n"},
			{[]string{"EXPIRETIME", "k"}, ":4102444800\r\n"},
			{[]string{"SET", "k", "v", "PXAT", "4102444800600"}, "+OK\r\n"},
			{[]string{"EXPIRETIME", "k"}, ":4102444801\r\n"},
			{[]string{"SET", "k", "v", "PXAT", "4102444800000"}, "+OK\r\n"},
			{[]string{"SET", "k", "v", "ex", "9223372036854775"}, "-ERR invalid expire time in 'set' command\r\n"},
			{[]string{"SET", "k", "v", "ex", "9223372036854776"}, "-ERR invalid expire time in 'set' command\r\n"},
			{[]string{"SET", "k", "v", "px", "9223372036854775807"}, "-ERR invalid expire time in 'set' command\r\n"},
			{[]string{"SET", "k", "v", "pxat", "9223372036854775807", "xx"}, "+OK\r\n"},
			{[]string{"EXPIRETIME", "k"}, ":9223372036854776\r\n"},
			{[]string{"SET", "k", "old"}, "+OK\r\n"},
			{[]string{"SET", "k", "new", "NX", "GET"}, "$3\r\nold\r\n"},
			{[]string{"GET", "k"}, "$3\r\nold\r\n"},
			{[]string{"SET", "nk", "new", "NX", "GET"}, "$-1\r\n"},
			{[]string{"GET", "nk"}, "$3\r\nnew\r\n"},
			{[]string{"SET", "k", "new2", "XX", "GET"}, "$3\r\nold\r\n"},
			{[]string{"SET", "nope", "x", "XX", "GET"}, "$-1\r\n"},
			{[]string{"EXISTS", "nope"}, ":0\r\n"},
			{[]string{"SET", "k", "v", "EXAT", "1", "GET"}, "$4\r\nnew2\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"SET", "k", "v", "Ex", "100", "nX"}, "+OK\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"SET", "k", "v", "exat", "1", "XX"}, "+OK\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"SET", "k", ""}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$0\r\n\r\n"},
			{[]string{"STRLEN", "k"}, ":0\r\n"},
		}},
		{"set over another type", []scriptStep{
			{[]string{"RPUSH", "l", "a"}, ":1\r\n"},
			{[]string{"SET", "l", "v", "NX"}, "$-1\r\n"},
			{[]string{"TYPE", "l"}, "+list\r\n"},
			{[]string{"SET", "l", "v", "NX", "GET"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SET", "l", "v", "XX"}, "+OK\r\n"},
			{[]string{"TYPE", "l"}, "+string\r\n"},
			{[]string{"SET", "gone", "v3", "XX"}, "$-1\r\n"},
			{[]string{"SET", "gone", "v3", "NX"}, "+OK\r\n"},
			{[]string{"GET", "gone"}, "$2\r\nv3\r\n"},
		}},
		{"getex", []scriptStep{
			{[]string{"GETEX", "missing", "ex", "-1"}, "$-1\r\n"},
			{[]string{"GETEX", "missing", "ex", "x"}, "$-1\r\n"},
			{[]string{"GETEX", "missing", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "k", "v"}, "+OK\r\n"},
			{[]string{"GETEX", "k"}, "$1\r\nv\r\n"},
			{[]string{"GETEX", "k", "ex", "-1"}, "-ERR invalid expire time in 'getex' command\r\n"},
			{[]string{"GETEX", "k", "ex", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"GETEX", "k", "keepttl"}, "-ERR syntax error\r\n"},
			{[]string{"GETEX", "k", "persist", "ex", "10"}, "-ERR syntax error\r\n"},
			{[]string{"GETEX", "k", "nx"}, "-ERR syntax error\r\n"},
			{[]string{"GETEX", "k", "get"}, "-ERR syntax error\r\n"},
			{[]string{"GETEX", "k", "ex"}, "-ERR syntax error\r\n"},
			{[]string{"GETEX", "k", "ex", "9223372036854775807"}, "-ERR invalid expire time in 'getex' command\r\n"},
			{[]string{"GETEX", "k", "ex", "100"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"GETEX", "k", "persist"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "k"}, ":-1\r\n"},
			{[]string{"GETEX", "k", "persist"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "k"}, ":-1\r\n"},
			{[]string{"GETEX", "k", "pxat", "4102444800000"}, "$1\r\nv\r\n"},
			{[]string{"PEXPIRETIME", "k"}, ":4102444800000\r\n"},
			{[]string{"GETEX", "k", "px", "100000"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"GETEX", "k", "exat", "1"}, "$1\r\nv\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"GETEX", "k"}, "$-1\r\n"},
		}},
		{"setnx_setex", []scriptStep{
			{[]string{"SETNX", "k", "v"}, ":1\r\n"},
			{[]string{"SETNX", "k", "w"}, ":0\r\n"},
			{[]string{"GET", "k"}, "$1\r\nv\r\n"},
			{[]string{"SETEX", "k", "100", "x"}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$1\r\nx\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"SETEX", "k", "0", "v"}, "-ERR invalid expire time in 'setex' command\r\n"},
			{[]string{"SETEX", "k", "-5", "v"}, "-ERR invalid expire time in 'setex' command\r\n"},
			{[]string{"SETEX", "k", "x", "v"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"PSETEX", "k", "-5", "v"}, "-ERR invalid expire time in 'psetex' command\r\n"},
			{[]string{"PSETEX", "k", "0", "v"}, "-ERR invalid expire time in 'psetex' command\r\n"},
			{[]string{"PSETEX", "k", "100000", "y"}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$1\r\ny\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"SETEX", "k", "9223372036854775", "v"}, "-ERR invalid expire time in 'setex' command\r\n"},
			{[]string{"PSETEX", "k", "9223372036854775807", "v"}, "-ERR invalid expire time in 'psetex' command\r\n"},
			{[]string{"GET", "k"}, "$1\r\ny\r\n"},
			{[]string{"SETNX", "k2", ""}, ":1\r\n"},
			{[]string{"EXISTS", "k2"}, ":1\r\n"},
		}},
		{"getset_getdel", []scriptStep{
			{[]string{"GETSET", "k", "v"}, "$-1\r\n"},
			{[]string{"GETSET", "k", "w"}, "$1\r\nv\r\n"},
			{[]string{"GET", "k"}, "$1\r\nw\r\n"},
			{[]string{"SET", "t", "v", "EX", "100"}, "+OK\r\n"},
			{[]string{"GETSET", "t", "w"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "t"}, ":-1\r\n"},
			{[]string{"GETDEL", "t"}, "$1\r\nw\r\n"},
			{[]string{"EXISTS", "t"}, ":0\r\n"},
			{[]string{"GETDEL", "t"}, "$-1\r\n"},
			{[]string{"GETDEL", "missing"}, "$-1\r\n"},
		}},
		{"mset", []scriptStep{
			{[]string{"MSET", "a", "1", "b", "2", "c", "3"}, "+OK\r\n"},
			{[]string{"MGET", "a", "b", "c", "d"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$-1\r\n"},
			{[]string{"MSET", "a"}, "-ERR wrong number of arguments for 'mset' command\r\n"},
			{[]string{"MSET", "a", "1", "b"}, "-ERR wrong number of arguments for 'mset' command\r\n"},
			{[]string{"MSETNX", "a", "1", "b"}, "-ERR wrong number of arguments for 'msetnx' command\r\n"},
			{[]string{"MSETNX", "a", "9", "x", "9"}, ":0\r\n"},
			{[]string{"MGET", "a", "x"}, "*2\r\n$1\r\n1\r\n$-1\r\n"},
			{[]string{"MSETNX", "x", "1", "y", "2"}, ":1\r\n"},
			{[]string{"MGET", "x", "y"}, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"},
			{[]string{"MSET", "a", "1", "a", "2"}, "+OK\r\n"},
			{[]string{"GET", "a"}, "$1\r\n2\r\n"},
			{[]string{"MSETNX", "p", "1", "p", "2"}, ":1\r\n"},
			{[]string{"GET", "p"}, "$1\r\n2\r\n"},
			{[]string{"SET", "t", "v", "EX", "100"}, "+OK\r\n"},
			{[]string{"MSET", "t", "w"}, "+OK\r\n"},
			{[]string{"TTL", "t"}, ":-1\r\n"},
			{[]string{"MGET"}, "-ERR wrong number of arguments for 'mget' command\r\n"},
		}},
		{"incr", []scriptStep{
			{[]string{"INCR", "n"}, ":1\r\n"},
			{[]string{"INCRBY", "n", "10"}, ":11\r\n"},
			{[]string{"DECR", "n"}, ":10\r\n"},
			{[]string{"DECRBY", "n", "5"}, ":5\r\n"},
			{[]string{"INCRBY", "n", "-3"}, ":2\r\n"},
			{[]string{"DECRBY", "n", "-3"}, ":5\r\n"},
			{[]string{"GET", "n"}, "$1\r\n5\r\n"},
			{[]string{"DECRBY", "n", "-9223372036854775808"}, "-ERR decrement would overflow\r\n"},
			{[]string{"INCRBY", "n", "9223372036854775808"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"INCRBY", "n", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"INCRBY", "n", "+1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"INCRBY", "n", "01"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"INCRBY", "n", " 1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"INCRBY", "n", "-0"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "big", "9223372036854775807"}, "+OK\r\n"},
			{[]string{"INCR", "big"}, "-ERR increment or decrement would overflow\r\n"},
			{[]string{"INCRBY", "big", "0"}, ":9223372036854775807\r\n"},
			{[]string{"DECRBY", "big", "-1"}, "-ERR increment or decrement would overflow\r\n"},
			{[]string{"SET", "neg", "-9223372036854775808"}, "+OK\r\n"},
			{[]string{"DECR", "neg"}, "-ERR increment or decrement would overflow\r\n"},
			{[]string{"INCRBY", "neg", "-1"}, "-ERR increment or decrement would overflow\r\n"},
			{[]string{"INCR", "neg"}, ":-9223372036854775807\r\n"},
			{[]string{"SET", "z", "007"}, "+OK\r\n"},
			{[]string{"INCR", "z"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "z", " 7"}, "+OK\r\n"},
			{[]string{"INCR", "z"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "z", "+7"}, "+OK\r\n"},
			{[]string{"INCR", "z"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "z", "-0"}, "+OK\r\n"},
			{[]string{"INCR", "z"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "z", "1.5"}, "+OK\r\n"},
			{[]string{"INCR", "z"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "z", ""}, "+OK\r\n"},
			{[]string{"INCR", "z"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "z", "123456789012345678901"}, "+OK\r\n"},
			{[]string{"INCR", "z"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SET", "t", "5", "EX", "100"}, "+OK\r\n"},
			{[]string{"INCR", "t"}, ":6\r\n"},
			{[]string{"TTL", "t"}, ":100\r\n"},
			{[]string{"DECRBY", "t", "10"}, ":-4\r\n"},
			{[]string{"TTL", "t"}, ":100\r\n"},
			{[]string{"OBJECT", "ENCODING", "t"}, "$3\r\nint\r\n"},
		}},
		{"incrbyfloat", []scriptStep{
			{[]string{"SET", "n", "10.5"}, "+OK\r\n"},
			{[]string{"INCRBYFLOAT", "n", "0.1"}, "$4\r\n10.6\r\n"},
			{[]string{"INCRBYFLOAT", "n", "0.1"}, "$4\r\n10.7\r\n"},
			{[]string{"INCRBYFLOAT", "n", "-10.7"}, "$1\r\n0\r\n"},
			{[]string{"INCRBYFLOAT", "n", "x"}, "-ERR value is not a valid float\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "1.5"}, "$3\r\n1.5\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "5.0e3"}, "$6\r\n5001.5\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "-5001.5"}, "$1\r\n0\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "-1e-30"}, "$1\r\n0\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "1e-5000"}, "-ERR value is not a valid float\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "inf"}, "-ERR increment would produce NaN or Infinity\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "-inf"}, "-ERR increment would produce NaN or Infinity\r\n"},
			{[]string{"INCRBYFLOAT", "nf", "0x10"}, "$2\r\n16\r\n"},
			{[]string{"INCRBYFLOAT", "nf", " 1"}, "-ERR value is not a valid float\r\n"},
			{[]string{"SET", "f", "abc"}, "+OK\r\n"},
			{[]string{"INCRBYFLOAT", "f", "1"}, "-ERR value is not a valid float\r\n"},
			{[]string{"INCRBYFLOAT", "f", "x"}, "-ERR value is not a valid float\r\n"},
			{[]string{"SET", "f", "1e4932"}, "+OK\r\n"},
			{[]string{"INCRBYFLOAT", "f", "1e4932"}, "-ERR increment would produce NaN or Infinity\r\n"},
			{[]string{"SET", "f", "3.0"}, "+OK\r\n"},
			{[]string{"INCRBYFLOAT", "f", "1.23456789012345678901"}, "$19\r\n4.23456789012345679\r\n"},
			{[]string{"SET", "f", "0.1"}, "+OK\r\n"},
			{[]string{"INCRBYFLOAT", "f", "0.2"}, "$3\r\n0.3\r\n"},
			{[]string{"SET", "t", "1", "EX", "100"}, "+OK\r\n"},
			{[]string{"INCRBYFLOAT", "t", "1"}, "$1\r\n2\r\n"},
			{[]string{"TTL", "t"}, ":100\r\n"},
			{[]string{"GET", "t"}, "$1\r\n2\r\n"},
			{[]string{"SET", "f", "1e300"}, "+OK\r\n"},
			{[]string{"INCRBYFLOAT", "f", "0.3"}, "$301\r\n1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144\r\n"},
		}},
		{"append_range", []scriptStep{
			{[]string{"APPEND", "k", "hello"}, ":5\r\n"},
			{[]string{"APPEND", "k", " world"}, ":11\r\n"},
			{[]string{"GET", "k"}, "$11\r\nhello world\r\n"},
			{[]string{"STRLEN", "k"}, ":11\r\n"},
			{[]string{"STRLEN", "missing"}, ":0\r\n"},
			{[]string{"GETRANGE", "k", "0", "4"}, "$5\r\nhello\r\n"},
			{[]string{"GETRANGE", "k", "-5", "-1"}, "$5\r\nworld\r\n"},
			{[]string{"GETRANGE", "k", "-1", "-5"}, "$0\r\n\r\n"},
			{[]string{"GETRANGE", "k", "0", "100"}, "$11\r\nhello world\r\n"},
			{[]string{"GETRANGE", "k", "100", "200"}, "$0\r\n\r\n"},
			{[]string{"GETRANGE", "k", "-100", "2"}, "$3\r\nhel\r\n"},
			{[]string{"GETRANGE", "missing", "0", "1"}, "$0\r\n\r\n"},
			{[]string{"GETRANGE", "k", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"GETRANGE", "missing", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SUBSTR", "k", "1", "2"}, "$2\r\nel\r\n"},
			{[]string{"GETRANGE", "k", "3", "2"}, "$0\r\n\r\n"},
			{[]string{"SET", "e", ""}, "+OK\r\n"},
			{[]string{"GETRANGE", "e", "0", "-1"}, "$0\r\n\r\n"},
			{[]string{"GETRANGE", "e", "-1", "0"}, "$0\r\n\r\n"},
			{[]string{"SETRANGE", "k", "6", "WORLD"}, ":11\r\n"},
			{[]string{"GET", "k"}, "$11\r\nhello WORLD\r\n"},
			{[]string{"SETRANGE", "k", "-1", "x"}, "-ERR offset is out of range\r\n"},
			{[]string{"SETRANGE", "k", "x", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SETRANGE", "k", "536870912", "x"}, "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"},
			{[]string{"SETRANGE", "k", "99999999999", ""}, ":11\r\n"},
			{[]string{"SETRANGE", "r", "3", "abc"}, ":6\r\n"},
			{[]string{"GET", "r"}, "$6\r\n\x00\x00\x00abc\r\n"},
			{[]string{"SETRANGE", "r2", "5", ""}, ":0\r\n"},
			{[]string{"EXISTS", "r2"}, ":0\r\n"},
			{[]string{"SETRANGE", "r2", "536870912", ""}, ":0\r\n"},
			{[]string{"SETRANGE", "k", "0", ""}, ":11\r\n"},
			{[]string{"SET", "t", "abc", "EX", "100"}, "+OK\r\n"},
			{[]string{"SETRANGE", "t", "1", "X"}, ":3\r\n"},
			{[]string{"TTL", "t"}, ":100\r\n"},
			{[]string{"GET", "t"}, "$3\r\naXc\r\n"},
			{[]string{"APPEND", "t", "Y"}, ":4\r\n"},
			{[]string{"TTL", "t"}, ":100\r\n"},
			{[]string{"GET", "t"}, "$4\r\naXcY\r\n"},
		}},
		{"bits", []scriptStep{
			{[]string{"SETBIT", "b", "7", "1"}, ":0\r\n"},
			{[]string{"GET", "b"}, "$1\r\n\x01\r\n"},
			{[]string{"SETBIT", "b", "7", "1"}, ":1\r\n"},
			{[]string{"SETBIT", "b", "7", "0"}, ":1\r\n"},
			{[]string{"STRLEN", "b"}, ":1\r\n"},
			{[]string{"SETBIT", "b", "100", "1"}, ":0\r\n"},
			{[]string{"STRLEN", "b"}, ":13\r\n"},
			{[]string{"GETBIT", "b", "100"}, ":1\r\n"},
			{[]string{"GETBIT", "b", "99"}, ":0\r\n"},
			{[]string{"GETBIT", "b", "100000"}, ":0\r\n"},
			{[]string{"GETBIT", "missing", "5"}, ":0\r\n"},
			{[]string{"SETBIT", "b", "-1", "1"}, "-ERR bit offset is not an integer or out of range\r\n"},
			{[]string{"SETBIT", "b", "4294967296", "1"}, "-ERR bit offset is not an integer or out of range\r\n"},
			{[]string{"SETBIT", "b", "4294967295", "2"}, "-ERR bit is not an integer or out of range\r\n"},
			{[]string{"SETBIT", "b", "x", "y"}, "-ERR bit offset is not an integer or out of range\r\n"},
			{[]string{"SETBIT", "b", "1", "y"}, "-ERR bit is not an integer or out of range\r\n"},
			{[]string{"SETBIT", "b", "1", "-1"}, "-ERR bit is not an integer or out of range\r\n"},
			{[]string{"GETBIT", "b", "4294967296"}, "-ERR bit offset is not an integer or out of range\r\n"},
			{[]string{"GETBIT", "b", "x"}, "-ERR bit offset is not an integer or out of range\r\n"},
			{[]string{"SETBIT", "z", "10", "0"}, ":0\r\n"},
			{[]string{"GET", "z"}, "$2\r\n\x00\x00\r\n"},
			{[]string{"SET", "s", "foobar"}, "+OK\r\n"},
			{[]string{"BITCOUNT", "s"}, ":26\r\n"},
			{[]string{"BITCOUNT", "s", "0", "0"}, ":4\r\n"},
			{[]string{"BITCOUNT", "s", "1", "1"}, ":6\r\n"},
			{[]string{"BITCOUNT", "s", "1", "1", "BYTE"}, ":6\r\n"},
			{[]string{"BITCOUNT", "s", "5", "30", "BIT"}, ":17\r\n"},
			{[]string{"BITCOUNT", "s", "0", "-1", "bit"}, ":26\r\n"},
			{[]string{"BITCOUNT", "s", "-1", "-2", "bad"}, ":0\r\n"},
			{[]string{"BITCOUNT", "s", "0", "-1", "bad"}, "-ERR syntax error\r\n"},
			{[]string{"BITCOUNT", "s", "1"}, "-ERR syntax error\r\n"},
			{[]string{"BITCOUNT", "s", "a", "b"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"BITCOUNT", "missing", "a", "b"}, ":0\r\n"},
			{[]string{"BITCOUNT", "missing", "1"}, ":0\r\n"},
			{[]string{"BITCOUNT", "s", "0", "1", "bit", "x"}, "-ERR syntax error\r\n"},
			{[]string{"SET", "m", ""}, "+OK\r\n"},
			{[]string{"BITCOUNT", "m"}, ":0\r\n"},
			{[]string{"BITCOUNT", "m", "0", "-1"}, ":0\r\n"},
			{[]string{"BITPOS", "missing", "0", "x"}, ":0\r\n"},
			{[]string{"BITPOS", "missing", "1"}, ":-1\r\n"},
			{[]string{"BITPOS", "missing", "2"}, "-ERR The bit argument must be 1 or 0.\r\n"},
			{[]string{"BITPOS", "s", "1", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"BITPOS", "s", "0", "1", "2", "3", "4"}, "-ERR syntax error\r\n"},
			{[]string{"BITPOS", "s", "0", "1", "2", "bad"}, "-ERR syntax error\r\n"},
			{[]string{"BITPOS", "s", "0", "1", "x", "bad"}, "-ERR syntax error\r\n"},
			{[]string{"BITPOS", "s", "1"}, ":1\r\n"},
			{[]string{"BITPOS", "s", "0"}, ":0\r\n"},
			{[]string{"BITPOS", "s", "1", "2"}, ":17\r\n"},
			{[]string{"BITPOS", "s", "1", "2", "-1", "BYTE"}, ":17\r\n"},
			{[]string{"BITPOS", "s", "1", "7", "15", "BIT"}, ":9\r\n"},
			{[]string{"BITPOS", "s", "0", "0", "0"}, ":0\r\n"},
			{[]string{"BITPOS", "m", "0"}, ":-1\r\n"},
			{[]string{"BITPOS", "m", "1"}, ":-1\r\n"},
			{[]string{"BITPOS", "m", "0", "0"}, ":-1\r\n"},
			{[]string{"SETBIT", "ff", "15", "1"}, ":0\r\n"},
			{[]string{"SETRANGE", "ff", "0", "\xff\xff"}, ":2\r\n"},
			{[]string{"SET", "t", "x", "EX", "100"}, "+OK\r\n"},
			{[]string{"SETBIT", "t", "100", "1"}, ":0\r\n"},
			{[]string{"TTL", "t"}, ":100\r\n"},
		}},
	})
}

// A commit that fails (here: a value larger than a small arena's segments
// accept) must leave the error as the only reply, even for commands that
// had already copied the old value into the reply, and change nothing.
func TestCommitFailureRepliesOnlyTheError(t *testing.T) {
	ks, _, err := recovery.Open(recovery.Options{Dir: t.TempDir(), SegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ks.Close(); err != nil {
			t.Error(err)
		}
	})
	c := &Client{KS: ks}
	cmdReply(t, c, "SET", "k", "old")
	huge := strings.Repeat("x", 4<<20)
	for _, cmd := range [][]string{
		{"SET", "k", huge, "GET"},
		{"GETSET", "k", huge},
		{"APPEND", "k", huge},
		{"SETRANGE", "k", "1", huge},
		{"MSET", "a", "1", "k", huge},
	} {
		got := cmdReply(t, c, cmd...)
		if !strings.HasPrefix(got, "-") {
			// The arena took the value after all: nothing to check here
			// but that the command behaved normally.
			cmdReply(t, c, "SET", "k", "old")
			cmdReply(t, c, "DEL", "a")
			continue
		}
		if strings.Count(got, "\r\n") != 1 {
			t.Errorf("%s: reply %.80q is more than the error", cmd[0], got)
		}
		if v := cmdReply(t, c, "GET", "k"); v != "$3\r\nold\r\n" {
			t.Errorf("%s: GET k = %.40q after a failed commit", cmd[0], v)
		}
		if v := cmdReply(t, c, "EXISTS", "a"); v != ":0\r\n" {
			t.Errorf("%s: a batch was applied in part", cmd[0])
		}
	}
}

// TestRawStringEncoding: a string changed in place is raw, as in Redis,
// and stays raw after a restart (the log replays its patches); a SETBIT
// or APPEND that changes nothing writes only the first time (to make the
// string raw); a string written whole again takes its bytes' encoding.
func TestRawStringEncoding(t *testing.T) {
	dir := t.TempDir()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{KS: ks}
	enc := func(c *Client, key string) string {
		t.Helper()
		return cmdReply(t, c, "OBJECT", "ENCODING", key)
	}
	const raw, embstr, integer = "$3\r\nraw\r\n", "$6\r\nembstr\r\n", "$3\r\nint\r\n"
	for _, cmd := range [][]string{
		{"SET", "app", "12"}, {"APPEND", "app", "3"},
		{"SET", "rng", "abc"}, {"SETRANGE", "rng", "1", "x"},
		{"SETRANGE", "newrng", "2", "ab"},
		{"SET", "bit", "1"}, {"SETBIT", "bit", "0", "0"}, // no bit changes
		{"SET", "bf", "ab"}, {"BITFIELD", "bf", "SET", "u8", "0", "97"}, // no byte changes
		{"SET", "src", "5"}, {"APPEND", "src", ""}, {"RENAME", "src", "dst"}, {"COPY", "dst", "cpy"},
		{"SET", "plain", "hello"}, {"SET", "num", "42"},
		{"SET", "again", "7"}, {"APPEND", "again", "7"}, {"SET", "again", "7"},
	} {
		cmdReply(t, c, cmd...)
	}
	want := map[string]string{"app": raw, "rng": raw, "newrng": raw, "bit": raw, "bf": raw, "dst": raw, "cpy": raw,
		"plain": embstr, "num": integer, "again": integer}
	check := func(c *Client, when string) {
		t.Helper()
		for key, w := range want {
			if got := enc(c, key); got != w {
				t.Errorf("%s: OBJECT ENCODING %s = %q, want %q", when, key, got, w)
			}
		}
		for key, w := range map[string]string{"app": "$3\r\n123\r\n", "rng": "$3\r\naxc\r\n", "newrng": "$4\r\n\x00\x00ab\r\n", "bit": "$1\r\n1\r\n", "cpy": "$1\r\n5\r\n"} {
			if got := cmdReply(t, c, "GET", key); got != w {
				t.Errorf("%s: GET %s = %q, want %q", when, key, got, w)
			}
		}
	}
	check(c, "live")
	// A result over 44 bytes is raw by its length: it is written whole and
	// stays in the log (not a patched string in DRAM), under patchThreshold.
	long := strings.Repeat("x", 40)
	for _, cmd := range [][]string{
		{"SET", "grow", long}, {"APPEND", "grow", "12345"},
		{"SET", "grow2", long}, {"SETRANGE", "grow2", "44", "y"},
		{"SET", "grow3", long}, {"SETBIT", "grow3", "400", "1"},
		{"SET", "grow4", "ab"}, {"APPEND", "grow4", "c"}, {"APPEND", "grow4", long + "xxx"}, // patched, then whole again
	} {
		cmdReply(t, c, cmd...)
	}
	for _, key := range []string{"grow", "grow2", "grow3", "grow4"} {
		if got := enc(c, key); got != raw {
			t.Errorf("OBJECT ENCODING %s = %q, want raw", key, got)
		}
		if _, isString, ok := ks.ObjectEncoding(0, []byte(key)); !ok || !isString {
			t.Errorf("%s: a string over 44 bytes is held as a patched string", key)
		}
	}
	if got := cmdReply(t, c, "STRLEN", "grow4"); got != ":46\r\n" {
		t.Errorf("STRLEN grow4 = %q", got)
	}
	lsn := ks.LastLSN()
	for _, cmd := range [][]string{{"SETBIT", "bit", "0", "0"}, {"BITFIELD", "bf", "SET", "u8", "0", "97"}, {"APPEND", "app", ""}} {
		cmdReply(t, c, cmd...)
		if got := ks.LastLSN(); got != lsn {
			t.Errorf("%v on a raw string that it does not change wrote a record", cmd)
			lsn = got
		}
	}
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks2, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ks2.Close()
	check(&Client{KS: ks2}, "after restart")
}

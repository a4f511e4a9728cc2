package commands

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them.
var keyCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"del", -2, FlagWrite, 1, -1, 1},
	{"unlink", -2, FlagWrite | FlagFast, 1, -1, 1},
	{"exists", -2, FlagReadonly | FlagFast, 1, -1, 1},
	{"touch", -2, FlagReadonly | FlagFast, 1, -1, 1},
	{"type", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"expire", -3, FlagWrite | FlagFast, 1, 1, 1},
	{"pexpire", -3, FlagWrite | FlagFast, 1, 1, 1},
	{"expireat", -3, FlagWrite | FlagFast, 1, 1, 1},
	{"pexpireat", -3, FlagWrite | FlagFast, 1, 1, 1},
	{"ttl", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"pttl", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"expiretime", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"pexpiretime", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"persist", 2, FlagWrite | FlagFast, 1, 1, 1},
	{"rename", 3, FlagWrite, 1, 2, 1},
	{"renamenx", 3, FlagWrite | FlagFast, 1, 2, 1},
	{"copy", -3, FlagWrite | FlagDenyOOM, 1, 2, 1},
	{"move", 3, FlagWrite | FlagFast, 1, 1, 1},
	{"swapdb", 3, FlagWrite | FlagFast, 0, 0, 0},
	{"keys", 2, FlagReadonly, 0, 0, 0},
	{"scan", -2, FlagReadonly, 0, 0, 0},
	{"randomkey", 1, FlagReadonly, 0, 0, 0},
	{"dbsize", 1, FlagReadonly | FlagFast, 0, 0, 0},
	{"flushdb", -1, FlagWrite, 0, 0, 0},
	{"flushall", -1, FlagWrite, 0, 0, 0},
	{"object", -2, 0, 0, 0, 0},
	{"object|encoding", 3, FlagReadonly, 2, 2, 1},
	{"object|freq", 3, FlagReadonly, 2, 2, 1},
	{"object|idletime", 3, FlagReadonly, 2, 2, 1},
	{"object|refcount", 3, FlagReadonly, 2, 2, 1},
	{"object|help", 2, FlagLoading | FlagStale, 0, 0, 0},
}

func TestKeyCommandInfo(t *testing.T) {
	checkCommandInfo(t, keyCommands(), keyCommandInfo)
}

func TestParseExpireFlags(t *testing.T) {
	const nxErr = "ERR NX and XX, GT or LT options at the same time are not compatible"
	const gtltErr = "ERR GT and LT options at the same time are not compatible"
	tests := []struct {
		args []string
		want expireFlags
		err  string
	}{
		{nil, expireFlags{}, ""},
		{[]string{"NX"}, expireFlags{nx: true}, ""},
		{[]string{"xx"}, expireFlags{xx: true}, ""},
		{[]string{"gt"}, expireFlags{gt: true}, ""},
		{[]string{"Lt"}, expireFlags{lt: true}, ""},
		{[]string{"xx", "gt"}, expireFlags{xx: true, gt: true}, ""},
		{[]string{"xx", "lt", "xx"}, expireFlags{xx: true, lt: true}, ""},
		{[]string{"nx", "nx"}, expireFlags{nx: true}, ""},
		{[]string{"nx", "xx"}, expireFlags{}, nxErr},
		{[]string{"gt", "nx"}, expireFlags{}, nxErr},
		{[]string{"nx", "lt"}, expireFlags{}, nxErr},
		{[]string{"gt", "lt"}, expireFlags{}, gtltErr},
		{[]string{"nx", "gt", "lt"}, expireFlags{}, nxErr},
		{[]string{"foo"}, expireFlags{}, "ERR Unsupported option foo"},
		{[]string{"nx", "xx", "Bar"}, expireFlags{}, "ERR Unsupported option Bar"},
		{[]string{"a\x00b"}, expireFlags{}, "ERR Unsupported option a"},
	}
	for _, tt := range tests {
		got, err := parseExpireFlags(bytesArgs(tt.args...))
		if errText(err) != tt.err || got != tt.want {
			t.Errorf("parseExpireFlags(%q) = %+v, %q; want %+v, %q", tt.args, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestExpireFlagsAllow(t *testing.T) {
	tests := []struct {
		f         expireFlags
		cur, when int64
		want      bool
	}{
		{expireFlags{}, 0, 5, true},
		{expireFlags{}, 9, 5, true},
		{expireFlags{nx: true}, 0, 5, true},
		{expireFlags{nx: true}, 9, 5, false},
		{expireFlags{xx: true}, 0, 5, false},
		{expireFlags{xx: true}, 9, 5, true},
		{expireFlags{gt: true}, 0, 5, false}, // no TTL is infinite: nothing is greater
		{expireFlags{gt: true}, 4, 5, true},
		{expireFlags{gt: true}, 5, 5, false},
		{expireFlags{lt: true}, 0, 5, true}, // anything is less than infinite
		{expireFlags{lt: true}, 6, 5, true},
		{expireFlags{lt: true}, 5, 5, false},
		{expireFlags{xx: true, gt: true}, 0, 5, false},
		{expireFlags{xx: true, lt: true}, 0, 5, false},
		{expireFlags{xx: true, lt: true}, 9, 5, true},
	}
	for _, tt := range tests {
		if got := tt.f.allow(tt.cur, tt.when); got != tt.want {
			t.Errorf("%+v.allow(%d, %d) = %v", tt.f, tt.cur, tt.when, got)
		}
	}
}

func TestParseExpire(t *testing.T) {
	const now = 1_700_000_000_000
	const invalid = "ERR invalid expire time in 'expire' command"
	tests := []struct {
		args     []string
		seconds  bool
		relative bool
		want     expireArgs
		err      string
	}{
		{[]string{"10"}, true, true, expireArgs{when: now + 10_000}, ""},
		{[]string{"10"}, false, true, expireArgs{when: now + 10}, ""},
		{[]string{"10"}, true, false, expireArgs{when: 10_000}, ""},
		{[]string{"10"}, false, false, expireArgs{when: 10}, ""},
		{[]string{"-5", "xx"}, true, true, expireArgs{when: now - 5000, flags: expireFlags{xx: true}}, ""},
		{[]string{"0"}, true, false, expireArgs{when: 0}, ""},
		{[]string{"-9223372036854775808"}, false, false, expireArgs{when: math.MinInt64}, ""},
		{[]string{"9223372036854775807"}, false, false, expireArgs{when: math.MaxInt64}, ""},
		{[]string{"9223372036854775807"}, false, true, expireArgs{}, invalid},
		{[]string{"9223372036854775807"}, true, true, expireArgs{}, invalid},
		{[]string{"-9223372036854775808"}, true, true, expireArgs{}, invalid},
		{[]string{"9223372036854775"}, true, false, expireArgs{when: 9223372036854775000}, ""},
		{[]string{"9223372036854776"}, true, false, expireArgs{}, invalid},
		{[]string{"x"}, true, true, expireArgs{}, ErrNotInteger},
		{[]string{"x", "nx", "xx"}, true, true, expireArgs{}, "ERR NX and XX, GT or LT options at the same time are not compatible"},
		{[]string{"10", "foo"}, true, true, expireArgs{}, "ERR Unsupported option foo"},
	}
	for _, tt := range tests {
		base := int64(0)
		if tt.relative {
			base = now
		}
		got, err := parseExpire(bytesArgs(tt.args...), tt.seconds, base, "expire")
		if errText(err) != tt.err || got != tt.want {
			t.Errorf("parseExpire(%q, seconds=%v, relative=%v) = %+v, %q; want %+v, %q",
				tt.args, tt.seconds, tt.relative, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestTTLReply(t *testing.T) {
	const now = 1_700_000_000_000
	tests := []struct {
		expireAt     int64
		ok           bool
		ms, absolute bool
		want         int64
	}{
		{0, false, false, false, -2},
		{0, false, true, true, -2},
		{0, true, false, false, -1},
		{0, true, true, true, -1},
		{now + 1499, true, false, false, 1}, // TTL rounds
		{now + 1500, true, false, false, 2},
		{now + 1500, true, true, false, 1500},
		{now - 10, true, true, false, 0},                     // not yet reclaimed: 0, never negative
		{now + 1499, true, false, true, (now + 1000) / 1000}, // EXPIRETIME rounds too
		{now + 1500, true, false, true, (now + 2000) / 1000},
		{now + 1999, true, true, true, now + 1999},
		{math.MaxInt64, true, false, true, 9223372036854776}, // Redis's answer at the limit
		{math.MaxInt64 - 499, true, false, true, 9223372036854775},
	}
	for _, tt := range tests {
		if got := ttlReply(tt.expireAt, tt.ok, now, tt.ms, tt.absolute); got != tt.want {
			t.Errorf("ttlReply(%d, %v, ms=%v, abs=%v) = %d, want %d", tt.expireAt, tt.ok, tt.ms, tt.absolute, got, tt.want)
		}
	}
}

func TestParseCopyOptions(t *testing.T) {
	tests := []struct {
		args []string
		want copyOptions
		err  string
	}{
		{nil, copyOptions{db: 3}, ""},
		{[]string{"REPLACE"}, copyOptions{db: 3, replace: true}, ""},
		{[]string{"db", "1"}, copyOptions{db: 1}, ""},
		{[]string{"replace", "DB", "0", "replace"}, copyOptions{db: 0, replace: true}, ""},
		{[]string{"db", "1", "db", "2"}, copyOptions{db: 2}, ""},
		{[]string{"db"}, copyOptions{}, ErrSyntax},
		{[]string{"foo"}, copyOptions{}, ErrSyntax},
		{[]string{"db", "16"}, copyOptions{}, ErrDBIndex},
		{[]string{"db", "-1"}, copyOptions{}, ErrDBIndex},
		{[]string{"db", "x", "foo"}, copyOptions{}, ErrNotInteger},
		{[]string{"db", "99999999999"}, copyOptions{}, "ERR value is out of range, value must between -2147483648 and 2147483647"},
	}
	for _, tt := range tests {
		got, err := parseCopyOptions(bytesArgs(tt.args...), 3)
		if errText(err) != tt.err || got != tt.want {
			t.Errorf("parseCopyOptions(%q) = %+v, %q; want %+v, %q", tt.args, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestParseSwapDB(t *testing.T) {
	tests := []struct {
		a, b         string
		want1, want2 int
		err          string
	}{
		{"0", "1", 0, 1, ""},
		{"15", "15", 15, 15, ""},
		{"x", "0", 0, 0, "ERR invalid first DB index"},
		{"0", "x", 0, 0, "ERR invalid second DB index"},
		{"99999999999", "0", 0, 0, "ERR invalid first DB index"},
		{"0", "16", 0, 0, ErrDBIndex},
		{"-1", "0", 0, 0, ErrDBIndex},
	}
	for _, tt := range tests {
		d1, d2, err := parseSwapDB([]byte(tt.a), []byte(tt.b))
		if errText(err) != tt.err || d1 != tt.want1 || d2 != tt.want2 {
			t.Errorf("parseSwapDB(%q, %q) = %d, %d, %q", tt.a, tt.b, d1, d2, errText(err))
		}
	}
}

func TestParseScan(t *testing.T) {
	tests := []struct {
		args []string
		want scanOptions
		err  string
	}{
		{[]string{"0"}, scanOptions{count: 10}, ""},
		{[]string{"17", "COUNT", "100"}, scanOptions{cursor: 17, count: 100}, ""},
		{[]string{"0", "match", "a*", "type", "string"}, scanOptions{count: 10, match: []byte("a*"), typeName: []byte("string")}, ""},
		{[]string{"0", "match", "*"}, scanOptions{count: 10}, ""}, // "*" is no filter
		{[]string{"0", "count", "5", "count", "7"}, scanOptions{count: 7}, ""},
		{[]string{"0", "count", "9223372036854775807"}, scanOptions{count: math.MaxInt32}, ""},
		{[]string{"x"}, scanOptions{}, "ERR invalid cursor"},
		{[]string{" 0"}, scanOptions{}, "ERR invalid cursor"},
		{[]string{"x", "foo"}, scanOptions{}, "ERR invalid cursor"}, // the cursor is checked first
		{[]string{"0", "count", "0"}, scanOptions{}, ErrSyntax},
		{[]string{"0", "count", "-1"}, scanOptions{}, ErrSyntax},
		{[]string{"0", "count", "x"}, scanOptions{}, ErrNotInteger},
		{[]string{"0", "count"}, scanOptions{}, ErrSyntax},
		{[]string{"0", "match"}, scanOptions{}, ErrSyntax},
		{[]string{"0", "foo", "bar"}, scanOptions{}, ErrSyntax},
		{[]string{"0", "count", "x", "match"}, scanOptions{}, ErrNotInteger},
	}
	for _, tt := range tests {
		got, err := parseScan(bytesArgs(tt.args...))
		if errText(err) != tt.err || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseScan(%q) = %+v, %q; want %+v, %q", tt.args, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestParseFlushMode(t *testing.T) {
	for _, tt := range []struct {
		args      []string
		ok, async bool
	}{
		{nil, true, false},
		{[]string{"ASYNC"}, true, true},
		{[]string{"sync"}, true, false},
		{[]string{"x"}, false, false},
		{[]string{"async", "sync"}, false, false},
	} {
		if async, err := parseFlushMode(nil, bytesArgs(tt.args...)); (err == nil) != tt.ok || async != tt.async {
			t.Errorf("parseFlushMode(%q) = %v, %v", tt.args, async, err)
		}
	}
}

func TestStringEncoding(t *testing.T) {
	for _, tt := range []struct{ val, want string }{
		{"12345", "int"},
		{"-9223372036854775808", "int"},
		{"9223372036854775808", "embstr"},
		{"007", "embstr"},
		{"hello", "embstr"},
		{"", "embstr"},
		{strings.Repeat("x", 44), "embstr"},
		{strings.Repeat("x", 45), "raw"},
		{strings.Repeat("1", 44), "embstr"},
	} {
		if got := stringEncoding([]byte(tt.val)); got != tt.want {
			t.Errorf("stringEncoding(%q) = %s, want %s", tt.val, got, tt.want)
		}
	}
}

func bytesArgs(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// Scripts and replies recorded from Redis 7.0.15 (each on an empty server).
func TestKeyCommands(t *testing.T) {
	runRecordedScripts(t, []struct {
		name  string
		steps []scriptStep
	}{
		{"del_exists", []scriptStep{
			{[]string{"MSET", "a", "1", "b", "2", "c", "3"}, "+OK\r\n"},
			{[]string{"EXISTS", "a", "a", "b", "missing"}, ":3\r\n"},
			{[]string{"TOUCH", "a", "a", "missing"}, ":2\r\n"},
			{[]string{"DEL", "a", "a", "missing"}, ":1\r\n"},
			{[]string{"EXISTS", "a"}, ":0\r\n"},
			{[]string{"UNLINK", "b", "c", "c"}, ":2\r\n"},
			{[]string{"DBSIZE"}, ":0\r\n"},
			{[]string{"DEL", "missing"}, ":0\r\n"},
			{[]string{"TYPE", "b"}, "+none\r\n"},
			{[]string{"SET", "b", "x"}, "+OK\r\n"},
			{[]string{"TYPE", "b"}, "+string\r\n"},
		}},
		{"expire", []scriptStep{
			{[]string{"SET", "k", "v"}, "+OK\r\n"},
			{[]string{"EXPIRE", "k", "10", "nx", "xx"}, "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"},
			{[]string{"EXPIRE", "k", "10", "gt", "lt"}, "-ERR GT and LT options at the same time are not compatible\r\n"},
			{[]string{"EXPIRE", "k", "10", "foo"}, "-ERR Unsupported option foo\r\n"},
			{[]string{"EXPIRE", "k", "10", "nx", "gt"}, "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"},
			{[]string{"EXPIRE", "k", "x", "nx", "xx"}, "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"},
			{[]string{"EXPIRE", "missing", "10", "nx", "xx"}, "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"},
			{[]string{"EXPIRE", "k", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"EXPIRE", "missing", "100"}, ":0\r\n"},
			{[]string{"TTL", "k"}, ":-1\r\n"},
			{[]string{"PTTL", "k"}, ":-1\r\n"},
			{[]string{"EXPIRE", "k", "100", "XX"}, ":0\r\n"},
			{[]string{"EXPIRE", "k", "100", "GT"}, ":0\r\n"},
			{[]string{"EXPIRE", "k", "100", "LT"}, ":1\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"EXPIRE", "k", "100", "NX"}, ":0\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"EXPIRE", "k", "200", "nx"}, ":0\r\n"},
			{[]string{"TTL", "k"}, ":100\r\n"},
			{[]string{"EXPIRE", "k", "50", "GT"}, ":0\r\n"},
			{[]string{"EXPIRE", "k", "150", "GT"}, ":1\r\n"},
			{[]string{"TTL", "k"}, ":150\r\n"},
			{[]string{"EXPIRE", "k", "200", "LT"}, ":0\r\n"},
			{[]string{"EXPIRE", "k", "120", "lt"}, ":1\r\n"},
			{[]string{"TTL", "k"}, ":120\r\n"},
			{[]string{"EXPIRE", "k", "300", "xx"}, ":1\r\n"},
			{[]string{"TTL", "k"}, ":300\r\n"},
			{[]string{"PEXPIRE", "k", "400000"}, ":1\r\n"},
			{[]string{"TTL", "k"}, ":400\r\n"},
			{[]string{"EXPIREAT", "k", "4102444800"}, ":1\r\n"},
			{[]string{"EXPIRETIME", "k"}, ":4102444800\r\n"},
			{[]string{"PEXPIREAT", "k", "41024448000005"}, ":1\r\n"},
			{[]string{"PEXPIRETIME", "k"}, ":41024448000005\r\n"},
			{[]string{"EXPIRETIME", "k"}, ":41024448000\r\n"},
			{[]string{"EXPIRE", "k", "9223372036854775807"}, "-ERR invalid expire time in 'expire' command\r\n"},
			{[]string{"EXPIRE", "k", "-9223372036854775808"}, "-ERR invalid expire time in 'expire' command\r\n"},
			{[]string{"PEXPIRE", "k", "9223372036854775807"}, "-ERR invalid expire time in 'pexpire' command\r\n"},
			{[]string{"PEXPIREAT", "k", "9223372036854775807"}, ":1\r\n"},
			{[]string{"PEXPIRETIME", "k"}, ":9223372036854775807\r\n"},
			{[]string{"EXPIREAT", "k", "9223372036854775"}, ":1\r\n"},
			{[]string{"EXPIREAT", "k", "9223372036854776"}, "-ERR invalid expire time in 'expireat' command\r\n"},
			{[]string{"PERSIST", "k"}, ":1\r\n"},
			{[]string{"TTL", "k"}, ":-1\r\n"},
			{[]string{"PERSIST", "k"}, ":0\r\n"},
			{[]string{"PERSIST", "missing"}, ":0\r\n"},
			{[]string{"EXPIRE", "k", "0"}, ":1\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"SET", "k", "v"}, "+OK\r\n"},
			{[]string{"EXPIRE", "k", "-1"}, ":1\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"SET", "k", "v"}, "+OK\r\n"},
			{[]string{"PEXPIREAT", "k", "1", "LT"}, ":1\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"SET", "k", "v"}, "+OK\r\n"},
			{[]string{"EXPIREAT", "k", "1", "GT"}, ":0\r\n"},
			{[]string{"EXISTS", "k"}, ":1\r\n"},
			{[]string{"EXPIRE", "k", "100", "XX"}, ":0\r\n"},
			{[]string{"TTL", "k"}, ":-1\r\n"},
			{[]string{"TTL", "missing"}, ":-2\r\n"},
			{[]string{"PTTL", "missing"}, ":-2\r\n"},
			{[]string{"EXPIRETIME", "missing"}, ":-2\r\n"},
			{[]string{"PEXPIRETIME", "missing"}, ":-2\r\n"},
			{[]string{"EXPIRETIME", "k"}, ":-1\r\n"},
		}},
		{"rename", []scriptStep{
			{[]string{"RENAME", "missing", "missing"}, "-ERR no such key\r\n"},
			{[]string{"RENAME", "missing", "x"}, "-ERR no such key\r\n"},
			{[]string{"RENAMENX", "missing", "x"}, "-ERR no such key\r\n"},
			{[]string{"SET", "k", "v", "EX", "100"}, "+OK\r\n"},
			{[]string{"RENAME", "k", "k"}, "+OK\r\n"},
			{[]string{"RENAMENX", "k", "k"}, ":0\r\n"},
			{[]string{"RENAME", "k", "k2"}, "+OK\r\n"},
			{[]string{"EXISTS", "k"}, ":0\r\n"},
			{[]string{"GET", "k2"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "k2"}, ":100\r\n"},
			{[]string{"SET", "k3", "x"}, "+OK\r\n"},
			{[]string{"RENAMENX", "k2", "k3"}, ":0\r\n"},
			{[]string{"RENAME", "k2", "k3"}, "+OK\r\n"},
			{[]string{"GET", "k3"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "k3"}, ":100\r\n"},
			{[]string{"EXISTS", "k2"}, ":0\r\n"},
			{[]string{"SET", "a", "1"}, "+OK\r\n"},
			{[]string{"RENAMENX", "k3", "a"}, ":0\r\n"},
			{[]string{"RENAMENX", "k3", "b"}, ":1\r\n"},
			{[]string{"GET", "b"}, "$1\r\nv\r\n"},
			{[]string{"EXISTS", "k3"}, ":0\r\n"},
		}},
		{"copy_move", []scriptStep{
			{[]string{"SET", "k", "v", "EX", "100"}, "+OK\r\n"},
			{[]string{"COPY", "k", "k"}, "-ERR source and destination objects are the same\r\n"},
			{[]string{"COPY", "missing", "missing"}, "-ERR source and destination objects are the same\r\n"},
			{[]string{"COPY", "k", "k2", "db"}, "-ERR syntax error\r\n"},
			{[]string{"COPY", "k", "k2", "db", "16"}, "-ERR DB index is out of range\r\n"},
			{[]string{"COPY", "k", "k2", "db", "-1"}, "-ERR DB index is out of range\r\n"},
			{[]string{"COPY", "k", "k2", "db", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"COPY", "k", "k2", "db", "99999999999"}, "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n"},
			{[]string{"COPY", "k", "k2", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"COPY", "missing", "k2"}, ":0\r\n"},
			{[]string{"COPY", "k", "k2"}, ":1\r\n"},
			{[]string{"GET", "k2"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "k2"}, ":100\r\n"},
			{[]string{"COPY", "k", "k2"}, ":0\r\n"},
			{[]string{"SET", "k", "v2"}, "+OK\r\n"},
			{[]string{"COPY", "k", "k2", "replace", "replace"}, ":1\r\n"},
			{[]string{"GET", "k2"}, "$2\r\nv2\r\n"},
			{[]string{"TTL", "k2"}, ":-1\r\n"},
			{[]string{"COPY", "k", "k", "db", "1"}, ":1\r\n"},
			{[]string{"COPY", "k", "k", "db", "1"}, ":0\r\n"},
			{[]string{"COPY", "k", "k", "db", "1", "REPLACE"}, ":1\r\n"},
			{[]string{"SELECT", "1"}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$2\r\nv2\r\n"},
			{[]string{"SELECT", "0"}, "+OK\r\n"},
			{[]string{"MOVE", "k", "0"}, "-ERR source and destination objects are the same\r\n"},
			{[]string{"MOVE", "k", "16"}, "-ERR DB index is out of range\r\n"},
			{[]string{"MOVE", "k", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"MOVE", "k", "-1"}, "-ERR DB index is out of range\r\n"},
			{[]string{"MOVE", "k", "99999999999"}, "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n"},
			{[]string{"MOVE", "missing", "1"}, ":0\r\n"},
			{[]string{"MOVE", "k", "1"}, ":0\r\n"},
			{[]string{"SET", "m", "v", "EX", "100"}, "+OK\r\n"},
			{[]string{"MOVE", "m", "1"}, ":1\r\n"},
			{[]string{"EXISTS", "m"}, ":0\r\n"},
			{[]string{"SELECT", "1"}, "+OK\r\n"},
			{[]string{"GET", "m"}, "$1\r\nv\r\n"},
			{[]string{"TTL", "m"}, ":100\r\n"},
			{[]string{"SELECT", "0"}, "+OK\r\n"},
			{[]string{"SWAPDB", "0", "x"}, "-ERR invalid second DB index\r\n"},
			{[]string{"SWAPDB", "x", "0"}, "-ERR invalid first DB index\r\n"},
			{[]string{"SWAPDB", "0", "16"}, "-ERR DB index is out of range\r\n"},
			{[]string{"SWAPDB", "-1", "0"}, "-ERR DB index is out of range\r\n"},
			{[]string{"SWAPDB", "0", "99999999999"}, "-ERR invalid second DB index\r\n"},
			{[]string{"SWAPDB", "0", "0"}, "+OK\r\n"},
			{[]string{"DBSIZE"}, ":2\r\n"},
			{[]string{"SWAPDB", "0", "1"}, "+OK\r\n"},
			{[]string{"DBSIZE"}, ":2\r\n"},
			{[]string{"GET", "m"}, "$1\r\nv\r\n"},
			{[]string{"SELECT", "1"}, "+OK\r\n"},
			{[]string{"DBSIZE"}, ":2\r\n"},
			{[]string{"SELECT", "0"}, "+OK\r\n"},
		}},
		{"flush", []scriptStep{
			{[]string{"SET", "a", "1"}, "+OK\r\n"},
			{[]string{"SELECT", "1"}, "+OK\r\n"},
			{[]string{"SET", "b", "2"}, "+OK\r\n"},
			{[]string{"SELECT", "0"}, "+OK\r\n"},
			{[]string{"FLUSHDB", "x"}, "-ERR syntax error\r\n"},
			{[]string{"FLUSHDB", "async", "sync"}, "-ERR syntax error\r\n"},
			{[]string{"FLUSHDB", "ASYNC"}, "+OK\r\n"},
			{[]string{"DBSIZE"}, ":0\r\n"},
			{[]string{"SELECT", "1"}, "+OK\r\n"},
			{[]string{"DBSIZE"}, ":1\r\n"},
			{[]string{"RANDOMKEY"}, "$1\r\nb\r\n"},
			{[]string{"FLUSHALL", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"FLUSHALL", "SYNC"}, "+OK\r\n"},
			{[]string{"DBSIZE"}, ":0\r\n"},
			{[]string{"RANDOMKEY"}, "$-1\r\n"},
			{[]string{"SELECT", "0"}, "+OK\r\n"},
			{[]string{"SET", "a", "1"}, "+OK\r\n"},
			{[]string{"FLUSHDB", "sync"}, "+OK\r\n"},
			{[]string{"SET", "a", "1"}, "+OK\r\n"},
			{[]string{"FLUSHALL"}, "+OK\r\n"},
			{[]string{"DBSIZE"}, ":0\r\n"},
			{[]string{"FLUSHDB"}, "+OK\r\n"},
		}},
		{"keys_single", []scriptStep{
			{[]string{"SET", "hello", "1"}, "+OK\r\n"},
			{[]string{"KEYS", "*"}, "*1\r\n$5\r\nhello\r\n"},
			{[]string{"KEYS", "h*o"}, "*1\r\n$5\r\nhello\r\n"},
			{[]string{"KEYS", "h?llo"}, "*1\r\n$5\r\nhello\r\n"},
			{[]string{"KEYS", "x*"}, "*0\r\n"},
			{[]string{"KEYS", "[a-h]ello"}, "*1\r\n$5\r\nhello\r\n"},
			{[]string{"RANDOMKEY"}, "$5\r\nhello\r\n"},
			{[]string{"DBSIZE"}, ":1\r\n"},
			{[]string{"SCAN", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"SCAN", " 0"}, "-ERR invalid cursor\r\n"},
			{[]string{"SCAN", "0x"}, "-ERR invalid cursor\r\n"},
			{[]string{"SCAN", "18446744073709551616"}, "-ERR invalid cursor\r\n"},
			{[]string{"SCAN", "0", "count", "0"}, "-ERR syntax error\r\n"},
			{[]string{"SCAN", "0", "count"}, "-ERR syntax error\r\n"},
			{[]string{"SCAN", "0", "count", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SCAN", "0", "foo", "bar"}, "-ERR syntax error\r\n"},
			{[]string{"SCAN", "0", "match"}, "-ERR syntax error\r\n"},
			{[]string{"SCAN", "0", "type", "foo"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"SCAN", "0", "type", "STRING"}, "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhello\r\n"},
			{[]string{"SCAN", "0", "MATCH", "h*", "COUNT", "100"}, "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhello\r\n"},
			{[]string{"SCAN", "0", "MATCH", "x*"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"SCAN", ""}, "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhello\r\n"},
			{[]string{"SCAN", "+0"}, "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhello\r\n"},
			{[]string{"SCAN", "-0"}, "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhello\r\n"},
		}},
		{"object", []scriptStep{
			{[]string{"OBJECT", "ENCODING", "missing"}, "$-1\r\n"},
			{[]string{"SET", "i", "12345"}, "+OK\r\n"},
			{[]string{"OBJECT", "ENCODING", "i"}, "$3\r\nint\r\n"},
			{[]string{"SET", "e", "hello"}, "+OK\r\n"},
			{[]string{"OBJECT", "ENCODING", "e"}, "$6\r\nembstr\r\n"},
			{[]string{"SET", "r", "123456789012345678901234567890123456789012345"}, "+OK\r\n"},
			{[]string{"OBJECT", "ENCODING", "r"}, "$3\r\nraw\r\n"},
			{[]string{"SET", "r2", "12345678901234567890123456789012345678901234"}, "+OK\r\n"},
			{[]string{"OBJECT", "ENCODING", "r2"}, "$6\r\nembstr\r\n"},
			{[]string{"SET", "n", "-9223372036854775808"}, "+OK\r\n"},
			{[]string{"OBJECT", "ENCODING", "n"}, "$3\r\nint\r\n"},
			{[]string{"SET", "n2", "9223372036854775808"}, "+OK\r\n"},
			{[]string{"OBJECT", "ENCODING", "n2"}, "$6\r\nembstr\r\n"},
			{[]string{"SET", "z", "007"}, "+OK\r\n"},
			{[]string{"OBJECT", "ENCODING", "z"}, "$6\r\nembstr\r\n"},
			{[]string{"OBJECT", "REFCOUNT", "i"}, ":1\r\n"},
			{[]string{"SET", "s", "5"}, "+OK\r\n"},
			{[]string{"OBJECT", "REFCOUNT", "s"}, ":2147483647\r\n"},
			{[]string{"SET", "s", "9999"}, "+OK\r\n"},
			{[]string{"OBJECT", "REFCOUNT", "s"}, ":2147483647\r\n"},
			{[]string{"SET", "s", "10000"}, "+OK\r\n"},
			{[]string{"OBJECT", "REFCOUNT", "s"}, ":1\r\n"},
			{[]string{"SET", "s", "-1"}, "+OK\r\n"},
			{[]string{"OBJECT", "REFCOUNT", "s"}, ":1\r\n"},
			{[]string{"OBJECT", "REFCOUNT", "e"}, ":1\r\n"},
			{[]string{"OBJECT", "REFCOUNT", "missing"}, "$-1\r\n"},
			{[]string{"OBJECT", "IDLETIME", "e"}, ":0\r\n"},
			{[]string{"OBJECT", "IDLETIME", "missing"}, "$-1\r\n"},
			{[]string{"OBJECT", "FREQ", "e"}, "-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n"},
			{[]string{"OBJECT", "FREQ", "missing"}, "$-1\r\n"},
			{[]string{"OBJECT", "HELP"}, "*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+ENCODING <key>\r\n+    Return the kind of internal representation used in order to store the value\r\n+    associated with a <key>.\r\n+FREQ <key>\r\n+    Return the access frequency index of the <key>. The returned integer is\r\n+    proportional to the logarithm of the recent access frequency of the key.\r\n+IDLETIME <key>\r\n+    Return the idle time of the <key>, that is the approximated number of\r\n+    seconds elapsed since the last access to the key.\r\n+REFCOUNT <key>\r\n+    Return the number of references of the value associated with the specified\r\n+    <key>.\r\n+HELP\r\n+    Prints this help.\r\n"},
		}},
	})
}

// KEYS and a full SCAN over several keys, whose order is not defined.
func TestKeysAndScan(t *testing.T) {
	c := newKeyspaceClient(t)
	var want []string
	for i := 0; i < 100; i++ {
		k := fmt.Sprintf("key:%03d", i)
		cmdReply(t, c, "SET", k, "v")
		if i%10 == 7 {
			want = append(want, k)
		}
	}
	cmdReply(t, c, "SET", "other", "v")
	if got := sortedBulks(t, cmdReply(t, c, "KEYS", "key:??7")); !reflect.DeepEqual(got, want) {
		t.Errorf("KEYS key:??7 = %q, want %q", got, want)
	}
	if got := sortedBulks(t, cmdReply(t, c, "KEYS", "*")); len(got) != 101 {
		t.Errorf("KEYS * returned %d keys, want 101", len(got))
	}

	// SCAN with MATCH until the cursor comes back to 0: every matching key
	// at least once, nothing else.
	seen := map[string]bool{}
	cursor := "0"
	for steps := 0; ; steps++ {
		if steps > 1000 {
			t.Fatal("SCAN does not terminate")
		}
		reply := cmdReply(t, c, "SCAN", cursor, "MATCH", "key:??7", "COUNT", "7")
		lines := strings.Split(reply, "\r\n")
		if lines[0] != "*2" || !strings.HasPrefix(lines[1], "$") {
			t.Fatalf("SCAN reply %q", reply)
		}
		cursor = lines[2]
		if _, err := strconv.ParseUint(cursor, 10, 64); err != nil {
			t.Fatalf("cursor %q", cursor)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(lines[3], "*"))
		for i := 0; i < n; i++ {
			seen[lines[5+2*i]] = true
		}
		if cursor == "0" {
			break
		}
	}
	var got []string
	for k := range seen {
		got = append(got, k)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SCAN MATCH key:??7 = %q, want %q", got, want)
	}

	// TYPE filters case-insensitively; an unknown type matches nothing.
	if got := cmdReply(t, c, "SCAN", "0", "COUNT", "1000", "TYPE", "STRING"); !strings.Contains(got, "$5\r\nother\r\n") {
		t.Errorf("SCAN TYPE STRING = %q", got)
	}
	if got := cmdReply(t, c, "SCAN", "0", "COUNT", "1000", "TYPE", "hash"); !strings.HasSuffix(got, "*0\r\n") {
		t.Errorf("SCAN TYPE hash = %q", got)
	}
}

// The TTL commands against a live clock: the exact values depend on time,
// so they are checked as ranges.
func TestTTLRanges(t *testing.T) {
	c := newKeyspaceClient(t)
	cmdReply(t, c, "SET", "k", "v", "PX", "5000")
	pttl, _ := strconv.ParseInt(strings.Trim(cmdReply(t, c, "PTTL", "k"), ":\r\n"), 10, 64)
	if pttl <= 4000 || pttl > 5000 {
		t.Errorf("PTTL = %d, want (4000, 5000]", pttl)
	}
	if got := cmdReply(t, c, "TTL", "k"); got != ":5\r\n" {
		t.Errorf("TTL = %q, want :5", got)
	}
	now := c.KS.NowMs()
	pexp, _ := strconv.ParseInt(strings.Trim(cmdReply(t, c, "PEXPIRETIME", "k"), ":\r\n"), 10, 64)
	if pexp < now+4000 || pexp > now+5000 {
		t.Errorf("PEXPIRETIME = %d, now %d", pexp, now)
	}
	// A key that expires is gone for every command.
	cmdReply(t, c, "SET", "short", "v", "PX", "20")
	for i := 0; i < 200 && cmdReply(t, c, "EXISTS", "short") != ":0\r\n"; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	for _, cmd := range [][]string{{"GET", "short"}, {"TTL", "short"}, {"EXISTS", "short"}, {"TYPE", "short"}} {
		want := map[string]string{"GET": "$-1\r\n", "TTL": ":-2\r\n", "EXISTS": ":0\r\n", "TYPE": "+none\r\n"}[cmd[0]]
		if got := cmdReply(t, c, cmd...); got != want {
			t.Errorf("%q after expiry = %q, want %q", cmd, got, want)
		}
	}
}

// A write that fails leaves nothing behind: a syntax error in any position
// changes no key.
func TestSyntaxErrorsChangeNothing(t *testing.T) {
	c := newKeyspaceClient(t)
	cmdReply(t, c, "SET", "k", "v")
	for _, cmd := range [][]string{
		{"SET", "k", "x", "NX", "XX"},
		{"SET", "k", "x", "EX", "0"},
		{"SET", "k", "x", "GET", "EX"},
		{"GETEX", "k", "EX", "-1"},
		{"SETEX", "k", "0", "x"},
		{"MSET", "k", "x", "j"},
		{"EXPIRE", "k", "10", "NX", "XX"},
		{"EXPIRE", "k", "x"},
		{"SETRANGE", "k", "-1", "x"},
		{"SETBIT", "k", "1", "2"},
		{"INCRBYFLOAT", "k", "x"},
		{"COPY", "k", "j", "DB", "16"},
		{"MOVE", "k", "16"},
		{"FLUSHDB", "x"},
		{"FLUSHALL", "x"},
		{"SWAPDB", "0", "16"},
	} {
		if got := cmdReply(t, c, cmd...); !strings.HasPrefix(got, "-") {
			t.Errorf("%q = %q, want an error", cmd, got)
		}
	}
	if got := cmdReply(t, c, "GET", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("GET k = %q", got)
	}
	if got := cmdReply(t, c, "TTL", "k"); got != ":-1\r\n" {
		t.Errorf("TTL k = %q", got)
	}
	if got := cmdReply(t, c, "DBSIZE"); got != ":1\r\n" {
		t.Errorf("DBSIZE = %q", got)
	}
}

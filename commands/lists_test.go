package commands

import (
	"strings"
	"testing"
	"time"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports
// them (the blocking and movablekeys flags and key specs are checked by
// table_test.go and the COMMAND diff script e2e/testdata/diff/command-keys.txt).
var listCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"lpush", -3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"rpush", -3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"lpushx", -3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"rpushx", -3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"lpop", -2, FlagWrite | FlagFast, 1, 1, 1},
	{"rpop", -2, FlagWrite | FlagFast, 1, 1, 1},
	{"llen", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"lindex", 3, FlagReadonly, 1, 1, 1},
	{"lrange", 4, FlagReadonly, 1, 1, 1},
	{"lset", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"lrem", 4, FlagWrite, 1, 1, 1},
	{"ltrim", 4, FlagWrite, 1, 1, 1},
	{"linsert", 5, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"lpos", -3, FlagReadonly, 1, 1, 1},
	{"lmove", 5, FlagWrite | FlagDenyOOM, 1, 2, 1},
	{"rpoplpush", 3, FlagWrite | FlagDenyOOM, 1, 2, 1},
	{"lmpop", -4, FlagWrite | FlagMovableKeys, 0, 0, 0},
	{"blpop", -3, FlagWrite | FlagNoScript | FlagBlocking, 1, -2, 1},
	{"brpop", -3, FlagWrite | FlagNoScript | FlagBlocking, 1, -2, 1},
	{"blmove", 6, FlagWrite | FlagDenyOOM | FlagNoScript | FlagBlocking, 1, 2, 1},
	{"brpoplpush", 4, FlagWrite | FlagDenyOOM | FlagNoScript | FlagBlocking, 1, 2, 1},
	{"blmpop", -5, FlagWrite | FlagBlocking | FlagMovableKeys, 0, 0, 0},
}

func TestListCommandInfo(t *testing.T) {
	checkCommandInfo(t, listCommands(), listCommandInfo)
}

func TestParseBlockTimeout(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"0", 0, ""},
		{"1", time.Second, ""},
		{"0.1", 100 * time.Millisecond, ""},
		{"0.0001", time.Millisecond, ""}, // ceil to 1 ms, not 0 (forever)
		{"-0.0001", 0, ""},               // ceil(-0.1) = 0: forever, as in Redis
		{"1.5", 1500 * time.Millisecond, ""},
		{"1e3", 1000 * time.Second, ""},
		{"1e15", maxBlockTimeout, ""},
		{"-1", 0, "ERR timeout is negative"},
		{"1e400", 0, "ERR timeout is negative"},
		{"1e20", 0, "ERR timeout is negative"},
		{"inf", 0, "ERR timeout is negative"},
		{"-inf", 0, "ERR timeout is negative"},
		{"nan", 0, "ERR timeout is not a float or out of range"},
		{"abc", 0, "ERR timeout is not a float or out of range"},
		{" 1", 0, "ERR timeout is not a float or out of range"},
		{"1 ", 0, "ERR timeout is not a float or out of range"},
		{"", 0, "ERR timeout is not a float or out of range"},
	} {
		got, err := parseBlockTimeout([]byte(tt.in))
		if got != tt.want || errText(err) != tt.err {
			t.Errorf("parseBlockTimeout(%q) = %v, %q; want %v, %q", tt.in, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestParseLMPop(t *testing.T) {
	m, err := parseLMPop(bytesArgs("2", "a", "b", "right", "count", "3"))
	if err != nil || len(m.keys) != 2 || m.left || m.count != 3 {
		t.Fatalf("parseLMPop = %+v, %v", m, err)
	}
	if m, err := parseLMPop(bytesArgs("1", "a", "LEFT")); err != nil || !m.left || m.count != 1 {
		t.Fatalf("parseLMPop default count = %+v, %v", m, err)
	}
	if _, err := parseLMPop(bytesArgs("9223372036854775807", "a", "LEFT")); errText(err) != ErrSyntax {
		t.Fatalf("huge numkeys: %v", err)
	}
}

// TestListCommands runs scripts whose replies were recorded from Redis
// 7.0.15 (each script on an empty database).
func TestListCommands(t *testing.T) {
	for _, sc := range []struct {
		name  string
		steps []scriptStep
	}{
		{"push and len", []scriptStep{
			{[]string{"LPUSH", "l", "a", "b", "c"}, ":3\r\n"},
			{[]string{"RPUSH", "l", "x", "y"}, ":5\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*5\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nx\r\n$1\r\ny\r\n"},
			{[]string{"LLEN", "l"}, ":5\r\n"},
			{[]string{"LLEN", "nokey"}, ":0\r\n"},
			{[]string{"LPUSHX", "nokey", "a"}, ":0\r\n"},
			{[]string{"RPUSHX", "nokey", "a"}, ":0\r\n"},
			{[]string{"EXISTS", "nokey"}, ":0\r\n"},
			{[]string{"LPUSHX", "l", "p", "q"}, ":7\r\n"},
			{[]string{"RPUSHX", "l", "z"}, ":8\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*8\r\n$1\r\nq\r\n$1\r\np\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n"},
			{[]string{"LPUSH", "l"}, "-ERR wrong number of arguments for 'lpush' command\r\n"},
			{[]string{"RPUSH"}, "-ERR wrong number of arguments for 'rpush' command\r\n"},
			{[]string{"LPUSHX", "l"}, "-ERR wrong number of arguments for 'lpushx' command\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"LPUSH", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"RPUSH", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LPUSHX", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"RPUSHX", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LLEN", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"TYPE", "l"}, "+list\r\n"},
		}},
		{"pop", []scriptStep{
			{[]string{"LPOP", "nokey"}, "$-1\r\n"},
			{[]string{"RPOP", "nokey"}, "$-1\r\n"},
			{[]string{"LPOP", "nokey", "2"}, "*-1\r\n"},
			{[]string{"LPOP", "nokey", "0"}, "*-1\r\n"},
			{[]string{"LPOP", "nokey", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"RPUSH", "l", "a", "b", "c", "d", "e"}, ":5\r\n"},
			{[]string{"LPOP", "l", "0"}, "*0\r\n"},
			{[]string{"LPOP", "l", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"LPOP", "l", "x"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"LPOP", "l", "1.5"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"LPOP", "l"}, "$1\r\na\r\n"},
			{[]string{"RPOP", "l"}, "$1\r\ne\r\n"},
			{[]string{"LPOP", "l", "1"}, "*1\r\n$1\r\nb\r\n"},
			{[]string{"RPOP", "l", "1"}, "*1\r\n$1\r\nd\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*1\r\n$1\r\nc\r\n"},
			{[]string{"RPOP", "l", "5"}, "*1\r\n$1\r\nc\r\n"},
			{[]string{"EXISTS", "l"}, ":0\r\n"},
			{[]string{"LPOP", "l", "1", "2"}, "-ERR wrong number of arguments for 'lpop' command\r\n"},
			{[]string{"LPOP"}, "-ERR wrong number of arguments for 'lpop' command\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LPOP", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"RPOP", "s", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LPOP", "s", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"LPOP", "nokey", "9223372036854775807"}, "*-1\r\n"},
			{[]string{"RPUSH", "l", "a", "b"}, ":2\r\n"},
			{[]string{"RPOP", "l", "9223372036854775807"}, "*2\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"EXISTS", "l"}, ":0\r\n"},
		}},
		{"index and range", []scriptStep{
			{[]string{"RPUSH", "l", "a", "b", "c", "d", "e"}, ":5\r\n"},
			{[]string{"LINDEX", "l", "0"}, "$1\r\na\r\n"},
			{[]string{"LINDEX", "l", "4"}, "$1\r\ne\r\n"},
			{[]string{"LINDEX", "l", "5"}, "$-1\r\n"},
			{[]string{"LINDEX", "l", "-1"}, "$1\r\ne\r\n"},
			{[]string{"LINDEX", "l", "-5"}, "$1\r\na\r\n"},
			{[]string{"LINDEX", "l", "-6"}, "$-1\r\n"},
			{[]string{"LINDEX", "l", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LINDEX", "nokey", "0"}, "$-1\r\n"},
			{[]string{"LINDEX", "l", "9223372036854775807"}, "$-1\r\n"},
			{[]string{"LINDEX", "l", "-9223372036854775808"}, "$-1\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"LRANGE", "l", "1", "2"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"LRANGE", "l", "-2", "-1"}, "*2\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"LRANGE", "l", "-100", "100"}, "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"LRANGE", "l", "3", "1"}, "*0\r\n"},
			{[]string{"LRANGE", "l", "5", "10"}, "*0\r\n"},
			{[]string{"LRANGE", "l", "-1", "-2"}, "*0\r\n"},
			{[]string{"LRANGE", "l", "0", "0"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"LRANGE", "l", "-9223372036854775808", "9223372036854775807"}, "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"LRANGE", "l", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LRANGE", "l", "0", "y"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LRANGE", "nokey", "0", "-1"}, "*0\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LINDEX", "s", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LRANGE", "s", "0", "-1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LINDEX", "s", "x"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		}},
		{"lset", []scriptStep{
			{[]string{"LSET", "nokey", "0", "v"}, "-ERR no such key\r\n"},
			{[]string{"LSET", "nokey", "x", "v"}, "-ERR no such key\r\n"},
			{[]string{"RPUSH", "l", "a", "b", "c"}, ":3\r\n"},
			{[]string{"LSET", "l", "0", "A"}, "+OK\r\n"},
			{[]string{"LSET", "l", "-1", "C"}, "+OK\r\n"},
			{[]string{"LSET", "l", "3", "v"}, "-ERR index out of range\r\n"},
			{[]string{"LSET", "l", "-4", "v"}, "-ERR index out of range\r\n"},
			{[]string{"LSET", "l", "x", "v"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*3\r\n$1\r\nA\r\n$1\r\nb\r\n$1\r\nC\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LSET", "s", "0", "v"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LSET", "s", "x", "v"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LSET", "l", "1"}, "-ERR wrong number of arguments for 'lset' command\r\n"},
		}},
		{"lrem", []scriptStep{
			{[]string{"RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"}, ":7\r\n"},
			{[]string{"LREM", "l", "2", "a"}, ":2\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*5\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"LREM", "l", "-1", "a"}, ":1\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n"},
			{[]string{"LREM", "l", "0", "b"}, ":2\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*2\r\n$1\r\nc\r\n$1\r\na\r\n"},
			{[]string{"LREM", "l", "0", "zz"}, ":0\r\n"},
			{[]string{"LREM", "l", "x", "a"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LREM", "nokey", "0", "a"}, ":0\r\n"},
			{[]string{"LREM", "l", "-9223372036854775808", "a"}, ":1\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*1\r\n$1\r\nc\r\n"},
			{[]string{"EXISTS", "l"}, ":1\r\n"},
			{[]string{"RPUSH", "l", "x", "x", "y"}, ":4\r\n"},
			{[]string{"LREM", "l", "0", "x"}, ":2\r\n"},
			{[]string{"LREM", "l", "1", "y"}, ":1\r\n"},
			{[]string{"EXISTS", "l"}, ":1\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LREM", "s", "0", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		}},
		{"ltrim", []scriptStep{
			{[]string{"RPUSH", "l", "a", "b", "c", "d", "e", "f"}, ":6\r\n"},
			{[]string{"LTRIM", "l", "1", "-2"}, "+OK\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"LTRIM", "l", "0", "-1"}, "+OK\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"LTRIM", "l", "-100", "100"}, "+OK\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"LTRIM", "l", "2", "2"}, "+OK\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*1\r\n$1\r\nd\r\n"},
			{[]string{"LTRIM", "l", "1", "0"}, "+OK\r\n"},
			{[]string{"EXISTS", "l"}, ":0\r\n"},
			{[]string{"LTRIM", "nokey", "0", "1"}, "+OK\r\n"},
			{[]string{"LTRIM", "nokey", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"RPUSH", "l", "a", "b", "c"}, ":3\r\n"},
			{[]string{"LTRIM", "l", "5", "10"}, "+OK\r\n"},
			{[]string{"EXISTS", "l"}, ":0\r\n"},
			{[]string{"RPUSH", "l", "a", "b", "c"}, ":3\r\n"},
			{[]string{"LTRIM", "l", "0", "y"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LTRIM", "l", "-1", "-2"}, "+OK\r\n"},
			{[]string{"EXISTS", "l"}, ":0\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LTRIM", "s", "0", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		}},
		{"linsert", []scriptStep{
			{[]string{"LINSERT", "nokey", "BEFORE", "a", "b"}, ":0\r\n"},
			{[]string{"RPUSH", "l", "a", "b", "c"}, ":3\r\n"},
			{[]string{"LINSERT", "l", "BEFORE", "a", "x"}, ":4\r\n"},
			{[]string{"LINSERT", "l", "after", "c", "y"}, ":5\r\n"},
			{[]string{"LINSERT", "l", "AFTER", "b", "z"}, ":6\r\n"},
			{[]string{"LINSERT", "l", "before", "zz", "w"}, ":-1\r\n"},
			{[]string{"LINSERT", "l", "middle", "a", "w"}, "-ERR syntax error\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*6\r\n$1\r\nx\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nz\r\n$1\r\nc\r\n$1\r\ny\r\n"},
			{[]string{"LLEN", "l"}, ":6\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LINSERT", "s", "BEFORE", "a", "b"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LINSERT", "s", "middle", "a", "b"}, "-ERR syntax error\r\n"},
			{[]string{"LINSERT", "l", "BEFORE", "a"}, "-ERR wrong number of arguments for 'linsert' command\r\n"},
		}},
		{"lpos", []scriptStep{
			{[]string{"RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"}, ":8\r\n"},
			{[]string{"LPOS", "l", "c"}, ":2\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "2"}, ":6\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "-1"}, ":7\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "-3"}, ":2\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "-4"}, "$-1\r\n"},
			{[]string{"LPOS", "l", "c", "COUNT", "0"}, "*3\r\n:2\r\n:6\r\n:7\r\n"},
			{[]string{"LPOS", "l", "c", "COUNT", "2"}, "*2\r\n:2\r\n:6\r\n"},
			{[]string{"LPOS", "l", "c", "COUNT", "2", "RANK", "-1"}, "*2\r\n:7\r\n:6\r\n"},
			{[]string{"LPOS", "l", "c", "COUNT", "0", "MAXLEN", "3"}, "*1\r\n:2\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "-1", "MAXLEN", "2"}, ":7\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "-2", "MAXLEN", "1"}, "$-1\r\n"},
			{[]string{"LPOS", "l", "c", "MAXLEN", "0"}, ":2\r\n"},
			{[]string{"LPOS", "l", "z"}, "$-1\r\n"},
			{[]string{"LPOS", "l", "z", "COUNT", "0"}, "*0\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "9"}, "$-1\r\n"},
			{[]string{"LPOS", "l", "c", "COUNT", "x"}, "-ERR COUNT can't be negative\r\n"},
			{[]string{"LPOS", "l", "c", "MAXLEN", "x"}, "-ERR MAXLEN can't be negative\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "0"}, "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n"},
			{[]string{"LPOS", "l", "c", "COUNT", "-1"}, "-ERR COUNT can't be negative\r\n"},
			{[]string{"LPOS", "l", "c", "MAXLEN", "-1"}, "-ERR MAXLEN can't be negative\r\n"},
			{[]string{"LPOS", "l", "c", "COUNT"}, "-ERR syntax error\r\n"},
			{[]string{"LPOS", "l", "c", "FOO", "1"}, "-ERR syntax error\r\n"},
			{[]string{"LPOS", "l", "c", "RANK", "1", "RANK", "2"}, ":6\r\n"},
			{[]string{"LPOS", "nokey", "x"}, "$-1\r\n"},
			{[]string{"LPOS", "nokey", "x", "COUNT", "0"}, "*0\r\n"},
			{[]string{"LPOS", "nokey", "x", "RANK", "0"}, "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n"},
			{[]string{"LPOS", "nokey", "x", "RANK", "-9223372036854775808"}, "$-1\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LPOS", "s", "x"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LPOS", "s", "x", "RANK", "0"}, "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n"},
			{[]string{"LPOS", "l"}, "-ERR wrong number of arguments for 'lpos' command\r\n"},
		}},
		{"lmove", []scriptStep{
			{[]string{"RPUSH", "a", "1", "2", "3"}, ":3\r\n"},
			{[]string{"LMOVE", "a", "b", "LEFT", "RIGHT"}, "$1\r\n1\r\n"},
			{[]string{"LMOVE", "a", "b", "RIGHT", "LEFT"}, "$1\r\n3\r\n"},
			{[]string{"LRANGE", "a", "0", "-1"}, "*1\r\n$1\r\n2\r\n"},
			{[]string{"LRANGE", "b", "0", "-1"}, "*2\r\n$1\r\n3\r\n$1\r\n1\r\n"},
			{[]string{"LMOVE", "a", "b", "up", "left"}, "-ERR syntax error\r\n"},
			{[]string{"LMOVE", "a", "b", "left", "down"}, "-ERR syntax error\r\n"},
			{[]string{"LMOVE", "nokey", "b", "left", "left"}, "$-1\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LMOVE", "nokey", "s", "left", "left"}, "$-1\r\n"},
			{[]string{"LMOVE", "a", "s", "left", "left"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LMOVE", "s", "a", "left", "left"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LRANGE", "a", "0", "-1"}, "*1\r\n$1\r\n2\r\n"},
			{[]string{"LMOVE", "a", "a", "left", "right"}, "$1\r\n2\r\n"},
			{[]string{"RPUSH", "c", "x", "y", "z"}, ":3\r\n"},
			{[]string{"LMOVE", "c", "c", "left", "right"}, "$1\r\nx\r\n"},
			{[]string{"LRANGE", "c", "0", "-1"}, "*3\r\n$1\r\ny\r\n$1\r\nz\r\n$1\r\nx\r\n"},
			{[]string{"RPOPLPUSH", "c", "c"}, "$1\r\nx\r\n"},
			{[]string{"LRANGE", "c", "0", "-1"}, "*3\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n"},
			{[]string{"RPOPLPUSH", "a", "b"}, "$1\r\n2\r\n"},
			{[]string{"EXISTS", "a"}, ":0\r\n"},
			{[]string{"RPOPLPUSH", "a", "b"}, "$-1\r\n"},
			{[]string{"LRANGE", "b", "0", "-1"}, "*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n"},
			{[]string{"RPOPLPUSH", "b", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"RPOPLPUSH", "s", "b"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"RPOPLPUSH", "nokey", "s"}, "$-1\r\n"},
		}},
		{"lmpop", []scriptStep{
			{[]string{"LMPOP", "0", "a", "LEFT"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"LMPOP", "x", "a", "LEFT"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"LMPOP", "-1", "a", "LEFT"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"LMPOP", "2", "a", "LEFT"}, "-ERR syntax error\r\n"},
			{[]string{"LMPOP", "1", "a", "UP"}, "-ERR syntax error\r\n"},
			{[]string{"LMPOP", "1", "a", "LEFT", "COUNT", "0"}, "-ERR count should be greater than 0\r\n"},
			{[]string{"LMPOP", "1", "a", "LEFT", "COUNT", "x"}, "-ERR count should be greater than 0\r\n"},
			{[]string{"LMPOP", "1", "a", "LEFT", "COUNT", "-1"}, "-ERR count should be greater than 0\r\n"},
			{[]string{"LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1"}, "-ERR syntax error\r\n"},
			{[]string{"LMPOP", "1", "a", "LEFT", "FOO"}, "-ERR syntax error\r\n"},
			{[]string{"LMPOP", "1", "a", "LEFT", "COUNT"}, "-ERR syntax error\r\n"},
			{[]string{"LMPOP", "1", "a", "LEFT"}, "*-1\r\n"},
			{[]string{"RPUSH", "b", "1", "2", "3"}, ":3\r\n"},
			{[]string{"LMPOP", "2", "a", "b", "RIGHT"}, "*2\r\n$1\r\nb\r\n*1\r\n$1\r\n3\r\n"},
			{[]string{"LMPOP", "2", "a", "b", "LEFT", "COUNT", "5"}, "*2\r\n$1\r\nb\r\n*2\r\n$1\r\n1\r\n$1\r\n2\r\n"},
			{[]string{"EXISTS", "b"}, ":0\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"RPUSH", "b", "1"}, ":1\r\n"},
			{[]string{"LMPOP", "2", "s", "b", "LEFT"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LMPOP", "2", "b", "s", "LEFT"}, "*2\r\n$1\r\nb\r\n*1\r\n$1\r\n1\r\n"},
			{[]string{"LMPOP", "2", "a", "s", "LEFT"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LMPOP", "1"}, "-ERR wrong number of arguments for 'lmpop' command\r\n"},
			{[]string{"LMPOP", "1", "a"}, "-ERR wrong number of arguments for 'lmpop' command\r\n"},
		}},
		{"blocking without waiting", []scriptStep{
			{[]string{"BLPOP", "nokey", "abc"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BLPOP", "nokey", "-1"}, "-ERR timeout is negative\r\n"},
			{[]string{"BLPOP", "nokey", "1e400"}, "-ERR timeout is negative\r\n"},
			{[]string{"BLPOP", "nokey", "inf"}, "-ERR timeout is negative\r\n"},
			{[]string{"BLPOP", "nokey", "nan"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BLPOP", "nokey", "1e20"}, "-ERR timeout is negative\r\n"},
			{[]string{"RPUSH", "l", "a", "b", "c"}, ":3\r\n"},
			{[]string{"RPUSH", "m", "x"}, ":1\r\n"},
			{[]string{"BLPOP", "l", "0"}, "*2\r\n$1\r\nl\r\n$1\r\na\r\n"},
			{[]string{"BRPOP", "l", "0"}, "*2\r\n$1\r\nl\r\n$1\r\nc\r\n"},
			{[]string{"BLPOP", "nokey", "m", "l", "0"}, "*2\r\n$1\r\nm\r\n$1\r\nx\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*1\r\n$1\r\nb\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"BLPOP", "s", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"BLPOP", "l", "s", "1"}, "*2\r\n$1\r\nl\r\n$1\r\nb\r\n"},
			{[]string{"RPUSH", "l", "b"}, ":1\r\n"},
			{[]string{"BLPOP", "nokey", "s", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"BLPOP", "s", "x"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BLMOVE", "s", "l", "left", "left", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"BLMOVE", "l", "s", "left", "left", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LPUSH", "m", "y"}, ":1\r\n"},
			{[]string{"BLMOVE", "nokey", "s", "left", "left", "x"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BLMOVE", "nokey", "m", "up", "left", "1"}, "-ERR syntax error\r\n"},
			{[]string{"BLMOVE", "m", "l", "left", "right", "0"}, "$1\r\ny\r\n"},
			{[]string{"LRANGE", "m", "0", "-1"}, "*0\r\n"},
			{[]string{"BRPOPLPUSH", "l", "m", "0"}, "$1\r\ny\r\n"},
			{[]string{"LRANGE", "l", "0", "-1"}, "*1\r\n$1\r\nb\r\n"},
			{[]string{"BLMPOP", "x", "1", "a", "LEFT"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BLMPOP", "x", "0", "a", "LEFT"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"BLMPOP", "x", "1", "a", "UP"}, "-ERR syntax error\r\n"},
			{[]string{"BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "9"}, "*2\r\n$1\r\nl\r\n*1\r\n$1\r\nb\r\n"},
			{[]string{"BLMPOP", "-1", "1", "l", "RIGHT"}, "-ERR timeout is negative\r\n"},
			{[]string{"BLMPOP", "0", "2", "nokey", "s", "LEFT"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"BLPOP", "l"}, "-ERR wrong number of arguments for 'blpop' command\r\n"},
			{[]string{"BLMPOP", "0", "1", "a"}, "-ERR wrong number of arguments for 'blmpop' command\r\n"},
			{[]string{"BLMOVE", "a", "b", "left", "left"}, "-ERR wrong number of arguments for 'blmove' command\r\n"},
		}},
		{"lookup before or after parsing", []scriptStep{
			{[]string{"LINDEX", "nokey", "x"}, "$-1\r\n"},
			{[]string{"LRANGE", "nokey", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LREM", "nokey", "x", "a"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LTRIM", "nokey", "0", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LPOS", "nokey", "x", "RANK", "y"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LSET", "nokey", "x", "v"}, "-ERR no such key\r\n"},
			{[]string{"LINSERT", "nokey", "middle", "a", "b"}, "-ERR syntax error\r\n"},
			{[]string{"LMOVE", "nokey", "b", "up", "left"}, "-ERR syntax error\r\n"},
			{[]string{"LPOP", "nokey", "x"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"LINDEX", "s", "x"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"LRANGE", "s", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LREM", "s", "x", "a"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"LINSERT", "s", "middle", "a", "b"}, "-ERR syntax error\r\n"},
			{[]string{"LMOVE", "s", "b", "up", "left"}, "-ERR syntax error\r\n"},
			{[]string{"LMPOP", "1", "s", "up"}, "-ERR syntax error\r\n"},
			{[]string{"BLPOP", "s", "x"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BLMPOP", "x", "1", "s", "LEFT"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BLMPOP", "0", "1", "s", "up"}, "-ERR syntax error\r\n"},
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			c := newKeyspaceClient(t)
			for i, st := range sc.steps {
				if got := cmdReply(t, c, st.args...); got != st.want {
					t.Errorf("step %d %q:\n got %q\nwant %q", i, st.args, got, st.want)
				}
			}
		})
	}
}

// Values larger than the small-push fast path and than a varint byte, and
// the empty value (replies as Redis 7.0.15 gives them).
func TestListBigValues(t *testing.T) {
	c := newKeyspaceClient(t)
	x, y, z, w := strings.Repeat("x", 300), strings.Repeat("y", 70000), strings.Repeat("z", 400), strings.Repeat("w", 1000)
	for i, st := range []scriptStep{
		{[]string{"RPUSH", "l", x, y, ""}, ":3\r\n"},
		{[]string{"LINDEX", "l", "0"}, bulk(x)},
		{[]string{"LINDEX", "l", "2"}, "$0\r\n\r\n"},
		{[]string{"LSET", "l", "2", z}, "+OK\r\n"},
		{[]string{"LINSERT", "l", "BEFORE", z, w}, ":4\r\n"},
		{[]string{"LRANGE", "l", "1", "-1"}, "*3\r\n" + bulk(y) + bulk(w) + bulk(z)},
		{[]string{"LREM", "l", "0", y}, ":1\r\n"},
		{[]string{"LPOP", "l", "3"}, "*3\r\n" + bulk(x) + bulk(w) + bulk(z)},
		{[]string{"EXISTS", "l"}, ":0\r\n"},
		{[]string{"RPUSH", "l", "1"}, ":1\r\n"},
		{[]string{"OBJECT", "ENCODING", "l"}, "$9\r\nquicklist\r\n"},
		{[]string{"TYPE", "l"}, "+list\r\n"},
	} {
		if got := cmdReply(t, c, st.args...); got != st.want {
			t.Errorf("step %d %.40q:\n got %.80q\nwant %.80q", i, st.args, got, st.want)
		}
	}
}

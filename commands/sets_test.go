package commands

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them
// (SINTERCARD's keys are "movablekeys" there, reported as 0 0 0).
var setCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"sadd", -3, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"srem", -3, FlagWrite | FlagFast, 1, 1, 1},
	{"sismember", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"smismember", -3, FlagReadonly | FlagFast, 1, 1, 1},
	{"smembers", 2, FlagReadonly, 1, 1, 1},
	{"scard", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"spop", -2, FlagWrite | FlagFast, 1, 1, 1},
	{"srandmember", -2, FlagReadonly, 1, 1, 1},
	{"smove", 4, FlagWrite | FlagFast, 1, 2, 1},
	{"sinter", -2, FlagReadonly, 1, -1, 1},
	{"sintercard", -3, FlagReadonly | FlagMovableKeys, 0, 0, 0},
	{"sunion", -2, FlagReadonly, 1, -1, 1},
	{"sdiff", -2, FlagReadonly, 1, -1, 1},
	{"sinterstore", -3, FlagWrite | FlagDenyOOM, 1, -1, 1},
	{"sunionstore", -3, FlagWrite | FlagDenyOOM, 1, -1, 1},
	{"sdiffstore", -3, FlagWrite | FlagDenyOOM, 1, -1, 1},
	{"sscan", -3, FlagReadonly, 1, 1, 1},
}

func TestSetCommandInfo(t *testing.T) {
	checkCommandInfo(t, setCommands(), setCommandInfo)
	for _, cmd := range setCommands() {
		if cmd.Group != "set" || cmd.Since == "" || cmd.Summary == "" || cmd.Run == nil {
			t.Errorf("incomplete entry %+v", cmd)
		}
	}
}

// setUnorderedRESP puts the element lines of a flat array reply in order, so
// that replies whose order Redis does not define compare equal.
func setUnorderedRESP(reply string) string {
	lines := strings.Split(strings.TrimSuffix(reply, "\r\n"), "\r\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "*") {
		return reply
	}
	var elems []string
	for i := 1; i+1 < len(lines); i += 2 {
		elems = append(elems, lines[i]+"\r\n"+lines[i+1])
	}
	sort.Strings(elems)
	return lines[0] + "\r\n" + strings.Join(elems, "\r\n") + "\r\n"
}

// Scripts and replies recorded from Redis 7.0.15 (each on an empty server).
// Sets of integers are intset-encoded there, so their replies are in
// ascending order and compared exactly.
func TestSetCommands(t *testing.T) {
	runRecordedScripts(t, []struct {
		name  string
		steps []scriptStep
	}{
		{"basic", []scriptStep{
			{[]string{"SADD", "s", "3", "1", "2"}, ":3\r\n"},
			{[]string{"SADD", "s", "2", "3", "4", "4"}, ":1\r\n"},
			{[]string{"SCARD", "s"}, ":4\r\n"},
			{[]string{"SMEMBERS", "s"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SISMEMBER", "s", "4"}, ":1\r\n"},
			{[]string{"SISMEMBER", "s", "9"}, ":0\r\n"},
			{[]string{"SISMEMBER", "missing", "1"}, ":0\r\n"},
			{[]string{"SMISMEMBER", "s", "1", "9", "1", "4"}, "*4\r\n:1\r\n:0\r\n:1\r\n:1\r\n"},
			{[]string{"SMISMEMBER", "missing", "a", "b"}, "*2\r\n:0\r\n:0\r\n"},
			{[]string{"SREM", "s", "4", "4", "9"}, ":1\r\n"},
			{[]string{"SREM", "s", "9"}, ":0\r\n"},
			{[]string{"SREM", "missing", "a"}, ":0\r\n"},
			{[]string{"SMEMBERS", "s"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"SCARD", "missing"}, ":0\r\n"},
			{[]string{"SMEMBERS", "missing"}, "*0\r\n"},
			{[]string{"TYPE", "s"}, "+set\r\n"},
			{[]string{"SREM", "s", "1", "2", "3"}, ":3\r\n"},
			{[]string{"EXISTS", "s"}, ":0\r\n"},
			{[]string{"TYPE", "s"}, "+none\r\n"},
			{[]string{"SADD", "s"}, "-ERR wrong number of arguments for 'sadd' command\r\n"},
			{[]string{"SREM", "s"}, "-ERR wrong number of arguments for 'srem' command\r\n"},
			{[]string{"SISMEMBER", "s"}, "-ERR wrong number of arguments for 'sismember' command\r\n"},
			{[]string{"SISMEMBER", "s", "a", "b"}, "-ERR wrong number of arguments for 'sismember' command\r\n"},
			{[]string{"SMISMEMBER", "s"}, "-ERR wrong number of arguments for 'smismember' command\r\n"},
			{[]string{"SMEMBERS"}, "-ERR wrong number of arguments for 'smembers' command\r\n"},
			{[]string{"SMEMBERS", "a", "b"}, "-ERR wrong number of arguments for 'smembers' command\r\n"},
			{[]string{"SCARD"}, "-ERR wrong number of arguments for 'scard' command\r\n"},
			{[]string{"SADD", "h", "a"}, ":1\r\n"},
			{[]string{"SCARD", "h"}, ":1\r\n"},
			{[]string{"SMEMBERS", "h"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"SADD", "n", "-5", "10", "0", "-0", "007", "9223372036854775807", "-9223372036854775808"}, ":7\r\n"},
			{[]string{"~SMEMBERS", "n"}, "*7\r\n$1\r\n0\r\n$2\r\n-0\r\n$19\r\n9223372036854775807\r\n$3\r\n007\r\n$2\r\n10\r\n$2\r\n-5\r\n$20\r\n-9223372036854775808\r\n"},
			{[]string{"SADD", "i", "10", "-3", "0", "9223372036854775807", "-9223372036854775808", "5"}, ":6\r\n"},
			{[]string{"SMEMBERS", "i"}, "*6\r\n$20\r\n-9223372036854775808\r\n$2\r\n-3\r\n$1\r\n0\r\n$1\r\n5\r\n$2\r\n10\r\n$19\r\n9223372036854775807\r\n"},
			{[]string{"SADD", "e", ""}, ":1\r\n"},
			{[]string{"SMEMBERS", "e"}, "*1\r\n$0\r\n\r\n"},
			{[]string{"SISMEMBER", "e", ""}, ":1\r\n"},
		}},
		{"wrongtype", []scriptStep{
			{[]string{"SET", "str", "x"}, "+OK\r\n"},
			{[]string{"SADD", "str", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SREM", "str", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SISMEMBER", "str", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SMISMEMBER", "str", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SMEMBERS", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SCARD", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SPOP", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SPOP", "str", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SPOP", "str", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SRANDMEMBER", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SRANDMEMBER", "str", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SMOVE", "str", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SADD", "s", "a"}, ":1\r\n"},
			{[]string{"SMOVE", "s", "str", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SMOVE", "missing", "str", "a"}, ":0\r\n"},
			{[]string{"SINTER", "s", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SINTER", "missing", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SINTER", "str", "missing"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SUNION", "s", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SDIFF", "missing", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SDIFF", "s", "missing", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SINTERCARD", "2", "missing", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SINTERSTORE", "d", "s", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SUNIONSTORE", "d", "s", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SDIFFSTORE", "d", "missing", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"EXISTS", "d"}, ":0\r\n"},
			{[]string{"SSCAN", "str", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SSCAN", "str", "0", "foo"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SINTERSTORE", "str", "s"}, ":1\r\n"},
			{[]string{"GET", "str"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"TYPE", "str"}, "+set\r\n"},
			{[]string{"SMEMBERS", "str"}, "*1\r\n$1\r\na\r\n"},
		}},
		{"spop", []scriptStep{
			{[]string{"SPOP", "missing"}, "$-1\r\n"},
			{[]string{"SPOP", "missing", "3"}, "*0\r\n"},
			{[]string{"SPOP", "missing", "0"}, "*0\r\n"},
			{[]string{"SPOP", "missing", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"SPOP", "missing", "x"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"SADD", "s", "1", "2", "3"}, ":3\r\n"},
			{[]string{"SPOP", "s", "0"}, "*0\r\n"},
			{[]string{"SPOP", "s", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"SPOP", "s", "x"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"SPOP", "s", "1", "2"}, "-ERR syntax error\r\n"},
			{[]string{"SPOP", "s", "3.0"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"SPOP", "s", "5"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"EXISTS", "s"}, ":0\r\n"},
			{[]string{"SADD", "s", "1", "2", "3"}, ":3\r\n"},
			{[]string{"SPOP", "s", "3"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"EXISTS", "s"}, ":0\r\n"},
			{[]string{"SADD", "one", "a"}, ":1\r\n"},
			{[]string{"SPOP", "one"}, "$1\r\na\r\n"},
			{[]string{"EXISTS", "one"}, ":0\r\n"},
			{[]string{"SADD", "one", "a"}, ":1\r\n"},
			{[]string{"SPOP", "one", "1"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"EXISTS", "one"}, ":0\r\n"},
			{[]string{"SADD", "one", "a"}, ":1\r\n"},
			{[]string{"SPOP", "one", "9223372036854775807"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"SPOP", "one", "9223372036854775808"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"SADD", "s", "1", "2", "3"}, ":3\r\n"},
			{[]string{"SCARD", "s"}, ":3\r\n"},
		}},
		{"srand", []scriptStep{
			{[]string{"SRANDMEMBER", "missing"}, "$-1\r\n"},
			{[]string{"SRANDMEMBER", "missing", "5"}, "*0\r\n"},
			{[]string{"SRANDMEMBER", "missing", "-5"}, "*0\r\n"},
			{[]string{"SRANDMEMBER", "missing", "0"}, "*0\r\n"},
			{[]string{"SRANDMEMBER", "missing", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SADD", "s", "1", "2", "3"}, ":3\r\n"},
			{[]string{"SRANDMEMBER", "s", "0"}, "*0\r\n"},
			{[]string{"SRANDMEMBER", "s", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SRANDMEMBER", "s", "1", "2"}, "-ERR syntax error\r\n"},
			{[]string{"SRANDMEMBER", "s", "3"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"SRANDMEMBER", "s", "10"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"SRANDMEMBER", "s", "9223372036854775807"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"SRANDMEMBER", "s", "-9223372036854775808"}, "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"},
			{[]string{"SRANDMEMBER", "s", "9223372036854775808"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SADD", "one", "a"}, ":1\r\n"},
			{[]string{"SRANDMEMBER", "one"}, "$1\r\na\r\n"},
			{[]string{"SRANDMEMBER", "one", "-3"}, "*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n"},
			{[]string{"SRANDMEMBER", "one", "1"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"SRANDMEMBER", "one", "5"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"SCARD", "one"}, ":1\r\n"},
		}},
		{"smove", []scriptStep{
			{[]string{"SADD", "s", "1", "2", "3"}, ":3\r\n"},
			{[]string{"SMOVE", "s", "s", "1"}, ":1\r\n"},
			{[]string{"SMOVE", "s", "s", "9"}, ":0\r\n"},
			{[]string{"SMOVE", "missing", "s", "1"}, ":0\r\n"},
			{[]string{"SMOVE", "s", "d", "9"}, ":0\r\n"},
			{[]string{"EXISTS", "d"}, ":0\r\n"},
			{[]string{"SMOVE", "s", "d", "1"}, ":1\r\n"},
			{[]string{"SMEMBERS", "s"}, "*2\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"SMEMBERS", "d"}, "*1\r\n$1\r\n1\r\n"},
			{[]string{"SADD", "d", "2"}, ":1\r\n"},
			{[]string{"SMOVE", "s", "d", "2"}, ":1\r\n"},
			{[]string{"SMEMBERS", "s"}, "*1\r\n$1\r\n3\r\n"},
			{[]string{"SMEMBERS", "d"}, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"},
			{[]string{"SMOVE", "s", "d", "3"}, ":1\r\n"},
			{[]string{"EXISTS", "s"}, ":0\r\n"},
			{[]string{"SMEMBERS", "d"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"SMOVE", "s", "d"}, "-ERR wrong number of arguments for 'smove' command\r\n"},
			{[]string{"SMOVE", "s", "d", "1", "2"}, "-ERR wrong number of arguments for 'smove' command\r\n"},
			{[]string{"SADD", "x", "a"}, ":1\r\n"},
			{[]string{"EXPIRE", "x", "100"}, ":1\r\n"},
			{[]string{"SMOVE", "d", "x", "1"}, ":1\r\n"},
			{[]string{"TTL", "x"}, ":100\r\n"},
			{[]string{"SCARD", "x"}, ":2\r\n"},
		}},
		{"algebra", []scriptStep{
			{[]string{"SADD", "a", "1", "2", "3", "4"}, ":4\r\n"},
			{[]string{"SADD", "b", "3", "4", "5"}, ":3\r\n"},
			{[]string{"SADD", "c", "4", "5", "6"}, ":3\r\n"},
			{[]string{"SINTER", "a", "b"}, "*2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SINTER", "a", "b", "c"}, "*1\r\n$1\r\n4\r\n"},
			{[]string{"SINTER", "a", "missing"}, "*0\r\n"},
			{[]string{"SINTER", "missing"}, "*0\r\n"},
			{[]string{"SINTER", "a"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SINTER", "a", "a"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SUNION", "a", "b", "c"}, "*6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"},
			{[]string{"SUNION", "missing"}, "*0\r\n"},
			{[]string{"SUNION", "missing", "a"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SDIFF", "a", "b"}, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"},
			{[]string{"SDIFF", "a", "b", "c"}, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"},
			{[]string{"SDIFF", "a", "missing"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SDIFF", "missing", "a"}, "*0\r\n"},
			{[]string{"SDIFF", "a", "a"}, "*0\r\n"},
			{[]string{"SINTER"}, "-ERR wrong number of arguments for 'sinter' command\r\n"},
			{[]string{"SUNION"}, "-ERR wrong number of arguments for 'sunion' command\r\n"},
			{[]string{"SDIFF"}, "-ERR wrong number of arguments for 'sdiff' command\r\n"},
			{[]string{"SINTERCARD", "1", "a"}, ":4\r\n"},
			{[]string{"SINTERCARD", "2", "a", "b"}, ":2\r\n"},
			{[]string{"SINTERCARD", "3", "a", "b", "c"}, ":1\r\n"},
			{[]string{"SINTERCARD", "2", "a", "missing"}, ":0\r\n"},
			{[]string{"SINTERCARD", "1", "a", "LIMIT", "2"}, ":2\r\n"},
			{[]string{"SINTERCARD", "1", "a", "limit", "0"}, ":4\r\n"},
			{[]string{"SINTERCARD", "1", "a", "limit", "1", "limit", "3"}, ":3\r\n"},
			{[]string{"SINTERCARD", "0", "a"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"SINTERCARD", "-1", "a"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"SINTERCARD", "x", "a"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"SINTERCARD", "99999999999999999999", "a"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"SINTERCARD", "2147483648", "a"}, "-ERR Number of keys can't be greater than number of args\r\n"},
			{[]string{"SINTERCARD", "3", "a", "b"}, "-ERR Number of keys can't be greater than number of args\r\n"},
			{[]string{"SINTERCARD", "1", "a", "limit", "-1"}, "-ERR LIMIT can't be negative\r\n"},
			{[]string{"SINTERCARD", "1", "a", "limit", "x"}, "-ERR LIMIT can't be negative\r\n"},
			{[]string{"SINTERCARD", "1", "a", "limit"}, "-ERR syntax error\r\n"},
			{[]string{"SINTERCARD", "1", "a", "foo", "1"}, "-ERR syntax error\r\n"},
			{[]string{"SINTERCARD", "1", "a", "limit", "1", "extra"}, "-ERR syntax error\r\n"},
			{[]string{"SINTERCARD", "1", "a", "limit", "99999999999999999999"}, "-ERR LIMIT can't be negative\r\n"},
			{[]string{"SINTERCARD", "1"}, "-ERR wrong number of arguments for 'sintercard' command\r\n"},
			{[]string{"SINTERCARD", "2", "a", "b", "c"}, "-ERR syntax error\r\n"},
			{[]string{"SINTERSTORE", "d", "a", "b"}, ":2\r\n"},
			{[]string{"SMEMBERS", "d"}, "*2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SUNIONSTORE", "d", "a", "b"}, ":5\r\n"},
			{[]string{"SMEMBERS", "d"}, "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n"},
			{[]string{"SDIFFSTORE", "d", "a", "b"}, ":2\r\n"},
			{[]string{"SMEMBERS", "d"}, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n"},
			{[]string{"SINTERSTORE", "d", "a", "missing"}, ":0\r\n"},
			{[]string{"EXISTS", "d"}, ":0\r\n"},
			{[]string{"SET", "d", "str"}, "+OK\r\n"},
			{[]string{"EXPIRE", "d", "100"}, ":1\r\n"},
			{[]string{"SUNIONSTORE", "d", "a"}, ":4\r\n"},
			{[]string{"TYPE", "d"}, "+set\r\n"},
			{[]string{"TTL", "d"}, ":-1\r\n"},
			{[]string{"SMEMBERS", "d"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SDIFFSTORE", "d", "a", "a"}, ":0\r\n"},
			{[]string{"EXISTS", "d"}, ":0\r\n"},
			{[]string{"SDIFFSTORE", "d", "missing"}, ":0\r\n"},
			{[]string{"SINTERSTORE", "a", "a", "b"}, ":2\r\n"},
			{[]string{"SMEMBERS", "a"}, "*2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
			{[]string{"SUNIONSTORE", "b", "b", "c"}, ":4\r\n"},
			{[]string{"SMEMBERS", "b"}, "*4\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"},
			{[]string{"SINTERSTORE", "d"}, "-ERR wrong number of arguments for 'sinterstore' command\r\n"},
			{[]string{"SUNIONSTORE", "d"}, "-ERR wrong number of arguments for 'sunionstore' command\r\n"},
			{[]string{"SDIFFSTORE", "d"}, "-ERR wrong number of arguments for 'sdiffstore' command\r\n"},
			{[]string{"SADD", "h", "x", "1"}, ":2\r\n"},
			{[]string{"SINTER", "h", "a"}, "*0\r\n"},
			{[]string{"SINTERCARD", "2", "h", "b"}, ":0\r\n"},
		}},
		{"sscan", []scriptStep{
			{[]string{"SSCAN", "missing", "0"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"SSCAN", "missing", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"SSCAN", "missing", "0", "foo"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"SSCAN", "missing", "0", "COUNT", "0"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"SADD", "s", "3", "1", "2", "10", "20"}, ":5\r\n"},
			{[]string{"SSCAN", "s", "0"}, "*2\r\n$1\r\n0\r\n*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n$2\r\n20\r\n"},
			{[]string{"SSCAN", "s", "0", "COUNT", "1"}, "*2\r\n$1\r\n0\r\n*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n$2\r\n20\r\n"},
			{[]string{"SSCAN", "s", "7", "COUNT", "1"}, "*2\r\n$1\r\n0\r\n*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n$2\r\n20\r\n"},
			{[]string{"SSCAN", "s", "0", "MATCH", "1*"}, "*2\r\n$1\r\n0\r\n*2\r\n$1\r\n1\r\n$2\r\n10\r\n"},
			{[]string{"SSCAN", "s", "0", "match", "1*", "count", "100"}, "*2\r\n$1\r\n0\r\n*2\r\n$1\r\n1\r\n$2\r\n10\r\n"},
			{[]string{"SSCAN", "s", "0", "MATCH"}, "-ERR syntax error\r\n"},
			{[]string{"SSCAN", "s", "0", "COUNT"}, "-ERR syntax error\r\n"},
			{[]string{"SSCAN", "s", "0", "COUNT", "0"}, "-ERR syntax error\r\n"},
			{[]string{"SSCAN", "s", "0", "COUNT", "-1"}, "-ERR syntax error\r\n"},
			{[]string{"SSCAN", "s", "0", "COUNT", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"SSCAN", "s", "0", "TYPE", "string"}, "-ERR syntax error\r\n"},
			{[]string{"SSCAN", "s", "0", "foo", "bar"}, "-ERR syntax error\r\n"},
			{[]string{"SSCAN", "s", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"SSCAN", "s", "-1"}, "*2\r\n$1\r\n0\r\n*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n$2\r\n20\r\n"},
			{[]string{"SSCAN", "s", "18446744073709551616"}, "-ERR invalid cursor\r\n"},
			{[]string{"SSCAN", "s"}, "-ERR wrong number of arguments for 'sscan' command\r\n"},
			{[]string{"SADD", "one", "hello"}, ":1\r\n"},
			{[]string{"SSCAN", "one", "0"}, "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhello\r\n"},
			{[]string{"SSCAN", "one", "0", "MATCH", "h*"}, "*2\r\n$1\r\n0\r\n*1\r\n$5\r\nhello\r\n"},
			{[]string{"SSCAN", "one", "0", "MATCH", "x*"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
		}},
		{"generic", []scriptStep{
			{[]string{"SADD", "s", "3", "1", "2"}, ":3\r\n"},
			{[]string{"SADD", "w", "b", "a"}, ":2\r\n"},
			{[]string{"RENAME", "s", "s2"}, "+OK\r\n"},
			{[]string{"SMEMBERS", "s2"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"EXISTS", "s"}, ":0\r\n"},
			{[]string{"COPY", "s2", "s3"}, ":1\r\n"},
			{[]string{"SMEMBERS", "s3"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"SADD", "s3", "4"}, ":1\r\n"},
			{[]string{"SCARD", "s2"}, ":3\r\n"},
			{[]string{"COPY", "w", "w2", "DB", "1"}, ":1\r\n"},
			{[]string{"MOVE", "s3", "2"}, ":1\r\n"},
			{[]string{"EXISTS", "s3"}, ":0\r\n"},
			{[]string{"EXPIRE", "s2", "100"}, ":1\r\n"},
			{[]string{"TTL", "s2"}, ":100\r\n"},
			{[]string{"RENAME", "s2", "s4"}, "+OK\r\n"},
			{[]string{"TTL", "s4"}, ":100\r\n"},
			{[]string{"SMEMBERS", "s4"}, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
			{[]string{"PERSIST", "s4"}, ":1\r\n"},
			{[]string{"TTL", "s4"}, ":-1\r\n"},
			{[]string{"TYPE", "s4"}, "+set\r\n"},
			{[]string{"DEL", "s4", "w"}, ":2\r\n"},
			{[]string{"EXISTS", "s4", "w"}, ":0\r\n"},
			{[]string{"SMEMBERS", "w"}, "*0\r\n"},
			{[]string{"SELECT", "1"}, "+OK\r\n"},
			{[]string{"~SMEMBERS", "w2"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
			{[]string{"SELECT", "2"}, "+OK\r\n"},
			{[]string{"SMEMBERS", "s3"}, "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
		}},
		{"words", []scriptStep{
			{[]string{"SADD", "a", "apple", "banana", "cherry", "date"}, ":4\r\n"},
			{[]string{"SADD", "b", "cherry", "date", "elder", "fig"}, ":4\r\n"},
			{[]string{"SADD", "c", "date", "fig", "grape"}, ":3\r\n"},
			{[]string{"~SINTER", "a", "b"}, "*2\r\n$4\r\ndate\r\n$6\r\ncherry\r\n"},
			{[]string{"~SINTER", "a", "b", "c"}, "*1\r\n$4\r\ndate\r\n"},
			{[]string{"~SUNION", "a", "b", "c"}, "*7\r\n$5\r\nelder\r\n$3\r\nfig\r\n$5\r\ngrape\r\n$4\r\ndate\r\n$6\r\ncherry\r\n$6\r\nbanana\r\n$5\r\napple\r\n"},
			{[]string{"~SDIFF", "a", "b"}, "*2\r\n$5\r\napple\r\n$6\r\nbanana\r\n"},
			{[]string{"~SDIFF", "a", "b", "c"}, "*2\r\n$5\r\napple\r\n$6\r\nbanana\r\n"},
			{[]string{"~SDIFF", "b", "a", "c"}, "*1\r\n$5\r\nelder\r\n"},
			{[]string{"SINTERCARD", "2", "a", "b"}, ":2\r\n"},
			{[]string{"SINTERCARD", "2", "a", "b", "LIMIT", "1"}, ":1\r\n"},
			{[]string{"SINTERSTORE", "d", "a", "b"}, ":2\r\n"},
			{[]string{"~SMEMBERS", "d"}, "*2\r\n$4\r\ndate\r\n$6\r\ncherry\r\n"},
			{[]string{"SUNIONSTORE", "d", "a", "c"}, ":6\r\n"},
			{[]string{"~SMEMBERS", "d"}, "*6\r\n$3\r\nfig\r\n$4\r\ndate\r\n$5\r\ngrape\r\n$6\r\ncherry\r\n$6\r\nbanana\r\n$5\r\napple\r\n"},
			{[]string{"SDIFFSTORE", "d", "a", "c"}, ":3\r\n"},
			{[]string{"~SMEMBERS", "d"}, "*3\r\n$5\r\napple\r\n$6\r\nbanana\r\n$6\r\ncherry\r\n"},
			{[]string{"SMOVE", "a", "b", "apple"}, ":1\r\n"},
			{[]string{"~SMEMBERS", "a"}, "*3\r\n$4\r\ndate\r\n$6\r\ncherry\r\n$6\r\nbanana\r\n"},
			{[]string{"~SMEMBERS", "b"}, "*5\r\n$5\r\nelder\r\n$4\r\ndate\r\n$3\r\nfig\r\n$6\r\ncherry\r\n$5\r\napple\r\n"},
			{[]string{"SREM", "b", "apple", "cherry", "nothing"}, ":2\r\n"},
			{[]string{"~SMEMBERS", "b"}, "*3\r\n$5\r\nelder\r\n$3\r\nfig\r\n$4\r\ndate\r\n"},
			{[]string{"SMISMEMBER", "b", "date", "apple", "elder"}, "*3\r\n:1\r\n:0\r\n:1\r\n"},
			{[]string{"~SRANDMEMBER", "c", "3"}, "*3\r\n$5\r\ngrape\r\n$4\r\ndate\r\n$3\r\nfig\r\n"},
			{[]string{"~SRANDMEMBER", "c", "100"}, "*3\r\n$5\r\ngrape\r\n$4\r\ndate\r\n$3\r\nfig\r\n"},
			{[]string{"~SPOP", "c", "3"}, "*3\r\n$4\r\ndate\r\n$5\r\ngrape\r\n$3\r\nfig\r\n"},
			{[]string{"EXISTS", "c"}, ":0\r\n"},
			{[]string{"SADD", "m", "1", "2", "x"}, ":3\r\n"},
			{[]string{"~SUNION", "m", "a"}, "*6\r\n$1\r\n2\r\n$1\r\nx\r\n$1\r\n1\r\n$4\r\ndate\r\n$6\r\nbanana\r\n$6\r\ncherry\r\n"},
			{[]string{"~SINTER", "m", "m"}, "*3\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\n1\r\n"},
		}},
	})
}

// setMembersOf parses a flat array reply of bulk strings.
func setMembersOf(t *testing.T, reply string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(reply, "\r\n"), "\r\n")
	if !strings.HasPrefix(lines[0], "*") {
		t.Fatalf("not an array: %q", reply)
	}
	n, _ := strconv.Atoi(lines[0][1:])
	var out []string
	for i := 2; i < len(lines); i += 2 {
		out = append(out, lines[i])
	}
	if len(out) != n {
		t.Fatalf("array of %d with %d elements: %q", n, len(out), reply)
	}
	return out
}

// SPOP and SRANDMEMBER on a hashtable-encoded set, where the choice is
// random: counts, distinctness, repeats, and that SPOP removes exactly
// what it returned.
func TestSetRandomCommands(t *testing.T) {
	c := newKeyspaceClient(t)
	all := map[string]bool{}
	args := []string{"SADD", "s"}
	for i := 0; i < 200; i++ {
		m := fmt.Sprintf("member-%d", i)
		all[m] = true
		args = append(args, m)
	}
	if got := cmdReply(t, c, args...); got != ":200\r\n" {
		t.Fatalf("SADD = %q", got)
	}
	for _, count := range []int{1, 5, 199, 200, 500} {
		got := setMembersOf(t, cmdReply(t, c, "SRANDMEMBER", "s", strconv.Itoa(count)))
		seen := map[string]bool{}
		for _, m := range got {
			if !all[m] || seen[m] {
				t.Fatalf("SRANDMEMBER %d: %q foreign or repeated", count, m)
			}
			seen[m] = true
		}
		if len(got) != min(count, 200) {
			t.Errorf("SRANDMEMBER %d returned %d", count, len(got))
		}
	}
	got := setMembersOf(t, cmdReply(t, c, "SRANDMEMBER", "s", "-1000"))
	seen := map[string]int{}
	for _, m := range got {
		if !all[m] {
			t.Fatalf("SRANDMEMBER -1000: foreign %q", m)
		}
		seen[m]++
	}
	if len(got) != 1000 || len(seen) == 1000 {
		t.Errorf("SRANDMEMBER -1000: %d members, %d distinct", len(got), len(seen))
	}
	if m := setMembersOf(t, "*1\r\n"+cmdReply(t, c, "SRANDMEMBER", "s")); !all[m[0]] {
		t.Errorf("SRANDMEMBER: %q", m)
	}
	if got := cmdReply(t, c, "SRANDMEMBER", "s", "-16777217"); got != "-ERR value is out of range\r\n" {
		t.Errorf("SRANDMEMBER beyond the repeat bound: %q", got)
	}
	if got := cmdReply(t, c, "SRANDMEMBER", "missing", "-16777217"); got != "*0\r\n" {
		t.Errorf("SRANDMEMBER of a missing key beyond the repeat bound: %q", got)
	}

	left := len(all)
	popped := map[string]bool{}
	pop := func(args ...string) []string {
		var ms []string
		reply := cmdReply(t, c, args...)
		if len(args) == 2 {
			ms = setMembersOf(t, "*1\r\n"+reply)
		} else {
			ms = setMembersOf(t, reply)
		}
		for _, m := range ms {
			if !all[m] || popped[m] {
				t.Fatalf("%q: %q foreign or popped before", args, m)
			}
			popped[m] = true
			if got := cmdReply(t, c, "SISMEMBER", "s", m); got != ":0\r\n" {
				t.Fatalf("%q: %q still a member", args, m)
			}
		}
		left -= len(ms)
		if got := cmdReply(t, c, "SCARD", "s"); got != fmt.Sprintf(":%d\r\n", left) {
			t.Fatalf("%q: SCARD %q, want %d", args, got, left)
		}
		return ms
	}
	pop("SPOP", "s")
	if ms := pop("SPOP", "s", "10"); len(ms) != 10 {
		t.Errorf("SPOP 10 popped %d", len(ms))
	}
	if ms := pop("SPOP", "s", "150"); len(ms) != 150 {
		t.Errorf("SPOP 150 popped %d", len(ms))
	}
	if ms := pop("SPOP", "s", "1000"); len(ms) != 39 {
		t.Errorf("SPOP 1000 popped %d of the last 39", len(ms))
	}
	if got := cmdReply(t, c, "EXISTS", "s"); got != ":0\r\n" {
		t.Errorf("set emptied by SPOP still exists: %q", got)
	}
}

// SSCAN through the command until the cursor comes back to 0 on a
// hashtable-encoded set: every member once or more, MATCH filtering, and
// COUNT giving several steps.
func TestSetSScanIteration(t *testing.T) {
	c := newKeyspaceClient(t)
	args := []string{"SADD", "s"}
	var want []string
	for i := 0; i < 300; i++ {
		m := fmt.Sprintf("m:%03d", i)
		args = append(args, m)
		if strings.HasSuffix(m, "7") {
			want = append(want, m)
		}
	}
	cmdReply(t, c, args...)
	seen := map[string]bool{}
	cursor := "0"
	steps := 0
	for ; ; steps++ {
		if steps > 1000 {
			t.Fatal("SSCAN does not terminate")
		}
		reply := cmdReply(t, c, "SSCAN", "s", cursor, "MATCH", "*7", "COUNT", "20")
		lines := strings.Split(reply, "\r\n")
		if lines[0] != "*2" {
			t.Fatalf("SSCAN reply %q", reply)
		}
		cursor = lines[2]
		for _, m := range setMembersOf(t, strings.Join(lines[3:], "\r\n")) {
			seen[m] = true
		}
		if cursor == "0" {
			break
		}
	}
	if steps < 10 {
		t.Errorf("COUNT 20 over 300 members took %d steps", steps+1)
	}
	var got []string
	for m := range seen {
		got = append(got, m)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SSCAN MATCH *7 = %q, want %q", got, want)
	}
}

// Every set write is one record (one batch), which recovery applies whole
// or not at all: SMOVE's removal and addition, a *STORE's delete and
// addition, SPOP's removals. A write that changes nothing writes nothing.
func TestSetWritesAreOneRecord(t *testing.T) {
	c := newKeyspaceClient(t)
	for _, st := range []struct {
		args    []string
		records uint64
	}{
		{[]string{"SADD", "a", "1", "2", "3", "x"}, 1},
		{[]string{"SADD", "a", "1", "2"}, 0},
		{[]string{"SADD", "b", "3", "4", "5"}, 1},
		{[]string{"SET", "d", "old"}, 1},
		{[]string{"SREM", "a", "nope"}, 0},
		{[]string{"SMOVE", "a", "b", "1"}, 1},
		{[]string{"SMOVE", "a", "b", "nope"}, 0},
		{[]string{"SMOVE", "a", "new", "2"}, 1},
		{[]string{"SUNIONSTORE", "d", "a", "b"}, 1},
		{[]string{"SINTERSTORE", "d", "a", "b"}, 1},
		{[]string{"SDIFFSTORE", "d", "a", "b"}, 1},
		{[]string{"SINTERSTORE", "none", "a", "missing"}, 0},
		{[]string{"SPOP", "b", "2"}, 1},
		{[]string{"SPOP", "b", "0"}, 0},
		{[]string{"SPOP", "b"}, 1},
		{[]string{"SREM", "d", "x"}, 1},
		{[]string{"SPOP", "missing", "3"}, 0},
	} {
		before := c.KS.LastLSN()
		if got := cmdReply(t, c, st.args...); strings.HasPrefix(got, "-") {
			t.Fatalf("%q = %q", st.args, got)
		}
		if n := c.KS.LastLSN() - before; n != st.records {
			t.Errorf("%q wrote %d records, want %d", st.args, n, st.records)
		}
	}
	want := map[string]string{"a": "*2\r\n$1\r\n3\r\n$1\r\nx\r\n", "new": "*1\r\n$1\r\n2\r\n", "d": "*0\r\n"}
	for k, w := range want {
		if got := cmdReply(t, c, "SMEMBERS", k); setUnorderedRESP(got) != setUnorderedRESP(w) {
			t.Errorf("SMEMBERS %s = %q, want %q", k, got, w)
		}
	}
	if got := cmdReply(t, c, "SCARD", "b"); got != ":1\r\n" {
		t.Errorf("SCARD b = %q after popping 3 of 4", got)
	}
}

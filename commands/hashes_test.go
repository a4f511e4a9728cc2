package commands

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them.
var hashCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"hset", -4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"hsetnx", 4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"hget", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"hmset", -4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"hmget", -3, FlagReadonly | FlagFast, 1, 1, 1},
	{"hgetall", 2, FlagReadonly, 1, 1, 1},
	{"hdel", -3, FlagWrite | FlagFast, 1, 1, 1},
	{"hlen", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"hexists", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"hkeys", 2, FlagReadonly, 1, 1, 1},
	{"hvals", 2, FlagReadonly, 1, 1, 1},
	{"hincrby", 4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"hincrbyfloat", 4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"hstrlen", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"hrandfield", -2, FlagReadonly, 1, 1, 1},
	{"hscan", -3, FlagReadonly, 1, 1, 1},
}

func TestHashCommandInfo(t *testing.T) {
	checkCommandInfo(t, hashCommands(), hashCommandInfo)
	for _, cmd := range hashCommands() {
		if cmd.Group != "hash" || cmd.Since == "" || cmd.Summary == "" || cmd.Run == nil {
			t.Errorf("incomplete entry %+v", cmd)
		}
	}
}

// Scripts and replies recorded from Redis 7.0.15 (each on an empty server,
// by sending every command and keeping its raw reply).
func TestHashCommands(t *testing.T) {
	for _, sc := range []struct {
		name  string
		steps []scriptStep
	}{
		{"hset_hget", []scriptStep{
			{[]string{"HSET", "h", "f1", "v1"}, ":1\r\n"},
			{[]string{"HSET", "h", "f1", "v1b", "f2", "v2"}, ":1\r\n"},
			{[]string{"HSET", "h", "f3", "v3", "f3", "v3b", "f4", "v4"}, ":2\r\n"},
			{[]string{"HSET", "h", "f5", "v5", "f5", "v5b"}, ":1\r\n"},
			{[]string{"HGET", "h", "f1"}, "$3\r\nv1b\r\n"},
			{[]string{"HGET", "h", "f3"}, "$3\r\nv3b\r\n"},
			{[]string{"HGET", "h", "f5"}, "$3\r\nv5b\r\n"},
			{[]string{"HGET", "h", "nope"}, "$-1\r\n"},
			{[]string{"HGET", "missing", "f1"}, "$-1\r\n"},
			{[]string{"HLEN", "h"}, ":5\r\n"},
			{[]string{"HLEN", "missing"}, ":0\r\n"},
			{[]string{"HGETALL", "h"}, "*10\r\n$2\r\nf1\r\n$3\r\nv1b\r\n$2\r\nf2\r\n$2\r\nv2\r\n$2\r\nf3\r\n$3\r\nv3b\r\n$2\r\nf4\r\n$2\r\nv4\r\n$2\r\nf5\r\n$3\r\nv5b\r\n"},
			{[]string{"HKEYS", "h"}, "*5\r\n$2\r\nf1\r\n$2\r\nf2\r\n$2\r\nf3\r\n$2\r\nf4\r\n$2\r\nf5\r\n"},
			{[]string{"HVALS", "h"}, "*5\r\n$3\r\nv1b\r\n$2\r\nv2\r\n$3\r\nv3b\r\n$2\r\nv4\r\n$3\r\nv5b\r\n"},
			{[]string{"HGETALL", "missing"}, "*0\r\n"},
			{[]string{"HKEYS", "missing"}, "*0\r\n"},
			{[]string{"HVALS", "missing"}, "*0\r\n"},
			{[]string{"HSET", "h", "f1"}, "-ERR wrong number of arguments for 'hset' command\r\n"},
			{[]string{"HSET", "h", "f1", "v", "f2"}, "-ERR wrong number of arguments for 'hset' command\r\n"},
			{[]string{"HSET", "h"}, "-ERR wrong number of arguments for 'hset' command\r\n"},
			{[]string{"HSET", "h", "f1", "v", "x"}, "-ERR wrong number of arguments for 'hset' command\r\n"},
			{[]string{"HMSET", "h", "f1", "v", "f2"}, "-ERR wrong number of arguments for 'hmset' command\r\n"},
			{[]string{"HMSET", "h", "f1"}, "-ERR wrong number of arguments for 'hmset' command\r\n"},
			{[]string{"HMSET", "h", "f6", "v6", "f1", "v1c"}, "+OK\r\n"},
			{[]string{"HGETALL", "h"}, "*12\r\n$2\r\nf1\r\n$3\r\nv1c\r\n$2\r\nf2\r\n$2\r\nv2\r\n$2\r\nf3\r\n$3\r\nv3b\r\n$2\r\nf4\r\n$2\r\nv4\r\n$2\r\nf5\r\n$3\r\nv5b\r\n$2\r\nf6\r\n$2\r\nv6\r\n"},
			{[]string{"HMGET", "h", "f1", "nope", "f6", "f1"}, "*4\r\n$3\r\nv1c\r\n$-1\r\n$2\r\nv6\r\n$3\r\nv1c\r\n"},
			{[]string{"HMGET", "missing", "a", "b"}, "*2\r\n$-1\r\n$-1\r\n"},
			{[]string{"HMGET", "h"}, "-ERR wrong number of arguments for 'hmget' command\r\n"},
			{[]string{"HEXISTS", "h", "f1"}, ":1\r\n"},
			{[]string{"HEXISTS", "h", "nope"}, ":0\r\n"},
			{[]string{"HEXISTS", "missing", "f1"}, ":0\r\n"},
			{[]string{"HEXISTS", "h"}, "-ERR wrong number of arguments for 'hexists' command\r\n"},
			{[]string{"HSTRLEN", "h", "f1"}, ":3\r\n"},
			{[]string{"HSTRLEN", "h", "nope"}, ":0\r\n"},
			{[]string{"HSTRLEN", "missing", "x"}, ":0\r\n"},
			{[]string{"HSTRLEN", "h", "f1", "x"}, "-ERR wrong number of arguments for 'hstrlen' command\r\n"},
			{[]string{"HGET", "h"}, "-ERR wrong number of arguments for 'hget' command\r\n"},
			{[]string{"HGET", "h", "a", "b"}, "-ERR wrong number of arguments for 'hget' command\r\n"},
			{[]string{"HLEN"}, "-ERR wrong number of arguments for 'hlen' command\r\n"},
			{[]string{"HLEN", "h", "x"}, "-ERR wrong number of arguments for 'hlen' command\r\n"},
			{[]string{"HGETALL", "h", "x"}, "-ERR wrong number of arguments for 'hgetall' command\r\n"},
			{[]string{"HKEYS"}, "-ERR wrong number of arguments for 'hkeys' command\r\n"},
			{[]string{"HVALS", "a", "b"}, "-ERR wrong number of arguments for 'hvals' command\r\n"},
			{[]string{"TYPE", "h"}, "+hash\r\n"},
			{[]string{"EXISTS", "h"}, ":1\r\n"},
			{[]string{"HSET", "e", "", ""}, ":1\r\n"},
			{[]string{"HGET", "e", ""}, "$0\r\n\r\n"},
			{[]string{"HSTRLEN", "e", ""}, ":0\r\n"},
			{[]string{"HEXISTS", "e", ""}, ":1\r\n"},
			{[]string{"HGETALL", "e"}, "*2\r\n$0\r\n\r\n$0\r\n\r\n"},
			{[]string{"HSET", "bin", "a\x00b", "\xff\x00\r\n"}, ":1\r\n"},
			{[]string{"HGET", "bin", "a\x00b"}, "$4\r\n\xff\x00\r\n\r\n"},
			{[]string{"HSTRLEN", "bin", "a\x00b"}, ":4\r\n"},
		}},
		{"hsetnx", []scriptStep{
			{[]string{"HSETNX", "h", "f", "v"}, ":1\r\n"},
			{[]string{"HSETNX", "h", "f", "w"}, ":0\r\n"},
			{[]string{"HGET", "h", "f"}, "$1\r\nv\r\n"},
			{[]string{"HSETNX", "h", "g", "w"}, ":1\r\n"},
			{[]string{"HGETALL", "h"}, "*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n$1\r\nw\r\n"},
			{[]string{"HSETNX", "h", "f"}, "-ERR wrong number of arguments for 'hsetnx' command\r\n"},
			{[]string{"HSETNX", "h", "f", "v", "x"}, "-ERR wrong number of arguments for 'hsetnx' command\r\n"},
		}},
		{"hdel", []scriptStep{
			{[]string{"HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5"}, ":5\r\n"},
			{[]string{"HDEL", "h", "c"}, ":1\r\n"},
			{[]string{"HGETALL", "h"}, "*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\ne\r\n$1\r\n5\r\n"},
			{[]string{"HDEL", "h", "a", "a", "nope"}, ":1\r\n"},
			{[]string{"HKEYS", "h"}, "*3\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"HSET", "h", "c", "33", "a", "11"}, ":2\r\n"},
			{[]string{"HKEYS", "h"}, "*5\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nc\r\n$1\r\na\r\n"},
			{[]string{"HVALS", "h"}, "*5\r\n$1\r\n2\r\n$1\r\n4\r\n$1\r\n5\r\n$2\r\n33\r\n$2\r\n11\r\n"},
			{[]string{"HDEL", "h", "nope"}, ":0\r\n"},
			{[]string{"HDEL", "missing", "a"}, ":0\r\n"},
			{[]string{"HDEL", "h"}, "-ERR wrong number of arguments for 'hdel' command\r\n"},
			{[]string{"HDEL", "h", "b", "d", "e", "c", "a"}, ":5\r\n"},
			{[]string{"EXISTS", "h"}, ":0\r\n"},
			{[]string{"TYPE", "h"}, "+none\r\n"},
			{[]string{"HLEN", "h"}, ":0\r\n"},
			{[]string{"HGETALL", "h"}, "*0\r\n"},
			{[]string{"HDEL", "h", "x"}, ":0\r\n"},
		}},
		{"wrongtype", []scriptStep{
			{[]string{"SET", "s", "x"}, "+OK\r\n"},
			{[]string{"HSET", "s", "f", "v"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HMSET", "s", "f", "v"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HSETNX", "s", "f", "v"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HGET", "s", "f"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HMGET", "s", "f"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HGETALL", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HKEYS", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HVALS", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HDEL", "s", "f"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HLEN", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HEXISTS", "s", "f"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HSTRLEN", "s", "f"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HINCRBY", "s", "f", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HINCRBYFLOAT", "s", "f", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HRANDFIELD", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HRANDFIELD", "s", "2"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HRANDFIELD", "s", "-2", "withvalues"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HSCAN", "s", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"HSET", "s", "f"}, "-ERR wrong number of arguments for 'hset' command\r\n"},
			{[]string{"HINCRBY", "s", "f", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HINCRBYFLOAT", "s", "f", "x"}, "-ERR value is not a valid float\r\n"},
			{[]string{"HINCRBYFLOAT", "s", "f", "inf"}, "-ERR value is NaN or Infinity\r\n"},
			{[]string{"HRANDFIELD", "s", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HSCAN", "s", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"GET", "s"}, "$1\r\nx\r\n"},
			{[]string{"HSET", "h", "f", "v"}, ":1\r\n"},
			{[]string{"GET", "h"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"INCR", "h"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"APPEND", "h", "x"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"STRLEN", "h"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"SET", "h", "str"}, "+OK\r\n"},
			{[]string{"TYPE", "h"}, "+string\r\n"},
			{[]string{"GET", "h"}, "$3\r\nstr\r\n"},
		}},
		{"hincrby", []scriptStep{
			{[]string{"HINCRBY", "h", "n", "5"}, ":5\r\n"},
			{[]string{"HINCRBY", "h", "n", "-12"}, ":-7\r\n"},
			{[]string{"HGET", "h", "n"}, "$2\r\n-7\r\n"},
			{[]string{"HINCRBY", "h", "n", "0"}, ":-7\r\n"},
			{[]string{"HINCRBY", "h", "n", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HINCRBY", "h", "n", "1.5"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HINCRBY", "h", "n", "+1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HINCRBY", "h", "n", " 1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HINCRBY", "h", "n", "9223372036854775808"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HSET", "h", "big", "9223372036854775807"}, ":1\r\n"},
			{[]string{"HINCRBY", "h", "big", "1"}, "-ERR increment or decrement would overflow\r\n"},
			{[]string{"HINCRBY", "h", "big", "-1"}, ":9223372036854775806\r\n"},
			{[]string{"HSET", "h", "neg", "-9223372036854775808"}, ":1\r\n"},
			{[]string{"HINCRBY", "h", "neg", "-1"}, "-ERR increment or decrement would overflow\r\n"},
			{[]string{"HINCRBY", "h", "neg", "9223372036854775807"}, ":-1\r\n"},
			{[]string{"HSET", "h", "s", "abc"}, ":1\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, "-ERR hash value is not an integer\r\n"},
			{[]string{"HINCRBY", "h", "s", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HSET", "h", "s", "1.5"}, ":0\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, "-ERR hash value is not an integer\r\n"},
			{[]string{"HSET", "h", "s", " 1"}, ":0\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, "-ERR hash value is not an integer\r\n"},
			{[]string{"HSET", "h", "s", "007"}, ":0\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, "-ERR hash value is not an integer\r\n"},
			{[]string{"HSET", "h", "s", "-0"}, ":0\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, "-ERR hash value is not an integer\r\n"},
			{[]string{"HSET", "h", "s", ""}, ":0\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, "-ERR hash value is not an integer\r\n"},
			{[]string{"HINCRBY", "missing", "x", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"EXISTS", "missing"}, ":0\r\n"},
			{[]string{"HINCRBY", "h", "n"}, "-ERR wrong number of arguments for 'hincrby' command\r\n"},
			{[]string{"HINCRBY", "h", "n", "1", "2"}, "-ERR wrong number of arguments for 'hincrby' command\r\n"},
			{[]string{"EXPIRE", "h", "100"}, ":1\r\n"},
			{[]string{"HINCRBY", "h", "n", "1"}, ":-6\r\n"},
			{[]string{"TTL", "h"}, ":100\r\n"},
			{[]string{"HSET", "h", "z", "1"}, ":1\r\n"},
			{[]string{"TTL", "h"}, ":100\r\n"},
		}},
		{"hincrbyfloat", []scriptStep{
			{[]string{"HSET", "h", "n", "10.5"}, ":1\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "n", "0.1"}, "$4\r\n10.6\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "n", "0.1"}, "$4\r\n10.7\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "n", "-10.7"}, "$1\r\n0\r\n"},
			{[]string{"HGET", "h", "n"}, "$1\r\n0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "1.5"}, "$3\r\n1.5\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "5.0e3"}, "$6\r\n5001.5\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "-5001.5"}, "$1\r\n0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "x"}, "-ERR value is not a valid float\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", " 1"}, "-ERR value is not a valid float\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "1e-5000"}, "-ERR value is not a valid float\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "inf"}, "-ERR value is NaN or Infinity\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "-inf"}, "-ERR value is NaN or Infinity\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "+inf"}, "-ERR value is NaN or Infinity\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "nan"}, "-ERR value is not a valid float\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "f", "0x10"}, "$2\r\n16\r\n"},
			{[]string{"HSET", "h", "s", "abc"}, ":1\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "1"}, "-ERR hash value is not a float\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "inf"}, "-ERR value is NaN or Infinity\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "x"}, "-ERR value is not a valid float\r\n"},
			{[]string{"HSET", "h", "s", "inf"}, ":0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "1"}, "-ERR increment would produce NaN or Infinity\r\n"},
			{[]string{"HSET", "h", "s", "1e4932"}, ":0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "1e4932"}, "-ERR increment would produce NaN or Infinity\r\n"},
			{[]string{"HSET", "h", "s", "3.0"}, ":0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "1.23456789012345678901"}, "$19\r\n4.23456789012345679\r\n"},
			{[]string{"HSET", "h", "s", "0.1"}, ":0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "0.2"}, "$3\r\n0.3\r\n"},
			{[]string{"HSET", "h", "s", "1e300"}, ":0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "0.3"}, "$301\r\n1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144\r\n"},
			{[]string{"HSET", "h", "s", "5"}, ":0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "2"}, "$1\r\n7\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, ":8\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "s", "1.5"}, "$3\r\n9.5\r\n"},
			{[]string{"HINCRBY", "h", "s", "1"}, "-ERR hash value is not an integer\r\n"},
			{[]string{"HINCRBYFLOAT", "missing", "f", "x"}, "-ERR value is not a valid float\r\n"},
			{[]string{"HINCRBYFLOAT", "missing", "f", "inf"}, "-ERR value is NaN or Infinity\r\n"},
			{[]string{"EXISTS", "missing"}, ":0\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "n"}, "-ERR wrong number of arguments for 'hincrbyfloat' command\r\n"},
		}},
		{"hrandfield", []scriptStep{
			{[]string{"HRANDFIELD", "missing"}, "$-1\r\n"},
			{[]string{"HRANDFIELD", "missing", "5"}, "*0\r\n"},
			{[]string{"HRANDFIELD", "missing", "-5", "WITHVALUES"}, "*0\r\n"},
			{[]string{"HRANDFIELD", "missing", "0"}, "*0\r\n"},
			{[]string{"HRANDFIELD", "missing", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HRANDFIELD", "missing", "1", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"HSET", "one", "f", "v"}, ":1\r\n"},
			{[]string{"HRANDFIELD", "one"}, "$1\r\nf\r\n"},
			{[]string{"HRANDFIELD", "one", "1"}, "*1\r\n$1\r\nf\r\n"},
			{[]string{"HRANDFIELD", "one", "-3"}, "*3\r\n$1\r\nf\r\n$1\r\nf\r\n$1\r\nf\r\n"},
			{[]string{"HRANDFIELD", "one", "-3", "withvalues"}, "*6\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\nf\r\n$1\r\nv\r\n"},
			{[]string{"HRANDFIELD", "one", "5", "WithValues"}, "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
			{[]string{"HRANDFIELD", "one", "0"}, "*0\r\n"},
			{[]string{"HRANDFIELD", "one", "0", "withvalues"}, "*0\r\n"},
			{[]string{"HSET", "h", "a", "1", "b", "2", "c", "3"}, ":3\r\n"},
			{[]string{"HRANDFIELD", "h", "3"}, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"HRANDFIELD", "h", "10"}, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"HRANDFIELD", "h", "3", "withvalues"}, "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"HRANDFIELD", "h", "100", "withvalues"}, "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"HRANDFIELD", "h", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HRANDFIELD", "h", "1.5"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HRANDFIELD", "h", "1", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"HRANDFIELD", "h", "1", "withvalues", "x"}, "-ERR syntax error\r\n"},
			{[]string{"HRANDFIELD", "h", "-9223372036854775808"}, "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"},
			{[]string{"HRANDFIELD", "h", "9223372036854775807", "withvalues"}, "-ERR value is out of range\r\n"},
			{[]string{"HRANDFIELD", "h", "-9223372036854775807", "withvalues"}, "-ERR value is out of range\r\n"},
			{[]string{"HRANDFIELD", "h", "4611686018427387904", "withvalues"}, "-ERR value is out of range\r\n"},
			{[]string{"HRANDFIELD", "h", "x", "foo"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HRANDFIELD", "h", "-9223372036854775808", "foo"}, "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"},
			{[]string{"HRANDFIELD", "h", "-9223372036854775808", "withvalues"}, "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"},
			{[]string{"HRANDFIELD", "h", "9223372036854775808"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HRANDFIELD"}, "-ERR wrong number of arguments for 'hrandfield' command\r\n"},
		}},
		{"hscan", []scriptStep{
			{[]string{"HSCAN", "missing", "0"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"HSCAN", "missing", "0", "count", "0"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"HSCAN", "missing", "0", "type", "x"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"HSCAN", "missing", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"HSET", "h", "a", "1", "b", "2", "c", "3", "ab", "4", "ba", "5"}, ":5\r\n"},
			{[]string{"HSCAN", "h", "0"}, "*2\r\n$1\r\n0\r\n*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$2\r\nab\r\n$1\r\n4\r\n$2\r\nba\r\n$1\r\n5\r\n"},
			{[]string{"HSCAN", "h", "0", "COUNT", "1"}, "*2\r\n$1\r\n0\r\n*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$2\r\nab\r\n$1\r\n4\r\n$2\r\nba\r\n$1\r\n5\r\n"},
			{[]string{"HSCAN", "h", "7", "count", "2"}, "*2\r\n$1\r\n0\r\n*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$2\r\nab\r\n$1\r\n4\r\n$2\r\nba\r\n$1\r\n5\r\n"},
			{[]string{"HSCAN", "h", "0", "MATCH", "a*"}, "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\nab\r\n$1\r\n4\r\n"},
			{[]string{"HSCAN", "h", "0", "match", "*a", "count", "1"}, "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\nba\r\n$1\r\n5\r\n"},
			{[]string{"HSCAN", "h", "0", "match", "zz*"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"HSCAN", "h", "0", "match", "*"}, "*2\r\n$1\r\n0\r\n*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$2\r\nab\r\n$1\r\n4\r\n$2\r\nba\r\n$1\r\n5\r\n"},
			{[]string{"HSCAN", "h", "0", "count", "1", "match", "b*", "match", "a*"}, "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\nab\r\n$1\r\n4\r\n"},
			{[]string{"HSCAN", "h", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"HSCAN", "h", "-1"}, "*2\r\n$1\r\n0\r\n*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$2\r\nab\r\n$1\r\n4\r\n$2\r\nba\r\n$1\r\n5\r\n"},
			{[]string{"HSCAN", "h", "18446744073709551616"}, "-ERR invalid cursor\r\n"},
			{[]string{"HSCAN", "h", ""}, "*2\r\n$1\r\n0\r\n*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$2\r\nab\r\n$1\r\n4\r\n$2\r\nba\r\n$1\r\n5\r\n"},
			{[]string{"HSCAN", "h", "0", "count", "0"}, "-ERR syntax error\r\n"},
			{[]string{"HSCAN", "h", "0", "count", "-1"}, "-ERR syntax error\r\n"},
			{[]string{"HSCAN", "h", "0", "count", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HSCAN", "h", "0", "count"}, "-ERR syntax error\r\n"},
			{[]string{"HSCAN", "h", "0", "match"}, "-ERR syntax error\r\n"},
			{[]string{"HSCAN", "h", "0", "type", "hash"}, "-ERR syntax error\r\n"},
			{[]string{"HSCAN", "h", "0", "foo", "bar"}, "-ERR syntax error\r\n"},
			{[]string{"HSCAN", "h", "0", "type", "hash", "count", "x"}, "-ERR syntax error\r\n"},
			{[]string{"HSCAN", "h", "0", "count", "x", "type", "hash"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"HSCAN", "h"}, "-ERR wrong number of arguments for 'hscan' command\r\n"},
		}},
		{"expire_and_generic", []scriptStep{
			{[]string{"HSET", "h", "a", "1", "b", "2"}, ":2\r\n"},
			{[]string{"EXPIRE", "h", "100"}, ":1\r\n"},
			{[]string{"TTL", "h"}, ":100\r\n"},
			{[]string{"HSET", "h", "c", "3"}, ":1\r\n"},
			{[]string{"TTL", "h"}, ":100\r\n"},
			{[]string{"HDEL", "h", "a"}, ":1\r\n"},
			{[]string{"TTL", "h"}, ":100\r\n"},
			{[]string{"HSETNX", "h", "d", "4"}, ":1\r\n"},
			{[]string{"HINCRBYFLOAT", "h", "n", "1.5"}, "$3\r\n1.5\r\n"},
			{[]string{"TTL", "h"}, ":100\r\n"},
			{[]string{"PERSIST", "h"}, ":1\r\n"},
			{[]string{"TTL", "h"}, ":-1\r\n"},
			{[]string{"RENAME", "h", "h2"}, "+OK\r\n"},
			{[]string{"EXISTS", "h"}, ":0\r\n"},
			{[]string{"HGETALL", "h2"}, "*8\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nn\r\n$3\r\n1.5\r\n"},
			{[]string{"TYPE", "h2"}, "+hash\r\n"},
			{[]string{"COPY", "h2", "h3"}, ":1\r\n"},
			{[]string{"HGETALL", "h3"}, "*8\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nn\r\n$3\r\n1.5\r\n"},
			{[]string{"HSET", "h3", "a", "x"}, ":1\r\n"},
			{[]string{"HGET", "h2", "a"}, "$-1\r\n"},
			{[]string{"HGET", "h3", "a"}, "$1\r\nx\r\n"},
			{[]string{"DEL", "h3"}, ":1\r\n"},
			{[]string{"EXISTS", "h3"}, ":0\r\n"},
			{[]string{"HLEN", "h3"}, ":0\r\n"},
			{[]string{"HSET", "h4", "f", "v"}, ":1\r\n"},
			{[]string{"EXPIRE", "h4", "100"}, ":1\r\n"},
			{[]string{"HDEL", "h4", "f"}, ":1\r\n"},
			{[]string{"EXISTS", "h4"}, ":0\r\n"},
			{[]string{"HSET", "h4", "f", "v"}, ":1\r\n"},
			{[]string{"TTL", "h4"}, ":-1\r\n"},
			{[]string{"TYPE", "h4"}, "+hash\r\n"},
			{[]string{"TYPE", "h2"}, "+hash\r\n"},
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

// hashBulks splits a reply that is a flat array of bulk strings (no nils)
// into its elements, in order.
func hashBulks(t *testing.T, reply string) []string {
	t.Helper()
	if !strings.HasPrefix(reply, "*") {
		t.Fatalf("not an array: %.80q", reply)
	}
	lines := strings.Split(strings.TrimSuffix(reply, "\r\n"), "\r\n")
	n, err := strconv.Atoi(lines[0][1:])
	if err != nil || len(lines) != 1+2*n {
		t.Fatalf("malformed array reply %.80q", reply)
	}
	var out []string
	for i := 2; i < len(lines); i += 2 {
		out = append(out, lines[i])
	}
	return out
}

// A hash past the listpack limits (hash-max-listpack-entries 512): HSCAN
// walks it in steps whose cursor is not 0 until the end and returns every
// field once when nothing changes; HGETALL returns every pair; MATCH
// filters field names.
func TestHashScanAndGetAllBigHash(t *testing.T) {
	c := newKeyspaceClient(t)
	const n = 1000
	want := map[string]string{}
	for i := 0; i < n; i += 50 {
		args := []string{"HSET", "big"}
		for j := i; j < i+50; j++ {
			f := fmt.Sprintf("field:%d", j)
			want[f] = fmt.Sprint(j * 7)
			args = append(args, f, want[f])
		}
		if got := cmdReply(t, c, args...); got != ":50\r\n" {
			t.Fatalf("HSET: %q", got)
		}
	}
	all := hashBulks(t, cmdReply(t, c, "HGETALL", "big"))
	if len(all) != 2*n {
		t.Fatalf("HGETALL: %d elements", len(all))
	}
	for i := 0; i < len(all); i += 2 {
		if want[all[i]] != all[i+1] {
			t.Fatalf("HGETALL pair %q %q", all[i], all[i+1])
		}
	}
	if keys, vals := hashBulks(t, cmdReply(t, c, "HKEYS", "big")), hashBulks(t, cmdReply(t, c, "HVALS", "big")); len(keys) != n || len(vals) != n {
		t.Fatalf("HKEYS %d, HVALS %d", len(keys), len(vals))
	}
	seen := map[string]int{}
	cursor := "0"
	steps := 0
	for {
		reply := cmdReply(t, c, "HSCAN", "big", cursor, "COUNT", "20")
		// *2 $len cursor *m ...
		lines := strings.SplitN(reply, "\r\n", 4)
		if lines[0] != "*2" || len(lines) < 4 {
			t.Fatalf("HSCAN reply %.80q", reply)
		}
		cursor = lines[2]
		elems := hashBulks(t, lines[3])
		for i := 0; i < len(elems); i += 2 {
			if want[elems[i]] != elems[i+1] {
				t.Fatalf("HSCAN pair %q %q", elems[i], elems[i+1])
			}
			seen[elems[i]]++
		}
		steps++
		if cursor == "0" {
			break
		}
	}
	if steps < n/20 || len(seen) != n {
		t.Fatalf("HSCAN: %d steps, %d distinct fields", steps, len(seen))
	}
	for f, k := range seen {
		if k != 1 {
			t.Fatalf("HSCAN returned %s %d times without changes", f, k)
		}
	}
	matched := 0
	cursor = "0"
	for {
		lines := strings.SplitN(cmdReply(t, c, "HSCAN", "big", cursor, "MATCH", "field:4?", "COUNT", "1000"), "\r\n", 4)
		cursor = lines[2]
		elems := hashBulks(t, lines[3])
		for i := 0; i < len(elems); i += 2 {
			if !strings.HasPrefix(elems[i], "field:4") || len(elems[i]) != len("field:40") {
				t.Fatalf("MATCH returned %q", elems[i])
			}
			matched++
		}
		if cursor == "0" {
			break
		}
	}
	if matched != 10 {
		t.Fatalf("MATCH field:4? returned %d fields", matched)
	}
}

// HRANDFIELD on a hash larger than the count: distinct fields that exist,
// with their values; a negative count repeats; absurd negative counts are
// refused instead of building a reply of gigabytes.
func TestHashRandField(t *testing.T) {
	c := newKeyspaceClient(t)
	want := map[string]string{}
	args := []string{"HSET", "h"}
	for i := 0; i < 20; i++ {
		f := fmt.Sprintf("f%d", i)
		want[f] = fmt.Sprintf("v%d", i)
		args = append(args, f, want[f])
	}
	cmdReply(t, c, args...)
	for trial := 0; trial < 50; trial++ {
		got := hashBulks(t, cmdReply(t, c, "HRANDFIELD", "h", "5", "WITHVALUES"))
		if len(got) != 10 {
			t.Fatalf("count 5 WITHVALUES: %q", got)
		}
		distinct := map[string]bool{}
		for i := 0; i < len(got); i += 2 {
			if want[got[i]] != got[i+1] || distinct[got[i]] {
				t.Fatalf("count 5 WITHVALUES: %q", got)
			}
			distinct[got[i]] = true
		}
		got = hashBulks(t, cmdReply(t, c, "HRANDFIELD", "h", "-30"))
		if len(got) != 30 {
			t.Fatalf("count -30: %d fields", len(got))
		}
		for _, f := range got {
			if _, ok := want[f]; !ok {
				t.Fatalf("count -30: unknown field %q", f)
			}
		}
		one := cmdReply(t, c, "HRANDFIELD", "h")
		if f := strings.Split(one, "\r\n"); len(f) != 3 || want[f[1]] == "" {
			t.Fatalf("HRANDFIELD h: %q", one)
		}
	}
	if got := cmdReply(t, c, "HRANDFIELD", "h", "-9223372036854775807"); got != "-ERR value is out of range\r\n" {
		t.Fatalf("huge negative count: %q", got)
	}
}

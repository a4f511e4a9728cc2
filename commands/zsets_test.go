package commands

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// The scripts below were recorded against Redis 7.0.15 (a fresh server,
// FLUSHALL before each script): every reply is byte for byte what Redis
// answered. Random replies (ZRANDMEMBER with a count below the set's size,
// ZSCAN of a large set) are checked by property in their own tests.

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them
// (the movablekeys commands report their first key only, as there).
var zsetCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"zadd", -4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"zincrby", 4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"zscore", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"zmscore", -3, FlagReadonly | FlagFast, 1, 1, 1},
	{"zcard", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"zcount", 4, FlagReadonly | FlagFast, 1, 1, 1},
	{"zlexcount", 4, FlagReadonly | FlagFast, 1, 1, 1},
	{"zrange", -4, FlagReadonly, 1, 1, 1},
	{"zrangestore", -5, FlagWrite | FlagDenyOOM, 1, 2, 1},
	{"zrangebyscore", -4, FlagReadonly, 1, 1, 1},
	{"zrevrangebyscore", -4, FlagReadonly, 1, 1, 1},
	{"zrangebylex", -4, FlagReadonly, 1, 1, 1},
	{"zrevrangebylex", -4, FlagReadonly, 1, 1, 1},
	{"zrevrange", -4, FlagReadonly, 1, 1, 1},
	{"zrank", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"zrevrank", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"zrem", -3, FlagWrite | FlagFast, 1, 1, 1},
	{"zremrangebyscore", 4, FlagWrite, 1, 1, 1},
	{"zremrangebyrank", 4, FlagWrite, 1, 1, 1},
	{"zremrangebylex", 4, FlagWrite, 1, 1, 1},
	{"zpopmin", -2, FlagWrite | FlagFast, 1, 1, 1},
	{"zpopmax", -2, FlagWrite | FlagFast, 1, 1, 1},
	{"bzpopmin", -3, FlagWrite | FlagNoScript | FlagFast | FlagBlocking, 1, -2, 1},
	{"bzpopmax", -3, FlagWrite | FlagNoScript | FlagFast | FlagBlocking, 1, -2, 1},
	{"zunionstore", -4, FlagWrite | FlagDenyOOM | FlagMovableKeys, 1, 1, 1},
	{"zinterstore", -4, FlagWrite | FlagDenyOOM | FlagMovableKeys, 1, 1, 1},
	{"zdiffstore", -4, FlagWrite | FlagDenyOOM | FlagMovableKeys, 1, 1, 1},
	{"zunion", -3, FlagReadonly | FlagMovableKeys, 0, 0, 0},
	{"zinter", -3, FlagReadonly | FlagMovableKeys, 0, 0, 0},
	{"zdiff", -3, FlagReadonly | FlagMovableKeys, 0, 0, 0},
	{"zintercard", -3, FlagReadonly | FlagMovableKeys, 0, 0, 0},
	{"zmpop", -4, FlagWrite | FlagMovableKeys, 0, 0, 0},
	{"bzmpop", -5, FlagWrite | FlagBlocking | FlagMovableKeys, 0, 0, 0},
	{"zrandmember", -2, FlagReadonly, 1, 1, 1},
	{"zscan", -3, FlagReadonly, 1, 1, 1},
}

func TestZSetCommandInfo(t *testing.T) {
	checkCommandInfo(t, zsetCommands(), zsetCommandInfo)
}

func TestFormatScore(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{0.1, "0.10000000000000001"},
		{0.30000000000000004, "0.30000000000000004"},
		{1e-5, "1.0000000000000001e-05"},
		{1.234e-5, "1.234e-05"},
		{1e15, "1000000000000000"},
		{1e16, "10000000000000000"},
		{1e17, "1e+17"},
		{123456789012345678, "1.2345678901234568e+17"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.Copysign(0, -1), "-0"}, // %.17g; sets in the small encoding keep no -0 (listpackScore)
		{-2.5, "-2.5"},
		{1e-320, "9.9998886718268301e-321"},
	} {
		if got := formatScore(tt.f); got != tt.want {
			t.Errorf("formatScore(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestParseScoreRange(t *testing.T) {
	for _, tt := range []struct {
		min, max string
		want     keyspace.ScoreRange
		err      bool
	}{
		{"1", "2", keyspace.ScoreRange{Min: 1, Max: 2}, false},
		{"(1", "(2", keyspace.ScoreRange{Min: 1, Max: 2, MinEx: true, MaxEx: true}, false},
		{"-inf", "+inf", keyspace.ScoreRange{Min: math.Inf(-1), Max: math.Inf(1)}, false},
		{"", "(", keyspace.ScoreRange{MaxEx: true}, false},
		{" 1", "\t2", keyspace.ScoreRange{Min: 1, Max: 2}, false},
		{"1e400", "-1e400", keyspace.ScoreRange{Min: math.Inf(1), Max: math.Inf(-1)}, false},
		{"0x10", "1e-400", keyspace.ScoreRange{Min: 16, Max: 0}, false},
		{"1 ", "2", keyspace.ScoreRange{}, true},
		{" ", "2", keyspace.ScoreRange{}, true},
		{"nan", "2", keyspace.ScoreRange{}, true},
		{"1", "((2", keyspace.ScoreRange{}, true},
		{"x", "2", keyspace.ScoreRange{}, true},
		{"1e", "2", keyspace.ScoreRange{}, true},
	} {
		got, err := parseScoreRange([]byte(tt.min), []byte(tt.max))
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("parseScoreRange(%q, %q) = %+v, %v", tt.min, tt.max, got, err)
		}
	}
}

// TestZRandMemberDistinct: a positive count below the size gives distinct
// members of the set, with their scores; a negative count gives exactly
// that many picks.
func TestZRandMemberDistinct(t *testing.T) {
	c := newKeyspaceClient(t)
	args := []string{"ZADD", "z"}
	for i := 0; i < 300; i++ {
		args = append(args, strconv.Itoa(i), fmt.Sprintf("m%d", i))
	}
	cmdReply(t, c, args...)
	for _, count := range []int{2, 50, 150, 299} {
		got := cmdReply(t, c, "ZRANDMEMBER", "z", strconv.Itoa(count), "WITHSCORES")
		lines := strings.Split(strings.TrimSuffix(got, "\r\n"), "\r\n")
		if lines[0] != "*"+strconv.Itoa(2*count) {
			t.Fatalf("count %d: header %q", count, lines[0])
		}
		seen := map[string]bool{}
		for i := 2; i < len(lines); i += 4 {
			m, s := lines[i], lines[i+2]
			if seen[m] {
				t.Fatalf("count %d: %s returned twice", count, m)
			}
			seen[m] = true
			if "m"+s != m {
				t.Fatalf("count %d: %s with score %s", count, m, s)
			}
		}
		if len(seen) != count {
			t.Fatalf("count %d: %d members", count, len(seen))
		}
	}
	got := cmdReply(t, c, "ZRANDMEMBER", "z", "-1000")
	if !strings.HasPrefix(got, "*1000\r\n") {
		t.Fatalf("negative count: %.20q", got)
	}
	for i := 0; i < 20; i++ {
		if got := cmdReply(t, c, "ZRANDMEMBER", "z"); !strings.HasPrefix(got, "$") || !strings.Contains(got, "m") {
			t.Fatalf("ZRANDMEMBER z = %q", got)
		}
	}
}

// TestZScanLargeSet: ZSCAN over a set too large for a listpack walks with
// a cursor and returns every member exactly as often as Redis guarantees
// (at least once), with its score.
func TestZScanLargeSet(t *testing.T) {
	c := newKeyspaceClient(t)
	args := []string{"ZADD", "z"}
	for i := 0; i < 500; i++ {
		args = append(args, strconv.Itoa(i), fmt.Sprintf("m%d", i))
	}
	cmdReply(t, c, args...)
	seen := map[string]bool{}
	cursor := "0"
	for steps := 0; ; steps++ {
		got := cmdReply(t, c, "ZSCAN", "z", cursor, "COUNT", "20", "MATCH", "m*")
		lines := strings.Split(strings.TrimSuffix(got, "\r\n"), "\r\n")
		cursor = lines[2]
		for i := 5; i < len(lines); i += 4 {
			if "m"+lines[i+2] != lines[i] {
				t.Fatalf("%s with score %s", lines[i], lines[i+2])
			}
			seen[lines[i]] = true
		}
		if cursor == "0" {
			if steps < 10 {
				t.Fatalf("a 500-member set scanned in %d steps of 20", steps+1)
			}
			break
		}
	}
	if len(seen) != 500 {
		t.Fatalf("scan saw %d of 500 members", len(seen))
	}
	if got := cmdReply(t, c, "ZSCAN", "z", "0", "MATCH", "nothing*", "COUNT", "1000"); got != "*2\r\n$1\r\n0\r\n*0\r\n" {
		t.Fatalf("no match: %q", got)
	}
}

// TestZSetStoreIsOneBatch: a *STORE command replaces its destination in
// one record, so a crash can never leave the delete without the new
// contents. Checked by reopening the keyspace after each store.
func TestZSetStoreSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	c := openZClient(t, dir)
	cmdReply(t, c, "ZADD", "a", "1", "x", "2", "y")
	cmdReply(t, c, "ZADD", "b", "3", "y", "4", "w")
	cmdReply(t, c, "ZADD", "dst", "9", "old")
	cmdReply(t, c, "ZUNIONSTORE", "dst", "2", "a", "b", "WEIGHTS", "1", "2")
	cmdReply(t, c, "ZINCRBY", "a", "0.5", "x")
	cmdReply(t, c, "ZRANGESTORE", "r", "dst", "0", "1")
	cmdReply(t, c, "ZPOPMIN", "b")
	c.KS.Close()
	c = openZClient(t, dir)
	for _, st := range []scriptStep{
		{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\nw\r\n$1\r\n8\r\n$1\r\ny\r\n$1\r\n8\r\n"},
		{[]string{"ZRANGE", "r", "0", "-1", "WITHSCORES"}, "*4\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\nw\r\n$1\r\n8\r\n"},
		{[]string{"ZSCORE", "a", "x"}, "$3\r\n1.5\r\n"},
		{[]string{"ZRANGE", "b", "0", "-1"}, "*1\r\n$1\r\nw\r\n"},
	} {
		if got := cmdReply(t, c, st.args...); got != st.want {
			t.Errorf("%q after reopen:\n got %q\nwant %q", st.args, got, st.want)
		}
	}
}

func openZClient(t *testing.T, dir string) *Client {
	t.Helper()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ks.Close() })
	return &Client{KS: ks}
}

func TestZSetCommands(t *testing.T) {
	runRecordedScripts(t, []struct {
		name  string
		steps []scriptStep
	}{
		{"zadd", []scriptStep{
			{[]string{"ZADD", "z", "1", "a"}, ":1\r\n"},
			{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, ":2\r\n"},
			{[]string{"ZADD", "z", "NX", "10", "a", "4", "d"}, ":1\r\n"},
			{[]string{"ZSCORE", "z", "a"}, "$1\r\n1\r\n"},
			{[]string{"ZSCORE", "z", "d"}, "$1\r\n4\r\n"},
			{[]string{"ZADD", "z", "XX", "10", "a", "5", "e"}, ":0\r\n"},
			{[]string{"ZSCORE", "z", "a"}, "$2\r\n10\r\n"},
			{[]string{"ZSCORE", "z", "e"}, "$-1\r\n"},
			{[]string{"ZADD", "z", "CH", "11", "a", "2", "b", "6", "f"}, ":2\r\n"},
			{[]string{"ZADD", "z", "XX", "CH", "12", "a", "13", "zz"}, ":1\r\n"},
			{[]string{"ZADD", "z", "GT", "1", "a"}, ":0\r\n"},
			{[]string{"ZADD", "z", "GT", "CH", "100", "a"}, ":1\r\n"},
			{[]string{"ZADD", "z", "LT", "CH", "100", "a", "1", "b"}, ":1\r\n"},
			{[]string{"ZADD", "z", "LT", "0", "new"}, ":1\r\n"},
			{[]string{"ZADD", "z", "NX", "XX", "1", "a"}, "-ERR XX and NX options at the same time are not compatible\r\n"},
			{[]string{"ZADD", "z", "GT", "LT", "1", "a"}, "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"},
			{[]string{"ZADD", "z", "NX", "GT", "1", "a"}, "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"},
			{[]string{"ZADD", "z", "NX", "LT", "1", "a"}, "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"},
			{[]string{"ZADD", "z", "XX", "GT", "200", "a"}, ":0\r\n"},
			{[]string{"ZADD", "z", "INCR", "1", "a", "2", "b"}, "-ERR INCR option supports a single increment-element pair\r\n"},
			{[]string{"ZADD", "z", "INCR", "5", "a"}, "$3\r\n205\r\n"},
			{[]string{"ZADD", "z", "INCR", "NX", "5", "a"}, "$-1\r\n"},
			{[]string{"ZADD", "z", "INCR", "XX", "5", "nope"}, "$-1\r\n"},
			{[]string{"ZADD", "z", "INCR", "GT", "-1", "a"}, "$-1\r\n"},
			{[]string{"ZADD", "z", "INCR", "LT", "-1", "a"}, "$3\r\n204\r\n"},
			{[]string{"ZADD", "z", "INCR", "3", "brandnew"}, "$1\r\n3\r\n"},
			{[]string{"ZADD", "z", "1"}, "-ERR wrong number of arguments for 'zadd' command\r\n"},
			{[]string{"ZADD", "z", "1", "a", "2"}, "-ERR syntax error\r\n"},
			{[]string{"ZADD", "z", "nx"}, "-ERR wrong number of arguments for 'zadd' command\r\n"},
			{[]string{"ZADD", "z", "x", "a"}, "-ERR value is not a valid float\r\n"},
			{[]string{"ZADD", "z", "1", "a", "x", "b"}, "-ERR value is not a valid float\r\n"},
			{[]string{"ZADD", "z", "nan", "a"}, "-ERR value is not a valid float\r\n"},
			{[]string{"ZADD", "z", "1e400", "a"}, "-ERR value is not a valid float\r\n"},
			{[]string{"ZADD", "z", "inf", "big", "-inf", "small", "+inf", "big2"}, ":3\r\n"},
			{[]string{"ZADD", "z", "1", "dup", "2", "dup", "3", "dup"}, ":1\r\n"},
			{[]string{"ZSCORE", "z", "dup"}, "$1\r\n3\r\n"},
			{[]string{"ZADD", "z", "CH", "5", "dup", "5", "dup"}, ":1\r\n"},
			{[]string{"ZADD", "z", "CH", "6", "dup", "5", "dup"}, ":2\r\n"},
			{[]string{"ZADD", "nokey", "XX", "1", "a"}, ":0\r\n"},
			{[]string{"EXISTS", "nokey"}, ":0\r\n"},
			{[]string{"ZADD", "nokey", "XX", "INCR", "1", "a"}, "$-1\r\n"},
			{[]string{"ZADD", "nokey", "GT", "5", "a"}, ":1\r\n"},
			{[]string{"ZADD", "nokey", "GT", "6", "a"}, ":0\r\n"},
			{[]string{"ZSCORE", "nokey", "a"}, "$1\r\n6\r\n"},
			{[]string{"ZADD", "z", "Nx", "xX", "1", "a"}, "-ERR XX and NX options at the same time are not compatible\r\n"},
			{[]string{"ZCARD", "z"}, ":11\r\n"},
			{[]string{"ZCARD", "nokey2"}, ":0\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"ZADD", "s", "1", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZADD", "s", "x", "a"}, "-ERR value is not a valid float\r\n"},
			{[]string{"ZADD", "s", "nx", "xx", "1", "a"}, "-ERR XX and NX options at the same time are not compatible\r\n"},
			{[]string{"ZINCRBY", "s", "1", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZCARD", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZSCORE", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZADD", "z1", "0.1", "a"}, ":1\r\n"},
			{[]string{"ZINCRBY", "z1", "0.2", "a"}, "$19\r\n0.30000000000000004\r\n"},
			{[]string{"ZINCRBY", "z1", "x", "a"}, "-ERR value is not a valid float\r\n"},
			{[]string{"ZINCRBY", "z1", "nx", "a"}, "-ERR syntax error\r\n"},
			{[]string{"ZINCRBY", "z1", "1", "b"}, "$1\r\n1\r\n"},
			{[]string{"ZINCRBY", "z1", "inf", "a"}, "$3\r\ninf\r\n"},
			{[]string{"ZINCRBY", "z1", "-inf", "a"}, "-ERR resulting score is not a number (NaN)\r\n"},
			{[]string{"ZSCORE", "z1", "a"}, "$3\r\ninf\r\n"},
			{[]string{"ZINCRBY", "z1", "inf", "a"}, "$3\r\ninf\r\n"},
			{[]string{"ZADD", "z1", "-0", "zero"}, ":1\r\n"},
			{[]string{"ZSCORE", "z1", "zero"}, "$1\r\n0\r\n"},
			{[]string{"ZADD", "z1", "0", "zero"}, ":0\r\n"},
			{[]string{"ZADD", "z1", "CH", "0", "zero"}, ":0\r\n"},
			{[]string{"ZINCRBY", "z1", "-1", "zero"}, "$2\r\n-1\r\n"},
			{[]string{"ZINCRBY", "z1", "1", "zero"}, "$1\r\n0\r\n"},
			{[]string{"ZADD", "z1", "0x10", "hex", "1e3", "e", "1.", "dot", ".5", "half", "-.5", "neghalf"}, ":5\r\n"},
			{[]string{"ZRANGE", "z1", "0", "-1", "WITHSCORES"}, "*16\r\n$7\r\nneghalf\r\n$4\r\n-0.5\r\n$4\r\nzero\r\n$1\r\n0\r\n$4\r\nhalf\r\n$3\r\n0.5\r\n$1\r\nb\r\n$1\r\n1\r\n$3\r\ndot\r\n$1\r\n1\r\n$3\r\nhex\r\n$2\r\n16\r\n$1\r\ne\r\n$4\r\n1000\r\n$1\r\na\r\n$3\r\ninf\r\n"},
			{[]string{"ZADD", "z2", "1e-320", "tiny"}, ":1\r\n"},
			{[]string{"ZADD", "z2", "1.7976931348623157e308", "max"}, ":1\r\n"},
			{[]string{"ZINCRBY", "z2", "1.7976931348623157e308", "max"}, "$3\r\ninf\r\n"},
			{[]string{"ZRANGE", "z2", "0", "-1", "WITHSCORES"}, "*4\r\n$4\r\ntiny\r\n$23\r\n9.9998886718268301e-321\r\n$3\r\nmax\r\n$3\r\ninf\r\n"},
			{[]string{"ZMSCORE", "z1", "a", "nope", "zero"}, "*3\r\n$3\r\ninf\r\n$-1\r\n$1\r\n0\r\n"},
			{[]string{"ZMSCORE", "nokey", "a", "b"}, "*2\r\n$1\r\n6\r\n$-1\r\n"},
			{[]string{"ZMSCORE", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZMSCORE", "z1"}, "-ERR wrong number of arguments for 'zmscore' command\r\n"},
		}},
		{"range", []scriptStep{
			{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"}, ":5\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1"}, "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1", "WITHSCORES"}, "*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\ne\r\n$1\r\n5\r\n"},
			{[]string{"ZRANGE", "z", "1", "2", "withscores"}, "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZRANGE", "z", "-2", "-1"}, "*2\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"ZRANGE", "z", "-100", "1"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
			{[]string{"ZRANGE", "z", "3", "1"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "5", "10"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "0", "100"}, "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"ZRANGE", "z", "-1", "-5"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1", "REV"}, "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZRANGE", "z", "0", "1", "REV", "WITHSCORES"}, "*4\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n"},
			{[]string{"ZREVRANGE", "z", "0", "1"}, "*2\r\n$1\r\ne\r\n$1\r\nd\r\n"},
			{[]string{"ZREVRANGE", "z", "0", "-1", "WITHSCORES"}, "*10\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"},
			{[]string{"ZREVRANGE", "z", "-2", "-1"}, "*2\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZREVRANGE", "z", "0", "1", "REV"}, "-ERR syntax error\r\n"},
			{[]string{"ZREVRANGE", "z", "0", "1", "BYSCORE"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGE", "z", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANGE", "z", "0", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANGE", "z", "0", "1", "LIMIT", "0", "1"}, "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"},
			{[]string{"ZRANGE", "z", "0", "1", "LIMIT", "0"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGE", "z", "0", "1", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGE", "missing", "0", "-1"}, "*0\r\n"},
			{[]string{"ZRANGE", "missing", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANGE", "z", "(1", "3", "BYSCORE"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGE", "z", "1", "(3", "BYSCORE", "WITHSCORES"}, "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
			{[]string{"ZRANGE", "z", "-inf", "+inf", "BYSCORE"}, "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"ZRANGE", "z", "(1", "(1", "BYSCORE"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "1", "1", "BYSCORE"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"ZRANGE", "z", "3", "1", "BYSCORE"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "3", "1", "BYSCORE", "REV"}, "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "WITHSCORES"}, "*10\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"},
			{[]string{"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "-1"}, "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "5", "2"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "4", "2"}, "*1\r\n$1\r\ne\r\n"},
			{[]string{"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "0"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2", "WITHSCORES"}, "*4\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZRANGE", "z", "x", "1", "BYSCORE"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZRANGE", "z", "1", "nan", "BYSCORE"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZRANGE", "z", "(", "(", "BYSCORE"}, "*0\r\n"},
			{[]string{"ZRANGE", "z", "", "1", "BYSCORE"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"ZRANGE", "z", " 1", " (3", "BYSCORE"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZRANGE", "z", "( 1", "3", "BYSCORE"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGE", "z", "1e400", "-1e400", "BYSCORE", "REV"}, "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZRANGE", "z", "0x1", "0x3", "BYSCORE"}, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGE", "z", "1 ", "3", "BYSCORE"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZRANGE", "z", "((1", "3", "BYSCORE"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZRANGE", "z", "1", "3", "BYSCORE", "BYLEX"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGE", "z", "1", "3", "BYSCORE", "BYSCORE"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGE", "z", "1", "3", "REV", "REV"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGE", "z", "1", "3", "BYSCORE", "LIMIT", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANGE", "z", "1", "3", "BYSCORE", "LIMIT", "1", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANGE", "z", "x", "3", "BYSCORE", "LIMIT", "1", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANGE", "z", "1", "3", "BYSCORE", "LIMIT", "0", "1", "LIMIT", "1", "1"}, "*1\r\n$1\r\nb\r\n"},
			{[]string{"ZRANGEBYSCORE", "z", "1", "3"}, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGEBYSCORE", "z", "1", "3", "WITHSCORES", "LIMIT", "1", "1"}, "*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
			{[]string{"ZRANGEBYSCORE", "z", "1", "3", "LIMIT", "1", "1", "WITHSCORES"}, "*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
			{[]string{"ZRANGEBYSCORE", "z", "1", "3", "REV"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGEBYSCORE", "z", "1", "3", "BYSCORE"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGEBYSCORE", "z", "(1", "(2"}, "*0\r\n"},
			{[]string{"ZRANGEBYSCORE", "z", "1", "x"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZREVRANGEBYSCORE", "z", "3", "1"}, "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZREVRANGEBYSCORE", "z", "1", "3"}, "*0\r\n"},
			{[]string{"ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES", "LIMIT", "0", "2"}, "*4\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n"},
			{[]string{"ZREVRANGEBYSCORE", "z", "(3", "(1"}, "*1\r\n$1\r\nb\r\n"},
			{[]string{"ZRANGEBYSCORE", "missing", "1", "3"}, "*0\r\n"},
			{[]string{"ZRANGEBYSCORE", "missing", "x", "3"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "f", "0", "g"}, ":7\r\n"},
			{[]string{"ZRANGE", "l", "-", "+", "BYLEX"}, "*7\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n"},
			{[]string{"ZRANGE", "l", "[b", "(e", "BYLEX"}, "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"},
			{[]string{"ZRANGE", "l", "(b", "[e", "BYLEX", "LIMIT", "1", "2"}, "*2\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"ZRANGE", "l", "+", "-", "BYLEX", "REV"}, "*7\r\n$1\r\ng\r\n$1\r\nf\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZRANGE", "l", "[e", "(b", "BYLEX", "REV"}, "*3\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES"}, "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"},
			{[]string{"ZRANGE", "l", "a", "+", "BYLEX"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZRANGE", "l", "-a", "+", "BYLEX"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZRANGE", "l", "-", "+a", "BYLEX"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZRANGE", "l", "", "+", "BYLEX"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZRANGE", "l", "+", "-", "BYLEX"}, "*0\r\n"},
			{[]string{"ZRANGE", "l", "-", "-", "BYLEX"}, "*0\r\n"},
			{[]string{"ZRANGE", "l", "+", "+", "BYLEX"}, "*0\r\n"},
			{[]string{"ZRANGE", "l", "[a", "[a", "BYLEX"}, "*1\r\n$1\r\na\r\n"},
			{[]string{"ZRANGE", "l", "(a", "[a", "BYLEX"}, "*0\r\n"},
			{[]string{"ZRANGE", "l", "[", "+", "BYLEX"}, "*7\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n"},
			{[]string{"ZRANGE", "l", "(", "+", "BYLEX"}, "*7\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n"},
			{[]string{"ZRANGE", "l", "[bb", "[dd", "BYLEX"}, "*2\r\n$1\r\nc\r\n$1\r\nd\r\n"},
			{[]string{"ZRANGEBYLEX", "l", "-", "(c"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
			{[]string{"ZRANGEBYLEX", "l", "[aaa", "(g"}, "*5\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"},
			{[]string{"ZRANGEBYLEX", "l", "[a", "[c", "LIMIT", "1", "5"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGEBYLEX", "l", "[a", "[c", "WITHSCORES"}, "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"},
			{[]string{"ZRANGEBYLEX", "l", "a", "c"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZREVRANGEBYLEX", "l", "+", "-"}, "*7\r\n$1\r\ng\r\n$1\r\nf\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZREVRANGEBYLEX", "l", "(c", "-"}, "*2\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZREVRANGEBYLEX", "l", "[g", "[a", "LIMIT", "2", "3"}, "*3\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n"},
			{[]string{"ZREVRANGEBYLEX", "l", "-", "+"}, "*0\r\n"},
			{[]string{"ZRANGEBYLEX", "missing", "-", "+"}, "*0\r\n"},
			{[]string{"ZRANGEBYLEX", "missing", "a", "+"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZCOUNT", "z", "-inf", "+inf"}, ":5\r\n"},
			{[]string{"ZCOUNT", "z", "(1", "3"}, ":2\r\n"},
			{[]string{"ZCOUNT", "z", "3", "1"}, ":0\r\n"},
			{[]string{"ZCOUNT", "z", "(3", "(3"}, ":0\r\n"},
			{[]string{"ZCOUNT", "z", "3", "3"}, ":1\r\n"},
			{[]string{"ZCOUNT", "z", "x", "3"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZCOUNT", "missing", "x", "3"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZCOUNT", "missing", "1", "3"}, ":0\r\n"},
			{[]string{"ZLEXCOUNT", "l", "-", "+"}, ":7\r\n"},
			{[]string{"ZLEXCOUNT", "l", "[b", "(e"}, ":3\r\n"},
			{[]string{"ZLEXCOUNT", "l", "(g", "+"}, ":0\r\n"},
			{[]string{"ZLEXCOUNT", "l", "+", "-"}, ":0\r\n"},
			{[]string{"ZLEXCOUNT", "l", "x", "+"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZLEXCOUNT", "missing", "-", "+"}, ":0\r\n"},
			{[]string{"ZRANK", "z", "a"}, ":0\r\n"},
			{[]string{"ZRANK", "z", "e"}, ":4\r\n"},
			{[]string{"ZRANK", "z", "nope"}, "$-1\r\n"},
			{[]string{"ZRANK", "missing", "a"}, "$-1\r\n"},
			{[]string{"ZREVRANK", "z", "a"}, ":4\r\n"},
			{[]string{"ZREVRANK", "z", "e"}, ":0\r\n"},
			{[]string{"ZREVRANK", "z", "nope"}, "$-1\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"ZRANGE", "s", "0", "-1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZRANGE", "s", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANGEBYSCORE", "s", "1", "2"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZRANGEBYLEX", "s", "-", "+"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZCOUNT", "s", "1", "2"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZCOUNT", "s", "x", "2"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZLEXCOUNT", "s", "-", "+"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZRANK", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZREVRANGE", "s", "0", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z", "0", "-1"}, ":5\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*10\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\ne\r\n$1\r\n5\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z", "1", "2", "REV"}, ":2\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*4\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z", "(1", "3", "BYSCORE", "LIMIT", "1", "5"}, ":1\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZRANGESTORE", "dst", "l", "[b", "[d", "BYLEX"}, ":3\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*6\r\n$1\r\nb\r\n$1\r\n0\r\n$1\r\nc\r\n$1\r\n0\r\n$1\r\nd\r\n$1\r\n0\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z", "0", "-1", "WITHSCORES"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANGESTORE", "dst", "missing", "0", "-1"}, ":0\r\n"},
			{[]string{"EXISTS", "dst"}, ":0\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z", "0", "1"}, ":2\r\n"},
			{[]string{"EXPIRE", "dst", "100"}, ":1\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z", "2", "3"}, ":2\r\n"},
			{[]string{"TTL", "dst"}, ":-1\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z", "5", "6"}, ":0\r\n"},
			{[]string{"EXISTS", "dst"}, ":0\r\n"},
			{[]string{"ZRANGESTORE", "s", "z", "0", "1"}, ":2\r\n"},
			{[]string{"TYPE", "s"}, "+zset\r\n"},
			{[]string{"ZRANGESTORE", "dst", "s", "0", "1"}, ":2\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"ZRANGESTORE", "z", "z", "1", "2"}, ":2\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
			{[]string{"ZRANGESTORE", "dst", "z"}, "-ERR wrong number of arguments for 'zrangestore' command\r\n"},
		}},
		{"rem", []scriptStep{
			{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"}, ":6\r\n"},
			{[]string{"ZREM", "z", "a"}, ":1\r\n"},
			{[]string{"ZREM", "z", "a"}, ":0\r\n"},
			{[]string{"ZREM", "z", "b", "b", "c", "nope"}, ":2\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1"}, "*3\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"},
			{[]string{"ZREM", "missing", "a"}, ":0\r\n"},
			{[]string{"ZREM", "z"}, "-ERR wrong number of arguments for 'zrem' command\r\n"},
			{[]string{"ZREM", "z", "d", "e", "f"}, ":3\r\n"},
			{[]string{"EXISTS", "z"}, ":0\r\n"},
			{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"}, ":6\r\n"},
			{[]string{"ZREMRANGEBYRANK", "z", "0", "0"}, ":1\r\n"},
			{[]string{"ZREMRANGEBYRANK", "z", "-2", "-1"}, ":2\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1"}, "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"},
			{[]string{"ZREMRANGEBYRANK", "z", "5", "10"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYRANK", "z", "2", "1"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYRANK", "z", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZREMRANGEBYRANK", "z", "0", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZREMRANGEBYRANK", "missing", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZREMRANGEBYRANK", "missing", "0", "1"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYRANK", "z", "-100", "100"}, ":3\r\n"},
			{[]string{"EXISTS", "z"}, ":0\r\n"},
			{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"}, ":6\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "z", "(1", "3"}, ":2\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1"}, "*4\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "z", "10", "1"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "z", "x", "1"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "missing", "x", "1"}, "-ERR min or max is not a float\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "missing", "1", "2"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "z", "-inf", "(5"}, ":2\r\n"},
			{[]string{"ZRANGE", "z", "0", "-1", "WITHSCORES"}, "*4\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nf\r\n$1\r\n6\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "z", "-inf", "+inf"}, ":2\r\n"},
			{[]string{"EXISTS", "z"}, ":0\r\n"},
			{[]string{"ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "f", "0", "g"}, ":7\r\n"},
			{[]string{"ZREMRANGEBYLEX", "l", "[b", "(d"}, ":2\r\n"},
			{[]string{"ZRANGE", "l", "0", "-1"}, "*5\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n"},
			{[]string{"ZREMRANGEBYLEX", "l", "(e", "+"}, ":2\r\n"},
			{[]string{"ZRANGE", "l", "0", "-1"}, "*3\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\ne\r\n"},
			{[]string{"ZREMRANGEBYLEX", "l", "+", "-"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYLEX", "l", "a", "+"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZREMRANGEBYLEX", "missing", "a", "+"}, "-ERR min or max not valid string range item\r\n"},
			{[]string{"ZREMRANGEBYLEX", "missing", "-", "+"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYLEX", "l", "-", "+"}, ":3\r\n"},
			{[]string{"EXISTS", "l"}, ":0\r\n"},
			{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"}, ":6\r\n"},
			{[]string{"ZPOPMIN", "z"}, "*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
			{[]string{"ZPOPMAX", "z"}, "*2\r\n$1\r\nf\r\n$1\r\n6\r\n"},
			{[]string{"ZPOPMIN", "z", "2"}, "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZPOPMAX", "z", "0"}, "*0\r\n"},
			{[]string{"ZPOPMIN", "z", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"ZPOPMIN", "z", "x"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"ZPOPMIN", "z", "1", "2"}, "-ERR syntax error\r\n"},
			{[]string{"ZPOPMIN", "missing"}, "*0\r\n"},
			{[]string{"ZPOPMIN", "missing", "3"}, "*0\r\n"},
			{[]string{"ZPOPMIN", "missing", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"ZPOPMAX", "z", "10"}, "*4\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n"},
			{[]string{"EXISTS", "z"}, ":0\r\n"},
			{[]string{"ZADD", "z", "1", "a", "2", "b"}, ":2\r\n"},
			{[]string{"ZPOPMAX", "z", "1"}, "*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"ZREM", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZREMRANGEBYRANK", "s", "0", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZREMRANGEBYRANK", "s", "x", "1"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZREMRANGEBYSCORE", "s", "0", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZREMRANGEBYLEX", "s", "-", "+"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZPOPMIN", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZPOPMAX", "s", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZPOPMAX", "s", "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"ZADD", "e", "1", "a"}, ":1\r\n"},
			{[]string{"EXPIRE", "e", "100"}, ":1\r\n"},
			{[]string{"ZREM", "e", "a"}, ":1\r\n"},
			{[]string{"EXISTS", "e"}, ":0\r\n"},
		}},
		{"algebra", []scriptStep{
			{[]string{"ZADD", "a", "1", "x", "2", "y", "3", "z"}, ":3\r\n"},
			{[]string{"ZADD", "b", "10", "y", "20", "z", "30", "w"}, ":3\r\n"},
			{[]string{"ZUNION", "2", "a", "b"}, "*4\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n$1\r\nw\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "WITHSCORES"}, "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$2\r\n30\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "WEIGHTS", "2", "0.5", "WITHSCORES"}, "*8\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\ny\r\n$1\r\n9\r\n$1\r\nw\r\n$2\r\n15\r\n$1\r\nz\r\n$2\r\n16\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"}, "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n$1\r\nw\r\n$2\r\n30\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "AGGREGATE", "max", "WITHSCORES"}, "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n10\r\n$1\r\nz\r\n$2\r\n20\r\n$1\r\nw\r\n$2\r\n30\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "WEIGHTS", "1", "WITHSCORES"}, "-ERR weight value is not a float\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "WEIGHTS", "1", "x"}, "-ERR weight value is not a float\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "AGGREGATE", "avg"}, "-ERR syntax error\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "AGGREGATE"}, "-ERR syntax error\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"ZUNION", "0", "a"}, "-ERR at least 1 input key is needed for 'zunion' command\r\n"},
			{[]string{"ZUNION", "-1", "a"}, "-ERR at least 1 input key is needed for 'zunion' command\r\n"},
			{[]string{"ZUNION", "x", "a"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZUNION", "3", "a", "b"}, "-ERR syntax error\r\n"},
			{[]string{"ZUNION", "1", "missing"}, "*0\r\n"},
			{[]string{"ZUNION", "2", "a", "missing", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"},
			{[]string{"ZUNION", "2", "a", "b", "WEIGHTS", "1", "2", "AGGREGATE", "SUM", "WEIGHTS", "3", "4", "WITHSCORES"}, "*8\r\n$1\r\nx\r\n$1\r\n3\r\n$1\r\ny\r\n$2\r\n46\r\n$1\r\nz\r\n$2\r\n89\r\n$1\r\nw\r\n$3\r\n120\r\n"},
			{[]string{"ZINTER", "2", "a", "b"}, "*2\r\n$1\r\ny\r\n$1\r\nz\r\n"},
			{[]string{"ZINTER", "2", "a", "b", "WITHSCORES"}, "*4\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n"},
			{[]string{"ZINTER", "2", "a", "b", "AGGREGATE", "MAX", "WEIGHTS", "1", "-1", "WITHSCORES"}, "*4\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"},
			{[]string{"ZINTER", "2", "a", "missing"}, "*0\r\n"},
			{[]string{"ZINTER", "1", "a", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"},
			{[]string{"ZDIFF", "2", "a", "b"}, "*1\r\n$1\r\nx\r\n"},
			{[]string{"ZDIFF", "2", "a", "b", "WITHSCORES"}, "*2\r\n$1\r\nx\r\n$1\r\n1\r\n"},
			{[]string{"ZDIFF", "1", "b", "WITHSCORES"}, "*6\r\n$1\r\ny\r\n$2\r\n10\r\n$1\r\nz\r\n$2\r\n20\r\n$1\r\nw\r\n$2\r\n30\r\n"},
			{[]string{"ZDIFF", "2", "a", "b", "WEIGHTS", "1", "2"}, "-ERR syntax error\r\n"},
			{[]string{"ZDIFF", "2", "a", "b", "AGGREGATE", "SUM"}, "-ERR syntax error\r\n"},
			{[]string{"ZDIFF", "2", "missing", "a"}, "*0\r\n"},
			{[]string{"ZDIFF", "0", "a"}, "-ERR at least 1 input key is needed for 'zdiff' command\r\n"},
			{[]string{"ZUNIONSTORE", "dst", "2", "a", "b"}, ":4\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$2\r\n30\r\n"},
			{[]string{"ZUNIONSTORE", "dst", "2", "a", "b", "WITHSCORES"}, "-ERR syntax error\r\n"},
			{[]string{"ZINTERSTORE", "dst", "2", "a", "b", "WEIGHTS", "2", "3"}, ":2\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*4\r\n$1\r\ny\r\n$2\r\n34\r\n$1\r\nz\r\n$2\r\n66\r\n"},
			{[]string{"ZDIFFSTORE", "dst", "2", "b", "a"}, ":1\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*2\r\n$1\r\nw\r\n$2\r\n30\r\n"},
			{[]string{"ZDIFFSTORE", "dst", "2", "a", "a"}, ":0\r\n"},
			{[]string{"EXISTS", "dst"}, ":0\r\n"},
			{[]string{"ZUNIONSTORE", "dst", "0", "a"}, "-ERR at least 1 input key is needed for 'zunionstore' command\r\n"},
			{[]string{"ZINTERSTORE", "dst", "0", "a"}, "-ERR at least 1 input key is needed for 'zinterstore' command\r\n"},
			{[]string{"ZDIFFSTORE", "dst", "0", "a"}, "-ERR at least 1 input key is needed for 'zdiffstore' command\r\n"},
			{[]string{"ZUNIONSTORE", "dst", "1", "missing"}, ":0\r\n"},
			{[]string{"ZUNIONSTORE", "a", "2", "a", "b"}, ":4\r\n"},
			{[]string{"ZRANGE", "a", "0", "-1", "WITHSCORES"}, "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$2\r\n30\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"ZUNION", "2", "a", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZUNION", "2", "s", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZUNION", "2", "s", "a", "BADOPT"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZUNIONSTORE", "dst", "2", "a", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZUNIONSTORE", "s", "1", "b"}, ":3\r\n"},
			{[]string{"TYPE", "s"}, "+zset\r\n"},
			{[]string{"ZADD", "inf1", "inf", "x", "-inf", "y", "1", "z"}, ":3\r\n"},
			{[]string{"ZADD", "inf2", "-inf", "x", "inf", "y", "0", "z"}, ":3\r\n"},
			{[]string{"ZUNION", "2", "inf1", "inf2", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$1\r\n0\r\n$1\r\nz\r\n$1\r\n1\r\n"},
			{[]string{"ZINTER", "2", "inf1", "inf2", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$1\r\n0\r\n$1\r\nz\r\n$1\r\n1\r\n"},
			{[]string{"ZUNION", "2", "inf1", "inf2", "WEIGHTS", "0", "1", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$4\r\n-inf\r\n$1\r\nz\r\n$1\r\n0\r\n$1\r\ny\r\n$3\r\ninf\r\n"},
			{[]string{"ZINTER", "2", "inf1", "inf2", "WEIGHTS", "1", "0", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$1\r\n0\r\n$1\r\nz\r\n$1\r\n1\r\n"},
			{[]string{"ZINTER", "2", "inf1", "inf2", "WEIGHTS", "1", "0", "AGGREGATE", "MIN", "WITHSCORES"}, "*6\r\n$1\r\ny\r\n$4\r\n-inf\r\n$1\r\nz\r\n$1\r\n0\r\n$1\r\nx\r\n$3\r\ninf\r\n"},
			{[]string{"ZINTER", "2", "inf1", "inf2", "WEIGHTS", "1", "0", "AGGREGATE", "MAX", "WITHSCORES"}, "*6\r\n$1\r\ny\r\n$4\r\n-inf\r\n$1\r\nz\r\n$1\r\n1\r\n$1\r\nx\r\n$3\r\ninf\r\n"},
			{[]string{"ZUNION", "2", "inf1", "inf2", "WEIGHTS", "inf", "1", "WITHSCORES"}, "*6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$1\r\n0\r\n$1\r\nz\r\n$3\r\ninf\r\n"},
			{[]string{"ZUNION", "1", "inf1", "WEIGHTS", "nan"}, "-ERR weight value is not a float\r\n"},
			{[]string{"ZUNION", "1", "inf1", "WEIGHTS", " 1"}, "-ERR weight value is not a float\r\n"},
			{[]string{"EXPIRE", "dst", "100"}, ":0\r\n"},
			{[]string{"ZUNIONSTORE", "dst", "1", "b"}, ":3\r\n"},
			{[]string{"TTL", "dst"}, ":-1\r\n"},
			{[]string{"ZINTERSTORE", "dst", "2", "a", "missing"}, ":0\r\n"},
			{[]string{"EXISTS", "dst"}, ":0\r\n"},
			{[]string{"ZUNIONSTORE", "dst"}, "-ERR wrong number of arguments for 'zunionstore' command\r\n"},
			{[]string{"ZUNION", "1"}, "-ERR wrong number of arguments for 'zunion' command\r\n"},
		}},
		{"misc", []scriptStep{
			{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, ":3\r\n"},
			{[]string{"ZSCAN", "z", "0"}, "*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZSCAN", "z", "0", "COUNT", "1"}, "*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZSCAN", "z", "0", "MATCH", "a*"}, "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
			{[]string{"ZSCAN", "z", "0", "MATCH", "*"}, "*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZSCAN", "z", "0", "COUNT", "0"}, "-ERR syntax error\r\n"},
			{[]string{"ZSCAN", "z", "0", "COUNT", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZSCAN", "z", "0", "TYPE", "zset"}, "-ERR syntax error\r\n"},
			{[]string{"ZSCAN", "z", "0", "MATCH"}, "-ERR syntax error\r\n"},
			{[]string{"ZSCAN", "z", "0", "FOO", "bar"}, "-ERR syntax error\r\n"},
			{[]string{"ZSCAN", "z", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"ZSCAN", "z", "-1"}, "*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"ZSCAN", "missing", "0"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"ZSCAN", "missing", "0", "FOO"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"ZSCAN", "missing", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"ZSCAN", "s", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZSCAN", "s", "x"}, "-ERR invalid cursor\r\n"},
			{[]string{"ZSCAN", "s", "0", "FOO"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZRANDMEMBER", "missing"}, "$-1\r\n"},
			{[]string{"ZRANDMEMBER", "missing", "5"}, "*0\r\n"},
			{[]string{"ZRANDMEMBER", "missing", "5", "WITHSCORES"}, "*0\r\n"},
			{[]string{"ZRANDMEMBER", "missing", "-5"}, "*0\r\n"},
			{[]string{"ZRANDMEMBER", "missing", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANDMEMBER", "missing", "1", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANDMEMBER", "z", "0"}, "*0\r\n"},
			{[]string{"ZRANDMEMBER", "z", "0", "WITHSCORES"}, "*0\r\n"},
			{[]string{"ZRANDMEMBER", "z", "3"}, "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"},
			{[]string{"ZRANDMEMBER", "z", "10", "WITHSCORES"}, "*6\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"},
			{[]string{"ZRANDMEMBER", "z", "3", "WITHSCORES", "x"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANDMEMBER", "z", "3", "foo"}, "-ERR syntax error\r\n"},
			{[]string{"ZRANDMEMBER", "z", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANDMEMBER", "z", "1.5"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZRANDMEMBER", "z", "-9223372036854775808"}, "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"},
			{[]string{"ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES"}, "-ERR value is out of range\r\n"},
			{[]string{"ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"}, "-ERR value is out of range\r\n"},
			{[]string{"ZRANDMEMBER", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZRANDMEMBER", "s", "1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZRANDMEMBER", "s", "x"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZADD", "one", "5", "only"}, ":1\r\n"},
			{[]string{"ZRANDMEMBER", "one"}, "$4\r\nonly\r\n"},
			{[]string{"ZRANDMEMBER", "one", "-3", "WITHSCORES"}, "*6\r\n$4\r\nonly\r\n$1\r\n5\r\n$4\r\nonly\r\n$1\r\n5\r\n$4\r\nonly\r\n$1\r\n5\r\n"},
			{[]string{"ZRANDMEMBER", "one", "1", "WITHSCORES"}, "*2\r\n$4\r\nonly\r\n$1\r\n5\r\n"},
			{[]string{"ZRANDMEMBER", "one", "-1"}, "*1\r\n$4\r\nonly\r\n"},
			{[]string{"TYPE", "one"}, "+zset\r\n"},
			{[]string{"OBJECT", "ENCODING", "one"}, "$8\r\nlistpack\r\n"},
			{[]string{"ZCARD"}, "-ERR wrong number of arguments for 'zcard' command\r\n"},
		}},
		{"bzpop", []scriptStep{
			{[]string{"ZADD", "z1", "1", "a", "2", "b", "3", "c"}, ":3\r\n"},
			{[]string{"ZADD", "z2", "5", "x"}, ":1\r\n"},
			{[]string{"BZPOPMIN", "z1", "0"}, "*3\r\n$2\r\nz1\r\n$1\r\na\r\n$1\r\n1\r\n"},
			{[]string{"BZPOPMAX", "z1", "0"}, "*3\r\n$2\r\nz1\r\n$1\r\nc\r\n$1\r\n3\r\n"},
			{[]string{"BZPOPMIN", "missing", "z2", "z1", "0"}, "*3\r\n$2\r\nz2\r\n$1\r\nx\r\n$1\r\n5\r\n"},
			{[]string{"BZPOPMAX", "missing", "z1", "1.5"}, "*3\r\n$2\r\nz1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
			{[]string{"BZPOPMIN", "z1", "-1"}, "-ERR timeout is negative\r\n"},
			{[]string{"BZPOPMIN", "z1", "x"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BZPOPMIN", "z1", "inf"}, "-ERR timeout is negative\r\n"},
			{[]string{"BZPOPMIN", "z1", "1e20"}, "-ERR timeout is negative\r\n"},
			{[]string{"BZPOPMIN", "z1"}, "-ERR wrong number of arguments for 'bzpopmin' command\r\n"},
			{[]string{"BZPOPMIN", "z2", "0.01"}, "*-1\r\n"},
			{[]string{"EXISTS", "z2"}, ":0\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"BZPOPMIN", "s", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"BZPOPMIN", "s", "x"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BZPOPMIN", "z1", "s", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"BZPOPMIN", "s", "z1", "0"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		}},
		{"sets", []scriptStep{
			{[]string{"ZADD", "a", "1", "x", "2", "y", "5", "q"}, ":3\r\n"},
			{[]string{"SADD", "st", "x", "z", "q"}, ":3\r\n"},
			{[]string{"ZUNION", "2", "a", "st", "WITHSCORES"}, "*8\r\n$1\r\nz\r\n$1\r\n1\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nq\r\n$1\r\n6\r\n"},
			{[]string{"ZUNION", "2", "st", "a", "WEIGHTS", "3", "1", "AGGREGATE", "MAX", "WITHSCORES"}, "*8\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nx\r\n$1\r\n3\r\n$1\r\nz\r\n$1\r\n3\r\n$1\r\nq\r\n$1\r\n5\r\n"},
			{[]string{"ZINTER", "2", "a", "st", "WITHSCORES"}, "*4\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\nq\r\n$1\r\n6\r\n"},
			{[]string{"ZINTER", "2", "st", "a", "AGGREGATE", "MIN", "WITHSCORES"}, "*4\r\n$1\r\nq\r\n$1\r\n1\r\n$1\r\nx\r\n$1\r\n1\r\n"},
			{[]string{"ZDIFF", "2", "a", "st", "WITHSCORES"}, "*2\r\n$1\r\ny\r\n$1\r\n2\r\n"},
			{[]string{"ZDIFF", "2", "st", "a", "WITHSCORES"}, "*2\r\n$1\r\nz\r\n$1\r\n1\r\n"},
			{[]string{"ZUNIONSTORE", "dst", "1", "st"}, ":3\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*6\r\n$1\r\nq\r\n$1\r\n1\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\nz\r\n$1\r\n1\r\n"},
			{[]string{"TYPE", "dst"}, "+zset\r\n"},
			{[]string{"ZRANGE", "st", "0", "-1"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZADD", "st", "1", "a"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		}},
		{"more", []scriptStep{
			{[]string{"ZADD", "m", "1", "b", "2", "a", "2", "c", "3", "a1", "1", "zz"}, ":5\r\n"},
			{[]string{"ZRANGEBYLEX", "m", "-", "+"}, "*5\r\n$1\r\nb\r\n$2\r\nzz\r\n$1\r\na\r\n$1\r\nc\r\n$2\r\na1\r\n"},
			{[]string{"ZRANGEBYLEX", "m", "[a", "[c"}, "*1\r\n$1\r\nb\r\n"},
			{[]string{"ZLEXCOUNT", "m", "[b", "[zz"}, ":0\r\n"},
			{[]string{"ZREMRANGEBYLEX", "m", "[b", "[c"}, ":0\r\n"},
			{[]string{"ZRANGE", "m", "0", "-1", "WITHSCORES"}, "*10\r\n$1\r\nb\r\n$1\r\n1\r\n$2\r\nzz\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n2\r\n$2\r\na1\r\n$1\r\n3\r\n"},
			{[]string{"ZRANGESTORE", "dst", "m", "+", "-", "BYLEX", "REV", "LIMIT", "0", "2"}, ":2\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*4\r\n$1\r\nc\r\n$1\r\n2\r\n$2\r\na1\r\n$1\r\n3\r\n"},
			{[]string{"ZRANGESTORE", "dst", "m", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "1"}, ":1\r\n"},
			{[]string{"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, "*2\r\n$1\r\nc\r\n$1\r\n2\r\n"},
			{[]string{"ZRANGE", "m", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "-1"}, "*5\r\n$2\r\na1\r\n$1\r\nc\r\n$1\r\na\r\n$2\r\nzz\r\n$1\r\nb\r\n"},
			{[]string{"ZREVRANGEBYSCORE", "m", "(3", "(1", "WITHSCORES"}, "*4\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n2\r\n"},
			{[]string{"ZREVRANGEBYSCORE", "m", "3", "-inf", "LIMIT", "1", "10"}, "*4\r\n$1\r\nc\r\n$1\r\na\r\n$2\r\nzz\r\n$1\r\nb\r\n"},
			{[]string{"ZREVRANGE", "m", "0", "0", "WITHSCORES"}, "*2\r\n$2\r\na1\r\n$1\r\n3\r\n"},
			{[]string{"ZREVRANGE", "m", "-1", "-1", "WITHSCORES"}, "*2\r\n$1\r\nb\r\n$1\r\n1\r\n"},
			{[]string{"ZREVRANGE", "m", "1", "100"}, "*4\r\n$1\r\nc\r\n$1\r\na\r\n$2\r\nzz\r\n$1\r\nb\r\n"},
			{[]string{"ZADD", "w", "-1", "neg", "1e300", "big"}, ":2\r\n"},
			{[]string{"ZINCRBY", "w", "1e300", "big"}, "$23\r\n2.0000000000000001e+300\r\n"},
			{[]string{"ZSCORE", "w", "big"}, "$23\r\n2.0000000000000001e+300\r\n"},
			{[]string{"ZADD", "w", "1.0000000000000002", "e1", "0.3", "e2", "100.5", "e3", "-1e-10", "e4", "3.0e5", "e5", "12345678.9", "e6"}, ":6\r\n"},
			{[]string{"ZRANGE", "w", "0", "-1", "WITHSCORES"}, "*16\r\n$3\r\nneg\r\n$2\r\n-1\r\n$2\r\ne4\r\n$6\r\n-1e-10\r\n$2\r\ne2\r\n$19\r\n0.29999999999999999\r\n$2\r\ne1\r\n$18\r\n1.0000000000000002\r\n$2\r\ne3\r\n$5\r\n100.5\r\n$2\r\ne5\r\n$6\r\n300000\r\n$2\r\ne6\r\n$10\r\n12345678.9\r\n$3\r\nbig\r\n$23\r\n2.0000000000000001e+300\r\n"},
			{[]string{"ZCOUNT", "w", "(-1", "(1e300"}, ":6\r\n"},
			{[]string{"ZCOUNT", "w", "-1e-10", "-1e-10"}, ":1\r\n"},
			{[]string{"ZCOUNT", "w", "(-1e-10", "(-1e-10"}, ":0\r\n"},
		}},
		{"encoding", []scriptStep{
			{[]string{"ZADD", "one", "1", "a"}, ":1\r\n"},
			{[]string{"OBJECT", "ENCODING", "one"}, "$8\r\nlistpack\r\n"},
			{[]string{"ZADD", "one", "1", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}, ":1\r\n"},
			{[]string{"OBJECT", "ENCODING", "one"}, "$8\r\nskiplist\r\n"},
			{[]string{"ZADD", "two", "1", "a"}, ":1\r\n"},
			{[]string{"ZADD", "two", "1", "m1", "2", "m2", "3", "m3", "4", "m4", "5", "m5", "6", "m6", "7", "m7", "8", "m8", "9", "m9", "10", "m10", "11", "m11", "12", "m12", "13", "m13", "14", "m14", "15", "m15", "16", "m16", "17", "m17", "18", "m18", "19", "m19", "20", "m20", "21", "m21", "22", "m22", "23", "m23", "24", "m24", "25", "m25", "26", "m26", "27", "m27", "28", "m28", "29", "m29", "30", "m30", "31", "m31", "32", "m32", "33", "m33", "34", "m34", "35", "m35", "36", "m36", "37", "m37", "38", "m38", "39", "m39", "40", "m40", "41", "m41", "42", "m42", "43", "m43", "44", "m44", "45", "m45", "46", "m46", "47", "m47", "48", "m48", "49", "m49", "50", "m50", "51", "m51", "52", "m52", "53", "m53", "54", "m54", "55", "m55", "56", "m56", "57", "m57", "58", "m58", "59", "m59", "60", "m60", "61", "m61", "62", "m62", "63", "m63", "64", "m64", "65", "m65", "66", "m66", "67", "m67", "68", "m68", "69", "m69", "70", "m70", "71", "m71", "72", "m72", "73", "m73", "74", "m74", "75", "m75", "76", "m76", "77", "m77", "78", "m78", "79", "m79", "80", "m80", "81", "m81", "82", "m82", "83", "m83", "84", "m84", "85", "m85", "86", "m86", "87", "m87", "88", "m88", "89", "m89", "90", "m90", "91", "m91", "92", "m92", "93", "m93", "94", "m94", "95", "m95", "96", "m96", "97", "m97", "98", "m98", "99", "m99", "100", "m100", "101", "m101", "102", "m102", "103", "m103", "104", "m104", "105", "m105", "106", "m106", "107", "m107", "108", "m108", "109", "m109", "110", "m110", "111", "m111", "112", "m112", "113", "m113", "114", "m114", "115", "m115", "116", "m116", "117", "m117", "118", "m118", "119", "m119", "120", "m120", "121", "m121", "122", "m122", "123", "m123", "124", "m124", "125", "m125", "126", "m126", "127", "m127"}, ":127\r\n"},
			{[]string{"OBJECT", "ENCODING", "two"}, "$8\r\nlistpack\r\n"},
			{[]string{"ZADD", "two", "0", "last"}, ":1\r\n"},
			{[]string{"OBJECT", "ENCODING", "two"}, "$8\r\nskiplist\r\n"},
			{[]string{"ZREM", "two", "last"}, ":1\r\n"},
			{[]string{"OBJECT", "ENCODING", "two"}, "$8\r\nskiplist\r\n"},
		}},
		{"sum_order", []scriptStep{
			{[]string{"ZADD", "a", "1e16", "x", "1", "p", "2", "q"}, ":3\r\n"},
			{[]string{"ZADD", "b", "1", "x", "1", "p"}, ":2\r\n"},
			{[]string{"ZADD", "c", "1", "x"}, ":1\r\n"},
			{[]string{"ZUNION", "3", "a", "b", "c", "WITHSCORES"}, "*6\r\n$1\r\np\r\n$1\r\n2\r\n$1\r\nq\r\n$1\r\n2\r\n$1\r\nx\r\n$17\r\n10000000000000002\r\n"},
			{[]string{"ZINTER", "3", "a", "b", "c", "WITHSCORES"}, "*2\r\n$1\r\nx\r\n$17\r\n10000000000000002\r\n"},
			{[]string{"ZUNION", "3", "c", "b", "a", "WITHSCORES"}, "*6\r\n$1\r\np\r\n$1\r\n2\r\n$1\r\nq\r\n$1\r\n2\r\n$1\r\nx\r\n$17\r\n10000000000000002\r\n"},
			{[]string{"ZINTER", "3", "c", "b", "a", "WITHSCORES"}, "*2\r\n$1\r\nx\r\n$17\r\n10000000000000002\r\n"},
		}},
		{"mpop_intercard", []scriptStep{
			{[]string{"ZADD", "a", "1", "x", "2", "y", "3", "z"}, ":3\r\n"},
			{[]string{"ZADD", "b", "10", "p", "20", "q"}, ":2\r\n"},
			{[]string{"ZMPOP", "1", "a", "MIN"}, "*2\r\n$1\r\na\r\n*1\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n"},
			{[]string{"ZMPOP", "2", "missing", "a", "MAX", "COUNT", "5"}, "*2\r\n$1\r\na\r\n*2\r\n*2\r\n$1\r\nz\r\n$1\r\n3\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n"},
			{[]string{"EXISTS", "a"}, ":0\r\n"},
			{[]string{"ZMPOP", "2", "missing", "b", "MIN", "COUNT", "1"}, "*2\r\n$1\r\nb\r\n*1\r\n*2\r\n$1\r\np\r\n$2\r\n10\r\n"},
			{[]string{"ZMPOP", "1", "missing", "MIN"}, "*-1\r\n"},
			{[]string{"ZMPOP", "0", "a", "MIN"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"ZMPOP", "-1", "a", "MIN"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"ZMPOP", "x", "a", "MIN"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"ZMPOP", "2", "a", "MIN"}, "-ERR syntax error\r\n"},
			{[]string{"ZMPOP", "1", "a", "FOO"}, "-ERR syntax error\r\n"},
			{[]string{"ZMPOP", "1", "a", "MIN", "COUNT", "0"}, "-ERR count should be greater than 0\r\n"},
			{[]string{"ZMPOP", "1", "a", "MIN", "COUNT", "-1"}, "-ERR count should be greater than 0\r\n"},
			{[]string{"ZMPOP", "1", "a", "MIN", "COUNT", "x"}, "-ERR count should be greater than 0\r\n"},
			{[]string{"ZMPOP", "1", "a", "MIN", "COUNT", "1", "COUNT", "1"}, "-ERR syntax error\r\n"},
			{[]string{"ZMPOP", "1", "a", "MIN", "COUNT"}, "-ERR syntax error\r\n"},
			{[]string{"ZMPOP", "1", "a", "MIN", "FOO"}, "-ERR syntax error\r\n"},
			{[]string{"ZMPOP", "3", "a", "b"}, "-ERR syntax error\r\n"},
			{[]string{"ZMPOP", "1", "a"}, "-ERR wrong number of arguments for 'zmpop' command\r\n"},
			{[]string{"SET", "s", "v"}, "+OK\r\n"},
			{[]string{"ZMPOP", "1", "s", "MIN"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZMPOP", "2", "missing", "s", "MAX"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZMPOP", "2", "b", "s", "MAX"}, "*2\r\n$1\r\nb\r\n*1\r\n*2\r\n$1\r\nq\r\n$2\r\n20\r\n"},
			{[]string{"ZADD", "b", "10", "p", "20", "q"}, ":2\r\n"},
			{[]string{"BZMPOP", "0", "2", "missing", "b", "MIN", "COUNT", "10"}, "*2\r\n$1\r\nb\r\n*2\r\n*2\r\n$1\r\np\r\n$2\r\n10\r\n*2\r\n$1\r\nq\r\n$2\r\n20\r\n"},
			{[]string{"BZMPOP", "0.01", "1", "b", "MIN"}, "*-1\r\n"},
			{[]string{"BZMPOP", "x", "1", "b", "MIN"}, "-ERR timeout is not a float or out of range\r\n"},
			{[]string{"BZMPOP", "-1", "1", "b", "MIN"}, "-ERR timeout is negative\r\n"},
			{[]string{"BZMPOP", "-1", "0", "b", "MIN"}, "-ERR numkeys should be greater than 0\r\n"},
			{[]string{"BZMPOP", "x", "1", "b", "FOO"}, "-ERR syntax error\r\n"},
			{[]string{"BZMPOP", "0", "1", "s", "MIN"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"BZMPOP", "0", "1", "a"}, "-ERR wrong number of arguments for 'bzmpop' command\r\n"},
			{[]string{"ZADD", "c", "1", "x", "2", "y", "3", "z"}, ":3\r\n"},
			{[]string{"ZADD", "d", "2", "y", "3", "z", "4", "w"}, ":3\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d"}, ":2\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "LIMIT", "1"}, ":1\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "LIMIT", "0"}, ":2\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "LIMIT", "10"}, ":2\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "LIMIT", "-1"}, "-ERR LIMIT can't be negative\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "LIMIT", "x"}, "-ERR LIMIT can't be negative\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "LIMIT"}, "-ERR syntax error\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "WITHSCORES"}, "-ERR syntax error\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "WEIGHTS", "1", "2"}, "-ERR syntax error\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "d", "AGGREGATE", "MAX"}, "-ERR syntax error\r\n"},
			{[]string{"ZINTERCARD", "0", "c"}, "-ERR at least 1 input key is needed for 'zintercard' command\r\n"},
			{[]string{"ZINTERCARD", "-1", "c"}, "-ERR at least 1 input key is needed for 'zintercard' command\r\n"},
			{[]string{"ZINTERCARD", "x", "c"}, "-ERR value is not an integer or out of range\r\n"},
			{[]string{"ZINTERCARD", "3", "c", "d"}, "-ERR syntax error\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "missing"}, ":0\r\n"},
			{[]string{"ZINTERCARD", "1", "c"}, ":3\r\n"},
			{[]string{"ZINTERCARD", "2", "c", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
			{[]string{"ZINTERCARD", "2", "missing", "s"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		}},
	})
}

// BenchmarkZAddCommand runs ZADD through its handler (parse, read, one
// committed batch) on 1,000 keys, as the benchmark does.
func BenchmarkZAddCommand(b *testing.B) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	c := &Client{KS: ks}
	args := [][]byte{[]byte("ZADD"), nil, nil, nil}
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("zkey:%d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args[1] = keys[i%len(keys)]
		args[2] = strconv.AppendInt(args[2][:0], int64(i%70000), 10)
		args[3] = strconv.AppendInt(append(args[3][:0], "member:"...), int64(i%10000), 10)
		c.Out = c.Out[:0]
		ks.Lock()
		cmdZAdd(c, args)
		ks.Unlock()
	}
}

package server

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// rawNext is the stream's next command as one line (name lowercased),
// SELECT included, PING and REPLCONF skipped.
func (s *streamTap) rawNext() string {
	s.t.Helper()
	for {
		if args := s.command(); args[0] != "ping" && args[0] != "replconf" {
			return strings.Join(args, " ")
		}
	}
}

// stampRE matches what differs between two servers' streams for the same
// writes: absolute times (ms or s) and stream IDs.
var stampRE = regexp.MustCompile(`\b\d{10,}(-\d+)?\b`)

// sremRE matches an SREM of one member (which SPOP chose at random).
var sremRE = regexp.MustCompile(`^srem (\S+) \S+$`)

// propagationCases are writes and what they leave in the replication
// stream; TestPropagationMatchesRedis runs each on redis-server 7.0 and
// Persimmon and compares the two streams command by command. A step is
// one command; "sleep" waits 150 ms for a key's expiry (100 ms) to pass, and
// "active-expire 0|1" turns the background expiry off or on (DEBUG
// SET-ACTIVE-EXPIRE), so that such a key is found expired by the command
// that touches it.
var propagationCases = []struct {
	name  string
	steps [][]string
}{
	{"single write", [][]string{{"SET", "foo", "bar"}}},
	{"multi single write", [][]string{{"MULTI"}, {"SET", "foo", "bar"}, {"EXEC"}, {"SET", "foo2", "bar"}}},
	{"multi several writes", [][]string{{"MULTI"}, {"SET", "foo", "bar"}, {"GET", "foo"}, {"SET", "foo2", "bar2"}, {"GET", "foo2"}, {"SET", "foo3", "bar3"}, {"EXEC"}}},
	{"multi with select", [][]string{{"MULTI"}, {"SELECT", "1"}, {"SET", "foo", "bar"}, {"GET", "foo"}, {"SELECT", "2"}, {"SET", "foo2", "bar2"}, {"SELECT", "0"}, {"EXEC"}}},
	{"multi empty", [][]string{{"MULTI"}, {"EXEC"}}},
	{"multi read only", [][]string{{"SET", "r", "1"}, {"MULTI"}, {"GET", "r"}, {"EXISTS", "r"}, {"EXEC"}}},
	{"multi no effect", [][]string{{"MULTI"}, {"DEL", "nosuch"}, {"EXEC"}, {"INCR", "foo9"}}},
	{"multi publish", [][]string{{"MULTI"}, {"PUBLISH", "bla", "bla"}, {"EXEC"}}},
	{"may replicate", [][]string{{"PFADD", "hll", "a", "b", "c"}, {"PFCOUNT", "hll"}, {"PFCOUNT", "hll"}, {"PFADD", "hll", "d"}, {"PFCOUNT", "hll", "nosuch"}}},
	{"publish", [][]string{{"PUBLISH", "ch", "msg"}, {"SPUBLISH", "sch", "msg"}}},
	{"multi script load", [][]string{{"MULTI"}, {"SCRIPT", "LOAD", "redis.call('set', KEYS[1], 'foo')"}, {"SET", "foo", "bar"}, {"EXEC"}}},
	{"multi script flush", [][]string{{"MULTI"}, {"SCRIPT", "FLUSH"}, {"SET", "foo", "bar"}, {"EXEC"}}},
	{"multi eval", [][]string{{"MULTI"}, {"EVAL", "redis.call('set', KEYS[1], 'bar')", "1", "bar"}, {"EXEC"}}},
	{"multi eval and write", [][]string{{"MULTI"}, {"EVAL", "redis.call('set', KEYS[1], 'bar')", "1", "bar"}, {"SET", "x", "y"}, {"EXEC"}}},
	{"no effect", [][]string{
		{"SET", "s", "v"}, {"SET", "s", "w", "NX"}, {"SETNX", "s", "w"}, {"SET", "nosuch", "w", "XX"},
		{"DEL", "nosuch"}, {"UNLINK", "nosuch"}, {"SADD", "set", "a"}, {"SADD", "set", "a"}, {"SREM", "set", "zz"},
		{"HSET", "h", "f", "v"}, {"HDEL", "h", "zz"}, {"HSETNX", "h", "f", "v"}, {"ZADD", "z", "1", "a"}, {"ZREM", "z", "zz"},
		{"ZADD", "z", "NX", "2", "a"}, {"EXPIRE", "nosuch", "100"}, {"PERSIST", "s"}, {"LPUSHX", "nosuch", "a"},
		{"RPUSH", "l", "a"}, {"LREM", "l", "0", "zz"}, {"LINSERT", "l", "BEFORE", "zz", "b"}, {"MSETNX", "s", "1", "t", "2"},
		{"GETDEL", "nosuch"}, {"PFADD", "hll", "a"}, {"PFADD", "hll", "a"}, {"SMOVE", "set", "set2", "zz"},
		{"RENAMENX", "s", "set"}, {"COPY", "nosuch", "dst"}, {"GETEX", "s", "PERSIST"}, {"SETRANGE", "s", "0", ""},
		{"APPEND", "s", ""}, {"SPOP", "nosuch"}, {"ZINCRBY", "z", "0", "a"}, {"INCRBY", "n", "0"},
		{"XADD", "nostream", "NOMKSTREAM", "*", "f", "v"}, {"LPOP", "nosuch"}, {"EXPIRE", "s", "100", "XX"},
		{"SINTERSTORE", "dst", "nosuch"}, {"SINTERSTORE", "dst", "nosuch"},
	}},
	{"no effect, or the same", [][]string{
		{"ZADD", "z", "1", "a"}, {"ZADD", "z", "1", "a"}, {"HSET", "h", "f", "v"}, {"HSET", "h", "f", "v"},
		{"RPUSH", "l", "a", "b"}, {"LSET", "l", "0", "a"}, {"LTRIM", "l", "0", "-1"}, {"LTRIM", "nosuch", "0", "1"},
		{"SET", "s", "abc"}, {"SETRANGE", "s", "0", "a"}, {"SETBIT", "b", "3", "1"}, {"SETBIT", "b", "3", "1"},
		{"BITFIELD", "b", "GET", "u4", "0"}, {"BITFIELD", "b", "SET", "u4", "0", "1"}, {"HINCRBY", "h", "n", "0"},
		{"ZREMRANGEBYSCORE", "z", "5", "6"}, {"RPOPLPUSH", "nosuch", "l"}, {"LMOVE", "nosuch", "l", "LEFT", "LEFT"},
		{"SUNIONSTORE", "dst", "nosuch"}, {"PFMERGE", "hll", "nosuch"}, {"PFMERGE", "hll"},
		{"GEOADD", "g", "13.361389", "38.115556", "p"}, {"GEOADD", "g", "13.361389", "38.115556", "p"},
		{"SET", "t", "1", "EX", "100"}, {"PEXPIREAT", "t", "4000000000000"}, {"PEXPIREAT", "t", "4000000000000"},
		{"XADD", "st", "1-1", "f", "v"}, {"XGROUP", "CREATE", "st", "g", "0"}, {"XGROUP", "CREATECONSUMER", "st", "g", "c"},
		{"XGROUP", "CREATECONSUMER", "st", "g", "c"}, {"XACK", "st", "g", "9-9"}, {"XDEL", "st", "9-9"},
		{"XTRIM", "st", "MAXLEN", "5"}, {"XGROUP", "DELCONSUMER", "st", "g", "zz"}, {"XGROUP", "SETID", "st", "g", "0"},
		{"XAUTOCLAIM", "st", "g", "c", "0", "0"}, {"XCLAIM", "st", "g", "c", "0", "9-9"},
		{"INCR", "n"}, {"DECRBY", "n", "0"}, {"MSET", "m1", "1", "m2", "2"}, {"TOUCH", "m1"}, {"PERSIST", "nosuch"},
		{"RENAME", "m1", "m1"}, {"HMSET", "h", "f", "v"}, {"SMOVE", "nosuch", "x", "y"}, {"ZPOPMIN", "nosuch"},
		{"OBJECT", "FREQ", "nosuch"}, {"SET", "m1", "1", "GET"}, {"SET", "m1", "2", "NX", "GET"}, {"SET", "zz", "2", "XX", "GET"},
	}},
	{"expiry made absolute", [][]string{
		{"SET", "foo", "bar", "EX", "100"}, {"SET", "foo", "bar", "PX", "100000"}, {"SET", "foo", "bar", "EXAT", "4000000000"},
		{"SET", "foo", "bar", "PXAT", "4000000000000"}, {"SETEX", "foo", "100", "bar"}, {"PSETEX", "foo", "100000", "bar"},
		{"SET", "foo", "bar", "EX", "100", "GET"}, {"SET", "foo", "baz", "EX", "100", "NX"}, {"SET", "foo", "baz", "EX", "100", "XX"},
		{"SET", "foo", "bar", "KEEPTTL"}, {"EXPIRE", "foo", "100"}, {"PEXPIRE", "foo", "100000"}, {"EXPIREAT", "foo", "4000000000"},
		{"PEXPIREAT", "foo", "4000000000000"}, {"EXPIRE", "foo", "200", "GT"}, {"EXPIRE", "foo", "50", "GT"},
		{"PEXPIRE", "foo", "100000", "LT"}, {"EXPIRE", "foo", "100", "NX"}, {"GETEX", "foo", "EX", "100"},
		{"GETEX", "foo", "PX", "100000"}, {"GETEX", "foo", "EXAT", "4000000000"}, {"GETEX", "foo", "PXAT", "4000000000000"},
		{"GETEX", "foo", "PERSIST"}, {"GETEX", "foo"}, {"GETEX", "foo", "PERSIST"}, {"GETEX", "foo", "EXAT", "1"},
		{"SET", "foo", "bar"}, {"EXPIRE", "foo", "-1"}, {"SET", "foo", "bar"}, {"PEXPIREAT", "foo", "1"},
		{"RESTORE", "foo", "0", "", "REPLACE"},
	}},
	{"rewritten", [][]string{
		{"GETSET", "g", "1"}, {"INCRBYFLOAT", "f", "1.5"}, {"HINCRBYFLOAT", "hf", "x", "2.5"}, {"SADD", "sp", "a", "b", "c"},
		{"SPOP", "sp"}, {"SADD", "sp", "d", "e", "f"}, {"SPOP", "sp", "2"}, {"SPOP", "sp", "5"}, {"SRANDMEMBER", "sp"}, {"SET", "g2", "1"}, {"GETDEL", "g2"},
		{"RPUSH", "bl", "a", "b"}, {"BLPOP", "bl", "0"}, {"BRPOPLPUSH", "bl", "bl2", "0"}, {"ZADD", "bz", "1", "a"},
		{"BZPOPMIN", "bz", "0"}, {"RPUSH", "bl", "c"}, {"BLMOVE", "bl", "bl3", "LEFT", "RIGHT", "0"},
	}},
	{"lazy expiry", [][]string{
		{"active-expire", "0"}, {"SET", "e1", "1", "PX", "100"}, {"SET", "e2", "1", "PX", "100"},
		{"SET", "e3", "1", "PX", "100"}, {"SET", "e4", "1", "PX", "100"}, {"SET", "e5", "1", "PX", "100"}, {"SADD", "e6", "a"},
		{"PEXPIRE", "e6", "100"}, {"SET", "e7", "1", "PX", "100"}, {"sleep"},
		{"INCR", "e1"}, {"GET", "e2"}, {"SET", "e3", "2"}, {"DEL", "e4"}, {"MULTI"}, {"GET", "e5"}, {"EXEC"},
		{"SREM", "e6", "a"}, {"EVAL", "redis.call('incr', KEYS[1]) return 1", "1", "e7"},
		{"SET", "e8", "1", "PX", "100"}, {"SET", "e9", "1", "PX", "100"}, {"SET", "e10", "1", "PX", "100"}, {"sleep"},
		{"DEL", "e8", "e9", "nosuch"}, {"MULTI"}, {"INCR", "e10"}, {"SET", "x", "1"}, {"EXEC"},
		{"active-expire", "1"},
	}},
	{"scripts", [][]string{
		{"EVAL", "redis.call('set', KEYS[1], '1')", "1", "k"},
		{"EVAL", "redis.call('set', KEYS[1], '1') redis.call('set', KEYS[1], '2')", "1", "k"},
		{"EVAL", "return redis.call('get', KEYS[1])", "1", "k"},
		{"EVAL", "redis.call('del', 'nosuch') redis.call('set', KEYS[1], '3')", "1", "k"},
		{"EVAL", "redis.call('incrbyfloat', KEYS[1], '1') redis.call('incrbyfloat', KEYS[1], '1')", "1", "k"},
		{"SADD", "myset", "a", "b", "c"},
		{"EVAL", "return redis.call('spop', KEYS[1])", "1", "myset"},
		{"EVAL", "return redis.call('expire', KEYS[1], 100)", "1", "k"},
		{"EVAL", "#!lua\nredis.call('set', KEYS[1], 'x') redis.call('publish', 'c', 'm')", "1", "k"},
		{"EVAL", "redis.call('select', 1) redis.call('set', 'a', 1) redis.call('select', 0) redis.call('set', 'b', 1)", "0"},
	}},
	{"functions", [][]string{
		{"FUNCTION", "LOAD", "#!lua name=plib\nredis.register_function('w1', function(k) return redis.call('set', k[1], 'v') end)\nredis.register_function('w2', function(k) redis.call('set', k[1], 'v') return redis.call('set', k[1], 'w') end)"},
		{"FCALL", "w1", "1", "fk"}, {"FCALL", "w2", "1", "fk"}, {"FUNCTION", "DELETE", "plib"},
	}},
	{"streams in multi", [][]string{
		{"XADD", "mystream", "1-1", "foo", "bar"}, {"XADD", "mystream", "1-2", "foo2", "bar2"}, {"XADD", "mystream", "1-3", "foo3", "bar3"},
		{"XGROUP", "CREATE", "mystream", "mygroup", "0"}, {"MULTI"},
		{"XREADGROUP", "GROUP", "mygroup", "consumer1", "COUNT", "2", "STREAMS", "mystream", ">"},
		{"XREADGROUP", "GROUP", "mygroup", "consumer1", "STREAMS", "mystream", ">"}, {"EXEC"},
	}},
	{"keyspace", [][]string{
		{"SET", "a", "1"}, {"RENAME", "a", "b"}, {"COPY", "b", "c"}, {"MOVE", "c", "3"}, {"SORT", "nosuch", "STORE", "dst"},
		{"RPUSH", "sl", "3", "1", "2"}, {"SORT", "sl", "STORE", "dst"}, {"ZADD", "z1", "1", "a"},
		{"ZUNIONSTORE", "z2", "1", "z1"}, {"SWAPDB", "0", "5"}, {"SWAPDB", "0", "5"},
		{"SELECT", "9"}, {"SET", "a", "1"}, {"FLUSHDB"}, {"FLUSHDB"}, {"SELECT", "0"}, // FLUSHDB goes even when empty
	}},
}

// TestPropagationMatchesRedis: what a master writes to its replication
// stream for each of propagationCases is what redis-server 7.0 writes
// for the same commands (times and stream IDs aside): a write alone as
// itself, several effects of one command, script or MULTI inside
// MULTI/EXEC, nothing for a write that changed nothing, relative expiries
// as absolute ones, the DEL of a key found expired before the write that
// found it.
func TestPropagationMatchesRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	rc, _ := startRedisMaster(t, "--repl-diskless-sync", "no", "--enable-debug-command", "yes")
	ps, paddr := startReplServer(t, IOLoop)
	replica := startRedisReplica(t, paddr) // applies Persimmon's stream: the data must come out equal
	waitReplicaCaughtUp(t, replica, ps)
	streams := map[string][][]string{}
	for _, name := range []string{"redis-server", "persimmon"} {
		addr := rc.Options().Addr
		if name == "persimmon" {
			addr = paddr
		}
		tap := tapStream(t, addr)
		w := dialAddr(t, addr)
		for i, c := range propagationCases {
			for _, step := range c.steps {
				switch {
				case step[0] == "sleep":
					time.Sleep(150 * time.Millisecond) // for the keys' expiry to pass
					continue
				case step[0] == "active-expire" && name == "persimmon":
					// the test server refuses DEBUG (enable-debug-command no)
					ps.ks.Lock()
					ps.ks.SetActiveExpire(step[1] == "1")
					ps.ks.Unlock()
					continue
				case step[0] == "active-expire":
					step = []string{"DEBUG", "SET-ACTIVE-EXPIRE", step[1]}
				}
				w.do(step...)
			}
			mark := fmt.Sprintf("mark%d", i)
			w.do("SELECT", "0")
			w.do("SET", mark, "1")
			var got []string
			for {
				cmd := tap.rawNext()
				if cmd == "set "+mark+" 1" {
					break
				}
				cmd = stampRE.ReplaceAllString(cmd, "<T>")
				got = append(got, sremRE.ReplaceAllString(cmd, "srem $1 <member>"))
			}
			// The SELECT before the mark (SELECT 0 when a case left
			// another database) is the mark's, not the case's.
			if n := len(got); n > 0 && strings.HasPrefix(got[n-1], "select ") {
				got = got[:n-1]
			}
			streams[name] = append(streams[name], got)
		}
	}
	waitReplicaCaughtUp(t, replica, ps)
	ctx := context.Background()
	master := redis.NewClient(&redis.Options{Addr: paddr, MaxRetries: -1})
	defer master.Close()
	compared := 0
	for db := range 16 {
		for _, c := range []*redis.Client{master, replica} {
			if err := c.Do(ctx, "SELECT", db).Err(); err != nil {
				t.Fatal(err)
			}
		}
		keys, _ := master.Keys(ctx, "*").Result()
		rkeys, _ := replica.Keys(ctx, "*").Result()
		slices.Sort(keys)
		slices.Sort(rkeys)
		if !slices.Equal(keys, rkeys) {
			t.Errorf("db %d: keys %v on the master, %v on its redis-server replica", db, keys, rkeys)
		}
		compared += len(keys)
		for _, k := range keys {
			if m, r := renderKey(ctx, master, k), renderKey(ctx, replica, k); m != r {
				t.Errorf("db %d key %s: %s on the master, %s on its redis-server replica", db, k, m, r)
			}
		}
	}
	if compared < 40 {
		t.Errorf("only %d keys compared between the master and its replica", compared)
	}
	for i, c := range propagationCases {
		want, got := streams["redis-server"][i], streams["persimmon"][i]
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Errorf("%s: stream\n  %s\nwant (redis-server)\n  %s", c.name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

// TestSetPastTimePropagatesDel: a SET whose time has already passed
// leaves no key on the master, and its replicas drop the key too: the SET
// as Redis 7.0 propagates it (PXAT), then the DEL Redis sends when the
// key is next looked up, in one MULTI/EXEC.
func TestSetPastTimePropagatesDel(t *testing.T) {
	_, addr := startReplServer(t, IOGoroutine)
	tap := tapStream(t, addr)
	w := dialAddr(t, addr)
	w.expect("+OK\r\n", "SET", "foo", "bar", "PXAT", "1")
	w.expect("$-1\r\n", "SET", "foo2", "bar", "EXAT", "1", "GET")
	w.expect(":0\r\n", "EXISTS", "foo", "foo2")
	w.expect("+OK\r\n", "SET", "end", "1")
	for _, want := range []string{"select 0", "multi", "set foo bar PXAT 1", "del foo", "exec",
		"multi", "set foo2 bar PXAT 1000", "del foo2", "exec", "set end 1"} {
		if got := tap.rawNext(); got != want {
			t.Fatalf("stream: %q, want %q", got, want)
		}
	}
}

package e2e

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Keyspace notifications, side by side with redis-server: the same
// commands run against both servers while a PSUBSCRIBE '__key*__:*'
// connection records every event, and the two event streams must be
// equal, message for message (names, classes, channels, order).

// notifyScript is one write of every family (and the reads that send
// keymiss), with MULTI/EXEC and a script. "@expire KEY" sets KEY to
// expire 100 ms from the server's clock, waits without sleeping until the
// clock is past it (active expiry is off meanwhile) and reads it: the lazy
// "expired" event.
var notifyScript = []string{
	"SET s1 v", "SET s1 v2 EX 100", "SET s1 v3 KEEPTTL", "SET s1 v4 NX", "SET s1 v5 XX GET", "SETNX s2 x", "SETEX s3 100 x", "PSETEX s4 100000 x",
	"GETSET s1 v3", "GETDEL s2", "GETDEL s2", "GETEX s1 EX 200", "GETEX s1 PERSIST", "GETEX s1 PERSIST", "GETEX s1",
	"MSET m1 a m2 b m1 c", "MSETNX m3 a m4 b", "MSETNX m3 a m9 b", "INCR n1", "DECR n1", "INCRBY n1 3", "DECRBY n1 5", "INCRBYFLOAT f1 1.5",
	"APPEND s1 xyz", "APPEND a1 new", "SETRANGE s1 1 QQ", "SETRANGE s9 0 \"\"", "SETBIT b1 7 1", "SETBIT b1 7 1",
	"BITOP OR b2 b1 s1", "BITOP AND b3 nokey1 nokey2", "BITOP AND b2 nokey1", "BITFIELD bf SET u8 0 255 GET u8 0", "BITFIELD bf GET u8 0",
	"BITFIELD bf OVERFLOW FAIL INCRBY u8 0 10",
	"PFADD h1 a b c", "PFADD h1 a", "PFMERGE h2 h1", "PFCOUNT h1",
	"DEL s3 nosuch s4 s3", "UNLINK m1", "EXPIRE m2 100", "PEXPIRE m2 100 NX", "PEXPIRE m2 0", "PERSIST s1", "EXPIRE m3 100", "PERSIST m3",
	"EXPIREAT m4 1", "PEXPIREAT m3 99999999999999",
	"RENAME m3 m5", "RENAMENX n1 m5", "RENAMENX n1 n2", "COPY m5 m6", "COPY m5 m6 REPLACE", "COPY m5 m7 DB 1", "MOVE m6 2",
	"LPUSH l1 a b c", "RPUSH l1 d", "LPUSHX nol x", "RPUSHX l1 e", "LINSERT l1 BEFORE a z", "LINSERT l1 BEFORE nopivot z",
	"LSET l1 0 y", "LREM l1 1 y", "LTRIM l1 0 10", "LPOP l1", "RPOP l1 2", "LMOVE l1 l2 LEFT RIGHT", "RPOPLPUSH l2 l1", "LMOVE l1 l1 LEFT RIGHT",
	"LMPOP 1 l2 LEFT COUNT 5", "BLPOP l1 1", "BRPOP nol l1 1", "RPUSH l1 p q r", "BLMOVE l1 l3 RIGHT LEFT 1", "LTRIM l1 1 0", "LPOP l3 5",
	"SADD st1 a b c", "SADD st1 a", "SREM st1 a", "SREM st1 zz", "SPOP st1", "SMOVE st1 st2 b", "SMOVE st1 st2 c", "SADD st3 x y", "SINTERSTORE st4 st3 st3",
	"SUNIONSTORE st5 st3 nosuch", "SDIFFSTORE st5 st3 st3", "SDIFFSTORE st6 st3 st3", "SINTERSTORE st4 nosuch st3", "SPOP st3 10",
	"HSET h a 1 b 2", "HSETNX h a 1", "HSETNX h c 3", "HMSET h d 4", "HINCRBY h a 5", "HINCRBYFLOAT h a 1.5", "HDEL h zz", "HDEL h a b", "HDEL h c d",
	"ZADD z 1 a 2 b 3 c", "ZADD z INCR 1 a", "ZADD z 2 a", "ZADD z XX 9 nomember", "ZINCRBY z 1 b", "ZREM z c", "ZRANGESTORE z2 z 0 -1",
	"ZUNIONSTORE z3 2 z z2", "ZINTERSTORE z4 2 z z2", "ZDIFFSTORE z5 2 z z2", "ZRANGESTORE z2 z 5 10", "ZREMRANGEBYRANK z3 0 0",
	"ZREMRANGEBYSCORE z3 -inf +inf", "ZADD zl 0 a 0 b 0 c", "ZREMRANGEBYLEX zl [a [b", "ZPOPMIN z", "ZPOPMAX z 5", "BZPOPMIN zl 1",
	"ZADD z6 1 a 2 b", "ZMPOP 1 z6 MIN COUNT 1", "BZMPOP 1 1 z6 MAX COUNT 10",
	"XADD x1 1-1 f v", "XADD x1 MAXLEN 1 2-1 f v", "XADD x1 NOMKSTREAM 3-1 f v", "XADD nox NOMKSTREAM 3-1 f v", "XDEL x1 2-1", "XDEL x1 2-1",
	"XADD x1 4-1 f v", "XTRIM x1 MAXLEN 0", "XTRIM x1 MAXLEN 0", "XSETID x1 5-0",
	"XGROUP CREATE x2 g $ MKSTREAM", "XGROUP CREATECONSUMER x2 g c1", "XGROUP CREATECONSUMER x2 g c1", "XGROUP DELCONSUMER x2 g c1",
	"XGROUP SETID x2 g 0", "XADD x2 1-1 f v", "XREADGROUP GROUP g alice STREAMS x2 >", "XREADGROUP GROUP g carol STREAMS x2 >",
	"XREADGROUP GROUP g dave STREAMS x2 0", "XCLAIM x2 g mike 0 1-1 FORCE", "XCLAIM x2 g mike 0 1-1", "XAUTOCLAIM x2 g bob 0 0", "XAUTOCLAIM x2 g bob 0 0",
	"XGROUP DESTROY x2 g", "XGROUP DESTROY x2 g",
	"GEOADD g1 13.361389 38.115556 Palermo 15.087269 37.502669 Catania", "GEOSEARCHSTORE g2 g1 FROMLONLAT 15 37 BYRADIUS 200 km",
	"GEORADIUS g1 15 37 200 km STORE g3", "GEOSEARCHSTORE g2 nosuch FROMLONLAT 15 37 BYRADIUS 200 km",
	"RPUSH sl 3 1 2", "SORT sl STORE sl2", "SORT nosuch STORE sl2",
	"MULTI", "SET t1 a", "INCR t2", "LPUSH t3 x", "DEL t1 t3", "EXEC",
	"EVAL \"redis.call('set',KEYS[1],'x'); redis.call('expire',KEYS[1],10); redis.call('del',KEYS[1]); return 1\" 1 e1",
	"DEBUG SET-ACTIVE-EXPIRE 0", "@expire ex1", "DEBUG SET-ACTIVE-EXPIRE 1", "GET nokey", "HGET nokey f", "LRANGE nokey 0 -1", "SMEMBERS nokey", "ZRANGE nokey 0 -1",
	"GET s1", "MGET nokey s1 nokey2", "SWAPDB 0 3", "SWAPDB 0 3", "FLUSHDB", "SET after flush",
}

func TestNotifyDiffRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: nothing to compare with")
	}
	redisAddr := startRedis(t, "--enable-debug-command", "yes")
	servers := map[string]*server{"goroutine": startServer(t, t.TempDir(), "--io", "goroutine"), "loop": startServer(t, t.TempDir(), "--io", "loop")}
	for _, tc := range []struct {
		flags string
		resp3 bool
		io    string
	}{{"KEA", false, "goroutine"}, {"KEAm", false, "goroutine"}, {"KEn", false, "goroutine"}, {"KEA", true, "goroutine"},
		{"Kx$", false, "goroutine"}, {"Eg", false, "goroutine"}, {"KEAmn", false, "loop"}, {"KEAmn", true, "loop"}} {
		s := servers[tc.io]
		name := tc.flags + "/" + tc.io
		if tc.resp3 {
			name += "/resp3"
		}
		t.Run(name, func(t *testing.T) {
			want := notifyEvents(t, redisAddr, tc.flags, tc.resp3)
			got := notifyEvents(t, s.Addr, tc.flags, tc.resp3)
			if len(want) == 0 {
				t.Fatal("redis-server sent no event: the script tests nothing")
			}
			for i := 0; i < max(len(want), len(got)); i++ {
				var w, g string
				if i < len(want) {
					w = want[i]
				}
				if i < len(got) {
					g = got[i]
				}
				if w != g {
					lo := max(0, i-6)
					t.Fatalf("event %d: persimmon %s, redis-server %s\nredis-server from %d:\n%s\npersimmon from %d:\n%s", i, g, w,
						lo, strings.Join(want[lo:min(len(want), i+6)], "\n"), lo, strings.Join(got[lo:min(len(got), i+6)], "\n"))
				}
			}
		})
	}
}

// notifyEvents runs notifyScript against addr with notify-keyspace-events
// set to flags and returns the events a PSUBSCRIBE '__key*__:*'
// subscriber (RESP3 if resp3) received, each rendered as one line.
func notifyEvents(t *testing.T, addr, flags string, resp3 bool) []string {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	mustOK(t, c, "FLUSHALL")
	mustOK(t, c, "CONFIG", "SET", "notify-keyspace-events", flags)
	defer c.do("CONFIG", "SET", "notify-keyspace-events", "")
	sub, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.close()
	if resp3 {
		mustOK(t, sub, "HELLO", "3")
	}
	if r := mustOK(t, sub, "PSUBSCRIBE", "__key*__:*"); len(r.elems) != 3 {
		t.Fatalf("PSUBSCRIBE answered %s", r)
	}
	for _, line := range notifyScript {
		if key, ok := strings.CutPrefix(line, "@expire "); ok {
			waitExpired(t, c, key)
			continue
		}
		args, err := splitArgs(line)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.doBytes(args); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	// The end marker matches the pattern too; everything before it is
	// the script's.
	mustOK(t, c, "PUBLISH", "__keyend__:end", "end")
	var out []string
	sub.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		r, err := readReply(sub.r)
		if err != nil {
			t.Fatalf("subscriber after %d events: %v\n%s", len(out), err, strings.Join(out, "\n"))
		}
		if len(r.elems) == 4 && r.elems[2].str == "__keyend__:end" {
			return out
		}
		out = append(out, r.String())
	}
}

func mustOK(t *testing.T, c *respConn, args ...any) reply {
	t.Helper()
	r, err := c.do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if r.kind == '-' {
		t.Fatalf("%v: %s", args, r)
	}
	return r
}

// waitExpired sets key to expire 100 ms from now by the server's clock,
// polls the clock (TIME touches no key) until it is past that, and reads
// the key.
func waitExpired(t *testing.T, c *respConn, key string) {
	t.Helper()
	ms := serverMs(t, c) + 100
	mustOK(t, c, "SET", key, "v", "PXAT", ms)
	for i := 0; serverMs(t, c) <= ms; i++ {
		if i > 100000 {
			t.Fatalf("the server's clock did not pass %d", ms)
		}
	}
	mustOK(t, c, "GET", key)
}

// serverMs is the server's clock (TIME) in Unix milliseconds.
func serverMs(t *testing.T, c *respConn) int64 {
	t.Helper()
	r := mustOK(t, c, "TIME")
	sec, _ := strconv.ParseInt(r.elems[0].str, 10, 64)
	usec, _ := strconv.ParseInt(r.elems[1].str, 10, 64)
	return sec*1000 + usec/1000
}

// TestNotifyActiveExpiry: the background expiry cycle (no command
// running) sends "expired" to a subscriber, on the event loop and with a
// goroutine per connection, and MONITOR-free connections see nothing
// else.
func TestNotifyActiveExpiry(t *testing.T) {
	for _, io := range []string{"loop", "goroutine"} {
		t.Run(io, func(t *testing.T) {
			s := startServer(t, t.TempDir(), "--io", io)
			c, err := dialRESP(s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			mustOK(t, c, "CONFIG", "SET", "notify-keyspace-events", "Ex")
			sub, err := dialRESP(s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.close()
			mustOK(t, sub, "SUBSCRIBE", "__keyevent@0__:expired")
			for i := 0; i < 3; i++ {
				// 200 ms: the first commit of a fresh server on a loaded
				// machine can take longer than a short TTL, and a value
				// applied after its expiry is never stored.
				mustOK(t, c, "SET", fmt.Sprintf("k%d", i), "v", "PX", "200")
			}
			sub.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			got := map[string]bool{}
			for len(got) < 3 {
				r, err := readReply(sub.r)
				if err != nil {
					t.Fatalf("after %v: %v", got, err)
				}
				if r.String() != fmt.Sprintf(`*3["message", "__keyevent@0__:expired", %q]`, r.elems[2].str) {
					t.Fatalf("received %s", r)
				}
				got[r.elems[2].str] = true
			}
			if n := mustOK(t, c, "DBSIZE"); n.str != "0" {
				t.Fatalf("DBSIZE %s after the expired events", n)
			}
		})
	}
}

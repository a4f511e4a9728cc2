package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Differential tests that testdata/diff scripts cannot express:
//
//   - TestDiffBlocking: blocking commands woken by another client. A script
//     line waits for its reply, so a script cannot leave BLPOP pending while
//     another connection pushes. Each scenario here is a list of steps on
//     numbered connections: "send" writes a command without reading, "recv"
//     reads the reply a send left pending, "do" is both, "pause" lets the
//     servers register a blocked client. Every reply read is rendered into
//     a transcript, and the transcripts of redis-server and persimmon-server
//     must be identical.
//   - TestDiffKeyScan: HSCAN, SSCAN and ZSCAN iterated to the end over
//     hashtable/skiplist collections. The scripts' scan: mode iterates
//     argument 1 (SCAN's cursor); these commands carry the cursor in
//     argument 2.

type blockStep struct {
	op   string // "send", "recv", "do", "pause", "elapsed>" (seconds since the last send on conn)
	conn int
	args []string
}

func send(conn int, args ...string) blockStep { return blockStep{op: "send", conn: conn, args: args} }
func recv(conn int) blockStep                 { return blockStep{op: "recv", conn: conn} }
func do(conn int, args ...string) blockStep   { return blockStep{op: "do", conn: conn, args: args} }
func pause() blockStep                        { return blockStep{op: "pause"} }

// blocked waits until the server reports n blocked clients (INFO clients
// blocked_clients), polling: a registration observed, not a pause.
func blocked(n int) blockStep { return blockStep{op: "blocked", conn: n} }

// waitBlocked polls addr's INFO clients until blocked_clients is n.
func waitBlocked(t *testing.T, addr string, n int) {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatalf("%s: dial: %v", addr, err)
	}
	defer c.close()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	var last string
	for range 1000 {
		r, err := c.do("INFO", "clients")
		if err != nil {
			t.Fatalf("%s: INFO clients: %v", addr, err)
		}
		if last = r.str; strings.Contains(last, want) {
			return
		}
		time.Sleep(5 * time.Millisecond) // between polls
	}
	t.Fatalf("%s: no %q after 1000 polls of INFO clients: %s", addr, strings.TrimSpace(want), last)
}

// closeConn closes a connection (a client that goes away while blocked).
func closeConn(conn int) blockStep { return blockStep{op: "close", conn: conn} }

// blockPause is how long a scenario waits for a sent blocking command to be
// registered by the server before another client acts. Both servers
// register a blocked client within microseconds on loopback; the timeouts
// in the scenarios are many times longer, so a slow machine only slows the
// test down.
const blockPause = 150 * time.Millisecond

// runBlockScenario runs steps against addr and returns the transcript.
func runBlockScenario(t *testing.T, addr string, steps []blockStep) []string {
	t.Helper()
	conns := map[int]*respConn{}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	conn := func(n int) *respConn {
		if c := conns[n]; c != nil {
			return c
		}
		c, err := dialRESP(addr)
		if err != nil {
			t.Fatalf("%s: dial: %v", addr, err)
		}
		conns[n] = c
		return c
	}
	var out []string
	for i, s := range steps {
		switch s.op {
		case "pause":
			time.Sleep(blockPause)
		case "blocked":
			waitBlocked(t, addr, s.conn)
		case "close":
			conn(s.conn).close()
			delete(conns, s.conn)
		case "send", "do":
			bargs := make([][]byte, len(s.args))
			for j, a := range s.args {
				bargs[j] = []byte(a)
			}
			c := conn(s.conn)
			if _, err := c.nc.Write(encodeCommand(bargs)); err != nil {
				t.Fatalf("%s: step %d: write: %v", addr, i, err)
			}
			if s.op == "send" {
				continue
			}
			fallthrough
		case "recv":
			c := conn(s.conn)
			c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			r, err := readReply(c.r)
			c.nc.SetReadDeadline(time.Time{})
			rendered := r.String()
			if err != nil {
				rendered = "<" + err.Error() + ">"
			}
			out = append(out, fmt.Sprintf("step %d @%d %s -> %s", i, s.conn, strings.Join(s.args, " "), rendered))
		}
	}
	return out
}

func TestDiffBlocking(t *testing.T) {
	redisAddr := startRedis(t)
	s := startServer(t, t.TempDir())

	scenarios := []struct {
		name  string
		steps []blockStep
	}{
		{"BLPOP woken by RPUSH", []blockStep{
			send(1, "BLPOP", "k", "5"), pause(),
			do(2, "RPUSH", "k", "a", "b"),
			recv(1),
			do(2, "LRANGE", "k", "0", "-1"),
		}},
		{"BRPOP woken by LPUSH of several: takes the tail", []blockStep{
			send(1, "BRPOP", "k", "5"), pause(),
			do(2, "LPUSH", "k", "a", "b", "c"),
			recv(1),
			do(2, "LRANGE", "k", "0", "-1"),
		}},
		{"BLPOP emptying the list deletes it", []blockStep{
			send(1, "BLPOP", "k", "5"), pause(),
			do(2, "RPUSH", "k", "only"),
			recv(1),
			do(2, "EXISTS", "k"),
		}},
		{"arrival order: first blocked, first served", []blockStep{
			send(1, "BLPOP", "k", "5"), pause(),
			send(2, "BLPOP", "k", "5"), pause(),
			send(3, "BRPOP", "k", "5"), pause(),
			do(4, "RPUSH", "k", "x", "y"),
			recv(1), recv(2),
			do(4, "RPUSH", "k", "z"),
			recv(3),
			do(4, "EXISTS", "k"),
		}},
		{"one element serves only the first waiter", []blockStep{
			send(1, "BLPOP", "k", "5"), pause(),
			send(2, "BLPOP", "k", "0.5"), pause(),
			do(3, "RPUSH", "k", "x"),
			recv(1),
			recv(2), // times out: nil
		}},
		{"several keys: the key that gains elements serves", []blockStep{
			send(1, "BLPOP", "k1", "k2", "k3", "5"), pause(),
			do(2, "RPUSH", "k3", "c"),
			recv(1),
		}},
		{"MULTI/EXEC pushes serve after EXEC with the final state", []blockStep{
			send(1, "BLPOP", "k1", "k2", "5"), pause(),
			do(2, "MULTI"),
			do(2, "RPUSH", "k2", "b1"),
			do(2, "RPUSH", "k1", "a1", "a2"),
			do(2, "LPOP", "k1"),
			do(2, "EXEC"),
			recv(1),
			do(2, "LRANGE", "k1", "0", "-1"),
			do(2, "LRANGE", "k2", "0", "-1"),
		}},
		{"BZPOPMAX and BLMPOP serve the key signalled first", []blockStep{
			send(1, "BZPOPMAX", "za", "zb", "5"), pause(),
			send(2, "BLMPOP", "5", "3", "la", "lb", "lc", "LEFT", "COUNT", "5"), pause(),
			do(3, "MULTI"),
			do(3, "ZADD", "zb", "1", "x"),
			do(3, "RPUSH", "lc", "c1"),
			do(3, "ZADD", "za", "2", "y"),
			do(3, "RPUSH", "lb", "b1", "b2"),
			do(3, "RPUSH", "lc", "c2"),
			do(3, "EXEC"),
			recv(1), recv(2),
			do(3, "ZRANGE", "za", "0", "-1"),
			do(3, "LRANGE", "lb", "0", "-1"),
		}},
		{"BLMOVE woken by a push", []blockStep{
			send(1, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "5"), pause(),
			do(2, "RPUSH", "src", "a", "b"),
			recv(1),
			do(2, "LRANGE", "src", "0", "-1"),
			do(2, "LRANGE", "dst", "0", "-1"),
		}},
		{"BLMOVE onto itself", []blockStep{
			send(1, "BLMOVE", "rot", "rot", "LEFT", "RIGHT", "5"), pause(),
			do(2, "RPUSH", "rot", "a", "b", "c"),
			recv(1),
			do(2, "LRANGE", "rot", "0", "-1"),
		}},
		{"BRPOPLPUSH chain: the moved element wakes the next waiter", []blockStep{
			send(1, "BLPOP", "dst", "5"), pause(),
			send(2, "BLMOVE", "src", "dst", "LEFT", "RIGHT", "5"), pause(),
			do(3, "RPUSH", "src", "x"),
			recv(2), recv(1),
			do(3, "EXISTS", "src", "dst"),
		}},
		{"BLMPOP with COUNT", []blockStep{
			send(1, "BLMPOP", "5", "2", "k1", "k2", "RIGHT", "COUNT", "2"), pause(),
			do(2, "RPUSH", "k2", "a", "b", "c"),
			recv(1),
			do(2, "LRANGE", "k2", "0", "-1"),
		}},
		{"BZPOPMIN and BZPOPMAX woken by ZADD", []blockStep{
			send(1, "BZPOPMIN", "z1", "z2", "5"), pause(),
			send(2, "BZPOPMAX", "z2", "5"), pause(),
			do(3, "ZADD", "z2", "1", "a", "2", "b", "3", "c"),
			recv(1), recv(2),
			do(3, "ZRANGE", "z2", "0", "-1", "WITHSCORES"),
		}},
		{"BZMPOP with COUNT woken by ZADD", []blockStep{
			send(1, "BZMPOP", "5", "2", "z1", "z2", "MAX", "COUNT", "10"), pause(),
			do(2, "ZADD", "z1", "1.5", "a", "-inf", "b"),
			recv(1),
			do(2, "EXISTS", "z1"),
		}},
		{"BZPOPMIN woken by ZINCRBY creating the key", []blockStep{
			send(1, "BZPOPMIN", "zi", "5"), pause(),
			do(2, "ZINCRBY", "zi", "0.1", "m"),
			recv(1),
		}},
		// Not compared: a push followed at once by another client's LPOP.
		// Redis serves the blocked client before the LPOP runs; Persimmon
		// re-runs the woken waiter after the push, and a non-blocking
		// command of another client can win the lock first (a known
		// difference, see resp/blocking.go). It passed 15 of 15 runs here,
		// but a timing race has no place in a differential test.
		{"timeouts reply the null array", []blockStep{
			do(1, "BLPOP", "none", "0.2"),
			do(1, "BRPOP", "none", "none2", "0.2"),
			do(1, "BLMOVE", "none", "dst", "LEFT", "LEFT", "0.2"),
			do(1, "BLMPOP", "0.2", "1", "none", "LEFT"),
			do(1, "BZPOPMIN", "none", "0.2"),
			do(1, "BZPOPMAX", "none", "0.2"),
			do(1, "BZMPOP", "0.2", "1", "none", "MIN"),
			do(1, "EXISTS", "dst"),
		}},
		{"a push to another database does not wake", []blockStep{
			send(1, "BLPOP", "k", "0.5"), pause(),
			do(2, "SELECT", "1"),
			do(2, "RPUSH", "k", "x"),
			recv(1),
			do(2, "LLEN", "k"),
		}},
		{"a waiter in database 1", []blockStep{
			do(1, "SELECT", "1"),
			send(1, "BLPOP", "k", "5"), pause(),
			do(2, "SELECT", "1"),
			do(2, "RPUSH", "k", "x"),
			recv(1),
		}},
		{"a closed waiter leaves the element to the next", []blockStep{
			send(1, "BLPOP", "k", "5"), pause(),
			send(2, "BLPOP", "k", "5"), pause(),
			closeConn(1), pause(),
			do(3, "RPUSH", "k", "x", "y"),
			recv(2),
			do(3, "LRANGE", "k", "0", "-1"),
		}},
		{"a closed waiter leaves the list untouched", []blockStep{
			send(1, "BLMOVE", "src", "dst", "LEFT", "LEFT", "5"), pause(),
			closeConn(1), pause(),
			do(2, "RPUSH", "src", "x"),
			do(2, "LRANGE", "src", "0", "-1"),
			do(2, "EXISTS", "dst"),
		}},
		{"RENAME onto the awaited key wakes", []blockStep{
			do(2, "RPUSH", "other", "a", "b"),
			send(1, "BLPOP", "k", "5"), pause(),
			do(2, "RENAME", "other", "k"),
			recv(1),
			do(2, "LRANGE", "k", "0", "-1"),
		}},
		{"a string written at the key does not wake (7.0 keeps waiting)", []blockStep{
			send(1, "BLPOP", "k", "0.5"), pause(),
			do(2, "SET", "k", "v"),
			recv(1),
			do(2, "GET", "k"),
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for _, addr := range []string{redisAddr, s.Addr} {
				c, err := dialRESP(addr)
				if err != nil {
					t.Fatal(err)
				}
				if r, err := c.do("FLUSHALL"); err != nil || r.String() != "+OK" {
					t.Fatalf("%s: FLUSHALL: %v %v", addr, r, err)
				}
				c.close()
			}
			// The two servers run one after the other: a scenario's pauses
			// are the only timing it relies on.
			want := runBlockScenario(t, redisAddr, sc.steps)
			got := runBlockScenario(t, s.Addr, sc.steps)
			if !slices.Equal(want, got) {
				t.Errorf("transcripts differ\nredis:\n\t%s\npersimmon:\n\t%s",
					strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
			}
		})
	}

	// A timeout is honoured within reason on both servers.
	t.Run("timeout duration", func(t *testing.T) {
		for _, addr := range []string{redisAddr, s.Addr} {
			c, err := dialRESP(addr)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r, err := c.do("BLPOP", "never", "0.3")
			el := time.Since(start)
			c.close()
			if err != nil || r.String() != "*-1" {
				t.Errorf("%s: BLPOP never 0.3 = %v %v", addr, r, err)
			}
			if el < 250*time.Millisecond || el > 3*time.Second {
				t.Errorf("%s: BLPOP with timeout 0.3 returned after %v", addr, el)
			}
		}
	})
}

// TestDiffKeyScan iterates HSCAN/SSCAN/ZSCAN to cursor 0 on both servers
// over collections big enough for Redis's hashtable/skiplist encodings
// (several calls each) and compares what a full iteration returned.
func TestDiffKeyScan(t *testing.T) {
	redisSide := &diffTarget{name: "redis", addr: startRedis(t), conns: map[int]*respConn{}}
	s := startServer(t, t.TempDir())
	persimmonSide := &diffTarget{name: "persimmon", addr: s.Addr, conns: map[int]*respConn{}}
	t.Cleanup(func() { redisSide.closeAll(); persimmonSide.closeAll() })
	resetTargets(t, redisSide, persimmonSide)

	setup := [][]string{}
	hset := []string{"HSET", "h"}
	sadd := []string{"SADD", "s"}
	zadd := []string{"ZADD", "z"}
	for i := 0; i < 600; i++ {
		hset = append(hset, fmt.Sprint("f", i), fmt.Sprint("v", i))
		sadd = append(sadd, fmt.Sprint("m", i))
		zadd = append(zadd, fmt.Sprintf("%d.5", i), fmt.Sprint("m", i))
	}
	setup = append(setup, hset, sadd, zadd,
		[]string{"HDEL", "h", "f0", "f1", "f2"},
		[]string{"SREM", "s", "m10", "m11"},
		[]string{"ZREM", "z", "m20", "m21"},
		[]string{"OBJECT", "ENCODING", "h"},
		[]string{"OBJECT", "ENCODING", "s"},
		[]string{"OBJECT", "ENCODING", "z"})
	for _, cmd := range setup {
		l := lineOf(cmd)
		if w, g := redisSide.run(l), persimmonSide.run(l); w != g {
			t.Fatalf("setup %v: redis %s, persimmon %s", cmd, w, g)
		}
	}

	cases := [][]string{
		{"HSCAN", "h", "0"},
		{"HSCAN", "h", "0", "COUNT", "7"},
		{"HSCAN", "h", "0", "MATCH", "f1*"},
		{"HSCAN", "h", "0", "MATCH", "*9", "COUNT", "3"},
		{"HSCAN", "h", "0", "MATCH", "nothing"},
		{"SSCAN", "s", "0"},
		{"SSCAN", "s", "0", "COUNT", "1"},
		{"SSCAN", "s", "0", "MATCH", "m5?"},
		{"ZSCAN", "z", "0"},
		{"ZSCAN", "z", "0", "COUNT", "50"},
		{"ZSCAN", "z", "0", "MATCH", "m1??"},
	}
	for _, cmd := range cases {
		w := keyScanAll(t, redisSide, cmd)
		g := keyScanAll(t, persimmonSide, cmd)
		if w != g {
			t.Errorf("%s:\n\tredis:     %s\n\tpersimmon: %s", strings.Join(cmd, " "), w, g)
		}
	}
}

func lineOf(cmd []string) scriptLine {
	args := make([][]byte, len(cmd))
	for i, a := range cmd {
		args[i] = []byte(a)
	}
	return scriptLine{file: "keyscan", conn: 1, text: strings.Join(cmd, " "), args: args}
}

// keyScanAll follows the cursor in argument 2 to 0 and renders the
// de-duplicated pairs (field/value, member/score) or members, sorted.
func keyScanAll(t *testing.T, d *diffTarget, cmd []string) string {
	t.Helper()
	l := lineOf(cmd)
	pairs := cmd[0] != "SSCAN"
	seen := map[string]bool{}
	for calls := 1; ; calls++ {
		r, err := d.exchange(1, l.args)
		if err != nil {
			t.Fatalf("%s: %s: %v", d.name, l.text, err)
		}
		if r.kind != '*' || len(r.elems) != 2 || r.elems[1].kind != '*' {
			return r.String()
		}
		els := r.elems[1].elems
		if pairs && len(els)%2 != 0 {
			return "<odd reply " + r.String() + ">"
		}
		for i := 0; i < len(els); i++ {
			if pairs {
				seen[els[i].String()+"="+els[i+1].String()] = true
				i++
			} else {
				seen[els[i].String()] = true
			}
		}
		cursor := r.elems[0].str
		if cursor == "0" {
			break
		}
		if calls == 10000 {
			return "<no end after 10000 calls>"
		}
		l.args[2] = []byte(cursor)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Sprintf("%d[%s]", len(keys), strings.Join(keys, ", "))
}

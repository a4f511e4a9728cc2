package server

import (
	"bufio"
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/redis/go-redis/v9"
)

// Blocking commands over real TCP connections to a server on a real
// keyspace. Synchronisation is on server state (the number of clients
// registered on a key), never on sleeps; every wait has a bounded deadline
// so a broken server fails instead of hanging.

func dialListKS(t *testing.T, s *ksServer) *wire {
	t.Helper()
	nc, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &wire{t: t, nc: nc, r: bufio.NewReader(nc)}
}

// waitListBlocked waits until n clients are registered on (db 0, key).
func waitListBlocked(t *testing.T, s *ksServer, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.ks.Lock()
		got := registryOf(s.ks).waiting(0, key)
		s.ks.Unlock()
		if got == n {
			// INFO blocked_clients counts clients, whatever their keys.
			if b := blockedClients(s.ks); b < int64(n) {
				t.Fatalf("blocked_clients %d with %d clients blocked on %s", b, n, key)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d clients blocked on %s, want %d", got, key, n)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func TestBlockingPopWokenByPush(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b := dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("BLPOP", "nokey", "q", "0"))
	waitListBlocked(t, s, "q", 1)
	waitListBlocked(t, s, "nokey", 1)
	if got := b.do("RPUSH", "q", "x", "y"); got != ":2\r\n" {
		t.Fatalf("RPUSH = %q", got)
	}
	if got := a.reply(); got != "*2\r\n"+bulk("q")+bulk("x") {
		t.Fatalf("BLPOP = %q", got)
	}
	waitListBlocked(t, s, "q", 0)
	waitListBlocked(t, s, "nokey", 0)
	if got := b.do("LRANGE", "q", "0", "-1"); got != "*1\r\n"+bulk("y") {
		t.Fatalf("LRANGE = %q", got)
	}
	// The connection serves further commands afterwards.
	if got := a.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after BLPOP = %q", got)
	}
}

// Two blocked clients are served in arrival order, whether the elements
// come in one push or in two.
func TestBlockingArrivalOrder(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b, p := dialListKS(t, s), dialListKS(t, s), dialListKS(t, s)
	for round := 0; round < 10; round++ {
		a.send(multibulk("BRPOP", "q", "0"))
		waitListBlocked(t, s, "q", 1)
		b.send(multibulk("BRPOP", "q", "0"))
		waitListBlocked(t, s, "q", 2)
		if round%2 == 0 {
			p.do("LPUSH", "q", "first", "second")
		} else {
			p.do("LPUSH", "q", "first")
			if got := a.reply(); got != "*2\r\n"+bulk("q")+bulk("first") {
				t.Fatalf("round %d: first client got %q", round, got)
			}
			p.do("LPUSH", "q", "second")
			if got := b.reply(); got != "*2\r\n"+bulk("q")+bulk("second") {
				t.Fatalf("round %d: second client got %q", round, got)
			}
			continue
		}
		if got := a.reply(); got != "*2\r\n"+bulk("q")+bulk("first") {
			t.Fatalf("round %d: first client got %q", round, got)
		}
		if got := b.reply(); got != "*2\r\n"+bulk("q")+bulk("second") {
			t.Fatalf("round %d: second client got %q", round, got)
		}
	}
}

func TestBlockingTimeout(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a := dialListKS(t, s)
	for _, cmd := range [][]string{
		{"BLPOP", "q", "0.1"},
		{"BRPOP", "q", "r", "0.1"},
		{"BLMOVE", "q", "d", "LEFT", "RIGHT", "0.1"},
		{"BRPOPLPUSH", "q", "d", "0.1"},
		{"BLMPOP", "0.1", "2", "q", "r", "LEFT", "COUNT", "3"},
	} {
		start := time.Now()
		got := a.do(cmd...)
		el := time.Since(start)
		if got != "*-1\r\n" {
			t.Fatalf("%s timed out with %q, want *-1", cmd[0], got)
		}
		if el < 100*time.Millisecond || el > 5*time.Second {
			t.Fatalf("%s with timeout 0.1 s returned after %v", cmd[0], el)
		}
	}
	waitListBlocked(t, s, "q", 0)
	if got := a.do("EXISTS", "d"); got != ":0\r\n" {
		t.Fatalf("EXISTS d = %q", got)
	}
}

// Inside MULTI/EXEC blocking commands do not block (Redis replies *-1, or
// $-1 for BLMOVE and BRPOPLPUSH, at once); a push in a transaction wakes a
// blocked client.
func TestBlockingInMulti(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b := dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("MULTI") + multibulk("BLPOP", "q", "0") + multibulk("BLMOVE", "q", "d", "LEFT", "LEFT", "0") +
		multibulk("BRPOPLPUSH", "q", "d", "0") + multibulk("BLMPOP", "0", "1", "q", "LEFT") + multibulk("EXEC"))
	for _, want := range []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n",
		"*4\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n"} {
		if got := a.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	a.send(multibulk("BLPOP", "q", "0"))
	waitListBlocked(t, s, "q", 1)
	b.send(multibulk("MULTI") + multibulk("RPUSH", "q", "x") + multibulk("RPUSH", "q", "y") + multibulk("EXEC"))
	for _, want := range []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n:1\r\n:2\r\n"} {
		if got := b.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if got := a.reply(); got != "*2\r\n"+bulk("q")+bulk("x") {
		t.Fatalf("BLPOP woken by EXEC = %q", got)
	}
}

// BLMOVE pops and pushes in one batch when woken; RENAME onto the key it
// waits for wakes it too.
func TestBlockingMoveAndRename(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b := dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"))
	waitListBlocked(t, s, "src", 1)
	b.do("LPUSH", "src", "v1", "v2")
	if got := a.reply(); got != bulk("v1") {
		t.Fatalf("BLMOVE = %q", got)
	}
	if got := b.do("LRANGE", "dst", "0", "-1"); got != "*1\r\n"+bulk("v1") {
		t.Fatalf("dst = %q", got)
	}
	a.send(multibulk("BLMPOP", "0", "2", "x", "y", "RIGHT", "COUNT", "5"))
	waitListBlocked(t, s, "y", 1)
	b.do("RPUSH", "tmp", "1", "2", "3")
	if got := b.do("RENAME", "tmp", "y"); got != "+OK\r\n" {
		t.Fatalf("RENAME = %q", got)
	}
	if got := a.reply(); got != "*2\r\n"+bulk("y")+"*3\r\n"+bulk("3")+bulk("2")+bulk("1") {
		t.Fatalf("BLMPOP woken by RENAME = %q", got)
	}
	waitListBlocked(t, s, "x", 0)
	if got := b.do("EXISTS", "y"); got != ":0\r\n" {
		t.Fatalf("EXISTS y = %q", got)
	}
}

// Replies of the commands before a blocking one in a pipeline are sent
// before it blocks; the commands after it run after it is served.
func TestBlockingInPipeline(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b := dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("SET", "k", "v") + multibulk("BLPOP", "q", "0") + multibulk("GET", "k") + multibulk("LLEN", "q"))
	if got := a.reply(); got != "+OK\r\n" {
		t.Fatalf("SET before BLPOP = %q", got)
	}
	waitListBlocked(t, s, "q", 1)
	b.do("RPUSH", "q", "x", "y")
	for _, want := range []string{"*2\r\n" + bulk("q") + bulk("x"), bulk("v"), ":1\r\n"} {
		if got := a.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

// A client that closes its connection while blocked is unregistered and
// takes nothing; so is one killed, and the server closes with clients still
// blocked.
func TestBlockingClientGoes(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b, c := dialListKS(t, s), dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("BLPOP", "q", "0"))
	waitListBlocked(t, s, "q", 1)
	a.nc.Close()
	waitListBlocked(t, s, "q", 0)

	id := c.do("CLIENT", "ID")
	c.send(multibulk("BLPOP", "q", "0"))
	waitListBlocked(t, s, "q", 1)
	if got := b.do("CLIENT", "KILL", "ID", id[1:len(id)-2]); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL = %q", got)
	}
	waitListBlocked(t, s, "q", 0)
	b.do("RPUSH", "q", "x")
	if got := b.do("LLEN", "q"); got != ":1\r\n" {
		t.Fatalf("LLEN = %q: a client that went away took the element", got)
	}

	d := dialListKS(t, s)
	d.send(multibulk("BLPOP", "never", "0"))
	waitListBlocked(t, s, "never", 1)
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server Close hangs with a client blocked")
	}
}

// go-redis, as a real client uses them: a timeout is redis.Nil, a wake-up
// returns the key and the element.
func TestBlockingGoRedis(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	ctx := context.Background()
	rc, other := goRedis(t, s.addr), goRedis(t, s.addr)
	start := time.Now()
	// (go-redis sends whole seconds: 1 is its smallest timeout.)
	if err := rc.BLPop(ctx, time.Second, "gq").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("BLPOP timeout: %v, want redis.Nil", err)
	}
	if el := time.Since(start); el < time.Second || el > 10*time.Second {
		t.Fatalf("BLPOP with a 1 s timeout returned after %v", el)
	}
	done := make(chan []string, 1)
	go func() {
		v, err := rc.BRPop(ctx, 0, "gq").Result()
		if err != nil {
			t.Error(err)
		}
		done <- v
	}()
	waitListBlocked(t, s, "gq", 1)
	if err := other.RPush(ctx, "gq", "a", "b").Err(); err != nil {
		t.Fatal(err)
	}
	if v := <-done; len(v) != 2 || v[0] != "gq" || v[1] != "b" {
		t.Fatalf("BRPOP = %q", v)
	}
	if v, err := rc.BLMove(ctx, "gq", "gd", "LEFT", "RIGHT", time.Second).Result(); err != nil || v != "a" {
		t.Fatalf("BLMOVE = %q, %v", v, err)
	}
	if key, vals, err := rc.BLMPop(ctx, time.Second, "right", 2, "gq", "gd").Result(); err != nil || key != "gd" || len(vals) != 1 || vals[0] != "a" {
		t.Fatalf("BLMPOP = %q %q %v", key, vals, err)
	}
}

// Waiters are per database: a push to the same key name in another
// database does not serve them; MOVE into their database does.
func TestBlockingPerDatabase(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b := dialListKS(t, s), dialListKS(t, s)
	a.do("SELECT", "3")
	a.send(multibulk("BLPOP", "q", "0"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.ks.Lock()
		n := registryOf(s.ks).waiting(3, "q")
		s.ks.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("BLPOP in db 3 did not block")
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	b.do("RPUSH", "q", "db0")
	if got := b.do("MOVE", "q", "3"); got != ":1\r\n" {
		t.Fatalf("MOVE = %q", got)
	}
	if got := a.reply(); got != "*2\r\n"+bulk("q")+bulk("db0") {
		t.Fatalf("BLPOP in db 3 = %q", got)
	}
}

// A blocking command arriving between a push and the re-run of the client
// it woke leaves the element to that client (deterministic: the handlers
// are run directly on connections that are never served).
func TestBlockingNewcomerYields(t *testing.T) {
	ks := newKeyspaceClient(t).KS
	pusher := &Client{KS: ks}
	newConn := func() *conn {
		cn := &conn{}
		cn.KS, cn.conn = ks, cn
		return cn
	}
	run := func(cn *conn, args ...string) string {
		cn.Out = cn.Out[:0]
		ks.Lock()
		defer ks.Unlock()
		return familyRun(t, &cn.Client, args...)
	}
	a, d := newConn(), newConn()
	if got := run(a, "BLPOP", "q", "0"); got != "" || !a.blk.pending {
		t.Fatalf("BLPOP on an empty key replied %q instead of blocking", got)
	}
	familyReply(t, pusher, "RPUSH", "q", "x")
	if !a.blk.b.woken {
		t.Fatal("the push did not wake the blocked client")
	}
	if got := run(d, "BLPOP", "q", "0"); got != "" {
		t.Fatalf("a newcomer took %q from the client woken for it", got)
	}
	ks.Lock()
	n := registryOf(ks).waiting(0, "q")
	ks.Unlock()
	if n != 2 {
		t.Fatalf("%d clients blocked on q, want 2", n)
	}
	// a takes its turn (what serveBlocked does on the wake-up).
	ks.Lock()
	a.blk.b.woken, a.blk.pending = false, false
	ks.Unlock()
	if got := run(a, "BLPOP", "q", "0"); got != "*2\r\n"+bulk("q")+bulk("x") {
		t.Fatalf("woken client got %q", got)
	}
	ks.Lock()
	a.unblock()
	woken := d.blk.b.woken
	ks.Unlock()
	if !woken {
		t.Fatal("the next waiter was not woken when the first left")
	}
	// Nobody woken (elements that came without a push, as after SWAPDB):
	// a newcomer takes them.
	e := newConn()
	familyReply(t, pusher, "RPUSH", "q", "y")
	ks.Lock()
	d.blk.b.woken = false
	ks.Unlock()
	if got := run(e, "BLPOP", "q", "0"); got != "*2\r\n"+bulk("q")+bulk("y") {
		t.Fatalf("newcomer with nobody woken got %q", got)
	}
	ks.Lock()
	d.unblock()
	ks.Unlock()
}

// On the event loop a woken client is served right after the command that
// pushed, before any other command runs, as in Redis: an LPOP pipelined
// behind the RPUSH finds the list empty, and the waiters' pipelined
// commands follow their replies. (A goroutine per connection leaves a
// window, see blocking.go's known differences.)
func TestBlockingServedBeforeNextCommand(t *testing.T) {
	if testIO() != IOLoop {
		t.Skip("exact only on the event loop (PERSIMMON_TEST_IO=loop)")
	}
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, a2, b := dialListKS(t, s), dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("BLPOP", "q", "0"))
	waitListBlocked(t, s, "q", 1)
	a2.send(multibulk("BRPOP", "q", "0") + multibulk("PING"))
	waitListBlocked(t, s, "q", 2)
	b.send(multibulk("RPUSH", "q", "x", "y") + multibulk("LPOP", "q") + multibulk("EXISTS", "q"))
	for _, want := range []string{":2\r\n", "$-1\r\n", ":0\r\n"} {
		if got := b.reply(); got != want {
			t.Fatalf("pusher got %q, want %q", got, want)
		}
	}
	if got := a.reply(); got != "*2\r\n"+bulk("q")+bulk("x") {
		t.Fatalf("first waiter got %q", got)
	}
	if got := a2.reply(); got != "*2\r\n"+bulk("q")+bulk("y") {
		t.Fatalf("second waiter got %q", got)
	}
	if got := a2.reply(); got != "+PONG\r\n" {
		t.Fatalf("second waiter's pipelined PING got %q", got)
	}
	// A MULTI that pushes serves the waiter when EXEC ends.
	a.send(multibulk("BLPOP", "m", "0"))
	waitListBlocked(t, s, "m", 1)
	b.send(multibulk("MULTI") + multibulk("RPUSH", "m", "1") + multibulk("EXEC") + multibulk("LPOP", "m"))
	for _, want := range []string{"+OK\r\n", "+QUEUED\r\n", "*1\r\n:1\r\n", "$-1\r\n"} {
		if got := b.reply(); got != want {
			t.Fatalf("MULTI pusher got %q, want %q", got, want)
		}
	}
	if got := a.reply(); got != "*2\r\n"+bulk("m")+bulk("1") {
		t.Fatalf("waiter woken by EXEC got %q", got)
	}
}

// SWAPDB wakes clients blocked on keys that now hold a list (Redis 7.0's
// scanDatabaseForReadyKeys); a key of another type wakes nobody.
func TestBlockingWokenBySwapDB(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b, d := dialListKS(t, s), dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("BLPOP", "q", "0"))
	waitListBlocked(t, s, "q", 1)
	d.send(multibulk("BLPOP", "s", "0"))
	waitListBlocked(t, s, "s", 1)
	script(t, b, [][2]string{
		{"select 1", "+OK\r\n"},
		{"rpush q x", ":1\r\n"},
		{"set s v", "+OK\r\n"},
		{"swapdb 0 1", "+OK\r\n"},
	})
	if got := a.reply(); got != "*2\r\n"+bulk("q")+bulk("x") {
		t.Fatalf("BLPOP after SWAPDB = %q", got)
	}
	waitListBlocked(t, s, "q", 0)
	// The client on the string key still waits; a push to it (after the
	// string is gone) serves it.
	script(t, b, [][2]string{
		{"select 0", "+OK\r\n"},
		{"del s", ":1\r\n"},
		{"rpush s y", ":1\r\n"},
	})
	if got := d.reply(); got != "*2\r\n"+bulk("s")+bulk("y") {
		t.Fatalf("BLPOP on the swapped-in string's key = %q", got)
	}
}

// A client blocked on several keys, woken because the first waiter of one
// of them left, does not take another key's elements from the clients that
// blocked on that key before it (Redis serves each key's waiters in
// arrival order).
func TestBlockingArrivalOrderAcrossKeys(t *testing.T) {
	for _, tc := range []struct {
		name, push       string
		first, mid, last []string
		want             [2]string // replies of first and mid
	}{
		{"lists", "RPUSH oq a b",
			[]string{"BLPOP", "other", "oq", "0"}, []string{"BLPOP", "oq", "0"},
			[]string{"BLMPOP", "0", "2", "other", "oq", "LEFT"},
			[2]string{"*2\r\n" + bulk("oq") + bulk("a"), "*2\r\n" + bulk("oq") + bulk("b")}},
		{"sorted sets", "ZADD oq 1 a 2 b",
			[]string{"BZPOPMIN", "other", "oq", "0"}, []string{"BZPOPMIN", "oq", "0"},
			[]string{"BZMPOP", "0", "2", "other", "oq", "MIN"},
			[2]string{"*3\r\n" + bulk("oq") + bulk("a") + bulk("1"), "*3\r\n" + bulk("oq") + bulk("b") + bulk("2")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
			a, b, c, p := dialListKS(t, s), dialListKS(t, s), dialListKS(t, s), dialListKS(t, s)
			a.send(multibulk(tc.first...))
			waitListBlocked(t, s, "oq", 1)
			b.send(multibulk(tc.mid...))
			waitListBlocked(t, s, "oq", 2)
			c.send(multibulk(tc.last...))
			waitListBlocked(t, s, "oq", 3)
			p.send(multibulk(strings.Fields(tc.push)...))
			p.reply()
			if got := a.reply(); got != tc.want[0] {
				t.Fatalf("first waiter got %q, want %q", got, tc.want[0])
			}
			if got := b.reply(); got != tc.want[1] {
				t.Fatalf("second waiter (blocked before the third) got %q, want %q", got, tc.want[1])
			}
			waitListBlocked(t, s, "oq", 1) // the third still waits
			waitListBlocked(t, s, "other", 1)
		})
	}
}

// CLIENT UNBLOCK ends a blocked command with its timeout reply or, with
// ERROR, the UNBLOCKED error (replies as redis-server 7.0.15 gives them).
func TestClientUnblock(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b := dialListKS(t, s), dialListKS(t, s)
	id := strings.TrimSuffix(strings.TrimPrefix(a.do("CLIENT", "ID"), ":"), "\r\n")
	script(t, b, [][2]string{
		{"client unblock " + id, ":0\r\n"},
		{"client unblock abc", "-ERR value is not an integer or out of range\r\n"},
		{"client unblock " + id + " foo", "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n"},
		{"client unblock 999999", ":0\r\n"},
	})
	a.send(multibulk("BLPOP", "q", "0") + multibulk("PING"))
	waitListBlocked(t, s, "q", 1)
	if got := b.do("CLIENT", "UNBLOCK", id); got != ":1\r\n" {
		t.Fatalf("CLIENT UNBLOCK = %q", got)
	}
	if got := a.reply(); got != "*-1\r\n" {
		t.Fatalf("unblocked BLPOP = %q", got)
	}
	if got := a.reply(); got != "+PONG\r\n" {
		t.Fatalf("pipelined PING after the unblocked BLPOP = %q", got)
	}
	a.send(multibulk("BZPOPMIN", "z", "q", "0"))
	waitListBlocked(t, s, "q", 1)
	if got := b.do("CLIENT", "UNBLOCK", id, "error"); got != ":1\r\n" {
		t.Fatalf("CLIENT UNBLOCK ERROR = %q", got)
	}
	if got := a.reply(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
		t.Fatalf("BZPOPMIN unblocked with ERROR = %q", got)
	}
	waitListBlocked(t, s, "q", 0)
	if got := b.do("CLIENT", "UNBLOCK", id); got != ":0\r\n" {
		t.Fatalf("CLIENT UNBLOCK of a client no longer blocked = %q", got)
	}
}

// INFO clients_in_timeout_table counts the blocked clients with a
// timeout, as redis-server 7.0.15 does (BLPOP q 100 and WAIT 1 100000 are
// in it, BLPOP q 0 and WAIT 1 0 are not). It was always 0.
func TestClientsInTimeoutTable(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	info := dialListKS(t, s)
	field := func(name string) string {
		t.Helper()
		body := info.do("INFO", "clients")
		i := strings.Index(body, name+":")
		if i < 0 {
			t.Fatalf("no %s in %q", name, body)
		}
		return strings.Fields(body[i+len(name)+1:])[0]
	}
	waitFields := func(blocked, timed string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for field("blocked_clients") != blocked || field("clients_in_timeout_table") != timed {
			if time.Now().After(deadline) {
				t.Fatalf("blocked_clients %s, clients_in_timeout_table %s; want %s, %s",
					field("blocked_clients"), field("clients_in_timeout_table"), blocked, timed)
			}
			time.Sleep(time.Millisecond) // polling INFO
		}
	}
	waitFields("0", "0")
	a, b, c, d := dialListKS(t, s), dialListKS(t, s), dialListKS(t, s), dialListKS(t, s)
	a.send(multibulk("BLPOP", "q", "0"))
	waitFields("1", "0")
	b.send(multibulk("BLPOP", "q", "100"))
	waitFields("2", "1")
	cid := strings.TrimSuffix(strings.TrimPrefix(c.do("CLIENT", "ID"), ":"), "\r\n")
	c.send(multibulk("WAIT", "1", "100000"))
	waitFields("3", "2")
	d.send(multibulk("WAIT", "1", "0"))
	waitFields("4", "2")
	if got := info.do("RPUSH", "q", "x", "y"); got != ":2\r\n" {
		t.Fatal(got)
	}
	a.reply()
	b.reply()
	waitFields("2", "1")
	if got := info.do("CLIENT", "UNBLOCK", cid); got != ":1\r\n" {
		t.Fatal(got)
	}
	if got := c.reply(); got != ":0\r\n" {
		t.Fatalf("WAIT 1 100000 unblocked = %q", got)
	}
	waitFields("1", "0")
}

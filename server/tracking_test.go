package server

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// Client-side caching over real TCP with several connections. The same
// scenario, with exact reply bytes, runs against Persimmon in both I/O
// modes and against redis-server 7.0 when it is installed: where the test
// passes on Redis, the bytes are Redis's.

// trackingTargets returns an address per server the scenario runs on.
func trackingTargets(t *testing.T) map[string]func(t *testing.T) string {
	out := map[string]func(t *testing.T) string{}
	for _, io := range []string{IOGoroutine, IOLoop} {
		out["persimmon-"+io] = func(t *testing.T) string {
			t.Setenv("PERSIMMON_TEST_IO", io)
			return startKeyspaceServer(t, t.TempDir(), pmem.ModeNone).addr
		}
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		out["redis-server"] = func(t *testing.T) string {
			_, port := startRedisMaster(t)
			return fmt.Sprintf("127.0.0.1:%d", port)
		}
	}
	return out
}

func dialAddr(t *testing.T, addr string) *wire { return dialWire(t, &wireServer{addr: addr}) }

// clientID is the connection's CLIENT ID, as a string.
func (w *wire) clientID() string {
	w.t.Helper()
	r := w.do("CLIENT", "ID")
	return strings.TrimSuffix(strings.TrimPrefix(r, ":"), "\r\n")
}

func (w *wire) expect(want string, args ...string) {
	w.t.Helper()
	if got := w.do(args...); got != want {
		w.t.Fatalf("%s: got %q, want %q", strings.Join(args, " "), got, want)
	}
}

func (w *wire) expectReply(want string) {
	w.t.Helper()
	if got := w.reply(); got != want {
		w.t.Fatalf("got %q, want %q", got, want)
	}
}

func inval(keys ...string) string {
	s := fmt.Sprintf(">2\r\n$10\r\ninvalidate\r\n*%d\r\n", len(keys))
	for _, k := range keys {
		s += bulk(k)
	}
	return s
}

func invalRESP2(keys ...string) string {
	s := fmt.Sprintf("*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*%d\r\n", len(keys))
	for _, k := range keys {
		s += bulk(k)
	}
	return s
}

func TestTracking(t *testing.T) {
	for name, start := range trackingTargets(t) {
		t.Run(name, func(t *testing.T) { testTracking(t, start(t)) })
	}
}

func testTracking(t *testing.T, addr string) {
	a, b, r := dialAddr(t, addr), dialAddr(t, addr), dialAddr(t, addr)
	b.expect("+OK\r\n", "FLUSHALL")

	// RESP2 with a redirect to a subscriber of __redis__:invalidate: only
	// the keys a has read are invalidated.
	rid := r.clientID()
	r.expect("*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n", "SUBSCRIBE", "__redis__:invalidate")
	a.expect("-ERR The client ID you want redirect to does not exist\r\n", "CLIENT", "TRACKING", "on", "REDIRECT", "999999")
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "REDIRECT", rid)
	a.expect(":"+rid+"\r\n", "CLIENT", "GETREDIR")
	b.expect("+OK\r\n", "MSET", "k1", "1", "k2", "2")
	a.expect("$1\r\n1\r\n", "GET", "k1")
	b.expect(":3\r\n", "INCR", "k2") // not read by a: no message
	b.expect(":2\r\n", "INCR", "k1")
	r.expectReply(invalRESP2("k1"))
	b.expect(":3\r\n", "INCR", "k1") // no longer in the table: no message
	a.expect("*2\r\n$1\r\n3\r\n$1\r\n3\r\n", "MGET", "k1", "k2")
	b.expect(":1\r\n", "DEL", "k2")
	r.expectReply(invalRESP2("k2"))
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "off")
	a.expect(":-1\r\n", "CLIENT", "GETREDIR")

	// RESP3 on the same connection: the invalidation of a key the client
	// changes itself comes after the command's reply (and after EXEC's).
	a.send(multibulk("HELLO", "3"))
	a.reply()
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on")
	a.expect("$1\r\n3\r\n", "GET", "k1")
	a.expect(":1\r\n", "DEL", "k1")
	a.expectReply(inval("k1"))
	a.expect("_\r\n", "GET", "k1")
	a.expect("+OK\r\n", "MULTI")
	a.expect("+QUEUED\r\n", "SET", "k1", "x")
	a.expect("+QUEUED\r\n", "GET", "k1")
	a.expect("*2\r\n+OK\r\n$1\r\nx\r\n", "EXEC")
	a.expectReply(inval("k1"))
	// Another client's write reaches a at once; a PING shows nothing else
	// is queued.
	b.expect("+OK\r\n", "SET", "k1", "y")
	a.expectReply(inval("k1"))
	a.expect("+PONG\r\n", "PING")

	// FLUSHALL: one null invalidation.
	a.expect("$1\r\ny\r\n", "GET", "k1")
	b.expect("+OK\r\n", "FLUSHALL")
	a.expectReply(">2\r\n$10\r\ninvalidate\r\n_\r\n")
	a.expect("+PONG\r\n", "PING")

	// SWAPDB, by another client or by a itself, invalidates nothing and
	// leaves the table as it is (Redis 7.0's dbSwapDatabases does not
	// touch it): a later write of the key still reaches a.
	a.expect("_\r\n", "GET", "k1")
	b.expect("+OK\r\n", "SWAPDB", "0", "1")
	a.expect("+PONG\r\n", "PING")
	a.expect("+OK\r\n", "SWAPDB", "0", "1")
	a.expect("+PONG\r\n", "PING")
	b.expect("+OK\r\n", "SET", "k1", "s")
	a.expectReply(inval("k1"))
	a.expect("+PONG\r\n", "PING")

	// NOLOOP: no message for what a changes itself.
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "NOLOOP")
	a.expect("_\r\n", "GET", "n1")
	a.expect("+OK\r\n", "SET", "n1", "1")
	a.expect("+PONG\r\n", "PING")
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "off")

	// OPTIN: only the command after CLIENT CACHING YES is remembered.
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "OPTIN")
	a.expect("_\r\n", "GET", "o1")
	a.expect("+OK\r\n", "CLIENT", "CACHING", "yes")
	a.expect("_\r\n", "GET", "o2")
	a.expect("_\r\n", "GET", "o3") // CACHING applied to one command
	b.expect("+OK\r\n", "MSET", "o1", "1", "o2", "2", "o3", "3")
	a.expectReply(inval("o2"))
	a.expect("+PONG\r\n", "PING")
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "off")

	// BCAST with prefixes: one message per prefix and command, sorted.
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:", "PREFIX", "q:")
	b.expect("+OK\r\n", "MSET", "p:2", "1", "x:1", "1", "p:1", "1")
	a.expectReply(inval("p:1", "p:2"))
	a.expect("+PONG\r\n", "PING")
	a.expect("%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*2\r\n$2\r\np:\r\n$2\r\nq:\r\n",
		"CLIENT", "TRACKINGINFO")
	a.expect("-ERR Prefix 'p' overlaps with an existing prefix 'p:'. Prefixes for a single client must not overlap.\r\n",
		"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p")
	a.expect("-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.\r\n",
		"CLIENT", "TRACKING", "on")
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "off")

	// tracking-table-max-keys: evicted keys are invalidated.
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on")
	a.expect("*2\r\n_\r\n_\r\n", "MGET", "e1", "e1")
	a.expect("_\r\n", "GET", "e2")
	b.expect("+OK\r\n", "CONFIG", "SET", "tracking-table-max-keys", "1")
	got := a.reply()
	if got != inval("e1") && got != inval("e2") {
		t.Fatalf("eviction: got %q", got)
	}
	b.expect("+OK\r\n", "CONFIG", "SET", "tracking-table-max-keys", "0")

	// Expiry (active): the key's clients hear of it.
	b.expect("+OK\r\n", "SET", "x1", "v", "PX", "500")
	a.expect("$1\r\nv\r\n", "GET", "x1")
	a.expectReply(inval("x1"))
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "off")

	// A redirect to a connection that went away.
	r2 := dialAddr(t, addr)
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "REDIRECT", r2.clientID())
	a.expect("_\r\n", "GET", "z1")
	r2.expect("+OK\r\n", "QUIT")
	r2.expectClosed()
	for {
		// The server notices the close on its own time: poll with writes.
		b.expect("+OK\r\n", "SET", "z1", "1")
		got := a.do("GET", "z1") // re-read so the key is tracked again
		if strings.HasPrefix(got, ">2\r\n$21\r\ntracking-redir-broken\r\n") {
			a.reply() // the GET's own reply follows
			break
		}
	}
	a.expect("%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$15\r\nbroken_redirect\r\n$8\r\nredirect\r\n:"+r2id(a)+"\r\n$8\r\nprefixes\r\n*0\r\n",
		"CLIENT", "TRACKINGINFO")
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "off")

	// Errors, in Redis's order.
	for _, c := range [][2]string{
		{"CLIENT TRACKING maybe", "-ERR syntax error\r\n"},
		{"CLIENT TRACKING on foo", "-ERR syntax error\r\n"},
		{"CLIENT TRACKING on PREFIX x", "-ERR PREFIX option requires BCAST mode to be enabled\r\n"},
		{"CLIENT TRACKING on BCAST OPTIN", "-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"},
		{"CLIENT TRACKING on OPTIN OPTOUT", "-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"},
		{"CLIENT TRACKING on REDIRECT x", "-ERR value is not an integer or out of range\r\n"},
		{"CLIENT TRACKING on BCAST PREFIX ab PREFIX a", "-ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap.\r\n"},
		{"CLIENT CACHING yes", "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n"},
	} {
		a.expect(c[1], strings.Fields(c[0])...)
	}
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "OPTOUT")
	a.expect("-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n", "CLIENT", "CACHING", "yes")
	a.expect("-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.\r\n",
		"CLIENT", "TRACKING", "on", "OPTIN")
	a.expect("+OK\r\n", "CLIENT", "CACHING", "no")
	b.expect("+OK\r\n", "SET", "t1", "v")
	a.expect("%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$6\r\noptout\r\n$10\r\ncaching-no\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n",
		"CLIENT", "TRACKINGINFO")

	// A flush empties the table even when no client tracks any more.
	a.expect("+PONG\r\n", "PING")        // ends CLIENT CACHING NO's command
	a.expect("$1\r\nv\r\n", "GET", "t1") // OPTOUT: remembered
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "off")
	if info := b.do("INFO", "stats"); strings.Contains(info, "tracking_total_keys:0\r\n") {
		t.Fatalf("the table is empty before the flush: %q", info)
	}
	b.expect("+OK\r\n", "FLUSHDB")
	if info := b.do("INFO", "stats"); !strings.Contains(info, "tracking_total_keys:0\r\n") {
		t.Fatalf("the table is not empty after the flush: %q", info)
	}
	a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "OPTOUT")

	// INFO counts.
	b.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "BCAST")
	info := b.do("INFO")
	for _, f := range []string{"tracking_clients:2\r\n", "tracking_total_prefixes:1\r\n"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO lacks %q", f)
		}
	}
}

// r2id is the redirect a's tracking names (CLIENT GETREDIR).
func r2id(a *wire) string {
	return strings.TrimSuffix(strings.TrimPrefix(a.do("CLIENT", "GETREDIR"), ":"), "\r\n")
}

// busyScript spins on TIME for 20 ms of wall clock (TIME is not frozen).
const busyScript = `local t0 = redis.call('time')
while true do
  local t = redis.call('time')
  if (t[1]-t0[1])*1000000 + (t[2]-t0[2]) > 20000 then return 1 end
end`

// TestFixedTimeAndExpiryInvalidation: a MULTI/EXEC block and a script
// run at one instant, so a key with a 5 ms TTL set at their start still
// reads back after 20 ms inside them (Redis 7.0's fixed_time_expire and
// script time snapshot); once it expires, the client whose GET finds it
// expired is sent its invalidation even with BCAST NOLOOP, since an
// expiry is nobody's write (TCL tracking "Tracking gets notification of
// lazy expired keys"). Run against redis-server too when installed.
func TestFixedTimeAndExpiryInvalidation(t *testing.T) {
	for name, start := range trackingTargets(t) {
		t.Run(name, func(t *testing.T) {
			addr := start(t)
			a, b := dialAddr(t, addr), dialAddr(t, addr)
			bid := b.clientID()
			b.expect("*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n", "SUBSCRIBE", "__redis__:invalidate")
			a.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", bid, "NOLOOP")
			a.expect("+OK\r\n", "MULTI")
			a.expect("+QUEUED\r\n", "SET", "mykey", "myval", "PX", "5")
			a.expect("+QUEUED\r\n", "SET", "otherkey", "v")
			a.expect("+QUEUED\r\n", "EVAL", busyScript, "0")
			a.expect("+QUEUED\r\n", "GET", "mykey")
			a.expect("*4\r\n+OK\r\n+OK\r\n:1\r\n$5\r\nmyval\r\n", "EXEC")
			// A script: the same at its own instant.
			a.expect("$1\r\nv\r\n", "EVAL", "redis.call('set', KEYS[1], 'v', 'px', 5) "+strings.ReplaceAll(busyScript, "return 1", "break")+" return redis.call('get', KEYS[1])", "1", "skey")
			a.expect(":1\r\n", "EVAL", busyScript, "0") // past both TTLs
			a.expect("$-1\r\n", "GET", "mykey")
			// NOLOOP hid a's own SETs; the expiries of mykey (a's lazy GET,
			// or the active cycle) and skey reach b, in one BCAST message or
			// two, in either order.
			want := map[string]string{
				invalRESP2("mykey"): "mykey", invalRESP2("skey"): "skey",
				invalRESP2("mykey", "skey"): "mykey skey", invalRESP2("skey", "mykey"): "mykey skey",
			}
			got := ""
			for len(got) < len("mykey skey") {
				r := b.reply()
				keys, ok := want[r]
				if !ok {
					t.Fatalf("b got %q, want the invalidations of mykey and skey only", r)
				}
				got = strings.TrimSpace(got + " " + keys)
			}
		})
	}
}

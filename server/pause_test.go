package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CLIENT PAUSE, CLIENT KILL filters and CLIENT LIST fields over real TCP
// with several connections, on Persimmon in both I/O modes and on
// redis-server when installed (the same exact replies pass on both).

// infoField returns one INFO field's value.
func (w *wire) infoField(name string) string {
	w.t.Helper()
	info := w.do("INFO")
	m := regexp.MustCompile(`\r\n` + regexp.QuoteMeta(name) + `:([^\r]*)\r\n`).FindStringSubmatch(info)
	if m == nil {
		w.t.Fatalf("INFO has no %s", name)
	}
	return m[1]
}

// waitBlocked polls INFO blocked_clients until it is n (the server's own
// count of clients held; polling a condition, with a deadline).
func (w *wire) waitBlocked(n int) {
	w.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if w.infoField("blocked_clients") == strconv.Itoa(n) {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("blocked_clients never became %d", n)
		}
		time.Sleep(5 * time.Millisecond) // polling the server's counter
	}
}

func TestClientPause(t *testing.T) {
	for name, start := range trackingTargets(t) {
		t.Run(name, func(t *testing.T) { testClientPause(t, start(t)) })
	}
}

func testClientPause(t *testing.T, addr string) {
	a, b, c := dialAddr(t, addr), dialAddr(t, addr), dialAddr(t, addr)
	a.expect("+OK\r\n", "FLUSHALL")
	a.expect("-ERR timeout is not an integer or out of range\r\n", "CLIENT", "PAUSE", "x")
	a.expect("-ERR timeout is negative\r\n", "CLIENT", "PAUSE", "-1")
	a.expect("-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n", "CLIENT", "PAUSE", "10", "READ")

	// WRITE: reads go on; a write, PUBLISH and a script without the
	// no-writes flag wait (counted as blocked) until UNPAUSE.
	a.expect("+OK\r\n", "SET", "k", "v0")
	a.expect("+OK\r\n", "CLIENT", "PAUSE", "100000", "WRITE")
	b.expect("$2\r\nv0\r\n", "GET", "k")
	b.expect("-ERR wrong number of arguments for 'set' command\r\n", "SET", "k")
	c.expect("$5\r\nro ok\r\n", "EVAL", "#!lua flags=no-writes\nreturn 'ro ok'", "0")
	c.expect("+OK\r\n", "MULTI")
	c.expect("+QUEUED\r\n", "GET", "k")
	c.expect("*1\r\n$2\r\nv0\r\n", "EXEC") // a read-only block runs
	b.send(multibulk("SET", "k", "v1"))
	a.waitBlocked(1)
	c.send(multibulk("PUBLISH", "ch", "m"))
	a.waitBlocked(2)
	a.expect("$2\r\nv0\r\n", "GET", "k") // the write has not run
	a.expect("+OK\r\n", "CLIENT", "UNPAUSE")
	b.expectReply("+OK\r\n")
	c.expectReply(":0\r\n")
	a.expect("$2\r\nv1\r\n", "GET", "k")
	a.waitBlocked(0)

	// EXEC of a block with a write, and EVAL without a shebang, wait too;
	// commands pipelined behind a held one wait with it.
	b.expect("+OK\r\n", "MULTI")
	b.expect("+QUEUED\r\n", "INCR", "n")
	a.expect("+OK\r\n", "CLIENT", "PAUSE", "100000", "WRITE")
	b.send(multibulk("EXEC") + multibulk("GET", "n"))
	c.send(multibulk("EVAL", "return 7", "0"))
	a.waitBlocked(2)
	a.expect("+OK\r\n", "CLIENT", "UNPAUSE")
	b.expectReply("*1\r\n:1\r\n")
	b.expectReply("$1\r\n1\r\n")
	c.expectReply(":7\r\n")

	// A held client that is killed goes at once; its command never runs.
	d := dialAddr(t, addr)
	dID := d.clientID()
	a.expect("+OK\r\n", "CLIENT", "PAUSE", "100000", "WRITE")
	d.send(multibulk("SET", "killed", "1"))
	a.waitBlocked(1)
	a.expect(":1\r\n", "CLIENT", "KILL", "ID", dID)
	a.waitBlocked(0) // while the pause lasts
	d.expectClosed()
	a.expect("+OK\r\n", "CLIENT", "UNPAUSE")
	a.expect("$-1\r\n", "GET", "killed")

	// Expiry is paused with the clients: the key reads as missing but is
	// not removed (expired_keys stays) until the pause ends.
	expired, _ := strconv.Atoi(a.infoField("expired_keys"))
	a.expect("+OK\r\n", "MULTI")
	a.expect("+QUEUED\r\n", "SET", "e", "v", "PX", "10")
	a.expect("+QUEUED\r\n", "CLIENT", "PAUSE", "100000", "WRITE")
	a.expect("*2\r\n+OK\r\n+OK\r\n", "EXEC")
	for a.do("GET", "e") != "$-1\r\n" {
		time.Sleep(5 * time.Millisecond) // polling until the key's time has passed
	}
	if got, _ := strconv.Atoi(a.infoField("expired_keys")); got != expired {
		t.Fatalf("expired_keys moved during the pause: %d -> %d", expired, got)
	}
	a.expect("+OK\r\n", "CLIENT", "UNPAUSE")
	a.expect("$-1\r\n", "GET", "e")
	if got, _ := strconv.Atoi(a.infoField("expired_keys")); got != expired+1 {
		t.Fatalf("expired_keys after the pause: %d, want %d", got, expired+1)
	}

	// ALL holds every command, PING too; the pause ends by itself.
	start := time.Now()
	a.expect("+OK\r\n", "CLIENT", "PAUSE", "300", "ALL")
	b.expect("+PONG\r\n", "PING")
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("PING answered %v into a 300 ms pause", d)
	}
}

func TestClientKillAndList(t *testing.T) {
	for name, start := range trackingTargets(t) {
		t.Run(name, func(t *testing.T) { testClientKillAndList(t, start(t)) })
	}
}

func testClientKillAndList(t *testing.T, addr string) {
	a, b, c, d := dialAddr(t, addr), dialAddr(t, addr), dialAddr(t, addr), dialAddr(t, addr)
	for _, e := range [][2]string{
		{"CLIENT KILL ID 0", "-ERR client-id should be greater than 0\r\n"},
		{"CLIENT KILL ID x TYPE", "-ERR client-id should be greater than 0\r\n"},
		{"CLIENT KILL ID 1 TYPE", "-ERR syntax error\r\n"},
		{"CLIENT KILL TYPE foo", "-ERR Unknown client type 'foo'\r\n"},
		{"CLIENT KILL USER nosuch", "-ERR No such user 'nosuch'\r\n"},
		{"CLIENT KILL SKIPME maybe", "-ERR syntax error\r\n"},
		{"CLIENT KILL FOO bar", "-ERR syntax error\r\n"},
		{"CLIENT KILL 127.0.0.1:1", "-ERR No such client\r\n"},
		{"CLIENT KILL ADDR 127.0.0.1:1", ":0\r\n"},
		{"CLIENT LIST TYPE foo", "-ERR Unknown client type 'foo'\r\n"},
	} {
		a.expect(e[1], strings.Fields(e[0])...)
	}
	// The fields of a line, in Redis 7.0's order, with a subscriber's,
	// a tracking client's and a MULTI client's flags.
	cID := c.clientID()
	c.expect("*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", "SUBSCRIBE", "ch")
	d.expect("+OK\r\n", "CLIENT", "NO-EVICT", "on")
	d.expect("+OK\r\n", "CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", cID)
	b.expect("+OK\r\n", "MULTI")
	b.expect("+QUEUED\r\n", "SET", "a", "b")
	list := a.do("CLIENT", "LIST")
	lines := strings.Split(strings.TrimSuffix(list[strings.Index(list, "\r\n")+2:len(list)-2], "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("CLIENT LIST: %q", list)
	}
	lines = lines[len(lines)-4:] // ours are the newest (redis-server's test start-up keeps a client)
	want := "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp"
	for i, l := range lines {
		if got := strings.Join(clientFields(l), " "); got != want {
			t.Fatalf("line %d fields:\n got %s\nwant %s", i, got, want)
		}
		if !strings.Contains(l, " omem=0 ") {
			t.Errorf("a client with nothing pending: %q", l)
		}
	}
	for i, re := range []string{
		` flags=N db=0 .* argv-mem=10 .* cmd=client\|list user=default redir=-1 resp=2$`,
		` flags=x db=0 sub=0 psub=0 ssub=0 multi=1 .* multi-mem=29 .* cmd=set `,
		` flags=P db=0 sub=1 psub=0 ssub=0 multi=-1 .* cmd=subscribe `,
		` flags=tBe db=0 .* cmd=client\|tracking user=default redir=` + cID + ` resp=2$`,
	} {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], re)
		}
	}
	a.expect("$0\r\n\r\n", "CLIENT", "LIST", "TYPE", "replica")
	if got := a.do("CLIENT", "LIST", "TYPE", "pubsub"); strings.Count(got, "id=") != 1 || !strings.Contains(got, "id="+cID+" ") {
		t.Errorf("CLIENT LIST TYPE pubsub = %q", got)
	}

	// TYPE pubsub kills the subscriber only; USER with SKIPME yes all but
	// the asking connection; the old form kills by address, itself too.
	a.expect(":1\r\n", "CLIENT", "KILL", "TYPE", "pubsub")
	c.expectClosed()
	dAddr := addrOf(t, lines[3])
	a.expect("+OK\r\n", "CLIENT", "KILL", dAddr)
	d.expectClosed()
	e := dialAddr(t, addr)
	eID := e.clientID()
	a.expect(":1\r\n", "CLIENT", "KILL", "ID", eID, "LADDR", addrOfField(t, lines[0], "laddr"))
	e.expectClosed()
	before := strings.Count(a.do("CLIENT", "LIST"), "id=")
	a.expect(":"+strconv.Itoa(before-1)+"\r\n", "CLIENT", "KILL", "USER", "default")
	b.expectClosed()
	a.expect(":1\r\n", "CLIENT", "KILL", "USER", "default", "SKIPME", "no")
	a.expectClosed()
}

func addrOf(t *testing.T, line string) string { return addrOfField(t, line, "addr") }

func addrOfField(t *testing.T, line, field string) string {
	t.Helper()
	for _, kv := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(kv, field+"="); ok {
			return v
		}
	}
	t.Fatalf("no %s in %q", field, line)
	return ""
}

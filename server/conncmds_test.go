package server

import (
	"bufio"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clientFields returns the field names of a CLIENT LIST line, in order.
func clientFields(line string) []string {
	var names []string
	for _, kv := range strings.Fields(line) {
		names = append(names, kv[:strings.IndexByte(kv, '=')])
	}
	return names
}

func TestClientCommands(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	a, b := dialWire(t, s), dialWire(t, s)
	script(t, a, [][2]string{
		{"client getname", "$-1\r\n"},
		{`client setname "a b"`, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{"client setname alpha", "+OK\r\n"},
		{"client getname", bulk("alpha")},
		{"client setinfo lib-name go-redis(v9)", "+OK\r\n"},
		{"client setinfo lib-ver 9.0", "+OK\r\n"},
		{"client setinfo foo x", "-ERR Unrecognized option 'foo'\r\n"},
		{"client no-evict maybe", "-ERR syntax error\r\n"},
		{"client kill 1.2.3.4:5", "-ERR No such client\r\n"},
		{"client kill id x", "-ERR client-id should be greater than 0\r\n"},
		{"client kill foo bar", "-ERR syntax error\r\n"},
		{"client list type pubsub", "$0\r\n\r\n"},
		{"client list type nosuch", "-ERR Unknown client type 'nosuch'\r\n"},
		{"client list id x", "-ERR Invalid client ID\r\n"},
		{"client list id 0", "$0\r\n\r\n"},
		{"client UnBlock 1 timeout x", "-ERR unknown subcommand or wrong number of arguments for 'UnBlock'. Try CLIENT HELP.\r\n"},
		{"client unblock 1 nosuch", "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n"},
		{"client unblock 1e3 nosuch", "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n"},
		{"client unblock 1e3 error", "-ERR value is not an integer or out of range\r\n"},
		{"client list id -1 -9223372036854775808", "$0\r\n\r\n"},
		{"select 4", "+OK\r\n"},
	})
	idA := strings.TrimSuffix(strings.TrimPrefix(a.do("CLIENT", "ID"), ":"), "\r\n")
	idB := strings.TrimSuffix(strings.TrimPrefix(b.do("CLIENT", "ID"), ":"), "\r\n")

	info := a.do("CLIENT", "INFO")
	// Redis 7.0.15's CLIENT INFO fields, in order.
	want := "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp"
	body := info[strings.Index(info, "\r\n")+2 : len(info)-2]
	if got := strings.Join(clientFields(body), " "); got != want {
		t.Fatalf("CLIENT INFO fields:\n got %s\nwant %s", got, want)
	}
	if !regexp.MustCompile(`^id=` + idA + ` addr=127\.0\.0\.1:\d+ laddr=127\.0\.0\.1:\d+ fd=\d+ name=alpha age=\d+ idle=0 flags=N db=4 .* cmd=client\|info user=default redir=-1 resp=2\n$`).MatchString(body) {
		t.Fatalf("CLIENT INFO = %q", body)
	}

	list := a.do("CLIENT", "LIST")
	lines := strings.Split(strings.TrimSuffix(list[strings.Index(list, "\r\n")+2:len(list)-2], "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "id="+idA+" ") || !strings.HasPrefix(lines[1], "id="+idB+" ") {
		t.Fatalf("CLIENT LIST = %q", list)
	}
	if !strings.Contains(lines[1], " cmd=client|id ") {
		t.Errorf("other client's last command not shown: %q", lines[1])
	}
	only := a.do("CLIENT", "LIST", "ID", idB)
	if strings.Count(only, "id=") != 1 || !strings.Contains(only, "id="+idB+" ") {
		t.Fatalf("CLIENT LIST ID %s = %q", idB, only)
	}

	// Killing the asking client is skipped by default.
	if got := a.do("CLIENT", "KILL", "ID", idA); got != ":0\r\n" {
		t.Fatalf("CLIENT KILL ID self = %q", got)
	}
	if got := a.do("CLIENT", "KILL", "ID", idB); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL ID other = %q", got)
	}
	b.expectClosed()

	c := dialWire(t, s)
	addr := c.nc.LocalAddr().String()
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	if got := a.do("CLIENT", "KILL", addr); got != "+OK\r\n" {
		t.Fatalf("CLIENT KILL %s = %q", addr, got)
	}
	c.expectClosed()
	if got := a.do("CLIENT", "KILL", "SKIPME", "no", "ID", idA); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL SKIPME no = %q", got)
	}
	a.expectClosed()
}

func TestTimeAndEcho(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	got := w.do("TIME")
	m := regexp.MustCompile(`^\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("TIME = %q", got)
	}
	if us, _ := strconv.Atoi(m[2]); us >= 1e6 {
		t.Fatalf("TIME microseconds %d", us)
	}
	if got := w.do("ECHO", ""); got != "$0\r\n\r\n" {
		t.Fatalf("ECHO \"\" = %q", got)
	}
}

// Every HELP reply ends as Redis's addReplyHelp ends it (redis-server
// 7.0.15: "HELP", "    Prints this help.").
func TestHelpReplyEnding(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	const ending = "+HELP\r\n+    Prints this help.\r\n"
	for _, cmd := range []string{"CLIENT", "CONFIG", "OBJECT", "COMMAND"} {
		if got := w.do(cmd, "HELP"); !strings.HasSuffix(got, ending) {
			t.Errorf("%s HELP ends %q, want %q", cmd, got[max(0, len(got)-40):], ending)
		}
	}
}

// CLIENT LIST's cmd= is the last command looked up, as in Redis 7.0.15:
// a queued command inside MULTI, a command refused for its arity, EXEC
// after a transaction, NULL after an unknown command.
func TestClientListLastCommand(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	a, b := dialWire(t, s), dialWire(t, s)
	idA := strings.TrimSuffix(strings.TrimPrefix(a.do("CLIENT", "ID"), ":"), "\r\n")
	lastOfA := func() string {
		list := b.do("CLIENT", "LIST", "ID", idA)
		for _, f := range strings.Fields(list) {
			if strings.HasPrefix(f, "cmd=") {
				return strings.TrimPrefix(f, "cmd=")
			}
		}
		t.Fatalf("no cmd= in %q", list)
		return ""
	}
	for _, step := range [][2]string{
		{"multi", "multi"},
		{"ping", "ping"},
		{"get", "get"},
		{"exec", "exec"},
		{"nosuchcommand", "NULL"},
		{"echo x", "echo"},
	} {
		a.send(step[0] + "\r\n")
		a.reply()
		if got := lastOfA(); got != step[1] {
			t.Errorf("after %q: cmd=%s, want %s", step[0], got, step[1])
		}
	}
}

// TestQueryBufferFollowsArrivedBytes: a request that declares a 512 MB
// bulk but sends a few bytes of it gets a query buffer sized by what
// arrived, not by the declaration (a few such clients used to cost GBs);
// a big argument sent in pieces still arrives whole.
func TestQueryBufferFollowsArrivedBytes(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	a, b := dialWire(t, s), dialWire(t, s)
	idA := strings.TrimSuffix(strings.TrimPrefix(a.do("CLIENT", "ID"), ":"), "\r\n")
	field := func(name string) int {
		list := b.do("CLIENT", "LIST", "ID", idA)
		for _, f := range strings.Fields(list) {
			if v, ok := strings.CutPrefix(f, name+"="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s in %q: %v", name, list, err)
				}
				return n
			}
		}
		t.Fatalf("no %s= in %q", name, list)
		return 0
	}
	a.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\nabc")
	for field("qbuf") == 0 { // until the server has read the partial request
	}
	if free := field("qbuf-free"); free > 1<<20 {
		t.Fatalf("qbuf-free=%d after 30 bytes of a request declaring 512 MB", free)
	}

	c := dialWire(t, s)
	const size = 3 << 20
	c.send(fmt.Sprintf("*2\r\n$4\r\nECHO\r\n$%d\r\n", size))
	chunk := strings.Repeat("x", 64<<10)
	for sent := 0; sent < size; sent += len(chunk) {
		c.send(chunk)
	}
	c.send("\r\n")
	want := fmt.Sprintf("$%d\r\n%s\r\n", size, strings.Repeat("x", size))
	if got := c.reply(); got != want {
		t.Fatalf("ECHO of %d bytes sent in pieces: reply of %d bytes, want %d", size, len(got), len(want))
	}
}

// TestClientReplyOffLateReplies: a command that blocks under CLIENT REPLY
// OFF (or as the command CLIENT REPLY SKIP silences) gets no reply when it
// ends later, whether it times out (WAIT, BLPOP), is ended by CLIENT
// UNBLOCK or is served by another client's push: the next reply the client
// reads is CLIENT REPLY ON's. Pub/sub messages are pushes and pass (as
// Redis 7.0's CLIENT_PUSHING does); redis-server 7.0.15 passes the same
// bytes.
func TestClientReplyOffLateReplies(t *testing.T) {
	for name, start := range trackingTargets(t) {
		t.Run(name, func(t *testing.T) { testClientReplyOffLateReplies(t, name, start(t)) })
	}
}

func testClientReplyOffLateReplies(t *testing.T, target, addr string) {
	a, b := dialAddr(t, addr), dialAddr(t, addr)
	b.expect("+OK\r\n", "FLUSHALL")
	on := multibulk("CLIENT", "REPLY", "ON") + multibulk("PING")
	after := func(what string) {
		t.Helper()
		if got := a.reply() + a.reply(); got != "+OK\r\n+PONG\r\n" {
			t.Fatalf("%s: after it ended, got %q, want CLIENT REPLY ON's +OK and +PONG", what, got)
		}
	}

	// Timeouts: the pipelined commands run once the blocked one ended.
	a.send(multibulk("CLIENT", "REPLY", "OFF") + multibulk("WAIT", "1", "50") + on)
	after("WAIT under REPLY OFF")
	a.send(multibulk("CLIENT", "REPLY", "OFF") + multibulk("BLPOP", "nolist", "0.05") + on)
	after("BLPOP timeout under REPLY OFF")
	a.send(multibulk("CLIENT", "REPLY", "SKIP") + multibulk("WAIT", "1", "50") + multibulk("PING"))
	a.expectReply("+PONG\r\n")

	// CLIENT UNBLOCK.
	id := a.clientID()
	a.send(multibulk("CLIENT", "REPLY", "OFF") + multibulk("BLPOP", "nolist", "0") + on)
	b.waitBlocked(1)
	b.expect(":1\r\n", "CLIENT", "UNBLOCK", id)
	after("BLPOP ended by CLIENT UNBLOCK under REPLY OFF")

	// Served by another client's RPUSH.
	a.send(multibulk("CLIENT", "REPLY", "OFF") + multibulk("BLPOP", "l", "0") + on)
	b.waitBlocked(1)
	b.expect(":1\r\n", "RPUSH", "l", "x")
	after("BLPOP served under REPLY OFF")
	a.send(multibulk("CLIENT", "REPLY", "SKIP") + multibulk("BLPOP", "l", "0") + multibulk("PING"))
	b.waitBlocked(1)
	b.expect(":1\r\n", "RPUSH", "l", "y")
	a.expectReply("+PONG\r\n")

	// Pub/sub messages are pushes: REPLY OFF does not silence them.
	a.send(multibulk("HELLO", "3"))
	a.reply()
	a.send(multibulk("CLIENT", "REPLY", "OFF") + multibulk("SUBSCRIBE", "ch"))
	a.expectReply(">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")
	b.expect(":1\r\n", "PUBLISH", "ch", "m")
	a.expectReply(">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n")
	a.send(on)
	after("SUBSCRIBE under REPLY OFF")
}

// TestMonitorUnixSocket: MONITOR names a unix-socket client
// "unix:<socket path>", as Redis's replicationFeedMonitors does, not by
// the peer address a unix socket does not have; CLIENT LIST shows
// addr=<path>:0 laddr=<path>:0 and the U flag, as Redis 7.0 does.
func TestMonitorUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	startWireOn(t, Config{Params: []ConfigLine{{"enable-protected-configs", "local"}}}, &fakeKS{}, ln)
	dial := func() *wire {
		nc, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		nc.SetDeadline(time.Now().Add(20 * time.Second))
		return &wire{t: t, nc: nc, r: bufio.NewReader(nc)}
	}
	m, c := dial(), dial()
	m.expect("+OK\r\n", "MONITOR")
	c.expect("$1\r\nx\r\n", "ECHO", "x")
	line, err := m.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := " [0 unix:" + path + "] \"ECHO\" \"x\"\r\n"; !strings.HasSuffix(line, want) {
		t.Fatalf("MONITOR line %q, want it to end in %q", line, want)
	}
	// A unix-socket client is local (Redis's islocalClient): "local"
	// protected configs may be set from it.
	c.expect("+OK\r\n", "CONFIG", "SET", "dbfilename", "other.rdb")
	info := c.do("CLIENT", "INFO")
	for _, want := range []string{" addr=" + path + ":0 laddr=" + path + ":0 ", " flags=U "} {
		if !strings.Contains(info, want) {
			t.Fatalf("CLIENT INFO %q lacks %q", info, want)
		}
	}
}

package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Safety at the edge (issue 12 §5), each case run against the real binary
// in both I/O modes and against Debian's redis-server 7.0.

// startRedisLogged starts redis-server on a free loopback port with extra
// arguments, logging to a file; it returns the address and a function that
// reads the log so far.
func startRedisLogged(t *testing.T, args ...string) (string, func() string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH: %v", err)
	}
	port := freePort(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "redis.log")
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--logfile", logPath}, args...)
	cmd := exec.Command(bin, all...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	readLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	for i := 0; i < 500; i++ { // bounded polling for readiness
		select {
		case err := <-done:
			t.Fatalf("redis-server exited: %v\n%s", err, readLog())
		default:
		}
		if c, err := dialRESP(addr); err == nil {
			r, err := c.do("PING")
			c.close()
			if err == nil && (r.String() == "+PONG" || strings.HasPrefix(r.String(), "-NOAUTH")) {
				return addr, readLog
			}
		}
		time.Sleep(20 * time.Millisecond) // between connection attempts
	}
	t.Fatalf("redis-server on %s never answered PING\n%s", addr, readLog())
	return "", nil
}

// edgeTarget is one server under test: its address and its log so far.
type edgeTarget struct {
	name string
	addr string
	log  func() string
}

// edgeTargets starts redis-server and persimmon-server in both I/O modes
// with the same extra arguments.
func edgeTargets(t *testing.T, args ...string) []edgeTarget {
	t.Helper()
	raddr, rlog := startRedisLogged(t, args...)
	out := []edgeTarget{{"redis", raddr, rlog}}
	for _, io := range []string{"goroutine", "loop"} {
		s := startServer(t, t.TempDir(), append([]string{"--io", io}, args...)...)
		out = append(out, edgeTarget{"persimmon-" + io, s.Addr, s.log.String})
	}
	return out
}

// rawExchange dials addr (from local address src if not ""), writes data in
// one write and returns everything the server sends until it closes (or
// "<open>" appended if it keeps the connection open for 3 s).
func rawExchange(t *testing.T, addr, src, data string) string {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if data != "" {
		if _, err := nc.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return string(b) + "<open>"
	}
	return string(b)
}

// waitLog polls a server's log (bounded) until it contains want.
func waitLog(t *testing.T, tg edgeTarget, want string) {
	t.Helper()
	for i := 0; i < 300; i++ {
		if strings.Contains(tg.log(), want) {
			return
		}
		time.Sleep(10 * time.Millisecond) // the log is written by another process
	}
	t.Errorf("%s: log never showed %q:\n%s", tg.name, want, tail(tg.log(), 2000))
}

func getString(t *testing.T, addr, key string) string {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	r, err := c.do("GET", key)
	if err != nil {
		t.Fatal(err)
	}
	return r.String()
}

// TestCrossProtocolGuard: an HTTP request (a browser page posting to the
// server) closes the connection at its "POST" or "Host:" line, with
// Redis's warning in the log; nothing after it runs, and the replies of
// the commands before it in the same read are not written.
func TestCrossProtocolGuard(t *testing.T) {
	for _, tg := range edgeTargets(t) {
		cases := []struct{ name, data, ranKey, notKey string }{
			{"post", "SET before 1\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\nSET after1 1\r\n", "before", "after1"},
			{"host", "Host: example.com\r\nSET after2 1\r\n", "", "after2"},
			{"multibulk", "*1\r\n$4\r\npOsT\r\n*3\r\n$3\r\nSET\r\n$6\r\nafter3\r\n$1\r\n1\r\n", "", "after3"},
			{"in multi", "MULTI\r\nHOST:\r\nSET after4 1\r\nEXEC\r\n", "", "after4"},
		}
		for _, tc := range cases {
			got := rawExchange(t, tg.addr, "", tc.data)
			if got != "" {
				t.Errorf("%s %s: server wrote %q, want a close without replies", tg.name, tc.name, got)
			}
			if tc.ranKey != "" {
				if g := getString(t, tg.addr, tc.ranKey); g != `"1"` {
					t.Errorf("%s %s: GET %s = %s: the command before the attack should have run", tg.name, tc.name, tc.ranKey, g)
				}
			}
			if g := getString(t, tg.addr, tc.notKey); g != "$-1" {
				t.Errorf("%s %s: GET %s = %s: the HTTP body ran as commands", tg.name, tc.name, tc.notKey, g)
			}
		}
		waitLog(t, tg, "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis.")
		if n := strings.Count(tg.log(), "SECURITY ATTACK"); n != 1 {
			t.Errorf("%s: warning logged %d times for 4 attacks within a minute, want 1", tg.name, n)
		}
	}
}

// TestProtectedModeLoopback: with protected mode on and no password, a
// peer at 127.0.0.2 is refused with Redis's DENIED text (Redis counts only
// 127.0.0.1 and ::1 as loopback); 127.0.0.1 is served.
func TestProtectedModeLoopback(t *testing.T) {
	var want string
	for _, tg := range edgeTargets(t, "--protected-mode", "yes") {
		got := rawExchange(t, tg.addr, "127.0.0.2", "PING\r\n")
		if !strings.HasPrefix(got, "-DENIED Redis is running in protected mode") {
			t.Errorf("%s: from 127.0.0.2 got %q, want DENIED", tg.name, got)
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Errorf("%s: DENIED text differs from redis-server's:\n got %q\nwant %q", tg.name, got, want)
		}
		if got := rawExchange(t, tg.addr, "127.0.0.1", "PING\r\nQUIT\r\n"); got != "+PONG\r\n+OK\r\n" {
			t.Errorf("%s: from 127.0.0.1 got %q", tg.name, got)
		}
		c, err := dialRESP(tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.do("CONFIG", "SET", "protected-mode", "no")
		c.close()
		if err != nil || r.String() != "+OK" {
			t.Fatalf("%s: CONFIG SET protected-mode no: %v %v", tg.name, r, err)
		}
		if got := rawExchange(t, tg.addr, "127.0.0.2", "PING\r\nQUIT\r\n"); got != "+PONG\r\n+OK\r\n" {
			t.Errorf("%s: protected mode off, from 127.0.0.2 got %q", tg.name, got)
		}
	}
}

// withNofile makes the servers started in f run under `ulimit -n n` (soft
// and hard), through a shell wrapper around the binary.
func withNofile(t *testing.T, n int, f func()) {
	t.Helper()
	wrapper := filepath.Join(t.TempDir(), "nofile.sh")
	script := fmt.Sprintf("#!/bin/sh\nulimit -n %d || exit 1\nexec %q \"$@\"\n", n, serverBin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := serverBin
	serverBin = wrapper
	defer func() { serverBin = saved }()
	f()
}

func configGet(t *testing.T, addr, name string) string {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	r, err := c.do("CONFIG", "GET", name)
	if err != nil || len(r.elems) != 2 {
		t.Fatalf("CONFIG GET %s: %v %v", name, r, err)
	}
	return r.elems[1].str
}

// TestMaxClientsFitsNofile: under `ulimit -n 200` (which an unprivileged
// process cannot raise), maxclients 10000 is reduced to 200-32 = 168 with
// Redis's warnings, as redis-server does (were root able to raise the
// hard limit, both would keep 10000: the comparison still holds).
func TestMaxClientsFitsNofile(t *testing.T) {
	var tgs []edgeTarget
	withNofile(t, 200, func() {
		s := startServer(t, t.TempDir(), "--maxclients", "10000")
		tgs = append(tgs, edgeTarget{"persimmon", s.Addr, s.log.String})
	})
	bin, _ := exec.LookPath("redis-server")
	wdir := t.TempDir() // a redis-server on PATH that is the wrapper
	script := fmt.Sprintf("#!/bin/sh\nulimit -n 200 || exit 1\nexec %q \"$@\"\n", bin)
	if err := os.WriteFile(filepath.Join(wdir, "redis-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", wdir+":"+os.Getenv("PATH"))
	raddr, rlog := startRedisLogged(t, "--maxclients", "10000")
	tgs = append(tgs, edgeTarget{"redis", raddr, rlog})
	want := configGet(t, raddr, "maxclients")
	for _, tg := range tgs {
		if got := configGet(t, tg.addr, "maxclients"); got != want {
			t.Errorf("%s: maxclients %s under ulimit -n 200, redis-server has %s", tg.name, got, want)
		}
		if want != "10000" {
			waitLog(t, tg, "Current maximum open files is 200. maxclients has been reduced to "+want+" to compensate for low ulimit.")
			waitLog(t, tg, "You requested maxclients of 10000 requiring at least 10032 max file descriptors.")
		}
	}
}

// TestMaxClientsRefusal: the client beyond maxclients is told so, not
// silently closed; one slot freed is usable again.
func TestMaxClientsRefusal(t *testing.T) {
	for _, tg := range edgeTargets(t, "--maxclients", "2") {
		var held []*respConn
		for i := 0; i < 2; i++ {
			c, err := dialRESP(tg.addr)
			if err != nil {
				t.Fatal(err)
			}
			if r, err := c.do("PING"); err != nil || r.String() != "+PONG" {
				t.Fatalf("%s: client %d: %v %v", tg.name, i, r, err)
			}
			held = append(held, c)
		}
		if got := rawExchange(t, tg.addr, "", ""); got != "-ERR max number of clients reached\r\n" {
			t.Errorf("%s: third client got %q", tg.name, got)
		}
		held[0].close()
		ok := false
		for i := 0; i < 300 && !ok; i++ { // the server notices the close asynchronously
			ok = rawExchange(t, tg.addr, "", "PING\r\nQUIT\r\n") == "+PONG\r\n+OK\r\n"
			if !ok {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if !ok {
			t.Errorf("%s: a freed slot was not usable", tg.name)
		}
		held[1].close()
	}
}

// hasClientNamed reports whether CLIENT LIST shows a client named name.
func hasClientNamed(t *testing.T, addr, name string) bool {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	r, err := c.do("CLIENT", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(r.str, " name="+name+" ")
}

// TestOutputBufferLimitClosesNonReader: a client that pipelines GETs of a
// large value and never reads is closed once its unread replies pass the
// hard limit of its class, with Redis's log line, instead of growing the
// server's memory.
func TestOutputBufferLimitClosesNonReader(t *testing.T) {
	val := strings.Repeat("x", 256<<10)
	for _, tg := range edgeTargets(t) {
		c, err := dialRESP(tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]any{{"CONFIG", "SET", "client-output-buffer-limit", "normal 256kb 0 0"}, {"SET", "big", val}} {
			if r, err := c.do(cmd...); err != nil || r.String() != "+OK" {
				t.Fatalf("%s: %v: %v %v", tg.name, cmd[0], r, err)
			}
		}
		victim, err := dialRESP(tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := victim.do("CLIENT", "SETNAME", "nonreader"); err != nil || r.String() != "+OK" {
			t.Fatalf("%s: CLIENT SETNAME: %v %v", tg.name, r, err)
		}
		nc := victim.nc
		// 400 GETs: 100 MB of replies, never read. The writer stops when
		// the server closes the connection.
		go func() {
			req := []byte(strings.Repeat("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 400))
			nc.Write(req)
		}()
		closed := false
		for i := 0; i < 1000 && !closed; i++ { // bounded poll: the server closes it asynchronously
			closed = !hasClientNamed(t, tg.addr, "nonreader")
			if !closed {
				time.Sleep(10 * time.Millisecond)
			}
		}
		nc.Close()
		if !closed {
			t.Errorf("%s: a client with 100 MB of unread replies is still connected", tg.name)
		}
		waitLog(t, tg, "scheduled to be closed ASAP for overcoming of output buffer limits.")
		c.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		c.close()
	}
}

// TestRequirepassHiddenFromPs: a password given on the command line is not
// in /proc/<pid>/cmdline (what ps shows) of either server, and still works.
func TestRequirepassHiddenFromPs(t *testing.T) {
	const secret = "s3cret-edge-pw"
	s := startServer(t, t.TempDir(), "--requirepass", secret)
	raddr, _ := startRedisLogged(t, "--requirepass", secret)
	rpid := redisPid(t, raddr, secret)
	for _, tc := range []struct {
		name, addr string
		pid        int
	}{{"persimmon", s.Addr, s.cmd.Process.Pid}, {"redis", raddr, rpid}} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", tc.pid))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s: the password is in the command line ps shows: %q", tc.name, b)
		}
		if !strings.Contains(string(b), "-server") {
			t.Errorf("%s: command line %q does not name the server", tc.name, b)
		}
		c, err := dialRESP(tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := c.do("AUTH", secret); err != nil || r.String() != "+OK" {
			t.Errorf("%s: AUTH with the command-line password: %v %v", tc.name, r, err)
		}
		c.close()
	}
	if !strings.Contains(readCmdline(t, s.cmd.Process.Pid), "--requirepass\x00*\x00") {
		t.Errorf("persimmon: command line %q: want the secrets replaced by *", readCmdline(t, s.cmd.Process.Pid))
	}
}

func readCmdline(t *testing.T, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// redisPid asks a redis-server for its process id (INFO server).
func redisPid(t *testing.T, addr, pass string) int {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	c.do("AUTH", pass)
	r, err := c.do("INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(r.str, "\r\n") {
		if v, ok := strings.CutPrefix(l, "process_id:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("no process_id in INFO server: %q", r.str)
	return 0
}

// TestClientReply: CLIENT REPLY OFF, ON and SKIP drop exactly the replies
// redis-server drops (the writes still run), in both I/O modes.
func TestClientReply(t *testing.T) {
	script := "CLIENT REPLY OFF\r\nPING\r\nSET a 1\r\nNOSUCHCMD\r\nCLIENT REPLY SKIP\r\nCLIENT REPLY ON\r\n" +
		"PING\r\nCLIENT REPLY SKIP\r\nECHO skipped\r\nECHO shown\r\nCLIENT REPLY SKIP\r\nCLIENT REPLY SKIP\r\nECHO twice\r\n" +
		"CLIENT REPLY BAD\r\nCLIENT REPLY OFF\r\nRESET\r\nGET a\r\nQUIT\r\n"
	var want string
	for _, tg := range edgeTargets(t) {
		got := rawExchange(t, tg.addr, "", script)
		if want == "" {
			want = got
			if !strings.Contains(got, "$5\r\nshown") || strings.Contains(got, "skipped") {
				t.Fatalf("redis-server's replies %q are not what the test expects", got)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: replies\n%q\nredis-server:\n%q", tg.name, got, want)
		}
	}
}

// TestOutputBufferLimitOneBigReply: with a normal hard limit of 1 MB, one
// GET of an 8 MB value closes the connection at once with nothing sent,
// however fast the client reads (Redis checks its output buffer when the
// reply is added, before any write), and logs the close; a 512 KB value
// is served. Persimmon does not copy the value it will not send.
func TestOutputBufferLimitOneBigReply(t *testing.T) {
	for _, tg := range edgeTargets(t) {
		c, err := dialRESP(tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]any{
			{"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"},
			{"SET", "big", strings.Repeat("x", 8<<20)},
			{"SET", "mid", strings.Repeat("y", 512<<10)},
		} {
			if r, err := c.do(cmd...); err != nil || r.String() != "+OK" {
				t.Fatalf("%s: %v: %v %v", tg.name, cmd[0], r, err)
			}
		}
		if got := rawExchange(t, tg.addr, "", "GET big\r\n"); got != "" {
			t.Errorf("%s: GET of 8 MB over a 1 MB limit sent %d bytes (%.20q...), want the connection closed with nothing", tg.name, len(got), got)
		}
		waitLog(t, tg, "scheduled to be closed ASAP for overcoming of output buffer limits.")
		if r, err := c.do("STRLEN", "mid"); err != nil || r.String() != ":524288" {
			t.Fatalf("%s: the other client after the close: %v %v", tg.name, r, err)
		}
		got := rawExchange(t, tg.addr, "", "GET mid\r\nQUIT\r\n")
		if want := "$524288\r\n" + strings.Repeat("y", 512<<10) + "\r\n+OK\r\n"; got != want {
			t.Errorf("%s: GET of 512 KB under the limit: %d bytes, want %d", tg.name, len(got), len(want))
		}
		c.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		c.close()
	}
}

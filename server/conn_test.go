package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/pmem"
)

func TestPipelinedPingsInOneWrite(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	var req strings.Builder
	for i := 0; i < 200; i++ {
		if i%2 == 0 {
			req.WriteString(multibulk("PING"))
		} else {
			req.WriteString("PING\r\n")
		}
	}
	req.WriteString(multibulk("ECHO", "end"))
	w.send(req.String())
	for i := 0; i < 200; i++ {
		if got := w.reply(); got != "+PONG\r\n" {
			t.Fatalf("reply %d = %q, want +PONG", i, got)
		}
	}
	if got := w.reply(); got != bulk("end") {
		t.Fatalf("last reply = %q, want %q", got, bulk("end"))
	}
}

func TestInlineRequests(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	w.send("PING\r\n")
	if got := w.reply(); got != "+PONG\r\n" {
		t.Fatalf("inline PING = %q", got)
	}
	// Empty lines are ignored; a bare \n ends a line too.
	w.send("\r\n\n   \r\nPING\n")
	if got := w.reply(); got != "+PONG\r\n" {
		t.Fatalf("PING after empty lines = %q", got)
	}
	w.send(`ECHO "a\x41 b\n"` + "\r\n")
	if got := w.reply(); got != bulk("aA b\n") {
		t.Fatalf("quoted ECHO = %q", got)
	}
	// A '$' line is an inline command (not redcon's Tile38 protocol), as in Redis.
	w.send("$5 ping\r\n")
	if got := w.reply(); got != "-ERR unknown command '$5', with args beginning with: 'ping' \r\n" {
		t.Fatalf("$5 ping = %q", got)
	}
	// "*0" and "*-1" headers are skipped.
	w.send("*0\r\n*-1\r\nPING\r\n")
	if got := w.reply(); got != "+PONG\r\n" {
		t.Fatalf("PING after *0 *-1 = %q", got)
	}
}

// Each request is answered with exactly the bytes Redis 7.0.15 sends, and
// then the connection is closed. Replies of commands before the error in
// the same read still come first.
// Redis takes the two bytes after a bulk argument without checking that
// they are CRLF (redis-server 7.0.15 answers "*1\r\n$4\r\nPINGxx" with
// +PONG and keeps the connection).
func TestBulkTerminatorNotChecked(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	w.send("*1\r\n$4\r\nPINGxx*2\r\n$4\r\nECHO\r\n$2\r\nhi--")
	if got := w.reply(); got != "+PONG\r\n" {
		t.Fatalf("PING with a bad terminator = %q", got)
	}
	if got := w.reply(); got != bulk("hi") {
		t.Fatalf("ECHO with bad terminators = %q", got)
	}
	if got := w.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING afterwards = %q", got)
	}
}

func TestProtocolErrorsCloseTheConnection(t *testing.T) {
	for _, tt := range []struct{ name, req, want string }{
		{"huge bulk length", "*1\r\n$999999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"negative bulk length", "*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"bad bulk length", "*1\r\n$abc\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"missing dollar", "*1\r\nx3\r\n", "-ERR Protocol error: expected '$', got 'x'\r\n"},
		{"bad count", "*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"count over INT_MAX", "*2147483648\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"too big inline", strings.Repeat("x", 70000), "-ERR Protocol error: too big inline request\r\n"},
		{"too big count line", "*" + strings.Repeat("1", 70000), "-ERR Protocol error: too big mbulk count string\r\n"},
		{"too big bulk line", "*1\r\n$" + strings.Repeat("1", 70000), "-ERR Protocol error: too big bulk count string\r\n"},
		{"unbalanced quotes", "PING\r\nPING \"a\r\nPING\r\n", "+PONG\r\n-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"quote not followed by space", "ECHO \"a\"b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"after a good command", "*1\r\n$4\r\nPING\r\n*1\r\n$999999999999\r\n", "+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startWire(t, Config{}, &fakeKS{})
			w := dialWire(t, s)
			// The server may close before it has read everything, so a
			// failed write is not the test's business; the reply is.
			w.nc.Write([]byte(tt.req))
			got := make([]byte, len(tt.want))
			if _, err := readFull(w, got); err != nil {
				t.Fatalf("reading %q: %v (got %q)", tt.want, err, got)
			}
			if string(got) != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			w.expectClosed()
		})
	}
}

func readFull(w *wire, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := w.r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// A request larger than the read buffer, arriving in many pieces.
func TestLargeArgumentInPieces(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	val := strings.Repeat("0123456789", 300_000) // 3 MB
	req := multibulk("ECHO", val)
	for len(req) > 0 {
		n := min(len(req), 65536)
		w.send(req[:n])
		req = req[n:]
	}
	if got := w.reply(); got != bulk(val) {
		t.Fatalf("ECHO of %d bytes came back as %d bytes", len(val), len(got))
	}
	if got := w.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after = %q", got)
	}
}

// Invariant 1: no reply leaves before the writes its batch wrote or read
// are durable, and the batch waits for the highest LSN it saw.
func TestRepliesWaitForDurability(t *testing.T) {
	f := &fakeKS{waits: make(chan uint64, 16), gate: make(chan struct{})}
	s := startWire(t, Config{}, f)
	w := dialWire(t, s)

	w.send(multibulk("wrt") + multibulk("wrt") + multibulk("rd") + multibulk("PING"))
	if lsn := nextWait(t, f); lsn != 2 {
		t.Fatalf("WaitDurable(%d), want WaitDurable(2): the highest LSN of the batch", lsn)
	}
	// WaitDurable has not returned: nothing may have been written.
	w.nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if b, err := w.r.Peek(1); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %q (err %v) before the batch was durable", b, err)
	}
	w.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	close(f.gate)
	for _, want := range []string{":1\r\n", ":2\r\n", "+READ\r\n", "+PONG\r\n"} {
		if got := w.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}

	// A read alone waits for the writes it may have seen.
	if got := w.do("rd"); got != "+READ\r\n" {
		t.Fatalf("rd = %q", got)
	}
	if lsn := nextWait(t, f); lsn != 2 {
		t.Fatalf("read-only batch waited for %d, want 2", lsn)
	}

	// A batch that does not touch the keyspace does not wait.
	if got := w.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	select {
	case lsn := <-f.waits:
		t.Fatalf("PING waited for LSN %d", lsn)
	default:
	}
}

// nextWait returns the next LSN the server waited for. The timeout only
// turns a server that never waits into a failure instead of a hang.
func nextWait(t *testing.T, f *fakeKS) uint64 {
	t.Helper()
	select {
	case lsn := <-f.waits:
		return lsn
	case <-time.After(10 * time.Second):
		t.Fatal("the server never called WaitDurable")
		return 0
	}
}

func TestWaitDurableErrorWithholdsReplies(t *testing.T) {
	f := &fakeKS{waitErr: errors.New("the disk is gone")}
	s := startWire(t, Config{}, f)
	w := dialWire(t, s)
	w.send(multibulk("PING") + multibulk("wrt"))
	w.expectClosed()
}

func TestUnauthenticatedLimits(t *testing.T) {
	s := startWire(t, Config{Requirepass: "pw"}, &fakeKS{})
	w := dialWire(t, s)
	w.send("*11\r\n")
	if got := w.reply(); got != "-ERR Protocol error: unauthenticated multibulk length\r\n" {
		t.Fatalf("got %q", got)
	}
	w.expectClosed()

	w = dialWire(t, s)
	w.send("*1\r\n$16385\r\n")
	if got := w.reply(); got != "-ERR Protocol error: unauthenticated bulk length\r\n" {
		t.Fatalf("got %q", got)
	}
	w.expectClosed()

	w = dialWire(t, s)
	if got := w.do("AUTH", "pw"); got != "+OK\r\n" {
		t.Fatalf("AUTH = %q", got)
	}
	args := make([]string, 12)
	args[0] = "ECHO"
	for i := 1; i < len(args); i++ {
		args[i] = "x"
	}
	if got := w.do(args...); got != "-ERR wrong number of arguments for 'echo' command\r\n" {
		t.Fatalf("12 arguments after AUTH: %q", got)
	}
	if got := w.do("ECHO", strings.Repeat("y", 20000)); got != bulk(strings.Repeat("y", 20000)) {
		t.Fatalf("large ECHO after AUTH failed")
	}
}

func TestProtectedModeRefuses(t *testing.T) {
	remote := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5000}
	for _, tt := range []struct {
		protected bool
		pass      bool
		peer      net.Addr
		want      bool
	}{
		{true, false, remote, true},
		{true, false, &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, false},
		{true, false, &net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, false},
		{true, true, remote, false},
		{false, false, remote, false},
	} {
		if got := protectedModeRefuses(tt.protected, tt.pass, tt.peer); got != tt.want {
			t.Errorf("protectedModeRefuses(%v, %v, %v) = %v", tt.protected, tt.pass, tt.peer, got)
		}
	}
	if !strings.HasPrefix(deniedReply, "-DENIED Redis is running in protected mode") || !strings.HasSuffix(deniedReply, "\r\n") {
		t.Fatalf("deniedReply is not a RESP error line")
	}
}

func TestMaxClients(t *testing.T) {
	s := startWire(t, Config{MaxClients: 1}, &fakeKS{})
	first := dialWire(t, s)
	if got := first.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("first PING = %q", got)
	}
	second := dialWire(t, s)
	if got := second.reply(); got != "-ERR max number of clients reached\r\n" {
		t.Fatalf("second connection got %q", got)
	}
	second.expectClosed()
}

func TestQuitClosesAfterReply(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	w.send("QUIT\r\nPING\r\n")
	if got := w.reply(); got != "+OK\r\n" {
		t.Fatalf("QUIT = %q", got)
	}
	w.expectClosed()
}

func TestCloseEndsConnectionsAndClosesKeyspace(t *testing.T) {
	f := &fakeKS{}
	s := startWire(t, Config{}, f)
	w := dialWire(t, s)
	if got := w.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	w.expectClosed()
	if got := f.events(); !slices.Equal(got, []string{"close"}) {
		t.Fatalf("keyspace events %q, want one close", got)
	}
	if _, err := net.Dial("tcp", s.addr); err == nil {
		t.Fatalf("still accepting after Close")
	}
}

func TestShutdownClosesEverything(t *testing.T) {
	f := &fakeKS{}
	s := startWire(t, Config{}, f)
	other := dialWire(t, s)
	if got := other.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	w := dialWire(t, s)
	if got := w.do("SHUTDOWN", "foo"); got != "-ERR syntax error\r\n" {
		t.Fatalf("SHUTDOWN foo = %q", got)
	}
	if got := w.do("SHUTDOWN", "SAVE", "NOSAVE"); got != "-ERR syntax error\r\n" {
		t.Fatalf("SHUTDOWN SAVE NOSAVE = %q", got)
	}
	if got := w.do("SHUTDOWN", "ABORT"); got != "-ERR No shutdown in progress.\r\n" {
		t.Fatalf("SHUTDOWN ABORT = %q", got)
	}
	w.send(multibulk("SHUTDOWN", "NOSAVE") + multibulk("PING"))
	w.expectClosed() // no reply on success, as in Redis
	<-s.Done()
	other.expectClosed()
	if got := f.events(); !slices.Equal(got, []string{"close"}) {
		t.Fatalf("keyspace events %q, want one close", got)
	}
}

func TestIdleTimeout(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	if got := w.do("CONFIG", "SET", "timeout", "1"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET timeout = %q", got)
	}
	// The connection is idle from here on: the server closes it after 1 s.
	start := time.Now()
	w.expectClosed()
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("closed after %v, before the 1 s timeout", d)
	}
}

// A client still taking a large reply is not idle, however long it takes
// (Redis counts writes as interaction); once it has it all and stays
// silent, the timeout closes it.
func TestIdleTimeoutSpareSlowReader(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	w := dialListKS(t, s)
	const size = 12 << 20
	if got := w.do("SET", "big", strings.Repeat("v", size)); got != "+OK\r\n" {
		t.Fatalf("SET = %q", got)
	}
	if got := w.do("CONFIG", "SET", "timeout", "1"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET timeout = %q", got)
	}
	r := dialListKS(t, s)
	r.nc.(*net.TCPConn).SetReadBuffer(64 << 10)
	r.send(multibulk("GET", "big"))
	// Take the reply at about 4 MB/s: three seconds, over the 1 s timeout.
	start := time.Now()
	buf := make([]byte, 64<<10)
	want := len(fmt.Sprintf("$%d\r\n", size)) + size + 2
	got := 0
	for got < want {
		n, err := r.nc.Read(buf)
		got += n
		if err != nil {
			t.Fatalf("connection closed after %d of %d bytes (%v): %v", got, want, time.Since(start), err)
		}
		time.Sleep(15 * time.Millisecond)
	}
	r.expectClosed() // and then it is idle
}

// discardConn is a net.Conn whose writes vanish, for driving a conn
// without a socket.
type discardConn struct{ net.Conn }

func (discardConn) Write(b []byte) (int, error)      { return len(b), nil }
func (discardConn) Close() error                     { return nil }
func (discardConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (discardConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2} }
func (discardConn) SetReadDeadline(time.Time) error  { return nil }
func (discardConn) SetWriteDeadline(time.Time) error { return nil }

// The steady-state batch path allocates nothing per command.
func TestBatchDoesNotAllocate(t *testing.T) {
	f := &fakeKS{}
	table := newCommandTable(testFamilies)
	for name, cmd := range buildTable(testCmds(f)) {
		table[name] = cmd
	}
	s := newServer(Config{}, f.env(), nil, table)
	defer s.Close()
	c := newConn(s, discardConn{}, 1)
	batch := []byte(strings.Repeat(multibulk("rd")+multibulk("PING")+"PING\r\n"+multibulk("ECHO", "hello"), 16))
	run := func() {
		c.rbuf = append(c.rbuf[:0], batch...)
		if !c.processInput() {
			t.Fatal("connection closed")
		}
	}
	run() // warm the buffers up
	if n := testing.AllocsPerRun(100, run); n > 0 {
		t.Fatalf("%v allocations per batch of %d commands", n, 64)
	}
}

func BenchmarkBatch(b *testing.B) {
	f := &fakeKS{}
	table := newCommandTable(testFamilies)
	for name, cmd := range buildTable(testCmds(f)) {
		table[name] = cmd
	}
	s := newServer(Config{}, f.env(), nil, table)
	defer s.Close()
	c := newConn(s, discardConn{}, 1)
	batch := []byte(strings.Repeat(multibulk("rd")+multibulk("wrt", "k", "v"), 8))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.rbuf = append(c.rbuf[:0], batch...)
		c.processInput()
	}
}

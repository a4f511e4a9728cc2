package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Helpers for protocol tests: a server over a fake keyspace environment
// (fakeKS), and a raw client that sends exact bytes and reads exact replies.

// fakeKS stands in for the keyspace in the commit environment. Its lock is
// a real mutex; "wrt" commands advance its LSN; WaitDurable can be gated so
// a test can observe what the server does before a batch is durable.
type fakeKS struct {
	mu      sync.Mutex
	lsnMu   sync.Mutex
	lsn     uint64
	durable uint64 // the highest LSN a WaitDurable returned for (under lsnMu)
	locked  bool
	waits   chan uint64   // when not nil, every WaitDurable lsn is sent here
	gate    chan struct{} // when not nil, WaitDurable blocks until it is closed
	tokens  chan struct{} // when not nil, each WaitDurable that syncs takes one before it returns
	waitErr error
	endErr  error
	log     []string // "begin", "end", "watch k", "unwatch", "close"
}

func (f *fakeKS) env() commitEnv {
	return commitEnv{
		lock:   func() { f.mu.Lock(); f.locked = true },
		unlock: func() { f.locked = false; f.mu.Unlock() },
		lastLSN: func() uint64 {
			f.lsnMu.Lock()
			defer f.lsnMu.Unlock()
			return f.lsn
		},
		waitDurable: func(lsn uint64) error {
			if f.tokens != nil {
				f.lsnMu.Lock()
				done := lsn <= f.durable
				f.lsnMu.Unlock()
				if done {
					return nil // as the keyspace's: no sync, nothing to wait for
				}
			}
			if f.waits != nil {
				f.waits <- lsn
			}
			if f.gate != nil {
				<-f.gate
			}
			if f.tokens != nil {
				<-f.tokens
			}
			if f.waitErr != nil {
				return f.waitErr
			}
			f.lsnMu.Lock()
			f.durable = max(f.durable, lsn)
			f.lsnMu.Unlock()
			return nil
		},
		durableLSN: func() uint64 {
			f.lsnMu.Lock()
			defer f.lsnMu.Unlock()
			return f.durable
		},
		beginTxn: func() { f.record("begin") },
		endTxn:   func() error { f.record("end"); return f.endErr },
		watch:    func(_ *keyspace.Watcher, db int, key []byte) { f.record(fmt.Sprintf("watch %d %s", db, key)) },
		unwatch:  func(*keyspace.Watcher) { f.record("unwatch") },
		stats: func() keyspace.Stats {
			var st keyspace.Stats
			st.Keys[0], st.Expires[0] = 3, 1
			st.Mode = "pmem"
			return st
		},
		close: func() error { f.record("close"); return nil },
	}
}

// record is called with the fake lock held or from the test goroutine
// after the server is done; lsnMu keeps the race detector content.
func (f *fakeKS) record(s string) {
	f.lsnMu.Lock()
	f.log = append(f.log, s)
	f.lsnMu.Unlock()
}

func (f *fakeKS) events() []string {
	f.lsnMu.Lock()
	defer f.lsnMu.Unlock()
	return append([]string(nil), f.log...)
}

// testCmds are commands for exercising the dispatcher without a keyspace.
func testCmds(f *fakeKS) []Command {
	return []Command{
		// wrt stands for a write: it appends a record (advances the LSN).
		{Name: "wrt", Arity: -1, Flags: FlagWrite, Group: "generic", Since: "0.0.0", Summary: "test write",
			Run: func(c *Client, _ [][]byte) {
				if !f.locked {
					c.WriteError("ERR wrt ran without the keyspace lock")
					return
				}
				f.lsnMu.Lock()
				f.lsn++
				n := f.lsn
				f.lsnMu.Unlock()
				c.WriteInt(int64(n))
			}},
		// kwrt key: a write of one key (advances the LSN).
		{Name: "kwrt", Arity: 2, Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "0.0.0", Summary: "test keyed write",
			Run: func(c *Client, _ [][]byte) {
				f.lsnMu.Lock()
				f.lsn++
				n := f.lsn
				f.lsnMu.Unlock()
				c.WriteInt(int64(n))
			}},
		// krd key: a read of one key.
		{Name: "krd", Arity: 2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "0.0.0", Summary: "test keyed read",
			Run: func(c *Client, args [][]byte) { c.WriteBulk(args[1]) }},
		// rd stands for a read.
		{Name: "rd", Arity: 1, Flags: FlagReadonly, Group: "generic", Since: "0.0.0", Summary: "test read",
			Run: func(c *Client, _ [][]byte) {
				if !f.locked {
					c.WriteError("ERR rd ran without the keyspace lock")
					return
				}
				c.WriteString("READ")
			}},
		// bigrd n: a read whose reply is a bulk of n bytes.
		{Name: "bigrd", Arity: 2, Flags: FlagReadonly, Group: "generic", Since: "0.0.0", Summary: "test large read",
			Run: func(c *Client, args [][]byte) {
				n, _ := strconv.Atoi(string(args[1]))
				c.WriteBulk(bytes.Repeat([]byte("b"), n))
			}},
		{Name: "boom", Arity: 1, Group: "generic", Since: "0.0.0", Summary: "test failure",
			Run: func(c *Client, _ [][]byte) { c.WriteError("ERR boom") }},
	}
}

// wireServer is a server under test and the address it listens on.
type wireServer struct {
	*Server
	addr string
}

// startWire starts a server on a loopback port with the real connection
// and server commands plus testCmds, over f. It is closed at cleanup.
// testIO is the I/O model the wire tests serve with: PERSIMMON_TEST_IO
// (loop or goroutine; make test runs the package once with each).
func testIO() string { return os.Getenv("PERSIMMON_TEST_IO") }

func startWire(t *testing.T, cfg Config, f *fakeKS) *wireServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startWireOn(t, cfg, f, ln)
}

// startWireOn is startWire serving ln (a unix socket, say).
func startWireOn(t *testing.T, cfg Config, f *fakeKS, ln net.Listener) *wireServer {
	t.Helper()
	table := newCommandTable(testFamilies)
	for name, cmd := range buildTable(testCmds(f)) {
		table[name] = cmd
	}
	if cfg.IO == "" {
		cfg.IO = testIO()
	}
	s := newServer(cfg, f.env(), t.Logf, table)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &wireServer{Server: s, addr: ln.Addr().String()}
}

// wire is a raw client connection.
type wire struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialWire(t *testing.T, s *wireServer) *wire {
	t.Helper()
	nc, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	// A generous deadline: a broken server fails the test instead of
	// hanging it. Nothing waits on it for synchronisation.
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &wire{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func (w *wire) send(s string) {
	w.t.Helper()
	if _, err := w.nc.Write([]byte(s)); err != nil {
		w.t.Fatal(err)
	}
}

// do sends one command as a multibulk request and returns its raw reply.
func (w *wire) do(args ...string) string {
	w.t.Helper()
	w.send(multibulk(args...))
	return w.reply()
}

// reply reads one complete raw reply.
func (w *wire) reply() string {
	w.t.Helper()
	s, err := readRaw(w.r)
	if err != nil {
		w.t.Fatalf("reading reply: %v", err)
	}
	return s
}

// expectClosed reads until EOF and fails if any byte arrives.
func (w *wire) expectClosed() {
	w.t.Helper()
	b, err := io.ReadAll(w.r)
	if len(b) > 0 {
		w.t.Fatalf("got %q, want the connection closed", b)
	}
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		w.t.Fatalf("want EOF, got %v", err)
	}
}

func multibulk(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// readRaw reads one RESP2 or RESP3 reply and returns its exact bytes.
func readRaw(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return line, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return line, fmt.Errorf("malformed line %q", line)
	}
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return line, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil {
			return line, err
		}
		if n < 0 {
			return line, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return line, err
		}
		return line + string(buf), nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil {
			return line, err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		if line[0] == '|' {
			n++ // the reply the attribute describes
		}
		out := line
		for i := 0; i < n; i++ {
			s, err := readRaw(r)
			out += s
			if err != nil {
				return out, err
			}
		}
		return out, nil
	}
	return line, fmt.Errorf("unknown reply type %q", line)
}

// bulk returns the RESP bulk string for s.
func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

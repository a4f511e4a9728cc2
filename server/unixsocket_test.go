package server

import (
	"bufio"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startUnix starts a server that listens (Listen, as the binary does) on
// a loopback port and on a unix socket at path with mode perm.
func startUnix(t *testing.T, io, path, perm string, noTCP bool) *Server {
	t.Helper()
	cfg := Config{Bind: "127.0.0.1", IO: io, NoTCP: noTCP, Params: []ConfigLine{{"unixsocket", path}, {"unixsocketperm", perm}}}
	s := newServer(cfg, (&fakeKS{}).env(), t.Logf, newCommandTable(testFamilies))
	if err := s.Listen(); err != nil {
		s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func dialUnix(t *testing.T, path string) *wire {
	t.Helper()
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second)) // a broken server fails instead of hanging
	return &wire{t: t, nc: nc, r: bufio.NewReader(nc)}
}

// TestUnixSocketListener: with unixsocket set the server accepts on the
// socket in both I/O modes, with the socket's mode set by unixsocketperm;
// the client shows as Redis shows a unix-socket client; closing removes
// the socket file.
func TestUnixSocketListener(t *testing.T) {
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.sock")
			s := startUnix(t, io, path, "700", false)
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&fs.ModeSocket == 0 || fi.Mode().Perm() != 0o700 {
				t.Fatalf("socket file mode %v, want a socket with 0700", fi.Mode())
			}
			w := dialUnix(t, path)
			if got := w.do("PING"); got != "+PONG\r\n" {
				t.Fatalf("PING over the unix socket = %q", got)
			}
			info := w.do("CLIENT", "INFO")
			if !strings.Contains(info, "addr="+path+":0 laddr="+path+":0 ") || !strings.Contains(info, " flags=U ") {
				t.Fatalf("CLIENT INFO over the unix socket = %q", info)
			}
			// The TCP listener serves beside it.
			tc, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			tc.Close()
			if got := w.do("CONFIG", "GET", "unixsocket"); got != "*2\r\n"+bulk("unixsocket")+bulk(path) {
				t.Fatalf("CONFIG GET unixsocket = %q", got)
			}
			s.Close()
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Fatalf("after Close the socket file is still there (%v)", err)
			}
		})
	}
}

// A socket file left behind by a killed server is replaced; a regular file
// at the path is not removed, and Listen fails.
func TestUnixSocketStaleFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stale.sock")
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false) // as a kill -9 leaves it
	old.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatal(err)
	}
	startUnix(t, testIO(), path, "0", true)
	if got := dialUnix(t, path).do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}

	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Bind: "127.0.0.1", NoTCP: true, IO: testIO(), Params: []ConfigLine{{"unixsocket", plain}}}
	s := newServer(cfg, (&fakeKS{}).env(), t.Logf, newCommandTable(testFamilies))
	defer s.Close()
	if err := s.Listen(); err == nil {
		t.Fatal("Listen over a regular file succeeded")
	}
	if b, err := os.ReadFile(plain); err != nil || string(b) != "keep" {
		t.Fatalf("the regular file was touched: %q %v", b, err)
	}
	// No TCP port and no socket: nowhere to listen.
	s2 := newServer(Config{NoTCP: true, IO: testIO()}, (&fakeKS{}).env(), t.Logf, newCommandTable(testFamilies))
	defer s2.Close()
	if err := s2.Listen(); err != errNoListener {
		t.Fatalf("Listen with nothing to listen on = %v", err)
	}
}

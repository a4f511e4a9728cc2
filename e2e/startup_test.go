package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Start-up behaviour a newcomer meets first (issue 16): the pidfile,
// --port 0 and --bind.

// TestPidfile: the server writes its PID to DIR/persimmon.pid by default
// (or --pidfile), removes it at a clean exit, and kill -9 by that PID
// leaves the data for the next start.
func TestPidfile(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	pidPath := filepath.Join(dir, "persimmon.pid")
	readPid := func() int {
		t.Helper()
		b, err := os.ReadFile(pidPath)
		if err != nil {
			t.Fatalf("pidfile: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("pidfile holds %q", b)
		}
		return pid
	}
	if pid := readPid(); pid != s.cmd.Process.Pid {
		t.Fatalf("pidfile holds %d, the server is %d", pid, s.cmd.Process.Pid)
	}
	if err := s.client().Set(ctx, "k", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// kill -9 $(cat DIR/persimmon.pid), as the README shows.
	if err := syscall.Kill(readPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
		s.cmd.ProcessState = &os.ProcessState{}
	case <-time.After(10 * time.Second):
		t.Fatal("server still running 10 s after SIGKILL")
	}
	s2 := startServer(t, dir)
	if pid := readPid(); pid != s2.cmd.Process.Pid {
		t.Fatalf("after a restart the pidfile holds %d, the server is %d", pid, s2.cmd.Process.Pid)
	}
	if v, err := s2.client().Get(ctx, "k").Result(); err != nil || v != "kept" {
		t.Fatalf("GET k after kill -9 = %q, %v", v, err)
	}
	if err := s2.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pidPath); !os.IsNotExist(err) {
		t.Fatalf("pidfile after a clean exit: %v, want it removed", err)
	}

	// --pidfile elsewhere; none writes nothing.
	other := filepath.Join(t.TempDir(), "p.pid")
	s3 := startServer(t, dir, "--pidfile", other)
	if b, _ := os.ReadFile(other); strings.TrimSpace(string(b)) != strconv.Itoa(s3.cmd.Process.Pid) {
		t.Fatalf("--pidfile %s holds %q, want %d", other, b, s3.cmd.Process.Pid)
	}
	if _, err := os.Stat(pidPath); !os.IsNotExist(err) {
		t.Fatalf("with --pidfile the default pidfile exists too: %v", err)
	}
	s3.stop()
	s4 := startServer(t, dir, "--pidfile", "none")
	if _, err := os.Stat(pidPath); !os.IsNotExist(err) {
		t.Fatalf("--pidfile none wrote %s: %v", pidPath, err)
	}
	s4.stop()
}

// TestSecondServerKeepsPidfile: a server refused on a locked data
// directory leaves the running server's pidfile alone.
func TestSecondServerKeepsPidfile(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	out, err := exec.Command(serverBin, "--port", fmt.Sprint(freePort(t)), "--dir", dir).CombinedOutput()
	if err == nil {
		t.Fatalf("a second server on %s started:\n%s", dir, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "persimmon.pid"))
	if strings.TrimSpace(string(b)) != strconv.Itoa(s.cmd.Process.Pid) {
		t.Fatalf("pidfile holds %q after a refused second server, want %d", b, s.cmd.Process.Pid)
	}
}

// TestPortZeroRefused: Redis 7.0 takes port 0 as "no TCP listener" and,
// with no unix socket either, exits 1 ("Configured to not listen
// anywhere, exiting."); Persimmon has no unix socket, so it does the same
// instead of binding a random port.
func TestPortZeroRefused(t *testing.T) {
	dir := t.TempDir()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a server that listens would never exit
	defer cancel()
	cmd := exec.CommandContext(cctx, serverBin, "--port", "0", "--dir", dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("--port 0: err %v, want exit status 1\n%s", err, out)
	}
	if !strings.Contains(string(out), "not to listen anywhere") && !strings.Contains(string(out), "not listen anywhere") {
		t.Fatalf("--port 0 output does not say why:\n%s", out)
	}
	if strings.Contains(string(out), "Ready to accept") {
		t.Fatalf("--port 0 listened:\n%s", out)
	}
}

// TestBindListensExactly: --bind 0.0.0.0 listens on IPv4 only, as Redis
// does (Go's "tcp" would also take IPv6); --bind ::1 on IPv6 only.
func TestBindListensExactly(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatalf("this test needs IPv6 loopback: %v", err)
	}
	ln.Close()
	dial := func(addr string) bool {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			nc.Close()
		}
		return err == nil
	}
	s := startServer(t, t.TempDir(), "--bind", "0.0.0.0")
	port := s.Addr[strings.LastIndex(s.Addr, ":")+1:]
	if !dial("127.0.0.1:" + port) {
		t.Fatal("--bind 0.0.0.0 does not accept on 127.0.0.1")
	}
	if dial("[::1]:" + port) {
		t.Fatal("--bind 0.0.0.0 accepts on [::1] too")
	}
	s.stop()

	port6 := freePort(t)
	s6 := startServer(t, t.TempDir(), "--bind", "::1", "--port", strconv.Itoa(port6))
	if !dial(fmt.Sprintf("[::1]:%d", port6)) {
		t.Fatal("--bind ::1 does not accept on [::1]")
	}
	if dial(fmt.Sprintf("127.0.0.1:%d", port6)) {
		t.Fatal("--bind ::1 accepts on 127.0.0.1")
	}
	s6.stop()
}

// Package e2e tests the real persimmon-server binary over TCP with real
// clients: integration, differential (against redis-server) and kill -9
// crash tests.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var serverBin string

// testKeyIndex is PERSIMMON_TEST_KEY_INDEX as the tests started (TestMain
// removes it from the environment).
var testKeyIndex string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "persimmon-e2e-bin")
	if err != nil {
		panic(err)
	}
	serverBin = filepath.Join(dir, "persimmon-server")
	if os.Getenv("PERSIMMON_E2E_RACE") != "" {
		// The server under the race detector, stopping at the first race
		// (its tests then fail): PERSIMMON_E2E_RACE=1 go test ./e2e -run X
		serverBuildFlags = append(serverBuildFlags, "-race")
		os.Setenv("GORACE", "halt_on_error=1")
	}
	if out, err := buildServer(serverBin, ""); err != nil {
		fmt.Fprintf(os.Stderr, "building persimmon-server: %v\n%s", err, out)
		os.Exit(1)
	}
	// The variable becomes --key-index flags (launchServer) and is not
	// inherited: recovery.Open reads it in any process, and a server
	// inheriting it would ignore a test's own --key-index (the damage
	// tests that edit the index file failed under =0).
	testKeyIndex = os.Getenv("PERSIMMON_TEST_KEY_INDEX")
	os.Unsetenv("PERSIMMON_TEST_KEY_INDEX")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serverBuildFlags are the go build flags of every server binary the
// tests build (-race under PERSIMMON_E2E_RACE).
var serverBuildFlags []string

// buildServer builds persimmon-server at out, with the build tags tags
// (comma-separated) if not empty.
func buildServer(out, tags string) ([]byte, error) {
	args := append([]string{"build", "-o", out}, serverBuildFlags...)
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	return exec.Command("go", append(args, "../cmd/persimmon-server")...).CombinedOutput()
}

var taggedBins sync.Map // build tags -> *taggedBin

type taggedBin struct {
	once sync.Once
	path string
	err  error
}

// serverBinTagged returns a persimmon-server binary built with the build
// tags tags (beside serverBin), building it on the first call.
func serverBinTagged(t testing.TB, tags string) string {
	t.Helper()
	v, _ := taggedBins.LoadOrStore(tags, &taggedBin{})
	b := v.(*taggedBin)
	b.once.Do(func() {
		b.path = filepath.Join(filepath.Dir(serverBin), "persimmon-server-"+strings.ReplaceAll(tags, ",", "-"))
		if out, err := buildServer(b.path, tags); err != nil {
			b.err = fmt.Errorf("building persimmon-server -tags %s: %v\n%s", tags, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// freePort asks the kernel for an unused loopback port.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// server is one running persimmon-server process.
type server struct {
	t    testing.TB
	cmd  *exec.Cmd
	Addr string
	Dir  string
	log  *syncBuffer
	done chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer starts the binary on dir with extra flags and waits until it
// logs that it accepts connections (reading its output, not sleeping).
func startServer(t testing.TB, dir string, args ...string) *server {
	t.Helper()
	s, err := launchServer(t, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launchServer is startServer returning an error (with the server's
// output) when the server exits or hangs before it is ready.
func launchServer(t testing.TB, dir string, args ...string) (*server, error) {
	t.Helper()
	return launchServerBin(t, serverBin, dir, args...)
}

// launchServerBin is launchServer with the server binary bin (a tagged
// build: serverBinTagged).
func launchServerBin(t testing.TB, bin, dir string, args ...string) (*server, error) {
	t.Helper()
	port := freePort(t)
	all := append([]string{"--port", fmt.Sprint(port), "--dir", dir}, args...)
	if v := testKeyIndex; (v == "1" || v == "0") && !slices.Contains(args, "--key-index") {
		all = append(all, "--key-index", map[string]string{"1": "yes", "0": "no"}[v]) // every e2e test with (without) the key index
	}
	cmd := exec.Command(bin, all...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s := &server{t: t, cmd: cmd, Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, log: &syncBuffer{}, done: make(chan error, 1)}
	ready := make(chan struct{})
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s.log, line)
			if !signalled && strings.Contains(line, "Ready to accept connections") {
				signalled = true
				close(ready)
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		<-logDone // the last lines are in s.log before anyone hears of the exit
		s.done <- err
	}()
	select {
	case <-ready:
	case err := <-s.done:
		s.cmd.ProcessState = &os.ProcessState{}
		return nil, fmt.Errorf("server exited before ready: %v\n%s", err, s.log.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("server not ready after 60s\n%s", s.log.String())
	}
	t.Cleanup(func() { s.kill() })
	return s, nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
	s.cmd.ProcessState = &os.ProcessState{}
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.cmd.ProcessState = &os.ProcessState{}
		if err != nil {
			// a non-zero exit after SIGTERM (a panic while shutting
			// down): the error carries the end of the server's log
			l := s.log.String()
			return fmt.Errorf("%w; server log ends:\n%s", err, l[max(0, len(l)-4000):])
		}
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("server did not exit 30s after SIGTERM")
	}
}

func (s *server) client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true})
	s.t.Cleanup(func() { c.Close() })
	return c
}

var ctx = context.Background()

// crashSeed is a crash test's random seed: PERSIMMON_CRASH_SEED if set (to
// replay a failure), else a fresh one, logged either way.
func crashSeed(t *testing.T) uint64 {
	seed := rand.Uint64()
	if s := os.Getenv("PERSIMMON_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set PERSIMMON_CRASH_SEED to replay)", seed)
	return seed
}

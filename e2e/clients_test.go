package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The job-queue frameworks that pick their features from the server's
// version (Redis 7.0: streams, Lua with cmsgpack, XADD in MULTI) run
// unmodified against persimmon-server and against redis-server, and must
// end with the same results. .ci/run installs them: BullMQ and node-redis
// from npm (e2e/clients/bullmq, e2e/clients/node-redis, each with its
// package-lock.json) and python-rq from Debian
// (python3-rq). Set PERSIMMON_SKIP_CLIENTS=1 to skip them on a machine
// without Node.js or python3-rq; without it a missing framework fails.

func requireClient(t *testing.T, what, hint string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("PERSIMMON_SKIP_CLIENTS") != "" {
		t.Skipf("%s is not installed (PERSIMMON_SKIP_CLIENTS set)", what)
	}
	t.Fatalf("%s is not installed: %s (.ci/run does it; PERSIMMON_SKIP_CLIENTS=1 skips)", what, hint)
}

// runJSON runs a client script and decodes the JSON object on the last
// line of its standard output.
func runJSON(t *testing.T, dir string, timeout time.Duration, name string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runBounded(t, cmd, timeout, func() string {
		return "stdout:\n" + stdout.String() + "\nstderr (tail):\n" + tail(stderr.String(), 3000)
	})
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var out map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		t.Fatalf("%s: last line is not JSON (%v):\n%s", name, err, stdout.String())
	}
	return out
}

// runBounded runs cmd to its end within timeout (killing it past that);
// a failure to start, a non-zero exit or the timeout fails the test with
// what output() says the command printed.
func runBounded(t *testing.T, cmd *exec.Cmd, timeout time.Duration, output func() string) {
	t.Helper()
	what := strings.Join(cmd.Args, " ")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, output())
		}
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: still running after %v\n%s", what, timeout, output())
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func portOf(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// TestBullMQ: 1,000 BullMQ jobs (retries with backoff, permanent failures,
// delayed jobs) end with the same counts, attempts and return values on
// both servers; on persimmon-server the jobs are added, the server is
// killed with SIGKILL and restarted, and then a worker processes them.
func TestBullMQ(t *testing.T) {
	dir, _ := filepath.Abs("clients/bullmq")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "bullmq"))
	requireClient(t, "BullMQ (Node.js + npm ci in e2e/clients/bullmq)", "npm ci --prefix e2e/clients/bullmq", nodeErr == nil && modErr == nil)
	const n = "1000"

	want := runJSON(t, dir, 2*time.Minute, "node", "check.mjs", portOf(startRedis(t)), "q", "all", n)

	data := t.TempDir()
	s := startServer(t, data)
	added := runJSON(t, dir, 2*time.Minute, "node", "check.mjs", portOf(s.Addr), "q", "add", n)
	if fmt.Sprint(added["added"]) != n {
		t.Fatalf("add phase: %v", added)
	}
	s.kill()
	s = startServer(t, data)
	got := runJSON(t, dir, 2*time.Minute, "node", "check.mjs", portOf(s.Addr), "q", "work", n)
	delete(want, "added")
	delete(got, "added")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("BullMQ on persimmon-server (jobs added, kill -9, restart, processed):\n%v\nredis-server:\n%v", got, want)
	}
	t.Logf("BullMQ: %v", got)
}

// TestNodeRedis: node-redis 6 (npm redis, RESP3 by default) runs strings,
// hashes, sets, sorted sets, pub/sub, transactions and client-side caching
// (CLIENT TRACKING with its invalidation pushes) with the same results on
// both servers (e2e/clients/node-redis/check.mjs).
func TestNodeRedis(t *testing.T) {
	dir, _ := filepath.Abs("clients/node-redis")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "redis"))
	requireClient(t, "node-redis (Node.js + npm ci in e2e/clients/node-redis)", "npm ci --prefix e2e/clients/node-redis", nodeErr == nil && modErr == nil)
	want := runJSON(t, dir, time.Minute, "node", "check.mjs", portOf(startRedis(t)))
	s := startServer(t, t.TempDir())
	got := runJSON(t, dir, time.Minute, "node", "check.mjs", portOf(s.Addr))
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("node-redis on persimmon-server:\n%s\nredis-server:\n%s", g, w)
	}
	if got["proto"] != float64(3) {
		t.Fatalf("node-redis did not speak RESP3: proto %v", got["proto"])
	}
	t.Logf("node-redis: %v", got)
}

// TestPythonRQ: python-rq's worker runs 100 jobs, one failing job and one
// scheduled job with the same outcome on both servers.
func TestPythonRQ(t *testing.T) {
	dir, _ := filepath.Abs("clients/rq")
	py := "/usr/bin/python3" // Debian's, which python3-rq installs into
	hasRQ := exec.Command(py, "-c", "import rq").Run() == nil
	requireClient(t, "python-rq (Debian python3-rq)", "apt-get install python3-rq", hasRQ)

	want := runJSON(t, dir, 2*time.Minute, py, "check.py", portOf(startRedis(t)))
	s := startServer(t, t.TempDir())
	got := runJSON(t, dir, 2*time.Minute, py, "check.py", portOf(s.Addr))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("python-rq on persimmon-server:\n%v\nredis-server:\n%v", got, want)
	}
	t.Logf("python-rq: %v", got)
}

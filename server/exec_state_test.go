package server

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExecStateChecks: EXEC checks the server's state as it is when EXEC
// runs, not when the commands were queued, as Redis 7.0's processCommand
// does for it (NOREPLICAS for a block with a write, READONLY on a replica,
// MASTERDOWN on a replica whose link is down under
// replica-serve-stale-data no), and a command outside MULTI gets
// MASTERDOWN likewise. The replies are redis-server's, side by side.
func TestExecStateChecks(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	// a port nothing listens on: a replica of it never has its link up
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	rc, _ := startRedisMaster(t)
	_, paddr := startReplServer(t, IOGoroutine)
	steps := [][]string{
		// a write queued, then min-replicas-to-write set by another client
		{"FUNCTION", "LOAD", "REPLACE", "#!lua name=stalelib\nredis.register_function('fget', function(k) return redis.pcall('get', k[1]) end)\n" +
			"redis.register_function{function_name='fstale', callback=function(k) return redis.pcall('get', k[1]) end, flags={'no-writes', 'allow-stale'}}"},
		{"SET", "xx", "1"}, {"MULTI"}, {"INCR", "xx"},
		{"other", "CONFIG", "SET", "min-replicas-to-write", "2"}, {"EXEC"}, {"GET", "xx"},
		{"MULTI"}, {"GET", "xx"}, {"EXEC"}, // reads only: not refused
		{"MULTI"}, {"EVAL", "#!lua\nreturn 1", "0"}, {"EXEC"}, // a script with flags that may write
		{"MULTI"}, {"EVAL", "#!lua flags=no-writes\nreturn 1", "0"}, {"EXEC"},
		{"INCR", "xx"},
		{"other", "CONFIG", "SET", "min-replicas-to-write", "0"},
		// a write queued, then the server made a replica
		{"MULTI"}, {"SET", "a", "b"}, {"other", "REPLICAOF", "127.0.0.1", deadPort}, {"EXEC"}, {"GET", "a"},
		{"other", "REPLICAOF", "NO", "ONE"},
		// reads queued, then the server made a replica whose link is down
		{"CONFIG", "SET", "replica-serve-stale-data", "no"},
		{"MULTI"}, {"GET", "xx"}, {"other", "REPLICAOF", "127.0.0.1", deadPort}, {"EXEC"},
		{"GET", "xx"}, {"PING"}, {"MULTI"}, {"PING"}, {"DISCARD"}, {"CONFIG", "GET", "replica-serve-stale-data"},
		{"EVAL", "return redis.call('get', 'xx')", "0"}, {"EVAL", "return redis.pcall('get', 'xx')", "0"},
		{"EVAL", "return redis.call('info', 'nosuchsection')", "0"}, {"EVAL", "#!lua\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes,allow-stale\nreturn redis.pcall('get', 'xx')", "0"},
		{"MULTI"}, {"EVAL", "#!lua flags=no-writes\nreturn 1", "0"}, {"DISCARD"},
		{"FCALL", "fget", "1", "xx"}, {"FCALL", "fstale", "1", "xx"}, {"FCALL_RO", "fstale", "1", "xx"},
		{"MULTI"}, {"other", "REPLICAOF", "NO", "ONE"}, {"GET", "xx"}, {"EXEC"},
		{"CONFIG", "SET", "replica-serve-stale-data", "yes"},
		{"other", "REPLICAOF", "127.0.0.1", deadPort}, {"GET", "xx"}, {"other", "REPLICAOF", "NO", "ONE"},
	}
	replies := map[string][]string{}
	for name, addr := range map[string]string{"redis-server": rc.Options().Addr, "persimmon": paddr} {
		w, other := dialAddr(t, addr), dialAddr(t, addr)
		for _, s := range steps {
			if s[0] == "other" {
				if r := other.do(s[1:]...); r != "+OK\r\n" {
					t.Fatalf("%s: %s: %q", name, strings.Join(s[1:], " "), r)
				}
				continue
			}
			replies[name] = append(replies[name], w.do(s...))
		}
	}
	i := 0
	for _, s := range steps {
		if s[0] == "other" {
			continue
		}
		if got, want := replies["persimmon"][i], replies["redis-server"][i]; got != want {
			t.Errorf("%s: %q, want %q (redis-server)", strings.Join(s, " "), got, want)
		}
		i++
	}
}

// TestPingPeriodConfig: CONFIG SET repl-ping-replica-period changes the
// period of the PINGs a running master puts into its stream.
func TestPingPeriodConfig(t *testing.T) {
	_, addr := startReplServer(t, IOLoop)
	w := dialAddr(t, addr)
	w.expect("+OK\r\n", "CONFIG", "SET", "repl-ping-replica-period", "3600")
	tap := tapStream(t, addr)
	nextPing := func() {
		t.Helper()
		for {
			if tap.line() == "*1" && tap.line() == "$4" && tap.line() == "PING" {
				return
			}
		}
	}
	// The master's cron runs once a second; its first PING to a new
	// replica comes at once, the next one a period later.
	nextPing()
	w.expect("+OK\r\n", "CONFIG", "SET", "repl-ping-slave-period", "1")
	w.expect("*2\r\n$24\r\nrepl-ping-replica-period\r\n$1\r\n1\r\n", "CONFIG", "GET", "repl-ping-replica-period")
	start := time.Now()
	nextPing() // the tap's deadline is 20 s
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a PING %v after CONFIG SET repl-ping-replica-period 1", d)
	}
}

// TestReplicaofInExecFlushesStream: a master made a replica inside EXEC
// drops its replicas, but only once they have what it streamed before
// (the transaction's own writes are not propagated, as in Redis 7.0):
// unit/multi's 'MULTI / EXEC with REPLICAOF', which lost the write before
// the EXEC when the link was closed before its writer had sent it.
func TestReplicaofInExecFlushesStream(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	_, addr := startReplServer(t, IOGoroutine)
	w := dialAddr(t, addr)
	for i := range 5 {
		tap := tapStream(t, addr)
		key := "foo" + strconv.Itoa(i)
		w.send(multibulk("SET", key, "bar") + multibulk("MULTI") + multibulk("SET", "in", "x") +
			multibulk("REPLICAOF", "127.0.0.1", deadPort) + multibulk("EXEC"))
		for _, want := range []string{"+OK\r\n", "+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n+OK\r\n+OK\r\n"} {
			w.expectReply(want)
		}
		for _, want := range []string{"select 0", "set " + key + " bar"} {
			if got := tap.rawNext(); got != want {
				t.Fatalf("round %d: stream %q, want %q", i, got, want)
			}
		}
		w.expect("+OK\r\n", "REPLICAOF", "NO", "ONE")
	}
}

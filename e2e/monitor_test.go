package e2e

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// MONITOR side by side with redis-server: the same script against both,
// with the monitor's lines normalised (the time and the client's port
// differ).

// monitorScript runs on a second connection while the monitor records.
var monitorScript = []string{
	"SET foo bar", "GET foo", "SET sp \"a b\\\"c\\\\d\\n\\r\\t\\x01\\xff\"", "NOSUCHCOMMAND x", "GET", "INCR foo",
	"EVAL \"redis.call('set',KEYS[1],ARGV[1]); return redis.pcall('incr',KEYS[1])\" 1 k v",
	"MULTI", "SET foo bar", "LPUSH l a", "EXEC",
	"MULTI", "NOSUCH", "EXEC",
	"AUTH not-real", "AUTH not-real not-a-password", "AUTH a b c", "HELLO 2 AUTH not-real not-a-password", "HELLO 2 SETNAME x",
	"CONFIG GET maxmemory", "SELECT 3", "SET x y", "SELECT 0", "PUBLISH ch m", "PING",
}

var monitorTime = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) (lua|127\.0\.0\.1:\d+)\] `)

func TestMonitorDiffRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: nothing to compare with")
	}
	redisAddr := startRedis(t)
	want := monitorLines(t, redisAddr)
	for _, io := range []string{"goroutine", "loop"} {
		s := startServer(t, t.TempDir(), "--io", io)
		got := monitorLines(t, s.Addr)
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("%s: MONITOR lines differ\nredis-server:\n%s\npersimmon:\n%s", io, strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
}

// monitorLines runs monitorScript against addr and returns what a
// monitor received, with the time replaced by T and the port by P.
func monitorLines(t *testing.T, addr string) []string {
	t.Helper()
	mon, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.close()
	if r := mustOK(t, mon, "MONITOR"); r.String() != "+OK" {
		t.Fatalf("MONITOR answered %s", r)
	}
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, line := range monitorScript {
		args, err := splitArgs(line)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.doBytes(args); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	mustOK(t, c, "ECHO", "end-of-script")
	var out []string
	mon.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		r, err := readReply(mon.r)
		if err != nil {
			t.Fatalf("monitor after %d lines: %v\n%s", len(out), err, strings.Join(out, "\n"))
		}
		line := "+" + r.str
		if r.kind != '+' || !monitorTime.MatchString(line) {
			t.Fatalf("monitor line %s", r)
		}
		m := monitorTime.FindStringSubmatch(line)
		who := "client"
		if m[2] == "lua" {
			who = "lua"
		}
		norm := "[" + m[1] + " " + who + "] " + line[len(m[0]):]
		if strings.Contains(norm, `"end-of-script"`) {
			return out
		}
		out = append(out, norm)
	}
}

// TestMonitorModes: MONITOR is refused inside EXEC, a second MONITOR
// answers nothing, and RESET leaves monitor mode (the connection then
// receives no more lines).
func TestMonitorModes(t *testing.T) {
	s := startServer(t, t.TempDir())
	mon, err := dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.close()
	mustOK(t, mon, "MULTI")
	mustOK(t, mon, "MONITOR")
	if r := mustOK(t, mon, "EXEC"); r.String() != `*1[-ERR MONITOR isn't allowed for DENY BLOCKING client]` {
		t.Fatalf("MONITOR in EXEC: %s", r)
	}
	mustOK(t, mon, "MONITOR")
	// The second MONITOR has no reply: the next thing the monitor reads
	// is the other client's SET.
	if _, err := mon.nc.Write(encodeCommand(bytesArgs("MONITOR"))); err != nil {
		t.Fatal(err)
	}
	c, err := dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	mustOK(t, c, "SET", "a", "1")
	mon.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	r, err := readReply(mon.r)
	if err != nil || r.kind != '+' || !strings.HasSuffix(r.str, `"SET" "a" "1"`) {
		t.Fatalf("first line after the second MONITOR: %s %v", r, err)
	}
	if r := mustOK(t, mon, "RESET"); r.String() != "+RESET" { // RESET leaves monitor mode before it is shown
		t.Fatalf("RESET answered %s", r)
	}
	mustOK(t, c, "SET", "b", "2")
	if r := mustOK(t, mon, "PING"); r.String() != "+PONG" {
		t.Fatalf("after RESET the connection still receives monitor lines: %s", r)
	}
}

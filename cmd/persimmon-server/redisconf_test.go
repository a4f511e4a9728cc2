package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDebianRedisConf starts the server from Debian's /etc/redis/redis.conf
// (the file redis-server 7.0 ships with), changed only where it names this
// machine's places: port, dir, logfile and pidfile. It then checks that
// the file's settings are in force, that CONFIG REWRITE writes the file
// back keeping its comments, and that the server starts again from the
// rewritten file with the value set.
func TestDebianRedisConf(t *testing.T) {
	orig, err := os.ReadFile("/etc/redis/redis.conf")
	if err != nil {
		t.Skip("no /etc/redis/redis.conf")
	}
	tmp := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	conf := string(orig)
	for _, r := range []struct{ directive, value string }{
		{"port", strconv.Itoa(port)},
		{"dir", filepath.Join(tmp, "data")},
		{"logfile", filepath.Join(tmp, "persimmon.log")},
		{"pidfile", filepath.Join(tmp, "persimmon.pid")},
	} {
		re := regexp.MustCompile(`(?m)^` + r.directive + ` .*$`)
		if !re.MatchString(conf) {
			t.Fatalf("Debian's redis.conf has no %s line", r.directive)
		}
		conf = re.ReplaceAllString(conf, r.directive+" "+r.value)
	}
	if err := os.Mkdir(filepath.Join(tmp, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(tmp, "redis.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	start := func() chan int {
		done := make(chan int, 1)
		go func() { done <- run([]string{path}, os.Stderr) }()
		return done
	}
	done := start()
	c := dialRetry(t, port, done)
	for name, want := range map[string]string{
		"hz": "10", "appendfsync": "everysec", "client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"oom-score-adj-values": "0 200 800", "proc-title-template": "{title} {listen-addr} {server-mode}",
		"daemonize": "yes", "auto-aof-rewrite-min-size": "67108864", "port": strconv.Itoa(port),
	} {
		if got := c.configGet(name); got != want {
			t.Errorf("CONFIG GET %s = %q, want %q (from the file)", name, got, want)
		}
	}
	if got := c.do("CONFIG", "SET", "hz", "25", "list-compress-depth", "2"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	if got := c.do("CONFIG", "REWRITE"); got != "+OK" {
		t.Fatalf("CONFIG REWRITE: %s", got)
	}
	c.do("SHUTDOWN")
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	log, _ := os.ReadFile(filepath.Join(tmp, "persimmon.log"))
	if !bytes.Contains(log, []byte("daemonize")) || !bytes.Contains(log, []byte("does not manage its process")) {
		t.Errorf("the log says nothing of daemonize yes:\n%s", log)
	}

	rewritten, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(rewritten)
	for _, want := range []string{
		"# Redis configuration file example.", // comments are kept
		"\nhz 25\n",                           // the line is rewritten in place
		"\nport " + strconv.Itoa(port) + "\n",
		"\nlist-compress-depth 2\n", // in the file already
		"\nclient-output-buffer-limit slave 256mb 64mb 60\n",
		"\nappendfsync everysec\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rewritten file lacks %q", want)
		}
	}
	if strings.Count(text, "\nhz ") != 1 {
		t.Errorf("hz appears %d times", strings.Count(text, "\nhz "))
	}
	if len(text) < len(conf)/2 {
		t.Errorf("rewritten file is %d bytes, the original %d: comments lost", len(text), len(conf))
	}

	done = start()
	c = dialRetry(t, port, done)
	if got := c.configGet("hz"); got != "25" {
		t.Errorf("after the restart from the rewritten file hz = %q", got)
	}
	c.do("SHUTDOWN")
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

// dialRetry connects to the server run started, while it opens its
// keyspace; it fails if run returns first.
func dialRetry(t *testing.T, port int, done chan int) *rawConn {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		nc, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			nc.SetDeadline(time.Now().Add(30 * time.Second))
			t.Cleanup(func() { nc.Close() })
			c := &rawConn{t: t, nc: nc, r: bufio.NewReader(nc)}
			// The port opens before recovery: wait until the keyspace is
			// attached, or the first commands answer -LOADING.
			for strings.HasPrefix(c.do("DBSIZE"), "-LOADING") {
				if time.Now().After(deadline) {
					t.Fatal("the server is still loading")
				}
				time.Sleep(20 * time.Millisecond) // polling a start-up, not synchronisation
			}
			return c
		}
		select {
		case code := <-done:
			t.Fatalf("the server exited with %d before listening", code)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling a start-up, not synchronisation
	}
}

// do sends a command and returns a simple reply's line, or the bulks of
// an array joined by newlines.
func (c *rawConn) do(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.nc.Write([]byte(b.String())); err != nil {
		c.t.Fatal(err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		if args[0] == "SHUTDOWN" {
			return ""
		}
		c.t.Fatal(err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" || line[0] != '*' {
		return line
	}
	n, _ := strconv.Atoi(line[1:])
	var out []string
	for i := 0; i < n; i++ {
		hdr, _ := c.r.ReadString('\n')
		size, _ := strconv.Atoi(strings.TrimSuffix(hdr, "\r\n")[1:])
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			c.t.Fatal(err)
		}
		out = append(out, string(buf[:size]))
	}
	return strings.Join(out, "\n")
}

func (c *rawConn) configGet(name string) string {
	parts := strings.SplitN(c.do("CONFIG", "GET", name), "\n", 2)
	if len(parts) != 2 {
		return "<missing>"
	}
	return parts[1]
}

// TestDebugCommand runs the DEBUG subcommands on the real command table:
// refused without enable-debug-command, as in Redis 7.0, then allowed
// with enable-debug-command local from a loopback client.
func TestDebugCommand(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		tmp := t.TempDir()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		conf := fmt.Sprintf("port %d\ndir %s\npidfile none\n", port, tmp)
		if allowed {
			conf += "enable-debug-command local\n"
		}
		path := filepath.Join(tmp, "p.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan int, 1)
		go func() { done <- run([]string{path}, io.Discard) }()
		c := dialRetry(t, port, done)
		if !allowed {
			if got := c.do("DEBUG", "LOG", "x"); !strings.HasPrefix(got, "-ERR DEBUG command not allowed.") {
				t.Errorf("DEBUG without enable-debug-command: %q", got)
			}
		} else {
			c.do("HSET", "h", "f", "v")
			c.do("SET", "n", "12")
			for _, tt := range []struct {
				args []string
				want string
			}{
				{[]string{"DEBUG", "SLEEP", "0"}, "+OK"},
				{[]string{"DEBUG", "SLEEP", "x"}, "+OK"}, // strtod: 0
				{[]string{"DEBUG", "LOG", "hello"}, "+OK"},
				{[]string{"DEBUG", "PROTOCOL", "integer"}, ":12345"},
				{[]string{"DEBUG", "PROTOCOL", "push"}, "-ERR RESP2 is not supported by this command"},
				{[]string{"DEBUG", "CHANGE-REPL-ID"}, "+OK"},
				{[]string{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"}, "+OK"},
				{[]string{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "x"}, "-ERR argument must be a memory value bigger than 1 and smaller than 4gb"},
				{[]string{"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, "+OK"},
				{[]string{"DEBUG", "SET-ACTIVE-EXPIRE", "1"}, "+OK"},
				{[]string{"DEBUG", "OBJECT", "nosuch"}, "-ERR no such key"},
				{[]string{"RPUSH", "l", "a", "b"}, ":2"},
				{[]string{"SET", "t", "x", "PX", "100000"}, "+OK"},
				{[]string{"DEBUG", "RELOAD"}, "+OK"}, // a recovered copy of the arena matches
				{[]string{"LRANGE", "l", "0", "-1"}, "a\nb"},
				{[]string{"DEBUG", "NOSUCH"}, "-ERR unknown subcommand or wrong number of arguments for 'NOSUCH'. Try DEBUG HELP."},
			} {
				if got := c.do(tt.args...); got != tt.want {
					t.Errorf("%q = %q, want %q", tt.args, got, tt.want)
				}
			}
			for key, enc := range map[string]string{"h": "encoding:listpack ", "n": "encoding:int "} {
				got := c.do("DEBUG", "OBJECT", key)
				if !strings.HasPrefix(got, "+Value at:0x") || !strings.Contains(got, enc) || !strings.Contains(got, " serializedlength:") {
					t.Errorf("DEBUG OBJECT %s = %q", key, got)
				}
			}
		}
		c.do("SHUTDOWN")
		if code := <-done; code != 0 {
			t.Fatalf("exit %d", code)
		}
	}
}

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The port opens before recovery (issue 12 section 5): a client that
// connects while a large data directory recovers gets -LOADING for
// commands Redis refuses while loading, INFO shows loading:1 with the
// progress fields, and then the data; a kill -9 during loading loses
// nothing.
//
// The data directory: PERSIMMON_LOADING_KEYS keys (make test-long: a
// million) written with --key-index no and 1 MB segments, so that recovery
// replays every record and takes over a second (7 s here under load).
func TestLoadingBeforeRecovery(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PERSIMMON_LOADING_KEYS"))
	if n <= 0 {
		t.Skip("writes a million keys (about 40 s): make test-long sets PERSIMMON_LOADING_KEYS=1000000")
	}
	dir := t.TempDir()
	args := []string{"--key-index", "no", "--segment-size", "1mb"}
	s := startServer(t, dir, args...)
	fillLoadingKeys(t, s.Addr, n)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// Restart: connect as soon as the port opens, before recovery ends.
	p := launchLoading(t, dir, args...)
	c := dialLoading(t, p.Addr)
	start := time.Now()
	sawLoading, sawInfo := false, false
	for {
		r := c.do("GET", "k:0")
		if r == "$3\r\nv:0\r\n" {
			break
		}
		if r != "-LOADING Redis is loading the dataset in memory\r\n" {
			t.Fatalf("GET while loading: %q", r)
		}
		sawLoading = true
		if !sawInfo {
			info := c.do("INFO", "persistence")
			if strings.Contains(info, "loading:1\r\n") {
				for _, f := range []string{"loading_start_time:", "loading_total_bytes:", "loading_rdb_used_mem:",
					"loading_loaded_bytes:", "loading_loaded_perc:", "loading_eta_seconds:"} {
					if !strings.Contains(info, f) {
						t.Errorf("INFO while loading lacks %s:\n%s", f, info)
					}
				}
				sawInfo = true
			}
		}
		if r := c.do("PING"); r != "-LOADING Redis is loading the dataset in memory\r\n" && r != "+PONG\r\n" {
			t.Fatalf("PING while loading: %q", r)
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatal("still loading after 5 minutes")
		}
	}
	t.Logf("loaded %d keys %.2f s after the port opened", n, time.Since(start).Seconds())
	if !sawLoading || !sawInfo {
		t.Fatalf("never saw -LOADING (%v) or INFO loading:1 (%v): recovery was faster than the first command", sawLoading, sawInfo)
	}
	if r := c.do("DBSIZE"); r != ":"+strconv.Itoa(n)+"\r\n" {
		t.Fatalf("DBSIZE after loading = %q, want %d", r, n)
	}
	if info := c.do("INFO", "persistence"); !strings.Contains(info, "loading:0\r\n") || strings.Contains(info, "loading_start_time") {
		t.Errorf("INFO after loading:\n%s", info)
	}
	c.nc.Close()
	p.kill()

	// kill -9 in the middle of the next recovery loses nothing.
	p = launchLoading(t, dir, args...)
	c = dialLoading(t, p.Addr)
	if r := c.do("GET", "k:1"); r != "-LOADING Redis is loading the dataset in memory\r\n" {
		t.Fatalf("GET right after the restart: %q, want -LOADING", r)
	}
	p.kill()
	s = startServer(t, dir, args...) // ready once loaded
	c = dialLoading(t, s.Addr)
	if r := c.do("DBSIZE"); r != ":"+strconv.Itoa(n)+"\r\n" {
		t.Fatalf("DBSIZE after a kill -9 while loading = %q, want %d", r, n)
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		if r := c.do("GET", fmt.Sprintf("k:%d", i)); r != fmt.Sprintf("$%d\r\nv:%d\r\n", len(strconv.Itoa(i))+2, i) {
			t.Fatalf("GET k:%d = %q", i, r)
		}
	}
}

// fillLoadingKeys writes k:0..k:n-1 = v:i with pipelined MSETs of 100 keys.
func fillLoadingKeys(t *testing.T, addr string, n int) {
	t.Helper()
	c := dialLoading(t, addr)
	w := bufio.NewWriterSize(c.nc, 1<<20)
	const per, window = 100, 64
	sent, acked := 0, 0
	for i := 0; i < n; i += per {
		m := min(per, n-i)
		fmt.Fprintf(w, "*%d\r\n$4\r\nMSET\r\n", 1+2*m)
		for j := i; j < i+m; j++ {
			k, v := "k:"+strconv.Itoa(j), "v:"+strconv.Itoa(j)
			fmt.Fprintf(w, "$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(v), v)
		}
		sent++
		if sent-acked >= window {
			w.Flush()
			for ; acked < sent-window/2; acked++ {
				if r := c.reply(); r != "+OK\r\n" {
					t.Fatalf("MSET: %q", r)
				}
			}
		}
	}
	w.Flush()
	for ; acked < sent; acked++ {
		if r := c.reply(); r != "+OK\r\n" {
			t.Fatalf("MSET: %q", r)
		}
	}
}

// launchLoading starts the server on dir and returns once its port
// accepts connections, without waiting for recovery.
func launchLoading(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(serverBin, append([]string{"--port", strconv.Itoa(port), "--dir", dir}, args...)...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, log: log, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() { s.kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := net.Dial("tcp", s.Addr)
		if err == nil {
			nc.Close()
			return s
		}
		select {
		case err := <-s.done:
			s.cmd.ProcessState = &os.ProcessState{}
			t.Fatalf("server exited: %v\n%s", err, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("port never opened\n%s", log.String())
		}
		time.Sleep(time.Millisecond) // polling for the listener
	}
}

// rawConn is a RESP connection that returns replies as raw text.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialLoading(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Minute)) // a hung server fails the test
	return &rawConn{t: t, nc: nc, r: bufio.NewReaderSize(nc, 1<<16)}
}

func (c *rawConn) do(args ...string) string {
	c.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.nc.Write([]byte(b.String())); err != nil {
		c.t.Fatal(err)
	}
	return c.reply()
}

// reply reads one reply: a line, or a bulk string with its line.
func (c *rawConn) reply() string {
	c.t.Helper()
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading a reply: %v", err)
	}
	if line[0] != '$' && line[0] != '=' {
		return line
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	if n < 0 {
		return line
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, buf); err != nil {
		c.t.Fatal(err)
	}
	return line + string(buf)
}

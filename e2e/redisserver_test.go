package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startRedis starts Debian's redis-server on a free loopback port with no
// persistence and returns its address once it answers PING. The process is
// killed when the test ends. A missing redis-server is a failure, not a
// skip: the differential tests are part of `make test`.
func startRedis(t testing.TB, extra ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH (%v): the differential tests need Debian's redis-server; .ci/run installs it (apt-get install redis-server)", err)
	}
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--daemonize", "no", "--logfile", "")
	cmd.Args = append(cmd.Args, extra...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)

	// Poll: each attempt dials and sends PING; attempts are bounded, and a
	// process that exits ends the wait at once.
	const attempts = 500
	var last error
	for i := 0; i < attempts; i++ {
		select {
		case err := <-done:
			t.Fatalf("redis-server exited before answering PING: %v\n%s", err, log.String())
		default:
		}
		c, err := dialRESP(addr)
		if err == nil {
			r, err := c.do("PING")
			c.close()
			if err == nil && r.String() == "+PONG" {
				return addr
			}
			if err == nil {
				err = fmt.Errorf("PING answered %s", r)
			}
		}
		last = err
		time.Sleep(20 * time.Millisecond) // between connection attempts
	}
	t.Fatalf("redis-server on %s did not answer PING after %d attempts: %v\n%s", addr, attempts, last, log.String())
	return ""
}

// ---- a tiny RESP client ----

// respConn is one raw RESP connection: it sends a command as a multibulk
// and reads exactly one reply.
type respConn struct {
	nc net.Conn
	r  *bufio.Reader
}

func dialRESP(addr string) (*respConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &respConn{nc: nc, r: bufio.NewReader(nc)}, nil
}

func (c *respConn) close() { c.nc.Close() }

// do sends args (strings or []byte) and reads one reply.
func (c *respConn) do(args ...any) (reply, error) {
	bargs := make([][]byte, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			bargs[i] = []byte(v)
		case []byte:
			bargs[i] = v
		default:
			bargs[i] = []byte(fmt.Sprint(v))
		}
	}
	return c.doBytes(bargs)
}

func (c *respConn) doBytes(args [][]byte) (reply, error) {
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.nc.SetDeadline(time.Time{})
	if _, err := c.nc.Write(encodeCommand(args)); err != nil {
		return reply{}, err
	}
	return readReply(c.r)
}

func encodeCommand(args [][]byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n", len(a))
		b.Write(a)
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

// reply is one decoded RESP reply. kind is the RESP type byte; null
// bulk strings and arrays have null set.
type reply struct {
	kind  byte
	str   string // simple string, error, integer text, bulk content
	null  bool
	elems []reply
}

// String renders the reply canonically: +OK, -ERR ..., :1, $-1, "bulk"
// (Go-quoted), *-1, *2["a", :1].
func (r reply) String() string {
	switch r.kind {
	case '+', '-', ':', ',', '(', '#':
		return string(r.kind) + escapeControl(r.str)
	case '_':
		return "_"
	case '$', '=', '!':
		if r.null {
			return string(r.kind) + "-1"
		}
		return strconv.Quote(r.str)
	case '*', '~', '>', '%':
		if r.null {
			return string(r.kind) + "-1"
		}
		parts := make([]string, len(r.elems))
		for i, e := range r.elems {
			parts[i] = e.String()
		}
		return fmt.Sprintf("%c%d[%s]", r.kind, len(r.elems), strings.Join(parts, ", "))
	}
	return fmt.Sprintf("?%c%s", r.kind, r.str)
}

// escapeControl writes bytes outside printable ASCII as \xNN, so that a
// stray NUL or escape byte in a status or error line shows in messages.
func escapeControl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if ch := s[i]; ch < 0x20 || ch >= 0x7f || ch == '\\' {
			fmt.Fprintf(&b, "\\x%02x", ch)
		} else {
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// sorted returns the reply with its top-level array elements in order of
// their rendering (for replies whose order Redis does not define).
func (r reply) sorted() reply {
	if r.elems == nil {
		return r
	}
	out := r
	if r.kind == '%' { // a map: sort its key-value pairs
		pairs := make([][2]reply, len(r.elems)/2)
		for i := range pairs {
			pairs[i] = [2]reply{r.elems[2*i], r.elems[2*i+1]}
		}
		slices.SortFunc(pairs, func(a, b [2]reply) int { return strings.Compare(a[0].String(), b[0].String()) })
		out.elems = make([]reply, 0, len(r.elems))
		for _, p := range pairs {
			out.elems = append(out.elems, p[0], p[1])
		}
		return out
	}
	out.elems = slices.Clone(r.elems)
	slices.SortFunc(out.elems, func(a, b reply) int { return strings.Compare(a.String(), b.String()) })
	return out
}

var errProtocol = errors.New("malformed RESP reply")

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") {
		return "", fmt.Errorf("%w: line %q not ended by CRLF", errProtocol, line)
	}
	return line[:len(line)-2], nil
}

func readReply(r *bufio.Reader) (reply, error) {
	line, err := readLine(r)
	if err != nil {
		return reply{}, err
	}
	if line == "" {
		return reply{}, fmt.Errorf("%w: empty line", errProtocol)
	}
	kind, rest := line[0], line[1:]
	switch kind {
	case '+', '-', ':', ',', '(', '#':
		return reply{kind: kind, str: rest}, nil
	case '_':
		return reply{kind: kind, null: true}, nil
	case '$', '=', '!':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return reply{}, fmt.Errorf("%w: bulk length %q", errProtocol, rest)
		}
		if n < 0 {
			return reply{kind: kind, null: true}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return reply{}, err
		}
		if string(buf[n:]) != "\r\n" {
			return reply{}, fmt.Errorf("%w: bulk not ended by CRLF", errProtocol)
		}
		return reply{kind: kind, str: string(buf[:n])}, nil
	case '*', '~', '>', '%':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return reply{}, fmt.Errorf("%w: array length %q", errProtocol, rest)
		}
		if n < 0 {
			return reply{kind: kind, null: true}, nil
		}
		if kind == '%' {
			n *= 2
		}
		out := reply{kind: kind, elems: make([]reply, 0, n)}
		for i := 0; i < n; i++ {
			e, err := readReply(r)
			if err != nil {
				return reply{}, err
			}
			out.elems = append(out.elems, e)
		}
		return out, nil
	}
	return reply{}, fmt.Errorf("%w: unknown type byte %q", errProtocol, kind)
}

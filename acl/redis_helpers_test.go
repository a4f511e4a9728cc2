package acl

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A tiny RESP2 client for the differential tests against Debian's
// redis-server 7.0.15 (the package may not import the server's protocol
// package, which imports it).

type respErr string

func (e respErr) Error() string { return string(e) }

type redisConn struct {
	c    net.Conn
	r    *bufio.Reader
	addr string
}

// redial replaces the connection with a new one (ACL LOAD disconnects the
// clients of every user it replaces).
func (rc *redisConn) redial(t *testing.T) {
	t.Helper()
	rc.c.Close()
	c, err := net.Dial("tcp", rc.addr)
	if err != nil {
		t.Fatal(err)
	}
	rc.c, rc.r = c, bufio.NewReader(c)
}

func (rc *redisConn) do(args ...string) (any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := rc.c.Write([]byte(b.String())); err != nil {
		return nil, err
	}
	return rc.read()
}

func (rc *redisConn) read() (any, error) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return respErr(line[1:]), nil
	case ':':
		n, err := strconv.ParseInt(line[1:], 10, 64)
		return n, err
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(rc.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = rc.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply line %q", line)
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// startRedis starts a redis-server on a free port with an aclfile in a
// temporary directory, or skips the test without one.
func startRedis(t *testing.T) (*redisConn, string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server: the differential test needs Debian's redis-server 7.0")
	}
	dir := t.TempDir()
	aclfile := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(aclfile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--aclfile", aclfile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			rc := &redisConn{c: c, r: bufio.NewReader(c), addr: c.RemoteAddr().String()}
			if v, err := rc.do("PING"); err == nil && v == "PONG" {
				t.Cleanup(func() { rc.c.Close() })
				return rc, aclfile
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d did not answer: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a starting process, not synchronising
	}
}

// commandSpecsFromRedis reads COMMAND's reply into specs (sorted by name,
// subcommands after their parent, also sorted).
func commandSpecsFromRedis(rc *redisConn) ([]CommandSpec, error) {
	v, err := rc.do("COMMAND")
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("COMMAND: not an array")
	}
	var conv func(e []any) CommandSpec
	conv = func(e []any) CommandSpec {
		s := CommandSpec{Name: e[0].(string)}
		for _, f := range e[2].([]any) {
			if f == "no_auth" {
				s.NoAuth = true
			}
		}
		for _, c := range e[6].([]any) {
			s.Categories = append(s.Categories, strings.TrimPrefix(c.(string), "@"))
		}
		if len(e) > 9 {
			for _, sub := range e[9].([]any) {
				s.Subcommands = append(s.Subcommands, conv(sub.([]any)))
			}
		}
		sort.Slice(s.Subcommands, func(i, j int) bool { return s.Subcommands[i].Name < s.Subcommands[j].Name })
		return s
	}
	var specs []CommandSpec
	for _, e := range list {
		specs = append(specs, conv(e.([]any)))
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs, nil
}

// The fixture: Redis 7.0.15's command table as "name [no_auth] cat..."
// lines, a subcommand line starting with a space after its parent.
const fixturePath = "testdata/redis-7.0.15-commands.txt"

func formatSpecs(specs []CommandSpec) string {
	var b strings.Builder
	var line func(s CommandSpec, indent string)
	line = func(s CommandSpec, indent string) {
		b.WriteString(indent + s.Name)
		if s.NoAuth {
			b.WriteString(" no_auth")
		}
		for _, c := range s.Categories {
			b.WriteString(" @" + c)
		}
		b.WriteByte('\n')
		for _, sub := range s.Subcommands {
			line(sub, " ")
		}
	}
	for _, s := range specs {
		line(s, "")
	}
	return b.String()
}

func parseSpecs(text string) []CommandSpec {
	var specs []CommandSpec
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		sub := strings.HasPrefix(l, " ")
		f := strings.Fields(l)
		s := CommandSpec{Name: f[0]}
		for _, w := range f[1:] {
			if w == "no_auth" {
				s.NoAuth = true
			} else {
				s.Categories = append(s.Categories, strings.TrimPrefix(w, "@"))
			}
		}
		if sub {
			p := &specs[len(specs)-1]
			p.Subcommands = append(p.Subcommands, s)
		} else {
			specs = append(specs, s)
		}
	}
	return specs
}

// redisTable is Redis 7.0.15's command table from the fixture.
func redisTable(t testing.TB) *Table {
	t.Helper()
	b, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	return NewTable(parseSpecs(string(b)))
}

// TestFixtureIsRedisCommandTable proves the fixture is what redis-server
// answers to COMMAND; PERSIMMON_ACL_WRITE_FIXTURE=1 rewrites it from there.
func TestFixtureIsRedisCommandTable(t *testing.T) {
	rc, _ := startRedis(t)
	specs, err := commandSpecsFromRedis(rc)
	if err != nil {
		t.Fatal(err)
	}
	got := formatSpecs(specs)
	if os.Getenv("PERSIMMON_ACL_WRITE_FIXTURE") == "1" {
		if err := os.WriteFile(fixturePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from redis-server's COMMAND (rewrite with PERSIMMON_ACL_WRITE_FIXTURE=1)", fixturePath)
	}
}

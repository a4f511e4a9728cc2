package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// streamTap is a replication stream read as redis-server's test harness
// reads it (attach_to_replication_stream: SYNC, the snapshot skipped, then
// one command per array).
type streamTap struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func tapStream(t *testing.T, addr string) *streamTap {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	s := &streamTap{t: t, nc: nc, br: bufio.NewReader(nc)}
	fmt.Fprintf(nc, "SYNC\r\n")
	for {
		l := s.line()
		if l == "" {
			continue // newlines keep a loading link alive
		}
		n, err := strconv.Atoi(strings.TrimPrefix(l, "$"))
		if !strings.HasPrefix(l, "$") || err != nil {
			t.Fatalf("SYNC: %q", l)
		}
		if _, err := io.CopyN(io.Discard, s.br, int64(n)); err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func (s *streamTap) line() string {
	s.t.Helper()
	l, err := s.br.ReadString('\n')
	if err != nil {
		s.t.Fatalf("replication stream: %v", err)
	}
	return strings.TrimRight(l, "\r\n")
}

// command reads the stream's next command, its name lowercased.
func (s *streamTap) command() []string {
	s.t.Helper()
	for {
		h := s.line()
		if h == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(h, "*"))
		if !strings.HasPrefix(h, "*") || err != nil {
			s.t.Fatalf("replication stream: %q where a command was due", h)
		}
		args := make([]string, n)
		for i := range args {
			m, _ := strconv.Atoi(strings.TrimPrefix(s.line(), "$"))
			b := make([]byte, m+2)
			if _, err := io.ReadFull(s.br, b); err != nil {
				s.t.Fatal(err)
			}
			args[i] = string(b[:m])
		}
		args[0] = strings.ToLower(args[0])
		return args
	}
}

// next returns the next command of the stream as one line, lowercased
// name first, skipping PING and SELECT.
func (s *streamTap) next() string {
	s.t.Helper()
	for {
		if args := s.command(); args[0] != "ping" && args[0] != "select" {
			return strings.Join(args, " ")
		}
	}
}

// The stream carries the effects Redis 7.0 propagates for the pops of
// several keys and GETDEL (t_list.c, t_zset.c, t_string.c), checked side
// by side with redis-server's stream.
func TestReplicationStreamShape(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	rc, _ := startRedisMaster(t, "--repl-diskless-sync", "no")
	_, paddr := startReplServer(t, IOLoop)
	want := []string{
		"rpush l a b c",
		"lpop l 2",
		"rpop l 1",
		"zadd z 1 a 2 b",
		"zpopmax z 2",
		"set g v",
		"del g",
		"rpush l x",
		"rpop l 1",
		"set end 1",
	}
	for name, addr := range map[string]string{"redis-server": rc.Options().Addr, "persimmon": paddr} {
		t.Run(name, func(t *testing.T) {
			tap := tapStream(t, addr)
			w := dialAddr(t, addr)
			w.do("RPUSH", "l", "a", "b", "c")
			w.do("LMPOP", "1", "l", "LEFT", "COUNT", "2")
			w.do("LMPOP", "2", "nosuch", "l", "RIGHT", "COUNT", "5")
			w.do("LMPOP", "1", "l", "LEFT") // empty now: nothing
			w.do("ZADD", "z", "1", "a", "2", "b")
			w.do("ZMPOP", "1", "z", "MAX", "COUNT", "9")
			w.do("SET", "g", "v")
			w.do("GETDEL", "g")
			w.do("GETDEL", "g") // no key: nothing
			w.do("RPUSH", "l", "x")
			w.do("BLMPOP", "0", "1", "l", "RIGHT")
			w.do("SET", "end", "1")
			for i, cmd := range want {
				if got := tap.next(); got != cmd {
					t.Fatalf("stream command %d: %q, want %q", i, got, cmd)
				}
			}
		})
	}
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// conn is a minimal pipelining RESP client: commands are appended to a write
// buffer, sent with one flush, and their replies read back in order. Reply
// payloads are read into a reused scratch buffer and discarded; the benchmark
// only needs to know whether each reply was an error.
type conn struct {
	nc      net.Conn
	w       *bufio.Writer
	r       *bufio.Reader
	scratch []byte
	num     []byte
}

// reply summarises one RESP reply: its type byte, and for error replies the
// message; errs counts error elements directly inside an array (EXEC).
type reply struct {
	kind byte
	msg  string // error message, simple string, or first bulk string (short)
	n    int64  // integer value or array/bulk length
	errs int
	// firstErr is the first element error inside an array reply.
	firstErr string
}

func (r reply) isErr() bool { return r.kind == '-' }

func dial(addr, auth string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &conn{nc: nc, w: bufio.NewWriterSize(nc, 64<<10), r: bufio.NewReaderSize(nc, 64<<10)}
	if auth != "" {
		// The user:password form is sent as ONE argument, as the vendors'
		// tool does; servers with ACL users split it themselves or not at all.
		rep, err := c.do([]byte("AUTH"), []byte(auth))
		if err != nil {
			nc.Close()
			return nil, err
		}
		if rep.isErr() {
			nc.Close()
			return nil, fmt.Errorf("AUTH: %s", rep.msg)
		}
	}
	return c, nil
}

func (c *conn) Close() error { return c.nc.Close() }

// write appends one command as a RESP array of bulk strings.
func (c *conn) write(args ...[]byte) {
	c.writeArgs(args)
}

func (c *conn) writeArgs(args [][]byte) {
	c.num = append(c.num[:0], '*')
	c.num = strconv.AppendInt(c.num, int64(len(args)), 10)
	c.num = append(c.num, '\r', '\n')
	c.w.Write(c.num)
	for _, a := range args {
		c.num = append(c.num[:0], '$')
		c.num = strconv.AppendInt(c.num, int64(len(a)), 10)
		c.num = append(c.num, '\r', '\n')
		c.w.Write(c.num)
		c.w.Write(a)
		c.w.WriteString("\r\n")
	}
}

func (c *conn) flush() error { return c.w.Flush() }

// do sends one command and reads its reply.
func (c *conn) do(args ...[]byte) (reply, error) {
	c.writeArgs(args)
	if err := c.w.Flush(); err != nil {
		return reply{}, err
	}
	return c.read()
}

// doStrings is do for string arguments, returning bulk/simple payloads in
// full (used for INFO and SCRIPT LOAD, not on the hot path).
func (c *conn) doFull(args ...string) (string, error) {
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	c.writeArgs(bs)
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	line, err := c.line()
	if err != nil {
		return "", err
	}
	switch line[0] {
	case '-':
		return "", errors.New(string(line[1:]))
	case '+', ':':
		return string(line[1:]), nil
	case '$':
		n, _ := strconv.Atoi(string(line[1:]))
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

func (c *conn) line() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("protocol error: %q", line)
	}
	return line[:len(line)-2], nil
}

// read reads one reply, discarding payloads.
func (c *conn) read() (reply, error) {
	line, err := c.line()
	if err != nil {
		return reply{}, err
	}
	r := reply{kind: line[0]}
	switch line[0] {
	case '-':
		r.msg = string(line[1:])
	case '+':
		if len(line) < 64 {
			r.msg = string(line[1:])
		}
	case ':':
		r.n, _ = strconv.ParseInt(string(line[1:]), 10, 64)
	case '$':
		r.n, err = strconv.ParseInt(string(line[1:]), 10, 64)
		if err != nil {
			return r, fmt.Errorf("protocol error: %q", line)
		}
		if r.n >= 0 {
			if _, err := c.r.Discard(int(r.n) + 2); err != nil {
				return r, err
			}
		}
	case '*', '%', '~', '>':
		r.n, err = strconv.ParseInt(string(line[1:]), 10, 64)
		if err != nil {
			return r, fmt.Errorf("protocol error: %q", line)
		}
		k := r.n
		if line[0] == '%' {
			k *= 2
		}
		for i := int64(0); i < k; i++ {
			e, err := c.read()
			if err != nil {
				return r, err
			}
			if e.isErr() {
				if r.errs == 0 {
					r.firstErr = e.msg
				}
				r.errs++
			}
		}
	case '_', '#', ',':
	default:
		return r, fmt.Errorf("protocol error: %q", line)
	}
	return r, nil
}

// isUnsupported reports whether an error reply means the server does not
// know the command at all (as opposed to a runtime error of a known command).
func isUnsupported(msg string) bool {
	m := strings.ToLower(msg)
	return strings.HasPrefix(m, "err unknown command") ||
		strings.HasPrefix(m, "err unknown subcommand") ||
		strings.Contains(m, "unknown command")
}

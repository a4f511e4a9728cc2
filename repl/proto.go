package repl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// ErrProtocol is wrapped by every error about malformed replication input:
// a bad reply line, a bad RESP array in the command stream, a payload
// header that is neither $<len> nor $EOF:<mark>.
var ErrProtocol = errors.New("repl: protocol error")

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// Limits on the command stream, as Redis applies them to its master
// client (proto-max-bulk-len 512 MB).
const (
	maxBulkLen  = 512 << 20
	maxArrayLen = 1 << 31 // argv grows as elements arrive, never up front
	maxLineLen  = 64 << 10
	markLen     = 40 // the $EOF:<mark> marker and a replication ID are 40 bytes
)

// readLine reads one line and returns it without its \r\n (or \n).
func readLine(br *bufio.Reader) (string, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			return "", err
		}
		if len(line) > maxLineLen {
			return "", protoErr("line longer than %d bytes", maxLineLen)
		}
	}
	line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
	return string(line), nil
}

// readReply reads a reply line, skipping the empty lines a master sends
// to keep the link alive while it prepares a reply or a snapshot.
func readReply(br *bufio.Reader) (string, error) {
	for {
		line, err := readLine(br)
		if err != nil || line != "" {
			return line, err
		}
	}
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(dst []byte, args ...[]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

func command(args ...string) []byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return appendCommand(nil, b...)
}

// commandReader parses the command stream: RESP arrays of bulk strings,
// counting the bytes of each, which is how far it moves the replication
// offset. Each argument is a fresh slice the caller may keep.
type commandReader struct {
	br      *bufio.Reader
	inline  bool   // accept inline commands (words on a line), as redis-cli's "SYNC\r\n"
	keep    bool   // keep the bytes of the last command in raw
	raw     []byte // the last command's bytes as read, when keep
	maxBulk int    // the longest argument accepted; maxBulkLen when 0
}

// readBulk reads n bytes; past 64 KiB the buffer grows as they arrive,
// not from the claimed length alone.
func readBulk(br *bufio.Reader, n int) ([]byte, error) {
	const step = 64 << 10
	if n <= step {
		b := make([]byte, n)
		_, err := io.ReadFull(br, b)
		return b, err
	}
	b := make([]byte, 0, step)
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(cap(b), n-len(b)))
		}
		k, err := io.ReadFull(br, b[len(b):min(cap(b), n)])
		b = b[:len(b)+k]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// next returns the next command and its size in bytes. A bare newline
// (a keep-alive) is a command of no arguments.
func (c *commandReader) next() (argv [][]byte, size int64, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, 0, protoErr("header line too long")
		}
		return nil, 0, err
	}
	size = int64(len(line))
	if c.keep {
		c.raw = append(c.raw[:0], line...)
	}
	if string(line) == "\r\n" || string(line) == "\n" {
		return nil, size, nil
	}
	if line[0] != '*' && c.inline {
		for _, w := range bytes.Fields(line) {
			argv = append(argv, bytes.Clone(w))
		}
		return argv, size, nil
	}
	if line[0] != '*' {
		return nil, 0, protoErr("expected '*', got %q", truncate(line))
	}
	n, err := parseLen(line[1:], maxArrayLen)
	if err != nil {
		return nil, 0, err
	}
	argv = make([][]byte, 0, min(n, 64))
	for range n {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			if err == bufio.ErrBufferFull {
				return nil, 0, protoErr("header line too long")
			}
			return nil, 0, noEOF(err)
		}
		size += int64(len(line))
		if c.keep {
			c.raw = append(c.raw, line...)
		}
		if line[0] != '$' {
			return nil, 0, protoErr("expected '$', got %q", truncate(line))
		}
		limit := maxBulkLen
		if c.maxBulk > 0 {
			limit = c.maxBulk
		}
		l, err := parseLen(line[1:], limit)
		if err != nil {
			return nil, 0, err
		}
		arg, err := readBulk(c.br, l+2)
		if err != nil {
			return nil, 0, noEOF(err)
		}
		if arg[l] != '\r' || arg[l+1] != '\n' {
			return nil, 0, protoErr("bulk string not ended by CRLF")
		}
		size += int64(l + 2)
		if c.keep {
			c.raw = append(c.raw, arg...)
		}
		argv = append(argv, arg[:l:l])
	}
	return argv, size, nil
}

// parseLen parses the count of a '*' or '$' header line, which must end
// in \r\n: decimal digits in [0, limit] without a sign or leading zeros,
// as Redis's string2ll reads it.
func parseLen(p []byte, limit int) (int, error) {
	q, ok := bytes.CutSuffix(p, []byte("\r\n"))
	if !ok || len(q) == 0 || len(q) > 1 && q[0] == '0' || len(q) > 10 {
		return 0, protoErr("bad length %q", p)
	}
	n := 0
	for _, c := range q {
		if c < '0' || c > '9' {
			return 0, protoErr("bad length %q", p)
		}
		n = n*10 + int(c-'0')
	}
	if n > limit {
		return 0, protoErr("length %d over %d", n, limit)
	}
	return n, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func truncate(p []byte) []byte {
	if len(p) > 32 {
		return p[:32]
	}
	return p
}

// markReader returns the bytes of a disk-less transfer ("$EOF:<mark>"
// form) up to the 40-byte mark that ends it, and io.EOF there. It holds
// back the last 40 bytes it has read until it knows they are not the
// mark. Bytes read past the mark are kept in rest.
type markReader struct {
	br   *bufio.Reader
	mark []byte
	hold []byte
	rest []byte
	done bool
	n    int64 // payload bytes returned
}

func (m *markReader) Read(p []byte) (int, error) {
	if m.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	buf := make([]byte, len(m.hold)+len(p))
	copy(buf, m.hold)
	k, err := m.br.Read(buf[len(m.hold):])
	data := buf[:len(m.hold)+k]
	if i := bytes.Index(data, m.mark); i >= 0 {
		m.done = true
		m.rest = bytes.Clone(data[i+markLen:])
		m.hold = nil
		n := copy(p, data[:i])
		m.n += int64(n)
		if n < i {
			// Cannot happen: data[:i] is at most len(hold)+len(p)-40
			// and hold is at most 40 bytes.
			return n, protoErr("mark reader overflow")
		}
		return n, nil
	}
	if err != nil {
		return 0, noEOF(err)
	}
	keep := min(len(data), markLen-1)
	out := data[:len(data)-keep]
	m.hold = bytes.Clone(data[len(data)-keep:])
	n := copy(p, out)
	m.n += int64(n)
	return n, nil
}

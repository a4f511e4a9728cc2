package proto

import (
	"bytes"
	"errors"
	"math"
)

// Protocol limits, as Redis 7 enforces them.
const (
	MaxInlineSize   = 64 << 10  // PROTO_INLINE_MAX_SIZE: an inline line, or a count line
	MaxMultibulkLen = 1<<31 - 1 // declared arguments of one request (INT_MAX, as Redis 7)
	UnauthMaxArgs   = 10        // declared arguments before AUTH, when a password is set
	UnauthMaxBulk   = 16 << 10  // declared argument length before AUTH
	MaxQueryBuf     = 1 << 30   // client-query-buffer-limit: bytes buffered for one client
)

// Limits are what a request header is checked against.
type Limits struct {
	MaxBulk int64 // proto-max-bulk-len: the longest argument, in bytes
	Unauth  bool  // a password is set and the client has not given it
}

// Reader splits a connection's buffered input into requests. It keeps the
// argument slice headers and the inline-unquoting storage between
// requests, so a steady stream of requests does not allocate. The
// arguments Next returns alias data (or the inline storage) and are valid
// until the next call.
type Reader struct {
	args   [][]byte
	inline []byte
}

// Next takes the first request off data. It returns the request's
// arguments and the bytes after it. When data does not yet hold a whole
// request, rest is data itself (the same length) and need, when known and
// larger than what has arrived, is the buffer size the request needs. An
// empty request ("*0", "*-1", a blank line) returns no arguments and a
// shorter rest. perr is a protocol error's text (after "Protocol error: ",
// e.g. "invalid bulk length"): the connection answers it and closes.
func (r *Reader) Next(data []byte, lim Limits) (args [][]byte, rest []byte, need int, perr string) {
	if data[0] == '*' {
		if a, rest, ok := r.nextCanonical(data); ok {
			if msg := lim.Check(a); msg != "" {
				return nil, data, 0, msg
			}
			return a, rest, 0, ""
		}
		// Anything else goes Redis's way (processMultibulkBuffer): a
		// count or length with a sign or a leading zero is a protocol
		// error, and the two bytes after each bulk are not looked at.
		v := ScanMultibulk(data, lim)
		switch {
		case v.Err != "":
			return nil, data, 0, v.Err
		case v.Skip > 0:
			return nil, data[v.Skip:], 0, ""
		case !v.Complete:
			return nil, data, v.Need, ""
		}
		a, rest := SplitMultibulk(data, r.args[:0])
		if cap(a) > cap(r.args) {
			r.args = a[:0]
		}
		if msg := lim.Check(a); msg != "" {
			return nil, data, 0, msg
		}
		return a, rest, 0, ""
	}
	i := bytes.IndexByte(data, '\n')
	if i < 0 || i >= MaxInlineSize+16<<10 {
		// Redis reads 16 KB at a time and refuses a buffer over the limit
		// with no newline in it: a line whose newline is not in the first
		// 80 KB is refused, however it is sent.
		if len(data) > MaxInlineSize {
			return nil, data, 0, "too big inline request"
		}
		return nil, data, 0, ""
	}
	line := data[:i]
	rest = data[i+1:]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	var ok bool
	args, r.inline, ok = SplitInline(line, r.inline, r.args[:0])
	if cap(args) > cap(r.args) {
		r.args = args[:0]
	}
	if !ok {
		return nil, data, 0, "unbalanced quotes in request"
	}
	return args, rest, 0, ""
}

// nextCanonical is Next's fast path for a whole request in the form
// clients send, "*<n>\r\n" and n times "$<len>\r\n<len bytes>\r\n" with
// n >= 1 and the numbers in plain decimal (no sign, no leading zero). For
// anything else (incomplete, "*0", malformed, an odd number) it reports
// false and Next takes the general way (ScanMultibulk, SplitMultibulk),
// which gives a request it would have taken the same arguments. It reads
// each number in one pass with the CRLF after it; redcon, which Next used
// before, scanned for the LF and then converted the digits through
// strconv.Atoi (the parse was 3.7% of the server's CPU at SET -P 16).
func (r *Reader) nextCanonical(data []byte) (args [][]byte, rest []byte, ok bool) {
	args, next, ok := parseCanonical(data, r.args[:0])
	if !ok {
		return nil, nil, false
	}
	if cap(args) > cap(r.args) {
		r.args = args[:0]
	}
	return args, data[next:], true
}

// parseCanonical is nextCanonical appending the arguments to args; next
// is the offset just past the request.
func parseCanonical(data []byte, args [][]byte) (_ [][]byte, next int, ok bool) {
	count, i, ok := DecimalLine(data, 1)
	if !ok || count == 0 {
		return args, 0, false
	}
	for ; count > 0; count-- {
		if i >= len(data) || data[i] != '$' {
			return args, 0, false
		}
		n, j, ok := DecimalLine(data, i+1)
		if !ok || n > len(data)-j-2 {
			return args, 0, false
		}
		if data[j+n] != '\r' || data[j+n+1] != '\n' {
			return args, 0, false
		}
		args = append(args, data[j:j+n])
		i = j + n + 2
	}
	return args, i, true
}

// Parsed is one request ParseBatch took: its arguments (views of the
// input) and the offset in the input just past it.
type Parsed struct {
	Args [][]byte
	End  int
}

// ParseBatch parses the whole requests in the canonical form (see
// nextCanonical) at the front of data, up to max of them, appending each
// to reqs and its arguments to args (its Args are a part of args). Each
// request it takes has the arguments Next would give it; it stops at the
// first that is not whole and canonical, which Next then takes its own
// way. No limit is applied: the caller checks each request when it runs
// it (Limits.Check), with the limits in force then (an AUTH earlier in
// the batch lifts the unauthenticated ones). It lets a server parse a
// pipelined batch once for both its key prefetch and its dispatch.
func ParseBatch(data []byte, max int, reqs []Parsed, args [][]byte) ([]Parsed, [][]byte) {
	off := 0
	for len(reqs) < max && off < len(data) && data[off] == '*' {
		from := len(args)
		var next int
		var ok bool
		args, next, ok = parseCanonical(data[off:], args)
		if !ok {
			args = args[:from]
			break
		}
		off += next
		reqs = append(reqs, Parsed{Args: args[from:len(args):len(args)], End: off})
	}
	return reqs, args
}

// decimalLine reads a plain decimal number (digits only, no leading zero
// but "0" itself, at most 18 digits) at data[i:] followed by CRLF, and
// returns it with the index after the LF.
func DecimalLine(data []byte, i int) (n, next int, ok bool) {
	start := i
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		if i-start == 18 {
			return 0, 0, false
		}
		n = n*10 + int(data[i]-'0')
		i++
	}
	if i == start || (data[start] == '0' && i-start > 1) || i+1 >= len(data) || data[i] != '\r' || data[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
}

// Check applies the header limits to a request that arrived whole and
// returns the protocol error's text, or "".
func (lim Limits) Check(args [][]byte) string {
	if len(args) > MaxMultibulkLen {
		return "invalid multibulk length"
	}
	if lim.Unauth && len(args) > UnauthMaxArgs {
		return "unauthenticated multibulk length"
	}
	for _, a := range args {
		if int64(len(a)) > lim.MaxBulk {
			return "invalid bulk length"
		}
		if lim.Unauth && len(a) > UnauthMaxBulk {
			return "unauthenticated bulk length"
		}
	}
	return ""
}

// Verdict is what ScanMultibulk concludes about the start of a buffer
// holding an incomplete or malformed multibulk request.
type Verdict struct {
	Err      string // protocol error text (after "Protocol error: ")
	Skip     int    // a "*0"/"*-1" header Redis ignores: skip this many bytes
	Need     int    // bytes the pending request needs in total, when known
	Complete bool   // every declared argument is present
}

// ScanMultibulk walks the headers of the multibulk request at the start of
// b (b[0] == '*') the way Redis does, without copying, so that a request
// declaring too many or too large arguments is refused before the server
// waits for (and buffers) its bytes.
func ScanMultibulk(b []byte, lim Limits) (v Verdict) {
	cr := bytes.IndexByte(b, '\r')
	if cr < 0 {
		if len(b) > MaxInlineSize {
			v.Err = "too big mbulk count string"
		}
		return v
	}
	if cr+1 >= len(b) {
		return v
	}
	count, ok := ParseInt64(b[1:cr])
	if !ok || count > MaxMultibulkLen {
		v.Err = "invalid multibulk length"
		return v
	}
	if lim.Unauth && count > UnauthMaxArgs {
		v.Err = "unauthenticated multibulk length"
		return v
	}
	pos := int64(cr + 2)
	if count <= 0 {
		v.Skip = int(pos)
		return v
	}
	for j := int64(0); j < count; j++ {
		if pos >= int64(len(b)) {
			return v
		}
		if b[pos] != '$' {
			v.Err = "expected '$', got '" + string(b[pos:pos+1]) + "'"
			return v
		}
		cr := bytes.IndexByte(b[pos:], '\r')
		if cr < 0 {
			if int64(len(b))-pos > MaxInlineSize {
				v.Err = "too big bulk count string"
			}
			return v
		}
		end := pos + int64(cr)
		if end+1 >= int64(len(b)) {
			return v
		}
		n, ok := ParseInt64(b[pos+1 : end])
		if !ok || n < 0 || n > lim.MaxBulk {
			v.Err = "invalid bulk length"
			return v
		}
		if lim.Unauth && n > UnauthMaxBulk {
			v.Err = "unauthenticated bulk length"
			return v
		}
		pos = end + 2 + n + 2
		if pos > int64(len(b)) {
			if pos <= MaxQueryBuf {
				v.Need = int(pos)
			}
			return v
		}
	}
	v.Complete = true
	return v
}

// SplitMultibulk splits the multibulk request at the start of b, which
// ScanMultibulk found complete and well-formed, into its arguments
// (appended to args, aliasing b) and the bytes after it. The two bytes
// after each bulk are skipped unchecked, as Redis does.
func SplitMultibulk(b []byte, args [][]byte) (_ [][]byte, rest []byte) {
	cr := bytes.IndexByte(b, '\r')
	count, _ := ParseInt64(b[1:cr])
	pos := cr + 2
	for j := int64(0); j < count; j++ {
		cr := pos + bytes.IndexByte(b[pos:], '\r')
		n, _ := ParseInt64(b[pos+1 : cr])
		start := cr + 2
		args = append(args, b[start:start+int(n):start+int(n)])
		pos = start + int(n) + 2
	}
	return args, b[pos:]
}

// SplitInline splits an inline request line into arguments the way Redis's
// sdssplitargs does: spaces separate, "double quotes" take \n \r \t \b \a
// \\ \" and \xHH escapes, 'single quotes' take \', and a closing quote must
// be followed by a space or the end. Arguments are appended to args and
// point into storage (grown to len(line) so it is never reallocated while
// splitting). ok is false on unbalanced quotes.
func SplitInline(line, storage []byte, args [][]byte) (_ [][]byte, _ []byte, ok bool) {
	if cap(storage) < len(line) {
		storage = make([]byte, 0, len(line))
	}
	buf := storage[:0]
	p := 0
	for {
		for p < len(line) && IsSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, storage, true
		}
		start := len(buf)
		inq, insq, done := false, false, false
		for !done {
			switch {
			case inq:
				if p >= len(line) {
					return args[:0], storage, false
				}
				ch := line[p]
				if ch == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]) {
					buf = append(buf, unhex(line[p+2])<<4|unhex(line[p+3]))
					p += 3
				} else if ch == '\\' && p+1 < len(line) {
					p++
					switch line[p] {
					case 'n':
						ch = '\n'
					case 'r':
						ch = '\r'
					case 't':
						ch = '\t'
					case 'b':
						ch = '\b'
					case 'a':
						ch = '\a'
					default:
						ch = line[p]
					}
					buf = append(buf, ch)
				} else if ch == '"' {
					if p+1 < len(line) && !IsSpace(line[p+1]) {
						return args[:0], storage, false
					}
					done = true
				} else {
					buf = append(buf, ch)
				}
			case insq:
				if p >= len(line) {
					return args[:0], storage, false
				}
				ch := line[p]
				if ch == '\\' && p+1 < len(line) && line[p+1] == '\'' {
					p++
					buf = append(buf, '\'')
				} else if ch == '\'' {
					if p+1 < len(line) && !IsSpace(line[p+1]) {
						return args[:0], storage, false
					}
					done = true
				} else {
					buf = append(buf, ch)
				}
			default:
				if p >= len(line) {
					done = true
					break
				}
				switch ch := line[p]; ch {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					buf = append(buf, ch)
				}
			}
			if p < len(line) {
				p++
			}
		}
		args = append(args, buf[start:len(buf):len(buf)])
	}
}

// SplitArgs splits a line into arguments with Redis's inline-request and
// redis.conf quoting rules.
func SplitArgs(line string) ([]string, error) {
	args, _, ok := SplitInline([]byte(line), nil, nil)
	if !ok {
		return nil, errors.New("unbalanced quotes")
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out, nil
}

func isHex(ch byte) bool {
	return '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
}

func unhex(ch byte) byte {
	switch {
	case ch <= '9':
		return ch - '0'
	case ch >= 'a':
		return ch - 'a' + 10
	default:
		return ch - 'A' + 10
	}
}

// IsSpace is C's isspace in the "C" locale.
func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// ParseInt64 parses b the way Redis's string2ll does (header counts and
// every integer argument): an optional '-', then digits with no leading
// zero (the string "0" alone excepted), nothing else: no '+', no spaces,
// no "-0", at most 20 bytes, within int64.
func ParseInt64(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n >= 21 {
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	i := 0
	neg := false
	if b[0] == '-' {
		neg = true
		i = 1
		if n == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	v := uint64(b[i] - '0')
	for i++; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		d := uint64(c - '0')
		if v > math.MaxUint64-d {
			return 0, false
		}
		v += d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

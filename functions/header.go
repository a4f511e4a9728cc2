package functions

import (
	"bytes"
	"errors"
)

// Header is a library's first line, "#!<engine> name=<library>".
type Header struct {
	Engine string // as written ("lua", "LUA"); engines match ignoring case
	Name   string
}

// Errors of the header and of names, with Redis 7.0's texts.
var (
	ErrMissingHeader = errors.New("ERR Missing library metadata")
	ErrBadHeader     = errors.New("ERR Invalid library metadata")
	ErrNoName        = errors.New("ERR Library name was not given")
	ErrNameTwice     = errors.New("ERR Invalid metadata value, name argument was given multiple times")
	// ErrBadName is the error for a library or function name that is not
	// letters, digits and underscores, or is empty (Redis uses the same
	// text for both).
	ErrBadName = errors.New("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
)

// ParseHeader reads the header of a library's code as Redis's
// functionExtractLibMetaData does: the code must start with "#!", the
// first line is split as redis.conf arguments are (quotes allowed), the
// first argument names the engine after its "#!", and the only option is
// name=<library>, matched ignoring case. body is the code from the end of
// the header line on, its newline included, so line numbers in errors
// count the header as line 1. The name is not checked here (ValidName).
func ParseHeader(code []byte) (h Header, body []byte, err error) {
	if !bytes.HasPrefix(code, []byte("#!")) {
		return Header{}, nil, ErrMissingHeader
	}
	// Redis works on C strings here: a NUL ends the search for the line.
	text := code
	if i := bytes.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	nl := bytes.IndexByte(text, '\n')
	if nl < 0 {
		return Header{}, nil, ErrBadHeader
	}
	parts, ok := splitHeader(text[:nl])
	if !ok || len(parts) == 0 {
		return Header{}, nil, ErrBadHeader
	}
	if len(parts[0]) >= 2 {
		h.Engine = parts[0][2:]
	}
	named := false
	for _, p := range parts[1:] {
		if len(p) < 5 || !equalFoldASCII(p[:5], "name=") {
			return Header{}, nil, errors.New("ERR Invalid metadata value given: " + p)
		}
		if named {
			return Header{}, nil, ErrNameTwice
		}
		h.Name, named = p[5:], true
	}
	if !named {
		return Header{}, nil, ErrNoName
	}
	return h, code[nl:], nil
}

// ValidName reports whether s is a valid library or function name: one or
// more of [A-Za-z0-9_].
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// splitHeader splits line as sdssplitargs does: blanks separate
// arguments, "double quotes" take \xHH and \n \r \t \b \a escapes (any
// other escaped byte stands for itself), 'single quotes' take \', and a
// closing quote must be followed by a blank or the end. ok is false on an
// unbalanced or misplaced quote.
func splitHeader(line []byte) (args []string, ok bool) {
	p := 0
	for {
		for p < len(line) && isBlank(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, true
		}
		var cur []byte
		for done := false; !done; {
			c := line[p]
			switch c {
			case '"':
				p++
				for {
					if p >= len(line) {
						return nil, false
					}
					c := line[p]
					if c == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]) {
						cur = append(cur, unhex(line[p+2])<<4|unhex(line[p+3]))
						p += 4
						continue
					}
					if c == '\\' && p+1 < len(line) {
						cur = append(cur, unescape(line[p+1]))
						p += 2
						continue
					}
					if c == '"' {
						p++
						break
					}
					cur = append(cur, c)
					p++
				}
				if p < len(line) && !isBlank(line[p]) {
					return nil, false
				}
				done = true
			case '\'':
				p++
				for {
					if p >= len(line) {
						return nil, false
					}
					c := line[p]
					if c == '\\' && p+1 < len(line) && line[p+1] == '\'' {
						cur = append(cur, '\'')
						p += 2
						continue
					}
					if c == '\'' {
						p++
						break
					}
					cur = append(cur, c)
					p++
				}
				if p < len(line) && !isBlank(line[p]) {
					return nil, false
				}
				done = true
			default:
				cur = append(cur, c)
				p++
				// An unquoted argument ends at ' ', \t, \r or \n only (not
				// at \v or \f, which isspace also skips between arguments).
				done = p >= len(line) || line[p] == ' ' || line[p] == '\t' || line[p] == '\r' || line[p] == '\n'
			}
		}
		args = append(args, string(cur))
	}
}

// isBlank is C's isspace.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// equalFoldASCII compares ignoring ASCII case only (strcasecmp in the C
// locale).
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldName is a function name's lookup key (ASCII lower case).
func foldName(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII(c)
	}
	return string(b)
}

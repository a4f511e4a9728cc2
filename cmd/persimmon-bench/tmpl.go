package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// splitCommand splits a command line into arguments on blanks, honouring
// "double" and 'single' quotes and keeping {…} placeholders whole.
func splitCommand(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inTok, quote, brace := false, byte(0), 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == '\\' && quote == '"' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case brace > 0:
			cur.WriteByte(ch)
			if ch == '{' {
				brace++
			} else if ch == '}' {
				brace--
			}
		case ch == '"' || ch == '\'':
			quote, inTok = ch, true
		case ch == '{':
			brace, inTok = 1, true
			cur.WriteByte(ch)
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inTok {
				args = append(args, cur.String())
				cur.Reset()
				inTok = false
			}
		default:
			inTok = true
			cur.WriteByte(ch)
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if brace != 0 {
		return nil, fmt.Errorf("unterminated { in %q", s)
	}
	if inTok {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return args, nil
}

// ---- the Go tool's __RAND__ / __RAND2__ substitution -----------------------

// Placeholder kinds of a randCommand argument.
const (
	randLiteral  = iota // the argument as written
	randR1              // ends in __RAND__: a number below r1
	randR2              // ends in __RAND2__: a number below r2
	randPrevN           // ends in __PREV+N__: the previous number plus N
	randPrevRand        // ends in __PREV+RAND2__: the previous number plus 1 + a number below r2
)

// randCommand is a command whose arguments may end in __RAND__ (a random
// number below r1) or __RAND2__ (below r2), the vendors' tool's two
// placeholders, or in one of Persimmon's two range placeholders: __PREV+N__
// (N decimal) is the number the previous placeholder of the same command
// produced plus N, and __PREV+RAND2__ is that number plus 1 plus a random
// number below r2. "TR.SETRANGE k __RAND__ __PREV+999__" so draws a start
// and a fixed width of 1,000 bits, and never a start above its end (the
// vendors' placeholders draw start and end independently, so a quarter to a
// half of such requests are invalid); "__RAND__ __PREV+RAND2__ …" draws
// ascending offsets.
type randCommand struct {
	prefix [][]byte // each argument without its placeholder
	which  []int    // randLiteral … randPrevRand
	add    []uint64 // N of __PREV+N__
	r1, r2 uint64
	buf    []byte
	args   [][]byte
}

func parseRandCommand(s string, r1, r2 uint64) (*randCommand, error) {
	toks, err := splitCommand(s)
	if err != nil {
		return nil, err
	}
	if r1 == 0 || r2 == 0 {
		return nil, fmt.Errorf("-r and -r2 must be positive")
	}
	c := &randCommand{r1: r1, r2: r2}
	seen := false // a placeholder before this argument
	for _, t := range toks {
		w, n := randLiteral, uint64(0)
		switch {
		case strings.HasSuffix(t, "__RAND2__"):
			t, w = strings.TrimSuffix(t, "__RAND2__"), randR2
		case strings.HasSuffix(t, "__RAND__"):
			t, w = strings.TrimSuffix(t, "__RAND__"), randR1
		case strings.HasSuffix(t, "__PREV+RAND2__"):
			t, w = strings.TrimSuffix(t, "__PREV+RAND2__"), randPrevRand
		case strings.HasSuffix(t, "__") && strings.Contains(t, "__PREV+"):
			i := strings.LastIndex(t, "__PREV+")
			v, err := strconv.ParseUint(t[i+len("__PREV+"):len(t)-2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("bad placeholder in %q: want __PREV+N__ (N a decimal number) or __PREV+RAND2__", t)
			}
			t, w, n = t[:i], randPrevN, v
		}
		if (w == randPrevN || w == randPrevRand) && !seen {
			return nil, fmt.Errorf("%q: __PREV+…__ needs a placeholder before it in the command", t)
		}
		seen = seen || w != randLiteral
		c.prefix = append(c.prefix, []byte(t))
		c.which = append(c.which, w)
		c.add = append(c.add, n)
	}
	return c, nil
}

func (c *randCommand) clone() *randCommand {
	d := *c
	d.buf, d.args = nil, nil
	return &d
}

// build returns the arguments of the next command; they are valid until the
// next call.
func (c *randCommand) build(r *rand.Rand) [][]byte {
	c.buf = c.buf[:0]
	c.args = c.args[:0]
	var prev uint64
	for i, p := range c.prefix {
		switch c.which[i] {
		case randLiteral:
			c.args = append(c.args, p)
			continue
		case randR1:
			prev = r.Uint64N(c.r1)
		case randR2:
			prev = r.Uint64N(c.r2)
		case randPrevN:
			prev += c.add[i]
		case randPrevRand:
			prev += 1 + r.Uint64N(c.r2)
		}
		start := len(c.buf)
		c.buf = append(c.buf, p...)
		c.buf = strconv.AppendUint(c.buf, prev, 10)
		c.args = append(c.args, c.buf[start:len(c.buf):len(c.buf)])
	}
	return c.args
}

// ---- resp-benchmark-style templates -----------------------------------------

type phKind int

const (
	phLiteral phKind = iota
	phKey
	phValue
	phRand
)

type part struct {
	kind phKind
	lit  string
	n    uint64
	dist string // for keys: uniform, sequence, zipfian
	gen  keyGen
	// width of a key written with a format ({key DIST N %0Wd}): the number
	// alone, zero-padded to width digits (0: as few as it needs); -1: the
	// default key_ and ten digits.
	width int
}

// template is a parsed command such as
// "ZADD {key uniform 1000} {rand 70000} {key uniform 10000}".
// Every placeholder has its own generator: two {key sequence N} placeholders
// advance independently, so "HSET {key sequence 1000} {key sequence 10007} …"
// visits every (key, field) pair when the two ranges are coprime.
type template struct {
	src  string
	args [][]part
}

// tmplInstance is one worker's view of a template (its own scratch buffers);
// generators stay shared so that sequences are global.
type tmplInstance struct {
	t   *template
	buf []byte
	out [][]byte
}

func parseTemplate(s string) (*template, error) {
	toks, err := splitCommand(s)
	if err != nil {
		return nil, err
	}
	t := &template{src: s}
	for _, tok := range toks {
		var parts []part
		for len(tok) > 0 {
			i := strings.IndexByte(tok, '{')
			if i < 0 {
				parts = append(parts, part{kind: phLiteral, lit: tok})
				break
			}
			if i > 0 {
				parts = append(parts, part{kind: phLiteral, lit: tok[:i]})
			}
			j := strings.IndexByte(tok[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("unterminated placeholder in %q", tok)
			}
			p, err := parsePlaceholder(tok[i+1 : i+j])
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
			tok = tok[i+j+1:]
		}
		if len(parts) == 0 {
			parts = append(parts, part{kind: phLiteral, lit: ""})
		}
		t.args = append(t.args, parts)
	}
	return t, nil
}

func parsePlaceholder(s string) (part, error) {
	f := strings.Fields(s)
	bad := fmt.Errorf("bad placeholder {%s}: want {key uniform|sequence|zipfian N [%%0Wd]}, {value N} or {rand N}", s)
	num := func(x string) (uint64, error) {
		x = strings.ReplaceAll(x, "_", "")
		n, err := strconv.ParseUint(x, 10, 64)
		if err != nil || n == 0 {
			return 0, bad
		}
		return n, nil
	}
	switch {
	case (len(f) == 3 || len(f) == 4) && f[0] == "key":
		n, err := num(f[2])
		if err != nil {
			return part{}, err
		}
		p := part{kind: phKey, n: n, dist: f[1], width: -1}
		if len(f) == 4 {
			// %d or %0Wd: the key number alone, so that "GET k:{key
			// uniform 1000000 %014d}" reads keys loaded as k:%014d.
			w, ok := strings.CutPrefix(f[3], "%")
			w, ok2 := strings.CutSuffix(w, "d")
			p.width = 0
			if w != "" {
				x, err := strconv.Atoi(w)
				if err != nil || w[0] != '0' || x <= 0 || x > 20 {
					ok = false
				}
				p.width = x
			}
			if !ok || !ok2 {
				return part{}, bad
			}
		}
		switch f[1] {
		case "uniform":
			p.gen = uniformGen{n}
		case "sequence":
			p.gen = &sequenceGen{n: n}
		case "zipfian":
			p.gen = newScrambledZipfian(0, n-1)
		default:
			return part{}, bad
		}
		return p, nil
	case len(f) == 2 && f[0] == "value":
		n, err := num(f[1])
		if err != nil {
			return part{}, err
		}
		return part{kind: phValue, n: n}, nil
	case len(f) == 2 && f[0] == "rand":
		n, err := num(f[1])
		if err != nil {
			return part{}, err
		}
		return part{kind: phRand, n: n}, nil
	}
	return part{}, bad
}

func (t *template) instance() *tmplInstance { return &tmplInstance{t: t} }

// build returns the arguments of the next command, valid until the next call.
func (ti *tmplInstance) build(r *rand.Rand) [][]byte {
	ti.buf = ti.buf[:0]
	ti.out = ti.out[:0]
	for _, parts := range ti.t.args {
		if len(parts) == 1 {
			switch p := parts[0]; p.kind {
			case phLiteral:
				ti.out = append(ti.out, []byte(p.lit))
				continue
			case phValue:
				ti.out = append(ti.out, randomValue(r, int(p.n)))
				continue
			}
		}
		start := len(ti.buf)
		for _, p := range parts {
			switch p.kind {
			case phLiteral:
				ti.buf = append(ti.buf, p.lit...)
			case phKey:
				if p.width >= 0 {
					ti.buf = appendPadded(ti.buf, p.gen.next(r), p.width)
				} else {
					ti.buf = appendKey(ti.buf, p.gen.next(r))
				}
			case phValue:
				ti.buf = append(ti.buf, randomValue(r, int(p.n))...)
			case phRand:
				ti.buf = strconv.AppendUint(ti.buf, r.Uint64N(p.n), 10)
			}
		}
		ti.out = append(ti.out, ti.buf[start:len(ti.buf):len(ti.buf)])
	}
	// ti.buf may have been reallocated; earlier slices still point at the
	// old (still valid) arrays, so nothing needs fixing up.
	return ti.out
}

// appendKey formats a key the way resp-benchmark does: key_ and ten digits.
func appendKey(b []byte, n uint64) []byte {
	return appendPadded(append(b, "key_"...), n, 10)
}

// appendPadded appends n in decimal, zero-padded to width digits.
func appendPadded(b []byte, n uint64, width int) []byte {
	var d [20]byte
	s := strconv.AppendUint(d[:0], n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

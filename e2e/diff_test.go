package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Differential tests: every script in testdata/diff is sent, command by
// command, to a real redis-server and to persimmon-server over raw RESP,
// and each pair of replies must render identically.
//
// Script format, one command per line:
//
//	SET k "a value with spaces"      arguments split on spaces; "" is an empty argument
//	SET k "\x00\xff" \x41            \xNN, \n, \r, \t, \\ and \" are escapes (quoted or not);
//	                                 any other backslash is kept as is (KEYS h\*llo)
//	# comment                        blank lines and lines starting with # are skipped
//	sort: KEYS *                     sort the reply's array elements before comparing
//	ignore: TIME                     send to both, do not compare
//	scan: SCAN 0 MATCH k* COUNT 2    iterate the cursor to 0 on each server and compare the
//	scan: HSCAN h 0 COUNT 2          sorted set of every element returned; the cursor is
//	                                 argument 1 of SCAN, argument 2 of HSCAN/SSCAN/ZSCAN;
//	                                 HSCAN's and ZSCAN's elements are compared as pairs
//	@2 SET k v                       send on connection 2 (default 1); connections are opened
//	                                 on first use and reopened after the server closes one
//
// Prefixes combine (`@2 sort: KEYS *`). Each script starts with FLUSHALL on
// fresh connections. Every script runs twice: in RESP2, then (subtests
// resp3/NAME) on connections that start with HELLO 3, so that each reply
// is compared in Redis 7.0's RESP3 shapes too (maps, sets, doubles, null,
// verbatim strings, push messages). A script line that itself sends HELLO
// switches its connection on both servers alike.

type scriptLine struct {
	file string
	num  int
	text string // the command as written, for messages
	mode string // "", "sort", "ignore", "scan"
	conn int
	// scan: the cursor's argument index, and whether the reply lists
	// (field, value) or (member, score) pairs
	cursor int
	pairs  bool
	args   [][]byte
}

func (l scriptLine) pos() string { return fmt.Sprintf("%s:%d", l.file, l.num) }

func parseScript(path string) ([]scriptLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []scriptLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	num := 0
	for sc.Scan() {
		num++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := scriptLine{file: filepath.Base(path), num: num, conn: 1}
	prefixes:
		for {
			switch {
			case strings.HasPrefix(text, "sort: "), strings.HasPrefix(text, "ignore: "), strings.HasPrefix(text, "scan: "):
				if l.mode != "" {
					return nil, fmt.Errorf("%s: two of sort:/ignore:/scan:", l.pos())
				}
				l.mode, text, _ = strings.Cut(text, ": ")
			case strings.HasPrefix(text, "@"):
				word, rest, _ := strings.Cut(text, " ")
				n, err := strconv.Atoi(word[1:])
				if err != nil || n < 1 {
					return nil, fmt.Errorf("%s: bad connection prefix %q", l.pos(), word)
				}
				l.conn, text = n, rest
			default:
				break prefixes
			}
			text = strings.TrimSpace(text)
		}
		l.text = text
		if l.args, err = splitArgs(text); err != nil {
			return nil, fmt.Errorf("%s: %v", l.pos(), err)
		}
		if len(l.args) == 0 {
			return nil, fmt.Errorf("%s: no command", l.pos())
		}
		if l.mode == "scan" {
			if l.cursor, l.pairs, err = scanCursor(l.args); err != nil {
				return nil, fmt.Errorf("%s: scan: %v", l.pos(), err)
			}
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// scanCursor returns where a SCAN-family command takes its cursor and
// whether its reply lists pairs.
func scanCursor(args [][]byte) (cursor int, pairs bool, err error) {
	switch name := strings.ToLower(string(args[0])); name {
	case "scan":
		cursor = 1
	case "sscan":
		cursor = 2
	case "hscan", "zscan":
		cursor, pairs = 2, true
	default:
		return 0, false, fmt.Errorf("%q is not SCAN, HSCAN, SSCAN or ZSCAN", args[0])
	}
	if len(args) <= cursor {
		return 0, false, errors.New("needs a cursor argument")
	}
	return cursor, pairs, nil
}

// splitArgs splits a script line into arguments (see the format above).
func splitArgs(s string) ([][]byte, error) {
	var args [][]byte
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			return args, nil
		}
		var arg []byte
		quoted := s[i] == '"'
		if quoted {
			i++
		}
		for {
			if i == len(s) {
				if quoted {
					return nil, errors.New("unterminated quote")
				}
				break
			}
			ch := s[i]
			if quoted && ch == '"' {
				i++
				if i < len(s) && s[i] != ' ' && s[i] != '\t' {
					return nil, errors.New("closing quote must be followed by a space")
				}
				break
			}
			if !quoted && (ch == ' ' || ch == '\t') {
				break
			}
			if ch == '\\' && i+1 < len(s) {
				switch s[i+1] {
				case 'x':
					if i+3 < len(s) {
						if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
							arg = append(arg, byte(v))
							i += 4
							continue
						}
					}
					return nil, fmt.Errorf("bad \\x escape at column %d", i+1)
				case 'n', 'r', 't', '\\', '"':
					arg = append(arg, map[byte]byte{'n': '\n', 'r': '\r', 't': '\t', '\\': '\\', '"': '"'}[s[i+1]])
					i += 2
					continue
				}
			}
			arg = append(arg, ch)
			i++
		}
		if arg == nil {
			arg = []byte{}
		}
		args = append(args, arg)
	}
}

// diffTarget is one server under comparison and its open connections.
type diffTarget struct {
	name  string
	addr  string
	conns map[int]*respConn
	resp3 bool // new connections send HELLO 3 first
}

func (d *diffTarget) closeAll() {
	for n, c := range d.conns {
		c.close()
		delete(d.conns, n)
	}
}

// run sends l on the line's connection and renders the reply; an I/O
// failure renders as <connection closed> and drops the connection, so the
// next line on it reconnects (both servers alike).
func (d *diffTarget) run(l scriptLine) string {
	r, err := d.exchange(l.conn, l.args)
	if err != nil {
		return d.ioFailure(l.conn, err)
	}
	switch l.mode {
	case "sort":
		return r.sorted().String()
	case "scan":
		return d.scanAll(l, r)
	}
	return r.String()
}

func (d *diffTarget) exchange(conn int, args [][]byte) (reply, error) {
	c := d.conns[conn]
	if c == nil {
		var err error
		if c, err = dialRESP(d.addr); err != nil {
			return reply{}, err
		}
		if d.resp3 {
			if r, err := c.doBytes(bytesArgs("HELLO", "3")); err != nil || r.kind != '%' {
				c.close()
				return reply{}, fmt.Errorf("HELLO 3: %v %v", r, err)
			}
		}
		d.conns[conn] = c
	}
	return c.doBytes(args)
}

func (d *diffTarget) ioFailure(conn int, err error) string {
	if c := d.conns[conn]; c != nil {
		c.close()
		delete(d.conns, conn)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "<timeout>"
	}
	if errors.Is(err, errProtocol) {
		return "<" + err.Error() + ">"
	}
	return "<connection closed>"
}

// scanAll follows a SCAN-like cursor (argument l.cursor) from the first
// reply to the end and renders the sorted, de-duplicated elements, or
// (field value) pairs (a full iteration may return an element twice; the
// cursors themselves are not comparable).
func (d *diffTarget) scanAll(l scriptLine, first reply) string {
	seen := map[string]bool{}
	r := first
	args := slices.Clone(l.args)
	for calls := 1; ; calls++ {
		if r.kind == '-' {
			return r.String()
		}
		if r.kind != '*' || len(r.elems) != 2 || r.elems[0].kind != '$' || r.elems[1].kind != '*' {
			return "<bad SCAN reply " + r.String() + ">"
		}
		elems := r.elems[1].elems
		if !l.pairs {
			for _, e := range elems {
				seen[e.String()] = true
			}
		} else if len(elems)%2 != 0 {
			return "<odd number of elements in " + r.String() + ">"
		} else {
			for i := 0; i < len(elems); i += 2 {
				seen["("+elems[i].String()+" "+elems[i+1].String()+")"] = true
			}
		}
		cursor := r.elems[0].str
		if cursor == "0" {
			break
		}
		if calls == 10000 {
			return "<SCAN did not finish after 10000 calls>"
		}
		args[l.cursor] = []byte(cursor)
		var err error
		if r, err = d.exchange(l.conn, args); err != nil {
			return d.ioFailure(l.conn, err)
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Sprintf("scan%d[%s]", len(keys), strings.Join(keys, ", "))
}

// runDiffScript runs lines on both targets and returns one message per
// mismatch.
func runDiffScript(want, got *diffTarget, lines []scriptLine) []string {
	var mismatches []string
	for _, l := range lines {
		w, g := want.run(l), got.run(l)
		if l.mode == "ignore" || w == g {
			continue
		}
		mismatches = append(mismatches, fmt.Sprintf("%s: %s\n\t%-9s %s\n\t%-9s %s",
			l.pos(), l.text, want.name+":", w, got.name+":", g))
	}
	return mismatches
}

func bytesArgs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// resetTargets closes every connection and empties every database.
func resetTargets(t *testing.T, targets ...*diffTarget) {
	t.Helper()
	for _, d := range targets {
		d.closeAll()
		r, err := d.exchange(1, [][]byte{[]byte("FLUSHALL")})
		if err != nil || r.String() != "+OK" {
			t.Fatalf("%s: FLUSHALL: %v %v", d.name, r, err)
		}
	}
}

func TestDiff(t *testing.T) {
	files, err := filepath.Glob("testdata/diff/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/diff (%v)", err)
	}
	redisSide := &diffTarget{name: "redis", addr: startRedis(t), conns: map[int]*respConn{}}
	s := startServer(t, t.TempDir())
	persimmonSide := &diffTarget{name: "persimmon", addr: s.Addr, conns: map[int]*respConn{}}
	t.Cleanup(func() { redisSide.closeAll(); persimmonSide.closeAll() })

	// The comparison itself must be able to fail: give the two servers
	// different data and check that the differ reports exactly that.
	t.Run("selfcheck", func(t *testing.T) {
		resetTargets(t, redisSide, persimmonSide)
		redisSide.exchange(1, [][]byte{[]byte("SET"), []byte("k"), []byte("redis")})
		persimmonSide.exchange(1, [][]byte{[]byte("SET"), []byte("k"), []byte("persimmon")})
		lines := []scriptLine{
			{file: "selfcheck", num: 1, text: "GET k", conn: 1, args: [][]byte{[]byte("GET"), []byte("k")}},
			{file: "selfcheck", num: 2, text: "STRLEN k", conn: 1, mode: "ignore", args: [][]byte{[]byte("STRLEN"), []byte("k")}},
			{file: "selfcheck", num: 3, text: "EXISTS k", conn: 1, args: [][]byte{[]byte("EXISTS"), []byte("k")}},
		}
		m := runDiffScript(redisSide, persimmonSide, lines)
		if len(m) != 1 || !strings.Contains(m[0], `"redis"`) || !strings.Contains(m[0], `"persimmon"`) {
			t.Fatalf("differ reported %q, want one mismatch on GET k", m)
		}
	})

	// scan: must follow the cursor where each command takes it: over big
	// (hashtable / skiplist) collections a full iteration takes many calls,
	// and must return every element on both servers; an element only one
	// server has must then show as a mismatch.
	t.Run("selfcheck-scan", func(t *testing.T) {
		resetTargets(t, redisSide, persimmonSide)
		const n = 600
		hset, sadd, zadd := []string{"HSET", "h"}, []string{"SADD", "s"}, []string{"ZADD", "z"}
		for i := range n {
			hset = append(hset, fmt.Sprintf("f%d", i), fmt.Sprintf("v%d", i))
			sadd = append(sadd, fmt.Sprintf("m%d", i))
			zadd = append(zadd, strconv.Itoa(i), fmt.Sprintf("m%d", i))
		}
		for _, d := range []*diffTarget{redisSide, persimmonSide} {
			for _, cmd := range [][]string{hset, sadd, zadd} {
				if r, err := d.exchange(1, bytesArgs(cmd...)); err != nil || r.String() != ":"+strconv.Itoa(n) {
					t.Fatalf("%s: %s: %v %v", d.name, cmd[0], r, err)
				}
			}
		}
		var lines []scriptLine
		for i, text := range []string{"HSCAN h 0 COUNT 3", "SSCAN s 0 COUNT 3", "ZSCAN z 0 COUNT 3", "hscan h 0 MATCH f1*"} {
			l := scriptLine{file: "selfcheck-scan", num: i + 1, text: text, conn: 1, mode: "scan", args: bytesArgs(strings.Fields(text)...)}
			var err error
			if l.cursor, l.pairs, err = scanCursor(l.args); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		for _, d := range []*diffTarget{redisSide, persimmonSide} {
			for i, want := range []string{`scan600[("f0" "v0"), `, `scan600["m0", `, `scan600[("m0" "0"), `, `scan111[("f1" "v1"), `} {
				if got := d.run(lines[i]); !strings.HasPrefix(got, want) {
					t.Errorf("%s: %s = %.80s, want %s...", d.name, lines[i].text, got, want)
				}
			}
		}
		persimmonSide.exchange(1, bytesArgs("HSET", "h", "f1extra", "x"))
		m := runDiffScript(redisSide, persimmonSide, lines)
		if len(m) != 2 || !strings.Contains(m[0], "selfcheck-scan:1:") || !strings.Contains(m[1], "selfcheck-scan:4:") ||
			!strings.Contains(m[0], "f1extra") || !strings.Contains(m[1], "f1extra") {
			t.Fatalf("differ reported %q, want mismatches on the two HSCANs of h", m)
		}
	})

	total := 0
	for _, resp3 := range []bool{false, true} {
		redisSide.resp3, persimmonSide.resp3 = resp3, resp3
		prefix := ""
		if resp3 {
			prefix = "resp3/"
		}
		for _, path := range files {
			lines, err := parseScript(path)
			if err != nil {
				t.Fatal(err)
			}
			total += len(lines)
			t.Run(prefix+strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
				resetTargets(t, redisSide, persimmonSide)
				for _, m := range runDiffScript(redisSide, persimmonSide, lines) {
					t.Error(m)
				}
			})
		}
	}
	t.Logf("%d scripted commands in %d files, RESP2 and RESP3", total, len(files))
}

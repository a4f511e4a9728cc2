package e2e

import (
	"slices"
	"strings"
	"testing"
)

// commandDocsGaps are the commands whose COMMAND DOCS differ from Redis
// 7.0.15's on purpose or for want of the command: CLIENT has the 7.2
// subcommand SETINFO (client libraries send it), and SCRIPT has no DEBUG
// (no Lua debugger).
var commandDocsGaps = map[string]bool{"client": true, "script": true, "script|debug": true}

// TestCommandDocsMatchRedis: every command and subcommand redis-server
// 7.0.15 has exists in persimmon (COMMAND LIST; so COMMAND COUNT is
// Redis's plus persimmon's own commands) and COMMAND DOCS of each is
// Redis's, in RESP3 (maps and sets compared in sorted order, as Redis's
// own dict order is not defined) and in RESP2 for the commands without
// subcommands (whose flattened maps have a defined order).
func TestCommandDocsMatchRedis(t *testing.T) {
	s := startServer(t, t.TempDir())
	redisAddr := startRedis(t)
	for _, resp3 := range []bool{true, false} {
		ours, err := dialRESP(s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := dialRESP(redisAddr)
		if err != nil {
			t.Fatal(err)
		}
		if resp3 {
			for _, c := range []*respConn{ours, theirs} {
				if r, err := c.do("HELLO", "3"); err != nil || r.kind != '%' {
					t.Fatalf("HELLO 3: %s %v", r, err)
				}
			}
		}
		list := func(c *respConn) []string {
			r, err := c.do("COMMAND", "LIST")
			if err != nil || r.kind != '*' {
				t.Fatalf("COMMAND LIST: %s %v", r, err)
			}
			var names []string
			for _, e := range r.elems {
				names = append(names, e.str)
			}
			return names
		}
		ourNames := list(ours)
		compared, differ := 0, map[string]bool{}
		for _, name := range list(theirs) {
			if !slices.Contains(ourNames, name) && !commandDocsGaps[name] {
				t.Errorf("persimmon has no %s", name)
			}
			a, err1 := ours.do("COMMAND", "DOCS", name)
			b, err2 := theirs.do("COMMAND", "DOCS", name)
			if err1 != nil || err2 != nil {
				t.Fatalf("COMMAND DOCS %s: %v %v", name, err1, err2)
			}
			if !resp3 && strings.Contains(b.String(), `"subcommands"`) {
				continue
			}
			compared++
			if got, want := deepSorted(a).String(), deepSorted(b).String(); got != want {
				differ[name] = true
				if !commandDocsGaps[name] {
					t.Errorf("resp3=%v COMMAND DOCS %s:\npersimmon %.600s\nredis     %.600s", resp3, name, got, want)
				}
			}
		}
		// The comparison must be able to fail: CLIENT's extra subcommand shows.
		if resp3 && !differ["client"] {
			t.Error("COMMAND DOCS client is Redis's although persimmon has CLIENT SETINFO")
		}
		if compared < 200 {
			t.Errorf("resp3=%v: only %d commands compared", resp3, compared)
		}
		ours.close()
		theirs.close()
	}
}

// deepSorted returns r with the entries of every map (by key) and the
// elements of every set sorted, at every depth.
func deepSorted(r reply) reply {
	if r.elems == nil {
		return r
	}
	out := r
	out.elems = make([]reply, len(r.elems))
	for i, e := range r.elems {
		out.elems[i] = deepSorted(e)
	}
	if r.kind == '%' || r.kind == '~' {
		return out.sorted()
	}
	return out
}

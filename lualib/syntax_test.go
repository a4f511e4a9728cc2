package lualib

import (
	"strings"
	"testing"
)

// Lua 5.1's messages, as redis-server 7.0.15 prints them after "Error
// compiling script (new function): ".
func TestCheckSyntax(t *testing.T) {
	for src, want := range map[string]string{
		"return (":                    "user_script:1: unexpected symbol near '<eof>'",
		"local 1 = 2":                 "user_script:1: '<name>' expected near '1'",
		"if x then\n\nreturn 1":       "user_script:3: 'end' expected (to close 'if' at line 1) near '<eof>'",
		"return 'abc":                 "user_script:1: unfinished string near '<eof>'",
		"return 1..2":                 "user_script:1: malformed number near '1..2'",
		"goto x":                      "user_script:1: '=' expected near 'x'",
		"break":                       "user_script:1: no loop to break near '<eof>'",
		"function f(a,) end":          "user_script:1: <name> or '...' expected near ')'",
		"x, f() = 1, 2":               "user_script:1: syntax error near '='",
		"local a = f\n(g)()":          "user_script:2: ambiguous syntax (function call x new statement) near '('",
		"return '\\400'":              "user_script:1: escape sequence too large near '''",
		"--[[ unclosed":               "user_script:1: unfinished long comment near '<eof>'",
		"function f() return ... end": "user_script:1: cannot use '...' outside a vararg function near '...'",
	} {
		err := CheckSyntax([]byte(src), "user_script")
		if err == nil || err.Error() != want {
			t.Errorf("CheckSyntax(%q) = %v, want %s", src, err, want)
		}
	}
	for _, src := range []string{"return 1", "local t = {a=1, [2]=3; 4,} return t", "for i = 1, 2 do break end",
		"repeat local x = 1 until x", "return a:b 'c' .. [==[x]==]", "local function f(...) return ... end", "return .5 + 0x10 + 2E-1"} {
		if err := CheckSyntax([]byte(src), "user_script"); err != nil {
			t.Errorf("CheckSyntax(%q) = %v, want nil", src, err)
		}
	}
}

// Lua 5.1's luaO_chunkid: syntax errors cut a name to fit 80 bytes,
// run-time errors to fit 60 (LUA_IDSIZE), as redis-server 7.0.15 prints
// them.
func TestChunkID(t *testing.T) {
	long := strings.Repeat("a", 100)
	for _, c := range []struct{ name, syntax, runtime string }{
		{"redis = 5", `[string "redis = 5"]`, `[string "redis = 5"]`},
		{"local x = 1\nreturn x", `[string "local x = 1..."]`, `[string "local x = 1..."]`},
		{long, `[string "` + long[:63] + `..."]`, `[string "` + long[:43] + `..."]`},
		{"=" + long, long[:79], long[:59]},
		{"@" + long, "..." + long[:72], "..." + long[:52]},
		{"=mychunk", "mychunk", "mychunk"},
		{"@file.lua", "file.lua", "file.lua"},
		{"a\x00b", `[string "a"]`, `[string "a"]`},
	} {
		if got := ChunkID(c.name); got != c.syntax {
			t.Errorf("ChunkID(%q) = %q, want %q", c.name, got, c.syntax)
		}
		if got := RuntimeChunkID(c.name); got != c.runtime {
			t.Errorf("RuntimeChunkID(%q) = %q, want %q", c.name, got, c.runtime)
		}
	}
}

package lualib

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// The descriptions Lua 5.1 (redis-server 7.0.15) puts in "attempt to call
// ... (a nil value)" for a call on line 2 of each chunk.
func TestCallTarget(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"local x = 1\nfoo()", "global 'foo'"},
		{"local x = 1\nredis.register_function('f2', function() end)", "field 'register_function'"},
		{"local x = 1\nreturn redis.nope('a', KEYS[1])", "field 'nope'"},
		{"local t = {}\nt:m(1)", "method 'm'"},
		{"local f\nf()", "local 'f'"},
		{"local x = 1\nlocal y = string.nope(x)", "field 'nope'"},
		{"local g\nlocal function h() g() end\nh()", ""}, // the call of g is on line 2 inside h: see below
		{"local x = 1\nfoo(bar())", ""},                  // two calls: which one failed is not known
		{"local x = 1\nfoo(foo())", "global 'foo'"},      // two calls, one description
		{"local x = 1\n(x and foo or bar)()", ""},
	} {
		chunk, err := parse.Parse(strings.NewReader(c.src), "t")
		if err != nil {
			t.Fatal(err)
		}
		proto, err := lua.Compile(chunk, "t")
		if err != nil {
			t.Fatal(err)
		}
		got, ok := CallTarget(proto, 2)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q: got %q %v, want %q", c.src, got, ok, c.want)
		}
	}
	// Inside a nested function: its own proto.
	chunk, _ := parse.Parse(strings.NewReader("local g\nlocal function h()\n g()\nend"), "t")
	proto, _ := lua.Compile(chunk, "t")
	if got, ok := CallTarget(proto.FunctionPrototypes[0], 3); got != "upvalue 'g'" || !ok {
		t.Errorf("upvalue: %q %v", got, ok)
	}
}

func TestIndexTarget(t *testing.T) {
	for _, c := range []struct{ src, key, want string }{
		{"local t = {}\nreturn t.a.b", "b", "field 'a'"},
		{"local t = {}\nt.a.b = 1", "b", "field 'a'"},
		{"local t\nreturn t.x", "x", "local 't'"},
		{"local t = {}\nreturn t.a.b + t.c.b", "b", ""}, // two different tables indexed with b
		{"local x = 1\nreturn cjson.nope.x", "x", "field 'nope'"},
		{"local x = 1\nreturn foo.x", "x", "global 'foo'"},
	} {
		chunk, err := parse.Parse(strings.NewReader(c.src), "t")
		if err != nil {
			t.Fatal(err)
		}
		proto, err := lua.Compile(chunk, "t")
		if err != nil {
			t.Fatal(err)
		}
		got, ok := IndexTarget(proto, 2, c.key)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%q: got %q %v, want %q", c.src, got, ok, c.want)
		}
	}
}

func TestSetsGlobals(t *testing.T) {
	for src, want := range map[string]bool{
		"return redis.call('set', KEYS[1], ARGV[1])":            false,
		"local x = 1 x = 2 return x":                            false,
		"local t = {} t.x = 1 _G.y = 2 return t":                false,
		"x = 1":                                                 true,
		"function f() end":                                      true,
		"local function f() return function() y = 1 end end":    true,
		"local function f() return function() return y end end": false,
	} {
		chunk, err := parse.Parse(strings.NewReader(src), "user_script")
		if err != nil {
			t.Fatal(err)
		}
		proto, err := lua.Compile(chunk, "user_script")
		if err != nil {
			t.Fatal(err)
		}
		if got := SetsGlobals(proto); got != want {
			t.Errorf("SetsGlobals(%q) = %v, want %v", src, got, want)
		}
	}
}

package lualib

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestLoadChunk: a loaded chunk reads and writes globals in the env it is
// given, never in L's globals; its run-time errors carry the chunk's ID
// as Lua 5.1 prints it, and SourceLabel gives back the name it was loaded
// with; a syntax error is Lua 5.1's message, and no function.
func TestLoadChunk(t *testing.T) {
	L := newState(t)
	env := L.NewTable()
	env.RawSetString("seen", lua.LString("from env"))
	fn, msg := LoadChunk(L, "written = seen return seen", "redis = 5", env)
	if fn == nil {
		t.Fatalf("LoadChunk: %s", msg)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got := L.Get(-1); got != lua.LString("from env") {
		t.Errorf("the chunk read seen = %v, want env's", got)
	}
	L.Pop(1)
	if env.RawGetString("written") != lua.LString("from env") || L.G.Global.RawGetString("written") != lua.LNil {
		t.Errorf("the chunk's global write went to env %v, globals %v; want env only",
			env.RawGetString("written"), L.G.Global.RawGetString("written"))
	}

	for _, c := range []struct{ name, prefix, label string }{
		{"error('x')", `[string "error('x')"]:1: x`, "error('x')"},
		{"=(load)", "(load):1: x", "=(load)"},
		{"@file.lua", "file.lua:1: x", "@file.lua"},
		{strings.Repeat("b", 70), `[string "` + strings.Repeat("b", 43) + `..."]:1: x`, strings.Repeat("b", 70)},
	} {
		fn, msg := LoadChunk(L, "error('x')", c.name, env)
		if fn == nil {
			t.Fatalf("LoadChunk(%q): %s", c.name, msg)
		}
		env.RawSetString("error", L.G.Global.RawGetString("error"))
		L.Push(fn)
		err := L.PCall(0, 0, nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.prefix) {
			t.Errorf("chunk %q raised %v, want %q", c.name, err, c.prefix)
		}
		if got := SourceLabel(L, fn.Proto.SourceName); got != c.label {
			t.Errorf("SourceLabel of chunk %q = %q, want %q", c.name, got, c.label)
		}
	}
	if got := SourceLabel(L, "user_script"); got != "@user_script" {
		t.Errorf("SourceLabel(user_script) = %q, want @user_script", got)
	}
	// '=mychunk' then '@mychunk' share the ID mychunk: the latest wins.
	LoadChunk(L, "", "=mychunk", env)
	LoadChunk(L, "", "@mychunk", env)
	if got := SourceLabel(L, "mychunk"); got != "@mychunk" {
		t.Errorf("SourceLabel(mychunk) after @mychunk = %q", got)
	}

	if fn, msg := LoadChunk(L, "return 1+", "return 1+", env); fn != nil || msg != `[string "return 1+"]:1: unexpected symbol near '<eof>'` {
		t.Errorf("syntax error: %v %q", fn, msg)
	}
}

// TestChunkNamesBounded: a script compiling chunks in a loop does not
// grow the remembered names past maxChunkNames.
func TestChunkNamesBounded(t *testing.T) {
	L := newState(t)
	env := L.NewTable()
	for i := range 3 * maxChunkNames {
		LoadChunk(L, "return 1", "chunk"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26%26)), env)
	}
	names := L.G.Registry.RawGetString(chunkNamesKey).(*lua.LUserData).Value.(*chunkNames)
	if len(names.m) > maxChunkNames {
		t.Errorf("%d names kept, want at most %d", len(names.m), maxChunkNames)
	}
}

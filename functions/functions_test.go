package functions

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/lualib"
	lua "github.com/yuin/gopher-lua"
)

// newTestEngine is an engine on a Lua state with the base, string, math
// and table libraries and a run-time redis table (no register_function,
// as in Redis), the way the server opens its function state.
func newTestEngine(t *testing.T) *Engine {
	t.Helper()
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	t.Cleanup(L.Close)
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	lualib.Open(L)
	redis := L.NewTable()
	redis.RawSetString("REDIS_VERSION", lua.LString("7.0.15"))
	L.SetGlobal("redis", redis)
	return NewEngine(Config{L: L, Version: "7.0.15"})
}

// call runs f with keys and args as FCALL would and returns its result or
// the error message.
func call(t *testing.T, e *Engine, f *Function, keys, args []string) (lua.LValue, string) {
	t.Helper()
	L := e.L
	kt, at := L.NewTable(), L.NewTable()
	for i, k := range keys {
		kt.RawSetInt(i+1, lua.LString(k))
	}
	for i, a := range args {
		at.RawSetInt(i+1, lua.LString(a))
	}
	L.Push(f.Callback)
	L.Push(kt)
	L.Push(at)
	if err := L.PCall(2, 1, nil); err != nil {
		return nil, e.errorMessage(err)
	}
	v := L.Get(-1)
	L.Pop(1)
	return v, ""
}

func mustLoad(t *testing.T, e *Engine, s *Set, code string, replace bool) *Set {
	t.Helper()
	s2, _, err := e.Load(s, []byte(code), replace, LoadTimeout)
	if err != nil {
		t.Fatalf("load %q: %v", code, err)
	}
	return s2
}

// The replies of redis-server 7.0.15 to FUNCTION LOAD REPLACE <code>
// (collected with redis-cli -x against a server started with
// `redis-server --port 7395 --save ” --appendonly no`).
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"no header", "ERR Missing library metadata"},
		{"   #!lua name=e\nreturn 1", "ERR Missing library metadata"},
		{"#!lua name=x", "ERR Invalid library metadata"},
		{"#!lua\nredis.register_function('f', function() end)", "ERR Library name was not given"},
		{"#!lua name=a name=b\nx", "ERR Invalid metadata value, name argument was given multiple times"},
		{"#!lua name=\nx", "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"#!lua name=a-b\nx", "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"#!lua  name=\"c d\"\nx", "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"#!foo name=a\nx", "ERR Engine 'foo' not found"},
		{"#!foo name=a-b\nx", "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"#! name=a\nx", "ERR Engine '' not found"},
		{"#!lua name=\"c\nx", "ERR Invalid library metadata"},
		{"#!lua name=c x=y\nx", "ERR Invalid metadata value given: x=y"},
		{"#!lua name=c flags=no-writes\nx", "ERR Invalid metadata value given: flags=no-writes"},
		{"#!lua name=test foo=bar\nx", "ERR Invalid metadata value given: foo=bar"},
		{"#!lua name=d\n", "ERR No functions registered"},
		{"#!lua name=e\nreturn 1", "ERR No functions registered"},
		{"#!lua name=t1\nbad script", "ERR Error compiling function: user_function:2: '=' expected near 'script'"},
		{"#!lua name=t1\nreturn (", "ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'"},
		{"#!lua name=t1\nerror(\"boom\")", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'error'"},
		{"#!lua name=t1\nredis.register_function()", "ERR Error registering functions: ERR wrong number of arguments to redis.register_function"},
		{"#!lua name=t1\nredis.register_function('f1', function() return 1 end, {}, 'description', 'extra arg')", "ERR Error registering functions: ERR wrong number of arguments to redis.register_function"},
		{"#!lua name=t1\nredis.register_function('f')", "ERR Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."},
		{"#!lua name=t1\nredis.register_function(nil, function() return 1 end)", "ERR Error registering functions: ERR first argument to redis.register_function must be a string"},
		{"#!lua name=t1\nredis.register_function('f2', 'not a function')", "ERR Error registering functions: ERR second argument to redis.register_function must be a function"},
		{"#!lua name=t1\nredis.register_function('a-b', function() end)", "ERR Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"#!lua name=t1\nredis.register_function('', function() end)", "ERR Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"},
		{"#!lua name=t1\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}", "ERR Error registering functions: ERR unknown flag given"},
		{"#!lua name=t1\nredis.register_function{function_name='f', callback=function() end, flags={function() return 1 end}}", "ERR Error registering functions: ERR unknown flag given"},
		{"#!lua name=t1\nredis.register_function{function_name='f', callback=function() end, [1]=2}", "ERR Error registering functions: ERR unknown argument given to redis.register_function"},
		{"#!lua name=t1\nredis.register_function{function_name=function() end, callback=function() end}", "ERR Error registering functions: ERR function_name argument given to redis.register_function must be a string"},
		{"#!lua name=t1\nredis.register_function{function_name='f', callback='bad'}", "ERR Error registering functions: ERR callback argument given to redis.register_function must be a function"},
		{"#!lua name=t1\nredis.register_function{function_name='f', callback=function() end, description=function() end}", "ERR Error registering functions: ERR description argument given to redis.register_function must be a string"},
		{"#!lua name=t1\nredis.register_function{callback=function() end}", "ERR Error registering functions: ERR redis.register_function must get a function name argument"},
		{"#!lua name=t1\nredis.register_function{function_name='f'}", "ERR Error registering functions: ERR redis.register_function must get a callback argument"},
		{"#!lua name=t1\nredis.register_function{function_name='f', callback=function() end, flags='x'}", "ERR Error registering functions: ERR flags argument to redis.register_function must be a table representing function flags"},
		{"#!lua name=t1\na = 1", "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table"},
		{"#!lua name=t1\nreturn string.len(\"x\")", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'string'"},
		{"#!lua name=t1\nreturn math.random()", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'math'"},
		{"#!lua name=t1\nredis.call(\"ping\")", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"},
		{"#!lua name=t1\nreturn redis.setresp(3)", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'setresp'"},
		{"#!lua name=t1\nreturn redis.set_repl(redis.REPL_NONE)", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'set_repl'"},
		{"#!lua name=t1\nredis.math.random()", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'math'"},
		{"#!lua name=t1\nredis.redis.call('ping')", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'redis'"},
		{"#!lua name=t1\nlocal x = redis.foo", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'foo'"},
		{"#!lua name=t1\nredis.foo = 1", "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table"},
		{"#!lua name=t1\nlocal x = KEYS", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'KEYS'"},
		{"#!lua name=t1\nmt = getmetatable(_G)", "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'getmetatable'"},
		{"#!lua name=t1\nlocal t = {}\nt[nil] = 1", "ERR Error registering functions: ERR user_function:3: table index is nil"},
		{"#!lua name=t1\nredis.register_function('f', function() end)\nredis.register_function('f', function() end)", "ERR Error registering functions: ERR Function already exists in the library"},
		// Redis 7.0.15 accepts this and crashes when the library is
		// replaced; Persimmon refuses it (see the package doc).
		{"#!lua name=t1\nredis.register_function('f', function() end)\nredis.register_function('F', function() end)", "ERR Error registering functions: ERR Function already exists in the library"},
	} {
		e := newTestEngine(t)
		s := NewSet()
		_, _, err := e.Load(s, []byte(c.code), true, LoadTimeout)
		if err == nil || err.Error() != c.want {
			t.Errorf("load %q:\n got %v\nwant %s", c.code, err, c.want)
		}
		if s.LibraryCount() != 0 || s.FunctionCount() != 0 {
			t.Errorf("load %q changed the set it was given", c.code)
		}
	}
}

func TestLoadTimeout(t *testing.T) {
	e := newTestEngine(t)
	start := time.Now()
	_, _, err := e.Load(NewSet(), []byte("#!lua name=lib\nlocal a = 1\nwhile 1 do a = a + 1 end"), false, 50*time.Millisecond)
	if err == nil || err.Error() != "ERR Error registering functions: ERR FUNCTION LOAD timeout" {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("timeout of 50ms took %v", d)
	}
	// The state is usable afterwards (the context is restored).
	s := mustLoad(t, e, NewSet(), "#!lua name=lib\nredis.register_function('f', function() return 'ok' end)", false)
	if v, msg := call(t, e, s.Function("f"), nil, nil); msg != "" || v.String() != "ok" {
		t.Fatalf("call after timeout: %v %q", v, msg)
	}
}

func TestHeader(t *testing.T) {
	for _, c := range []struct{ code, engine, name, body string }{
		{"#!lua name=a\nx", "lua", "a", "\nx"},
		{"#!LUA NAME=b\nx", "LUA", "b", "\nx"},
		{"#!lua name=\"foo\"\nx", "lua", "foo", "\nx"},
		{"#!lua name='q'\nx", "lua", "q", "\nx"},
		{"#!lua name=c\r\nx", "lua", "c", "\nx"},
		{"#!lua   name=\"a\\x41\"  \nx", "lua", "aA", "\nx"},
	} {
		h, body, err := ParseHeader([]byte(c.code))
		if err != nil || h.Engine != c.engine || h.Name != c.name || string(body) != c.body {
			t.Errorf("%q: %+v %q %v", c.code, h, body, err)
		}
	}
}

func TestLoadAndCall(t *testing.T) {
	e := newTestEngine(t)
	s := NewSet()
	s = mustLoad(t, e, s, `#!lua name=lib1
local function add1(a)
    return a + 1
end
redis.register_function('f1', function(keys, args) return add1(1) end)
redis.register_function{function_name='f2', callback=function(keys, args) return add1(2) end,
  description='second', flags={'no-writes', 'ALLOW-STALE'}}
redis.register_function('f3', function(keys, args) return #keys .. ':' .. keys[1] .. ':' .. args[1] .. ':' .. string.rep('x', 2) end)
redis.register_function('f4', function() a = 1 end)
redis.register_function('f5', function() return KEYS end)
redis.register_function('f6', function() return redis.REDIS_VERSION end)
`, false)
	if s.LibraryCount() != 1 || s.FunctionCount() != 6 {
		t.Fatalf("counts %d %d", s.LibraryCount(), s.FunctionCount())
	}
	lib := s.Library("lib1")
	var names []string
	for _, f := range lib.Functions {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "f1,f2,f3,f4,f5,f6" {
		t.Fatalf("functions %v", names)
	}
	f2 := s.Function("F2") // FCALL ignores case
	if f2 == nil || f2.Description != "second" || !f2.HasDescription || f2.Flags != NoWrites|AllowStale ||
		strings.Join(f2.Flags.Names(), ",") != "no-writes,allow-stale" {
		t.Fatalf("f2 %+v", f2)
	}
	if f := s.Function("f1"); f.HasDescription || f.Flags != 0 || len(f.Flags.Names()) != 0 {
		t.Fatalf("f1 %+v", f)
	}
	for _, c := range []struct {
		fn         string
		keys, args []string
		want, err  string
	}{
		{"f1", nil, nil, "2", ""},
		{"f2", nil, nil, "3", ""},
		{"f3", []string{"k"}, []string{"a"}, "1:k:a:xx", ""},
		{"f4", nil, nil, "", "ERR user_function:9: Attempt to modify a readonly table"},
		{"f5", nil, nil, "", "ERR user_function:10: Script attempted to access nonexistent global variable 'KEYS'"},
		{"f6", nil, nil, "7.0.15", ""},
	} {
		v, msg := call(t, e, s.Function(c.fn), c.keys, c.args)
		if msg != c.err || (c.err == "" && v.String() != c.want) {
			t.Errorf("%s: got %v %q, want %q %q", c.fn, v, msg, c.want, c.err)
		}
	}
	if !bytes.HasPrefix(lib.Code, []byte("#!lua name=lib1\n")) {
		t.Fatalf("code %q", lib.Code)
	}
}

// A function that kept the load-time redis table cannot register or
// change anything at run time (Redis's "malicious access test").
func TestRunTimeSandbox(t *testing.T) {
	e := newTestEngine(t)
	s := mustLoad(t, e, NewSet(), `#!lua name=lib1
local lib = redis
lib.register_function('f1', function ()
    lib.redis = redis
    return {ok='OK'}
end)
lib.register_function('f2', function ()
    lib.register_function('f1', function () return 1 end)
end)
lib.register_function('f3', function ()
    redis.register_function('f4', function () return 1 end)
end)
`, false)
	if _, msg := call(t, e, s.Function("f1"), nil, nil); msg != "ERR user_function:4: Attempt to modify a readonly table" {
		t.Errorf("f1: %q", msg)
	}
	if _, msg := call(t, e, s.Function("f2"), nil, nil); msg != "ERR redis.register_function can only be called on FUNCTION LOAD command" {
		t.Errorf("f2: %q", msg)
	}
	// The error table says where it was raised (the reply shows it as
	// "script: f2, on @user_function:8.").
	L := e.L
	L.Push(s.Function("f2").Callback)
	if err := L.PCall(0, 0, nil); err == nil {
		t.Error("f2 did not fail")
	} else if tb, ok := err.(*lua.ApiError).Object.(*lua.LTable); !ok || tb.RawGetString("source").String() != "@user_function" || tb.RawGetString("line").String() != "8" {
		t.Errorf("f2's error table: %v", err.(*lua.ApiError).Object)
	}
	// The run-time redis table has no register_function: calling nil.
	if _, msg := call(t, e, s.Function("f3"), nil, nil); !strings.Contains(msg, "user_function:11:") {
		t.Errorf("f3: %q", msg)
	}
	if len(s.Library("lib1").Functions) != 3 {
		t.Errorf("functions registered at run time")
	}
}

func TestReplaceAndCollisions(t *testing.T) {
	e := newTestEngine(t)
	s := mustLoad(t, e, NewSet(), "#!lua name=test\nredis.register_function('test', function() return 'hello' end)", false)
	if _, _, err := e.Load(s, []byte("#!lua name=test\nredis.register_function('test', function() return 'hello1' end)"), false, LoadTimeout); err == nil || err.Error() != "ERR Library 'test' already exists" {
		t.Fatalf("got %v", err)
	}
	// A failed REPLACE keeps the old library.
	if _, _, err := e.Load(s, []byte("#!lua name=test\nerror"), true, LoadTimeout); err == nil {
		t.Fatal("bad replace loaded")
	}
	if v, _ := call(t, e, s.Function("TEST"), nil, nil); v.String() != "hello" {
		t.Fatalf("after failed replace: %v", v)
	}
	s2 := mustLoad(t, e, s, "#!lua name=test\nredis.register_function('test', function() return 'hello1' end)", true)
	if v, _ := call(t, e, s2.Function("test"), nil, nil); v.String() != "hello1" {
		t.Fatalf("after replace: %v", v)
	}
	if v, _ := call(t, e, s.Function("test"), nil, nil); v.String() != "hello" {
		t.Fatalf("the old set changed: %v", v)
	}
	// A function name taken by another library (any case).
	if _, _, err := e.Load(s2, []byte("#!lua name=lib2\nredis.register_function('Test', function() return 1 end)"), true, LoadTimeout); err == nil || err.Error() != "ERR Function Test already exists" {
		t.Fatalf("got %v", err)
	}
	s3, err := s2.Delete("test")
	if err != nil || s3.LibraryCount() != 0 || s3.FunctionCount() != 0 || s3.Function("test") != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s3.Delete("test"); err == nil || err.Error() != "ERR Library not found" {
		t.Fatalf("delete missing: %v", err)
	}
}

// A FUNCTION DUMP of redis-server 7.0.15 holding lib2 and lib1 (below),
// lib1 LZF-compressed.
const redisDump = "f5405123216c7561206e616d653d6c6962320a72656469732e72656769737465725f66756e6374696f6e282767272c2066756e6374696f6e286b6579732c2061726773292072657475726e2027672720656e6429f5c340ec417e1f23216c7561206e616d653d6c6962310a2d2d206120636f6d6d656e74207468610b7420726570656174733a2061e04100160a6c6f63616c2066756e6374696f6e2061646431286129206b02747572200e17202b203120656e640a72656469732e72656769737465725fc0300528276631272ce0003f0a286b6579732c2061726773e00143405201312940450029e00f46007bc04f005f61000227663220542098056c6261636b3dc01ce0105d0032605d20860f6c6167733d7b276e6f2d777269746573204500272045126f772d7374616c65277d2c206465736372697040ed0a3d277365636f6e64277d0a0a0035cc840a8083a483"

const redisLib1 = "#!lua name=lib1\n-- a comment that repeats: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nlocal function add1(a) return a + 1 end\nredis.register_function('f1', function(keys, args) return add1(1) end)\nredis.register_function{function_name='f2', callback=function(keys, args) return add1(2) end, flags={'no-writes', 'allow-stale'}, description='second'}\n"
const redisLib2 = "#!lua name=lib2\nredis.register_function('g', function(keys, args) return 'g' end)"

func TestRestoreRedisDump(t *testing.T) {
	e := newTestEngine(t)
	payload, _ := hex.DecodeString(redisDump)
	s, err := e.Restore(NewSet(), payload, Append)
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Library("lib1").Code) != redisLib1 || string(s.Library("lib2").Code) != redisLib2 {
		t.Fatalf("codes %q", s.Codes())
	}
	if f := s.Function("f2"); f.Flags != NoWrites|AllowStale || f.Description != "second" {
		t.Fatalf("f2 %+v", f)
	}
	// Persimmon's DUMP lists lib1 first (name order); with lib2 first its
	// bytes are redis-server's.
	s2, err := e.Restore(NewSet(), Dump(s), Append)
	if err != nil || strings.Join(toStrings(s2.Codes()), "|") != redisLib1+"|"+redisLib2 {
		t.Fatalf("round trip: %v", err)
	}
}

func toStrings(b [][]byte) []string {
	s := make([]string, len(b))
	for i := range b {
		s[i] = string(b[i])
	}
	return s
}

// Redis's "test function restore with function name collision" and the
// restore policies.
func TestRestorePolicies(t *testing.T) {
	e := newTestEngine(t)
	s := mustLoad(t, e, NewSet(), `#!lua name=lib1
local function add1(a) return a + 1 end
redis.register_function('f1', function(keys, args) return add1(1) end)
redis.register_function('f2', function(keys, args) return add1(2) end)
redis.register_function('f3', function(keys, args) return add1(3) end)`, false)
	dump := Dump(s)
	cur := mustLoad(t, e, NewSet(), "#!lua name=lib1\nredis.register_function('f6', function(keys, args) return 7 end)", false)
	cur = mustLoad(t, e, cur, `#!lua name=lib2
redis.register_function('f4', function(keys, args) return 5 end)
redis.register_function('f5', function(keys, args) return 6 end)
redis.register_function('f3', function(keys, args) return 4 end)`, false)
	if _, err := e.Restore(cur, dump, Append); err == nil || err.Error() != "ERR Library lib1 already exists" {
		t.Fatalf("append: %v", err)
	}
	if _, err := e.Restore(cur, dump, Replace); err == nil || err.Error() != "ERR Function f3 already exists" {
		t.Fatalf("replace: %v", err)
	}
	if cur.FunctionCount() != 4 || cur.Function("f6") == nil {
		t.Fatal("a failed restore changed the set")
	}
	fl, err := e.Restore(cur, dump, Flush)
	if err != nil || fl.LibraryCount() != 1 || fl.FunctionCount() != 3 {
		t.Fatalf("flush: %v", err)
	}
	cur2, _ := cur.Delete("lib2")
	rep, err := e.Restore(cur2, dump, Replace)
	if err != nil || rep.Function("f6") != nil || rep.Function("f1") == nil {
		t.Fatalf("replace: %v", err)
	}
	if v, _ := call(t, e, rep.Function("f3"), nil, nil); v.String() != "4" {
		t.Fatalf("f3 %v", v)
	}
	app, err := e.Restore(mustLoad(t, e, NewSet(), "#!lua name=lib9\nredis.register_function('f9', function() return 9 end)", false), dump, Append)
	if err != nil || app.LibraryCount() != 2 || app.FunctionCount() != 4 {
		t.Fatalf("append: %v", err)
	}
	for _, c := range []struct {
		payload []byte
		want    string
	}{
		{[]byte("bad_payload"), "ERR DUMP payload version or checksum are wrong"},
		{Dump(NewSet())[:9], "ERR DUMP payload version or checksum are wrong"},
		{withFooter([]byte{0, 1, 'a'}), "ERR given type is not a function"},
		{withFooter([]byte{245, 50, 'a'}), "ERR Failed loading library payload"},
		{withFooter(append(Dump(s)[:len(Dump(s))-10:len(Dump(s))-10], Dump(s)[:len(Dump(s))-10]...)), "ERR Library 'lib1' already exists"},
		{withFooter([]byte{245, 3, 'a', 'b', 'c'}), "ERR Missing library metadata"},
	} {
		if _, err := e.Restore(cur, c.payload, Append); err == nil || err.Error() != c.want {
			t.Errorf("restore %q: got %v want %s", c.payload, err, c.want)
		}
	}
	if s, err := e.Restore(cur, Dump(NewSet()), Flush); err != nil || s.LibraryCount() != 0 {
		t.Errorf("restore of an empty dump with FLUSH: %v", err)
	}
	if _, err := ParseRestorePolicy("bad"); !errors.Is(err, ErrBadRestorePolicy) {
		t.Errorf("policy: %v", err)
	}
}

// withFooter appends a DUMP footer (version 10, CRC64) to records.
func withFooter(records []byte) []byte {
	d := Dump(NewSet()) // footer only
	p := append(records, d[:2]...)
	return appendCRC(p)
}

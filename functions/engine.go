package functions

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/persimmon-db/persimmon/lualib"
	"github.com/persimmon-db/persimmon/rdb"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// LoadTimeout bounds how long FUNCTION LOAD may run a library's code
// (Redis's LOAD_TIMEOUT_MS).
const LoadTimeout = 500 * time.Millisecond

// ChunkName is the name Lua gives library code in error positions
// ("user_function:2: ...").
const ChunkName = "user_function"

// EngineName is the one engine there is, as FUNCTION LIST names it.
const EngineName = "LUA"

// Config is what an Engine needs from the server.
type Config struct {
	// L is the Lua state the libraries live in. Its globals are what
	// functions see at run time; the caller opens them (base library,
	// cjson, redis.call, ...) before or after NewEngine.
	L *lua.LState
	// RunIndex resolves global names while functions run: the __index of
	// the libraries' environment outside loads (a table or a function).
	// Nil: L's globals, a missing name being "Script attempted to access
	// nonexistent global variable".
	RunIndex lua.LValue
	// Version is REDIS_VERSION (REDIS_VERSION_NUM is made from it).
	Version string
	// Log is redis.log as a library's code may call it while it loads;
	// nil: a function that checks nothing and logs nothing.
	Log lua.LGFunction
	// ErrorText rewords a Lua run-time error message (gopher-lua's words
	// into Lua 5.1's); nil leaves messages as they are.
	ErrorText func(string) string
}

// Engine loads libraries into one Lua state. It is not safe for
// concurrent use (the server calls it under its keyspace lock, as it runs
// scripts).
type Engine struct {
	L         *lua.LState
	env       *lua.LTable // every library chunk's environment, so its functions' too
	envMeta   *lua.LTable
	loadIndex *lua.LTable // env's __index while a library loads
	runIndex  lua.LValue
	errorText func(string) string
	loading   *Library // the library being loaded; nil outside a load
}

// NewEngine makes the environment libraries run in, on cfg.L.
func NewEngine(cfg Config) *Engine {
	L := cfg.L
	e := &Engine{L: L, runIndex: cfg.RunIndex, errorText: cfg.ErrorText}
	if e.errorText == nil {
		e.errorText = func(s string) string { return s }
	}
	if e.runIndex == nil {
		g := L.G.Global
		e.runIndex = L.NewFunction(func(L *lua.LState) int {
			v := g.RawGet(L.Get(2))
			if v == lua.LNil {
				L.RaiseError("Script attempted to access nonexistent global variable '%s'", lualib.ToString(L.Get(2)))
			}
			L.Push(v)
			return 1
		})
	}
	logf := cfg.Log
	if logf == nil {
		logf = func(*lua.LState) int { return 0 }
	}
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(e.registerFunction))
	api.RawSetString("log", L.NewFunction(logf))
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3} {
		api.RawSetString(name, lua.LNumber(v))
	}
	api.RawSetString("REDIS_VERSION", lua.LString(cfg.Version))
	api.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(cfg.Version)))
	loadGlobals := L.NewTable()
	loadGlobals.RawSetString("redis", strictProxy(L, api))
	e.loadIndex = strictProxy(L, loadGlobals)

	e.env = L.NewTable()
	e.envMeta = L.NewTable()
	e.envMeta.RawSetString("__index", e.runIndex)
	e.envMeta.RawSetString("__newindex", L.NewFunction(readonlyError))
	e.envMeta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(e.env, e.envMeta)
	return e
}

// strictProxy is an empty table that reads through to real, raising
// Redis's nonexistent-global error for a missing name, and refuses writes.
func strictProxy(L *lua.LState, real *lua.LTable) *lua.LTable {
	p := L.NewTable()
	m := L.NewTable()
	m.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		v := real.RawGet(L.Get(2))
		if v == lua.LNil {
			L.RaiseError("Script attempted to access nonexistent global variable '%s'", lualib.ToString(L.Get(2)))
		}
		L.Push(v)
		return 1
	}))
	m.RawSetString("__newindex", L.NewFunction(readonlyError))
	m.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(p, m)
	return p
}

func readonlyError(L *lua.LState) int {
	L.RaiseError("Attempt to modify a readonly table")
	return 0
}

// versionNum is REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNum(v string) int {
	n := 0
	for part := range strings.SplitSeq(v, ".") {
		x, _ := strconv.Atoi(part)
		n = n<<8 | x
	}
	return n
}

// Env is the environment of every library's code and functions: a
// function's globals resolve through it to the run-time index.
func (e *Engine) Env() *lua.LTable { return e.env }

// Load returns s with the library whose code is given added (or, with
// replace, put in place of the library of the same name), and the
// library's name. The checks come in Redis's order: header, name,
// engine, a library of that name (without replace), compiling, running the
// code (timeout 0: no limit), at least one function, function names
// taken by other libraries. On error s is unchanged.
func (e *Engine) Load(s *Set, code []byte, replace bool, timeout time.Duration) (*Set, *Library, error) {
	h, body, err := ParseHeader(code)
	if err != nil {
		return nil, nil, err
	}
	if !ValidName(h.Name) {
		return nil, nil, ErrBadName
	}
	if !equalFoldASCII(h.Engine, EngineName) {
		return nil, nil, errors.New("ERR Engine '" + h.Engine + "' not found")
	}
	old := s.libs[h.Name]
	if old != nil && !replace {
		return nil, nil, errors.New("ERR Library '" + h.Name + "' already exists")
	}
	lib := &Library{Name: h.Name, Engine: EngineName, Code: slices.Clone(code)}
	if err := e.run(lib, body, timeout); err != nil {
		return nil, nil, err
	}
	if len(lib.Functions) == 0 {
		return nil, nil, errors.New("ERR No functions registered")
	}
	slices.SortFunc(lib.Functions, func(a, b *Function) int { return strings.Compare(a.Name, b.Name) })
	c := s.clone()
	if old != nil {
		c.unlink(old)
	}
	if f := c.collision(lib); f != nil {
		return nil, nil, errors.New("ERR Function " + f.Name + " already exists")
	}
	c.link(lib)
	return c, lib, nil
}

// LoadAll returns the set of the libraries whose codes are given, loaded
// without a time limit: start-up (the durable record) and RESTORE. Two
// libraries of one name, or one function name in two libraries, is an
// error as in Load.
func (e *Engine) LoadAll(codes [][]byte) (*Set, error) {
	s := NewSet()
	for _, code := range codes {
		var err error
		if s, _, err = e.Load(s, code, false, 0); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ErrBadPayload is FUNCTION RESTORE's error for a payload whose footer is
// wrong.
var ErrBadPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// Dump is the FUNCTION DUMP payload of s.
func Dump(s *Set) []byte { return rdb.DumpFunctions(s.Codes()) }

// Restore returns s with the libraries of a FUNCTION DUMP payload added by
// policy. On error s is unchanged.
func (e *Engine) Restore(s *Set, payload []byte, policy RestorePolicy) (*Set, error) {
	codes, err := rdb.ReadFunctionsDump(payload)
	switch {
	case errors.Is(err, rdb.ErrChecksum):
		return nil, ErrBadPayload
	case errors.Is(err, rdb.ErrNotFunction):
		return nil, errors.New("ERR " + rdb.ErrNotFunction.Error())
	case err != nil:
		return nil, errors.New("ERR " + rdb.ErrFunctionPayload.Error())
	}
	src, err := e.LoadAll(codes)
	if err != nil {
		return nil, err
	}
	if policy == Flush {
		return src, nil
	}
	return s.join(src, policy == Replace)
}

// run compiles body and runs it with the load-time globals, collecting
// the functions it registers into lib.
func (e *Engine) run(lib *Library, body []byte, timeout time.Duration) error {
	if err := lualib.CheckSyntax(body, ChunkName); err != nil {
		return errors.New(oneLine("ERR Error compiling function: " + err.Error()))
	}
	chunk, err := parse.Parse(bytes.NewReader(body), ChunkName)
	if err != nil {
		return compileError(err)
	}
	proto, err := lua.Compile(chunk, ChunkName)
	if err != nil {
		return compileError(err)
	}
	L := e.L
	fn := L.NewFunctionFromProto(proto)
	fn.Env = e.env

	saved := L.Context()
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	L.SetContext(ctx)
	e.envMeta.RawSetString("__index", e.loadIndex)
	e.loading = lib
	top := L.GetTop()
	defer func() {
		e.loading = nil
		e.envMeta.RawSetString("__index", e.runIndex)
		cancel()
		if saved != nil {
			L.SetContext(saved)
		} else {
			L.RemoveContext()
		}
		L.SetTop(top)
	}()
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		if ctx.Err() != nil {
			return errors.New("ERR Error registering functions: ERR FUNCTION LOAD timeout")
		}
		return errors.New(oneLine("ERR Error registering functions: " + e.errorMessage(err)))
	}
	return nil
}

// errorMessage is the message of an error raised in Lua: an error table's
// err field, or "ERR " and the error's text.
func (e *Engine) errorMessage(err error) string {
	var obj lua.LValue = lua.LString(err.Error())
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) && apiErr.Object != nil {
		obj = apiErr.Object
	}
	if t, ok := obj.(*lua.LTable); ok {
		if s, ok := t.RawGetString("err").(lua.LString); ok {
			return string(s)
		}
		return "ERR unknown error"
	}
	return "ERR " + e.errorText(lualib.ToString(obj))
}

func compileError(err error) error {
	text := strings.TrimSpace(err.Error())
	var pe *parse.Error
	if errors.As(err, &pe) {
		if pe.Pos.Line == parse.EOF {
			text = ChunkName + ": " + pe.Message + " near <eof>"
		} else {
			text = ChunkName + ":" + strconv.Itoa(pe.Pos.Line) + ": " + pe.Message + " near '" + pe.Token + "'"
		}
	}
	return errors.New(oneLine("ERR Error compiling function: " + text))
}

// oneLine replaces CR and LF, which an error reply cannot hold, with spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// raise raises Redis's error table {err="ERR <msg>", source=, line=}:
// where the calling Lua code is, as Redis's luaPushError notes it. A
// load's error reply shows the message only; a run's (a function that
// kept the load-time redis table) shows the position too.
func raise(L *lua.LState, msg string) int {
	t := L.NewTable()
	t.RawSetString("err", lua.LString("ERR "+msg))
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, nil); err == nil && dbg.CurrentLine > 0 {
			t.RawSetString("source", lua.LString("@"+dbg.Source))
			t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		}
	}
	L.Error(t, 0)
	return 0
}

// luaString is Redis's luaGetStringSds: a string, or a number as Lua
// 5.1's tostring writes it.
func luaString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return lualib.NumberString(float64(v)), true
	}
	return "", false
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=, callback=, description=,
// flags=}.
func (e *Engine) registerFunction(L *lua.LState) int {
	lib := e.loading
	if lib == nil {
		return raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &Function{Library: lib}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			return raise(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		if msg := readNamedArgs(t, f); msg != "" {
			return raise(L, msg)
		}
	case 2:
		name, ok := luaString(L.Get(1))
		if !ok {
			return raise(L, "first argument to redis.register_function must be a string")
		}
		if L.Get(2).Type() != lua.LTFunction {
			return raise(L, "second argument to redis.register_function must be a function")
		}
		f.Name, f.Callback = name, L.Get(2)
	default:
		return raise(L, "wrong number of arguments to redis.register_function")
	}
	if !ValidName(f.Name) {
		return raise(L, strings.TrimPrefix(ErrBadName.Error(), "ERR "))
	}
	for _, g := range lib.Functions {
		if equalFoldASCII(g.Name, f.Name) {
			return raise(L, "Function already exists in the library")
		}
	}
	lib.Functions = append(lib.Functions, f)
	return 0
}

// readNamedArgs fills f from register_function's table form; it returns
// the error message, or "".
func readNamedArgs(t *lua.LTable, f *Function) string {
	named := false
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		key, ok := luaString(k)
		if !ok {
			return "named argument key given to redis.register_function is not a string"
		}
		switch {
		case equalFoldASCII(key, "function_name"):
			if f.Name, ok = luaString(v); !ok {
				return "function_name argument given to redis.register_function must be a string"
			}
			named = true
		case equalFoldASCII(key, "description"):
			if f.Description, ok = luaString(v); !ok {
				return "description argument given to redis.register_function must be a string"
			}
			f.HasDescription = true
		case equalFoldASCII(key, "callback"):
			if v.Type() != lua.LTFunction {
				return "callback argument given to redis.register_function must be a function"
			}
			f.Callback = v
		case equalFoldASCII(key, "flags"):
			flags, ok := v.(*lua.LTable)
			if !ok {
				return "flags argument to redis.register_function must be a table representing function flags"
			}
			for i := 1; ; i++ {
				fv := flags.RawGetInt(i)
				if fv == lua.LNil {
					break
				}
				s, ok := luaString(fv)
				flag, known := ParseFlag(s)
				if !ok || !known {
					return "unknown flag given"
				}
				f.Flags |= flag
			}
		default:
			return "unknown argument given to redis.register_function"
		}
	}
	if !named {
		return "redis.register_function must get a function name argument"
	}
	if f.Callback == nil {
		return "redis.register_function must get a callback argument"
	}
	return ""
}

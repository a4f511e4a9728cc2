package server

// Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (semantics:
// redis.io/commands/eval, "Scripting with Lua" and "Redis Lua API
// reference", Redis 7.0), on gopher-lua (Lua 5.1).
//
// Atomicity and durability: EVAL is an ordinary locked command, so the
// keyspace lock is held for the whole script and no other client's command
// interleaves with it. Outside EXEC the script's commands form one
// transaction group (BeginTxn/EndTxn, as EXEC does), so recovery applies
// them whole or not at all (DESIGN.md invariant 2); inside EXEC they belong
// to EXEC's group. As in Redis a script error does not roll back the writes
// made before it: they are committed with the group. The reply leaves after
// the group is durable, through the batch LSN like every command's.
//
// redis.call runs a command through the server's own command table on the
// calling client (its database, its connection's commandstats), with the
// connection marked inExec so blocking commands that are allowed in scripts
// (BLMPOP, BZMPOP) answer at once as they do inside MULTI. The command's
// reply is captured from the client's output buffer and parsed back into
// Lua values. A SELECT inside a script changes the database for the rest of
// the script only.
//
// One Lua state per server serves every script: scripts run under the
// keyspace lock, which also guards the script cache. Scripts see a
// read-only global environment (Redis 7): reading an undefined global or
// assigning any global is an error, and the library tables (string,
// cjson, redis, ...) and _G are read-only proxies of the real tables
// (next, pairs and rawget see through them; rawset refuses them). What
// loadstring and load compile runs in that environment too (L.Env), and
// a script that assigns no global at all reads the globals table
// directly, which refuses undefined names the same way. The
// globals are Redis 7.0's: the base library without print, dofile,
// loadfile, getfenv, setfenv, newproxy, require and module; table,
// string, math and coroutine; cjson, cmsgpack, bit and struct (package
// lualib); redis.*. redis.setresp(3) is refused: the server speaks RESP2
// only, so no command reply has a RESP3 shape to convert. SCRIPT DEBUG is
// not served; redis.breakpoint and redis.debug answer as outside a debug
// session (false, nothing). A script is first checked against Lua 5.1's
// grammar (lualib.CheckSyntax) so compile errors read as Redis's do;
// run-time errors raised by gopher-lua's VM are reworded as Lua 5.1's
// (luaRuntimeText; "attempt to call local 't' (a number value)" and
// "attempt to index local 't' (a nil value)" name the operand where the
// line's bytecode and the values read back in the error handler tell it,
// see nameOperand and callCulprit; errors raised through coroutine.wrap
// lack the second position Lua 5.1 adds); numbers concatenated with .. keep gopher-lua's
// shortest form (not "%.14g"; tostring is Lua 5.1's). A script that runs past
// busy-reply-threshold makes the server busy: scriptbusy.go has the rules
// (BUSY replies, SCRIPT KILL, SHUTDOWN NOSAVE).

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"math"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/acl"
	"github.com/persimmon-db/persimmon/lualib"
	"github.com/persimmon-db/persimmon/proto"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Redis's script error texts.
const (
	errNoScript          = "NOSCRIPT No matching script. Please use EVAL."
	errScriptNotAllowed  = "ERR This Redis command is not allowed from script"
	errScriptUnknownCmd  = "ERR Unknown Redis command called from script"
	errScriptWrongArgs   = "ERR Wrong number of args calling Redis command from script"
	errScriptNoArgs      = "ERR Please specify at least one argument for this redis lib call"
	errScriptArgType     = "ERR Lua redis lib command arguments must be strings or integers"
	errScriptWriteInRO   = "ERR Write commands are not allowed from read-only scripts."
	errScriptWriteFlagRO = "ERR Can not execute a script with write flag using *_ro command."
	errScriptStale       = "ERR Can not execute the command on a stale replica"
	errReadonlyTable     = "Attempt to modify a readonly table"
	errScriptStackLimit  = "ERR reached lua stack limit"
	scriptChunkName      = "user_script"
	maxScriptReplyDepth  = 1000 // nesting of a script's reply before "reached lua stack limit"
	luaCallStackSize     = 1024
	luaRegistrySize      = 1024 * 20
	luaRegistryMaxSize   = 1024 * 1024 * 16
	scriptErrSourceLabel = "@" + scriptChunkName
)

// cachedScript is one compiled script body.
type cachedScript struct {
	sha      string // its key in the cache
	proto    *lua.FunctionProto
	noWrites bool           // shebang flags=no-writes: runs as EVAL_RO
	allowOOM bool           // shebang flags=allow-oom: writes past maxmemory (maxmemory.go)
	shebang  bool           // has a #!lua line (Redis 7's non-compatible mode)
	fn       *lua.LFunction // the function made from proto for Lua state gen
	gen      int
	// allowStale: shebang flags=allow-stale: runs on a replica whose
	// master is down under replica-serve-stale-data no
	allowStale bool
	// direct: the script assigns no global (lualib.SetsGlobals), so it
	// runs with the globals table itself as its environment (runScript).
	direct bool
}

// scriptRun is the script running now.
type scriptRun struct {
	c        *Client
	resp     int // the protocol redis.call replies are parsed in (redis.setresp)
	readOnly bool
	allowOOM bool           // its flags say allow-oom: denyoom calls run past maxmemory
	state    *runningScript // for SCRIPT KILL: whether it wrote
	errLine  int            // line of the last error() call, for errors without a position
	errSrc   string         // its source label (lualib.SourceLabel), "" for the script's own
}

// scriptEngine is a server's Lua state and script cache. Every field is
// guarded by the keyspace lock.
type scriptEngine struct {
	L       *lua.LState
	globals *lua.LTable // the real globals (library tables, KEYS, ARGV)
	env     *lua.LTable // what scripts see: a read-only view of globals
	scripts map[string]*cachedScript
	run     *scriptRun
	logf    func(string, ...any)

	gen        int            // counts Lua states (reset), for cachedScript.fn
	keys, argv *lua.LTable    // KEYS and ARGV, refilled for each run
	ctx        *killContext   // what the Lua VM checks before each instruction
	errFunc    *lua.LFunction // runs where an error is raised: notes its line
	rand       *lualib.Rand48 // math.random's generator
	count      *atomic.Int64  // the server's cachedScripts

	// redis.call's arguments: bytes, where each ends, the slices
	// (reused from call to call, see luaCall).
	callBuf  []byte
	callEnds []int
	callArgs [][]byte
	// callHit: the command redis.call ran last, when it has no
	// subcommands; a script that calls one command again and again (or
	// each run of one script) skips the table's lookup (the connection's
	// own one-entry cache, conn.resolve, holds EVALSHA).
	callHit *Command
	runBuf  scriptRun // what run points to while a script runs

	// setArgs: the bytes of a run's arguments that changed (the new
	// elements are substrings of them as one string), and argTable's
	// LNumber keys boxed once.
	argBuf  []byte
	argSame []bool // per argument: kept from the run before (setArgs)
	argKeys []lua.LValue

	// redis.call's {ok="OK"} tables, reused from run to run (okReply):
	// okUsed of them were handed out in the run now. Only for EVAL's
	// engine (reuseOK): a function library can keep a table in an upvalue
	// from one call to the next.
	reuseOK  bool
	okTables []*lua.LTable
	okUsed   int
}

// scriptEngine returns the server's script engine, made on first use.
// Call it with the keyspace lock held (it guards Server.scripting too).
func (s *Server) scriptEngine() *scriptEngine {
	if s.scripting == nil {
		s.scripting = newScriptEngine(s.logf)
		s.scripting.count = &s.cachedScripts
		s.scripting.reuseOK = true
	}
	return s.scripting
}

func newScriptEngine(logf func(string, ...any)) *scriptEngine {
	e := &scriptEngine{scripts: make(map[string]*cachedScript), logf: logf}
	e.reset()
	return e
}

// reset makes a fresh Lua state (SCRIPT FLUSH does this too, as Redis does).
func (e *scriptEngine) reset() {
	if e.L != nil {
		e.L.Close()
	}
	L := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    luaCallStackSize,
		RegistrySize:     luaRegistrySize,
		RegistryMaxSize:  luaRegistryMaxSize,
		RegistryGrowStep: luaRegistrySize,
	})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	lualib.Open(L)
	g := L.G.Global
	for _, name := range []string{"print", "dofile", "loadfile", "require", "module", "_printregs",
		"getfenv", "setfenv", "newproxy"} {
		g.RawSetString(name, lua.LNil)
	}
	g.RawSetString("error", L.NewFunction(e.luaError))
	g.RawSetString("pcall", L.NewFunction(luaPCall))
	g.RawSetString("gcinfo", L.NewFunction(luaGCInfo))
	g.RawSetString("__redis__err__handler", L.NewFunction(luaErrHandler))
	g.RawSetString("_GOPHER_LUA_VERSION", lua.LNil)
	tostring := g.RawGetString("tostring").(*lua.LFunction)
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		switch v := L.Get(1); {
		case v.Type() == lua.LTNumber:
			L.Push(lua.LString(lualib.NumberString(float64(v.(lua.LNumber))))) // Lua 5.1's "%.14g"
			return 1
		case lualib.IsNull(v):
			L.Push(lua.LString("userdata: (nil)")) // cjson.null, a light userdata NULL
			return 1
		}
		return tostring.GFunction(L)
	}))
	addLua51Compat(L, g)
	if m, ok := g.RawGetString("math").(*lua.LTable); ok {
		if e.rand == nil {
			e.rand = lualib.NewRand48() // a C global in Redis: SCRIPT FLUSH keeps its state
		}
		lualib.OpenRandom(L, m, e.rand)
	}
	g.RawSetString("unpack", L.NewFunction(luaUnpack))
	// loadstring and load compile with Lua 5.1's grammar and chunk names
	// ([string "..."], "=(load)"), and what they compile runs in L.Env,
	// the read-only environment scripts see (set below): gopher-lua's
	// would run in the real globals, where a chunk could replace redis or
	// cjson for every later script. A binary chunk is text to them, as in
	// Redis.
	g.RawSetString("loadstring", L.NewFunction(luaLoadString))
	g.RawSetString("load", L.NewFunction(luaLoad))
	if str, ok := g.RawGetString("string").(*lua.LTable); ok {
		str.RawSetString("rep", L.NewFunction(luaStringRep))
		// gopher-lua has no bytecode to dump: a Lua 5.1 x86-64 header
		// stands for it, which loadstring refuses as Redis's does.
		str.RawSetString("dump", L.NewFunction(func(L *lua.LState) int {
			L.CheckFunction(1)
			L.Push(lua.LString("\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"))
			return 1
		}))
	}
	g.RawSetString("tonumber", L.NewFunction(luaToNumber))
	if m, ok := g.RawGetString("math").(*lua.LTable); ok {
		m.RawSetString("huge", lua.LNumber(math.Inf(1))) // HUGE_VAL; gopher-lua has MaxFloat64
	}

	redis := L.NewTable()
	redis.RawSetString("call", L.NewFunction(func(L *lua.LState) int { return e.luaCall(L, true) }))
	redis.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int { return e.luaCall(L, false) }))
	redis.RawSetString("error_reply", L.NewFunction(luaErrorReply))
	redis.RawSetString("status_reply", L.NewFunction(luaStatusReply))
	redis.RawSetString("sha1hex", L.NewFunction(luaSHA1Hex))
	redis.RawSetString("log", L.NewFunction(e.luaLog))
	redis.RawSetString("setresp", L.NewFunction(e.luaSetResp))
	redis.RawSetString("set_repl", L.NewFunction(e.luaSetRepl))
	redis.RawSetString("replicate_commands", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LTrue); return 1 }))
	redis.RawSetString("breakpoint", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LFalse); return 1 }))
	redis.RawSetString("debug", L.NewFunction(func(L *lua.LState) int { return 0 }))
	redis.RawSetString("acl_check_cmd", L.NewFunction(e.luaACLCheckCmd))
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": replNone, "REPL_AOF": replAOF, "REPL_SLAVE": replReplica, "REPL_REPLICA": replReplica, "REPL_ALL": replAOF | replReplica} {
		redis.RawSetString(name, lua.LNumber(v))
	}
	redis.RawSetString("REDIS_VERSION", lua.LString(Version))
	redis.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(Version)))
	g.RawSetString("redis", redis)

	// Globals are read-only (Redis 7): the scripts' environment is an empty
	// table whose reads fall through to the globals and whose writes fail;
	// the globals table itself refuses new names, and _G and the library
	// tables are read-only proxies.
	readonly := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonlyTable)
		return 0
	})
	proxies := make(map[*lua.LTable]*lua.LTable)
	var proxy func(real *lua.LTable, depth int) *lua.LTable
	proxy = func(real *lua.LTable, depth int) *lua.LTable {
		p := L.NewTable()
		m := L.NewTable()
		m.RawSetString("__index", real)
		m.RawSetString("__newindex", readonly)
		// getmetatable answers a read-only view of the metatable too.
		if depth == 0 {
			m.RawSetString("__metatable", proxy(m, 1))
		} else {
			m.RawSetString("__metatable", lua.LFalse)
		}
		L.SetMetatable(p, m)
		proxies[p] = real
		return p
	}
	for _, name := range []string{"string", "table", "math", "coroutine", "cjson", "cmsgpack", "bit", "struct", "redis"} {
		if t, ok := g.RawGetString(name).(*lua.LTable); ok {
			g.RawSetString(name, proxy(t, 0))
		}
	}
	// The string metatable's __index is the string library: the proxy;
	// getmetatable("") answers a proxy of the metatable.
	if p, ok := g.RawGetString("string").(*lua.LTable); ok && proxies[p] != nil {
		proxies[p].RawSetString("__index", lua.LNil) // gopher-lua's string table is its own metatable
	}
	sm := L.NewTable()
	sm.RawSetString("__index", g.RawGetString("string"))
	sm.RawSetString("__metatable", proxy(sm, 1))
	L.SetMetatable(lua.LString(""), sm)
	setmetatable := g.RawGetString("setmetatable").(*lua.LFunction)
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && (proxies[t] != nil || t == g) {
			luaFail(L, true, errReadonlyTable)
		}
		return setmetatable.GFunction(L)
	}))
	g.RawSetString("_G", proxy(g, 0))
	unwrap := func(L *lua.LState, n int) *lua.LTable {
		t := L.CheckTable(n)
		if real := proxies[t]; real != nil {
			return real
		}
		return t
	}
	next := L.NewFunction(func(L *lua.LState) int {
		t := unwrap(L, 1)
		k, v := t.Next(L.Get(2))
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(v)
		return 2
	})
	g.RawSetString("next", next)
	g.RawSetString("pairs", L.NewFunction(func(L *lua.LState) int {
		L.CheckTable(1)
		L.Push(next)
		L.Push(L.Get(1))
		L.Push(lua.LNil)
		return 3
	}))
	g.RawSetString("rawget", L.NewFunction(func(L *lua.LState) int {
		t := unwrap(L, 1)
		L.Push(t.RawGet(L.CheckAny(2)))
		return 1
	}))
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		if proxies[t] != nil || t == g {
			luaFail(L, true, errReadonlyTable)
		}
		k, v := L.CheckAny(2), L.CheckAny(3)
		if k == lua.LNil {
			L.RaiseError("table index is nil")
		}
		t.RawSet(k, v)
		L.Push(t)
		return 1
	}))
	// A global read falls through env to g by table (no Go call, no
	// allocation: every redis.call, KEYS and ARGV is one); only a name g
	// does not hold reaches g's __index, which raises, as Redis 7's
	// globals table does (so _G.x of an undefined x raises too).
	gmeta := L.NewTable()
	gmeta.RawSetString("__newindex", readonly)
	gmeta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.Get(2).String())
		return 0
	}))
	L.SetMetatable(g, gmeta)
	// getmetatable answers what Redis 7's does, and never a way to the
	// real tables: nil for the library proxies (Redis's library tables
	// have no metatable), and for _G a read-only view of a metatable whose
	// __index is the function that refuses undeclared names. A view that
	// named the proxied table (its __index) would let a script write
	// through it, into redis.call or KEYS for every later script.
	gview := L.NewTable()
	gview.RawSetString("__index", gmeta.RawGetString("__index"))
	gview.RawSetString("__newindex", readonly)
	gmetaView := proxy(gview, 1)
	getmetatable := g.RawGetString("getmetatable").(*lua.LFunction)
	g.RawSetString("getmetatable", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && proxies[t] != nil {
			if proxies[t] == g {
				L.Push(gmetaView)
			} else {
				L.Push(lua.LNil)
			}
			return 1
		}
		return getmetatable.GFunction(L)
	}))
	env := L.NewTable()
	meta := L.NewTable()
	meta.RawSetString("__index", g)
	meta.RawSetString("__newindex", readonly)
	meta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(env, meta)
	e.L, e.globals, e.env = L, g, env
	L.Env = env // what loadstring and load compile runs in (luaLoadString)
	e.gen++
	e.keys, e.argv = L.NewTable(), L.NewTable()
	g.RawSetString("KEYS", e.keys)
	g.RawSetString("ARGV", e.argv)
	e.ctx = newKillContext()
	L.SetContext(e.ctx)
	e.errFunc = L.NewFunction(e.noteErrorLine)
}

// noteErrorLine is the script's error handler, run where an error is
// raised (before the stack unwinds): it notes the line of the innermost
// Lua function there, which Redis's __redis__err__handler adds to an
// error without a position ("script: <sha>, on @user_script:<line>.").
// It returns the error unchanged.
//
// A call of a value that is not a function gets Lua 5.1's description of
// what was called ("attempt to call local 't' (a number value)") where
// the line's calls tell which one failed (callCulprit).
func (e *scriptEngine) noteErrorLine(L *lua.LState) int {
	errv := L.Get(1)
	if e.run != nil {
		for level := 1; ; level++ {
			dbg, ok := L.GetStack(level)
			if !ok {
				break
			}
			fn, err := L.GetInfo("Slf", dbg, nil)
			if err == nil && dbg.What != "G" && dbg.CurrentLine > 0 {
				e.run.errLine, e.run.errSrc = dbg.CurrentLine, lualib.SourceLabel(L, dbg.Source)
				// Only an error the VM raised in this function (level 1):
				// one raised inside a Go function it called (table.sort
				// calling its comparator) is not about this line's operand.
				if s, ok := errv.(lua.LString); ok && level == 1 {
					if f, ok := fn.(*lua.LFunction); ok && !f.IsG {
						errv = lua.LString(nameOperand(L, dbg, f, string(s), dbg.CurrentLine))
					}
				}
				break
			}
		}
	}
	L.Push(errv)
	return 1
}

// gopherCallError is gopher-lua's text for calling a value that is not a
// function; gopherIndexKey matches its text for indexing one that is not
// a table (with the type and the key).
const gopherCallError = "attempt to call a non-function object"

var gopherIndexKey = regexp.MustCompile(`(?s)attempt to index a non-table object\((\w+)\) with key '(.*)'$`)

// nameOperand rewrites gopher-lua's call and index errors raised on line
// of f (running at dbg, seen from the error handler) with Lua 5.1's
// description of the operand, where lualib can tell it: "attempt to call
// field 'x' (a nil value)", "attempt to index local 't' (a nil value)".
func nameOperand(L *lua.LState, dbg *lua.Debug, f *lua.LFunction, msg string, line int) string {
	proto := f.Proto
	if strings.Contains(msg, gopherCallError) {
		if desc, typ, ok := callCulprit(L, dbg, f, line); ok {
			return strings.Replace(msg, gopherCallError, "attempt to call "+desc+" (a "+typ+" value)", 1)
		}
		return msg
	}
	if m := gopherIndexKey.FindStringSubmatchIndex(msg); m != nil {
		typ, key := msg[m[2]:m[3]], msg[m[4]:m[5]]
		if desc, ok := lualib.IndexTarget(proto, line, key); ok {
			return msg[:m[0]] + "attempt to index " + desc + " (a " + typ + " value)"
		}
	}
	return msg
}

// callCulprit finds which call on line of f failed with "attempt to call"
// (gopher-lua says neither which nor the value's type): of the line's
// calls (lualib.CallCandidates), those whose value, read back now, is
// callable did not fail; when one description is left, that is it, with
// its value's type, or nil (the common case) when the value cannot be
// read back (a temporary register). ok is false when the line's calls
// cannot all be traced or more than one description is left.
func callCulprit(L *lua.LState, dbg *lua.Debug, f *lua.LFunction, line int) (desc, typ string, ok bool) {
	cands, ok := lualib.CallCandidates(f.Proto, line)
	if !ok {
		return "", "", false
	}
	typ = "nil"
	for _, c := range cands {
		v, known := lualib.OperandValue(L, dbg, f, c.Operand)
		if known && lualib.Callable(L, v) {
			continue
		}
		if desc != "" && c.Desc != desc {
			return "", "", false
		}
		desc = c.Desc
		if known {
			typ = v.Type().String()
		}
	}
	return desc, typ, desc != ""
}

// ---- commands ----

func scriptingCommands() []Command {
	const evalFlags = FlagNoScript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys | FlagMovableKeys
	evalKeys := func(flags int, notes string) []KeySpec {
		return []KeySpec{{Notes: notes, Flags: flags, Index: 2, KeyNum: true, FirstKey: 1, KeyStep: 1}}
	}
	const rwNotes = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"
	const roNotes = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
	getKeys := NumkeysGetKeys(0, 2, 3)
	return []Command{
		{Name: "eval", Arity: -3, Flags: evalFlags, Group: "scripting", Since: "2.6.0",
			Summary: "Execute a Lua script server side", Run: evalCommand,
			KeySpecs: evalKeys(KeyRW|KeyAccess|KeyUpdate, rwNotes), GetKeys: getKeys},
		{Name: "evalsha", Arity: -3, Flags: evalFlags, Group: "scripting", Since: "2.6.0",
			Summary: "Execute a Lua script server side", Run: evalshaCommand,
			KeySpecs: evalKeys(KeyRW|KeyAccess|KeyUpdate, ""), GetKeys: getKeys},
		{Name: "eval_ro", Arity: -3, Flags: evalFlags | FlagReadonly, Group: "scripting", Since: "7.0.0",
			Summary: "Execute a read-only Lua script server side", Run: evalROCommand,
			KeySpecs: evalKeys(KeyRO|KeyAccess, roNotes), GetKeys: getKeys},
		{Name: "evalsha_ro", Arity: -3, Flags: evalFlags | FlagReadonly, Group: "scripting", Since: "7.0.0",
			Summary: "Execute a read-only Lua script server side", Run: evalshaROCommand,
			KeySpecs: evalKeys(KeyRO|KeyAccess, ""), GetKeys: getKeys},
		{Name: "script", Arity: -2, Group: "scripting", Since: "2.6.0",
			Summary: "A container for Lua scripts management commands", Subcommands: []Command{
				{Name: "script|load", Arity: 3, Flags: FlagNoScript | FlagStale, Group: "scripting", Since: "2.6.0",
					Summary: "Load the specified Lua script into the script cache.", Run: scriptLoadCommand,
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}},
				{Name: "script|exists", Arity: -3, Flags: FlagNoScript, Group: "scripting", Since: "2.6.0",
					Summary: "Check existence of scripts in the script cache.", Run: scriptExistsCommand,
					Tips: []string{"request_policy:all_shards", "response_policy:agg_logical_and"}},
				{Name: "script|flush", Arity: -2, Flags: FlagNoScript, Group: "scripting", Since: "2.6.0",
					Summary: "Remove all the scripts from the script cache.", Run: scriptFlushCommand,
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}},
				{Name: "script|kill", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Group: "scripting", Since: "2.6.0",
					Summary: "Kill the script currently in execution.", Run: scriptKillCommand, NoLock: true,
					Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"}},
				{Name: "script|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "scripting", Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Run: scriptHelpCommand, NoLock: true},
			}},
	}
}

func evalCommand(c *Client, args [][]byte)      { evalGeneric(c, args, false, false) }
func evalshaCommand(c *Client, args [][]byte)   { evalGeneric(c, args, true, false) }
func evalROCommand(c *Client, args [][]byte)    { evalGeneric(c, args, false, true) }
func evalshaROCommand(c *Client, args [][]byte) { evalGeneric(c, args, true, true) }
func scriptKillCommand(c *Client, _ [][]byte) {
	if msg := c.Srv.scriptKill(false, true); msg != "" {
		c.WriteError(msg)
		return
	}
	c.WriteOK()
}
func scriptLoadCommand(c *Client, args [][]byte) { scriptLoad(c, args[2]) }

// evalGeneric runs EVAL/EVALSHA[_RO] with the keyspace lock held. Redis
// 7.0's order of checks: an EVALSHA sha that is not 40 bytes, then numkeys,
// then the script lookup or compilation.
func evalGeneric(c *Client, args [][]byte, bySHA, readOnly bool) {
	if bySHA && len(args[1]) != 40 {
		c.WriteError(errNoScript)
		return
	}
	numkeys, ok := ParseInt64(args[2])
	switch {
	case !ok:
		c.WriteError(ErrNotInteger)
		return
	case numkeys > int64(len(args)-3):
		c.WriteError("ERR Number of keys can't be greater than number of args")
		return
	case numkeys < 0:
		c.WriteError("ERR Number of keys can't be negative")
		return
	}
	e := c.Srv.scriptEngine()
	var sha string
	var sc *cachedScript
	if bySHA {
		if sc = e.scripts[string(args[1])]; sc != nil { // the usual lower-case SHA: no copy
			sha = sc.sha
		} else if sha = strings.ToLower(string(args[1])); sha != string(args[1]) {
			sc = e.scripts[sha]
		}
		if sc == nil {
			c.WriteError(errNoScript)
			return
		}
	} else {
		var msg string
		if sha, sc, msg = e.load(args[1]); msg != "" {
			c.WriteError(msg)
			return
		}
	}
	if (!sc.shebang || !sc.allowStale) && c.Srv.masterDown() {
		// scriptPrepareForRun: a script without flags (or whose flags
		// do not allow it) does not run on a stale replica.
		c.WriteError(errMasterDown)
		return
	}
	if sc.shebang && !sc.noWrites && c.Srv.minReplicasRefuse() {
		// A script with flags that may write is a write command to Redis
		// 7.0 (scriptFlagsToCmdFlags): refused before it runs.
		c.WriteError(errNoReplicas)
		return
	}
	if readOnly && sc.shebang && !sc.noWrites {
		c.WriteError(errScriptWriteFlagRO)
		return
	}
	if sc.shebang && !sc.noWrites && !sc.allowOOM && c.scriptOOM() {
		// A script with flags is denyoom unless they say allow-oom or
		// no-writes (Redis's scriptFlagsToCmdFlags): refused before it runs.
		c.refuseScriptOOM()
		return
	}
	keys, argv := args[3:3+numkeys], args[3+numkeys:]

	cn := c.conn
	inTxn := cn != nil && cn.inExec // EXEC's group covers the script
	env := &c.Srv.env
	if !inTxn {
		env.beginTxn()
	}
	mark := len(c.Out)
	e.runScript(c, sha, sc, keys, argv, readOnly || sc.noWrites)
	if !inTxn {
		if err := env.endTxn(); err != nil {
			// The commit marker was not written: recovery drops the
			// script's writes, so the client must not see them acknowledged.
			c.Out = c.Out[:mark]
			c.WriteErr(err)
		}
	}
}

// runScript calls the compiled script and appends its reply.
func (e *scriptEngine) runScript(c *Client, sha string, sc *cachedScript, keys, argv [][]byte, readOnly bool) {
	L := e.L
	e.setArgs(keys, argv)
	if sc.fn == nil || sc.gen != e.gen {
		sc.fn, sc.gen = L.NewFunctionFromProto(sc.proto), e.gen
		sc.fn.Env = e.env
		if sc.direct {
			// Its code cannot write a global, and reads see what they
			// would through env: the globals, whose metatable refuses
			// undefined names; two lookups fewer for each global read
			// (redis, KEYS, ARGV). No function hands the environment
			// out (getfenv is gone; _G is a read-only proxy), and what
			// loadstring compiles gets env (L.Env).
			sc.fn.Env = e.globals
		}
	}
	fn := sc.fn

	db := c.DB
	cn := c.conn
	var inExec bool
	var lastCmd *Command
	if cn != nil {
		inExec, lastCmd = cn.inExec, cn.lastCmd
		cn.inExec = true
	}
	st := c.Srv.scriptStarted(cn, e.ctx)
	run := &e.runBuf // runs do not nest; nothing keeps run past the next one
	*run = scriptRun{c: c, resp: proto.RESP2, readOnly: readOnly, allowOOM: sc.shebang && sc.allowOOM, state: st}
	e.run = run
	e.okUsed = 0 // what earlier runs were handed is free again (okReply)
	L.Push(fn)
	err := frozenCall(c.KS, func() error { return L.PCall(0, 1, e.errFunc) }) // at one instant (Redis's script time snapshot)
	c.Srv.scriptEnded(st)
	if st.killed.Load() {
		e.ctx = newKillContext() // the old one stays done
		L.SetContext(e.ctx)
	}
	e.run = nil
	c.DB = db
	if cn != nil {
		cn.inExec, cn.lastCmd = inExec, lastCmd
	}
	if err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Object != nil {
			obj = apiErr.Object
		}
		if st.killed.Load() {
			t := errorTable(L, "-ERR Script killed by user with SCRIPT KILL...")
			if line, ok := chunkLine(obj.String()); ok {
				t.RawSetString("source", lua.LString(scriptErrSourceLabel))
				t.RawSetString("line", lua.LNumber(line))
			}
			obj = t
		}
		writeScriptError(c, obj, scriptErrorReply(sha, obj, run.errLine, run.errSrc))
		return
	}
	ret := L.Get(-1)
	L.Pop(1)
	writeLuaReply(&c.Writer, ret, run.resp, 0)
}

// setArgs fills KEYS and ARGV for a run. Their tables are reused from
// run to run (argTable), and so are their elements: an argument equal to
// the string in its place after the run before keeps that string (Lua
// strings are values: a script cannot tell). The others are substrings
// of one string holding their bytes back to back: one allocation for
// them all, none when every argument is as it was (a script run again
// and again with the same keys and arguments).
func (e *scriptEngine) setArgs(keys, argv [][]byte) {
	if t := e.argTable(e.keys, len(keys)); t != e.keys {
		e.keys = t
		e.globals.RawSetString("KEYS", t)
	}
	if t := e.argTable(e.argv, len(argv)); t != e.argv {
		e.argv = t
		e.globals.RawSetString("ARGV", t)
	}
	buf, same := e.argBuf[:0], e.argSame[:0]
	buf, same = unchangedArgs(e.keys, keys, buf, same)
	buf, same = unchangedArgs(e.argv, argv, buf, same)
	e.argBuf, e.argSame = buf, same
	if len(buf) == 0 {
		return
	}
	all := string(buf)
	pos := setChangedArgs(e.keys, keys, same, all, 0)
	setChangedArgs(e.argv, argv, same[len(keys):], all, pos)
}

// unchangedArgs appends to same, for each of args, whether t holds it
// already in its place, and to buf the bytes of those it does not.
// (setArgs's two passes are functions called once per table rather than
// loops over a [2]struct of the tables and their arguments: the array
// was built on the stack and each element copied out with loads wider
// than its stores, a failed store forwarding that was 60% of setArgs's
// samples, 1.5% of an EVALSHA's CPU by perf.)
func unchangedArgs(t *lua.LTable, args [][]byte, buf []byte, same []bool) ([]byte, []bool) {
	for i, a := range args {
		old, ok := t.RawGetInt(i + 1).(lua.LString)
		ok = ok && string(old) == string(a)
		if !ok {
			buf = append(buf, a...)
		}
		same = append(same, ok)
	}
	return buf, same
}

// setChangedArgs stores in t the arguments not the same (unchangedArgs)
// as substrings of all from pos on, and returns the position after them.
func setChangedArgs(t *lua.LTable, args [][]byte, same []bool, all string, pos int) int {
	for i, a := range args {
		if !same[i] {
			t.RawSetInt(i+1, lua.LString(all[pos:pos+len(a)]))
			pos += len(a)
		}
	}
	return pos
}

// argTable returns t cut to its first n elements, or a new table when a
// run before left t anything but array elements or gave it a metatable
// (Redis makes fresh tables for each run; reusing them saves two
// allocations, and a script cannot tell: only the array part remains,
// and setArgs rewrites what differs).
func (e *scriptEngine) argTable(t *lua.LTable, n int) *lua.LTable {
	if l := t.Len(); t.Metatable != lua.LNil || e.nextAfter(t, l) != lua.LNil {
		return e.L.CreateTable(n, 0)
	}
	for l := t.Len(); l > n; l-- {
		t.RawSetInt(l, lua.LNil)
	}
	return t
}

// nextAfter is the key after index n of t, whose elements past n are nil
// (n is t.Len()): nil when t holds nothing else, that is no element past n
// and no hash entry.
func (e *scriptEngine) nextAfter(t *lua.LTable, n int) lua.LValue {
	if n == 0 {
		k, _ := t.Next(lua.LNil) // (Next(0) would skip the first hash key)
		return k
	}
	for len(e.argKeys) <= n && len(e.argKeys) <= 1024 {
		e.argKeys = append(e.argKeys, lua.LNumber(len(e.argKeys)))
	}
	if n < len(e.argKeys) {
		k, _ := t.Next(e.argKeys[n])
		return k
	}
	k, _ := t.Next(lua.LNumber(n))
	return k
}

// maxReusedOK bounds the {ok="OK"} tables kept for reuse.
const maxReusedOK = 64

// okReply is redis.call's reply to a command that answered +OK: the table
// {ok="OK"}, new to this run. It is one that an earlier run was handed
// when that one is as it was made (no other entry, no metatable): a run
// cannot keep a table for the next one (the globals are read-only, KEYS
// and ARGV are rewritten or replaced, argTable; EVAL scripts have no
// upvalues that outlive them), so reusing it is invisible to scripts, and
// it saves the five allocations of a table with one string key.
func (e *scriptEngine) okReply(L *lua.LState) *lua.LTable {
	for e.okUsed < len(e.okTables) {
		t := e.okTables[e.okUsed]
		if k, v := t.Next(lua.LNil); t.Metatable == lua.LNil && k == lua.LString("ok") && v == lua.LString("OK") {
			if k2, _ := t.Next(k); k2 == lua.LNil {
				e.okUsed++
				return t
			}
		}
		// The script changed it: it is left to the garbage collector.
		last := len(e.okTables) - 1
		e.okTables[e.okUsed] = e.okTables[last]
		e.okTables[last] = nil
		e.okTables = e.okTables[:last]
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", lua.LString("OK"))
	if len(e.okTables) < maxReusedOK {
		e.okTables = append(e.okTables, t)
		e.okUsed++
	}
	return t
}

// errStatsCountedField marks an error table whose error was counted in
// the error statistics where it arose (Redis 7.0 names the field the
// same): passing it on as the script's reply counts nothing more.
const errStatsCountedField = "ignore_error_stats_update"

// writeScriptError writes msg, the reply to a script that raised obj,
// uncounted if obj is an error table whose error was counted already.
func writeScriptError(c *Client, obj lua.LValue, msg string) {
	if t, ok := obj.(*lua.LTable); ok && lua.LVAsBool(t.RawGetString(errStatsCountedField)) {
		c.WriteUncountedError(msg)
		return
	}
	c.WriteError(msg)
}

// scriptErrorReply is Redis 7.0's reply to a script that raised obj: the
// error's message, then where it was raised ("script: <sha>, on
// @user_script:<line>.") when that is known: from an error table, from
// the position in an error message, else errLine in errSrc (where the
// error was raised, or error() last called; errSrc "" is the script's own
// chunk, a label such as "redis = 5" a chunk loadstring compiled).
func scriptErrorReply(sha string, obj lua.LValue, errLine int, errSrc string) string {
	return scriptErrorReplyIn(scriptChunkName, sha, obj, errLine, errSrc)
}

// scriptErrorReplyIn is scriptErrorReply for code compiled as chunk
// (user_script for EVAL, user_function for functions, whose errors name
// the function where EVAL's name the sha).
func scriptErrorReplyIn(chunk, name string, obj lua.LValue, errLine int, errSrc string) string {
	var msg, source string
	line := 0
	if t, ok := obj.(*lua.LTable); ok {
		msg = "ERR unknown error"
		if s, ok := t.RawGetString("err").(lua.LString); ok {
			msg = string(s)
		}
		if s, ok := t.RawGetString("source").(lua.LString); ok {
			source = string(s)
		}
		if n, ok := t.RawGetString("line").(lua.LNumber); ok {
			line = int(n)
		}
	} else {
		text := luaRuntimeText(obj.String())
		msg = "ERR " + text
		if n, ok := chunkLineOf(chunk, text); ok {
			source, line = "@"+chunk, n
		} else if errLine > 0 {
			source, line = "@"+chunk, errLine
			if errSrc != "" {
				source = errSrc // a chunk compiled by loadstring or load
			}
		}
	}
	if source != "" && line > 0 {
		msg += " script: " + name + ", on " + source + ":" + strconv.Itoa(line) + "."
	}
	return oneLine(msg)
}

// gopherArgError matches gopher-lua's "bad argument #1 to rep (" (Lua
// 5.1 quotes the function: "to 'rep' (").
var gopherArgError = regexp.MustCompile(`bad argument #(-?\d+) to ([A-Za-z_][A-Za-z0-9_.:]*) \(`)

func quoteArgFunc(text string) string {
	if !strings.Contains(text, "bad argument #") {
		return text
	}
	return gopherArgError.ReplaceAllString(text, "bad argument #$1 to '$2' (")
}

// gopher-lua's VM errors with their Lua 5.1 counterparts.
var (
	gopherArith  = regexp.MustCompile(`cannot perform (?:add|sub|mul|div|mod|pow) operation between (\w+) and (\w+)`)
	gopherConcat = regexp.MustCompile(`cannot perform concat operation between (\w+) and (\w+)`)
	gopherIndex  = regexp.MustCompile(`(?s)attempt to index a non-table object\((\w+)\) with key '.*'$`)
)

// luaRuntimeText rewords gopher-lua's run-time messages as Lua 5.1's,
// without the variable names Lua 5.1 adds when the operand is one
// ("attempt to index local 't' (a nil value)"): the operand Lua 5.1
// names is the first that is not a number (arithmetic) or not a string
// or number (concatenation); a call of a value that is not a function is
// assumed to be of nil, the common case, as gopher-lua does not say.
func luaRuntimeText(text string) string {
	text = quoteArgFunc(text)
	if m := gopherArith.FindStringSubmatch(text); m != nil {
		bad := m[1]
		if bad == "number" {
			bad = m[2]
		}
		text = strings.Replace(text, m[0], "attempt to perform arithmetic on a "+bad+" value", 1)
	} else if m := gopherConcat.FindStringSubmatch(text); m != nil {
		bad := m[1]
		if bad == "string" || bad == "number" {
			bad = m[2]
		}
		text = strings.Replace(text, m[0], "attempt to concatenate a "+bad+" value", 1)
	} else if m := gopherIndex.FindStringSubmatch(text); m != nil {
		text = strings.Replace(text, m[0], "attempt to index a "+m[1]+" value", 1)
	} else {
		text = strings.Replace(text, "attempt to call a non-function object", "attempt to call a nil value", 1)
	}
	for _, fn := range []string{"concat", "insert", "sort"} {
		text = strings.Replace(text, " in table for "+fn, " in table for '"+fn+"'", 1)
	}
	return text
}

// chunkLine reads the line number of a Lua error position "user_script:N: ...".
func chunkLine(text string) (int, bool) { return chunkLineOf(scriptChunkName, text) }

// chunkLineOf reads the line number of a Lua error position "<chunk>:N: ...".
func chunkLineOf(chunk, text string) (int, bool) {
	rest, ok := strings.CutPrefix(text, chunk+":")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil
}

// load compiles body (or finds it in the cache) and caches it. msg is the
// error reply when it does not compile.
func (e *scriptEngine) load(body []byte) (sha string, sc *cachedScript, msg string) {
	sum := sha1.Sum(body)
	sha = hex.EncodeToString(sum[:])
	if sc = e.scripts[sha]; sc != nil {
		return sha, sc, ""
	}
	src := string(body)
	noWrites, allowOOM, shebang, allowStale := false, false, false, false
	if strings.HasPrefix(src, "#!") {
		first, rest, ok := strings.Cut(src, "\n")
		if !ok {
			return "", nil, "ERR Invalid script shebang"
		}
		var f shebangFlags
		if f, msg = parseShebangFlags(first); msg != "" {
			return "", nil, msg
		}
		noWrites, allowOOM, allowStale = f.noWrites, f.allowOOM, f.allowStale
		shebang = true
		src = "\n" + rest // keep the line numbers
	}
	// Lua 5.1's own grammar and wording first: gopher-lua's parser words
	// errors differently and accepts Lua 5.2's goto.
	if err := lualib.CheckSyntax([]byte(src), scriptChunkName); err != nil {
		return "", nil, oneLine("ERR Error compiling script (new function): " + err.Error())
	}
	chunk, err := parse.Parse(strings.NewReader(src), scriptChunkName)
	if err != nil {
		return "", nil, compileError(err)
	}
	proto, err := lua.Compile(chunk, scriptChunkName)
	if err != nil {
		return "", nil, compileError(err)
	}
	// gopher-lua marks the main chunk as needing Lua 5.0's arg table, and
	// builds one (a hashed table) on every run, but gives the chunk no
	// local to reach it (nor does Lua 5.1): nothing can see it.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	sc = &cachedScript{sha: sha, proto: proto, noWrites: noWrites, allowOOM: allowOOM, shebang: shebang,
		allowStale: allowStale, direct: !lualib.SetsGlobals(proto)}
	e.scripts[sha] = sc
	if e.count != nil {
		e.count.Store(int64(len(e.scripts)))
	}
	return sha, sc, ""
}

func compileError(err error) string {
	text := strings.TrimSpace(err.Error())
	var pe *parse.Error
	if errors.As(err, &pe) {
		if pe.Pos.Line == parse.EOF {
			text = scriptChunkName + ": " + pe.Message + " near <eof>"
		} else {
			text = scriptChunkName + ":" + strconv.Itoa(pe.Pos.Line) + ": " + pe.Message + " near '" + pe.Token + "'"
		}
	}
	return oneLine("ERR Error compiling script (new function): " + text)
}

// parseShebang reads a Redis 7 script's first line, "#!lua [flags=f1,f2]".
func parseShebang(line string) (noWrites bool, msg string) {
	f, msg := parseShebangFlags(line)
	return f.noWrites, msg
}

// shebangFlags are the flags of a script's shebang that change how it runs.
type shebangFlags struct {
	noWrites, allowOOM, allowStale bool
}

// parseShebangFlags is parseShebang with every flag it reports.
func parseShebangFlags(line string) (f shebangFlags, msg string) {
	parts := strings.Fields(strings.TrimRight(line, "\r"))
	if len(parts) == 0 || parts[0] != "#!lua" {
		engine := line
		if len(parts) > 0 {
			engine = parts[0]
		}
		return f, "ERR Unexpected engine in script shebang: " + engine
	}
	for _, p := range parts[1:] {
		flags, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return shebangFlags{}, "ERR Unknown lua shebang option: " + p
		}
		if flags == "" {
			continue
		}
		for flag := range strings.SplitSeq(flags, ",") {
			switch flag {
			case "no-writes":
				f.noWrites = true
			case "allow-oom":
				f.allowOOM = true
			case "allow-stale":
				f.allowStale = true
			case "no-cluster", "allow-cross-slot-keys":
			default:
				return shebangFlags{}, "ERR Unexpected flag in script shebang: " + flag
			}
		}
	}
	return f, ""
}

// ---- redis.* ----

// luaCall is redis.call (raise) and redis.pcall: run a command as the
// script's client and return its reply as Lua values. An error reply is
// raised by redis.call and returned as {err=...} by redis.pcall.
func (e *scriptEngine) luaCall(L *lua.LState, raise bool) int {
	r := e.run
	if r == nil {
		return luaFail(L, raise, "ERR redis.call called outside a script")
	}
	n := L.GetTop()
	if n == 0 {
		return luaFail(L, raise, errScriptNoArgs)
	}
	// The arguments are copied into buffers the engine reuses: like a
	// request's arguments in the connection's read buffer, a command may
	// not keep them past its call, and calls from scripts never nest.
	buf, ends := e.callBuf[:0], e.callEnds[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			// Redis formats numbers with %.17g, not Lua's lossy %.14g.
			buf = strconv.AppendFloat(buf, float64(v), 'g', 17, 64)
		default:
			return luaFail(L, raise, errScriptArgType)
		}
		ends = append(ends, len(buf))
	}
	args := e.callArgs[:0]
	for i, end := range ends {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		args = append(args, buf[start:end:end])
	}
	e.callBuf, e.callEnds, e.callArgs = buf, ends, args
	c := r.c
	// reject: the command does not run; its error counts here, once
	// (errorstats.go), and the script passes it on uncounted.
	reject := func(cmd *Command, msg string) int {
		t := errorTable(L, msg)
		c.countScriptReject(cmd, t.RawGetString("err").String())
		t.RawSetString(errStatsCountedField, lua.LTrue)
		if raise {
			setErrorPosition(L, t)
			L.Error(t, 0)
			return 0
		}
		L.Push(t)
		return 1
	}
	cmd, msg := e.resolve(c.Srv, args)
	switch {
	case cmd == nil && strings.HasPrefix(msg, "ERR wrong number of arguments"):
		return reject(nil, errScriptWrongArgs) // a container without its subcommand
	case cmd == nil:
		return reject(nil, errScriptUnknownCmd)
	case msg != "":
		return reject(cmd, errScriptWrongArgs)
	case cmd.Flags&FlagNoScript != 0 && !c.Srv.scriptDenyOff.Load():
		return reject(cmd, errScriptNotAllowed)
	case cmd.Flags&FlagStale == 0 && c.Srv.masterDown():
		return reject(cmd, errScriptStale) // Redis's scriptVerifyAllowStale
	}
	if d, _ := c.checkACL(cmd, args, acl.ContextLua); !d.OK() {
		return reject(cmd, d.ScriptError())
	}
	switch {
	case r.readOnly && (cmd.Flags&FlagWrite != 0 || mayReplicate(cmd)):
		return reject(cmd, errScriptWriteInRO)
	case cmd.Flags&FlagWrite != 0 && c.conn != nil && c.Srv.replicaStatus() != nil && !c.Srv.replica.writable.Load():
		// Redis's scriptVerifyWriteCommandAllow: a read-only replica's
		// clients may not write from a script either (replica.go).
		return reject(cmd, "-READONLY You can't write against a read only replica.")
	}
	if msg := c.scriptDiskError(cmd); msg != "" {
		return reject(cmd, "-"+msg) // a full disk (diskerror.go): MISCONF is the error code
	}
	// Redis's scriptVerifyWriteCommandAllow: once the script has written,
	// it is not failed on the replicas' state.
	if cmd.Flags&FlagWrite != 0 && (r.state == nil || !r.state.wrote.Load()) && c.Srv.minReplicasRefuse() {
		return reject(cmd, "-"+errNoReplicas)
	}
	// Redis's scriptVerifyOOM: over maxmemory at the script's start, its
	// first denyoom call fails, unless it wrote already or may (allow-oom).
	if cmd.Flags&FlagDenyOOM != 0 && !r.allowOOM && (r.state == nil || !r.state.wrote.Load()) && c.scriptOOM() {
		return reject(cmd, "-"+errOOM)
	}
	if cmd.Flags&FlagWrite != 0 && r.state != nil {
		r.state.wrote.Store(true) // SCRIPT KILL now answers UNKILLABLE
	}
	mark := len(c.Out)
	callerProto := c.Proto
	c.Proto = r.resp // the command replies in the script's protocol
	if cn := c.conn; cn != nil {
		cn.call(cmd, args, true)
	} else {
		cmd.Run(c, args)
	}
	c.Proto = callerProto
	var v lua.LValue
	if out := c.Out[mark:]; e.reuseOK && string(out) == "+OK\r\n" {
		v = e.okReply(L)
	} else {
		v, _ = respToLua(L, out)
	}
	c.Out = c.Out[:mark]
	if t, ok := v.(*lua.LTable); ok && raise {
		if errMsg, ok := t.RawGetString("err").(lua.LString); ok {
			t := errorTable(L, "-"+string(errMsg))
			t.RawSetString(errStatsCountedField, lua.LTrue) // the command's reply counted it
			setErrorPosition(L, t)
			L.Error(t, 0)
			return 0
		}
	}
	L.Push(v)
	return 1
}

// resolve is Server.resolve for redis.call, with the one-entry cache
// callHit (the command table does not change while the server runs).
func (e *scriptEngine) resolve(s *Server, args [][]byte) (*Command, string) {
	if hit := e.callHit; hit != nil && equalLower(args[0], hit.Name) {
		if !arityOK(hit.Arity, len(args)) {
			return hit, WrongArgs(hit.Name)
		}
		return hit, ""
	}
	cmd, msg := s.resolve(args)
	// Only a command found under its own name is remembered: under
	// rename-command another name reaches it, and its own may reach
	// nothing or another command.
	if cmd != nil && cmd.subs == nil && strings.IndexByte(cmd.Name, '|') < 0 && equalLower(args[0], cmd.Name) {
		e.callHit = cmd
	}
	return cmd, msg
}

// mayReplicate reports the commands Redis flags may-replicate that a
// script may call: a read-only script refuses them like writes.
func mayReplicate(cmd *Command) bool {
	switch cmd.Name {
	case "publish", "spublish", "pfcount":
		return true
	}
	return false
}

// luaFail returns (or, raise, raises) the error table {err=msg}; msg is
// normalised as errorTable says.
func luaFail(L *lua.LState, raise bool, msg string) int {
	t := errorTable(L, msg)
	if raise {
		setErrorPosition(L, t)
		L.Error(t, 0)
		return 0
	}
	L.Push(t)
	return 1
}

// errorTable is Redis's luaPushError: "-CODE msg" keeps its code (a
// "-msg" without a space gets ERR), any other message gets "ERR " unless
// it already starts with it; trailing CR/LF go.
func errorTable(L *lua.LState, msg string) *lua.LTable {
	switch {
	case strings.HasPrefix(msg, "-"):
		if !strings.Contains(msg, " ") {
			msg = "ERR " + msg[1:]
		} else {
			msg = msg[1:]
		}
	case !strings.HasPrefix(msg, "ERR "):
		msg = "ERR " + msg
	}
	msg = strings.TrimRight(msg, "\r\n")
	t := L.CreateTable(0, 3) // err, and source and line when raised
	t.RawSetString("err", lua.LString(msg))
	return t
}

// setErrorPosition records in an error table where the Lua code that
// raised it is (the caller of the Go function running now), as Redis's
// error handler adds source and line.
func setErrorPosition(L *lua.LState, t *lua.LTable) {
	dbg, ok := L.GetStack(1)
	if !ok {
		return
	}
	if _, err := L.GetInfo("Sl", dbg, nil); err != nil || dbg.CurrentLine <= 0 {
		return
	}
	t.RawSetString("source", lua.LString(lualib.SourceLabel(L, dbg.Source)))
	t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
}

// luaError replaces Lua's error(): a table gets the position it was
// raised at, and a number is positioned like a string (Lua 5.1 does that;
// gopher-lua does not).
func (e *scriptEngine) luaError(L *lua.LState) int {
	v := L.Get(1)
	level := L.OptInt(2, 1)
	switch v := v.(type) {
	case *lua.LTable:
		setErrorPosition(L, v)
		L.Error(v, 0)
	case lua.LNumber:
		L.Error(lua.LString(v.String()), level)
	default:
		if dbg, ok := L.GetStack(1); ok && e.run != nil {
			if _, err := L.GetInfo("Sl", dbg, nil); err == nil {
				e.run.errLine, e.run.errSrc = dbg.CurrentLine, lualib.SourceLabel(L, dbg.Source)
			}
		}
		L.Error(v, level)
	}
	return 0
}

// luaPCall replaces Lua's pcall as Redis 7 does: an error table's err
// string is what the caller gets (pcall(redis.call, ...) returns false and
// the error message, not a table).
func luaPCall(L *lua.LState) int {
	v := L.CheckAny(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, nil); err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Object != nil {
			obj = apiErr.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// luaErrorReply is redis.error_reply(msg).
func luaErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	L.Push(errorTable(L, "-"+strings.TrimPrefix(string(s), "-")))
	return 1
}

// luaStatusReply is redis.status_reply(msg).
func luaStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.NewTable()
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

// luaSHA1Hex is redis.sha1hex(s).
func luaSHA1Hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return luaFail(L, true, "wrong number of arguments")
	}
	sum := sha1.Sum([]byte(L.ToString(1)))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

// luaLog is redis.log(level, message...): warnings and notices go to the
// server log (Redis's default verbosity is notice).
func (e *scriptEngine) luaLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return luaFail(L, true, "redis.log() requires two arguments or more.")
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		return luaFail(L, true, "First argument must be a number (log level).")
	}
	if lv < 0 || lv > 3 {
		return luaFail(L, true, "Invalid debug level.")
	}
	if lv < 2 || e.logf == nil {
		return 0
	}
	parts := make([]string, 0, n-1)
	for i := 2; i <= n; i++ {
		parts = append(parts, lualib.ToString(L.Get(i)))
	}
	e.logf("%s", strings.Join(parts, " "))
	return 0
}

// Replication flags of redis.set_repl (Redis's PROPAGATE_AOF and
// PROPAGATE_REPL).
const (
	replNone    = 0
	replAOF     = 1
	replReplica = 2
)

// versionNum is REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNum(v string) int {
	n := 0
	for part := range strings.SplitSeq(v, ".") {
		x, _ := strconv.Atoi(part)
		n = n<<8 | x
	}
	return n
}

// luaSetResp is redis.setresp(2|3): the protocol the script's
// redis.call replies are parsed in from now on (respToLua), and how its
// booleans are returned (writeLuaReply).
func (e *scriptEngine) luaSetResp(L *lua.LState) int {
	if e.run == nil {
		return luaFail(L, true, "redis.setresp can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return luaFail(L, true, "redis.setresp() requires one argument.")
	}
	switch lua.LVAsNumber(L.Get(1)) {
	case 2:
		e.run.resp = proto.RESP2
		return 0
	case 3:
		e.run.resp = proto.RESP3
		return 0
	}
	return luaFail(L, true, "RESP version must be 2 or 3.")
}

// luaSetRepl is redis.set_repl(flags): accepted (there are no replicas
// and no AOF; the script's writes are durable as one group either way).
func (e *scriptEngine) luaSetRepl(L *lua.LState) int {
	if e.run == nil {
		return luaFail(L, true, "redis.set_repl can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return luaFail(L, true, "redis.set_repl() requires two arguments.") // sic, Redis 7.0's text
	}
	flags := int64(lua.LVAsNumber(L.Get(1)))
	if flags&^(replAOF|replReplica) != 0 {
		return luaFail(L, true, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// luaACLCheckCmd is redis.acl_check_cmd(cmd, ...): whether the script's
// user may run the command with these arguments (command, key and channel
// rules, as Redis's ACLCheckAllUserCommandPerm), without logging a
// denial; an error for a command the table does not know.
func (e *scriptEngine) luaACLCheckCmd(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		return luaFail(L, true, errScriptNoArgs)
	}
	args := make([][]byte, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args[i-1] = []byte(v)
		case lua.LNumber:
			args[i-1] = strconv.AppendFloat(nil, float64(v), 'g', 17, 64)
		default:
			return luaFail(L, true, errScriptArgType)
		}
	}
	if e.run == nil {
		return luaFail(L, true, "ERR redis.acl_check_cmd called outside a script")
	}
	c := e.run.c
	cmd, _ := c.Srv.resolve(args)
	if cmd == nil {
		return luaFail(L, true, "Invalid command passed to redis.acl_check_cmd()")
	}
	u := c.User()
	ok := u.Unrestricted() || cmd.aclCmd == nil
	if !ok {
		q := &acl.Request{Cmd: cmd.aclCmd, Args: args, Channels: acl.Channels(cmd.Name, args)}
		ok = u.CheckFindingKeys(q, func() []acl.KeyRef { return aclKeyRefs(cmd, args) }).OK()
	}
	L.Push(lua.LBool(ok))
	return 1
}

// InScript reports whether c's command runs inside EVAL or FCALL (Redis's
// CLIENT_SCRIPT flag). Call it with the keyspace lock held.
func (c *Client) InScript() bool {
	if e := c.Srv.scripting; e != nil && e.run != nil && e.run.c == c {
		return true
	}
	rt := c.Srv.fn.Load()
	return rt != nil && rt.se.run != nil && rt.se.run.c == c
}

// luaGCInfo is Lua 5.1's gcinfo(): the heap in use, in KiB.
func luaGCInfo(L *lua.LState) int {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	L.Push(lua.LNumber(ms.HeapAlloc / 1024))
	return 1
}

// luaErrHandler is the global __redis__err__handler Redis 7 defines: it
// turns an error into {err=...} with where it was raised.
func luaErrHandler(L *lua.LState) int {
	v := L.Get(1)
	t, ok := v.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+lualib.ToString(v)))
	}
	setErrorPosition(L, t)
	L.Push(t)
	return 1
}

// luaLoadString is Lua 5.1's loadstring(s [, chunkname]): s compiled
// as a chunk named chunkname (s by default), running in L.Env, the
// engine's read-only environment; nil and the message on a syntax error.
func luaLoadString(L *lua.LState) int {
	src := luaStringArg(L, 1, "loadstring")
	name := src
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		name = luaStringArg(L, 2, "loadstring")
	}
	return pushLoaded(L, src, name)
}

// luaLoad is Lua 5.1's load(func [, chunkname]): the pieces func returns
// until nil or "" compiled as one chunk named chunkname ("=(load)" by
// default), running in L.Env like loadstring's. A piece that is not a
// string (or number), or an error in func, gives nil and an error table
// (loadFailed).
func luaLoad(L *lua.LState) int {
	name := "=(load)"
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		name = luaStringArg(L, 2, "load")
	}
	reader := L.CheckFunction(1)
	var src []byte
	for {
		L.Push(reader)
		if err := L.PCall(0, 1, nil); err != nil {
			// Lua 5.1 reads the pieces in a protected call: an error
			// is load's message, not raised.
			var obj lua.LValue = lua.LString(err.Error())
			var apiErr *lua.ApiError
			if errors.As(err, &apiErr) && apiErr.Object != nil {
				obj = apiErr.Object
			}
			return loadFailed(L, obj)
		}
		piece := L.Get(-1)
		L.Pop(1)
		if piece == lua.LNil {
			break
		}
		if piece.Type() != lua.LTString && piece.Type() != lua.LTNumber {
			return loadFailed(L, lua.LString(luaWhere(L, 1)+"reader function must return a string"))
		}
		s := lualib.ToString(piece)
		if s == "" {
			break
		}
		src = append(src, s...)
	}
	return pushLoaded(L, string(src), name)
}

// loadFailed returns load's nil and the error obj raised while it read
// the chunk, as Redis's scripts see it: its error handler, which runs for
// an error raised (not for a syntax error), has made a string {err="ERR
// <message>"} by then.
func loadFailed(L *lua.LState, obj lua.LValue) int {
	if _, ok := obj.(*lua.LTable); !ok {
		t := L.CreateTable(0, 3)
		t.RawSetString("err", lua.LString("ERR "+lualib.ToString(obj)))
		setErrorPosition(L, t)
		obj = t
	}
	L.Push(lua.LNil)
	L.Push(obj)
	return 2
}

// pushLoaded pushes what loadstring and load return for src.
func pushLoaded(L *lua.LState, src, name string) int {
	fn, msg := lualib.LoadChunk(L, src, name, L.Env)
	if fn == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(msg))
		return 2
	}
	L.Push(fn)
	return 1
}

// luaStringArg is luaL_checklstring for argument n of fname: a string, or
// a number as Lua 5.1 prints it.
func luaStringArg(L *lua.LState, n int, fname string) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return lualib.NumberString(float64(v))
	}
	got := "no value"
	if n <= L.GetTop() {
		got = L.Get(n).Type().String()
	}
	L.RaiseError("bad argument #%d to '%s' (string expected, got %s)", n, fname, got)
	return ""
}

// luaWhere is luaL_where: "<source>:<line>: " of the Lua function level
// calls up from the running Go function, or "" when that is not Lua code.
func luaWhere(L *lua.LState, level int) string {
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, nil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
		return ""
	}
	return dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": "
}

// luaUnpack is Lua 5.1's unpack(t [, i [, j]]), with its limit: more
// results than the Lua stack holds (8000) is "too many results to
// unpack", not an allocation of the whole range.
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := int64(int32(L.OptInt64(2, 1)))
	e := int64(t.Len())
	if L.GetTop() >= 3 && L.Get(3) != lua.LNil {
		e = int64(int32(L.CheckInt64(3)))
	}
	if i > e {
		return 0
	}
	n := e - i + 1
	if n <= 0 || n+int64(L.GetTop()) > 8000 {
		L.RaiseError("too many results to unpack")
	}
	for k := i; k <= e; k++ {
		L.Push(t.RawGetInt(int(k)))
	}
	return int(n)
}

// maxScriptString caps string.rep's result (the default
// proto-max-bulk-len): past it the script gets Lua's "not enough memory"
// instead of the server allocating without bound.
const maxScriptString = 512 << 20

// luaStringRep is Lua 5.1's string.rep(s, n): n is a C int (2^31 wraps
// negative and gives "").
func luaStringRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := int64(int32(L.CheckInt64(2)))
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if int64(len(s))*n > maxScriptString {
		L.RaiseError("not enough memory")
	}
	L.Push(lua.LString(strings.Repeat(s, int(n))))
	return 1
}

// addLua51Compat adds what Lua 5.1 (as Redis builds it) has and
// gopher-lua lacks: string.gfind, table.foreach, table.foreachi and
// table.setn.
func addLua51Compat(L *lua.LState, g *lua.LTable) {
	if str, ok := g.RawGetString("string").(*lua.LTable); ok {
		str.RawSetString("gfind", str.RawGetString("gmatch"))
	}
	tab, ok := g.RawGetString("table").(*lua.LTable)
	if !ok {
		return
	}
	foreach := func(array bool) lua.LGFunction {
		return func(L *lua.LState) int {
			t := L.CheckTable(1)
			f := L.CheckFunction(2)
			each := func(k, v lua.LValue) bool {
				L.Push(f)
				L.Push(k)
				L.Push(v)
				L.Call(2, 1)
				r := L.Get(-1)
				L.Pop(1)
				if r != lua.LNil {
					L.Push(r)
					return true
				}
				return false
			}
			if array {
				for i := 1; i <= t.Len(); i++ {
					if each(lua.LNumber(i), t.RawGetInt(i)) {
						return 1
					}
				}
				return 0
			}
			for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
				if each(k, v) {
					return 1
				}
			}
			return 0
		}
	}
	tab.RawSetString("foreach", L.NewFunction(foreach(false)))
	tab.RawSetString("foreachi", L.NewFunction(foreach(true)))
	tab.RawSetString("setn", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("'setn' is obsolete")
		return 0
	}))
}

// ---- conversions ----

// respToLua parses one RESP2 or RESP3 reply from b into Lua values, as
// Redis 7.0's redisProtocolToLuaType does: integer → number, bulk →
// string, null bulk and null array → false, array → table, status →
// {ok=...}, error → {err=...}; RESP3 (after redis.setresp(3)) adds null →
// nil, boolean → boolean, double → {double=n}, map → {map={k=v...}}, set
// → {set={m=true...}}, big number → {big_number=s}, verbatim string →
// {verbatim_string={format=, string=}}; an attribute is skipped. It
// returns the rest of b.
func respToLua(L *lua.LState, b []byte) (lua.LValue, []byte) {
	i := bytes.Index(b, []byte("\r\n"))
	if len(b) == 0 || i < 0 {
		return lua.LFalse, nil
	}
	line, rest := b[1:i], b[i+2:]
	switch b[0] {
	case '+':
		t := L.CreateTable(0, 1) // NewTable's hash part starts at 32 slots
		t.RawSetString("ok", lua.LString(line))
		return t, rest
	case '-':
		t := errorTable(L, "-"+string(line))
		t.RawSetString(errStatsCountedField, lua.LTrue) // counted when the command replied
		return t, rest
	case ':':
		n, _ := strconv.ParseInt(string(line), 10, 64)
		return lua.LNumber(n), rest
	case '$', '=':
		n, _ := strconv.Atoi(string(line))
		if n < 0 || n+2 > len(rest) {
			return lua.LFalse, rest
		}
		s, rest := rest[:n], rest[n+2:]
		if b[0] == '=' && len(s) >= 4 {
			vt := L.CreateTable(0, 2)
			vt.RawSetString("string", lua.LString(s[4:]))
			vt.RawSetString("format", lua.LString(s[:3]))
			t := L.CreateTable(0, 1)
			t.RawSetString("verbatim_string", vt)
			return t, rest
		}
		return lua.LString(s), rest
	case '*':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		t := L.CreateTable(n, 0)
		for j := 1; j <= n; j++ {
			var v lua.LValue
			v, rest = respToLua(L, rest)
			t.RawSetInt(j, v)
		}
		return t, rest
	case '%', '~':
		n, _ := strconv.Atoi(string(line))
		inner := L.CreateTable(0, n)
		for j := 0; j < n; j++ {
			var k, v lua.LValue
			k, rest = respToLua(L, rest)
			if b[0] == '%' {
				v, rest = respToLua(L, rest)
			} else {
				v = lua.LTrue
			}
			if k != lua.LNil {
				inner.RawSet(k, v)
			}
		}
		t := L.CreateTable(0, 1)
		if b[0] == '%' {
			t.RawSetString("map", inner)
		} else {
			t.RawSetString("set", inner)
		}
		return t, rest
	case '_':
		return lua.LNil, rest
	case '#':
		return lua.LBool(len(line) == 1 && line[0] == 't'), rest
	case ',':
		f, _ := strconv.ParseFloat(string(line), 64)
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t, rest
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(line))
		return t, rest
	case '|':
		n, _ := strconv.Atoi(string(line))
		for j := 0; j < 2*n; j++ {
			_, rest = respToLua(L, rest)
		}
		return respToLua(L, rest)
	}
	return lua.LFalse, nil
}

// writeLuaReply writes a script's return value in the caller's protocol,
// as Redis 7.0's luaReplyToRedisReply does: string → bulk, number →
// integer (truncated), true → 1 and false → null when the script speaks
// RESP2 (scriptResp, redis.setresp), a boolean when it speaks RESP3; a
// table {err=s} → error, {ok=s} → status, {double=n} → double,
// {big_number=s} → big number, {verbatim_string={format=, string=}} →
// verbatim string, {map={...}} → map, {set={...}} → set (in the order the
// Lua table yields them), any other table → array of its elements 1..n up
// to the first nil; nil → null.
func writeLuaReply(w *proto.Writer, v lua.LValue, scriptResp, depth int) {
	switch v := v.(type) {
	case lua.LString:
		w.WriteBulkString(string(v))
		return
	case lua.LNumber:
		w.WriteInt(luaNumberToInt(float64(v)))
		return
	case lua.LBool:
		switch {
		case scriptResp == proto.RESP3:
			w.WriteBool(bool(v))
		case bool(v):
			w.WriteInt(1)
		default:
			w.WriteNull()
		}
		return
	case *lua.LTable:
		if depth >= maxScriptReplyDepth {
			w.WriteError(errScriptStackLimit)
			return
		}
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			if lua.LVAsBool(v.RawGetString(errStatsCountedField)) {
				w.WriteUncountedError(string(s))
			} else {
				w.WriteError(string(s))
			}
			return
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			w.WriteString(string(s))
			return
		}
		if f, ok := v.RawGetString("double").(lua.LNumber); ok {
			w.WriteDouble(float64(f))
			return
		}
		if s, ok := v.RawGetString("big_number").(lua.LString); ok {
			w.WriteBigNumber(oneLine(string(s)))
			return
		}
		if vt, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			format, ok1 := vt.RawGetString("format").(lua.LString)
			str, ok2 := vt.RawGetString("string").(lua.LString)
			if ok1 && ok2 {
				w.WriteVerbatimString(string(format), string(str))
				return
			}
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			n := 0
			m.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.WriteMap(n)
			m.ForEach(func(k, val lua.LValue) {
				writeLuaReply(w, k, scriptResp, depth+1)
				writeLuaReply(w, val, scriptResp, depth+1)
			})
			return
		}
		if set, ok := v.RawGetString("set").(*lua.LTable); ok {
			n := 0
			set.ForEach(func(lua.LValue, lua.LValue) { n++ })
			w.WriteSet(n)
			set.ForEach(func(k, _ lua.LValue) { writeLuaReply(w, k, scriptResp, depth+1) })
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.WriteArray(n)
		for i := 1; i <= n; i++ {
			writeLuaReply(w, v.RawGetInt(i), scriptResp, depth+1)
		}
		return
	}
	w.WriteNull()
}

// appendLuaReply appends v as writeLuaReply writes it for a RESP2 caller
// and a RESP2 script.
func appendLuaReply(b []byte, v lua.LValue, depth int) []byte {
	w := proto.Writer{Out: b}
	writeLuaReply(&w, v, proto.RESP2, depth)
	return w.Out
}

func appendBulkString(b []byte, s string) []byte {
	b = strconv.AppendInt(append(b, '$'), int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

func appendError(b []byte, msg string) []byte {
	return append(append(append(b, '-'), msg...), "\r\n"...)
}

// luaNumberToInt converts as Redis's (long long) cast does on x86-64:
// toward zero, and NaN or out of range gives the minimum.
func luaNumberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return math.MinInt64
	}
	return int64(f)
}

// oneLine replaces CR and LF, which cannot appear in an error or status
// reply, with spaces (as Redis does).
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// ---- SCRIPT ----

func scriptLoad(c *Client, body []byte) {
	sha, _, msg := c.Srv.scriptEngine().load(body)
	if msg != "" {
		c.WriteError(msg)
		return
	}
	c.WriteBulkString(sha)
}

func scriptExistsCommand(c *Client, args [][]byte) {
	e := c.Srv.scriptEngine()
	c.WriteArray(len(args) - 2)
	for _, sha := range args[2:] {
		if e.scripts[strings.ToLower(string(sha))] != nil {
			c.WriteInt(1)
		} else {
			c.WriteInt(0)
		}
	}
}

// scriptFlushCommand: SCRIPT FLUSH [ASYNC|SYNC]; both flush at once.
func scriptFlushCommand(c *Client, args [][]byte) {
	if len(args) > 3 || (len(args) == 3 && !ArgIs(args[2], "async") && !ArgIs(args[2], "sync")) {
		c.WriteError("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	e := c.Srv.scriptEngine()
	clear(e.scripts)
	c.Srv.cachedScripts.Store(0)
	e.reset()
	c.WriteOK()
}

func scriptHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "SCRIPT", []string{
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	})
}

// killContext is the context the Lua VM checks before each instruction:
// done only once SCRIPT KILL (or SHUTDOWN NOSAVE) stops the script. One
// serves every run until a kill uses it up (cheaper than a
// context.WithCancel per run).
type killContext struct {
	done chan struct{}
	once sync.Once
}

func newKillContext() *killContext { return &killContext{done: make(chan struct{})} }

func (k *killContext) kill() { k.once.Do(func() { close(k.done) }) }

func (k *killContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (k *killContext) Done() <-chan struct{}       { return k.done }
func (k *killContext) Value(any) any               { return nil }
func (k *killContext) Err() error {
	select {
	case <-k.done:
		return context.Canceled
	default:
		return nil
	}
}

// SetScriptDenyDisabled lets scripts call commands flagged noscript (on)
// or refuses them again, as DEBUG SET-DISABLE-DENY-SCRIPTS does in Redis:
// a test hook (its suite calls DEBUG PROTOCOL and CLIENT LIST from Lua).
func (s *Server) SetScriptDenyDisabled(on bool) { s.scriptDenyOff.Store(on) }

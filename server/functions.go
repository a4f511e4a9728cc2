package server

// The FUNCTION family and FCALL / FCALL_RO (Redis 7.0 functions;
// semantics: redis.io "Redis functions", FUNCTION LOAD, FCALL). Package
// functions holds the libraries, the load-time sandbox and the DUMP
// payloads; this file holds the commands, their durability and the
// run-time side: functions run in a Lua state of their own (Redis keeps
// them apart from EVAL's, so SCRIPT FLUSH does not touch them), opened like
// EVAL's (redis.call, cjson, the read-only globals; no KEYS or ARGV), and
// an FCALL runs like an EVAL: one transaction group, the busy-script
// machinery (FUNCTION KILL, FUNCTION STATS while busy), no-writes
// enforced for FCALL_RO and for functions flagged no-writes.
//
// Durability: every change of the library set (LOAD, DELETE, FLUSH,
// RESTORE) is committed as one keyspace operation holding the whole new
// set (keyspace/functions.go) before the new set is published and the
// reply sent; if the commit fails the old set stays. At start-up the
// recovered set is loaded again (NewServer); a library that no longer
// loads (only a change of this code could cause it) is logged and left
// out, and the next change of the set drops it from the log.
//
// Libraries are listed in name order (Redis: hash order). Of the function
// flags only no-writes changes anything here: allow-oom, allow-stale,
// no-cluster and allow-cross-slot-keys are accepted and listed, but there
// is no maxmemory, no replica and no cluster for them to relax.

import (
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/functions"
	"github.com/persimmon-db/persimmon/proto"
	lua "github.com/yuin/gopher-lua"
)

// Redis's busy replies while a function runs past the threshold, and
// while an EVAL does (FUNCTION STATS, FUNCTION KILL).
const (
	errBusyFunction  = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	functionChunk    = functions.ChunkName
	functionSrcLabel = "@" + functions.ChunkName
)

// functionRuntime is the server's function libraries and the Lua state
// they run in. Every field but set is guarded by the keyspace lock.
type functionRuntime struct {
	se     *scriptEngine
	engine *functions.Engine
	set    atomic.Pointer[functions.Set] // read without the lock (FUNCTION STATS)
}

// functionSet returns the current library set (never nil). It takes no
// lock.
func (s *Server) functionSet() *functions.Set {
	if rt := s.fn.Load(); rt != nil {
		return rt.set.Load()
	}
	return emptyFunctionSet
}

var emptyFunctionSet = functions.NewSet()

// functionRuntime returns the runtime, made on first use. Call it with the
// keyspace lock held.
func (s *Server) functionRuntime() *functionRuntime {
	if rt := s.fn.Load(); rt != nil {
		return rt
	}
	se := newScriptEngine(s.logf)
	se.globals.RawSetString("KEYS", lua.LNil) // functions get keys and args as arguments
	se.globals.RawSetString("ARGV", lua.LNil)
	rt := &functionRuntime{se: se}
	rt.engine = functions.NewEngine(functions.Config{
		L:         se.L,
		RunIndex:  se.env,
		Version:   Version,
		Log:       se.luaLog,
		ErrorText: luaRuntimeText,
	})
	// What loadstring and load compile runs where the functions do: in
	// the engine's environment (the load-time API while a library loads).
	se.L.Env = rt.engine.Env()
	rt.set.Store(functions.NewSet())
	s.fn.Store(rt)
	return rt
}

// loadFunctions loads the libraries recovered from the log (start-up).
func (s *Server) loadFunctions(codes [][]byte) {
	if len(codes) == 0 {
		return
	}
	rt := s.functionRuntime()
	set := rt.set.Load()
	for _, code := range codes {
		next, lib, err := rt.engine.Load(set, code, false, 0)
		if err != nil {
			h, _, _ := functions.ParseHeader(code)
			s.logf("# function library %q recovered from the log does not load and is left out: %v", h.Name, err)
			continue
		}
		set = next
		s.logf("function library %q loaded from the log", lib.Name)
	}
	rt.set.Store(set)
}

// commitFunctions makes next the library set: durable first, then
// published. It reports whether it did; on failure the error is the reply.
func commitFunctions(c *Client, rt *functionRuntime, next *functions.Set) bool {
	b := c.KS.NewBatch()
	b.SetFunctions(next.Codes())
	if err := c.KS.Commit(b); err != nil {
		c.WriteErr(err)
		return false
	}
	rt.set.Store(next)
	return true
}

func functionCommands() []Command {
	const rwNotes = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"
	const roNotes = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
	const fcallFlags = FlagNoScript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys | FlagMovableKeys
	fcallKeys := func(flags int, notes string) []KeySpec {
		return []KeySpec{{Notes: notes, Flags: flags, Index: 2, KeyNum: true, FirstKey: 1, KeyStep: 1}}
	}
	allShards := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	return []Command{
		{Name: "fcall", Arity: -3, Flags: fcallFlags, Group: "scripting", Since: "7.0.0",
			Summary: "Invoke a function", Run: fcallCommand,
			KeySpecs: fcallKeys(KeyRW|KeyAccess|KeyUpdate, rwNotes), GetKeys: NumkeysGetKeys(0, 2, 3)},
		{Name: "fcall_ro", Arity: -3, Flags: fcallFlags | FlagReadonly, Group: "scripting", Since: "7.0.0",
			Summary: "Invoke a read-only function", Run: fcallROCommand,
			KeySpecs: fcallKeys(KeyRO|KeyAccess, roNotes), GetKeys: NumkeysGetKeys(0, 2, 3)},
		{Name: "function", Arity: -2, Group: "scripting", Since: "7.0.0",
			Summary: "A container for function commands", Subcommands: []Command{
				{Name: "function|load", Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, Group: "scripting", Since: "7.0.0",
					Summary: "Create a function with the given arguments (name, code, description)", Run: functionLoadCommand, Tips: allShards},
				{Name: "function|delete", Arity: 3, Flags: FlagWrite | FlagNoScript, Group: "scripting", Since: "7.0.0",
					Summary: "Delete a function by name", Run: functionDeleteCommand, Tips: allShards},
				{Name: "function|flush", Arity: -2, Flags: FlagWrite | FlagNoScript, Group: "scripting", Since: "7.0.0",
					Summary: "Deleting all functions", Run: functionFlushCommand, Tips: allShards},
				{Name: "function|list", Arity: -2, Flags: FlagNoScript, Group: "scripting", Since: "7.0.0",
					Summary: "List information about all the functions", Run: functionListCommand,
					Tips: []string{"nondeterministic_output_order"}},
				{Name: "function|dump", Arity: 2, Flags: FlagNoScript, Group: "scripting", Since: "7.0.0",
					Summary: "Dump all functions into a serialized binary payload", Run: functionDumpCommand},
				{Name: "function|restore", Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, Group: "scripting", Since: "7.0.0",
					Summary: "Restore all the functions on the given payload", Run: functionRestoreCommand, Tips: allShards},
				{Name: "function|stats", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Group: "scripting", Since: "7.0.0",
					Summary: "Return information about the function currently running (name, description, duration)",
					Run:     functionStatsCommand, NoLock: true,
					Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}},
				{Name: "function|kill", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Group: "scripting", Since: "7.0.0",
					Summary: "Kill the function currently in execution.", Run: functionKillCommand, NoLock: true,
					Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"}},
				{Name: "function|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "scripting", Since: "7.0.0",
					Summary: "Show helpful text about the different subcommands", Run: functionHelpCommand, NoLock: true},
			}},
	}
}

// functionLoadCommand: FUNCTION LOAD [REPLACE] code.
func functionLoadCommand(c *Client, args [][]byte) {
	replace := false
	i := 2
	for ; i < len(args)-1; i++ {
		// Redis reads the option as a C string, up to its first NUL:
		// "REPLACE\x00x" is REPLACE, and an error prints that much
		if !ArgIs(CString(args[i]), "replace") {
			c.WriteError("ERR Unknown option given: " + string(CString(args[i])))
			return
		}
		replace = true
	}
	rt := c.Srv.functionRuntime()
	next, lib, err := rt.engine.Load(rt.set.Load(), args[i], replace, functions.LoadTimeout)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if commitFunctions(c, rt, next) {
		c.WriteBulkString(lib.Name)
	}
}

// functionDeleteCommand: FUNCTION DELETE library.
func functionDeleteCommand(c *Client, args [][]byte) {
	rt := c.Srv.functionRuntime()
	next, err := rt.set.Load().Delete(string(args[2]))
	if err != nil {
		c.WriteErr(err)
		return
	}
	if commitFunctions(c, rt, next) {
		c.WriteOK()
	}
}

// functionFlushCommand: FUNCTION FLUSH [ASYNC|SYNC]; both flush at once.
// Flushing no libraries writes nothing (there is nothing to make durable).
func functionFlushCommand(c *Client, args [][]byte) {
	switch {
	case len(args) > 3:
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try FUNCTION HELP.")
		return
	case len(args) == 3 && !ArgIs(args[2], "async") && !ArgIs(args[2], "sync"):
		c.WriteError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	if c.Srv.functionSet().LibraryCount() == 0 {
		c.WriteOK()
		return
	}
	if commitFunctions(c, c.Srv.functionRuntime(), functions.NewSet()) {
		c.WriteOK()
	}
}

// functionListCommand: FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func functionListCommand(c *Client, args [][]byte) {
	withCode := false
	var pattern []byte
	for i := 2; i < len(args); i++ {
		// Redis compares and prints the arguments as C strings, up to
		// their first NUL.
		switch {
		case !withCode && ArgIs(CString(args[i]), "withcode"):
			withCode = true
			continue
		case pattern == nil && ArgIs(CString(args[i]), "libraryname"):
			if i >= len(args)-1 {
				c.WriteError("ERR library name argument was not given")
				return
			}
			i++
			pattern = args[i]
			continue
		}
		c.WriteError("ERR Unknown argument " + string(CString(args[i])))
		return
	}
	libs := c.Srv.functionSet().Libraries()
	if pattern != nil {
		libs = slices.DeleteFunc(libs, func(l *functions.Library) bool { return !globMatchFold(pattern, []byte(l.Name)) })
	}
	c.WriteArray(len(libs))
	for _, l := range libs {
		n := 3
		if withCode {
			n = 4
		}
		c.WriteMap(n)
		c.WriteBulkString("library_name")
		c.WriteBulkString(l.Name)
		c.WriteBulkString("engine")
		c.WriteBulkString(l.Engine)
		c.WriteBulkString("functions")
		c.WriteArray(len(l.Functions))
		for _, f := range l.Functions {
			c.WriteMap(3)
			c.WriteBulkString("name")
			c.WriteBulkString(f.Name)
			c.WriteBulkString("description")
			if f.HasDescription {
				c.WriteBulkString(f.Description)
			} else {
				c.WriteNull()
			}
			c.WriteBulkString("flags")
			names := f.Flags.Names()
			c.WriteSet(len(names))
			for _, n := range names {
				c.WriteString(n)
			}
		}
		if withCode {
			c.WriteBulkString("library_code")
			c.WriteBulk(l.Code)
		}
	}
}

// functionDumpCommand: FUNCTION DUMP.
func functionDumpCommand(c *Client, _ [][]byte) {
	c.WriteBulk(functions.Dump(c.Srv.functionSet()))
}

// functionRestoreCommand: FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func functionRestoreCommand(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try FUNCTION HELP.")
		return
	}
	policy := functions.Append
	if len(args) == 4 {
		var err error
		if policy, err = functions.ParseRestorePolicy(string(args[3])); err != nil {
			c.WriteErr(err)
			return
		}
	}
	rt := c.Srv.functionRuntime()
	next, err := rt.engine.Restore(rt.set.Load(), args[2], policy)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if commitFunctions(c, rt, next) {
		c.WriteOK()
	}
}

// functionStatsCommand: FUNCTION STATS. It takes no lock (it answers while
// a function is busy): the set is read through its atomic pointer.
func functionStatsCommand(c *Client, _ [][]byte) {
	st := c.Srv.running.Load()
	if st != nil && !st.function {
		c.WriteError(errBusyScript)
		return
	}
	c.WriteMap(2)
	c.WriteBulkString("running_script")
	if st == nil {
		c.WriteNull()
	} else {
		c.WriteMap(3)
		c.WriteBulkString("name")
		c.WriteBulkString(st.name)
		c.WriteBulkString("command")
		c.WriteArray(len(st.args))
		for _, a := range st.args {
			c.WriteBulk(a)
		}
		c.WriteBulkString("duration_ms")
		c.WriteInt(time.Since(st.start).Milliseconds())
	}
	set := c.Srv.functionSet()
	c.WriteBulkString("engines")
	c.WriteMap(1)
	c.WriteBulkString(functions.EngineName)
	c.WriteMap(2)
	c.WriteBulkString("libraries_count")
	c.WriteInt(int64(set.LibraryCount()))
	c.WriteBulkString("functions_count")
	c.WriteInt(int64(set.FunctionCount()))
}

func functionKillCommand(c *Client, _ [][]byte) {
	if msg := c.Srv.scriptKill(false, false); msg != "" {
		c.WriteError(msg)
		return
	}
	c.WriteOK()
}

func functionHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "FUNCTION", []string{
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	})
}

func fcallCommand(c *Client, args [][]byte)   { fcallGeneric(c, args, false) }
func fcallROCommand(c *Client, args [][]byte) { fcallGeneric(c, args, true) }

// fcallGeneric runs FCALL / FCALL_RO with the keyspace lock held, checks
// in Redis 7.0's order: the function, numkeys, then the flags.
func fcallGeneric(c *Client, args [][]byte, readOnly bool) {
	f := c.Srv.functionSet().Function(string(args[1]))
	if f == nil {
		c.WriteError("ERR Function not found")
		return
	}
	numkeys, ok := ParseInt64(args[2])
	switch {
	case !ok:
		c.WriteError("ERR Bad number of keys provided")
		return
	case numkeys > int64(len(args)-3):
		c.WriteError("ERR Number of keys can't be greater than number of args")
		return
	case numkeys < 0:
		c.WriteError("ERR Number of keys can't be negative")
		return
	}
	noWrites := f.Flags&functions.NoWrites != 0
	// A function that may write is a write command, one without
	// allow-stale is refused on a stale replica (scriptFlagsToCmdFlags),
	// checked in processCommand's order.
	if !noWrites && c.Srv.minReplicasRefuse() {
		c.WriteError(errNoReplicas)
		return
	}
	if !noWrites && c.conn != nil && c.Srv.replicaStatus() != nil {
		c.WriteError("READONLY You can't write against a read only replica.")
		return
	}
	if f.Flags&functions.AllowStale == 0 && c.Srv.masterDown() {
		c.WriteError(errMasterDown)
		return
	}
	if readOnly && !noWrites {
		c.WriteError(errScriptWriteFlagRO)
		return
	}
	if !noWrites && f.Flags&functions.AllowOOM == 0 && c.scriptOOM() {
		c.refuseScriptOOM() // a function that may write is denyoom unless allow-oom (maxmemory.go)
		return
	}
	rt := c.Srv.functionRuntime()
	keys, argv := args[3:3+numkeys], args[3+numkeys:]
	cn := c.conn
	inTxn := cn != nil && cn.inExec
	env := &c.Srv.env
	if !inTxn {
		env.beginTxn()
	}
	mark := len(c.Out)
	rt.se.runFunction(c, f, args, keys, argv, readOnly || noWrites)
	if !inTxn {
		if err := env.endTxn(); err != nil {
			c.Out = c.Out[:mark]
			c.WriteErr(err)
		}
	}
}

// runFunction calls f with (keys, args) tables and appends its reply; the
// run is a script run as runScript's (busy threshold, kill, errors
// positioned "script: <name>, on @user_function:<line>.").
func (e *scriptEngine) runFunction(c *Client, f *functions.Function, cmdArgs, keys, argv [][]byte, readOnly bool) {
	L := e.L
	kt := L.CreateTable(len(keys), 0)
	for i, k := range keys {
		kt.RawSetInt(i+1, lua.LString(k))
	}
	at := L.CreateTable(len(argv), 0)
	for i, a := range argv {
		at.RawSetInt(i+1, lua.LString(a))
	}
	db := c.DB
	cn := c.conn
	var inExec bool
	var lastCmd *Command
	if cn != nil {
		inExec, lastCmd = cn.inExec, cn.lastCmd
		cn.inExec = true
	}
	kc := e.ctx
	st := c.Srv.functionStarted(cn, kc, f.Name, cmdArgs)
	run := &scriptRun{c: c, resp: proto.RESP2, readOnly: readOnly, allowOOM: f.Flags&functions.AllowOOM != 0, state: st}
	e.run = run
	L.Push(f.Callback)
	L.Push(kt)
	L.Push(at)
	err := frozenCall(c.KS, func() error { return L.PCall(2, 1, e.errFunc) }) // at one instant, as a script
	c.Srv.scriptEnded(st)
	if st.killed.Load() {
		e.ctx = newKillContext()
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
			if line, ok := chunkLineOf(functionChunk, obj.String()); ok {
				t.RawSetString("source", lua.LString(functionSrcLabel))
				t.RawSetString("line", lua.LNumber(line))
			}
			obj = t
		}
		writeScriptError(c, obj, scriptErrorReplyIn(functionChunk, f.Name, obj, run.errLine, run.errSrc))
		return
	}
	ret := L.Get(-1)
	L.Pop(1)
	writeLuaReply(&c.Writer, ret, run.resp, 0)
}

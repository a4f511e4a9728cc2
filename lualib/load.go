package lualib

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// LoadChunk compiles src as Lua 5.1's luaL_loadbuffer does for loadstring
// and load: chunkname is the name Lua 5.1 is given (for loadstring, the
// source itself by default), and the code's errors print it as ChunkID
// shows it ([string "redis = 5"]:1: ..., as Redis does; RuntimeChunkID
// for run-time errors). The function it
// returns runs in env: a script engine passes its read-only environment,
// so that compiled code cannot reach the real globals either. On a
// syntax error it returns Lua 5.1's message instead.
//
// The chunk's name is remembered in L (SourceLabel): Redis's error
// handler labels an error with the raw name ("on redis = 5:1.").
func LoadChunk(L *lua.LState, src, chunkname string, env *lua.LTable) (*lua.LFunction, string) {
	if i := indexByte(chunkname, 0); i >= 0 {
		chunkname = chunkname[:i] // Lua 5.1 takes the name as a C string
	}
	if err := CheckSyntax([]byte(src), ChunkID(chunkname)); err != nil {
		return nil, err.Error()
	}
	id := RuntimeChunkID(chunkname)
	chunk, err := parse.Parse(strings.NewReader(src), id)
	if err != nil {
		return nil, strings.TrimSpace(err.Error())
	}
	proto, err := lua.Compile(chunk, id)
	if err != nil {
		return nil, strings.TrimSpace(err.Error())
	}
	noteChunkName(L, id, chunkname)
	fn := L.NewFunctionFromProto(proto)
	fn.Env = env
	return fn, ""
}

// chunkNamesKey is where in L's registry the names of chunks compiled by
// LoadChunk are kept: a userdata holding a *chunkNames.
const chunkNamesKey = "persimmon.lualib.chunknames"

// maxChunkNames bounds the names kept: a script compiling chunks in a loop
// does not grow the map without end (a name forgotten only changes an
// error's label back to "@<id>").
const maxChunkNames = 256

// chunkNames maps a chunk's ID (the source name its code carries) to the
// name it was loaded with.
type chunkNames struct{ m map[string]string }

func noteChunkName(L *lua.LState, id, name string) {
	var names *chunkNames
	if ud, ok := L.G.Registry.RawGetString(chunkNamesKey).(*lua.LUserData); ok {
		names, _ = ud.Value.(*chunkNames)
	}
	if names == nil {
		names = &chunkNames{m: make(map[string]string)}
		ud := L.NewUserData()
		ud.Value = names
		L.G.Registry.RawSetString(chunkNamesKey, ud)
	}
	if name == "@"+id {
		delete(names.m, id) // SourceLabel's default
		return
	}
	if _, ok := names.m[id]; !ok && len(names.m) >= maxChunkNames {
		clear(names.m)
	}
	names.m[id] = name // two names of one ID: the latest wins
}

// SourceLabel is what Lua 5.1's debug.getinfo calls the source of code
// whose proto carries the source name source, and so what Redis's error
// handler puts in an error's position ("@user_script", or for a chunk
// compiled by LoadChunk the name it was loaded with: "redis = 5",
// "=(load)").
func SourceLabel(L *lua.LState, source string) string {
	if ud, ok := L.G.Registry.RawGetString(chunkNamesKey).(*lua.LUserData); ok {
		if names, ok := ud.Value.(*chunkNames); ok {
			if name, ok := names.m[source]; ok {
				return name
			}
		}
	}
	return "@" + source
}

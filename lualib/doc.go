// Package lualib holds the Lua libraries Redis 7.0 loads into its script
// engine, written for gopher-lua (Lua 5.1): cjson (Mark Pulford's Lua
// CJSON 2.1.0 as Redis ships it), cmsgpack (lua-cmsgpack 0.4.0), bit
// (LuaBitOp) and struct (Roberto Ierusalimschy's struct library).
//
// What it owns: the libraries' tables and functions, their settings (the
// cjson encode/decode options live in the Lua state that opened cjson and
// persist across scripts until the state is closed, as in Redis), and the
// exact bytes and texts they produce. The reference is what Debian's
// redis-server 7.0.15 answers: number formatting (%.14g, Lua 5.1's
// LUAI_NUMFFORMAT), the choice of MessagePack encodings (smallest integer
// width, float32 when a double survives the round trip, arrays for tables
// with keys 1..n, 16 levels of nesting before nil), 32-bit bit operations
// on numbers reduced the way LuaBitOp does (adding 2^52+2^51 and keeping
// the low word), struct's sizes for x86-64 (int 4, long and size_t 8,
// native little endian) and every error message, worded as Lua's
// luaL_argerror/luaL_error print them ("bad argument #1 to 'encode'
// (expected 1 argument)", positioned at the calling line). It also owns
// Lua 5.1's grammar check (CheckSyntax) and chunk names (ChunkID,
// RuntimeChunkID), and compiles loadstring's and load's chunks
// (LoadChunk) into the environment the script engine gives, remembering
// each chunk's name in the Lua state's registry for error positions
// (SourceLabel).
//
// Invariants: no function keeps a Go pointer to a Lua value beyond its
// call; nothing here touches the keyspace, the network or the files.
// Each library is a plain table; protecting it from changes (Redis 7's
// read-only globals) is the script engine's job, not this package's.
//
// Known difference: an object encoded by cjson.encode or a map packed by
// cmsgpack.pack lists its keys in gopher-lua's table order (array part,
// then keys in insertion order), not in the order of Lua 5.1's hash
// nodes, so a multi-key object's bytes can differ from Redis's while
// decoding to the same table.
package lualib

// Package functions is Redis 7.0's function libraries (FUNCTION LOAD,
// FCALL; semantics: redis.io "Redis functions", "FUNCTION LOAD", "FCALL"):
// the "#!lua name=<lib>" header, loading a library's code in a sandboxed
// Lua state where redis.register_function captures its functions and
// their flags, the set of libraries and functions with the checks that
// guard it (names, collisions, REPLACE), what FUNCTION LIST and FUNCTION
// STATS report, and FUNCTION DUMP / RESTORE payloads (RDB records, package
// rdb).
//
// What it owns: an Engine (one Lua state's load-time sandbox and the
// environment every library's code and functions run in) and Sets (the
// libraries, immutable: every change returns a new Set, so a caller can
// make a change durable first and publish it after, or drop it). What it
// does not own: running a function (redis.call, replies, busy scripts and
// FUNCTION KILL are the server's script runtime, which opens the run-time
// globals in the Lua state it hands to NewEngine), durability (the server
// logs a Set's Codes as one keyspace record) and argument parsing of the
// commands.
//
// Sandbox. As in Redis 7.0 a library's code runs once at load with a
// different view of the globals than its functions get at run time: at
// load only `redis` exists, holding register_function, log, the LOG_*
// levels, REDIS_VERSION and REDIS_VERSION_NUM; reading any other name
// (math, string, redis.call, KEYS) is "Script attempted to access
// nonexistent global variable '<name>'" and assigning any global or field
// of redis is "Attempt to modify a readonly table". At run time the same
// environment resolves names through the caller's run-time index (the
// server's read-only globals), and register_function, if a function kept
// a reference to the load-time redis table, answers "redis.register_function
// can only be called on FUNCTION LOAD command". Loading is stopped after
// LoadTimeout ("FUNCTION LOAD timeout"); start-up and RESTORE load without
// a limit, as Redis loads from its RDB.
//
// Invariants: a Set never holds two functions whose names are equal
// ignoring ASCII case (FCALL looks names up that way), nor a library
// without functions; a failed Load or Restore leaves the Set it was given
// unchanged; libraries and functions are listed in name order (Redis lists
// them in hash order, which varies from run to run).
//
// Known differences from Redis 7.0: two functions of one library whose
// names differ only in case are refused ("Function already exists in the
// library"); Redis 7.0.15 accepts them and then crashes (an assertion in
// libraryUnlink) when the library is replaced or deleted. Compile and
// run-time error texts are Lua 5.1's where lualib.CheckSyntax and
// Config.ErrorText reach them.
package functions

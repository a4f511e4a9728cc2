package server

import (
	"runtime"
	"runtime/debug"
)

// memoryCommands is MEMORY (semantics: redis.io MEMORY PURGE): PURGE runs a
// garbage collection and hands free memory back to the OS, so that INFO
// memory's used_memory afterwards counts live data only (the benchmark
// reads it for bytes per element).
func memoryCommands() []Command {
	return []Command{
		{Name: "memory", Arity: -2, Group: "server", Since: "4.0.0",
			Summary: "A container for memory diagnostics commands", Subcommands: []Command{
				{Name: "memory|purge", Arity: 2, Group: "server", Since: "4.0.0",
					Summary: "Ask the allocator to release memory", Run: cmdMemoryPurge, NoLock: true,
					Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}},
				{Name: "memory|usage", Arity: -3, Flags: FlagReadonly, Group: "server", Since: "4.0.0",
					Summary: "Estimate the memory usage of a key", Run: cmdMemoryUsage,
					FirstKey: 2, LastKey: 2, Step: 1, KeySpecs: []KeySpec{KeyRange(KeyRO, 2, 0, 1)}},
				{Name: "memory|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "server", Since: "4.0.0",
					Summary: "Show helpful text about the different subcommands", Run: cmdMemoryHelp, NoLock: true},
			}},
	}
}

func cmdMemoryPurge(c *Client, args [][]byte) {
	runtime.GC()
	debug.FreeOSMemory()
	c.WriteOK()
}

// cmdMemoryUsage: MEMORY USAGE key [SAMPLES count] (semantics: redis.io
// MEMORY USAGE): the key's estimated bytes (Keyspace.MemoryUsage), nil for
// a missing key. SAMPLES is parsed and checked as Redis does; the estimate
// needs no sampling.
func cmdMemoryUsage(c *Client, args [][]byte) {
	for j := 3; j < len(args); j += 2 {
		if !ArgIs(args[j], "samples") || j+1 >= len(args) {
			c.WriteError(ErrSyntax)
			return
		}
		n, ok := ParseInt64(args[j+1])
		if !ok {
			c.WriteErr(ErrNotIntegerReply)
			return
		}
		if n < 0 {
			c.WriteError(ErrSyntax)
			return
		}
	}
	c.KS.CountLookups(false) // Redis finds the key without counting it
	n, ok := c.KS.MemoryUsage(c.DB, args[2])
	if !ok {
		c.WriteNull()
		return
	}
	c.WriteInt(n)
}

func cmdMemoryHelp(c *Client, _ [][]byte) {
	writeHelp(c, "MEMORY", []string{
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	})
}

package resp

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
					Summary: "Ask the allocator to release memory", Run: cmdMemoryPurge, NoLock: true},
			}},
	}
}

func cmdMemoryPurge(c *Client, args [][]byte) {
	runtime.GC()
	debug.FreeOSMemory()
	c.WriteOK()
}

package server

import (
	"bytes"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"time"
)

// maxmemory (semantics: redis.io "Key eviction", Redis 7.0's processCommand
// and scriptVerifyOOM). Persimmon evicts nothing: whatever
// maxmemory-policy says, a server over its maxmemory behaves as Redis's
// noeviction policy does. Used memory is the live Go heap as of the last
// collection (runtime/metrics /gc/heap/live:bytes): INFO's used_memory also
// counts garbage not yet swept, which would refuse writes at random points
// of the collection cycle (a limit set a little above used_memory, as
// Redis's tests do, then tripped on the next allocation). The arena's
// mapped segments are not counted: they are the data's persistent copy,
// paged in from disk, as Redis's used_memory does not count its RDB.
//
// With maxmemory set and used memory above it:
//   - a denyoom command (SET, LPUSH, ...) is refused before it runs with
//     "-OOM command not allowed when used memory > 'maxmemory'.";
//   - inside MULTI every command but EXEC, DISCARD, QUIT and RESET is
//     refused (the queue itself would grow), which dooms the transaction;
//     EXEC is refused when a queued command was denyoom;
//   - a script with a shebang is refused unless its flags say allow-oom or
//     no-writes (a function likewise, by its flags); a script without one
//     runs, and its first denyoom redis.call fails with the OOM error
//     unless it already wrote (it cannot be stopped half-way). The state is
//     the one seen when the command (or EXEC) started, as Redis's
//     pre_command_oom_state.
//
// Reading the heap costs about 1.5 µs (runtime/metrics), more than a small
// command, so the reading is kept for oomRefresh and shared by every
// connection; CONFIG SET maxmemory takes a fresh one. Without maxmemory the
// only cost is one atomic load per command.

// errOOM is Redis's shared.oomerr; errScriptOOM its refusal of a script
// inside EXEC (scriptPrepareForRun), where no pre-command check ran.
const (
	errOOM       = "OOM command not allowed when used memory > 'maxmemory'."
	errScriptOOM = "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
)

// oomRefresh is how long a used-memory reading stands.
const oomRefresh = time.Millisecond

// monoBase is the origin of memoryLimit.read's monotonic clock.
var monoBase = time.Now()

// memoryLimit is the server's maxmemory state.
type memoryLimit struct {
	max  atomic.Uint64 // maxmemory in bytes; 0: no limit
	read atomic.Int64  // when over was computed: ns since monoBase
	over atomic.Bool   // used memory > max at that reading
}

// outOfMemory reports whether used memory is above maxmemory (false when
// there is none).
func (s *Server) outOfMemory() bool {
	limit := s.mem.max.Load()
	if limit == 0 {
		return false
	}
	now := int64(time.Since(monoBase))
	if last := s.mem.read.Load(); now-last >= int64(oomRefresh) && s.mem.read.CompareAndSwap(last, now) {
		s.mem.over.Store(liveHeap() > limit)
	}
	return s.mem.over.Load()
}

// setMaxmemory applies CONFIG SET maxmemory (and the config file's).
func (s *Server) setMaxmemory(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return err
	}
	s.mem.max.Store(n)
	if n == 0 {
		return nil
	}
	used := liveHeap()
	s.mem.over.Store(used > n)
	s.mem.read.Store(int64(time.Since(monoBase)))
	if used > n {
		// Redis's warning, with what Persimmon does instead of evicting.
		s.logf("WARNING: the new maxmemory value set via CONFIG SET (%d) is smaller than the current memory usage (%d): "+
			"Persimmon evicts nothing, so commands that may grow memory are refused with -OOM", n, used)
	}
	return nil
}

// oomRefuses reports whether the out-of-memory state refuses cmd before it
// runs, and records the state for the scripts it may run (oomAtStart).
func (c *conn) oomRefuses(cmd *Command) bool {
	oom := c.srv.outOfMemory()
	c.oomAtStart = oom
	switch {
	case !oom:
		return false
	case cmd.Flags&FlagDenyOOM != 0:
		return true
	case cmd.Name == "exec":
		return c.MultiDenyOOM
	case c.InMulti:
		return cmd.Name != "discard" && cmd.Name != "quit" && cmd.Name != "reset"
	}
	return false
}

// scriptOOM reports whether the command that runs the script (EVAL, FCALL,
// EXEC) started while used memory was above maxmemory.
func (c *Client) scriptOOM() bool {
	return c.conn != nil && c.Srv.mem.max.Load() != 0 && c.conn.oomAtStart
}

// refuseScriptOOM answers a script (or function) that may not run over
// maxmemory. At top level Redis refuses it before it runs (processCommand
// reads the script's flags), which counts as a rejected call; inside EXEC
// the script runner refuses it, with its own message.
func (c *Client) refuseScriptOOM() {
	if cn := c.conn; cn != nil && !cn.inExec {
		c.WriteError(errOOM)
		cn.runRejected = true
		return
	}
	c.WriteError(errScriptOOM)
}

// evalDenyOOM reports whether a queued EVAL or EVAL_RO makes EXEC denyoom:
// its script has a shebang whose flags say neither allow-oom nor no-writes
// (Redis's evalGetCommandFlags, which reads the flags of a script it has
// not cached from its text; EVALSHA and FCALL are checked when they run).
func evalDenyOOM(cmd *Command, args [][]byte) bool {
	if (cmd.Name != "eval" && cmd.Name != "eval_ro") || len(args) < 2 || !bytes.HasPrefix(args[1], []byte("#!")) {
		return false
	}
	first, _, ok := bytes.Cut(args[1], []byte("\n"))
	if !ok {
		return false
	}
	noWrites, allowOOM, msg := parseShebangFlags(string(first))
	return msg == "" && !noWrites && !allowOOM
}

// liveHeap is the Go heap's live bytes at the end of the last collection.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

package server

import (
	"bytes"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxmemory (semantics: redis.io "Key eviction", Redis 7.0's processCommand
// and scriptVerifyOOM). Before each command, with maxmemory set and used
// memory above it, the server first evicts keys by maxmemory-policy
// (evict.go, which also says what used memory counts); if that cannot
// bring it under the limit (noeviction, no key left to evict) the server
// is out of memory:
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
// The heap part of used memory is the live Go heap at the end of a
// collection (runtime/metrics /gc/heap/live:bytes; the least of the last
// few, see heapLives): the allocated bytes also count garbage not yet
// swept, which would refuse writes (or evict) at random points of the
// collection cycle. Reading it costs about 1.5 µs,
// more than a small command, so a reading stands for oomRefresh and is
// shared by every connection; CONFIG SET maxmemory takes a fresh one.
// Without maxmemory the only cost is one atomic load per command.

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

// memoryLimit is the server's maxmemory state and eviction settings.
type memoryLimit struct {
	max      atomic.Uint64 // maxmemory in bytes; 0: no limit
	read     atomic.Int64  // when heap was read: ns since monoBase
	heap     atomic.Uint64 // the live heap at that reading (the least of lives)
	gcCycles atomic.Uint64 // completed collections at that reading

	// lives are the live heaps the last heapLives collections left (a
	// refresh that saw a new cycle adds its reading; livesMu).
	livesMu sync.Mutex
	lives   [heapLives]uint64
	livesN  int

	// credit is the heap the keys evicted during collection cycle
	// creditCycle[i] held (i: the cycle's parity), not yet seen by a
	// heap reading: a cycle's credit stands until two more collections
	// have completed. Written under the keyspace lock.
	credit      [2]atomic.Int64
	creditCycle [2]atomic.Uint64

	policy        atomic.Int32 // maxmemory-policy (evict.go's policy constants)
	policyGen     atomic.Int64 // bumped by every maxmemory-policy change (the pool is reset)
	samples       atomic.Int64 // maxmemory-samples
	tenacity      atomic.Int64 // maxmemory-eviction-tenacity
	lazyEvict     atomic.Bool  // lazyfree-lazy-eviction: replicas get UNLINK
	replicaIgnore atomic.Bool  // replica-ignore-maxmemory
	evicting      atomic.Bool  // an evictInBackground is running

	// pinned, when not negative, is the heap reading (tests: every server
	// of a test process shares its Go heap, so another test's garbage
	// moves the reading by tens of MB).
	pinned atomic.Int64
}

// initEvictionDefaults sets the eviction settings' defaults (newServer;
// the config table applies what a file or CONFIG SET changes).
func (m *memoryLimit) initEvictionDefaults() {
	m.pinned.Store(-1)
	m.samples.Store(5)
	m.tenacity.Store(10)
	m.replicaIgnore.Store(true)
}

// heapLives is how many collections' live heaps heapNow takes the least
// of. A collection's live figure also counts what was allocated while it
// marked (Go allocates black), garbage by the next one: a command-heavy
// moment adds hundreds of KB that were never data. The least of the last
// three is the heap that stayed; real growth shows three collections on.
const heapLives = 3

// heapNow returns the live heap reading, refreshed when it is older than
// oomRefresh (or if fresh is set).
func (m *memoryLimit) heapNow(fresh bool) uint64 {
	if p := m.pinned.Load(); p >= 0 {
		return uint64(p)
	}
	now := int64(time.Since(monoBase))
	if last := m.read.Load(); (fresh || now-last >= int64(oomRefresh)) && m.read.CompareAndSwap(last, now) {
		live, cycles := liveHeap()
		m.livesMu.Lock()
		if cycles == 0 {
			m.heap.Store(live) // no collection yet: the allocated objects
		} else if cycles != m.gcCycles.Load() || m.livesN == 0 {
			m.lives[m.livesN%heapLives] = live
			m.livesN++
			least := live
			for _, l := range m.lives[:min(m.livesN, heapLives)] {
				least = min(least, l)
			}
			m.heap.Store(least)
		}
		m.gcCycles.Store(cycles)
		m.livesMu.Unlock()
	}
	return m.heap.Load()
}

// creditHeap notes n bytes of heap freed by an eviction (keyspace lock).
func (m *memoryLimit) creditHeap(n int64) {
	c := m.gcCycles.Load()
	i := c % 2
	if m.creditCycle[i].Load() != c {
		m.credit[i].Store(0)
		m.creditCycle[i].Store(c)
	}
	m.credit[i].Add(n)
}

// heapCredit is the evicted heap the current reading does not reflect.
func (m *memoryLimit) heapCredit() uint64 {
	c := m.gcCycles.Load()
	var sum int64
	for i := range m.credit {
		if cc := m.creditCycle[i].Load(); cc+2 > c {
			sum += m.credit[i].Load()
		}
	}
	return uint64(max(sum, 0))
}

// usedMemory is used memory as maxmemory counts it (evict.go): the live
// heap plus the arena's live bytes, less the heap credit. locked: the
// caller holds the keyspace lock (the live bytes are read exactly).
func (s *Server) usedMemory(locked bool) uint64 {
	used := s.mem.heapNow(false)
	if ks := s.ks; ks != nil {
		if locked {
			used += uint64(max(ks.LiveBytes(), 0))
		} else {
			used += uint64(max(ks.LiveBytesSnapshot(), 0))
		}
	}
	return used - min(s.mem.heapCredit(), used)
}

// outOfMemory reports whether used memory is above maxmemory (false when
// there is none).
func (s *Server) outOfMemory() bool {
	limit := s.mem.max.Load()
	return limit != 0 && s.usedMemory(false) > limit
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
	s.mem.heapNow(true)
	if used := s.usedMemory(false); used > n {
		s.logf("WARNING: the new maxmemory value set via CONFIG SET (%d) is smaller than the current memory usage (%d). "+
			"This will result in key eviction and/or the inability to accept new write commands depending on the maxmemory-policy.", n, used)
		s.evictInBackground() // evict.go
	}
	return nil
}

// checkMaxmemory runs the eviction a command finds due and reports
// whether the server is out of memory for it (processCommand's
// performEvictions() == EVICT_FAIL).
func (c *conn) checkMaxmemory() bool {
	return c.srv.outOfMemory() && c.srv.performEvictions(c) == evictFail
}

// oomRefuses reports whether the out-of-memory state refuses cmd before it
// runs, and records the state for the scripts it may run (oomAtStart).
func (c *conn) oomRefuses(cmd *Command) bool {
	oom := c.checkMaxmemory()
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
	f, ok := evalShebang(cmd, args)
	return ok && !f.noWrites && !f.allowOOM
}

// evalMayWrite reports whether a queued EVAL or EVAL_RO makes EXEC a
// write: its script has a shebang whose flags do not say no-writes
// (Redis's scriptFlagsToCmdFlags).
func evalMayWrite(cmd *Command, args [][]byte) bool {
	f, ok := evalShebang(cmd, args)
	return ok && !f.noWrites
}

// evalDenyStale reports whether an EVAL or EVAL_RO is refused on a stale
// replica before it runs: its script has a shebang whose flags do not say
// allow-stale (scriptFlagsToCmdFlags clears EVAL's stale flag).
func evalDenyStale(cmd *Command, args [][]byte) bool {
	f, ok := evalShebang(cmd, args)
	return ok && !f.allowStale
}

// evalShebang reads the flags of an EVAL or EVAL_RO script's shebang line
// before it runs: ok is false for another command, a script without a
// shebang, or a shebang that does not parse (the script's compile then
// answers the error, and the command's own flags stand, as in Redis's
// evalGetCommandFlags).
func evalShebang(cmd *Command, args [][]byte) (shebangFlags, bool) {
	if (cmd.Name != "eval" && cmd.Name != "eval_ro") || len(args) < 2 || !bytes.HasPrefix(args[1], []byte("#!")) {
		return shebangFlags{}, false
	}
	first, _, _ := bytes.Cut(args[1], []byte("\n"))
	f, msg := parseShebangFlags(string(first))
	return f, msg == ""
}

// liveHeap is the Go heap's live bytes at the end of the last collection,
// and the number of collections completed. Before the first collection
// there is no live figure: the allocated objects stand for it.
func liveHeap() (live, cycles uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		live = sample[0].Value.Uint64()
	}
	if sample[1].Value.Kind() == metrics.KindUint64 {
		cycles = sample[1].Value.Uint64()
	}
	if cycles == 0 && sample[2].Value.Kind() == metrics.KindUint64 {
		live = sample[2].Value.Uint64()
	}
	return live, cycles
}

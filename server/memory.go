package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"

	"github.com/persimmon-db/persimmon/keyspace"
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
				{Name: "memory|stats", Arity: 2, Group: "server", Since: "4.0.0",
					Summary: "Show memory usage details", Run: cmdMemoryStats, NoLock: true,
					Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}},
				{Name: "memory|doctor", Arity: 2, Group: "server", Since: "4.0.0",
					Summary: "Outputs memory problems report", Run: cmdMemoryDoctor, NoLock: true,
					Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}},
				{Name: "memory|malloc-stats", Arity: 2, Group: "server", Since: "4.0.0",
					Summary: "Show allocator internal stats", Run: cmdMemoryMallocStats, NoLock: true,
					Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}},
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

// memoryStats are MEMORY STATS' figures: the Go heap stands for Redis's
// allocator, the resident set for its RSS; the arena's mapped segments
// are file-backed memory outside the heap.
type memoryStats struct {
	heap, heapInuse, rss uint64
	total                uint64 // used_memory: heap plus the arena's live bytes
	keys                 int64
	dbs                  []dbMemory
	scripts              int64
}

type dbMemory struct {
	db             int
	keys, expires  int
	overheadMain   int64
	overheadExpire int64
}

// memoryStats gathers them; locked says the caller (EXEC) holds the
// keyspace lock already.
func (s *Server) memoryStats(locked bool) memoryStats {
	var m memoryStats
	m.heap, m.heapInuse = goHeap()
	m.total = m.heap
	m.rss, _, _ = residentBytes()
	m.scripts = s.cachedScripts.Load()
	if s.env.dbInfo == nil {
		return m
	}
	if !locked {
		s.env.lock()
		defer s.env.unlock()
	}
	if s.ks != nil {
		m.total += uint64(max(s.ks.LiveBytes(), 0)) // INFO used_memory's sum (evict.go)
	}
	for db := range keyspace.NumDBs {
		in := s.env.dbInfo(db) // exact now, as INFO keyspace
		if in.Keys == 0 {
			continue
		}
		m.keys += int64(in.Keys)
		m.dbs = append(m.dbs, dbMemory{db: db, keys: in.Keys, expires: in.Expires,
			overheadMain: int64(in.Keys) * memOverheadPerKey, overheadExpire: int64(in.Expires) * memOverheadPerExpire})
	}
	return m
}

// cmdMemoryStats: MEMORY STATS (semantics: redis.io MEMORY STATS): Redis's
// map of fields, filled with what Persimmon has (the Go heap as the
// allocator, per-key overheads as MEMORY USAGE estimates them, 0 where
// Persimmon has no such thing: replication backlog in memory, AOF buffer,
// cluster links).
func cmdMemoryStats(c *Client, _ [][]byte) {
	m := c.Srv.memoryStats(c.conn != nil && c.conn.inExec)
	var overheadDB int64
	for _, d := range m.dbs {
		overheadDB += d.overheadMain + d.overheadExpire
	}
	overhead := overheadDB
	dataset := max(int64(m.total)-overhead, 0)
	ratio := func(a, b uint64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	perKey := int64(0)
	if m.keys > 0 {
		perKey = int64(m.total) / m.keys
	}
	c.WriteMap(27 + len(m.dbs))
	ints := func(name string, v int64) {
		c.WriteBulkString(name)
		c.WriteInt(v)
	}
	dbl := func(name string, v float64) {
		c.WriteBulkString(name)
		c.WriteDouble(v)
	}
	ints("peak.allocated", int64(m.heapInuse))
	ints("total.allocated", int64(m.total))
	ints("startup.allocated", 0)
	ints("replication.backlog", 0)
	ints("clients.slaves", 0)
	ints("clients.normal", 0)
	ints("cluster.links", 0)
	ints("aof.buffer", 0)
	ints("lua.caches", m.scripts)
	ints("functions.caches", 0)
	for _, d := range m.dbs {
		c.WriteBulkString("db." + strconv.Itoa(d.db))
		c.WriteMap(3)
		ints("overhead.hashtable.main", d.overheadMain)
		ints("overhead.hashtable.expires", d.overheadExpire)
		ints("overhead.hashtable.slot-to-keys", 0) // cluster mode only: 0, as Redis without it
	}
	ints("overhead.total", overhead)
	ints("keys.count", m.keys)
	ints("keys.bytes-per-key", perKey)
	ints("dataset.bytes", dataset)
	dbl("dataset.percentage", 100*ratio(uint64(dataset), m.total))
	dbl("peak.percentage", 100*ratio(m.heap, m.heapInuse))
	ints("allocator.allocated", int64(m.heap))
	ints("allocator.active", int64(m.heapInuse))
	ints("allocator.resident", int64(m.rss))
	dbl("allocator-fragmentation.ratio", ratio(m.heapInuse, m.heap))
	ints("allocator-fragmentation.bytes", int64(m.heapInuse)-int64(m.heap))
	dbl("allocator-rss.ratio", ratio(m.rss, m.heapInuse))
	ints("allocator-rss.bytes", int64(m.rss)-int64(m.heapInuse))
	dbl("rss-overhead.ratio", 1)
	ints("rss-overhead.bytes", 0)
	dbl("fragmentation", ratio(m.rss, m.heap))
	ints("fragmentation.bytes", int64(m.rss)-int64(m.heap))
}

// cmdMemoryDoctor: MEMORY DOCTOR: Redis 7.0's report
// (getMemoryDoctorReport, object.c), its rules applied to the figures
// INFO memory gives: used_memory and used_memory_peak, the resident set
// against used_memory (mem_fragmentation_ratio), the heap spans against
// the live objects (allocator_frag_ratio), the resident set against the
// spans (allocator_rss_ratio: here the heap the Go runtime keeps
// resident, in-use spans plus free ones not yet returned to the OS,
// against the in-use spans), the cached scripts. The resident set it
// judges is the anonymous one: the mapped segments' resident pages are
// the data itself, not allocator overhead, so counting them (as INFO's
// used_memory_rss does) would report "High total RSS" on any dataset.
func cmdMemoryDoctor(c *Client, _ [][]byte) {
	s := c.Srv
	var f doctorFigures
	s.mem.heapNow(true)
	f.used = s.usedMemory(false)
	f.peak = s.notePeakMemory(f.used)
	f.heapObjects, f.heapInuse = goHeap()
	_, f.rss, _ = residentBytes()
	f.heapRetained = f.heapInuse + heapFreeBytes()
	f.scripts = s.cachedScripts.Load()
	c.WriteVerbatimString("txt", memoryDoctorReport(f))
}

// doctorFigures are what MEMORY DOCTOR judges (see cmdMemoryDoctor).
// Persimmon has no client or replica output buffers it counts (INFO's
// mem_clients_normal and mem_clients_slaves are 0) and no memory outside
// the allocator it tells apart (rss_overhead_ratio 1.00), so Redis's
// checks of those never fire.
type doctorFigures struct {
	used, peak             uint64
	heapObjects, heapInuse uint64
	rss                    uint64 // anonymous resident bytes
	heapRetained           uint64 // heapInuse plus free spans not released to the OS
	scripts                int64
}

// The texts of Redis 7.0's MEMORY DOCTOR (object.c); the high
// fragmentation one names the allocator, "go" here (INFO mem_allocator).
const (
	doctorNoIssue = "Hi Sam, I can't find any memory issue in your instance. " +
		"I can only account for what occurs on this base.\n"
	doctorEmpty = "Hi Sam, this instance is empty or is using very little memory, " +
		"my issues detector can't be used in these conditions. " +
		"Please, leave for your mission on Earth and fill it with some data. " +
		"The new Sam and I will be back to our programming as soon as I " +
		"finished rebooting.\n"
	doctorHead      = "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
	doctorBigPeak   = " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n"
	doctorHighFrag  = " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"go\".\n\n"
	doctorAllocFrag = " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n"
	doctorAllocRSS  = " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n"
	doctorScripts   = " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n"
	doctorTail      = "I'm here to keep you safe, Sam. I want to help you.\n"
)

// memoryDoctorReport is getMemoryDoctorReport on f: under 5 MB used the
// instance is "empty"; else each check over its threshold adds its
// paragraph, in Redis's order.
func memoryDoctorReport(f doctorFigures) string {
	if f.used < 5<<20 {
		return doctorEmpty
	}
	over := func(a, b uint64, ratio float64) bool { // a/b > ratio and a-b > 10 MB
		return b > 0 && float64(a)/float64(b) > ratio && a > b && a-b > 10<<20
	}
	var issues []string
	if float32(f.peak)/float32(f.used) > 1.5 { // Redis divides as float
		issues = append(issues, doctorBigPeak)
	}
	if over(f.rss, f.used, 1.4) {
		issues = append(issues, doctorHighFrag)
	}
	if over(f.heapInuse, f.heapObjects, 1.1) {
		issues = append(issues, doctorAllocFrag)
	}
	if over(f.heapRetained, f.heapInuse, 1.1) {
		issues = append(issues, doctorAllocRSS)
	}
	if f.scripts > 1000 {
		issues = append(issues, doctorScripts)
	}
	if len(issues) == 0 {
		return doctorNoIssue
	}
	return doctorHead + strings.Join(issues, "") + doctorTail
}

// cmdMemoryMallocStats: MEMORY MALLOC-STATS answers as a redis-server
// built without jemalloc does (the Go runtime is the allocator here; INFO
// memory and MEMORY STATS give its figures).
func cmdMemoryMallocStats(c *Client, _ [][]byte) {
	c.WriteBulkString("Stats not supported for the current allocator")
}

func cmdMemoryHelp(c *Client, _ [][]byte) {
	writeHelp(c, "MEMORY", []string{
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	})
}

// heapFreeBytes is the Go heap's free spans that are still resident (not
// yet returned to the OS): the allocator's own overhead, as jemalloc's
// resident minus active is Redis's.
func heapFreeBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		return sample[0].Value.Uint64()
	}
	return 0
}

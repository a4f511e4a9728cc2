package server

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/repl"
	"github.com/persimmon-db/persimmon/wal"
)

// INFO (semantics: redis.io/commands/info). Sections come out in Redis's
// fixed order whatever order they were asked in; "default" is every
// section but commandstats, "all" and "everything" add it; an unknown
// section name contributes nothing. Memory: used_memory is what maxmemory
// counts (evict.go): the live Go heap as of the last collection plus the
// arena's live record bytes (the data's values live there); the heap's
// allocated objects, garbage included, are used_memory_heap and
// allocator_allocated. CPU: the main-thread fields are
// the event loop thread's in loop mode (threadcpu.go).

// infoSection is one INFO section; the constants are in output order.
type infoSection uint16

const (
	secServer infoSection = 1 << iota
	secClients
	secMemory
	secPersistence
	secStats
	secReplication
	secCPU
	secModules // always empty: no modules, but the header, as Redis prints it
	secCommandstats
	secErrorstats
	secLatencystats
	secCluster
	secKeyspace

	secDefault = secServer | secClients | secMemory | secPersistence | secStats |
		secReplication | secCPU | secModules | secErrorstats | secCluster | secKeyspace
	secAll = secDefault | secCommandstats | secLatencystats
)

var infoSectionNames = map[string]infoSection{
	"server":       secServer,
	"clients":      secClients,
	"memory":       secMemory,
	"persistence":  secPersistence,
	"stats":        secStats,
	"replication":  secReplication,
	"cpu":          secCPU,
	"modules":      secModules,
	"commandstats": secCommandstats,
	"errorstats":   secErrorstats,
	"latencystats": secLatencystats,
	"cluster":      secCluster,
	"keyspace":     secKeyspace,
	"default":      secDefault,
	"all":          secAll,
	"everything":   secAll,
}

// parseInfoSections turns INFO's arguments into a section set.
func parseInfoSections(args [][]byte) infoSection {
	if len(args) == 0 {
		return secDefault
	}
	var sel infoSection
	for _, a := range args {
		sel |= infoSectionNames[strings.ToLower(string(a))]
	}
	return sel
}

// infoData is everything INFO prints, gathered first so that formatting is
// a pure function (and testable without a server).
type infoData struct {
	now         time.Time
	started     time.Time
	lastSave    int64 // Unix seconds
	saveLSN     uint64
	saves       int64 // SAVE and BGSAVE calls (rdb_saves)
	aofRewrites int64 // BGREWRITEAOF calls (aof_rewrites)
	// replication is the replication section's lines (repl.InfoReplication).
	replication string
	syncStats   repl.MasterStats // INFO stats sync_full, sync_partial_ok, sync_partial_err

	pubsubChannels, pubsubPatterns int
	pubsubShard                    int // pubsubshard_channels
	migrateSockets                 int
	cachedScripts                  int64
	functions, libraries           int64
	functionBytes                  int64 // the libraries' source bytes
	maxmemory                      uint64
	maxmemoryPolicy                string
	totalSystemMemory              uint64
	peakMemory                     uint64 // the highest used_memory INFO or the sampler saw
	usedMemory                     uint64 // used_memory: the live heap + the arena's live bytes (evict.go)
	runID                          string
	pid                            int
	port                           int
	executable                     string
	configFile                     string
	osName                         string

	// tracking.go: INFO tracking_clients and tracking_total_*
	trackingClients, trackingKeys, trackingItems, trackingPrefixes int

	connectedClients int
	blockedClients   int64
	timeoutClients   int64 // clients_in_timeout_table
	maxClients       int64

	heapObjects, heapInuse, rss uint64
	keyOverhead                 int64  // the keyspace's per-key overhead estimate (memory.go)
	rssAnon, rssFile            uint64 // of rss: anonymous and file-backed (the mapped arena, the key index)

	ks     keyspace.Stats
	dbs    [keyspace.NumDBs]keyspace.DBInfo // INFO keyspace, all from one moment
	commit *committer                       // nil unless msync on the loop

	connsReceived, connsRejected, commands, errorReplies int64
	replyBufShrinks, replyBufExpands                     int64 // replybuf.go
	netIn, netOut, reads, writes                         int64
	evictedKeys                                          int64
	opsPerSec                                            int64
	inKbps, outKbps                                      float64

	cpuSys, cpuUser float64
	// mainSys, mainUser: the event loop thread's (threadcpu.go), or the
	// process's in goroutine mode.
	mainSys, mainUser float64
	gc                gcStats // INFO stats go_gc_* (gcstats.go)

	cmds    []cmdStatLine
	errors  []errorStatLine
	loading loadingInfo

	latencyTracking bool
	percentiles     []float64
	latency         []latencyStatLine
}

type cmdStatLine struct {
	name                           string
	calls, nanos, failed, rejected int64
}

func infoCommand(c *Client, args [][]byte) {
	sel := parseInfoSections(args[1:])
	d := c.Srv.gatherInfo(sel, c.conn.inExec)
	c.WriteVerbatim("txt", appendInfo(nil, sel, &d))
}

// gatherInfo collects what the selected sections print. locked says the
// caller (EXEC) already holds the keyspace lock.
func (s *Server) gatherInfo(sel infoSection, locked bool) infoData {
	d := infoData{
		now:         time.Now(),
		started:     s.started,
		lastSave:    s.lastSave.Load(),
		saveLSN:     s.saveLSN.Load(),
		saves:       s.saves.Load(),
		aofRewrites: s.aofRewrites.Load(),
		runID:       s.runID,
		pid:         os.Getpid(),
		port:        int(s.live.port.Load()),
		configFile:  s.cfg.ConfigFile,
		commit:      s.commit,
		maxClients:  s.live.maxClients.Load(),
	}
	if sel&secPersistence != 0 {
		d.loading = s.loadingInfo(d.now)
	}
	if sel&secServer != 0 {
		d.executable, _ = os.Executable()
		d.osName = osName()
	}
	if sel&secClients != 0 {
		d.connectedClients = s.numClients()
		d.trackingClients = int(s.track.clients.Load())
		if s.ks != nil {
			d.blockedClients = blockedClients(s.ks) + s.pause.waiting.Load() + // pause.go: held by CLIENT PAUSE
				s.replWaiting.Load() // replication_wait.go: WAIT, WAITAOF
			d.timeoutClients = timedBlockedClients(s.ks) + s.replWaitingTimed.Load()
		}
	}
	if sel&secMemory != 0 {
		d.cachedScripts = s.cachedScripts.Load()
		fs := s.functionSet()
		d.functions, d.libraries = int64(fs.FunctionCount()), int64(fs.LibraryCount())
		for _, code := range fs.Codes() {
			d.functionBytes += int64(len(code))
		}
		d.heapObjects, d.heapInuse = goHeap()
		d.rss, d.rssAnon, d.rssFile = residentBytes()
		d.totalSystemMemory = totalSystemMemory()
		if v, ok := s.ConfigValue("maxmemory"); ok {
			d.maxmemory, _ = strconv.ParseUint(v, 10, 64)
		}
		d.maxmemoryPolicy = "noeviction"
		if v, ok := s.ConfigValue("maxmemory-policy"); ok {
			d.maxmemoryPolicy = v
		}
	}
	if sel&secMemory != 0 && s.env.dbInfo != nil {
		// used_memory_overhead's per-key part, as MEMORY STATS counts it
		if !locked {
			s.env.lock()
		}
		for db := range keyspace.NumDBs {
			in := s.env.dbInfo(db)
			d.keyOverhead += memOverheadPerKey*int64(in.Keys) + memOverheadPerExpire*int64(in.Expires)
		}
		if !locked {
			s.env.unlock()
		}
	}
	if sel&(secMemory|secPersistence|secStats|secKeyspace) != 0 && s.env.stats != nil {
		d.ks = s.env.stats()
	}
	if sel&secMemory != 0 {
		// used_memory is what maxmemory counts (evict.go): the live heap
		// at the last collection and the arena's live records.
		s.mem.heapNow(true)
		d.usedMemory = s.usedMemory(false)
		d.peakMemory = s.notePeakMemory(d.usedMemory)
	}
	if sel&secKeyspace != 0 && s.env.dbInfo != nil {
		// Stats' key counts are refreshed in the background; INFO keyspace
		// must count a key written just before it, as Redis does, and
		// take keys, expires and avg_ttl from the same moment.
		if !locked {
			s.env.lock()
		}
		for db := range d.dbs {
			d.dbs[db] = s.env.dbInfo(db)
		}
		if !locked {
			s.env.unlock()
		}
	} else if sel&secKeyspace != 0 {
		for db := range d.dbs { // protocol tests' fake keyspace
			d.dbs[db] = keyspace.DBInfo{Keys: d.ks.Keys[db], Expires: d.ks.Expires[db]}
		}
	}
	if sel&secStats != 0 {
		st := &s.stats
		d.connsReceived = st.connsReceived.Load()
		d.connsRejected = st.connsRejected.Load()
		d.pubsubChannels, d.pubsubPatterns = s.pubsubCounts()
		d.pubsubShard = s.pubsubShardCount()
		d.trackingClients, d.trackingKeys, d.trackingItems, d.trackingPrefixes = s.track.counts()
		d.migrateSockets = s.migrateSockets()
		d.commands = st.commands.Load()
		d.errorReplies = st.errorReplies.Load()
		d.replyBufShrinks, d.replyBufExpands = s.replyBuf.shrinks.Load(), s.replyBuf.expands.Load()
		d.netIn, d.netOut = st.netIn.Load(), st.netOut.Load()
		d.reads, d.writes = st.reads.Load(), st.writes.Load()
		d.evictedKeys = st.evictedKeys.Load()
		d.opsPerSec, d.inKbps, d.outKbps = s.ops.rates()
		d.gc = st.gc.read()
	}
	if sel&secCPU != 0 {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			d.cpuSys = float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
			d.cpuUser = float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
		}
		var ok bool
		if d.mainSys, d.mainUser, ok = s.mainThreadCPU(); !ok {
			d.mainSys, d.mainUser = d.cpuSys, d.cpuUser
		}
	}
	if sel&secCommandstats != 0 {
		d.cmds = s.commandStats()
	}
	if sel&secErrorstats != 0 {
		d.errors = s.errors.snapshot()
	}
	if sel&secLatencystats != 0 {
		d.latencyTracking = s.live.latencyTracking.Load()
		d.percentiles = *s.live.latencyPercentiles.Load()
		if d.latencyTracking {
			d.latency = s.latencyStats(d.percentiles)
		}
	}
	if sel&secReplication != 0 && s.master != nil {
		var r *repl.Replica
		ic := repl.InfoConfig{ReplicaPriority: 100, ReadOnly: !s.replica.writable.Load(), Announced: true}
		if v, ok := s.ConfigValue("replica-priority"); ok {
			ic.ReplicaPriority, _ = strconv.Atoi(v)
		}
		if v, ok := s.ConfigValue("replica-announced"); ok {
			ic.Announced = v == "yes"
		}
		ic.FailoverState = s.failoverInfo() // failover.go
		if l := s.replicaStatus(); l != nil {
			r, ic.MasterHost, ic.MasterPort = l.r, l.host, l.port
		}
		d.replication = repl.InfoReplication(s.master, r, ic, d.now)
	}
	if sel&secStats != 0 && s.master != nil {
		d.syncStats = s.master.Stats()
	}
	return d
}

// commandStats lists every command (and subcommand) that was called or
// rejected, sorted by name.
func (s *Server) commandStats() []cmdStatLine {
	var out []cmdStatLine
	add := func(cmd *Command) {
		st := cmd.stats
		if st == nil {
			return
		}
		l := cmdStatLine{name: cmd.Name, calls: st.calls.Load(), nanos: st.nanos.Load(),
			failed: st.failed.Load(), rejected: st.rejected.Load()}
		if l.calls > 0 || l.rejected > 0 {
			out = append(out, l)
		}
	}
	for _, cmd := range s.cmdList {
		add(cmd)
		for i := range cmd.Subcommands {
			add(&cmd.Subcommands[i])
		}
	}
	slices.SortFunc(out, func(a, b cmdStatLine) int { return strings.Compare(a.name, b.name) })
	return out
}

// resetStats is CONFIG RESETSTAT.
func (s *Server) resetStats() {
	s.stats.reset()
	s.replyBuf.resetStats()
	s.errors.reset()
	if s.ks != nil { // nil: a test's fake environment
		s.ks.ResetStats()
	}
	for _, cmd := range s.cmdList {
		cmd.stats.reset()
		for i := range cmd.Subcommands {
			cmd.Subcommands[i].stats.reset()
		}
	}
}

func (st *cmdStats) reset() {
	if st == nil {
		return
	}
	st.calls.Store(0)
	st.failed.Store(0)
	st.rejected.Store(0)
	st.nanos.Store(0)
	st.resetLatency()
}

// appendInfo formats the selected sections as Redis does: "# Name" then
// "field:value" lines, CRLF-terminated, sections separated by a blank line.
func appendInfo(b []byte, sel infoSection, d *infoData) []byte {
	first := true
	section := func(name string) {
		if !first {
			b = append(b, "\r\n"...)
		}
		first = false
		b = append(b, "# "...)
		b = append(b, name...)
		b = append(b, "\r\n"...)
	}
	line := func(field string, value any) {
		b = append(b, field...)
		b = append(b, ':')
		b = fmt.Appendf(b, "%v", value)
		b = append(b, "\r\n"...)
	}
	uptime := int64(d.now.Sub(d.started) / time.Second)

	if sel&secServer != 0 {
		section("Server")
		line("redis_version", Version)
		line("redis_git_sha1", "00000000")
		line("redis_git_dirty", 0)
		line("redis_build_id", "0")
		line("redis_mode", "standalone")
		line("os", d.osName)
		line("arch_bits", strconv.Itoa(strconv.IntSize))
		line("monotonic_clock", "POSIX clock_gettime")
		line("multiplexing_api", "epoll")
		line("atomicvar_api", "c11-builtin")
		line("gcc_version", "0.0.0")
		line("go_version", runtime.Version())
		line("process_id", d.pid)
		line("process_supervised", "no")
		line("run_id", d.runID)
		line("tcp_port", d.port)
		line("server_time_usec", d.now.UnixMicro())
		line("uptime_in_seconds", uptime)
		line("uptime_in_days", uptime/86400)
		line("hz", 10)
		line("configured_hz", 10)
		line("lru_clock", (d.now.UnixMilli()/1000)&(1<<24-1))
		line("executable", d.executable)
		line("config_file", d.configFile)
		line("io_threads_active", 0)
	}
	if sel&secClients != 0 {
		section("Clients")
		line("connected_clients", d.connectedClients)
		line("cluster_connections", 0)
		line("maxclients", d.maxClients)
		line("client_recent_max_input_buffer", 0)
		line("client_recent_max_output_buffer", 0)
		line("blocked_clients", d.blockedClients)
		line("tracking_clients", d.trackingClients)
		line("clients_in_timeout_table", d.timeoutClients)
	}
	if sel&secMemory != 0 {
		// Redis 7.0's fields in its order, filled as MEMORY STATS fills
		// them (memory.go): the Go heap stands for the allocator, its live
		// objects for used_memory; 0 where Persimmon has no such thing
		// (defragmentation, lazy freeing, an AOF buffer, cluster links, an
		// in-memory replication backlog or client buffers it counts).
		// Persimmon's own fields follow.
		section("Memory")
		heap := d.usedMemory
		overhead := uint64(d.keyOverhead)
		dataset := heap - min(overhead, heap)
		line("used_memory", heap)
		line("used_memory_human", bytesToHuman(heap))
		line("used_memory_rss", d.rss)
		line("used_memory_rss_human", bytesToHuman(d.rss))
		line("used_memory_peak", d.peakMemory)
		line("used_memory_peak_human", bytesToHuman(d.peakMemory))
		line("used_memory_peak_perc", percent(heap, d.peakMemory))
		line("used_memory_overhead", overhead)
		line("used_memory_startup", 0)
		line("used_memory_dataset", dataset)
		line("used_memory_dataset_perc", percent(dataset, heap))
		line("allocator_allocated", d.heapObjects)
		line("allocator_active", d.heapInuse)
		line("allocator_resident", d.rss)
		line("total_system_memory", d.totalSystemMemory)
		line("total_system_memory_human", bytesToHuman(d.totalSystemMemory))
		// The Lua states live on the Go heap (in used_memory), and the
		// script cache keeps compiled code, not the source: no figures of
		// their own.
		line("used_memory_lua", 0)
		line("used_memory_vm_eval", 0)
		line("used_memory_lua_human", "0B")
		line("used_memory_scripts_eval", 0)
		line("number_of_cached_scripts", d.cachedScripts)
		line("number_of_functions", d.functions)
		line("number_of_libraries", d.libraries)
		line("used_memory_vm_functions", 0)
		line("used_memory_vm_total", 0)
		line("used_memory_vm_total_human", "0B")
		line("used_memory_functions", d.functionBytes)
		line("used_memory_scripts", d.functionBytes)
		line("used_memory_scripts_human", bytesToHuman(uint64(d.functionBytes)))
		line("maxmemory", d.maxmemory)
		line("maxmemory_human", bytesToHuman(d.maxmemory))
		// The configured policy (evict.go).
		line("maxmemory_policy", d.maxmemoryPolicy)
		line("allocator_frag_ratio", ratio2(d.heapInuse, d.heapObjects))
		line("allocator_frag_bytes", int64(d.heapInuse)-int64(d.heapObjects))
		line("allocator_rss_ratio", ratio2(d.rss, d.heapInuse))
		line("allocator_rss_bytes", int64(d.rss)-int64(d.heapInuse))
		line("rss_overhead_ratio", "1.00")
		line("rss_overhead_bytes", 0)
		line("mem_fragmentation_ratio", ratio2(d.rss, heap))
		line("mem_fragmentation_bytes", int64(d.rss)-int64(heap))
		line("mem_not_counted_for_evict", 0) // garbage is not in used_memory
		line("mem_replication_backlog", 0)
		line("mem_total_replication_buffers", 0)
		line("mem_clients_slaves", 0)
		line("mem_clients_normal", 0)
		line("mem_cluster_links", 0)
		line("mem_aof_buffer", 0)
		line("mem_allocator", "go")
		line("active_defrag_running", 0)
		// Redis's meaning, kept by keyspace/lazyfree.go: nothing waits
		// for a thread here, the collector takes every removal at once
		line("lazyfree_pending_objects", 0)
		line("lazyfreed_objects", d.ks.LazyFreed)
		line("used_memory_rss_anon", d.rssAnon)
		line("used_memory_rss_file", d.rssFile)
		line("go_heap_bytes", d.heapInuse)
		line("used_memory_heap", d.heapObjects) // the Go heap's objects, live or not yet collected
		line("arena_bytes", d.ks.ArenaBytes)
		line("live_bytes", d.ks.LiveBytes)
		if ix := d.ks.Index; ix.On {
			// The persistent key index (--key-index yes): a mapped file,
			// counted in used_memory_rss_file, not in the heap.
			line("key_index_bytes", ix.FileBytes)
			line("key_index_slots", ix.Slots)
			line("key_index_keys", ix.Keys)
			line("key_index_anchors", ix.Anchors)
			line("key_index_staged", ix.Staged)
			line("key_index_checkpoints", ix.Checkpoints)
			line("key_index_checkpoint_lsn", ix.CheckpointLSN)
			line("key_index_last_checkpoint_us", ix.LastCheckpointMicros)
			// Its breakdown: the keyspace lock's hold (the log's wait,
			// the staged writes' apply, the pages' persist when under
			// the lock; for the checkpointer's, in steps, the longest
			// of its holds), the staged writes, dirty pages and steps,
			// and the longest hold and the holds of 1 ms or more since
			// CONFIG RESETSTAT.
			line("key_index_last_checkpoint_hold_us", ix.Last.Hold.Microseconds())
			line("key_index_last_checkpoint_wait_us", ix.Last.Wait.Microseconds())
			line("key_index_last_checkpoint_apply_us", ix.Last.Apply.Microseconds())
			line("key_index_last_checkpoint_persist_us", ix.Last.Persist.Microseconds())
			line("key_index_last_checkpoint_staged", ix.Last.Staged)
			line("key_index_last_checkpoint_pages", ix.Last.Pages)
			line("key_index_last_checkpoint_faults", ix.Last.Faults)
			line("key_index_last_checkpoint_steps", ix.Last.Steps)
			line("key_index_checkpoint_hold_max_us", ix.Last.HoldMax.Microseconds())
			line("key_index_checkpoint_holds_over_1ms", ix.Last.Holds1ms)
			// Its memory tiers (memtiers.go): the part of the mapping
			// kept resident, and the DRAM cache of hot records (an
			// anonymous mapping outside the Go heap).
			tr := d.ks.Tiers
			line("key_index_lock_budget", tr.IndexLockBudget)
			line("key_index_locked_bytes", tr.IndexLocked)
			line("record_cache_bytes", tr.RecordCacheBytes)
			line("record_cache_used_bytes", tr.RecordCacheUsed)
			line("record_cache_keys", tr.RecordCacheKeys)
			line("record_cache_hits", tr.RecordCacheHits)
			line("record_cache_misses", tr.RecordCacheMiss)
			line("record_cache_admitted", tr.RecordCacheAdmit)
			line("record_cache_evicted", tr.RecordCacheEvict)
			line("cold_reads", boolInt(tr.ColdReads)) // GETs warmed off the lock (coldread.go)
			line("cold_pages_warmed", tr.ColdWarmed)
		}
	}
	if sel&secPersistence != 0 {
		section("Persistence")
		line("loading", boolInt(d.loading.on))
		line("async_loading", 0)
		// No fork and no snapshot child: Persimmon's SAVE has nothing to
		// write (persistence.go).
		line("current_cow_peak", 0)
		line("current_cow_size", 0)
		line("current_cow_size_age", 0)
		line("current_fork_perc", "0.00")
		line("current_save_keys_processed", 0)
		line("current_save_keys_total", 0)
		// Records logged since the last SAVE/BGSAVE (or the start): one
		// per write command or transaction group, Redis's count of changes
		// to the dataset for a snapshot that Persimmon does not need.
		line("rdb_changes_since_last_save", d.ks.LastLSN-min(d.saveLSN, d.ks.LastLSN))
		line("rdb_bgsave_in_progress", 0)
		line("rdb_last_save_time", d.lastSave)
		line("rdb_last_bgsave_status", "ok")
		line("rdb_last_bgsave_time_sec", -1)
		line("rdb_current_bgsave_time_sec", -1)
		line("rdb_saves", d.saves)
		line("rdb_last_cow_size", 0)
		line("rdb_last_load_keys_expired", 0)
		line("rdb_last_load_keys_loaded", 0)
		line("aof_enabled", 0)
		line("aof_rewrite_in_progress", 0)
		line("aof_rewrite_scheduled", 0)
		line("aof_last_rewrite_time_sec", -1)
		line("aof_current_rewrite_time_sec", -1)
		line("aof_last_bgrewrite_status", "ok")
		line("aof_rewrites", d.aofRewrites)
		line("aof_rewrites_consecutive_failures", 0)
		line("aof_last_write_status", okOrErr(d.ks.WriteFailing))
		line("aof_last_cow_size", 0)
		line("module_fork_in_progress", 0)
		line("module_fork_last_cow_size", 0)
		if d.loading.on {
			b = appendLoadingInfo(b, d.loading, d.now.Unix())
		}
		line("durability_mode", d.ks.Mode)
		line("wal_last_lsn", d.ks.LastLSN)
		line("wal_durable_lsn", d.ks.DurableLSN)
		line("wal_flushes", d.ks.Flushes)
		line("wal_synced_records", d.ks.SyncedRecords)
		line("wal_appended_bytes", d.ks.AppendedBytes)
		// Segments the key index's checkpoint let start-up skip, verified
		// in the background since (keyspace/scrub.go), and damage found.
		line("scrubbed_segments", d.ks.Scrubbed)
		line("scrub_damaged_segments", d.ks.ScrubDamaged)
		line("damaged_keys", d.ks.DamagedKeys)
		avg := 0.0
		if d.ks.Flushes > 0 {
			avg = float64(d.ks.SyncedRecords) / float64(d.ks.Flushes)
		}
		line("wal_group_commit_avg_records", strconv.FormatFloat(avg, 'f', 2, 64))
		// What one sync (msync, or flush+fence) costs and covers.
		sy := d.ks.Sync
		line("wal_syncs", sy.Syncs)
		line("wal_sync_mean_us", strconv.FormatFloat(float64(sy.Mean)/1e3, 'f', 1, 64))
		line("wal_sync_p99_us", strconv.FormatFloat(float64(sy.P99)/1e3, 'f', 1, 64))
		perSync := 0.0
		if sy.Syncs > 0 {
			perSync = float64(sy.Records) / float64(sy.Syncs)
		}
		line("wal_records_per_sync", strconv.FormatFloat(perSync, 'f', 2, 64))
		line("wal_sync_sizes", syncSizes(sy.Sizes))
		if cm := d.commit; cm != nil {
			// msync on the loop: the held batches (a connection's
			// pipeline, one reply write) one committer sync released.
			commits, released := cm.commits.Load(), cm.released.Load()
			perCommit := 0.0
			if commits > 0 {
				perCommit = float64(released) / float64(commits)
			}
			line("committer_syncs", commits)
			// Those the loop ran itself, every connection being held
			// (commit.go, inline syncs).
			line("committer_inline_syncs", cm.inlines.Load())
			// Those the loop submitted through io_uring and reaped
			// itself (commit.go, commitAsync).
			line("committer_async_syncs", cm.asyncs.Load())
			line("committer_held_batches", released)
			line("committer_batches_per_sync", strconv.FormatFloat(perCommit, 'f', 2, 64))
		}
		line("arena_segments", d.ks.Segments)
		line("arena_bytes", d.ks.ArenaBytes)
		line("live_bytes", d.ks.LiveBytes)
		line("cleaned_bytes", d.ks.CleanedBytes)
	}
	if sel&secStats != 0 {
		section("Stats")
		line("total_connections_received", d.connsReceived)
		line("total_commands_processed", d.commands)
		line("instantaneous_ops_per_sec", d.opsPerSec)
		line("total_net_input_bytes", d.netIn)
		line("total_net_output_bytes", d.netOut)
		// Replication traffic is counted in the totals above, not apart.
		line("total_net_repl_input_bytes", 0)
		line("total_net_repl_output_bytes", 0)
		line("instantaneous_input_kbps", strconv.FormatFloat(d.inKbps, 'f', 2, 64))
		line("instantaneous_output_kbps", strconv.FormatFloat(d.outKbps, 'f', 2, 64))
		line("instantaneous_input_repl_kbps", "0.00")
		line("instantaneous_output_repl_kbps", "0.00")
		line("rejected_connections", d.connsRejected)
		line("sync_full", d.syncStats.FullSyncs)
		line("sync_partial_ok", d.syncStats.PartialOK)
		line("sync_partial_err", d.syncStats.PartialErr)
		line("expired_keys", d.ks.ExpiredKeys)
		// Active expiry is exact (an expiry heap, not sampling): nothing
		// stale is left behind and no cycle stops at a time cap.
		line("expired_stale_perc", "0.00")
		line("expired_time_cap_reached_count", 0)
		line("expire_cycle_cpu_milliseconds", 0)
		line("evicted_keys", d.evictedKeys)
		line("evicted_clients", 0)
		line("total_eviction_exceeded_time", 0)
		line("current_eviction_exceeded_time", 0)
		line("keyspace_hits", d.ks.KeyspaceHits)
		line("keyspace_misses", d.ks.KeyspaceMiss)
		line("pubsub_channels", d.pubsubChannels)
		line("pubsub_patterns", d.pubsubPatterns)
		line("pubsubshard_channels", d.pubsubShard)
		line("latest_fork_usec", 0)
		line("total_forks", 0)
		line("migrate_cached_sockets", d.migrateSockets)
		line("slave_expires_tracked_keys", d.ks.TrackedKeys)
		line("active_defrag_hits", 0)
		line("active_defrag_misses", 0)
		line("active_defrag_key_hits", 0)
		line("active_defrag_key_misses", 0)
		line("total_active_defrag_time", 0)
		line("current_active_defrag_time", 0)
		line("tracking_total_keys", d.trackingKeys)
		line("tracking_total_items", d.trackingItems)
		line("tracking_total_prefixes", d.trackingPrefixes)
		line("unexpected_error_replies", 0)
		line("total_error_replies", d.errorReplies)
		line("dump_payload_sanitizations", 0)
		line("total_reads_processed", d.reads)
		line("total_writes_processed", d.writes)
		line("io_threaded_reads_processed", 0)
		line("io_threaded_writes_processed", 0)
		line("reply_buffer_shrinks", d.replyBufShrinks) // replybuf.go
		line("reply_buffer_expands", d.replyBufExpands)
		// Persimmon's own: the Go collector since the start or CONFIG
		// RESETSTAT; pause percentiles are the upper bounds of the
		// runtime's histogram buckets, in microseconds.
		us := func(s float64) string { return strconv.FormatFloat(s*1e6, 'f', 1, 64) }
		line("go_gc_cycles", d.gc.cycles)
		line("go_gc_pauses", d.gc.pauses)
		line("go_gc_pause_p50_us", us(d.gc.p50))
		line("go_gc_pause_p99_us", us(d.gc.p99))
		line("go_gc_pause_p999_us", us(d.gc.p999))
		line("go_gc_pause_max_us", us(d.gc.pmax))
	}
	if sel&secReplication != 0 {
		section("Replication")
	}
	if sel&secReplication != 0 && d.replication != "" {
		b = append(b, d.replication...) // repl.InfoReplication (replication.go)
	} else if sel&secReplication != 0 {
		line("role", "master")
		line("connected_slaves", 0)
		line("master_failover_state", "no-failover")
		line("master_replid", d.runID)
		line("master_replid2", strings.Repeat("0", 40))
		line("master_repl_offset", 0)
		line("second_repl_offset", -1)
		line("repl_backlog_active", 0)
		line("repl_backlog_size", 1048576)
		line("repl_backlog_first_byte_offset", 0)
		line("repl_backlog_histlen", 0)
	}
	if sel&secCPU != 0 {
		section("CPU")
		line("used_cpu_sys", strconv.FormatFloat(d.cpuSys, 'f', 6, 64))
		line("used_cpu_user", strconv.FormatFloat(d.cpuUser, 'f', 6, 64))
		line("used_cpu_sys_children", "0.000000")
		line("used_cpu_user_children", "0.000000")
		// The event loop's thread in loop mode; in goroutine mode no
		// thread runs every command: the process's figures.
		line("used_cpu_sys_main_thread", strconv.FormatFloat(d.mainSys, 'f', 6, 64))
		line("used_cpu_user_main_thread", strconv.FormatFloat(d.mainUser, 'f', 6, 64))
	}
	if sel&secModules != 0 {
		section("Modules")
	}
	if sel&secCommandstats != 0 {
		section("Commandstats")
		for _, l := range d.cmds {
			usec := l.nanos / 1000
			perCall := 0.0
			if l.calls > 0 {
				perCall = float64(l.nanos) / 1000 / float64(l.calls)
			}
			b = append(b, "cmdstat_"...)
			b = append(b, l.name...)
			b = fmt.Appendf(b, ":calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
				l.calls, usec, perCall, l.rejected, l.failed)
		}
	}
	if sel&secErrorstats != 0 {
		section("Errorstats")
		for _, e := range d.errors {
			b = append(b, "errorstat_"...)
			b = appendInfoSafe(b, e.prefix)
			b = append(b, ":count="...)
			b = strconv.AppendInt(b, e.count, 10)
			b = append(b, "\r\n"...)
		}
	}
	if sel&secLatencystats != 0 {
		section("Latencystats")
		if d.latencyTracking {
			b = appendLatencyStats(b, d.percentiles, d.latency)
		}
	}
	if sel&secCluster != 0 {
		section("Cluster")
		line("cluster_enabled", 0)
	}
	if sel&secKeyspace != 0 {
		section("Keyspace")
		for db, in := range d.dbs {
			if in.Keys > 0 {
				b = fmt.Appendf(b, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", db, in.Keys, in.Expires, in.AvgTTL)
			}
		}
	}
	return b
}

// appendInfoSafe appends name with the bytes that would break an INFO line
// ('#', ':', CR, LF) replaced by '_', as Redis's getSafeInfoString does.
func appendInfoSafe(b []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		switch ch := name[i]; ch {
		case '#', ':', '\r', '\n':
			b = append(b, '_')
		default:
			b = append(b, ch)
		}
	}
	return b
}

// bytesToHuman formats n as Redis's bytesToHuman does (1.16M, 512B).
func bytesToHuman(n uint64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatUint(n, 10) + "B"
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", f/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", f/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", f/(1<<30))
	case n < 1<<50:
		return fmt.Sprintf("%.2fT", f/(1<<40))
	default:
		return fmt.Sprintf("%.2fP", f/(1<<50))
	}
}

// goHeap returns the bytes of live-or-unswept heap objects (used_memory)
// and of heap spans in use (go_heap_bytes), without stopping the world.
func goHeap() (objects, inuse uint64) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(samples)
	if samples[0].Value.Kind() == metrics.KindUint64 {
		objects = samples[0].Value.Uint64()
	}
	inuse = objects
	if samples[1].Value.Kind() == metrics.KindUint64 {
		inuse += samples[1].Value.Uint64()
	}
	return objects, inuse
}

// residentBytes reads the resident set size from /proc (0 elsewhere), and
// its split into anonymous pages (heap, stacks) and file-backed ones (the
// mapped segments and key index), from statm's shared count.
func residentBytes() (rss, anon, file uint64) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, 0, 0
	}
	pages, err1 := strconv.ParseUint(f[1], 10, 64)
	shared, err2 := strconv.ParseUint(f[2], 10, 64) // resident file-backed and shared pages
	if err1 != nil || err2 != nil {
		return 0, 0, 0
	}
	page := uint64(os.Getpagesize())
	return pages * page, (pages - min(shared, pages)) * page, min(shared, pages) * page
}

// osName is INFO's os field: "Linux 6.1.0 x86_64".
func osName() string {
	name := strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		name += " " + strings.TrimSpace(string(rel))
	}
	arch := runtime.GOARCH
	switch arch {
	case "amd64":
		arch = "x86_64"
	case "arm64":
		arch = "aarch64"
	}
	return name + " " + arch
}

// opsSampler keeps the instantaneous_* rates: like Redis, it samples the
// counters every 100 ms and averages the last 16 samples.
type opsSampler struct {
	mu                     sync.Mutex
	ops, in, out           [16]float64
	idx                    int
	last                   time.Time
	lastOps, lastIn, lastO int64
}

func (o *opsSampler) run(s *Server) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case now := <-t.C:
			o.sample(now, s.stats.commands.Load(), s.stats.netIn.Load(), s.stats.netOut.Load())
			heap, _ := goHeap()
			s.notePeakMemory(heap)
		}
	}
}

func (o *opsSampler) sample(now time.Time, ops, in, out int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.last.IsZero() {
		dt := now.Sub(o.last).Seconds()
		if dt > 0 {
			o.ops[o.idx] = max(0, float64(ops-o.lastOps)/dt)
			o.in[o.idx] = max(0, float64(in-o.lastIn)/dt)
			o.out[o.idx] = max(0, float64(out-o.lastO)/dt)
			o.idx = (o.idx + 1) % len(o.ops)
		}
	}
	o.last, o.lastOps, o.lastIn, o.lastO = now, ops, in, out
}

// rates returns ops/s and input/output KiB/s averaged over the samples.
func (o *opsSampler) rates() (ops int64, inKbps, outKbps float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var so, si, sout float64
	for i := range o.ops {
		so += o.ops[i]
		si += o.in[i]
		sout += o.out[i]
	}
	n := float64(len(o.ops))
	return int64(so / n), si / n / 1024, sout / n / 1024
}

// boolInt is a Redis 0/1 field.
func boolInt(on bool) int {
	if on {
		return 1
	}
	return 0
}

// okOrErr is a Redis status field: "err" when failing, else "ok".
func okOrErr(failing bool) string {
	if failing {
		return "err"
	}
	return "ok"
}

// syncSizes renders the records-per-sync histogram as Redis renders its
// latency histograms in INFO: "le_1=n,le_2=n,le_4=n,...", each bucket
// named by its upper bound, the last "gt_N" for the larger syncs.
func syncSizes(sizes [wal.SyncSizeBuckets]int64) string {
	var b []byte
	for i, n := range sizes {
		if i > 0 {
			b = append(b, ',')
		}
		if i == len(sizes)-1 {
			b = append(b, "gt_"...)
			b = strconv.AppendInt(b, 1<<(i-1), 10)
		} else {
			b = append(b, "le_"...)
			b = strconv.AppendInt(b, 1<<i, 10)
		}
		b = append(b, '=')
		b = strconv.AppendInt(b, n, 10)
	}
	return string(b)
}

// Per-key overheads of the keyspace's DRAM index as MEMORY USAGE and
// MEMORY STATS estimate them (used_memory_overhead).
const (
	memOverheadPerKey    = 72
	memOverheadPerExpire = 24
)

// notePeakMemory raises the peak used_memory to used if it is higher and
// returns the peak (INFO used_memory_peak; the ops sampler also notes it
// every 100 ms, as Redis's cron does).
func (s *Server) notePeakMemory(used uint64) uint64 {
	for {
		peak := s.peakMemory.Load()
		if used <= peak {
			return peak
		}
		if s.peakMemory.CompareAndSwap(peak, used) {
			return used
		}
	}
}

// totalSystemMemory is the machine's RAM (INFO total_system_memory), 0
// where the kernel does not say.
func totalSystemMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// percent is a/b as Redis prints its memory percentages ("99.88%").
func percent(a, b uint64) string {
	if b == 0 {
		return "0.00%"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 2, 64) + "%"
}

// ratio2 is a/b with two decimals, as Redis prints its memory ratios.
func ratio2(a, b uint64) string {
	if b == 0 {
		return "0.00"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
}

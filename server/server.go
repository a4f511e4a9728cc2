// Package server serves the Redis protocol over the keyspace.
//
// Connections are served either by one event loop (loop.go; the default
// for pmem and none durability) or by a goroutine each. Either way, each
// connection reads whatever the socket has into a reused buffer and splits
// it into requests with the protocol package's Reader (multibulk and
// inline requests); handlers reply through the proto.Writer embedded in
// their Client, which encodes RESP2 or RESP3 for the connection. Every complete command
// in the buffer is one pipeline batch: each runs to completion (under the
// keyspace lock unless its table entry says NoLock) and appends its reply to
// the connection's output buffer. After the batch the connection waits for
// the highest LSN any of its commands observed right after running, read
// while still holding the lock, so a write and a read that saw a not yet
// durable write are covered alike, and only then writes the replies in one
// write (DESIGN.md invariant 1). If durability fails the replies are
// dropped and the connection closed. Replies over 1 MiB are flushed the
// same way in the middle of a batch.
//
// Requests are checked against Redis's limits before the server waits for
// their bytes: at most 1024*1024 arguments, each at most proto-max-bulk-len
// (and 10 arguments of 16 KiB before AUTH when a password is set); an
// inline request needs a newline within 64 KiB. A protocol error is
// answered with Redis's text and the connection closed.
//
// Dispatch follows Redis's processCommand: table lookup and arity, then
// authentication, then the ACL check of the connection's user (acl.go),
// then MULTI queueing, then the call. The table (table.go)
// is built once from the server's own commands and the command families
// NewServer is given (package commands); COMMAND, locking and queueing all
// read it.
//
// What the package owns: connections and their I/O, dispatch, the command
// table, MULTI/EXEC and WATCH, blocking (the registry of blocked clients
// and their wake-ups), pub/sub, client-side caching (tracking.go: the
// tracking table and invalidation messages), CLIENT PAUSE (pause.go),
// the Lua script runtime (EVAL, and the
// FUNCTION commands and FCALL over package functions), CONFIG, INFO,
// SLOWLOG, CLIENT, and the argument parsers and the Client that command
// handlers share. It may not import package commands (the families depend
// on it, never the reverse), and it writes protocol bytes only through
// package proto.
package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/persimmon-db/persimmon/evloop"

	"github.com/persimmon-db/persimmon/hll"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/repl"
)

// Version is the Redis version Persimmon answers as (INFO, HELLO).
const Version = "7.0.15"

// Default limits, as in Redis.
const (
	DefaultProtoMaxBulkLen = 512 << 20 // proto-max-bulk-len
	DefaultMaxClients      = 10000     // maxclients
)

// Config is the server's start-up configuration. Bind, Port, Requirepass,
// ProtectedMode, ProtoMaxBulkLen, MaxClients and Timeout can later be
// changed with CONFIG SET; Dir, Durability and SegmentSize describe the
// keyspace that was opened and are reported read-only.
type Config struct {
	// Bind is a space-separated list of addresses to listen on, Redis
	// style: "127.0.0.1 -::1" (a leading '-' means "skip if unavailable",
	// "*" means every IPv4 address, "::*" every IPv6 address).
	Bind string
	// Port is the TCP port; 0 picks a free port (tests).
	Port int
	// NoTCP opens no TCP listener: the server listens on the unix socket
	// (the unixsocket parameter) only, as redis-server does with port 0.
	NoTCP           bool
	Requirepass     string
	ProtectedMode   bool
	ProtoMaxBulkLen int64 // 0 means DefaultProtoMaxBulkLen
	MaxClients      int   // 0 means DefaultMaxClients
	Timeout         int   // seconds a client may stay idle; 0 = forever
	Dir             string
	Durability      string
	SegmentSize     int64
	ConfigFile      string // reported by INFO server as config_file
	// RenameCommands are the config file's rename-command lines, in order
	// (rename.go); CheckCommandRenames says whether they apply.
	RenameCommands []CommandRename
	// ACLUsers are the config file's user lines (each the user name and
	// its rules), created at start-up as Redis's ACLLoadConfiguredUsers
	// does (LoadACL); CheckACLUsers says whether they apply.
	ACLUsers [][]string
	// ACLFile is the aclfile ACL LOAD and ACL SAVE use ("" = none); the
	// server reads it at start-up (LoadACL).
	ACLFile string
	// IO is how connections are served: IOGoroutine ("" too) or IOLoop
	// (one event loop, loop.go; with Durability "msync" a committer runs
	// the group commits, commit.go).
	IO string
	// Params are a config file's settings of the other CONFIG parameters
	// (CheckConfigLine), applied in order at start-up.
	Params []ConfigLine
	// DumpValue reads a key for a replica's snapshot (replication.go);
	// nil: snapshots are empty.
	DumpValue DumpValueFunc
}

// commitEnv is what the connection loop needs from the keyspace to run a
// batch and hold its replies until the batch is durable. Server builds it
// from the keyspace; protocol tests swap in fakes.
type commitEnv struct {
	lock        func()
	tryLock     func() bool // lock if it is free; nil: lock only (test fakes, loading)
	unlock      func()
	lastLSN     func() uint64
	durableLSN  func() uint64 // nil: no committer (test fakes)
	waitDurable func(lsn uint64) error
	// syncNow is waitDurable for the loop and its committer (no yield
	// before the sync; commit.go); nil: waitDurable.
	syncNow func(lsn uint64) error
	// asyncSync enables the asynchronous group commit the loop runs
	// itself (commit.go); nil: none (test fakes, loading).
	asyncSync func() (asyncSyncer, error)
	beginTxn  func()
	endTxn    func() error
	watch     func(w *keyspace.Watcher, db int, key []byte)
	unwatch   func(w *keyspace.Watcher)
	stats     func() keyspace.Stats
	dbInfo    func(db int) keyspace.DBInfo // with the lock held
	close     func() error
}

func keyspaceEnv(ks *keyspace.Keyspace) commitEnv {
	return commitEnv{
		lock:        ks.Lock,
		tryLock:     ks.TryLock,
		unlock:      ks.Unlock,
		lastLSN:     ks.LastLSN,
		durableLSN:  ks.DurableLSN,
		waitDurable: ks.WaitDurable,
		syncNow:     ks.WaitDurableNow,
		asyncSync: func() (asyncSyncer, error) {
			w, err := ks.AsyncSync()
			if err != nil {
				return nil, err
			}
			return w, nil
		},
		beginTxn: ks.BeginTxn,
		endTxn:   ks.EndTxn,
		watch:    ks.Watch,
		unwatch:  ks.Unwatch,
		stats:    ks.Stats,
		dbInfo:   ks.DBInfo,
		close:    ks.Close,
	}
}

// liveConfig holds the settings CONFIG SET may change while connections
// read them.
type liveConfig struct {
	requirepass     atomic.Pointer[string]
	protectedMode   atomic.Bool
	protoMaxBulkLen atomic.Int64
	maxClients      atomic.Int64
	timeout         atomic.Int64 // seconds
	bind            atomic.Pointer[string]
	port            atomic.Int64

	slowlogSlowerThan atomic.Int64 // µs; negative: log nothing
	slowlogMaxLen     atomic.Int64
	busyThreshold     atomic.Int64 // ms: busy-reply-threshold (lua-time-limit)
	hllSparseMaxBytes atomic.Int64 // hll-sparse-max-bytes

	latencyThreshold   atomic.Int64              // ms: latency-monitor-threshold (latency.go)
	latencyTracking    atomic.Bool               // latency-tracking (latencystats.go)
	latencyPercentiles atomic.Pointer[[]float64] // latency-tracking-info-percentiles
	streamNodeEntries  atomic.Int64              // stream-node-max-entries
	streamNodeBytes    atomic.Int64              // stream-node-max-bytes
	staleRefused       atomic.Bool               // replica-serve-stale-data no (dispatch.go: MASTERDOWN)
}

// serverStats are the counters of INFO stats.
type serverStats struct {
	connsReceived atomic.Int64
	connsRejected atomic.Int64
	commands      atomic.Int64
	errorReplies  atomic.Int64
	netIn         atomic.Int64
	netOut        atomic.Int64
	reads         atomic.Int64
	writes        atomic.Int64
	evictedKeys   atomic.Int64 // INFO evicted_keys (evict.go)
	gc            gcBaseline   // INFO stats go_gc_*: counts at the last CONFIG RESETSTAT (gcstats.go)
}

func (st *serverStats) reset() {
	st.connsReceived.Store(0)
	st.connsRejected.Store(0)
	st.commands.Store(0)
	st.errorReplies.Store(0)
	st.netIn.Store(0)
	st.netOut.Store(0)
	st.reads.Store(0)
	st.writes.Store(0)
	st.evictedKeys.Store(0)
	st.gc.reset()
}

// resetReplyBufStats zeroes INFO's reply_buffer_shrinks and _expands
// (CONFIG RESETSTAT).
func (p *replyBufPolicy) resetStats() {
	p.shrinks.Store(0)
	p.expands.Store(0)
}

// Server serves RESP2 over TCP on top of a keyspace: one goroutine per
// connection, replies held until the batch that produced them is durable.
type Server struct {
	scriptDenyOff atomic.Bool  // DEBUG SET-DISABLE-DENY-SCRIPTS 1 (scripting.go)
	master        *repl.Master // the replication stream and replica links (replication.go)
	prop          propUnit     // what the running unit propagates (propagate.go; keyspace lock)
	replica       replicaState // REPLICAOF's link to a master (replica.go)
	cfg           Config       // start-up values; live ones are in live
	live          liveConfig
	conf          *configStore // every CONFIG parameter's value (config.go)
	ks            *keyspace.Keyspace
	env           commitEnv
	logf          func(string, ...any)
	table         map[string]*Command
	getCmd        *Command   // table["get"]: the command cold reads warm (coldread.go)
	cmdList       []*Command // table entries sorted by name (COMMAND)

	scripting *scriptEngine                   // Lua state and script cache; keyspace lock
	fn        atomic.Pointer[functionRuntime] // function libraries (functions.go), made on first use
	pubsub    *pubsubHub                      // subscriptions (pubsub.go)
	notify    notifyState                     // keyspace notifications (notify.go)
	monitors  monitorHub                      // MONITOR connections (monitor.go)
	track     *tracker                        // client-side caching (tracking.go)
	pause     pauseState                      // CLIENT PAUSE (pause.go)
	running   atomic.Pointer[runningScript]   // the script in execution (scriptbusy.go)
	busy      atomic.Pointer[runningScript]   // set once it ran past busy-reply-threshold
	busyTimer busyTimer                       // busy-reply-threshold (scriptbusy.go)
	slowlog   slowlog

	// replWaiting counts the clients in WAIT or WAITAOF waiting for
	// replicas (replication_wait.go; INFO blocked_clients), and
	// replWaitingTimed those of them with a timeout
	// (clients_in_timeout_table).
	replWaiting, replWaitingTimed atomic.Int64

	cachedScripts atomic.Int64 // len(scripting.scripts), for INFO (which takes no lock)

	started  time.Time
	lastSave atomic.Int64 // LASTSAVE: Unix seconds of the last SAVE/BGSAVE, or of the start
	// saveLSN is the last LSN at the last SAVE/BGSAVE or at the start:
	// INFO's rdb_changes_since_last_save counts the records after it.
	saveLSN     atomic.Uint64
	saves       atomic.Int64  // SAVE and BGSAVE calls (INFO rdb_saves)
	aofRewrites atomic.Int64  // BGREWRITEAOF calls (INFO aof_rewrites)
	peakMemory  atomic.Uint64 // the highest used_memory seen (info.go)
	runID       string
	stats       serverStats
	replyBuf    replyBufPolicy // the reply buffers' sizing (replybuf.go)
	loadingGate                // serving before the keyspace is attached (loading.go)

	errors  errorStats     // INFO errorstats (errorstats.go)
	latency latencyMonitor // LATENCY's event series (latency.go)
	ops     opsSampler
	mem     memoryLimit // maxmemory (maxmemory.go)
	evict   evictState  // the eviction pool (evict.go; keyspace lock)

	nextID atomic.Int64

	acl *aclServer // users, rules, ACL LOG (acl.go)

	mu       sync.Mutex
	lns      []net.Listener
	unixLn   net.Listener // the unixsocket listener, nil if none (unixsocket.go)
	clients  map[int64]*conn
	closed   bool
	conns    sync.WaitGroup
	closing  chan struct{} // closed when Close starts
	done     chan struct{} // closed when Close has finished
	closeErr error
	once     sync.Once

	obuf     atomic.Pointer[obufLimits] // client-output-buffer-limit, parsed (obuf.go)
	migrate  migrateCache               // MIGRATE's connections (migrate.go)
	loop     *evloop.Loop               // loop mode: the event loop serving every connection
	blockReg *BlockRegistry             // loop mode: the keyspace's blocking registry, once used (loop only)
	commit   *committer                 // loop mode with msync durability (commit.go)
	settle   roundSettle                // loop mode without msync: the round's one durability wait (loop.go)
	dirty    *dirtyKeys                 // msync durability: what reads wait for (dirty.go)
}

// NewServer returns a server over ks that serves the server's own commands
// (connection, transactions, pub/sub, scripting, CONFIG, INFO...) and the
// command families given (package commands: commands.Table()). It does
// not listen yet. It panics if a name is registered twice.
func NewServer(cfg Config, ks *keyspace.Keyspace, logf func(string, ...any), families []Command) *Server {
	s := newServer(cfg, keyspaceEnv(ks), logf, newCommandTable(families))
	s.acl.dir = cfg.Dir // the ACL state lives beside the keyspace (protocol tests have none)
	s.wireKeyspace(ks)
	s.resumeReplication() // replica.go: replicaof configured, from the stored position
	return s
}

// wireKeyspace makes ks the server's keyspace and installs the server's
// hooks on it (NewServer, and Attach after loading).
func (s *Server) wireKeyspace(ks *keyspace.Keyspace) {
	s.ks = ks
	s.installNotify()
	// replication_effects.go: expiry propagated as DEL
	ks.OnExpired(s.propagateExpired)
	ks.SetLazyExpire(s.replica.lazyExpire.Load()) // lazyfree_objects (keyspace/lazyfree.go)
	s.saveLSN.Store(ks.LastLSN())
	ks.Lock()
	s.loadFunctions(ks.Functions())
	ks.OnKeyTouched(s.track.keyTouched) // tracking.go
	ks.SetLatencyObserver(s.latencyEvent)
	ks.Unlock()
	s.conf.mu.Lock()
	ks.SetMemoryTiers(s.memoryTiers()) // memtiers.go
	s.conf.mu.Unlock()
}

func newServer(cfg Config, env commitEnv, logf func(string, ...any), table map[string]*Command) *Server {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cfg.ProtoMaxBulkLen <= 0 {
		cfg.ProtoMaxBulkLen = DefaultProtoMaxBulkLen
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	s := &Server{
		cfg:     cfg,
		env:     env,
		logf:    logf,
		table:   table,
		getCmd:  table["get"],
		started: time.Now(),
		clients: make(map[int64]*conn),
		pubsub:  newPubsubHub(),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.track = newTracker(s)
	s.acl = newACL(cfg, table) // ACL rules name the commands as they are (Redis's orig_commands)
	if len(cfg.RenameCommands) > 0 {
		renamed := make(map[string]*Command, len(table))
		for name, cmd := range table {
			renamed[name] = cmd
		}
		if i, err := applyRenames(renamed, cfg.RenameCommands); err != nil {
			logf("rename-command %s %q: %v (this rename and the ones after it are not applied)", cfg.RenameCommands[i].From, cfg.RenameCommands[i].To, err)
		}
		s.table = renamed
	}
	s.cmdList = sortedCommands(s.table)
	s.live.requirepass.Store(&cfg.Requirepass)
	s.live.protectedMode.Store(cfg.ProtectedMode)
	s.live.protoMaxBulkLen.Store(cfg.ProtoMaxBulkLen)
	s.live.maxClients.Store(int64(cfg.MaxClients))
	s.live.timeout.Store(int64(cfg.Timeout))
	s.live.slowlogSlowerThan.Store(slowlogDefaultSlowerThan)
	s.live.slowlogMaxLen.Store(slowlogDefaultMaxLen)
	s.live.hllSparseMaxBytes.Store(hll.DefaultSparseMaxBytes)
	s.live.streamNodeEntries.Store(100)
	s.live.streamNodeBytes.Store(4096)
	s.live.busyThreshold.Store(defaultBusyThreshold)
	s.replica.minMaxLag.Store(10) // min-replicas-max-lag's default (without it min-replicas-to-write alone refused nothing)
	s.live.latencyTracking.Store(true)
	s.replyBuf.peakResetMs.Store(replyBufPeakResetDefault) // replybuf.go
	s.live.latencyPercentiles.Store(&[]float64{50, 99, 99.9})
	s.live.bind.Store(&cfg.Bind)
	s.live.port.Store(int64(cfg.Port))
	s.mem.initEvictionDefaults() // evict.go
	s.initConfig(cfg)
	s.fitMaxClientsAtStart() // edge.go: RLIMIT_NOFILE
	var id [20]byte
	if _, err := rand.Read(id[:]); err == nil {
		s.runID = hex.EncodeToString(id[:])
	} else {
		s.runID = strings.Repeat("0", 40)
	}
	if cfg.Durability == "msync" && env.durableLSN != nil {
		s.dirty = newDirtyKeys()
	}
	if cfg.IO == IOLoop {
		if err := s.startLoop(); err != nil {
			s.logf("event loop unavailable (%v): serving a goroutine per connection", err)
		} else if cfg.Durability == "msync" && env.durableLSN != nil {
			s.commit = newCommitter(s)
			s.commit.startAsync() // commit.go: io_uring syncs from the loop
		}
	}
	go s.ops.run(s)
	go s.queryBufTicker() // querybuf.go
	s.initReplication()
	return s
}

// requirepass returns the password clients must give ("" = none).
func (s *Server) requirepass() string { return *s.live.requirepass.Load() }

// Listen binds the configured addresses and starts accepting on them.
func (s *Server) Listen() error {
	var lns []net.Listener
	if !s.cfg.NoTCP {
		var err error
		if lns, err = listenAll(*s.live.bind.Load(), int(s.live.port.Load())); err != nil {
			return err
		}
	}
	uln, err := s.listenUnix()
	if err != nil {
		closeListeners(lns)
		return err
	}
	if len(lns) == 0 && uln == nil {
		return errNoListener
	}
	s.mu.Lock()
	if s.closed || (uln != nil && s.unixLn != nil) {
		closed := s.closed
		s.mu.Unlock()
		closeListeners(lns)
		if uln != nil {
			uln.Close()
		}
		if closed {
			return errors.New("server: server closed")
		}
		return errors.New("server: the unix socket is already open")
	}
	s.lns = append(s.lns, lns...)
	if uln != nil {
		s.unixLn = uln
	}
	s.mu.Unlock()
	s.recordPort(lns)
	for _, ln := range lns {
		go s.acceptLoop(ln)
	}
	if uln != nil {
		go s.acceptLoop(uln)
	}
	return nil
}

// ListenAndServe listens, logs readiness, and blocks until Close (or
// SHUTDOWN) has begun. It returns nil after a close; call Close to wait
// until the keyspace is closed too.
func (s *Server) ListenAndServe() error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.AnnounceAndWait()
}

// AnnounceAndWait logs "Ready to accept connections" (Redis's words, which
// tools such as Testcontainers wait for) for each listener
// Listen opened (a binary that listens while it loads logs it once the
// keyspace is attached, as Redis logs it once its data is loaded), then
// waits until the server closes.
func (s *Server) AnnounceAndWait() error {
	s.mu.Lock()
	for _, ln := range s.lns {
		s.logf("Ready to accept connections tcp %s", ln.Addr())
	}
	if s.unixLn != nil {
		s.logf("Ready to accept connections unix %s", s.unixLn.Addr())
	}
	s.mu.Unlock()
	<-s.closing
	return nil
}

// Serve accepts connections on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return errors.New("server: server closed")
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	s.recordPort([]net.Listener{ln})
	return s.acceptLoop(ln)
}

// Addr returns the address of the first listener, or nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lns) == 0 {
		return nil
	}
	return s.lns[0].Addr()
}

// Done is closed when Close has finished (after SHUTDOWN, too).
func (s *Server) Done() <-chan struct{} { return s.done }

// Close stops accepting, lets every connection finish the batch it is
// running (its replies are still written once durable), closes the
// connections, and then closes the keyspace, which makes everything
// durable. Every call returns the same result after the close finished.
func (s *Server) Close() error {
	s.once.Do(func() { go s.close() })
	<-s.done
	return s.closeErr
}

// requestShutdown starts Close without waiting for it (SHUTDOWN runs on a
// connection that Close waits for).
func (s *Server) requestShutdown() {
	s.once.Do(func() { go s.close() })
}

func (s *Server) close() {
	// A script that never ends would hold the loop (or the lock) forever:
	// stop it, as SHUTDOWN NOSAVE does (SIGTERM, SIGINT, SHUTDOWN).
	s.scriptKill(true, false)
	s.drainReplicas() // replica.go: replicas acknowledge the whole stream first
	s.mu.Lock()
	s.closed = true
	close(s.closing)
	lns := s.lns
	s.lns = nil
	if s.unixLn != nil { // closing it removes the socket file
		lns = append(lns, s.unixLn)
		s.unixLn = nil
	}
	conns := make([]*conn, 0, len(s.clients))
	for _, c := range s.clients {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	closeListeners(lns)
	for _, c := range conns {
		c.shutdown()
	}
	s.conns.Wait()
	if s.ks != nil {
		// A replica's link applies each unit under the keyspace lock and
		// only while it is the current link (replicaApplier.current):
		// cancelling it above does not wait for a unit in flight, so it
		// stops being current here, before the keyspace closes (a unit
		// applied after that ran on a closed key index and panicked).
		s.env.lock()
		s.replica.cur.Store(nil)
		s.env.unlock()
	}
	s.storeMasterPosition() // replica.go: the restart continues this history
	if s.loop != nil {
		s.loop.Stop()
	}
	if s.commit != nil {
		s.commit.close()
	}
	var err error
	if s.env.close != nil {
		err = s.env.close()
	}
	if err != nil {
		s.logf("closing the keyspace: %v", err)
	}
	s.closeErr = err
	close(s.done)
}

func closeListeners(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// rebind replaces the listeners after CONFIG SET bind/port. As Redis's
// changeBindAddr, the old ones are closed before the new list is bound, so
// the new list may name an address (or a wildcard over an address) that is
// bound now: CONFIG SET bind "127.0.0.1 ::1" on a server bound to
// 127.0.0.1. If the new list cannot be bound, the old bind and port are
// bound again, so a failed CONFIG SET leaves the server serving where it
// did (Redis's config framework re-applies the old values the same way).
// Connections already accepted are not affected.
func (s *Server) rebind(bind string, port int) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("server is shutting down")
	}
	old := s.lns
	s.lns = nil
	s.mu.Unlock()
	closeListeners(old)
	lns, err := listenAll(bind, port)
	if err != nil {
		if len(old) == 0 {
			return err
		}
		back, berr := listenAll(*s.live.bind.Load(), int(s.live.port.Load()))
		if berr != nil {
			s.logf("CONFIG SET bind/port: cannot bind the previous addresses again either: %v", berr)
			return err
		}
		s.install(back)
		return err
	}
	if !s.install(lns) {
		return errors.New("server is shutting down")
	}
	s.live.bind.Store(&bind)
	s.live.port.Store(int64(port))
	s.recordPort(lns)
	return nil
}

// install makes lns the server's TCP listeners and starts accepting on
// them; it closes them and reports false if the server closed meanwhile.
func (s *Server) install(lns []net.Listener) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		closeListeners(lns)
		return false
	}
	s.lns = append(s.lns, lns...)
	s.mu.Unlock()
	for _, ln := range lns {
		go s.acceptLoop(ln)
	}
	return true
}

// recordPort makes CONFIG GET port report the port picked for port 0.
func (s *Server) recordPort(lns []net.Listener) {
	if s.live.port.Load() != 0 || len(lns) == 0 {
		return
	}
	if a, ok := lns[0].Addr().(*net.TCPAddr); ok {
		s.live.port.Store(int64(a.Port))
	}
}

// listenAll binds every address of a Redis-style bind list.
func listenAll(bind string, port int) ([]net.Listener, error) {
	addrs := strings.Fields(bind)
	if len(addrs) == 0 {
		addrs = []string{"*", "-::*"}
	}
	var lns []net.Listener
	for _, a := range addrs {
		optional := strings.HasPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		switch a {
		case "*":
			a = "0.0.0.0"
		case "::*":
			a = "::"
		}
		ln, err := net.Listen(listenNetwork(a), net.JoinHostPort(a, strconv.Itoa(port)))
		if err != nil {
			if optional {
				continue
			}
			closeListeners(lns)
			return nil, fmt.Errorf("server: listen on %s: %w", net.JoinHostPort(a, strconv.Itoa(port)), err)
		}
		lns = append(lns, ln)
		if port == 0 {
			// Every further address gets the port the first one picked.
			port = ln.Addr().(*net.TCPAddr).Port
		}
	}
	if len(lns) == 0 {
		return nil, fmt.Errorf("server: could not bind any of %q", bind)
	}
	return lns, nil
}

// listenNetwork is the network to listen on addr with. Like Redis, a
// server listens exactly on the addresses given: an IPv4 address
// (0.0.0.0 included) only over IPv4, an IPv6 one (:: included, with
// IPV6_V6ONLY) only over IPv6; Go's "tcp" would make 0.0.0.0 a dual-stack
// socket. A host name is resolved by Go ("tcp": its first address).
func listenNetwork(addr string) string {
	switch ip := net.ParseIP(addr); {
	case ip == nil:
		return "tcp"
	case ip.To4() != nil:
		return "tcp4"
	}
	return "tcp6"
}

func (s *Server) acceptLoop(ln net.Listener) error {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporaryAccept(err) {
				// Out of file descriptors and the like: back off, keep serving.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logf("accept error: %v; retrying in %v", err, backoff)
				select {
				case <-time.After(backoff):
				case <-s.closing:
					return nil
				}
				continue
			}
			s.logf("accept error: %v", err)
			return err
		}
		backoff = 0
		s.stats.connsReceived.Add(1)
		s.accept(nc)
	}
}

// isTemporaryAccept reports accept errors worth retrying: out of file
// descriptors, or a connection aborted before it was accepted.
func isTemporaryAccept(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) ||
		errors.Is(err, syscall.ENOMEM)
}

// deniedReply is Redis 7.0's protected-mode refusal, verbatim.
const deniedReply = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// protectedModeRefuses reports whether protected mode turns the peer away:
// protected mode is on, no password is set, and the peer is not loopback.
func protectedModeRefuses(protected, hasPassword bool, peer net.Addr) bool {
	if !protected || hasPassword {
		return false
	}
	return !isLoopback(peer)
}

func isLoopback(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.Equal(loopback4) || a.IP.Equal(loopback6) // edge.go: not all of 127/8
	case *net.UnixAddr:
		return true
	}
	return false
}

// refuse writes a one-line error to a connection that is not served.
func refuse(nc net.Conn, msg string) {
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write([]byte(msg))
	nc.Close()
}

func (s *Server) accept(nc net.Conn) {
	// As in Redis: protected mode applies while the default user is nopass.
	if protectedModeRefuses(s.live.protectedMode.Load(), !s.acl.store.Default().NoPass(), nc.RemoteAddr()) {
		s.stats.connsRejected.Add(1)
		refuse(nc, deniedReply)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if int64(len(s.clients)) >= s.live.maxClients.Load() {
		s.mu.Unlock()
		s.stats.connsRejected.Add(1)
		refuse(nc, "-ERR max number of clients reached\r\n")
		return
	}
	c := newConn(s, nc, s.nextID.Add(1))
	s.clients[c.ID] = c
	s.conns.Add(1)
	s.mu.Unlock()
	if s.loop != nil {
		if s.busy.Load() != nil { // the loop is inside a long script (scriptbusy.go)
			go s.serveWhileBusy(c)
			return
		}
		if !s.enroll(c) {
			nc.Close()
			s.removeClient(c)
		}
		return
	}
	go c.serve()
}

func (s *Server) removeClient(c *conn) {
	s.mu.Lock()
	delete(s.clients, c.ID)
	s.mu.Unlock()
	s.conns.Done()
}

// clientsSnapshot returns the connected clients ordered by id.
func (s *Server) clientsSnapshot() []*conn {
	s.mu.Lock()
	out := make([]*conn, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	s.mu.Unlock()
	sortConnsByID(out)
	return out
}

func (s *Server) numClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

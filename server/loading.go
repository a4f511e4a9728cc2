package server

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Serving while the keyspace loads (Redis's "loading" state; issue 12
// section 5). The binary opens its port before recovery: NewLoadingServer
// makes a server with no keyspace, which accepts connections and answers
// every command Redis 7.0 refuses while loading (those without the
// loading flag in COMMAND INFO) with
//
//	-LOADING Redis is loading the dataset in memory
//
// Commands flagged loading (INFO, CONFIG, CLIENT, PING is not one of
// them, AUTH, HELLO, SELECT, MULTI/EXEC, SUBSCRIBE, PUBLISH, LATENCY...)
// run meanwhile over an environment that has nothing to lock, log or wait
// for; INFO persistence says loading:1 with Redis's progress fields, from
// the recovery's own counts (recovery.Progress). Attach hands the
// recovered keyspace over: it waits until no command running in the
// loading state is left (loadMu), installs the keyspace and clears the
// state; from then on dispatch pays one atomic load per command for the
// check. A connection made during loading picks the keyspace up at its
// next command.
//
// A command that needs the keyspace and is flagged loading anyway (DEBUG
// RELOAD...) cannot run without it: it answers -LOADING too (the loading
// environment turns its failure into that reply).

// errLoading is Redis's reply to a command refused while loading.
const errLoading = "LOADING Redis is loading the dataset in memory"

// LoadingProgress reports a recovery's progress: the bytes it has to
// read and has read so far.
type LoadingProgress func() (loaded, total int64)

// loadingState is the server's loading state (nil once attached).
type loadingState struct {
	start    time.Time
	progress LoadingProgress
}

// loadingEnv is the commit environment while no keyspace exists: nothing
// to lock, nothing written, everything durable.
func loadingEnv() commitEnv {
	nop := func() {}
	return commitEnv{
		lock:        nop,
		unlock:      nop,
		lastLSN:     func() uint64 { return 0 },
		waitDurable: func(uint64) error { return nil },
		beginTxn:    nop,
		endTxn:      func() error { return nil },
		watch:       func(*keyspace.Watcher, int, []byte) {},
		unwatch:     func(*keyspace.Watcher) {},
	}
}

// NewLoadingServer is NewServer before the keyspace exists: it serves in
// the loading state until Attach. progress (nil: unknown) feeds INFO's
// loading fields.
func NewLoadingServer(cfg Config, logf func(string, ...any), families []Command, progress LoadingProgress) *Server {
	s := newServer(cfg, loadingEnv(), logf, newCommandTable(families))
	s.acl.dir = cfg.Dir
	if progress == nil {
		progress = func() (int64, int64) { return 0, 0 }
	}
	s.loading.Store(&loadingState{start: time.Now(), progress: progress})
	return s
}

// Attach ends the loading state of a NewLoadingServer with the recovered
// keyspace: every command runs from now on.
func (s *Server) Attach(ks *keyspace.Keyspace) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	s.env = keyspaceEnv(ks)
	s.wireKeyspace(ks)
	if s.cfg.Durability == "msync" {
		s.dirty = newDirtyKeys() // dirty.go
		if s.loop != nil {
			s.commit = newCommitter(s)
			s.commit.startAsync() // commit.go: io_uring syncs from the loop
		}
	}
	s.lastSave.Store(time.Now().Unix())
	s.loading.Store(nil)
	s.resumeReplication() // replica.go: replicaof configured, from the stored position
}

// refusedWhileLoading reports whether cmd is refused in the loading state.
func refusedWhileLoading(cmd *Command) bool { return cmd.Flags&FlagLoading == 0 }

// callWhileLoading runs a command allowed while loading, holding loadMu
// shared so that Attach waits for it. A command that fails for want of the
// keyspace answers LOADING.
func (c *conn) callWhileLoading(cmd *Command, args [][]byte) {
	s := c.srv
	s.loadMu.RLock()
	if s.loading.Load() == nil { // attached meanwhile
		s.loadMu.RUnlock()
		c.KS = s.ks
		c.callNow(cmd, args, false)
		return
	}
	defer s.loadMu.RUnlock()
	mark := len(c.Out)
	defer func() {
		if r := recover(); r != nil {
			c.Out = c.Out[:min(mark, len(c.Out))]
			c.WriteError(errLoading)
			c.blk.pending = false
		}
	}()
	c.callNow(cmd, args, false)
}

// loadingInfo is INFO persistence's loading fields.
type loadingInfo struct {
	on            bool
	start         int64 // Unix seconds
	total, loaded int64
}

func (s *Server) loadingInfo(now time.Time) loadingInfo {
	ld := s.loading.Load()
	if ld == nil {
		return loadingInfo{}
	}
	loaded, total := ld.progress()
	return loadingInfo{on: true, start: ld.start.Unix(), total: total, loaded: loaded}
}

// appendLoadingInfo formats the progress as Redis does: percent of the
// total, and an estimate of the seconds left at the rate so far.
func appendLoadingInfo(b []byte, li loadingInfo, now int64) []byte {
	perc := 0.0
	remaining := int64(0)
	if li.total > 0 {
		perc = float64(li.loaded) / float64(li.total) * 100
		remaining = max(li.total-li.loaded, 0)
	}
	elapsed := now - li.start
	eta := int64(1) // Redis's figure before a second has passed
	if elapsed > 0 {
		eta = elapsed * remaining / (li.loaded + 1)
	}
	return fmt.Appendf(b, "loading_start_time:%d\r\nloading_total_bytes:%d\r\nloading_rdb_used_mem:0\r\n"+
		"loading_loaded_bytes:%d\r\nloading_loaded_perc:%.2f\r\nloading_eta_seconds:%d\r\n",
		li.start, li.total, li.loaded, perc, eta)
}

// loadingGate is the part of Server the loading state needs.
type loadingGate struct {
	loading atomic.Pointer[loadingState] // nil: the keyspace is attached
	loadMu  sync.RWMutex                 // shared by commands run while loading; Attach takes it
}

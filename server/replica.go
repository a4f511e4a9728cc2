package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/rdb"
	"github.com/persimmon-db/persimmon/repl"
)

// Persimmon as a replica: REPLICAOF host port starts a repl.Replica whose
// Applier runs the master's writes through the command table on an
// internal client, under the keyspace lock, a unit (one write or a MULTI
// block) as one transaction, and relays the unit's bytes into this
// server's own Master (for its replicas, and PSYNC after a promotion).
// Apply returns once the unit is durable, so every acknowledged offset is
// durable. REPLICAOF NO ONE stops the link and promotes (replid shifted to
// replid2). While a replica, writes from clients (a script's too) get
// READONLY, unless replica-read-only is no (runReplicaWrite). Expired keys
// wait for the master's DEL (keyspace SetReplica, SetApplyingMaster).
//
// The position (master replid, offset, selected db) is logged in each
// unit's transaction group (keyspace.SetReplPosition), so a restart or a
// kill -9 recovers data and position together and, with replicaof
// configured, resumes with PSYNC from there (resumeReplication).
//
// Gaps: a full resync flushes the dataset before it loads (a failed
// transfer leaves it partial, and positionless, until the next one);
// masterauth and masteruser are read when REPLICAOF runs (a CONFIG SET
// after it applies at the next REPLICAOF).

type replicaLink struct {
	host   string
	port   int
	r      *repl.Replica
	cancel context.CancelFunc
	done   chan struct{}
}

type replicaState struct {
	mu   sync.Mutex // REPLICAOF's
	link *replicaLink
	cur  atomic.Pointer[replicaLink] // link, for the write path's check
	// writable is replica-read-only no: clients' writes are taken while
	// a replica (runReplicaWrite).
	writable atomic.Bool
	// lazyExpire is lazyfree-lazy-expire: expiries go to the stream as
	// UNLINK rather than DEL (replication_effects.go).
	lazyExpire atomic.Bool
	// min-replicas-to-write and min-replicas-max-lag (seconds), for the
	// write path's NOREPLICAS check (replication_wait.go).
	minToWrite, minMaxLag atomic.Int64
	// FAILOVER (failover.go): its state (writes are paused meanwhile).
	failover failoverState
	// snaps are the full resyncs' snapshots being read (replication.go:
	// liveSnapshot), under the keyspace lock.
	snaps map[*liveSnapshot]struct{}
	// snapCopiedEarly counts keys snapshots copied before a write (tests).
	snapCopiedEarly atomic.Int64
	// shutdownNow: SHUTDOWN NOW asked not to wait for the replicas.
	shutdownNow atomic.Bool
	// pos is the replication position the data is at while this server
	// is a replica: the last unit applied, as also logged (durably, in
	// the unit's transaction group) for a restart; guarded by the
	// keyspace lock.
	pos replPos
}

// replPos is a position in a master's stream: its replication ID, the
// offset of the last byte applied and the database selected there.
type replPos struct {
	replid string
	offset int64
	db     int
}

// logPosition appends the operation recording p (replid "" for none) to
// the open group or as a record of its own; call it under the keyspace
// lock. The caller waits for durability with the writes it goes with.
func (s *Server) logPosition(p replPos) error {
	s.replica.pos = p
	if s.ks == nil {
		return nil
	}
	b := s.ks.NewBatch()
	b.SetReplPosition(p.replid, p.offset, p.db)
	return s.ks.Commit(b)
}

// replicaApplier applies a master's stream to the server.
type replicaApplier struct {
	s    *Server
	link *replicaLink // refuses units once it is not the current link
	c    Client       // the internal client the writes run on
	mu   sync.Mutex
	dur  int64 // DurableOffset
}

func (a *replicaApplier) run(db int, args ...[]byte) error {
	cmd, msg := a.s.resolve(args)
	if msg != "" {
		return fmt.Errorf("%s", msg)
	}
	if cmd.Name == "xadd" || cmd.Name == "xtrim" {
		args = dropExactTrimLimit(args)
	}
	a.c.DB = db
	a.c.Out = a.c.Out[:0]
	if ks := a.c.KS; ks != nil {
		// The master's commands see no key as expired (keyspace
		// replica_expiry.go): its DEL decides when one goes.
		ks.SetApplyingMaster(true)
		defer ks.SetApplyingMaster(false)
	}
	cmd.Run(&a.c, args)
	if len(a.c.Out) > 0 && a.c.Out[0] == '-' {
		// As Redis's replicas: a write the master accepted and this
		// server refuses is logged, and the stream goes on.
		a.s.logf("replication: the master's %s failed here: %s", strings.ToUpper(string(args[0])), strings.TrimSpace(string(a.c.Out[1:])))
	}
	return nil
}

// dropExactTrimLimit drops the "LIMIT n" after an exact trim (MAXLEN|MINID
// = x) of XADD or XTRIM: a Redis 7.0 master sends an approximate trim
// rewritten exact with its LIMIT kept, which its replicas ignore
// (mustObeyClient) and a client's command may not have (a syntax error).
func dropExactTrimLimit(args [][]byte) [][]byte {
	for i := 2; i+3 < len(args); i++ {
		if (ArgIs(args[i], "maxlen") || ArgIs(args[i], "minid")) && string(args[i+1]) == "=" && ArgIs(args[i+3], "limit") && i+4 < len(args) {
			return append(args[:i+3:i+3], args[i+5:]...)
		}
	}
	return args
}

// errLinkReplaced ends a link REPLICAOF replaced or stopped.
var errLinkReplaced = errors.New("replication: the link was replaced by REPLICAOF")

// current reports, under the keyspace lock, whether a's link is still
// the server's (REPLICAOF changes it under that lock).
func (a *replicaApplier) current() bool { return a.s.replica.cur.Load() == a.link }

func (a *replicaApplier) waitDurable(lsn uint64) error {
	if a.s.env.waitDurable == nil {
		return nil
	}
	return a.s.env.waitDurable(lsn)
}

func (a *replicaApplier) Apply(u *repl.Unit) error {
	env := &a.s.env
	env.lock()
	if !a.current() {
		env.unlock()
		return errLinkReplaced
	}
	if len(u.Cmds) == 0 {
		// Link traffic alone (PING, REPLCONF GETACK): nothing to make
		// durable; a restart that asks for these bytes again is harmless.
		a.s.master.FeedRaw(u.Raw, u.DB)
		env.unlock()
		a.mu.Lock()
		a.dur = u.Offset // every unit before it returned durable
		a.mu.Unlock()
		return nil
	}
	// The unit's writes and the position after them, one group: a
	// restart resumes exactly after the last unit recovered.
	env.beginTxn()
	p := replPos{a.s.master.IDs().ID, u.Offset, u.DB}
	if a.s.ks != nil {
		// The position rides in the first record the unit's writes make
		// (one record instead of two; the group keeps them atomic).
		a.s.ks.SetReplPositionTrailer(p.replid, p.offset, p.db)
	}
	for _, c := range u.Cmds {
		if err := a.run(c.DB, c.Argv...); err != nil {
			a.s.logf("replication: %v", err)
		}
	}
	a.s.master.FeedRaw(u.Raw, u.DB)
	var err error
	if a.s.ks == nil || a.s.ks.ReplPositionTrailerPending() {
		err = a.s.logPosition(p) // the unit wrote nothing
	} else {
		a.s.replica.pos = p
	}
	if err2 := env.endTxn(); err == nil {
		err = err2
	}
	lsn := env.lastLSN()
	env.unlock()
	if err == nil {
		err = a.waitDurable(lsn)
	}
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.dur = u.Offset
	a.mu.Unlock()
	return nil
}

func (a *replicaApplier) ChangeReplID(replid string, offset int64) error {
	env := &a.s.env
	env.lock()
	if !a.current() {
		env.unlock()
		return errLinkReplaced
	}
	a.s.master.ChangeID(replid, offset)
	p := a.s.replica.pos
	p.replid = replid
	err := a.s.logPosition(p)
	lsn := env.lastLSN()
	env.unlock()
	if err != nil {
		return err
	}
	return a.waitDurable(lsn)
}

func (a *replicaApplier) DurableOffset() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dur
}

type replicaLoader struct {
	a       *replicaApplier
	replid  string
	off     int64
	flushed bool
}

func (a *replicaApplier) BeginSnapshot(replid string, offset int64) (repl.SnapshotLoader, error) {
	return &replicaLoader{a: a, replid: replid, off: offset}, nil
}

func (l *replicaLoader) flush() error {
	if l.flushed {
		return nil
	}
	l.flushed = true
	env := &l.a.s.env
	env.lock()
	defer env.unlock()
	if !l.a.current() {
		return errLinkReplaced
	}
	// The old data goes with the old position: until Commit the data is
	// no position's (a restart then resyncs fully).
	env.beginTxn()
	err := l.a.run(0, []byte("FLUSHALL"))
	if err == nil {
		err = l.a.s.logPosition(replPos{})
	}
	if err2 := env.endTxn(); err == nil {
		err = err2
	}
	return err
}

func (l *replicaLoader) Load(e *rdb.Entry) error {
	if err := l.flush(); err != nil {
		return err
	}
	payload, err := rdb.Dump(&e.Value)
	if err != nil {
		return err
	}
	env := &l.a.s.env
	env.lock()
	defer env.unlock()
	if !l.a.current() {
		return errLinkReplaced
	}
	// A key whose time has passed (its master had not expired it yet) is
	// loaded all the same, as Redis's rdbLoad does on a replica, and kept
	// until the master's DEL: RESTORE keeps it on a replica (commands'
	// alreadyExpired).
	return l.a.run(e.DB, []byte("RESTORE"), e.Key, strconv.AppendInt(nil, e.ExpireAtMs, 10), payload, []byte("ABSTTL"), []byte("REPLACE"))
}

func (l *replicaLoader) LoadFunction(code []byte) error {
	if err := l.flush(); err != nil {
		return err
	}
	env := &l.a.s.env
	env.lock()
	defer env.unlock()
	if !l.a.current() {
		return errLinkReplaced
	}
	return l.a.run(0, []byte("FUNCTION"), []byte("LOAD"), []byte("REPLACE"), code)
}

func (l *replicaLoader) Commit() error {
	if err := l.flush(); err != nil { // an empty snapshot empties the dataset
		return err
	}
	env := &l.a.s.env
	env.lock()
	if !l.a.current() {
		env.unlock()
		return errLinkReplaced
	}
	l.a.s.master.ResetHistory(l.replid, l.off)
	err := l.a.s.logPosition(replPos{l.replid, l.off, 0})
	lsn := env.lastLSN()
	env.unlock()
	if err != nil {
		return err
	}
	if err := l.a.waitDurable(lsn); err != nil {
		return err
	}
	l.a.mu.Lock()
	l.a.dur = l.off
	l.a.mu.Unlock()
	return nil
}

func (l *replicaLoader) Abort() {}

// replicaofCommand: semantics: redis.io REPLICAOF host port | NO ONE
// (SLAVEOF too). Reply: +OK ("+OK Already connected to specified master"
// when it is); a port that is not an integer: ERR. It runs under the
// keyspace lock (taken here, or held by the EXEC it is in, as Sentinel
// sends it), so no unit of the old link applies after it: an applier
// whose link is no longer current refuses its unit.
func replicaofCommand(c *Client, args [][]byte) {
	s := c.Srv
	noOne := ArgIs(args[1], "no") && ArgIs(args[2], "one")
	port, ok := ParseInt64(args[2])
	if !noOne && (!ok || port < 0 || port > 65535) {
		c.WriteError("ERR Invalid master port")
		return
	}
	if cn := c.conn; cn == nil || !cn.inExec {
		s.env.lock()
		defer s.env.unlock()
	}
	if noOne {
		if err := s.replicaofNoOne(); err != nil {
			c.WriteErr(err)
			return
		}
		c.WriteOK()
		return
	}
	host := string(args[1])
	if l := s.replica.cur.Load(); l != nil && l.host == host && l.port == int(port) {
		c.WriteString("OK Already connected to specified master")
		return
	}
	s.startReplicaof(host, int(port))
	c.WriteOK()
}

// replicaofNoOne stops the link and promotes: the master's history goes
// on under a new ID (the old one valid as replid2), and the stored
// position is cleared (the data moves on as this server's own). Call it
// under the keyspace lock.
func (s *Server) replicaofNoOne() error {
	s.replica.mu.Lock()
	l := s.replica.link
	s.replica.link = nil
	s.replica.cur.Store(nil)
	s.replica.mu.Unlock()
	s.setReplicaofConfig("")
	if l == nil {
		return nil
	}
	if s.ks != nil {
		s.ks.SetReplica(false) // a master expires keys (and propagates it) again
	}
	l.cancel()
	s.master.Promote()
	s.master.DropReplicas() // they learn the new ID with +CONTINUE
	err := s.logPosition(replPos{})
	s.logf("replication: REPLICAOF NO ONE: now a master (replid %s, the old one valid as replid2)", s.master.IDs().ID)
	return err
}

// startReplicaof makes this server a replica of host:port, resuming from
// where its data is (the last unit applied from its previous master, or
// its own stream's position as a master), as Redis 7.0 does: after a
// failover the new master knows that history as its replid2 and answers
// +CONTINUE. Call it under the keyspace lock.
func (s *Server) startReplicaof(host string, port int) { s.startReplicaofWith(host, port, false) }

// startReplicaofFailover is startReplicaof whose first PSYNC carries
// FAILOVER (failover.go).
func (s *Server) startReplicaofFailover(host string, port int) {
	s.startReplicaofWith(host, port, true)
}

func (s *Server) startReplicaofWith(host string, port int, failover bool) {
	s.replica.mu.Lock()
	defer s.replica.mu.Unlock()
	pos := s.replica.pos
	if old := s.replica.link; old != nil {
		old.cancel() // its applier refuses what it still has (not current)
	} else if pos.replid == "" {
		pos.replid, pos.offset, pos.db = s.master.Position()
	}
	s.master.BeginRelay()
	if s.ks != nil {
		s.ks.SetReplica(true) // expired keys wait for the master's DEL (keyspace replica_expiry.go)
	}
	s.setReplicaofConfig(host + " " + strconv.Itoa(port))
	app := &replicaApplier{s: s, c: Client{ID: -1, KS: s.ks, Srv: s, Authed: true, obeyMaster: true}, dur: pos.offset}
	user, _ := s.ConfigValue("masteruser")
	pass, _ := s.ConfigValue("masterauth")
	announce, _ := s.ConfigValue("replica-announce-ip")
	lport := int(s.live.port.Load())
	if v, _ := s.ConfigValue("replica-announce-port"); v != "" && v != "0" {
		lport, _ = strconv.Atoi(v)
	}
	r := repl.NewReplica(repl.ReplicaConfig{Addr: net.JoinHostPort(host, strconv.Itoa(port)),
		User: user, Password: pass, ListeningPort: lport, AnnounceIP: announce, Logf: s.logf,
		ReplID: pos.replid, Offset: pos.offset, DB: pos.db, Failover: failover}, app)
	ctx, cancel := context.WithCancel(context.Background())
	l := &replicaLink{host: host, port: port, r: r, cancel: cancel, done: make(chan struct{})}
	app.link = l
	s.replica.link = l
	s.replica.cur.Store(l)
	go func() {
		defer close(l.done)
		r.Run(ctx)
	}()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-l.done:
		}
	}()
	s.logf("replication: REPLICAOF %s %d: connecting to the master, resuming from replid %s offset %d", host, port, pos.replid, pos.offset)
}

// setReplicaofConfig keeps the replicaof parameter what REPLICAOF made
// it ("host port", or "" for none), for CONFIG GET and CONFIG REWRITE
// (Sentinel rewrites the configuration after it reconfigures a server).
func (s *Server) setReplicaofConfig(v string) {
	s.conf.mu.Lock()
	s.conf.vals["replicaof"] = v
	s.conf.mu.Unlock()
}

// resumeReplication runs at start-up: the position recovered from the
// log (the keyspace's) is where the data is; with replicaof configured
// the server resumes replicating from it (PSYNC, a partial resync when
// the master still has the bytes after it). Without, the position is
// cleared: writes taken as a master would make it a lie.
func (s *Server) resumeReplication() {
	if s.ks == nil {
		return
	}
	s.env.lock()
	defer s.env.unlock()
	replid, off, db, ok := s.ks.ReplPosition()
	target, _ := s.ConfigValue("replicaof")
	host, portStr, _ := strings.Cut(target, " ")
	port, perr := strconv.Atoi(portStr)
	if target == "" || perr != nil {
		if ok && off > 0 {
			// The data is exactly history replid up to off (a master's
			// own, stored at its clean shutdown, or a replica's): go on
			// from it as a master, as Redis 7.0 does from its RDB's
			// repl-id and repl-offset, so replicas that had it all
			// continue. The stored position is cleared at once: this
			// server's writes (and a kill -9 after them) make it a lie.
			s.master.Restore(replid, off)
			s.logf("replication: the data is replid %s offset %d: a master now, replid %s, the stored one valid as replid2 to offset %d (replicas resume with +CONTINUE)",
				replid, off, s.master.IDs().ID, off+1)
			if err := s.logPosition(replPos{}); err != nil {
				s.logf("replication: clearing the stored position: %v", err)
			}
		} else {
			// Offset 0: no stream was ever recorded, nothing to go on
			// from (and recording one from now on would cost every write).
			if ok {
				if err := s.logPosition(replPos{}); err != nil {
					s.logf("replication: clearing the stored position: %v", err)
				}
			}
			s.logf("replication: no stored replication position (first start, or not shut down cleanly): a new history, replid %s", s.master.IDs().ID)
		}
		return
	}
	if ok {
		s.replica.pos = replPos{replid, off, db}
		s.master.ResetHistory(replid, off) // the relayed stream goes on from there
		s.logf("replication: stored position: replid %s offset %d (db %d)", replid, off, db)
	}
	s.startReplicaof(host, port)
}

// drainReplicas runs first when a master shuts down (SIGTERM, SHUTDOWN),
// as Redis 7.0's does: writes are paused (CLIENT PAUSE WRITE) and it
// waits up to shutdown-timeout seconds for every online replica to
// acknowledge the whole stream, so after the restart they resume with
// +CONTINUE (storeMasterPosition). SHUTDOWN NOW skips it, as in Redis.
func (s *Server) drainReplicas() {
	m := s.master
	if m == nil || s.ks == nil || m.Relaying() {
		return
	}
	if s.replica.shutdownNow.Load() {
		s.logf("replication: SHUTDOWN NOW: not waiting for the replicas")
		return
	}
	online := 0
	for _, r := range m.Replicas() {
		if r.State == "online" {
			online++
		}
	}
	v, _ := s.ConfigValue("shutdown-timeout")
	secs, _ := strconv.Atoi(v)
	if online == 0 || secs <= 0 {
		return
	}
	start := time.Now()
	s.pauseClients(pauseForShutdown, pauseWrite, time.Now().Add(time.Duration(secs)*time.Second+time.Hour))
	s.env.lock() // a write running now has propagated once this returns
	s.env.unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	if got, n, off := m.Drain(ctx); got < n {
		s.logf("replication: shutting down with %d of %d replicas at offset %d after %d s (shutdown-timeout): the others resync fully", got, n, off, secs)
	} else {
		s.logf("replication: every online replica (%d) acknowledged offset %d before the shutdown (%v)", n, off, time.Since(start).Round(time.Millisecond))
	}
}

// storeMasterPosition runs at a clean shutdown of a master, once no
// connection runs a command: its replication ID, offset and stream
// database are logged (durable at the keyspace's close), so the restart
// continues the history (resumeReplication) where Redis 7.0 continues it
// from its RDB. A kill -9 leaves no position (it was cleared at start-up,
// before the first write): a new history, as Redis after a crash with AOF.
func (s *Server) storeMasterPosition() {
	m := s.master
	if m == nil || s.ks == nil || m.Relaying() {
		return // a replica logs its position with every unit it applies
	}
	s.env.lock()
	defer s.env.unlock()
	replid, off, db := m.Position()
	if err := s.logPosition(replPos{replid, off, db}); err != nil {
		s.logf("replication: storing the replication position: %v", err)
		return
	}
	s.logf("replication: stored replid %s offset %d for the restart", replid, off)
}

// replicaStatus returns the link while this server is a replica.
func (s *Server) replicaStatus() *replicaLink { return s.replica.cur.Load() }

// runReplicaWrite runs a client's write command on a replica (one
// configured with replica-read-only no, as dispatch refused it otherwise),
// as Redis's lookupKeyWrite does there: the expired keys the command looks
// up are removed rather than only hidden, and the expiries it sets are the
// replica's to expire (INFO slave_expires_tracked_keys; keyspace
// replica_expiry.go). The keyspace lock is held.
func (c *conn) runReplicaWrite(cmd *Command, args [][]byte) {
	was := c.KS.SetClientWrite(true)
	cmd.Run(&c.Client, args)
	c.KS.SetClientWrite(was)
}

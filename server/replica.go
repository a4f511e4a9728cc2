package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
// replid2). While a replica, writes from clients get READONLY.
//
// Gaps: the position (replid, offset) is not stored, so a restarted
// replica resyncs fully; a full resync flushes the dataset before it
// loads (a failed transfer leaves it partial until the next one);
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
	// lazyExpire is lazyfree-lazy-expire: expiries go to the stream as
	// UNLINK rather than DEL (replication_effects.go).
	lazyExpire atomic.Bool
}

// replicaApplier applies a master's stream to the server.
type replicaApplier struct {
	s   *Server
	c   Client // the internal client the writes run on
	mu  sync.Mutex
	dur int64 // DurableOffset
}

func (a *replicaApplier) run(db int, args ...[]byte) error {
	cmd, msg := a.s.resolve(args)
	if msg != "" {
		return fmt.Errorf("%s", msg)
	}
	a.c.DB = db
	a.c.Out = a.c.Out[:0]
	cmd.Run(&a.c, args)
	if len(a.c.Out) > 0 && a.c.Out[0] == '-' {
		// As Redis's replicas: a write the master accepted and this
		// server refuses is logged, and the stream goes on.
		a.s.logf("replication: the master's %s failed here: %s", strings.ToUpper(string(args[0])), strings.TrimSpace(string(a.c.Out[1:])))
	}
	return nil
}

func (a *replicaApplier) waitDurable(lsn uint64) error {
	if a.s.env.waitDurable == nil {
		return nil
	}
	return a.s.env.waitDurable(lsn)
}

func (a *replicaApplier) Apply(u *repl.Unit) error {
	env := &a.s.env
	env.lock()
	if len(u.Cmds) > 1 {
		env.beginTxn()
	}
	for _, c := range u.Cmds {
		if err := a.run(c.DB, c.Argv...); err != nil {
			a.s.logf("replication: %v", err)
		}
	}
	var err error
	if len(u.Cmds) > 1 {
		err = env.endTxn()
	}
	a.s.master.FeedRaw(u.Raw)
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
	a.s.master.ChangeID(replid, offset)
	return nil
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
	return l.a.run(0, []byte("FLUSHALL"))
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
	return l.a.run(e.DB, []byte("RESTORE"), e.Key, strconv.AppendInt(nil, e.ExpireAtMs, 10), payload, []byte("ABSTTL"), []byte("REPLACE"))
}

func (l *replicaLoader) LoadFunction(code []byte) error {
	if err := l.flush(); err != nil {
		return err
	}
	env := &l.a.s.env
	env.lock()
	defer env.unlock()
	return l.a.run(0, []byte("FUNCTION"), []byte("LOAD"), []byte("REPLACE"), code)
}

func (l *replicaLoader) Commit() error {
	if err := l.flush(); err != nil { // an empty snapshot empties the dataset
		return err
	}
	env := &l.a.s.env
	env.lock()
	lsn := env.lastLSN()
	l.a.s.master.ResetHistory(l.replid, l.off)
	env.unlock()
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
// when it is); a port that is not an integer: ERR.
func replicaofCommand(c *Client, args [][]byte) {
	s := c.Srv
	if ArgIs(args[1], "no") && ArgIs(args[2], "one") {
		s.replica.mu.Lock()
		l := s.replica.link
		s.replica.link = nil
		s.replica.cur.Store(nil)
		s.replica.mu.Unlock()
		if l != nil {
			l.cancel()
			<-l.done
			s.master.Promote()
			s.master.DropReplicas() // they learn the new ID with +CONTINUE
			s.logf("replication: REPLICAOF NO ONE: now a master (replid %s, the old one valid as replid2)", s.master.IDs().ID)
		}
		c.WriteOK()
		return
	}
	port, ok := ParseInt64(args[2])
	if !ok || port < 0 || port > 65535 {
		c.WriteError("ERR Invalid master port")
		return
	}
	host := string(args[1])
	s.replica.mu.Lock()
	defer s.replica.mu.Unlock()
	if l := s.replica.link; l != nil {
		if l.host == host && l.port == int(port) {
			c.WriteString("OK Already connected to specified master")
			return
		}
		l.cancel()
		<-l.done
	}
	app := &replicaApplier{s: s, c: Client{ID: -1, KS: s.ks, Srv: s, Authed: true}}
	user, _ := s.ConfigValue("masteruser")
	pass, _ := s.ConfigValue("masterauth")
	r := repl.NewReplica(repl.ReplicaConfig{Addr: net.JoinHostPort(host, strconv.Itoa(int(port))),
		User: user, Password: pass, ListeningPort: int(s.live.port.Load()), Logf: s.logf}, app)
	ctx, cancel := context.WithCancel(context.Background())
	l := &replicaLink{host: host, port: int(port), r: r, cancel: cancel, done: make(chan struct{})}
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
	s.logf("replication: REPLICAOF %s %d: connecting to the master", host, port)
	c.WriteOK()
}

// replicaStatus returns the link while this server is a replica.
func (s *Server) replicaStatus() *replicaLink { return s.replica.cur.Load() }

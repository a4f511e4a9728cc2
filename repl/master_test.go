package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/rdb"
	"github.com/redis/go-redis/v9"
)

// testMaster is a small master built from this package's blocks: a map
// keyspace whose writes apply and propagate under one lock, a listener
// that runs the handshake and hands PSYNC/SYNC to Master.Serve.
type testMaster struct {
	t    testing.TB
	m    *Master
	ln   net.Listener
	mu   sync.Mutex
	dbs  map[int]map[string]rdb.Value
	wg   sync.WaitGroup
	quit chan struct{}

	failAfter int    // the next snapshot fails after this many keys
	during    func() // run by the next snapshot after its first key
	durable   int64  // as an Applier: the last offset applied
}

func newTestMaster(t testing.TB, cfg MasterConfig) *testMaster {
	tm := &testMaster{t: t, dbs: map[int]map[string]rdb.Value{}, quit: make(chan struct{})}
	cfg.TempDir = t.TempDir()
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	tm.m = NewMaster(cfg, NewReplIDs(), 0, tm)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tm.ln = ln
	tm.wg.Add(1)
	go tm.accept()
	t.Cleanup(func() {
		close(tm.quit)
		ln.Close()
		tm.m.DropReplicas()
		tm.wg.Wait()
	})
	return tm
}

func (tm *testMaster) port() int { return tm.ln.Addr().(*net.TCPAddr).Port }

func (tm *testMaster) accept() {
	defer tm.wg.Done()
	for {
		c, err := tm.ln.Accept()
		if err != nil {
			return
		}
		tm.wg.Add(1)
		go func() {
			defer tm.wg.Done()
			tm.serve(c)
		}()
	}
}

// serve is the part of a server's connection loop a replica talks to.
func (tm *testMaster) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	cr := commandReader{br: br, inline: true}
	var req SyncRequest
	for {
		argv, _, err := cr.next()
		if err != nil {
			return
		}
		if len(argv) == 0 {
			continue
		}
		reply := "+OK\r\n"
		switch strings.ToUpper(string(argv[0])) {
		case "PING":
			reply = "+PONG\r\n"
		case "REPLCONF":
			for i := 1; i+1 < len(argv); i += 2 {
				v := string(argv[i+1])
				switch strings.ToLower(string(argv[i])) {
				case "listening-port":
					req.ListeningPort, _ = strconv.Atoi(v)
				case "capa":
					req.CapaEOF = req.CapaEOF || v == "eof"
					req.CapaPSYNC2 = req.CapaPSYNC2 || v == "psync2"
				case "rdb-only":
					req.RDBOnly = v == "1"
				}
			}
		case "PSYNC":
			req.PSYNC, req.ReplID = true, string(argv[1])
			req.Offset, _ = strconv.ParseInt(string(argv[2]), 10, 64)
			fallthrough
		case "SYNC":
			tm.m.Serve(c, br, req)
			return
		default:
			reply = "-ERR unknown command\r\n"
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

// write applies one write to the model and propagates it, under the lock
// the snapshot takes.
func (tm *testMaster) write(db int, argv ...string) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if err := modelExec(tm.dbs, db, toBytes(argv)); err != nil {
		tm.t.Fatal(err)
	}
	tm.m.Propagate(db, toBytes(argv)...)
}

type sliceSnapshot struct {
	entries   []rdb.Entry
	failAfter int // > 0: Next fails after this many keys (a master dying mid-transfer)
	during    func()
	sent      int
}

var errSnapshotFailed = errors.New("snapshot failed")

func (s *sliceSnapshot) Functions() [][]byte { return nil }
func (s *sliceSnapshot) Close() error        { return nil }
func (s *sliceSnapshot) Next() (*rdb.Entry, error) {
	if len(s.entries) == 0 {
		return nil, io.EOF
	}
	if s.failAfter > 0 {
		if s.failAfter == 1 {
			return nil, errSnapshotFailed
		}
		s.failAfter--
	}
	if s.sent++; s.sent == 2 && s.during != nil {
		s.during()
	}
	e := &s.entries[0]
	s.entries = s.entries[1:]
	return e, nil
}

func (tm *testMaster) Snapshot(at func()) (Snapshot, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	at()
	s := &sliceSnapshot{failAfter: tm.failAfter}
	if tm.failAfter == 0 {
		s.during, tm.during = tm.during, nil
	}
	tm.failAfter = 0
	for db, keys := range tm.dbs {
		for k, v := range keys {
			s.entries = append(s.entries, rdb.Entry{DB: db, Key: []byte(k), Value: v, Idle: -1, Freq: -1})
		}
	}
	slices.SortFunc(s.entries, func(a, b rdb.Entry) int { return a.DB - b.DB })
	return s, nil
}

func (tm *testMaster) writeRound(tag string) {
	for _, db := range []int{0, 2} {
		for i := range 30 {
			k := fmt.Sprintf("%s:%d:%d", tag, db, i)
			tm.write(db, "SET", "s:"+k, "v"+k)
			tm.write(db, "RPUSH", "l:"+tag, k)
			tm.write(db, "HSET", "h:"+tag+":"+strconv.Itoa(i), "f", k, "g", "x")
		}
		tm.write(db, "DEL", fmt.Sprintf("s:%s:%d:7", tag, db))
	}
}

// compareReplica checks a redis-server replica's keys against the model.
func (tm *testMaster) compareReplica(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	tm.mu.Lock()
	defer tm.mu.Unlock()
	for _, db := range []int{0, 1, 2} {
		conn := c.Conn()
		must(t, conn.Select(ctx, db).Err())
		keys, err := conn.Keys(ctx, "*").Result()
		must(t, err)
		if len(keys) != len(tm.dbs[db]) {
			t.Fatalf("db %d: replica has %d keys, master %d", db, len(keys), len(tm.dbs[db]))
		}
		for _, k := range keys {
			want, ok := tm.dbs[db][k]
			if !ok {
				t.Fatalf("db %d: replica has key %q the master has not", db, k)
			}
			if got := masterValue(t, conn, k); got != canonical(want) {
				t.Fatalf("db %d key %q: replica %s, master %s", db, k, got, canonical(want))
			}
		}
		conn.Close()
	}
}

// TestRedisReplicaOfMaster: an unmodified redis-server 7.0 replica of a
// master built from Backlog, Feed, DecidePSYNC and Master holds the
// master's data after a full resync (disk-based $<len> to a disk-loading
// replica; disk-less $EOF:<mark> to a swapdb-loading one), after more
// writes, after the master drops the link (+CONTINUE from the backlog),
// and acknowledges the master's offset.
func TestRedisReplicaOfMaster(t *testing.T) {
	for _, diskless := range []bool{false, true} {
		t.Run(fmt.Sprintf("diskless=%v", diskless), func(t *testing.T) {
			tm := newTestMaster(t, MasterConfig{Diskless: diskless, BacklogSize: 1 << 20})
			tm.writeRound("before")
			load := "disabled"
			if diskless {
				load = "swapdb"
			}
			_, replica := startRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(tm.port()), "--repl-diskless-load", load)
			caughtUp := func() bool {
				return infoField(t, replica, "replication", "master_link_status") == "up" &&
					infoInt(t, replica, "replication", "master_repl_offset") == tm.m.Offset()
			}
			waitFor(t, "the full resync", caughtUp)
			tm.compareReplica(t, replica)
			if got := infoField(t, replica, "replication", "master_replid"); got != tm.m.IDs().ID {
				t.Fatalf("replica follows replid %s, master's is %s", got, tm.m.IDs().ID)
			}

			tm.writeRound("after")
			waitFor(t, "the stream", caughtUp)
			tm.compareReplica(t, replica)

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if n := tm.m.WaitAcked(ctx, 1, tm.m.Offset()); n != 1 {
				t.Fatalf("%d replicas acknowledged the offset", n)
			}

			tm.m.DropReplicas()
			tm.writeRound("cut")
			waitFor(t, "the partial resync", func() bool { return tm.m.Stats().PartialOK == 1 && caughtUp() })
			tm.compareReplica(t, replica)
			if st := tm.m.Stats(); st.FullSyncs != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestReplicaOfMaster runs this package's Replica against its Master:
// a snapshot cut mid-transfer is aborted and leaves the replica's data as
// it was; writes made while a snapshot is sent, more than the backlog
// holds, reach the replica; a MULTI/EXEC block arrives as one unit; WAIT's GETACK is
// answered; a link dropped while the backlog still holds the missed bytes
// resumes with +CONTINUE and one that fell out of it does a full resync;
// after a promotion (replid shifted to replid2) the replica continues
// under the new ID.
func TestReplicaOfMaster(t *testing.T) {
	tm := newTestMaster(t, MasterConfig{Diskless: true, BacklogSize: 4 << 10})
	tm.writeRound("before")
	model := newModel()
	model.dbs[5] = map[string]rdb.Value{"old": {Kind: rdb.KindString, Str: []byte("data")}}
	tm.failAfter = 20
	// The successful transfer sees more writes than the backlog holds:
	// the link holds them for the replica.
	tm.during = func() { tm.writeRound("during") }
	r := NewReplica(ReplicaConfig{Addr: tm.ln.Addr().String(), AckPeriod: 20e6, RetryPeriod: 20e6, Logf: t.Logf}, model)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the failed transfer", func() bool { return r.Status().LastError != "" })
	model.mu.Lock()
	if len(model.dbs) != 1 || model.snapshots != 0 {
		t.Fatalf("a cut snapshot changed the replica's data: %d dbs, %d snapshots", len(model.dbs), model.snapshots)
	}
	model.mu.Unlock()

	caughtUp := func() bool {
		st := r.Status()
		return st.State == StateConnected && st.Offset == tm.m.Offset()
	}
	waitFor(t, "the full resync", caughtUp)
	checkModel(t, tm, model)
	if st, ms := r.Status(), tm.m.Stats(); st.FullSyncs != 1 || ms.FullSyncs != 2 {
		t.Fatalf("replica counted %d full resyncs, master %d; want 1 and 2 (the cut one)", st.FullSyncs, ms.FullSyncs)
	}

	tm.mu.Lock()
	tm.m.Propagate(2, []byte("MULTI"))
	tm.m.Propagate(2, []byte("SET"), []byte("tx1"), []byte("a"))
	tm.m.Propagate(1, []byte("SET"), []byte("tx2"), []byte("b"))
	tm.m.Propagate(1, []byte("EXEC"))
	tm.dbs[2]["tx1"] = rdb.Value{Kind: rdb.KindString, Str: []byte("a")}
	tm.dbs[1] = map[string]rdb.Value{"tx2": {Kind: rdb.KindString, Str: []byte("b")}}
	tm.mu.Unlock()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if n := tm.m.WaitAcked(wctx, 1, tm.m.Offset()); n != 1 {
		t.Fatal("WAIT: the replica did not acknowledge")
	}
	checkModel(t, tm, model)
	model.mu.Lock()
	last := model.units[len(model.units)-1]
	model.mu.Unlock()
	if len(last) != 2 || last[0].DB != 2 || last[1].DB != 1 {
		t.Fatalf("the MULTI block arrived as %+v", last)
	}

	// Within the backlog: +CONTINUE. Past it: a full resync.
	tm.m.DropReplicas()
	tm.write(0, "SET", "cut", "1")
	waitFor(t, "the partial resync", func() bool { return r.Status().PartialSyncs == 1 && caughtUp() })
	tm.m.DropReplicas()
	tm.writeRound("overflow") // more than the 4 KiB backlog
	waitFor(t, "the second full resync", func() bool { return r.Status().FullSyncs == 2 && caughtUp() })
	checkModel(t, tm, model)

	// Promotion: the replica's PSYNC names the old ID, the reply the new.
	old := tm.m.IDs().ID
	tm.m.Promote()
	tm.m.DropReplicas()
	tm.write(0, "SET", "promoted", "1")
	waitFor(t, "the continue under the new ID", func() bool { return r.Status().PartialSyncs == 2 && caughtUp() })
	checkModel(t, tm, model)
	if id, _, _ := model.position(); id != tm.m.IDs().ID || id == old || tm.m.IDs().ID2 != old {
		t.Fatalf("replica at replid %s; master %+v, old %s", id, tm.m.IDs(), old)
	}
}

func checkModel(t *testing.T, tm *testMaster, m *modelApplier) {
	t.Helper()
	tm.mu.Lock()
	defer tm.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, db := range []int{0, 1, 2, 5} {
		if len(tm.dbs[db]) != len(m.dbs[db]) {
			t.Fatalf("db %d: master %d keys, replica %d", db, len(tm.dbs[db]), len(m.dbs[db]))
		}
		for k, v := range tm.dbs[db] {
			if got := canonical(m.dbs[db][k]); got != canonical(v) {
				t.Fatalf("db %d key %q: replica %s, master %s", db, k, got, canonical(v))
			}
		}
	}
}

// TestRedisCliRDB: redis-cli --rdb (REPLCONF capa eof, rdb-only 1, then
// an inline SYNC) takes a snapshot from Master, disk-less and from disk,
// that redis-check-rdb accepts and a redis-server started on it loads
// with the master's keys.
func TestRedisCliRDB(t *testing.T) {
	for _, diskless := range []bool{false, true} {
		tm := newTestMaster(t, MasterConfig{Diskless: diskless})
		tm.writeRound("backup")
		dir := t.TempDir()
		file := dir + "/dump.rdb"
		out, err := exec.Command("redis-cli", "-p", strconv.Itoa(tm.port()), "--rdb", file).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli --rdb: %v\n%s", err, out)
		}
		if out, err := exec.Command("redis-check-rdb", file).CombinedOutput(); err != nil {
			t.Fatalf("redis-check-rdb: %v\n%s", err, out)
		}
		_, c := startRedis(t, "--dir", dir, "--dbfilename", "dump.rdb")
		tm.compareReplica(t, c)
		if n := len(tm.m.Replicas()); n != 0 {
			t.Fatalf("an rdb-only link is still listed as a replica (%d)", n)
		}
	}
}

// testMaster as an Applier: a replica that relays its stream through its
// own Master (Unit.Raw into FeedRaw under the keyspace lock).
type tmLoader struct {
	tm  *testMaster
	dbs map[int]map[string]rdb.Value
	id  string
	off int64
}

func (tm *testMaster) BeginSnapshot(replid string, offset int64) (SnapshotLoader, error) {
	return &tmLoader{tm: tm, dbs: map[int]map[string]rdb.Value{}, id: replid, off: offset}, nil
}

func (l *tmLoader) Load(e *rdb.Entry) error {
	if l.dbs[e.DB] == nil {
		l.dbs[e.DB] = map[string]rdb.Value{}
	}
	l.dbs[e.DB][string(e.Key)] = e.Value
	return nil
}
func (l *tmLoader) LoadFunction([]byte) error { return nil }
func (l *tmLoader) Abort()                    {}
func (l *tmLoader) Commit() error {
	l.tm.mu.Lock()
	defer l.tm.mu.Unlock()
	l.tm.dbs, l.tm.durable = l.dbs, l.off
	l.tm.m.ResetHistory(l.id, l.off)
	return nil
}

func (tm *testMaster) Apply(u *Unit) error {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	for _, c := range u.Cmds {
		if err := modelExec(tm.dbs, c.DB, c.Argv); err != nil {
			return err
		}
	}
	tm.m.FeedRaw(u.Raw, u.DB)
	tm.durable = u.Offset
	return nil
}

func (tm *testMaster) ChangeReplID(replid string, offset int64) error {
	tm.m.ChangeID(replid, offset)
	return nil
}

func (tm *testMaster) DurableOffset() int64 {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.durable
}

// compareRedis checks that two redis-servers hold the same keys.
func compareRedis(t *testing.T, a, b *redis.Client, dbs ...int) {
	t.Helper()
	ctx := context.Background()
	for _, db := range dbs {
		ca, cb := a.Conn(), b.Conn()
		must(t, ca.Select(ctx, db).Err())
		must(t, cb.Select(ctx, db).Err())
		ka, err := ca.Keys(ctx, "*").Result()
		must(t, err)
		kb, err := cb.Keys(ctx, "*").Result()
		must(t, err)
		if len(ka) != len(kb) || len(ka) == 0 {
			t.Fatalf("db %d: %d keys and %d keys", db, len(ka), len(kb))
		}
		for _, k := range ka {
			if va, vb := masterValue(t, ca, k), masterValue(t, cb, k); va != vb {
				t.Fatalf("db %d key %q: %s and %s", db, k, va, vb)
			}
		}
		ca.Close()
		cb.Close()
	}
}

// TestRelayAndPromote: redis-server master → Replica relaying through a
// Master → redis-server sub-replica. The sub-replica follows the master's
// offsets and data through the relay; after the relay is promoted
// (replid shifted to replid2, as REPLICAOF NO ONE does) the sub-replica
// reconnects with its old replid and continues partially (+CONTINUE with
// the new ID) and receives the promoted master's own writes.
func TestRelayAndPromote(t *testing.T) {
	mport, master := startRedis(t, "--repl-diskless-sync-delay", "0")
	writeSome(t, master, "before", true)
	tm := newTestMaster(t, MasterConfig{Diskless: true})
	r := NewReplica(ReplicaConfig{Addr: fmt.Sprintf("127.0.0.1:%d", mport), AckPeriod: 20e6, RetryPeriod: 20e6, Logf: t.Logf}, tm)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	_, sub := startRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(tm.port()))

	writeSome(t, master, "after", false)
	waitFor(t, "the sub-replica at the master's offset", func() bool {
		return infoField(t, sub, "replication", "master_link_status") == "up" &&
			infoInt(t, sub, "replication", "master_repl_offset") == infoInt(t, master, "replication", "master_repl_offset")
	})
	compareRedis(t, master, sub, 0, 3)
	if got, want := infoField(t, sub, "replication", "master_replid"), infoField(t, master, "replication", "master_replid"); got != want {
		t.Fatalf("sub-replica follows %s, the master is %s", got, want)
	}
	// The relay's INFO replication has the fields of the real replica's
	// and the same IDs and offset.
	ic := InfoConfig{MasterHost: "127.0.0.1", MasterPort: mport, ReplicaPriority: 100, ReadOnly: true, Announced: true}
	compareInfo(t, InfoReplication(tm.m, r, ic, time.Now()), sub, "role", "master_link_status", "master_replid", "master_repl_offset", "slave_repl_offset")

	// The master goes away; the relay is promoted.
	cancel()
	<-done
	done <- nil
	old, fulls := tm.m.IDs().ID, tm.m.Stats().FullSyncs
	tm.m.Promote()
	tm.m.DropReplicas()
	tm.writeRound("promoted")
	waitFor(t, "the sub-replica's partial resync", func() bool {
		return tm.m.Stats().PartialOK == 1 && infoField(t, sub, "replication", "master_link_status") == "up" &&
			infoInt(t, sub, "replication", "master_repl_offset") == tm.m.Offset()
	})
	tm.compareReplica(t, sub)
	compareInfo(t, InfoReplication(tm.m, nil, InfoConfig{}, time.Now()), master, "role", "master_failover_state", "repl_backlog_active")
	ids := tm.m.IDs()
	if ids.ID2 != old || infoField(t, sub, "replication", "master_replid") != ids.ID || tm.m.Stats().FullSyncs != fulls {
		t.Fatalf("after promotion: ids %+v (old %s), sub follows %s, %d full syncs", ids, old,
			infoField(t, sub, "replication", "master_replid"), tm.m.Stats().FullSyncs)
	}
}

// compareInfo checks that ours (an INFO replication section) has the
// fields, in order, of redis-server c's, slaveN lines aside, and the same
// values for the fields named.
func compareInfo(t *testing.T, ours string, c *redis.Client, same ...string) {
	t.Helper()
	theirs, err := c.Info(context.Background(), "replication").Result()
	must(t, err)
	parse := func(s string) ([]string, map[string]string) {
		var names []string
		vals := map[string]string{}
		for _, line := range strings.Split(s, "\r\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok || strings.HasPrefix(k, "slave") && k[5] >= '0' && k[5] <= '9' {
				continue
			}
			names, vals[k] = append(names, k), v
		}
		return names, vals
	}
	on, ov := parse(ours)
	tn, tv := parse(theirs)
	if !slices.Equal(on, tn) {
		t.Fatalf("INFO replication fields:\n%v\nredis-server's:\n%v", on, tn)
	}
	for _, k := range same {
		if ov[k] != tv[k] {
			t.Fatalf("INFO replication %s: %q, redis-server's %q", k, ov[k], tv[k])
		}
	}
}

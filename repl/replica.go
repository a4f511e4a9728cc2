package repl

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/rdb"
)

// Command is one write of the command stream and the database it runs in.
type Command struct {
	DB   int
	Argv [][]byte // Argv[0] is the command name as the master sent it
}

// Unit is a stretch of the command stream handed to the applier whole.
type Unit struct {
	// Cmds are the writes: one, a MULTI/EXEC block's (applied whole or
	// not at all), or none when the unit is only the link's own traffic
	// (PING, SELECT, REPLCONF GETACK).
	Cmds []Command
	// Raw is the unit's bytes as the master sent them, the link traffic
	// before its writes included. A server that relays its stream (to
	// replicas of its own, or to serve PSYNC after a promotion) appends
	// Raw to its Master with FeedRaw, under the lock its writes and
	// snapshots take, so its backlog's offsets stay the master's.
	Raw    []byte
	Offset int64 // the replication offset just after Raw
	DB     int   // the database selected at Offset
}

// Applier is what a replica applies its master's data to; the server
// implements it. The Replica calls every method but DurableOffset from
// one goroutine, in stream order; DurableOffset may be called from another
// goroutine at any time.
type Applier interface {
	// BeginSnapshot starts a full resynchronization: the master's
	// snapshot at offset, under replication ID replid, follows. The
	// dataset is replaced only when the returned loader commits.
	BeginSnapshot(replid string, offset int64) (SnapshotLoader, error)
	// Apply runs a unit of the command stream (see Unit). Its position
	// (Offset, DB, and the replication ID) is where a restarted replica
	// resumes. An error ends the link; the stream is asked again from
	// where the unit began.
	Apply(u *Unit) error
	// ChangeReplID records that the master's history now goes on under
	// replid (a +CONTINUE naming a new ID after a failover); offset is
	// the replica's offset at the change. A relaying server calls
	// Master.ChangeID with both.
	ChangeReplID(replid string, offset int64) error
	// DurableOffset is the highest offset (a unit's with writes, or a
	// committed snapshot's) whose effects are durable. The replica never
	// acknowledges more to its master; units without writes need not be
	// durable before they are acknowledged.
	DurableOffset() int64
}

// SnapshotLoader receives a full resynchronization's snapshot.
type SnapshotLoader interface {
	Load(e *rdb.Entry) error        // one key; its slices are the loader's to keep
	LoadFunction(code []byte) error // one function library's source
	// Commit makes the loaded keys the whole dataset, durably, at the
	// snapshot's replication ID and offset (database 0 selected). A
	// relaying server calls Master.ResetHistory under the same lock.
	Commit() error
	// Abort discards what was loaded: the dataset stays as it was.
	Abort()
}

// ReplicaConfig configures a replica's link to its master.
type ReplicaConfig struct {
	Addr          string // the master's host:port
	User          string // masteruser ("" for AUTH password alone)
	Password      string // masterauth ("" for no AUTH)
	ListeningPort int    // announced with REPLCONF listening-port
	AnnounceIP    string // announced with REPLCONF ip-address when set

	// The position to resume from with PSYNC (a replica restarting reads
	// it from its store). ReplID "" asks for a full resync.
	ReplID string
	Offset int64 // the offset of the last byte applied
	DB     int   // the database selected at Offset
	// Failover makes the first PSYNC "PSYNC replid offset FAILOVER": the
	// master's FAILOVER TO handing over to its replica, which promotes
	// itself when replid is its master's (Redis 6.2+ does the same).
	Failover bool

	Timeout     time.Duration // repl-timeout; 60 s when zero
	AckPeriod   time.Duration // between REPLCONF ACKs; 1 s when zero
	RetryPeriod time.Duration // between connection attempts; 1 s when zero
	Logf        func(format string, args ...any)
}

// Link states, as INFO's master_link_status and ROLE name them.
const (
	StateConnect    = "connect"    // waiting to connect
	StateConnecting = "connecting" // dialling, or in the handshake
	StateSync       = "sync"       // receiving a snapshot
	StateConnected  = "connected"  // receiving the command stream
)

// ReplicaStatus is a replica's view of its link, for INFO and ROLE.
type ReplicaStatus struct {
	State        string
	ReplID       string // the master's replication ID
	Offset       int64  // processed offset (slave_repl_offset)
	AckedOffset  int64  // the last offset sent in REPLCONF ACK
	SyncRead     int64  // snapshot bytes read so far (state sync)
	SyncTotal    int64  // snapshot size, -1 for a disk-less transfer
	LastIO       time.Time
	DownSince    time.Time // zero while connected
	FullSyncs    int
	PartialSyncs int
	LastError    string
}

// Replica is the replica side of a replication link: it connects to a
// master, resynchronizes (partially when it can), applies the command
// stream and acknowledges what is durable. Run drives it.
type Replica struct {
	cfg ReplicaConfig
	app Applier

	mu        sync.Mutex
	st        ReplicaStatus
	db        int
	committed int64 // offset of the last unit applied: where to resume
	applied   int64 // offset of the last unit with writes, or committed snapshot
	conn      net.Conn
	lastIO    atomic.Int64 // unix nanoseconds of the last read from the master
	syncRead  atomic.Int64
}

// NewReplica returns a replica of cfg.Addr applying to app; nothing
// happens until Run.
func NewReplica(cfg ReplicaConfig, app Applier) *Replica {
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.AckPeriod == 0 {
		cfg.AckPeriod = time.Second
	}
	if cfg.RetryPeriod == 0 {
		cfg.RetryPeriod = time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	r := &Replica{cfg: cfg, app: app, db: cfg.DB, committed: cfg.Offset, applied: cfg.Offset}
	r.st = ReplicaStatus{State: StateConnect, ReplID: cfg.ReplID, Offset: cfg.Offset, DownSince: time.Now()}
	if cfg.ReplID == "" {
		r.st.Offset = -1
	}
	return r
}

// Status returns the link's state now.
func (r *Replica) Status() ReplicaStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.st
	s.SyncRead = r.syncRead.Load()
	if n := r.lastIO.Load(); n != 0 {
		s.LastIO = time.Unix(0, n)
	}
	return s
}

// Run keeps the link up until ctx is done: it connects, resynchronizes
// and applies the stream, and after a failure waits RetryPeriod and
// tries again with PSYNC from where it stopped. It returns ctx's error.
func (r *Replica) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		if r.conn != nil {
			r.conn.Close()
		}
		r.mu.Unlock()
	})
	defer stop()
	for {
		err := r.session(ctx)
		r.mu.Lock()
		r.st.State = StateConnect
		r.st.DownSince = time.Now()
		if err != nil {
			r.st.LastError = err.Error()
		}
		r.mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.cfg.Logf("replica: link to master %s lost: %v", r.cfg.Addr, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.cfg.RetryPeriod):
		}
	}
}

// countingConn records when each read from the master returned data.
type countingConn struct {
	net.Conn
	last *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// link is one connection's writing half, shared by the stream reader
// (GETACK) and the heartbeat.
type link struct {
	mu   sync.Mutex
	conn net.Conn
}

func (l *link) write(p []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.conn.Write(p)
	return err
}

func (r *Replica) session(ctx context.Context) error {
	r.setState(StateConnecting)
	d := net.Dialer{Timeout: r.cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", r.cfg.Addr)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.conn = conn
	r.mu.Unlock()
	defer func() {
		conn.Close()
		r.mu.Lock()
		r.conn = nil
		r.mu.Unlock()
	}()
	r.lastIO.Store(time.Now().UnixNano())
	br := bufio.NewReaderSize(countingConn{conn, &r.lastIO}, 64<<10)
	lk := &link{conn: conn}

	// The heartbeat: newlines while a snapshot loads (Redis's replicas
	// send them too), REPLCONF ACK once streaming, and the repl-timeout
	// watchdog throughout.
	streaming := make(chan struct{})
	hbDone := make(chan struct{})
	defer close(hbDone)
	go r.heartbeat(lk, streaming, hbDone)

	conn.SetDeadline(time.Now().Add(r.cfg.Timeout))
	if err := r.handshake(lk, br); err != nil {
		return err
	}
	r.mu.Lock()
	replid, psyncOff := r.st.ReplID, r.committed+1
	r.mu.Unlock()
	if replid == "" {
		replid, psyncOff = "?", -1
	}
	psync := []string{"PSYNC", replid, strconv.FormatInt(psyncOff, 10)}
	r.mu.Lock()
	if r.cfg.Failover {
		psync = append(psync, "FAILOVER")
		r.cfg.Failover = false // the first attempt only
	}
	r.mu.Unlock()
	if err := lk.write(command(psync...)); err != nil {
		return err
	}
	reply, err := readReply(br)
	if err != nil {
		return err
	}
	conn.SetDeadline(time.Time{}) // the watchdog takes over
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC"):
		f := strings.Fields(reply)
		if len(f) != 3 || len(f[1]) != markLen {
			return protoErr("bad +FULLRESYNC reply %q", reply)
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return protoErr("bad +FULLRESYNC reply %q", reply)
		}
		r.cfg.Logf("replica: full resync from master %s: replid %s offset %d", r.cfg.Addr, f[1], off)
		if br, err = r.fullSync(br, f[1], off); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		f := strings.Fields(reply)
		r.mu.Lock()
		r.st.PartialSyncs++
		old, off := r.st.ReplID, r.committed
		r.mu.Unlock()
		if len(f) == 2 && f[1] != old {
			if len(f[1]) != markLen {
				return protoErr("bad +CONTINUE reply %q", reply)
			}
			if err := r.app.ChangeReplID(f[1], off); err != nil {
				return err
			}
			r.mu.Lock()
			r.st.ReplID = f[1]
			r.mu.Unlock()
			r.cfg.Logf("replica: master replication ID changed to %s", f[1])
		}
		r.cfg.Logf("replica: partial resync with master %s from offset %d", r.cfg.Addr, psyncOff)
	case strings.HasPrefix(reply, "-"):
		return fmt.Errorf("repl: master refused PSYNC: %s", reply[1:])
	default:
		return protoErr("unexpected reply to PSYNC %q", reply)
	}
	r.setState(StateConnected)
	close(streaming)
	if err := lk.write(r.ackCommand()); err != nil {
		return err
	}
	return r.stream(lk, br)
}

// handshake: PING, AUTH, REPLCONF listening-port / ip-address / capa.
func (r *Replica) handshake(lk *link, br *bufio.Reader) error {
	if err := lk.write(command("PING")); err != nil {
		return err
	}
	reply, err := readReply(br)
	if err != nil {
		return err
	}
	// A master that wants AUTH answers PING with an error; AUTH follows.
	if reply[0] == '-' && !strings.HasPrefix(reply, "-NOAUTH") && !strings.HasPrefix(reply, "-NOPERM") &&
		!strings.HasPrefix(reply, "-ERR operation not permitted") {
		return fmt.Errorf("repl: master replied to PING: %s", reply[1:])
	}
	if r.cfg.Password != "" {
		args := []string{"AUTH", r.cfg.Password}
		if r.cfg.User != "" {
			args = []string{"AUTH", r.cfg.User, r.cfg.Password}
		}
		if err := lk.write(command(args...)); err != nil {
			return err
		}
		if reply, err = readReply(br); err != nil {
			return err
		}
		if reply[0] == '-' {
			return fmt.Errorf("repl: unable to AUTH to master: %s", reply[1:])
		}
	}
	confs := [][]string{{"REPLCONF", "listening-port", strconv.Itoa(r.cfg.ListeningPort)}}
	if r.cfg.AnnounceIP != "" {
		confs = append(confs, []string{"REPLCONF", "ip-address", r.cfg.AnnounceIP})
	}
	// capa persimmon-roaring: this replica loads TR.* bitmaps (Persimmon's
	// own RDB type); a Redis master ignores a capability it does not know.
	confs = append(confs, []string{"REPLCONF", "capa", "eof", "capa", "psync2", "capa", CapaRoaring})
	for _, c := range confs {
		if err := lk.write(command(c...)); err != nil {
			return err
		}
		if reply, err = readReply(br); err != nil {
			return err
		}
		if reply[0] == '-' {
			// As Redis: an old master that does not know an option is
			// not a reason to stop.
			r.cfg.Logf("replica: master does not understand %s %s: %s", c[0], c[1], reply[1:])
		}
	}
	return nil
}

// fullSync reads the snapshot payload that follows +FULLRESYNC into the
// applier and returns the reader the command stream continues on.
func (r *Replica) fullSync(br *bufio.Reader, replid string, off int64) (*bufio.Reader, error) {
	hdr, err := readReply(br)
	if err != nil {
		return nil, err
	}
	if hdr[0] == '-' {
		return nil, fmt.Errorf("repl: master aborted the transfer: %s", hdr[1:])
	}
	if hdr[0] != '$' {
		return nil, protoErr("bad payload header %q", hdr)
	}
	var src io.Reader
	var mr *markReader
	total := int64(-1)
	if mark, ok := strings.CutPrefix(hdr, "$EOF:"); ok {
		if len(mark) != markLen {
			return nil, protoErr("bad EOF mark %q", hdr)
		}
		mr = &markReader{br: br, mark: []byte(mark)}
		src = mr
	} else {
		total, err = strconv.ParseInt(hdr[1:], 10, 64)
		if err != nil || total < 0 {
			return nil, protoErr("bad payload length %q", hdr)
		}
		src = io.LimitReader(br, total)
	}
	if total < 0 {
		r.cfg.Logf("replica: receiving a disk-less snapshot (EOF mark)")
	} else {
		r.cfg.Logf("replica: receiving a snapshot of %d bytes", total)
	}
	r.mu.Lock()
	r.st.State, r.st.SyncTotal = StateSync, total
	r.mu.Unlock()
	r.syncRead.Store(0)
	src = &progressReader{r: src, n: &r.syncRead}

	loader, err := r.app.BeginSnapshot(replid, off)
	if err != nil {
		return nil, err
	}
	db, err := r.load(src, loader)
	if err == nil {
		// Whatever of the frame is left (nothing, from a sane master)
		// is read so the stream starts after it.
		_, err = io.Copy(io.Discard, src)
	}
	if err == nil {
		err = loader.Commit()
	} else {
		loader.Abort()
	}
	if err != nil {
		// The old position is gone with the old dataset's meaning only
		// if the loader committed; it did not, so keep it.
		return nil, fmt.Errorf("repl: loading the master's snapshot: %w", err)
	}
	r.mu.Lock()
	r.st.ReplID, r.st.Offset, r.st.FullSyncs = replid, off, r.st.FullSyncs+1
	r.committed, r.applied, r.db = off, off, db
	r.mu.Unlock()
	if mr != nil && len(mr.rest) > 0 {
		return bufio.NewReaderSize(io.MultiReader(bytes.NewReader(mr.rest), br), 64<<10), nil
	}
	return br, nil
}

// load decodes the snapshot into loader and returns the database the
// stream starts in (the RDB's repl-stream-db, else 0).
func (r *Replica) load(src io.Reader, loader SnapshotLoader) (int, error) {
	rd, err := rdb.NewReader(src)
	if err != nil {
		return 0, err
	}
	db := 0
	for {
		it, err := rd.Next()
		switch {
		case err == io.EOF:
			return db, nil
		case err != nil:
			return 0, err
		case it.Aux != nil:
			if it.Aux[0] == "repl-stream-db" {
				if n, err := strconv.Atoi(it.Aux[1]); err == nil && n >= 0 {
					db = n
				}
			}
		case it.Function != nil:
			err = loader.LoadFunction(it.Function)
		default:
			err = loader.Load(it.Entry)
		}
		if err != nil {
			return 0, err
		}
	}
}

type progressReader struct {
	r io.Reader
	n *atomic.Int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n.Add(int64(n))
	return n, err
}

// stream applies the command stream until the link fails.
func (r *Replica) stream(lk *link, br *bufio.Reader) error {
	cr := commandReader{br: br, keep: true}
	r.mu.Lock()
	off, db := r.committed, r.db
	r.mu.Unlock()
	u := &Unit{}
	inTx, txFrom := false, 0 // inside MULTI; u.Cmds[txFrom:] are its writes
	for {
		argv, size, err := cr.next()
		if err != nil {
			return err
		}
		off += size
		u.Raw = append(u.Raw, cr.raw...)
		name := ""
		if len(argv) > 0 {
			name = strings.ToUpper(string(argv[0]))
		}
		complete, getack := false, false
		switch {
		case len(argv) == 0: // a keep-alive newline
		case name == "SELECT" && len(argv) == 2:
			n, err := strconv.Atoi(string(argv[1]))
			if err != nil || n < 0 {
				return protoErr("bad SELECT %q", argv[1])
			}
			db = n
		case name == "PING":
		case name == "REPLCONF":
			getack = len(argv) >= 2 && strings.EqualFold(string(argv[1]), "GETACK")
		case name == "MULTI" && !inTx:
			inTx, txFrom = true, len(u.Cmds)
		case name == "EXEC" && inTx:
			inTx, complete = false, true
		case name == "DISCARD" && inTx:
			inTx, u.Cmds = false, u.Cmds[:txFrom]
		default:
			u.Cmds = append(u.Cmds, Command{DB: db, Argv: argv})
			complete = !inTx
		}
		// A unit goes to the applier when it holds a write or a whole
		// MULTI block, and link traffic alone when nothing more is
		// buffered or a GETACK wants the offset acknowledged.
		if inTx || !complete && !getack && br.Buffered() > 0 {
			r.processed(off)
			continue
		}
		u.Offset, u.DB = off, db
		if err := r.apply(u); err != nil {
			return err
		}
		u = &Unit{}
		if getack {
			if err := lk.write(r.ackCommand()); err != nil {
				return err
			}
		}
	}
}

// apply hands one unit to the applier; on failure the position stays
// where the unit began (it is asked again after reconnecting).
func (r *Replica) apply(u *Unit) error {
	if err := r.app.Apply(u); err != nil {
		before := u.Offset - int64(len(u.Raw))
		r.cfg.Logf("replica: applying the stream at offset %d failed: %v", before, err)
		return fmt.Errorf("repl: applying the stream at offset %d: %w", before, err)
	}
	r.mu.Lock()
	if len(u.Cmds) > 0 {
		r.applied = u.Offset
	}
	r.committed, r.db, r.st.Offset = u.Offset, u.DB, u.Offset
	r.mu.Unlock()
	return nil
}

// processed records how far the stream has been read.
func (r *Replica) processed(off int64) {
	r.mu.Lock()
	r.st.Offset = off
	r.mu.Unlock()
}

// ackOffset is the offset to acknowledge: everything processed when every
// applied unit is durable, else what the applier reports durable.
func (r *Replica) ackOffset() int64 {
	d := r.app.DurableOffset()
	r.mu.Lock()
	defer r.mu.Unlock()
	ack := r.committed
	if d < r.applied {
		ack = d
	}
	r.st.AckedOffset = ack
	return ack
}

func (r *Replica) ackCommand() []byte {
	return command("REPLCONF", "ACK", strconv.FormatInt(r.ackOffset(), 10))
}

func (r *Replica) heartbeat(lk *link, streaming, done <-chan struct{}) {
	t := time.NewTicker(r.cfg.AckPeriod)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, r.lastIO.Load())) > r.cfg.Timeout {
			r.cfg.Logf("replica: no data from master %s for %v: timeout", r.cfg.Addr, r.cfg.Timeout)
			lk.conn.Close()
			return
		}
		var err error
		select {
		case <-streaming:
			err = lk.write(r.ackCommand())
		default:
			if r.Status().State == StateSync {
				err = lk.write([]byte{'\n'})
			}
		}
		if err != nil {
			return
		}
	}
}

func (r *Replica) setState(s string) {
	r.mu.Lock()
	r.st.State = s
	if s == StateConnected {
		r.st.DownSince = time.Time{}
	}
	r.mu.Unlock()
}

package repl

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/rdb"
)

// Snapshotter is what a master serves full resyncs from; the server
// implements it.
type Snapshotter interface {
	// Snapshot opens a consistent view of every database. At the view's
	// instant, with no write applied or propagated, it calls at exactly
	// once (the Master reads its offset there), so the view holds every
	// write propagated before and none after: take the view and call at
	// under the lock writes hold while they apply and propagate.
	Snapshot(at func()) (Snapshot, error)
}

// Snapshot is a consistent view being written out.
type Snapshot interface {
	Functions() [][]byte       // function libraries' sources
	Next() (*rdb.Entry, error) // the next key; io.EOF after the last
	Close() error
}

// MasterConfig configures the master side.
type MasterConfig struct {
	BacklogSize int           // repl-backlog-size; DefaultBacklogSize when zero
	Diskless    bool          // repl-diskless-sync: stream snapshots to replicas that can take it
	TempDir     string        // where a disk-based snapshot is written ("" for os.TempDir)
	Timeout     time.Duration // repl-timeout: a replica silent this long is dropped; 60 s when zero
	PingPeriod  time.Duration // repl-ping-replica-period; 10 s when zero
	Aux         [][2]string   // extra AUX fields for snapshots (redis-ver, ...)
	// BufferLimit bounds the stream held for a replica while its
	// snapshot is made and sent (client-output-buffer-limit replica's hard
	// limit); past it the replica is dropped. 256 MB when zero.
	BufferLimit int
	Logf        func(format string, args ...any)
}

// SyncRequest is what a replica asked for on its connection: REPLCONF
// options, then PSYNC (or SYNC).
type SyncRequest struct {
	PSYNC         bool   // false: SYNC (no +FULLRESYNC line, always a full resync)
	ReplID        string // PSYNC's replid ("?" for a full resync)
	Offset        int64  // PSYNC's offset: the first byte wanted
	CapaEOF       bool   // REPLCONF capa eof: can take a disk-less transfer
	CapaPSYNC2    bool   // REPLCONF capa psync2: understands +CONTINUE <replid>
	ListeningPort int    // REPLCONF listening-port
	IP            string // REPLCONF ip-address, else the peer's address
	RDBOnly       bool   // REPLCONF rdb-only 1: the snapshot alone (redis-cli --rdb)
	CapaRoaring   bool   // REPLCONF capa persimmon-roaring: it loads TR.* bitmaps
	// Filtered: REPLCONF rdb-filter-only was given, so the snapshot holds
	// no keys, and its functions only if FilterFunctions (the filter
	// "functions": redis-cli --functions-rdb), as Redis 7.0's.
	Filtered, FilterFunctions bool
}

// CapaRoaring is the REPLCONF capa a Persimmon replica sends: it loads
// TR.* roaring bitmaps (rdb.TypeRoaring), which a snapshot leaves out
// for any other replica (redis-server refuses the type, and so would
// redis-check-rdb a file of redis-cli --rdb).
const CapaRoaring = "persimmon-roaring"

// ReplicaInfo is one attached replica, for INFO (slaveN) and ROLE.
type ReplicaInfo struct {
	IP      string
	Port    int
	State   string // wait_bgsave, send_bulk, online
	Offset  int64  // acknowledged offset
	LastAck time.Time
}

// Master is the master side: the command stream (Propagate), its
// backlog, the replication IDs, and the replica links it serves. Safe
// for concurrent use.
type Master struct {
	cfg  MasterConfig
	data Snapshotter

	mu       sync.Mutex
	ids      ReplIDs
	backlog  *Backlog
	feed     Feed
	wake     chan struct{} // closed and replaced at every append
	ackWake  chan struct{} // closed and replaced at every ACK
	links    map[*replicaLink]struct{}
	stats    MasterStats
	lastPing time.Time
	scratch  []byte // Propagate's encoding buffer
	seq      uint64
	// active: a replica has attached (or the stream is relayed), so the
	// stream is recorded. Before, as in Redis (no backlog until the first
	// replica), writes leave the offset at its start.
	active bool
	// streaming mirrors active for readers without mu (Streaming).
	streaming atomic.Bool
	// relay: the stream is another master's (FeedRaw), so this one adds
	// nothing of its own to it (no PING, no GETACK), as a Redis replica
	// only proxies its master's stream; Promote ends it.
	relay bool
	// quiet: the master is shutting down (Drain): no PING or GETACK.
	quiet bool
}

// MasterStats counts resyncs (INFO stats sync_full, sync_partial_ok,
// sync_partial_err).
type MasterStats struct {
	FullSyncs, PartialOK, PartialErr int64
}

type replicaLink struct {
	seq     uint64 // attach order, for INFO's slaveN
	conn    net.Conn
	ip      string
	port    int
	state   atomic.Value // string
	ack     atomic.Int64
	ackTime atomic.Int64  // unix nanoseconds
	acked   chan struct{} // closed at the first ACK
	once    sync.Once

	// While its snapshot is made and sent, a replica's stream is held
	// here rather than read from the backlog, which may wrap meanwhile.
	// Guarded by Master.mu.
	capture  bool
	pending  []byte
	overflow bool
	// dropAt: the link is being dropped once it has sent the stream up
	// to this offset (dropLocked's flush); 0 while it is not.
	dropAt int64
}

// NewMaster returns a master whose stream is at offset under ids (a
// restarted master's stored ones, or NewReplIDs and 0).
func NewMaster(cfg MasterConfig, ids ReplIDs, offset int64, data Snapshotter) *Master {
	if cfg.BacklogSize == 0 {
		cfg.BacklogSize = DefaultBacklogSize
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.PingPeriod == 0 {
		cfg.PingPeriod = 10 * time.Second
	}
	if cfg.BufferLimit == 0 {
		cfg.BufferLimit = 256 << 20
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Master{cfg: cfg, data: data, ids: ids, backlog: NewBacklog(cfg.BacklogSize, offset),
		wake: make(chan struct{}), ackWake: make(chan struct{}), links: map[*replicaLink]struct{}{}}
}

// Streaming reports, without taking the master's lock, whether writes are
// recorded (a replica attached or the stream is relayed). Before that,
// Propagate drops them, so a caller may skip preparing what it would
// propagate.
func (m *Master) Streaming() bool { return m.streaming.Load() }

// Propagate appends a write run in database db to the stream. Call it in
// the order writes apply (under the same lock), for the writes of a
// MULTI/EXEC block between MULTI and EXEC. Until a replica first attaches
// it records nothing (the offset stays where it started), as Redis does
// before it has a backlog; while the stream is relayed (FeedRaw, until
// Promote) it records nothing either: a replica's own changes (a key it
// expired) must not shift its master's offsets.
func (m *Master) Propagate(db int, argv ...[]byte) {
	m.mu.Lock()
	if !m.active || m.relay { // a relaying master adds nothing of its own
		m.mu.Unlock()
		return
	}
	m.scratch = m.feed.Append(m.scratch[:0], db, argv...)
	m.appendLocked(m.scratch)
	m.mu.Unlock()
}

func (m *Master) appendLocked(p []byte) {
	m.backlog.Append(p)
	for l := range m.links {
		if !l.capture {
			continue
		}
		if len(l.pending)+len(p) > m.cfg.BufferLimit {
			m.cfg.Logf("master: replica %s:%d dropped: more than %d bytes of stream held during its resync", l.ip, l.port, m.cfg.BufferLimit)
			l.capture, l.pending, l.overflow = false, nil, true
			l.conn.Close()
			continue
		}
		l.pending = append(l.pending, p...)
	}
	close(m.wake)
	m.wake = make(chan struct{})
}

// Offset is the stream's offset (master_repl_offset).
func (m *Master) Offset() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backlog.Offset()
}

// IDs returns the replication IDs.
func (m *Master) IDs() ReplIDs {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids
}

// BacklogInfo returns the backlog's first byte, length and size, for INFO.
func (m *Master) BacklogInfo() (first, histlen int64, size int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backlog.FirstByte(), m.backlog.Histlen(), m.backlog.Size()
}

// Stats returns the resync counters.
func (m *Master) Stats() MasterStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// Replicas lists the attached replicas.
func (m *Master) Replicas() []ReplicaInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	links := make([]*replicaLink, 0, len(m.links))
	for l := range m.links {
		links = append(links, l)
	}
	slices.SortFunc(links, func(a, b *replicaLink) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]ReplicaInfo, len(links))
	for i, l := range links {
		out[i] = ReplicaInfo{IP: l.ip, Port: l.port, State: l.state.Load().(string),
			Offset: l.ack.Load(), LastAck: time.Unix(0, l.ackTime.Load())}
	}
	return out
}

// Acked is how many online replicas acknowledged offset or more.
func (m *Master) Acked(offset int64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for l := range m.links {
		if l.state.Load() == "online" && l.ack.Load() >= offset {
			n++
		}
	}
	return n
}

// WaitAcked waits until n replicas acknowledged offset or ctx is done,
// and returns how many did (WAIT's reply). Unless enough already have, it
// asks them for an ACK (REPLCONF GETACK) first.
func (m *Master) WaitAcked(ctx context.Context, n int, offset int64) int {
	if got := m.Acked(offset); got >= n {
		return got
	}
	m.GetAck()
	for {
		m.mu.Lock()
		w := m.ackWake
		m.mu.Unlock()
		got := m.Acked(offset)
		if got >= n {
			return got
		}
		select {
		case <-ctx.Done():
			return m.Acked(offset)
		case <-w:
		}
	}
}

// Drain is a master's last exchange with its replicas before it shuts
// down: it puts REPLCONF GETACK * into the stream and from then on adds
// no link traffic of its own (no PING, no GETACK: the stream's offset
// moves only with writes), then waits until every online replica
// acknowledged the whole stream (a replica whose link ends stops
// counting) or ctx is done. It returns how many online replicas
// acknowledged it, how many there are, and the stream's offset waited for.
func (m *Master) Drain(ctx context.Context) (acked, online int, offset int64) {
	m.mu.Lock()
	if len(m.links) > 0 && !m.relay {
		m.appendLocked(command("REPLCONF", "GETACK", "*"))
	}
	m.quiet = true
	m.mu.Unlock()
	for {
		m.mu.Lock()
		w := m.ackWake
		offset = m.backlog.Offset()
		acked, online = 0, 0
		for l := range m.links {
			if l.state.Load() == "online" {
				online++
				if l.ack.Load() >= offset {
					acked++
				}
			}
		}
		m.mu.Unlock()
		if acked == online {
			return acked, online, offset
		}
		select {
		case <-ctx.Done():
			return acked, online, offset
		case <-w:
		}
	}
}

// GetAck puts REPLCONF GETACK * into the stream when replicas are attached.
func (m *Master) GetAck() {
	m.mu.Lock()
	if len(m.links) > 0 && !m.relay && !m.quiet {
		m.appendLocked(command("REPLCONF", "GETACK", "*"))
	}
	m.mu.Unlock()
}

// Cron does the periodic work; call it about once a second: a PING into
// the stream every PingPeriod while replicas are attached and the stream
// is this master's own (it moves the offset, as Redis's does), and the
// drop of replicas silent for Timeout.
func (m *Master) Cron(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.links) > 0 && !m.relay && !m.quiet && now.Sub(m.lastPing) >= m.cfg.PingPeriod {
		m.appendLocked(command("PING"))
		m.lastPing = now
	}
	for l := range m.links {
		if l.state.Load() == "online" && now.Sub(time.Unix(0, l.ackTime.Load())) > m.cfg.Timeout {
			m.cfg.Logf("master: replica %s:%d timed out", l.ip, l.port)
			l.conn.Close()
		}
	}
}

// SetPingPeriod changes how often Cron puts a PING into the stream
// (repl-ping-replica-period, CONFIG SET); d <= 0 is ignored.
func (m *Master) SetPingPeriod(d time.Duration) {
	if d <= 0 {
		return
	}
	m.mu.Lock()
	m.cfg.PingPeriod = d
	m.mu.Unlock()
}

// SetTimeout changes how long Cron lets an online replica stay silent
// before it drops the link (repl-timeout, CONFIG SET); d <= 0 is ignored.
func (m *Master) SetTimeout(d time.Duration) {
	if d <= 0 {
		return
	}
	m.mu.Lock()
	m.cfg.Timeout = d
	m.mu.Unlock()
}

// DropReplicas closes every replica link (their replicas come back with
// PSYNC).
func (m *Master) DropReplicas() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropLocked()
}

// FeedRaw appends bytes of another master's stream, as a replica
// received them (Unit.Raw), so this master's offsets stay that master's:
// what a replica relays to its own replicas, and serves PSYNC from after
// a promotion; db is the database selected after p (Unit.DB). Call it in
// the order units apply, under the same lock.
func (m *Master) FeedRaw(p []byte, db int) {
	m.mu.Lock()
	m.active, m.relay = true, true
	m.streaming.Store(true)
	m.appendLocked(p)
	m.feed.Relayed(db) // the relayed stream's database: a sub-replica's full resync starts there
	m.mu.Unlock()
}

// ResetHistory starts the history a full resync from the master loaded:
// replid at offset, no ID2, an empty backlog; replicas of this one are
// dropped so they resync from the new history.
func (m *Master) ResetHistory(replid string, offset int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids = ReplIDs{ID: replid, ID2: NoReplID, Offset2: -1}
	m.backlog = NewBacklog(m.cfg.BacklogSize, offset)
	m.active, m.relay = true, true
	m.streaming.Store(true)
	m.feed.Reset()
	m.dropLocked()
}

// Restore continues the history of a dataset that is exactly history
// replid up to offset (a master restarted after a clean shutdown, or a
// replica started without its master), as Redis 7.0 does after loading an
// RDB holding repl-id and repl-offset as a master: a new ID, the stored one
// valid as ID2 up to offset+1, the stream going on from offset with an
// empty backlog, so a replica that had the whole stream resumes with
// +CONTINUE. The stream is recorded from now on (not only once a replica
// attaches): a write made before the replicas return must reach them.
func (m *Master) Restore(replid string, offset int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids = ReplIDs{ID: NewReplID(), ID2: replid, Offset2: offset + 1}
	m.backlog = NewBacklog(m.cfg.BacklogSize, offset)
	m.active, m.relay = true, false
	m.streaming.Store(true)
	m.feed.Reset()
}

// Relaying reports whether the stream is another master's (FeedRaw,
// until Promote).
func (m *Master) Relaying() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.relay
}

// ChangeID follows the master's new replication ID (a +CONTINUE that
// names one): the old ID stays valid as ID2 up to offset+1, and replicas
// of this one are dropped to learn the new ID.
func (m *Master) ChangeID(replid string, offset int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids.ID2, m.ids.Offset2, m.ids.ID = m.ids.ID, offset+1, replid
	m.dropLocked()
}

func (m *Master) dropLocked() {
	for l := range m.links {
		l.conn.Close()
	}
}

// Position is where this master's stream is: its replication ID, its
// offset and the database selected there (0 when the stream has not
// selected one since it was reset: its next write then selects). A
// server that becomes a replica asks its new master for what follows
// (PSYNC ID offset+1), as Redis 7.0 does from its own history.
func (m *Master) Position() (replid string, offset int64, db int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	db, _ = m.feed.DB()
	return m.ids.ID, m.backlog.Offset(), db
}

// BeginRelay is REPLICAOF host port: from now on the stream is the new
// master's (FeedRaw), so this one adds nothing of its own (no PING, no
// GETACK, no Propagate); its replicas are dropped and come back to follow
// the new history, each once it has been sent what this master streamed
// so far (as Redis's replicas have: it writes their output before it
// reads the next command).
func (m *Master) BeginRelay() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.relay = true
	m.flushAndDropLocked()
}

// flushAndDropLocked drops every replica link once it has written the
// stream up to the current offset (after its snapshot, for a link still
// sending one: the stream it holds starts at the snapshot's instant); the
// writes get dropWriteTimeout to finish.
func (m *Master) flushAndDropLocked() {
	end := m.backlog.Offset()
	for l := range m.links {
		l.dropAt = max(end, 1)
		l.conn.SetWriteDeadline(time.Now().Add(dropWriteTimeout))
		l.once.Do(func() { close(l.acked) })
	}
	close(m.wake)
	m.wake = make(chan struct{})
}

// dropWriteTimeout bounds the last write to a replica being dropped.
const dropWriteTimeout = time.Second

// errLinkDropped ends a link flushAndDropLocked dropped.
var errLinkDropped = errors.New("repl: replica link dropped (the master became a replica)")

// Promote is REPLICAOF NO ONE on the replica this master's stream
// continues: the old history becomes ID2 (see ReplIDs.Shift).
func (m *Master) Promote() {
	m.mu.Lock()
	m.ids.Shift(m.backlog.Offset())
	m.feed.Reset()
	m.relay = false
	m.mu.Unlock()
}

// Serve runs a replica link on conn after the replica's PSYNC or SYNC:
// it replies, sends a snapshot when needed, then the stream, and reads
// ACKs from br (the connection's reader, holding whatever the replica
// sent after PSYNC) until the link fails. It closes conn.
func (m *Master) Serve(conn net.Conn, br *bufio.Reader, req SyncRequest) error {
	defer conn.Close()
	l := &replicaLink{conn: conn, ip: req.IP, port: req.ListeningPort, acked: make(chan struct{})}
	if l.ip == "" {
		if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
			l.ip = a.IP.String()
		}
	}
	l.ackTime.Store(time.Now().UnixNano())
	name := fmt.Sprintf("%s:%d", l.ip, l.port)

	m.mu.Lock()
	m.active = true
	m.streaming.Store(true)
	m.seq++
	l.seq = m.seq
	partial, why := false, "SYNC"
	if req.PSYNC && !req.RDBOnly {
		partial, why = DecidePSYNC(m.ids, m.backlog, req.ReplID, req.Offset)
	}
	if partial {
		l.state.Store("online")
		l.ack.Store(req.Offset - 1)
		m.links[l] = struct{}{}
		m.stats.PartialOK++
		reply := "+CONTINUE\r\n"
		if req.CapaPSYNC2 {
			reply = "+CONTINUE " + m.ids.ID + "\r\n"
		}
		m.mu.Unlock()
		m.cfg.Logf("master: partial resync of replica %s accepted from offset %d", name, req.Offset)
		defer m.unlink(l)
		if _, err := io.WriteString(conn, reply); err != nil {
			return err
		}
		l.once.Do(func() { close(l.acked) })
		return m.stream(l, br, req.Offset)
	}
	if req.PSYNC && req.ReplID != "?" {
		m.stats.PartialErr++
	}
	m.stats.FullSyncs++
	m.mu.Unlock()
	m.cfg.Logf("master: full resync of replica %s: %s", name, why)

	var start int64
	var streamDB int
	var ids ReplIDs
	snap, err := m.data.Snapshot(func() {
		m.mu.Lock()
		start, ids = m.backlog.Offset(), m.ids
		streamDB, _ = m.feed.DB()
		m.feed.Reset()
		l.state.Store("wait_bgsave")
		if !req.RDBOnly {
			l.capture = true
			m.links[l] = struct{}{}
		}
		m.mu.Unlock()
	})
	if err != nil {
		return err
	}
	defer m.unlink(l)
	aux := append(append([][2]string(nil), m.cfg.Aux...),
		[2]string{"repl-stream-db", strconv.Itoa(streamDB)},
		[2]string{"repl-id", ids.ID},
		[2]string{"repl-offset", strconv.FormatInt(start, 10)})
	if req.PSYNC {
		if _, err := fmt.Fprintf(conn, "+FULLRESYNC %s %d\r\n", ids.ID, start); err != nil {
			snap.Close()
			return err
		}
	}
	diskless := m.cfg.Diskless && req.CapaEOF
	if !req.CapaRoaring {
		snap = &withoutRoaring{Snapshot: snap, logf: m.cfg.Logf, name: name}
	}
	if req.Filtered {
		snap = &filteredSnapshot{Snapshot: snap, functions: req.FilterFunctions}
	}
	if err := m.sendSnapshot(l, snap, aux, diskless); err != nil {
		return err
	}
	if req.RDBOnly {
		return nil
	}
	l.state.Store("online")
	l.ack.Store(start)
	if !diskless {
		l.once.Do(func() { close(l.acked) })
	}
	return m.stream(l, br, start+1)
}

// withoutRoaring leaves the TR.* bitmaps out of a snapshot for a replica
// that did not say it loads them (CapaRoaring).
type withoutRoaring struct {
	Snapshot
	logf    func(string, ...any)
	name    string
	skipped int
}

func (w *withoutRoaring) Next() (*rdb.Entry, error) {
	for {
		e, err := w.Snapshot.Next()
		if err != nil || e.Value.Kind != rdb.KindRoaring {
			if err == io.EOF && w.skipped > 0 {
				w.logf("master: %d TR.* bitmaps left out of the snapshot for %s (no capa %s)", w.skipped, w.name, CapaRoaring)
			}
			return e, err
		}
		w.skipped++
	}
}

// filteredSnapshot is a snapshot under REPLCONF rdb-filter-only: no keys,
// and the function libraries only if the filter names them.
type filteredSnapshot struct {
	Snapshot
	functions bool
}

func (f *filteredSnapshot) Functions() [][]byte {
	if !f.functions {
		return nil
	}
	return f.Snapshot.Functions()
}

func (f *filteredSnapshot) Next() (*rdb.Entry, error) { return nil, io.EOF }

// sendSnapshot writes the payload: disk-less as $EOF:<mark>, else
// through a temporary file as $<len>.
func (m *Master) sendSnapshot(l *replicaLink, snap Snapshot, aux [][2]string, diskless bool) error {
	defer snap.Close()
	l.state.Store("send_bulk")
	if diskless {
		mark := NewReplID()
		bw := bufio.NewWriterSize(l.conn, 64<<10)
		bw.WriteString("$EOF:" + mark + "\r\n")
		if err := bw.Flush(); err != nil { // the replica sees the transfer start
			return err
		}
		if err := writeRDB(bw, snap, aux); err != nil {
			return err
		}
		bw.WriteString(mark)
		return bw.Flush()
	}
	f, err := os.CreateTemp(m.cfg.TempDir, "persimmon-sync-*.rdb")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	// A newline a second keeps the replica from timing out while the
	// file is written, as Redis's master does during its BGSAVE.
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				l.conn.Write([]byte{'\n'})
			}
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	err = writeRDB(bw, snap, aux)
	if err == nil {
		err = bw.Flush()
	}
	close(stop)
	<-stopped
	if err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(l.conn, "$%d\r\n", size); err != nil {
		return err
	}
	_, err = io.Copy(l.conn, f)
	return err
}

func writeRDB(w io.Writer, snap Snapshot, aux [][2]string) error {
	rw := rdb.NewWriter(w, aux)
	for _, code := range snap.Functions() {
		if err := rw.WriteFunction(code); err != nil {
			return err
		}
	}
	for {
		e, err := snap.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := rw.WriteEntry(e); err != nil {
			return err
		}
	}
	return rw.Close()
}

func (m *Master) unlink(l *replicaLink) {
	m.mu.Lock()
	delete(m.links, l)
	close(m.ackWake) // WaitAllAcked counts one replica fewer
	m.ackWake = make(chan struct{})
	m.mu.Unlock()
	l.conn.Close()
}

// stream sends the stream from byte from on, and reads ACKs, until the
// link fails or the replica falls out of the backlog.
func (m *Master) stream(l *replicaLink, br *bufio.Reader, from int64) error {
	readErr := make(chan error, 1)
	go func() { readErr <- m.readAcks(l, br) }()
	select {
	case <-l.acked:
	case err := <-readErr:
		return err
	}
	buf := make([]byte, 64<<10)
	pos := from
	for {
		m.mu.Lock()
		if l.overflow {
			m.mu.Unlock()
			return fmt.Errorf("repl: replica %s:%d: resync buffer limit reached", l.ip, l.port)
		}
		if l.capture {
			p := l.pending
			l.pending = nil
			if len(p) == 0 {
				l.capture = false // pos is the backlog's next byte now
			}
			if l.dropAt > 0 && int64(len(p)) > l.dropAt-pos+1 {
				p = p[:max(l.dropAt-pos+1, 0)] // not what was relayed after the drop
			}
			m.mu.Unlock()
			if len(p) > 0 {
				if _, err := l.conn.Write(p); err != nil {
					return err
				}
				pos += int64(len(p))
			}
			continue
		}
		if l.dropAt > 0 && pos > l.dropAt {
			m.mu.Unlock()
			return errLinkDropped // everything up to the drop is sent
		}
		for pos > m.backlog.Offset() {
			if l.dropAt > 0 {
				m.mu.Unlock()
				return errLinkDropped
			}
			w := m.wake
			m.mu.Unlock()
			select {
			case <-w:
			case err := <-readErr:
				return err
			}
			m.mu.Lock()
		}
		if pos < m.backlog.FirstByte() {
			m.mu.Unlock()
			return fmt.Errorf("repl: replica %s:%d fell behind the backlog (needs byte %d)", l.ip, l.port, pos)
		}
		lim := buf
		if l.dropAt > 0 && l.dropAt-pos+1 < int64(len(lim)) {
			lim = lim[:l.dropAt-pos+1] // not what was relayed after the drop
		}
		n := m.backlog.Copy(lim, pos)
		m.mu.Unlock()
		if _, err := l.conn.Write(buf[:n]); err != nil {
			return err
		}
		pos += int64(n)
	}
}

// readAcks reads what a replica sends on its link: REPLCONF ACK <offset>
// (and newlines while it loads).
func (m *Master) readAcks(l *replicaLink, br *bufio.Reader) error {
	cr := commandReader{br: br, maxBulk: 1 << 10}
	for {
		argv, _, err := cr.next()
		if err != nil {
			l.conn.Close()
			return err
		}
		if len(argv) >= 3 && strings.EqualFold(string(argv[0]), "REPLCONF") && strings.EqualFold(string(argv[1]), "ACK") {
			off, err := strconv.ParseInt(string(argv[2]), 10, 64)
			if err != nil {
				continue
			}
			if off > l.ack.Load() {
				l.ack.Store(off)
			}
			l.ackTime.Store(time.Now().UnixNano())
			l.once.Do(func() { close(l.acked) })
			m.mu.Lock()
			close(m.ackWake)
			m.ackWake = make(chan struct{})
			m.mu.Unlock()
		}
	}
}

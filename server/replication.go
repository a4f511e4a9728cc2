package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/persimmon-db/persimmon/evloop"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/rdb"
	"github.com/persimmon-db/persimmon/repl"
)

// Persimmon as a replication master (package repl does the protocol):
// REPLCONF and PSYNC/SYNC hand a connection to repl.Master.Serve, every
// write that succeeds is propagated into the command stream under the
// keyspace lock it applied under (grouped as Redis 7.0 groups them:
// propagate.go), and a full resync's snapshot is read under that lock,
// at one instant with the stream's offset.
//
// Writes reach the stream as their effects (replication_effects.go). A
// master stores its replication ID and offset at a clean shutdown and
// continues that history after the restart (replica.go:
// storeMasterPosition, resumeReplication); a replica stores its position
// with every unit it applies.
//
// Limits, each a known gap:
//   - a write reaches the stream when it applies, before it is durable;
//   - TR.* roaring bitmaps reach only Persimmon replicas' snapshots
//     (repl.CapaRoaring; Redis has no type for them), and their writes
//     go to every replica's stream (a redis-server replica refuses them);
//   - a snapshot holds the keyspace lock a chunk of keys at a time, but a
//     FLUSHDB, FLUSHALL or SWAPDB during it copies what is left of its
//     databases in one hold (Redis's fork copies nothing);
//   - after kill -9 a master starts a new history (its replicas resync
//     fully), as Redis 7.0 with AOF does.

// DumpValueFunc reads one key as an rdb.Value (ok false when missing);
// package commands provides it (commands.DumpValue).
type DumpValueFunc func(ks *keyspace.Keyspace, db int, key []byte) (rdb.Value, bool, error)

func (s *Server) initReplication() {
	// repl-backlog-size and repl-diskless-sync as configured at start-up.
	backlog, _ := s.ConfigValue("repl-backlog-size")
	size, _ := strconv.Atoi(backlog)
	diskless, _ := s.ConfigValue("repl-diskless-sync")
	s.master = repl.NewMaster(repl.MasterConfig{BacklogSize: size, Diskless: diskless != "no", TempDir: s.cfg.Dir, Logf: s.logf,
		PingPeriod: s.configSeconds("repl-ping-replica-period"), Timeout: s.configSeconds("repl-timeout")},
		repl.NewReplIDs(), 0, serverSnapshotter{s})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.closing:
				s.master.DropReplicas()
				return
			case now := <-t.C:
				s.master.Cron(now)
			}
		}
	}()
}

// configSeconds reads an integer parameter in seconds (0 when unset).
func (s *Server) configSeconds(name string) time.Duration {
	v, _ := s.ConfigValue(name)
	n, _ := strconv.Atoi(v)
	return time.Duration(n) * time.Second
}

type serverSnapshotter struct{ s *Server }

// liveSnapshot is a full resync's view of every database at one instant
// T (the stream's offset read there), read while writes go on, as
// Redis's fork gives its child a copy-on-write view: at T, under the
// keyspace lock, it starts a keyspace.KeyCursor and installs the
// keyspace's BeforeWrite hook; then Next copies the keys the cursor gives,
// snapChunk at a time, each chunk under the lock. A write to a key the
// copy has not reached yet first copies the key's state before it (the
// hook runs before the write applies, and Claim tells it the key is not
// copied yet); a key made since T is claimed the same way and copies
// nothing (it is missing before the write). FLUSHDB, FLUSHALL and SWAPDB
// first copy all that is left of their databases (Drain). So every key of
// T is copied exactly once, as it was at T, and every write after T
// reaches the replica through the stream. The lock is held for a chunk at
// a time (and for a Drain), never for the whole copy.
type liveSnapshot struct {
	s     *Server
	funcs [][]byte
	// guarded by the keyspace lock:
	cur           *keyspace.KeyCursor // nil once closed
	ready         []rdb.Entry         // copied, not yet handed out
	out           []rdb.Entry         // handed out by Next, one chunk at a time
	copied, early int                 // keys copied, of which by the hook
	chunks        int                 // chunks copied by Next
	held, maxHeld time.Duration       // Next's holds of the lock: total, longest
	startHeld     time.Duration       // starting the cursor at the instant
}

// snapChunk is how many keys one hold of the lock copies.
const snapChunk = 128

// Snapshot starts the view at the instant at() reads the stream's offset
// (see liveSnapshot).
func (ss serverSnapshotter) Snapshot(at func()) (repl.Snapshot, error) {
	s := ss.s
	ls := &liveSnapshot{s: s}
	s.env.lock()
	defer s.env.unlock()
	at()
	ks := s.ks
	if ks == nil || s.cfg.DumpValue == nil {
		return ls, nil // an empty view
	}
	for _, code := range ks.Functions() {
		ls.funcs = append(ls.funcs, bytes.Clone(code))
	}
	start := time.Now()
	ls.cur = ks.NewKeyCursor()
	ls.startHeld = time.Since(start)
	s.addSnapshot(ls)
	return ls, nil
}

// addSnapshot registers a snapshot being read, for the keyspace's
// BeforeWrite hook (several replicas may resync at once); under the lock.
func (s *Server) addSnapshot(ls *liveSnapshot) {
	if s.replica.snaps == nil {
		s.replica.snaps = map[*liveSnapshot]struct{}{}
	}
	s.replica.snaps[ls] = struct{}{}
	if len(s.replica.snaps) == 1 {
		s.ks.BeforeWrite(func(db int, key []byte) {
			for x := range s.replica.snaps {
				x.beforeWrite(db, key)
			}
		})
	}
}

// dropSnapshot is addSnapshot's reverse; under the lock.
func (s *Server) dropSnapshot(ls *liveSnapshot) {
	delete(s.replica.snaps, ls)
	if len(s.replica.snaps) == 0 && s.ks != nil {
		s.ks.BeforeWrite(nil)
	}
}

// copyKey copies key of db as it is now into ready (under the lock); a
// key that is gone (deleted or expired since T, or made after it) adds
// nothing.
func (ls *liveSnapshot) copyKey(db int, key []byte) {
	ks := ls.s.ks
	v, ok, err := ls.s.cfg.DumpValue(ks, db, key)
	if err != nil || !ok {
		return
	}
	k := bytes.Clone(key)
	e := rdb.Entry{DB: db, Key: k, Value: cloneValue(v), Idle: -1, Freq: -1}
	if ms, ok := ks.ExpireAt(db, k); ok {
		e.ExpireAtMs = ms
	}
	ls.ready = append(ls.ready, e)
	ls.copied++
}

// copyString copies a plain string the cursor read (its key and value in
// one allocation) into ready.
func (ls *liveSnapshot) copyString(db int, key, val []byte, expireAt int64) {
	b := make([]byte, len(key)+len(val))
	copy(b, key)
	copy(b[len(key):], val)
	ls.ready = append(ls.ready, rdb.Entry{DB: db, Key: b[:len(key):len(key)], Value: rdb.Value{Kind: rdb.KindString, Str: b[len(key):]},
		ExpireAtMs: expireAt, Idle: -1, Freq: -1})
	ls.copied++
}

// beforeWrite is the keyspace's BeforeWrite hook while the snapshot is
// read: key's state at T is copied before its first change (key nil: the
// whole database's, or every database's for keyspace.AllDBs).
func (ls *liveSnapshot) beforeWrite(db int, key []byte) {
	if ls.cur == nil {
		return
	}
	before := ls.copied
	if key == nil {
		ls.cur.Drain(db, ls.copyKey)
	} else if ls.cur.Claim(db, key) {
		ls.copyKey(db, key)
	}
	ls.early += ls.copied - before
}

func (ls *liveSnapshot) Functions() [][]byte { return ls.funcs }

// Next hands out the copied keys, copying the next chunk under the lock
// when none is left.
func (ls *liveSnapshot) Next() (*rdb.Entry, error) {
	for len(ls.out) == 0 {
		env := &ls.s.env
		env.lock()
		more := false
		if ls.cur != nil {
			start := time.Now()
			more = ls.cur.NextStrings(snapChunk, ls.copyString, ls.copyKey)
			d := time.Since(start)
			ls.chunks++
			ls.held += d
			ls.maxHeld = max(ls.maxHeld, d)
			if !more {
				ls.finishLocked()
			}
		}
		ls.out, ls.ready = ls.ready, nil
		env.unlock()
		// A write waiting for the lock takes it before the next chunk
		// does (the mutex lets the unlocking goroutine take it back).
		runtime.Gosched()
		if len(ls.out) == 0 && !more {
			return nil, io.EOF
		}
	}
	e := &ls.out[0]
	ls.out = ls.out[1:]
	return e, nil
}

func (ls *liveSnapshot) finishLocked() {
	if ls.cur == nil {
		return
	}
	c := ls.cur
	ls.cur = nil
	ls.s.dropSnapshot(ls)
	ls.s.replica.snapCopiedEarly.Add(int64(ls.early))
	mean := time.Duration(0)
	if ls.chunks > 0 {
		mean = ls.held / time.Duration(ls.chunks)
	}
	ls.s.logf("replication: snapshot: %d keys, %d of them copied before a write changed them; %d entries looked at, %d table walks started over; %d chunks held the lock %v in all, %v each on average, %v at most; the start %v; %d index keys given from the notes of a checkpoint, %d staged keys listed after the table walk",
		ls.copied, ls.early, c.Examined, c.Restarts, ls.chunks, ls.held.Round(time.Millisecond), mean.Round(time.Microsecond), ls.maxHeld.Round(time.Microsecond), ls.startHeld.Round(time.Microsecond), c.Placed, c.Staged)
	c.Close()
}

// Close ends the view (the hook is removed).
func (ls *liveSnapshot) Close() error {
	ls.s.env.lock()
	ls.finishLocked()
	ls.ready, ls.out = nil, nil
	ls.s.env.unlock()
	return nil
}

func cloneValue(v rdb.Value) rdb.Value {
	v.Str = bytes.Clone(v.Str)
	items := make([][]byte, len(v.Items))
	for i, x := range v.Items {
		items[i] = bytes.Clone(x)
	}
	v.Items = items
	if v.Stream != nil {
		v.Stream = v.Stream.Clone()
	}
	return v
}

// feed propagates a write that ran on c (under the keyspace lock) if it
// succeeded and changed something (the log's last LSN moved past before,
// read just before it ran), as its effects, into the open propagation
// unit, or as a unit of its own (propagate.go). PFCOUNT is a read that
// may write (Redis's may_replicate): it goes when it stored the
// cardinality it computed.
func (c *conn) feed(cmd *Command, args [][]byte, start int, before uint64) {
	m := c.srv.master
	if m == nil || !m.Streaming() {
		// no replica yet: nothing to rewrite or record (EXPIRE's
		// read-back and Propagate's lock stay off the write path)
		return
	}
	forced := alwaysPropagated(cmd)
	if !forced && (cmd.Flags&FlagWrite == 0 && cmd.Name != "pfcount" || c.srv.env.lastLSN() == before) ||
		len(c.Out) > start && c.Out[start] == '-' && cmd.Name != "migrate" {
		return // a read, a write that changed nothing, or an error
	}
	s := c.srv
	reply := c.Out[min(start, len(c.Out)):]
	if effs, ok := c.claimEffects(cmd.Name, args, reply); ok {
		s.propBegin()
		for _, e := range effs {
			s.alsoPropagate(c.DB, e...)
		}
		s.propEnd(c)
		return
	}
	if cmd.Name == "migrate" {
		if args = c.migrateEffect(args); args == nil {
			return // COPY, or nothing moved (migrate.go)
		}
	} else if name := cmd.Name; name == "spop" {
		effs := c.spopEffects(args, reply)
		s.propBegin()
		for _, e := range effs {
			s.alsoPropagate(c.DB, e...)
		}
		s.propEnd(c)
		return
	} else if eff, rewritten := c.effect(name, args, reply); rewritten {
		if eff == nil {
			return // it changed nothing (or blocked: nothing happened yet)
		}
		args = eff
	}
	s.propBegin()
	s.alsoPropagate(c.DB, args...)
	if len(args) == 5 && string(args[0]) == "SET" && string(args[3]) == "PXAT" {
		if _, ok := c.KS.ExpireAt(c.DB, args[1]); !ok {
			// set with a time already past, the key is gone here: a
			// replica drops it too (Redis's DEL when the key is next
			// looked up)
			s.alsoPropagate(c.DB, s.expireDel(), args[1])
		}
	}
	s.propEnd(c)
}

// expireEffect rewrites an expiry into the absolute time it set, as Redis
// 7.0 propagates them (expire.c, t_string.c): EXPIRE, PEXPIRE and
// EXPIREAT as PEXPIREAT key ms with their NX|XX|GT|LT, SETEX, PSETEX and
// SET with EX|PX|EXAT|PXAT as SET key value PXAT ms (its NX, XX, GET and
// KEEPTTL decided on the master), GETEX with a time as PEXPIREAT and with
// PERSIST as PERSIST; a time already past deletes the key, propagated as
// DEL (UNLINK with lazyfree-lazy-expire). relative is false for the other
// commands; eff nil when nothing changed.
func (c *conn) expireEffect(name string, args [][]byte, reply []byte) (eff [][]byte, relative bool) {
	ks := c.KS
	if ks == nil || len(args) < 2 {
		return nil, false
	}
	key := args[1]
	at := func() ([]byte, bool) {
		ms, ok := ks.ExpireAt(c.DB, key)
		return strconv.AppendInt(nil, ms, 10), ok && ms != 0
	}
	del := func() [][]byte { return [][]byte{c.srv.expireDel(), key} }
	// relAt is at() for a relative time rel (in unit ms) just set: read
	// back, or, when the key is already gone (its time passed as it was
	// set: feed then deletes it after), now + rel.
	relAt := func(rel []byte, unit int64) ([]byte, bool) {
		if ms, ok := at(); ok {
			return ms, true
		}
		n, ok := ParseInt64(rel)
		return strconv.AppendInt(nil, ks.NowMs()+n*unit, 10), ok
	}
	switch name {
	case "expire", "pexpire", "expireat", "pexpireat":
		if !bytes.HasPrefix(reply, []byte(":1")) || len(args) < 3 {
			return nil, true
		}
		ms, ok := at()
		if !ok {
			return del(), true
		}
		if name == "pexpireat" {
			return nil, false // as it was sent
		}
		return append([][]byte{[]byte("PEXPIREAT"), key, ms}, args[3:]...), true
	case "setex", "psetex":
		unit := int64(1000)
		if name == "psetex" {
			unit = 1
		}
		if len(args) != 4 {
			return nil, false
		}
		if ms, ok := relAt(args[2], unit); ok {
			return [][]byte{[]byte("SET"), key, args[3], []byte("PXAT"), ms}, true
		}
		return nil, false
	case "set":
		var ms []byte
		timed := false
	opts:
		for i := 3; i+1 < len(args); i++ {
			switch {
			case ArgIs(args[i], "ex"):
				ms, timed = relAt(args[i+1], 1000)
				break opts
			case ArgIs(args[i], "px"):
				ms, timed = relAt(args[i+1], 1)
				break opts
			case ArgIs(args[i], "exat"):
				n, ok := ParseInt64(args[i+1])
				ms, timed = strconv.AppendInt(nil, n*1000, 10), ok
				break opts
			case ArgIs(args[i], "pxat"):
				ms, timed = args[i+1], true
				break opts
			}
		}
		if !timed {
			// no time given (or, cannot be, none set): as sent, without
			// its GETs (setGenericCommand's rewrite)
			var out [][]byte
			for i, a := range args {
				if i >= 3 && ArgIs(a, "get") {
					if out == nil {
						out = append([][]byte(nil), args[:i]...)
					}
					continue
				}
				if out != nil {
					out = append(out, a)
				}
			}
			return out, out != nil
		}
		return [][]byte{[]byte("SET"), key, args[2], []byte("PXAT"), ms}, true
	case "getex":
		for i := 2; i < len(args); i++ {
			if ArgIs(args[i], "persist") {
				return [][]byte{[]byte("PERSIST"), key}, true
			}
			if ArgIs(args[i], "ex") || ArgIs(args[i], "px") || ArgIs(args[i], "exat") || ArgIs(args[i], "pxat") {
				if ms, ok := at(); ok {
					return [][]byte{[]byte("PEXPIREAT"), key, ms}, true
				}
				return del(), true
			}
		}
		return nil, true // a plain GETEX is a read
	}
	return nil, false
}

// blockingEffect is what a blocking pop did, as the non-blocking command
// the replica runs (Redis propagates these rewritten too), read from its
// reply: nil when it popped nothing. blocking is false for the other
// commands.
func blockingEffect(name string, args [][]byte, reply []byte) (eff [][]byte, blocking bool) {
	b := func(s string) []byte { return []byte(s) }
	key, rest, ok := firstBulk(reply)
	switch name {
	case "blpop", "brpop", "bzpopmin", "bzpopmax":
		if !ok {
			return nil, true
		}
		return [][]byte{b(strings.TrimPrefix(name, "b")), key}, true
	case "brpoplpush":
		if len(reply) == 0 || reply[0] == '*' || reply[0] == '_' || string(reply[:min(3, len(reply))]) == "$-1" {
			return nil, true
		}
		return [][]byte{b("rpoplpush"), args[1], args[2]}, true
	case "blmove":
		if len(reply) == 0 || reply[0] == '*' || reply[0] == '_' || string(reply[:min(3, len(reply))]) == "$-1" {
			return nil, true
		}
		return [][]byte{b("lmove"), args[1], args[2], args[3], args[4]}, true
	case "blmpop", "bzmpop", "lmpop", "zmpop":
		if !ok {
			return nil, true
		}
		n, ok := arrayLen(rest)
		if !ok || n <= 0 {
			return nil, true
		}
		// [B]LMPOP [timeout] numkeys key... LEFT|RIGHT [COUNT n]: the
		// direction follows the keys. Redis 7.0 propagates the pop as
		// LPOP/RPOP (ZPOPMIN/ZPOPMAX) of the key it served, with the
		// count it popped (listPopRangeAndReplyWithKey, genericZpopCommand).
		at := 1
		if name[0] == 'b' {
			at = 2
		}
		numkeys, _ := strconv.Atoi(string(args[at]))
		if at+1+numkeys >= len(args) || numkeys < 1 {
			return nil, true
		}
		var pop string
		switch dir := args[at+1+numkeys]; {
		case ArgIs(dir, "left"):
			pop = "LPOP"
		case ArgIs(dir, "right"):
			pop = "RPOP"
		case ArgIs(dir, "min"):
			pop = "ZPOPMIN"
		default:
			pop = "ZPOPMAX"
		}
		return [][]byte{b(pop), key, strconv.AppendInt(nil, int64(n), 10)}, true
	}
	return nil, false
}

// firstBulk reads an array reply's first element, a bulk string, and
// returns it with the bytes after it.
func firstBulk(p []byte) (key, rest []byte, ok bool) {
	if len(p) == 0 || (p[0] != '*' && p[0] != '>') {
		return nil, nil, false
	}
	n, p, ok := lenLine(p[1:])
	if !ok || n < 1 || len(p) == 0 || p[0] != '$' {
		return nil, nil, false
	}
	l, p, ok := lenLine(p[1:])
	if !ok || l < 0 || len(p) < l+2 {
		return nil, nil, false
	}
	return p[:l], p[l+2:], true
}

// arrayLen reads an array header's count.
func arrayLen(p []byte) (int, bool) {
	if len(p) == 0 || p[0] != '*' {
		return 0, false
	}
	n, _, ok := lenLine(p[1:])
	return n, ok
}

func lenLine(p []byte) (int, []byte, bool) {
	i := bytes.Index(p, []byte("\r\n"))
	if i < 0 {
		return 0, nil, false
	}
	n, err := strconv.Atoi(string(p[:i]))
	return n, p[i+2:], err == nil
}

// replconfCommand: semantics: redis.io REPLCONF (internal): options a
// replica sends before PSYNC. Reply: +OK; an even number of arguments is
// a syntax error; ACK and GETACK reply nothing.
func replconfCommand(c *Client, args [][]byte) {
	if len(args)%2 == 0 {
		c.WriteErr(ErrSyntaxReply)
		return
	}
	cn := c.conn
	if cn == nil {
		c.WriteOK()
		return
	}
	for i := 1; i < len(args); i += 2 {
		v := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "listening-port":
			n, ok := ParseInt64(args[i+1])
			if !ok {
				c.WriteErr(ErrNotIntegerReply)
				return
			}
			cn.syncReq.ListeningPort = int(n)
		case "ip-address":
			cn.syncReq.IP = v
		case "capa":
			cn.syncReq.CapaEOF = cn.syncReq.CapaEOF || strings.EqualFold(v, "eof")
			cn.syncReq.CapaPSYNC2 = cn.syncReq.CapaPSYNC2 || strings.EqualFold(v, "psync2")
			cn.syncReq.CapaRoaring = cn.syncReq.CapaRoaring || strings.EqualFold(v, repl.CapaRoaring)
		case "ack", "getack":
			return // only meaningful on a replica link
		case "rdb-only":
			if v != "0" && v != "1" {
				c.WriteErr(ErrNotIntegerReply)
				return
			}
			cn.syncReq.RDBOnly = v == "1"
		case "rdb-filter-only":
			// Redis 7.0: the include filters, space-separated; only
			// "functions" exists, and "" is an empty snapshot.
			cn.syncReq.Filtered, cn.syncReq.FilterFunctions = true, false
			for _, f := range strings.Fields(v) {
				if !strings.EqualFold(f, "functions") {
					c.WriteError("ERR Unsupported rdb-filter-only option: " + f)
					return
				}
				cn.syncReq.FilterFunctions = true
			}
		default:
			c.WriteError("ERR Unrecognized REPLCONF option: " + string(args[i]))
			return
		}
	}
	c.WriteOK()
}

// psyncCommand: semantics: redis.io PSYNC replid offset. Reply: the
// connection becomes a replica link (+FULLRESYNC or +CONTINUE, then the
// stream); in loop I/O mode an error.
func psyncCommand(c *Client, args [][]byte) {
	off, ok := ParseInt64(args[2])
	if !ok {
		c.WriteErr(ErrNotIntegerReply)
		return
	}
	if len(args) > 3 && ArgIs(args[3], "failover") {
		// PSYNC replid offset FAILOVER: our master hands its role over
		// (its FAILOVER TO): promote, then serve the PSYNC (+CONTINUE
		// from the history it shares with us).
		s := c.Srv
		if s.replicaStatus() == nil || string(args[1]) != s.master.IDs().ID {
			c.WriteError("ERR PSYNC FAILOVER replid must match my replid.")
			return
		}
		s.env.lock()
		err := s.replicaofNoOne()
		s.env.unlock()
		if err != nil {
			c.WriteErr(err)
			return
		}
		s.logf("replication: promoted by the master's FAILOVER")
	}
	c.startSync(repl.SyncRequest{PSYNC: true, ReplID: string(args[1]), Offset: off})
}

// syncCommand: semantics: redis.io SYNC. Reply: a snapshot, then the
// stream (no +FULLRESYNC line).
func syncCommand(c *Client, _ [][]byte) { c.startSync(repl.SyncRequest{}) }

func (c *Client) startSync(req repl.SyncRequest) {
	cn := c.conn
	switch {
	case cn == nil || c.Srv.master == nil:
		c.WriteError("ERR replication is not available here")
	default:
		prev := cn.syncReq
		prev.PSYNC, prev.ReplID, prev.Offset = req.PSYNC, req.ReplID, req.Offset
		cn.syncReq = prev
		cn.takeover = true
	}
}

// serveReplica hands the connection to the replication master; rest is
// what the replica sent after PSYNC. In goroutine mode it returns when the
// link ends; on the loop the link runs on a goroutine of its own and the
// connection's input goes to it (OnTraffic) from now on.
func (c *conn) serveReplica(rest []byte) {
	c.replica.Store(true) // CLIENT LIST type replica, flag S
	if c.gc != nil {
		l := newLoopLink(c.gc, rest)
		c.link = l
		req := c.syncReq
		go func() {
			if err := c.srv.master.Serve(l, bufio.NewReader(l), req); err != nil {
				c.srv.logf("replication: link to replica %s ended: %v", c.addr, err)
			}
		}()
		return
	}
	c.nc.SetReadDeadline(time.Time{})
	br := bufio.NewReader(io.MultiReader(bytes.NewReader(bytes.Clone(rest)), c.nc))
	if err := c.srv.master.Serve(c.nc, br, c.syncReq); err != nil {
		c.srv.logf("replication: link to replica %s ended: %v", c.addr, err)
	}
}

// roleCommand: semantics: redis.io ROLE. Reply: ["master", offset,
// [[ip, port, acknowledged offset], ...]].
func roleCommand(c *Client, _ [][]byte) {
	if l := c.Srv.replicaStatus(); l != nil {
		st := l.r.Status()
		c.WriteArray(5)
		c.WriteBulkString("slave")
		c.WriteBulkString(l.host)
		c.WriteInt(int64(l.port))
		c.WriteBulkString(st.State)
		if st.State == repl.StateConnected {
			c.WriteInt(st.Offset)
		} else {
			c.WriteInt(-1)
		}
		return
	}
	m := c.Srv.master
	c.WriteArray(3)
	c.WriteBulkString("master")
	if m == nil {
		c.WriteInt(0)
		c.WriteArray(0)
		return
	}
	c.WriteInt(m.Offset())
	reps := m.Replicas()
	c.WriteArray(len(reps))
	for _, r := range reps {
		c.WriteArray(3)
		c.WriteBulkString(r.IP)
		c.WriteBulkString(strconv.Itoa(r.Port))
		c.WriteBulkString(strconv.FormatInt(r.Offset, 10))
	}
}

// loopLink is a net.Conn over an event-loop connection, for a replica
// link served by repl.Master on its own goroutine: each write is a task
// on the loop, waited for (so a slow replica slows its sender, not the
// loop), and reads take what OnReadable hands over.
type loopLink struct {
	gc     *evloop.Conn
	mu     sync.Mutex
	cond   *sync.Cond
	in     []byte
	closed bool
	done   chan struct{}
}

func newLoopLink(gc *evloop.Conn, in []byte) *loopLink {
	l := &loopLink{gc: gc, in: bytes.Clone(in), done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// push is called on the loop with the connection's new input.
func (l *loopLink) push(p []byte) {
	l.mu.Lock()
	l.in = append(l.in, p...)
	l.mu.Unlock()
	l.cond.Broadcast()
}

// shutdown is called on the loop when the connection closed.
func (l *loopLink) shutdown() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *loopLink) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.in) == 0 && !l.closed {
		l.cond.Wait()
	}
	if len(l.in) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.in)
	l.in = l.in[n:]
	return n, nil
}

func (l *loopLink) Write(p []byte) (int, error) {
	written := make(chan error, 1)
	b := bytes.Clone(p)
	err := l.gc.Loop().Execute(func() {
		_, err := l.gc.Write(b)
		written <- err
	})
	if err == nil {
		select {
		case err = <-written:
		case <-l.done:
			err = net.ErrClosed
		}
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (l *loopLink) Close() error                     { return l.gc.Close() }
func (l *loopLink) LocalAddr() net.Addr              { return l.gc.LocalAddr() }
func (l *loopLink) RemoteAddr() net.Addr             { return l.gc.RemoteAddr() }
func (l *loopLink) SetDeadline(time.Time) error      { return nil }
func (l *loopLink) SetReadDeadline(time.Time) error  { return nil }
func (l *loopLink) SetWriteDeadline(time.Time) error { return nil }

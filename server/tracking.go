package server

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/persimmon-db/persimmon/evloop"

	"github.com/persimmon-db/persimmon/proto"
)

// Client-side caching (semantics: redis.io "Client-side caching", CLIENT
// TRACKING, CLIENT CACHING, CLIENT GETREDIR, CLIENT TRACKINGINFO; Redis
// 7.0's tracking.c).
//
// A connection with tracking on (default mode) has every key of the
// read-only commands it runs remembered in the tracking table (key → IDs
// of the clients that may cache it; keys are global, not per database, as
// in Redis). When a key changes, every client remembered for it gets one
// invalidation message and the key leaves the table. In BCAST mode nothing
// is remembered: the client subscribes to key prefixes and hears of every
// key with one of them that changes. OPTIN remembers only the keys of the
// command after CLIENT CACHING YES, OPTOUT all but those after CLIENT
// CACHING NO; NOLOOP leaves out the keys the client changed itself.
//
// Where changes are seen: the keyspace's OnKeyTouched hook, which apply
// calls for every key a committed batch writes or deletes, for expired keys
// (lazily at a lookup or by active expiry) and with a nil key for FLUSHDB
// and FLUSHALL (a flush invalidates everything: a null message) and SWAPDB
// (which, as in Redis 7.0, invalidates nothing).
// That is the one place every command's writes pass, so no command handler
// knows about tracking. While no client tracks, the hook returns after one
// atomic load, and a command pays two pointer stores (cur, below) and one
// atomic load (pending) more.
//
// Messages: a RESP3 client gets a push ["invalidate", [key...]] (or
// ["invalidate", null] after a flush); with REDIRECT the message goes to
// the connection named, as a push if it speaks RESP3, else as a pub/sub
// message on __redis__:invalidate if it is subscribed to anything. A RESP2
// client without a redirect gets nothing. If the redirect connection is
// gone, a RESP3 client gets ["tracking-redir-broken", id] instead.
//
// Ordering. The hook runs under the keyspace lock, so it only queues
// messages (nothing is written to a socket while the lock is held in
// goroutine mode). cur names the connection whose command holds the lock
// (set by call with the lock held, nil for active expiry and the other
// holders); it is the writer NOLOOP compares with. Messages to cur itself
// are delivered after its command's reply (appended to its output, as
// Redis's tracking_pending_keys: an invalidation never splits a reply, nor
// an EXEC's); the others are written at once when the command returns.
// Messages queued with no command to deliver them (expiry, the table's
// eviction at a CONFIG SET) are delivered by a task: on the event loop in
// loop mode, a goroutine otherwise. BCAST keys gather per prefix until the
// delivery, so a command (MSET, EXEC) that changes several keys of a prefix
// sends one message with all of them, sorted.
//
// tracking-table-max-keys bounds the table: past it keys are evicted (in
// map order, Redis's is random) and their clients invalidated as if the
// keys had changed.
//
// Lock order: keyspace lock, then tracker.mu, then Server.mu.

// trackingChannel is the pub/sub channel RESP2 redirect targets hear on.
const trackingChannel = "__redis__:invalidate"

// trackState is a connection's tracking mode (CLIENT TRACKING). Written by
// its own connection with tracker.mu held; read by other connections'
// commands (the hook) with tracker.mu held and by its own without.
type trackState struct {
	on, bcast, optin, optout, noloop bool
	// caching: CLIENT CACHING YES (optin) or NO (optout) was given for the
	// next command or transaction.
	caching     bool
	brokenRedir bool
	redirect    int64    // 0: none
	prefixes    []string // BCAST prefixes, sorted
	// scriptRead: a read-only command ran inside the script this client
	// is running, whose declared keys are remembered when it returns (as
	// Redis 7.0 does).
	scriptRead bool
}

// tracker is the server's tracking state.
type tracker struct {
	s *Server

	clients atomic.Int32 // connections with tracking on (INFO tracking_clients)
	// tableKeys is len(keys)+len(prefixes), readable without mu: with no
	// client tracking and an empty table the hook has nothing to do (a
	// table left by clients that turned tracking off must still lose the
	// keys that change, and everything at a flush, as in Redis).
	tableKeys atomic.Int64
	pending   atomic.Bool  // out or a prefix's keys hold something to deliver
	kicked    atomic.Bool  // a delivery task is queued
	maxKeys   atomic.Int64 // tracking-table-max-keys; 0: no limit
	loop      atomic.Pointer[evloop.Loop]

	// cur is the connection whose command holds the keyspace lock, nil
	// for any other holder. Guarded by the keyspace lock.
	cur *conn
	// evictFor is the connection whose command is about to run while
	// keys are evicted for it (evict.go): the deletions are nobody's write,
	// and it delivers their invalidations itself, before its reply, so no
	// delivery task may race it. Guarded by the keyspace lock.
	evictFor *conn

	mu       sync.Mutex
	tracking map[*conn]struct{}            // connections with tracking on
	keys     map[string]map[int64]struct{} // key → IDs of clients that may cache it
	items    int                           // IDs over all keys (INFO tracking_total_items)
	prefixes map[string]*bcastPrefix
	out      []trackMsg
	flushed  bool // the last message queued is a flush's (FLUSHALL's 16 databases send one)
}

// bcastPrefix is one BCAST prefix: the keys with it changed since the last
// delivery (with the connection that changed each last, for NOLOOP) and
// the clients subscribed to it.
type bcastPrefix struct {
	keys    map[string]*conn
	clients map[*conn]struct{}
}

// trackMsg is one queued invalidation for the tracking client target.
type trackMsg struct {
	target *conn
	// deferTo is the connection running the command that queued the
	// message when that is target itself: delivered after its reply.
	deferTo *conn
	keys    []string // nil: a flush (every key)
}

func newTracker(s *Server) *tracker {
	t := &tracker{s: s,
		tracking: map[*conn]struct{}{},
		keys:     map[string]map[int64]struct{}{},
		prefixes: map[string]*bcastPrefix{},
	}
	t.maxKeys.Store(1000000)
	return t
}

// ---- CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO ----

// clientTrackingCommand: CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p
// ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP], with Redis 7.0's checks in its
// order.
func clientTrackingCommand(c *Client, args [][]byte) {
	cn := c.conn
	var (
		redir    int64
		bcast    bool
		optin    bool
		optout   bool
		noloop   bool
		prefixes []string
	)
	for j := 3; j < len(args); j++ {
		more := len(args) - 1 - j
		switch a := args[j]; {
		case ArgIs(a, "redirect") && more > 0:
			j++
			if redir != 0 {
				c.WriteError("ERR A client can only redirect to a single other client")
				return
			}
			n, ok := ParseInt64(args[j])
			if !ok {
				c.WriteError(ErrNotInteger)
				return
			}
			redir = n
			if c.Srv.clientByID(redir) == nil {
				c.WriteError("ERR The client ID you want redirect to does not exist")
				return
			}
		case ArgIs(a, "bcast"):
			bcast = true
		case ArgIs(a, "optin"):
			optin = true
		case ArgIs(a, "optout"):
			optout = true
		case ArgIs(a, "noloop"):
			noloop = true
		case ArgIs(a, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, string(args[j]))
		default:
			c.WriteError(ErrSyntax)
			return
		}
	}
	t := c.Srv.track
	switch {
	case ArgIs(args[2], "on"):
		st := &cn.trk
		switch {
		case !bcast && len(prefixes) > 0:
			c.WriteError("ERR PREFIX option requires BCAST mode to be enabled")
			return
		case st.on && st.bcast != bcast:
			c.WriteError("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		case bcast && (optin || optout):
			c.WriteError("ERR OPTIN and OPTOUT are not compatible with BCAST")
			return
		case optin && optout:
			c.WriteError("ERR You can't specify both OPTIN mode and OPTOUT mode")
			return
		case optin && st.optout || optout && st.optin:
			c.WriteError("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast {
			if msg := prefixCollision(st.prefixes, prefixes); msg != "" {
				c.WriteError(msg)
				return
			}
		}
		t.enable(cn, redir, bcast, optin, optout, noloop, prefixes)
	case ArgIs(args[2], "off"):
		t.disable(cn)
	default:
		c.WriteError(ErrSyntax)
		return
	}
	c.WriteOK()
}

// prefixCollision is Redis's error for new BCAST prefixes that overlap an
// existing one or each other (one is a prefix of the other), or "".
func prefixCollision(have, add []string) string {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range add {
		for _, h := range have {
			if overlap(p, h) {
				return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + h + "'. Prefixes for a single client must not overlap."
			}
		}
		for _, q := range add[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// clientCachingCommand: CLIENT CACHING YES|NO.
func clientCachingCommand(c *Client, args [][]byte) {
	st := &c.conn.trk
	if !st.on {
		c.WriteError("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case ArgIs(args[2], "yes"):
		if !st.optin {
			c.WriteError("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case ArgIs(args[2], "no"):
		if !st.optout {
			c.WriteError("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.WriteError(ErrSyntax)
		return
	}
	st.caching = true
	c.WriteOK()
}

// clientGetredirCommand: CLIENT GETREDIR: the redirect id, 0 for none, -1
// when tracking is off.
func clientGetredirCommand(c *Client, _ [][]byte) {
	st := &c.conn.trk
	if !st.on {
		c.WriteInt(-1)
		return
	}
	c.WriteInt(st.redirect)
}

// clientTrackinginfoCommand: CLIENT TRACKINGINFO: a map of flags (a set),
// redirect and prefixes.
func clientTrackinginfoCommand(c *Client, _ [][]byte) {
	t := c.Srv.track
	t.mu.Lock()
	st := c.conn.trk
	st.prefixes = slices.Clone(st.prefixes)
	t.mu.Unlock()
	flags := []string{"off"}
	if st.on {
		flags[0] = "on"
	}
	if st.bcast {
		flags = append(flags, "bcast")
	}
	if st.optin {
		flags = append(flags, "optin")
		if st.caching {
			flags = append(flags, "caching-yes")
		}
	}
	if st.optout {
		flags = append(flags, "optout")
		if st.caching {
			flags = append(flags, "caching-no")
		}
	}
	if st.noloop {
		flags = append(flags, "noloop")
	}
	if st.brokenRedir {
		flags = append(flags, "broken_redirect")
	}
	c.WriteMap(3)
	c.WriteBulkString("flags")
	c.WriteSet(len(flags))
	for _, f := range flags {
		c.WriteBulkString(f)
	}
	c.WriteBulkString("redirect")
	if st.on {
		c.WriteInt(st.redirect)
	} else {
		c.WriteInt(-1)
	}
	c.WriteBulkString("prefixes")
	c.WriteArray(len(st.prefixes))
	for _, p := range st.prefixes {
		c.WriteBulkString(p)
	}
}

// ---- the tracking state ----

// enable turns tracking on for c (enableTracking): the mode flags are
// replaced, BCAST prefixes are added to those c has ("" when none is
// given).
func (t *tracker) enable(c *conn, redir int64, bcast, optin, optout, noloop bool, prefixes []string) {
	if c.gc != nil && t.loop.Load() == nil {
		t.loop.Store(c.gc.Loop())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := &c.trk
	if !st.on {
		t.clients.Add(1)
		t.tracking[c] = struct{}{}
	}
	st.on = true
	st.brokenRedir, st.bcast, st.optin, st.optout, st.noloop = false, false, false, false, false
	st.redirect = redir
	if bcast {
		st.bcast = true
		if len(prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			bp := t.prefixes[p]
			if bp == nil {
				bp = &bcastPrefix{keys: map[string]*conn{}, clients: map[*conn]struct{}{}}
				t.prefixes[p] = bp
			}
			if _, ok := bp.clients[c]; !ok {
				bp.clients[c] = struct{}{}
				st.prefixes = append(st.prefixes, p)
			}
		}
		slices.Sort(st.prefixes)
		t.sizeChanged()
	}
	st.optin, st.optout, st.noloop = optin, optout, noloop
}

// disable turns tracking off for c (CLIENT TRACKING OFF, RESET, close).
// Its IDs stay in the table and are dropped lazily, as in Redis.
func (t *tracker) disable(c *conn) {
	if !c.trk.on {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disableLocked(c)
}

func (t *tracker) disableLocked(c *conn) {
	st := &c.trk
	for _, p := range st.prefixes {
		if bp := t.prefixes[p]; bp != nil {
			delete(bp.clients, c)
			if len(bp.clients) == 0 {
				delete(t.prefixes, p)
			}
		}
	}
	if st.on {
		t.clients.Add(-1)
		delete(t.tracking, c)
	}
	*st = trackState{}
	t.sizeChanged()
}

// remember adds the keys of a read-only command c ran to the table
// (trackingRememberKeys), unless OPTIN/OPTOUT and CLIENT CACHING say not
// to. With the keyspace lock held, in the same critical section as the
// read, so that no write can fall between them.
func (t *tracker) remember(c *conn, cmd *Command, args [][]byte) {
	st := &c.trk
	if st.optin && !st.caching || st.optout && st.caching || cmd.Flags&FlagPubSub != 0 {
		return
	}
	refs := CommandKeys(cmd, args)
	if len(refs) == 0 {
		return
	}
	t.mu.Lock()
	for _, r := range refs {
		key := args[r.Pos]
		ids := t.keys[string(key)]
		if ids == nil {
			ids = map[int64]struct{}{}
			t.keys[string(key)] = ids
		}
		if _, ok := ids[c.ID]; !ok {
			ids[c.ID] = struct{}{}
			t.items++
		}
	}
	t.limitLocked()
	t.sizeChanged()
	t.mu.Unlock()
}

// sizeChanged refreshes tableKeys (mu held).
func (t *tracker) sizeChanged() { t.tableKeys.Store(int64(len(t.keys) + len(t.prefixes))) }

// limit evicts keys past tracking-table-max-keys (trackingLimitUsedSlots)
// and delivers what that queued (CONFIG SET).
func (t *tracker) limit() {
	t.mu.Lock()
	t.limitLocked()
	t.mu.Unlock()
	if t.pending.Load() {
		t.kick()
	}
}

func (t *tracker) limitLocked() {
	max := int(t.maxKeys.Load())
	if max <= 0 || len(t.keys) <= max {
		return
	}
	for key := range t.keys {
		if len(t.keys) <= max {
			break
		}
		t.invalidateLocked(nil, key, noBcast)
	}
}

// noBcast is invalidateLocked's bcastWriter for an invalidation that does
// not go to the BCAST prefixes.
var noBcast = &conn{}

// keyTouched is the keyspace's OnKeyTouched hook (keyspace lock held).
func (t *tracker) keyTouched(_ int, key []byte) {
	if t.clients.Load() == 0 && t.tableKeys.Load() == 0 {
		return
	}
	if key == nil && t.cur != nil && t.cur.lastCmd != nil && t.cur.lastCmd.Name == "swapdb" {
		// SWAPDB's touch of both databases: Redis 7.0 sends nothing and
		// keeps the table (dbSwapDatabases does not call
		// trackingInvalidateKeysOnFlush; checked on redis-server 7.0.15).
		return
	}
	t.mu.Lock()
	if key == nil {
		t.flushLocked()
	} else {
		// An expiry is nobody's write for the BCAST prefixes (Redis's
		// deleteExpiredKeyAndPropagate signals it with no client), so
		// NOLOOP does not hide it from the client whose lookup found the
		// key expired; a key's own trackers still compare with the
		// command's client, as Redis compares with current_client.
		bw := t.cur
		if ks := t.s.ks; ks != nil && ks.Expiring() {
			bw = nil
		}
		t.invalidateLocked(t.cur, string(key), bw)
	}
	t.mu.Unlock()
	if t.cur == nil && t.evictFor == nil && t.pending.Load() {
		t.kick() // nobody's command will deliver it
	}
}

// invalidateLocked queues the invalidation of key for the clients that may
// cache it and drops it from the table (trackingInvalidateKey); writer is
// the connection whose command changed it (nil: eviction, the table's
// limit). bcastWriter, if not noBcast, also records it for the BCAST
// prefixes it has, as written by bcastWriter (nil: nobody's, an expiry).
func (t *tracker) invalidateLocked(writer *conn, key string, bcastWriter *conn) {
	if bcastWriter != noBcast {
		for p, bp := range t.prefixes {
			if strings.HasPrefix(key, p) {
				bp.keys[key] = bcastWriter
				t.pending.Store(true)
			}
		}
	}
	ids, ok := t.keys[key]
	if !ok {
		return
	}
	for id := range ids {
		target := t.s.clientByID(id)
		if target == nil || !target.trk.on || target.trk.bcast ||
			target.trk.noloop && target == writer {
			continue
		}
		m := trackMsg{target: target, keys: []string{key}}
		if target == writer {
			m.deferTo = writer
		}
		t.out = append(t.out, m)
		t.flushed = false
		t.pending.Store(true)
	}
	t.items -= len(ids)
	delete(t.keys, key)
	t.sizeChanged()
}

// flushLocked queues a flush message (null) for every tracking client and
// empties the table (trackingInvalidateKeysOnFlush).
func (t *tracker) flushLocked() {
	if !t.flushed {
		for c := range t.tracking {
			m := trackMsg{target: c}
			if c == t.cur {
				m.deferTo = c
			}
			t.out = append(t.out, m)
		}
		t.flushed = len(t.tracking) > 0
		t.pending.Store(len(t.out) > 0 || t.pending.Load())
	}
	clear(t.keys)
	t.items = 0
	t.sizeChanged()
}

// kick queues a delivery with no command to make it: a task on the event
// loop in loop mode, a goroutine otherwise.
func (t *tracker) kick() {
	if !t.kicked.CompareAndSwap(false, true) {
		return
	}
	run := func() {
		t.kicked.Store(false)
		t.deliver(nil)
	}
	if el := t.loop.Load(); el != nil {
		if err := el.Execute(run); err != nil {
			t.kicked.Store(false) // the loop is shutting down
		}
		return
	}
	go run()
}

// outMsg is one encoded message for a connection.
type outMsg struct {
	to  *conn
	msg []byte
}

// deliver writes the queued messages: those for self (the connection
// whose command just returned, nil for a delivery task) are appended to
// its output, after its reply; the others are pushed at once, except the
// ones waiting for another connection's command to return.
func (t *tracker) deliver(self *conn) {
	if !t.pending.Load() {
		return
	}
	var msgs []outMsg
	t.mu.Lock()
	keep := t.out[:0]
	for _, m := range t.out {
		if m.deferTo != nil && m.deferTo != self {
			keep = append(keep, m)
			continue
		}
		msgs = t.encodeLocked(msgs, m.target, m.keys, m.keys == nil)
	}
	clear(t.out[len(keep):])
	t.out = keep
	t.flushed = false
	for _, bp := range t.prefixes {
		if len(bp.keys) == 0 {
			continue
		}
		all := make([]string, 0, len(bp.keys))
		for k := range bp.keys {
			all = append(all, k)
		}
		slices.Sort(all)
		for c := range bp.clients {
			keys := all
			if c.trk.noloop {
				keys = slices.DeleteFunc(slices.Clone(all), func(k string) bool { return bp.keys[k] == c })
				if len(keys) == 0 {
					continue
				}
			}
			msgs = t.encodeLocked(msgs, c, keys, false)
		}
		clear(bp.keys)
	}
	t.pending.Store(len(t.out) > 0)
	t.mu.Unlock()
	for _, m := range msgs {
		if m.to == self {
			self.Out = append(self.Out, m.msg...)
		} else {
			m.to.push(m.msg)
		}
	}
}

// encodeLocked appends the message invalidating keys (or every key, if
// flush) for the tracking client c, encoded for where it goes
// (sendTrackingMessage).
func (t *tracker) encodeLocked(msgs []outMsg, c *conn, keys []string, flush bool) []outMsg {
	if c.killed.Load() || !c.trk.on {
		return msgs
	}
	to := c
	redirected := false
	if id := c.trk.redirect; id != 0 {
		to = t.s.clientByID(id)
		if to == nil {
			c.trk.brokenRedir = true
			if c.resp3.Load() {
				w := proto.Writer{Proto: proto.RESP3}
				w.WritePush(2)
				w.WriteBulkString("tracking-redir-broken")
				w.WriteInt(id)
				msgs = append(msgs, outMsg{c, w.Out})
			}
			return msgs
		}
		redirected = true
	}
	var w proto.Writer
	switch {
	case to.resp3.Load():
		w.Proto = proto.RESP3
		w.WritePush(2)
		w.WriteBulkString("invalidate")
	case redirected && to.subscriptions() > 0:
		w.Proto = proto.RESP2
		w.WritePush(3)
		w.WriteBulkString("message")
		w.WriteBulkString(trackingChannel)
	default:
		return msgs // RESP2 without a redirect: nowhere to say it
	}
	if flush {
		// The null of the tracking client's protocol, as Redis sends it.
		w.Proto = proto.RESP2
		if c.resp3.Load() {
			w.Proto = proto.RESP3
		}
		w.WriteNull()
	} else {
		w.WriteArray(len(keys))
		for _, k := range keys {
			w.WriteBulkString(k)
		}
	}
	return append(msgs, outMsg{to, w.Out})
}

// trackingCounts are INFO's tracking_clients, tracking_total_keys,
// tracking_total_items and tracking_total_prefixes.
func (t *tracker) counts() (clients, keys, items, prefixes int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int(t.clients.Load()), len(t.keys), t.items, len(t.prefixes)
}

// ---- the connection's side ----

// isScriptCommand reports EVAL, FCALL and their variants, whose declared
// keys are remembered only if the script ran a read-only command (EVAL_RO
// too: it is not a read by itself).
func isScriptCommand(cmd *Command) bool {
	switch cmd.Name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// trackRead is called by call after cmd ran with the keyspace lock held,
// for a connection with tracking on: it remembers what the command read.
// A read inside a script marks the script, whose declared keys are
// remembered when it returns.
func (c *conn) trackRead(cmd *Command, args [][]byte, locked bool) {
	st := &c.trk
	if st.bcast {
		return
	}
	if locked {
		if rs := c.srv.running.Load(); rs != nil && rs.conn == c {
			if cmd.Flags&FlagReadonly != 0 {
				st.scriptRead = true
			}
			return
		}
	}
	if isScriptCommand(cmd) {
		if st.scriptRead {
			st.scriptRead = false
			c.srv.track.remember(c, cmd, args)
		}
		return
	}
	if cmd.Flags&FlagReadonly != 0 {
		c.srv.track.remember(c, cmd, args)
	}
}

// endCaching ends CLIENT CACHING's effect after a command outside MULTI,
// unless that command was a CLIENT one (as Redis's resetClient does).
func (c *conn) endCaching(cmd *Command) {
	if c.trk.caching && !c.InMulti && (cmd == nil || !strings.HasPrefix(cmd.Name, "client|")) {
		c.trk.caching = false
	}
}

// clientByID returns the connected client with the id, or nil.
func (s *Server) clientByID(id int64) *conn {
	s.mu.Lock()
	c := s.clients[id]
	s.mu.Unlock()
	return c
}

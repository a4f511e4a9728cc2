package server

import (
	"strconv"
	"sync/atomic"
)

// Keyspace notifications (semantics: redis.io "Redis keyspace
// notifications", Redis 7.0's notify.c). A write command names each
// change it made with Client.Notify(class, event, key), right after its
// batch is committed and in the order Redis's handler calls
// notifyKeyspaceEvent; the keyspace reports the changes no handler sees
// through its hooks (keyspace.OnKeyEvents): a key an operation created
// ("new"), a key removed at its expiry ("expired", lazily inside a command
// or by the background cycle) and a read that found no key ("keymiss").
// Each event whose class notify-keyspace-events enables is published as
// an ordinary message, with the event as payload on
// __keyspace@<db>__:<key> (class K) and the key as payload on
// __keyevent@<db>__:<event> (class E), to RESP2 subscribers as messages
// and to RESP3 ones as pushes. "evicted" is published by the eviction
// loop (evict.go), for each key it deletes.
//
// Order. Redis publishes "new" the moment dbAdd inserts the key, before
// the handler's own event for it; here the key is created when the batch
// is applied, which may hold several keys (MSET). So "new" events wait in
// a list (guarded by the keyspace lock) and an event for a key first
// publishes the pending ones up to that key's; rename_from and move_from,
// whose destination Redis creates before it names the source, publish all
// of them first; what is left goes out when the command ends (call).
//
// Cost. With notify-keyspace-events empty (the default) Notify is one
// atomic load and a compare; the keyspace hooks add the same.
//
// Delivery runs where the change happens, under the keyspace lock, as
// PUBLISH from a script does (pubsub.go's rules). The background expiry
// cycle runs on no connection's goroutine: in loop mode its messages to a
// loop connection are queued on the loop instead of written.

// Notification classes for Client.Notify (the notify-keyspace-events
// characters g $ l s h z t).
const (
	NotifyGeneric = notifyGeneric
	NotifyString  = notifyStringClass
	NotifyList    = notifyList
	NotifySet     = notifySet
	NotifyHash    = notifyHash
	NotifyZset    = notifyZset
	NotifyStream  = notifyStream
	// NotifyNew marks the two pseudo-events that square the keyspace's
	// "new" with Redis's where the two create keys differently: "new"
	// (Redis deleted and re-added the key here, RENAME or COPY REPLACE
	// over an existing key: send its "new" now, or the pending one) and
	// "overwrite" (Redis replaced the value in place where the keyspace
	// deleted and re-created it, a *STORE over an existing key: drop its
	// pending "new").
	NotifyNew = notifyNew
)

// notifyState is the server's keyspace-notification state.
type notifyState struct {
	flags atomic.Int64 // notify-keyspace-events' class bits (NotifyFlags)
	// pending holds created keys whose "new" is not published yet;
	// inCmd is set while a command runs. Both: keyspace lock.
	pending []pendingNew
	inCmd   bool
}

type pendingNew struct {
	db  int
	key string
}

// Notify publishes the keyspace event event of class (NotifyGeneric,
// NotifyString...) for key in the client's database, if
// notify-keyspace-events enables the class. Call it with the keyspace
// lock held, after the batch that made the change is committed.
func (c *Client) Notify(class int, event string, key []byte) {
	if s := c.Srv; s != nil && s.notify.flags.Load() != 0 {
		s.keyEvent(class, event, key, c.DB)
	}
}

// NotifyDB is Notify for a key in database db (MOVE, COPY ... DB).
func (c *Client) NotifyDB(class int, event string, key []byte, db int) {
	if s := c.Srv; s != nil && s.notify.flags.Load() != 0 {
		s.keyEvent(class, event, key, db)
	}
}

// installNotify sets the keyspace's hooks (NewServer).
func (s *Server) installNotify() {
	s.ks.OnKeyEvents(s.keyCreated, s.keyExpired, s.keyMissed)
}

// keyEvent publishes one event, after the pending "new" events it follows.
func (s *Server) keyEvent(class int, event string, key []byte, db int) {
	if class == notifyNew {
		s.newEvent(event, key, db)
		return
	}
	if len(s.notify.pending) > 0 {
		s.flushNew(db, key, event == "rename_from" || event == "move_from")
	}
	if f := s.notify.flags.Load(); f&int64(class) != 0 {
		s.emitKeyEvent(f, event, key, db, false)
	}
}

// flushNew publishes the pending "new" events up to the one of (db, key),
// or all of them if all is set; none if key is not pending.
func (s *Server) flushNew(db int, key []byte, all bool) {
	p := s.notify.pending
	upto := -1
	for i := range p {
		if p[i].db == db && p[i].key == string(key) {
			upto = i
			break
		}
	}
	if all {
		upto = len(p) - 1
	}
	if upto < 0 {
		return
	}
	f := s.notify.flags.Load()
	for _, n := range p[:upto+1] {
		if f&notifyNew != 0 {
			s.emitKeyEvent(f, "new", []byte(n.key), n.db, false)
		}
	}
	s.notify.pending = append(p[:0], p[upto+1:]...)
}

// newEvent handles NotifyNew's pseudo-events.
func (s *Server) newEvent(event string, key []byte, db int) {
	p := s.notify.pending
	at := -1
	for i := range p {
		if p[i].db == db && p[i].key == string(key) {
			at = i
			break
		}
	}
	switch {
	case event == "overwrite" && at >= 0:
		s.notify.pending = append(p[:at], p[at+1:]...)
	case event == "new" && at >= 0:
		s.flushNew(db, key, false)
	case event == "new":
		if f := s.notify.flags.Load(); f&notifyNew != 0 {
			s.emitKeyEvent(f, "new", key, db, false)
		}
	}
}

// notifyEnd publishes what the command left pending (keyspace lock).
func (s *Server) notifyEnd() {
	if len(s.notify.pending) > 0 {
		s.flushNew(0, nil, true)
	}
}

// keyCreated is the keyspace's hook for a created key.
func (s *Server) keyCreated(db int, key []byte) {
	if s.notify.flags.Load()&notifyNew != 0 {
		s.notify.pending = append(s.notify.pending, pendingNew{db: db, key: string(key)})
	}
}

// keyExpired is the keyspace's hook for a key removed at its expiry.
func (s *Server) keyExpired(db int, key string) {
	if f := s.notify.flags.Load(); f&notifyExpired != 0 {
		s.emitKeyEvent(f, "expired", []byte(key), db, s.loop != nil && !s.notify.inCmd)
	}
}

// keyMissed is the keyspace's hook for a read that found no key.
func (s *Server) keyMissed(db int, key []byte) {
	if f := s.notify.flags.Load(); f&notifyKeyMiss != 0 {
		s.emitKeyEvent(f, "keymiss", key, db, false)
	}
}

// emitKeyEvent publishes an event on the channels flags enable. offLoop:
// the caller is not on the event loop (see the top of the file).
func (s *Server) emitKeyEvent(flags int64, event string, key []byte, db int, offLoop bool) {
	if flags&notifyKeyspace != 0 {
		ch := append(strconv.AppendInt([]byte("__keyspace@"), int64(db), 10), "__:"...)
		s.publishFrom(append(ch, key...), []byte(event), offLoop)
	}
	if flags&notifyKeyevent != 0 {
		ch := append(strconv.AppendInt([]byte("__keyevent@"), int64(db), 10), "__:"...)
		s.publishFrom(append(ch, event...), key, offLoop)
	}
}

// pushOnLoop queues a message's write on the loop that serves c (from a
// goroutine other than the loop's); false if c is not a loop connection.
func (c *conn) pushOnLoop(b []byte) bool {
	lc := c.lc.Load()
	if lc == nil {
		return false
	}
	b = append([]byte(nil), b...)
	lc.Loop().Execute(func() { c.push(b) })
	return true
}

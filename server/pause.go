package server

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/functions"
)

// CLIENT PAUSE and CLIENT UNPAUSE (semantics: redis.io CLIENT PAUSE; Redis
// 7.0's processCommand and pauseClients).
//
// A pause has a type and an end: ALL holds every command of every client;
// WRITE holds the commands that may change the keyspace or go into the
// replication stream (write commands, PUBLISH, SPUBLISH, PFCOUNT, EXEC of a
// block holding one, EVAL/EVALSHA of a script without the no-writes flag,
// FCALL of a function without it). A second CLIENT PAUSE keeps the more
// restrictive type and the later end. CLIENT PAUSE, FAILOVER and SHUTDOWN
// each pause for their own purpose (pausePurpose). While any pause lasts, expiry is
// paused too: expired keys read as missing but are not removed (INFO
// expired_keys does not move), active expiry does not run.
//
// A held command is not refused: its client waits, counted in INFO
// blocked_clients, with the command still in its read buffer. Commands
// with an error found before the pause check (unknown, wrong arity) are
// answered at once. In goroutine mode the connection's goroutine waits,
// after writing the replies before the held command; on the event loop
// the connection stops reading commands (pauseWait) and is woken through
// the loop (Wake) when the pause ends or turns less restrictive. Replica links are
// never paused.

const (
	pauseOff   = 0
	pauseWrite = 1
	pauseAll   = 2
)

// pausePurpose names who asked for a pause. As in Redis 7.0, each purpose
// holds its own type and end, the clients are held by the most
// restrictive of them, and ending one (CLIENT UNPAUSE ends only the
// command's) leaves the others: a FAILOVER's or a SHUTDOWN's pause of
// writes outlasts a CLIENT UNPAUSE.
type pausePurpose int

const (
	pauseByClient    pausePurpose = iota // CLIENT PAUSE
	pauseForShutdown                     // SHUTDOWN waiting for its replicas
	pauseForFailover                     // FAILOVER waiting for its target
	numPausePurposes
)

// pauseEvent is one purpose's pause (typ pauseOff: none).
type pauseEvent struct {
	typ int32
	end time.Time
}

// pauseState is the server's pause.
type pauseState struct {
	typ     atomic.Int32 // pauseOff, pauseWrite or pauseAll: the most restrictive of by
	waiting atomic.Int64 // clients held now (INFO blocked_clients)

	mu      sync.Mutex
	by      [numPausePurposes]pauseEvent
	timer   *time.Timer        // fires at the earliest end of by
	changed chan struct{}      // closed when the pause ends or loosens (goroutine mode waits on it)
	parked  map[*conn]struct{} // loop mode: connections held
}

// clientPauseCommand: CLIENT PAUSE timeout [WRITE|ALL] (milliseconds).
func clientPauseCommand(c *Client, args [][]byte) {
	typ := int32(pauseAll)
	if len(args) == 4 {
		switch {
		case ArgIs(args[3], "write"):
			typ = pauseWrite
		case ArgIs(args[3], "all"):
		default:
			c.WriteError("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := ParseInt64(args[2])
	if !ok {
		c.WriteError("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.WriteError("ERR timeout is negative")
		return
	}
	c.Srv.pauseClients(pauseByClient, typ, time.Now().Add(time.Duration(ms)*time.Millisecond))
	c.WriteOK()
}

// clientUnpauseCommand: CLIENT UNPAUSE (the command's pause only).
func clientUnpauseCommand(c *Client, _ [][]byte) {
	c.Srv.unpauseClients(pauseByClient)
	c.WriteOK()
}

// pauseClients starts or extends the pause of purpose: the more
// restrictive type and the later end win.
func (s *Server) pauseClients(purpose pausePurpose, typ int32, end time.Time) {
	p := &s.pause
	p.mu.Lock()
	ev := &p.by[purpose]
	if ev.typ != pauseOff {
		typ = max(typ, ev.typ)
		if ev.end.After(end) {
			end = ev.end
		}
	}
	*ev = pauseEvent{typ, end}
	s.pauseChangedLocked()
}

// pauseTimedOut ends the pauses whose end has passed (the timer).
func (s *Server) pauseTimedOut() {
	p := &s.pause
	p.mu.Lock()
	now := time.Now()
	for i := range p.by {
		if p.by[i].typ != pauseOff && !now.Before(p.by[i].end) {
			p.by[i] = pauseEvent{}
		}
	}
	s.pauseChangedLocked()
}

// unpauseClients ends the pause of purpose; the clients go on unless
// another purpose still holds them.
func (s *Server) unpauseClients(purpose pausePurpose) {
	p := &s.pause
	p.mu.Lock()
	p.by[purpose] = pauseEvent{}
	s.pauseChangedLocked()
}

// pauseChangedLocked makes the pause the most restrictive of the
// purposes', arms the timer for the earliest end, and lets the held
// clients look again when it ended or loosened. Called with p.mu held;
// it releases it.
func (s *Server) pauseChangedLocked() {
	p := &s.pause
	typ := int32(pauseOff)
	var first time.Time
	for _, ev := range p.by {
		if ev.typ == pauseOff {
			continue
		}
		typ = max(typ, ev.typ)
		if first.IsZero() || ev.end.Before(first) {
			first = ev.end
		}
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if typ != pauseOff {
		p.timer = time.AfterFunc(time.Until(first), s.pauseTimedOut)
	}
	old := p.typ.Swap(typ)
	if s.ks != nil && (old == pauseOff) != (typ == pauseOff) {
		s.ks.PauseExpiry(typ != pauseOff)
	}
	if typ != pauseOff && p.changed == nil {
		p.changed = make(chan struct{})
	}
	if typ >= old {
		p.mu.Unlock()
		return
	}
	// Ended or loosened (ALL to WRITE): every held client looks again
	// (holdForPause holds it anew if the pause left still covers it).
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
		if typ != pauseOff {
			p.changed = make(chan struct{})
		}
	}
	parked := p.parked
	p.parked = nil
	p.mu.Unlock()
	for c := range parked {
		c.pauseWait.Store(false)
		p.waiting.Add(-1)
		if lc := c.lc.Load(); lc != nil {
			lc.Wake() // OnWake runs the held command (or holds it again)
		}
	}
}

// holdForPause reports whether the request args must wait for the pause
// to end, and (goroutine mode) waits. On the event loop it parks the
// connection instead and returns true: processInput leaves the request
// in the buffer.
func (c *conn) holdForPause(args [][]byte) bool {
	s := c.srv
	p := &s.pause
	for {
		typ := p.typ.Load()
		if typ == pauseOff || !c.pausedBy(typ, args) {
			return false
		}
		p.mu.Lock()
		if p.typ.Load() != typ { // changed meanwhile: look again
			p.mu.Unlock()
			continue
		}
		if c.gc != nil {
			if p.parked == nil {
				p.parked = map[*conn]struct{}{}
			}
			p.parked[c] = struct{}{}
			c.pauseWait.Store(true)
			p.waiting.Add(1)
			p.mu.Unlock()
			return true
		}
		ch := p.changed
		killed := make(chan struct{}) // closed by CLIENT KILL (killedWhilePaused)
		c.pauseKilled = killed
		p.mu.Unlock()
		if !c.flush() { // the replies before the held command go out
			c.closeAfterReply = true
			return true
		}
		p.waiting.Add(1)
		c.blockedNow.Store(true)
		select {
		case <-ch:
		case <-killed:
		case <-s.closing:
		}
		c.blockedNow.Store(false)
		p.waiting.Add(-1)
		p.mu.Lock()
		c.pauseKilled = nil
		p.mu.Unlock()
		if c.killed.Load() {
			return true
		}
	}
}

// killedWhilePaused ends the wait of a goroutine-mode connection held by
// the pause when it is killed (CLIENT KILL), so that it closes at once.
func (c *conn) killedWhilePaused() {
	p := &c.srv.pause
	p.mu.Lock()
	if c.pauseKilled != nil {
		close(c.pauseKilled)
		c.pauseKilled = nil
	}
	p.mu.Unlock()
}

// forgetPause drops a closing connection from the held ones.
func (c *conn) forgetPause() {
	if !c.pauseWait.Load() {
		return
	}
	p := &c.srv.pause
	p.mu.Lock()
	if _, ok := p.parked[c]; ok {
		delete(p.parked, c)
		p.waiting.Add(-1)
	}
	p.mu.Unlock()
	c.pauseWait.Store(false)
}

// pausedBy reports whether a pause of type typ holds the request args.
func (c *conn) pausedBy(typ int32, args [][]byte) bool {
	if c.link != nil || c.takeover {
		return false // replicas are never paused
	}
	cmd, msg := c.srv.resolve(args)
	if cmd == nil || msg != "" {
		return false // answered at once
	}
	if typ == pauseAll {
		return true
	}
	return c.srv.mayWrite(cmd, args, c)
}

// mayWrite reports whether cmd with args may change the keyspace or feed
// the replication stream (Redis's CMD_WRITE|CMD_MAY_REPLICATE, with a
// script's or function's own flags, and EXEC's queued commands).
func (s *Server) mayWrite(cmd *Command, args [][]byte, c *conn) bool {
	if cmd.Flags&FlagWrite != 0 || mayReplicate(cmd) {
		return true
	}
	switch cmd.Name {
	case "exec":
		if c == nil {
			return false
		}
		for _, q := range c.MultiCmds {
			if qc, msg := s.resolve(q); qc != nil && msg == "" && qc.Name != "exec" && s.mayWrite(qc, q, nil) {
				return true
			}
		}
		return false
	case "eval":
		body := string(args[1])
		first, _, _ := strings.Cut(body, "\n")
		if !strings.HasPrefix(first, "#!") {
			return true // no shebang: may write
		}
		noWrites, msg := parseShebang(first)
		return msg == "" && !noWrites
	case "evalsha":
		s.env.lock()
		defer s.env.unlock()
		sc := s.scriptEngine().scripts[strings.ToLower(string(args[1]))]
		return sc == nil || !sc.noWrites
	case "fcall":
		f := s.functionSet().Function(string(args[1]))
		return f == nil || f.Flags&functions.NoWrites == 0
	}
	return false
}

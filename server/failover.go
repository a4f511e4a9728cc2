package server

import (
	"strconv"
	"sync"
	"time"

	"github.com/persimmon-db/persimmon/repl"
)

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: a master hands
// its role to one of its replicas without losing a write, as Redis 6.2+
// does: writes stop, the master waits until the target replica (or, with
// no TO, any online one) acknowledged its whole stream, then becomes that
// replica's replica with "PSYNC replid offset FAILOVER", which makes the
// target promote itself and answer +CONTINUE. Past TIMEOUT without the
// acknowledgement it gives up (writes resume), unless FORCE.
//
// Meanwhile writes are paused as Redis 7.0 pauses them (CLIENT PAUSE
// WRITE semantics, pause.go): a client's write waits, and runs when the
// failover ends: on this server still a master (ABORT, TIMEOUT) it
// applies, on the replica it has become it gets READONLY. Reads go on.
// Gap: the pause is the one CLIENT PAUSE sets (Redis keeps one per
// purpose), so CLIENT UNPAUSE during a failover lets writes through
// (the target then acknowledges them too before the handover, as the
// check is on the offset under the lock), and the failover's end ends an
// overlapping CLIENT PAUSE.

type failoverState struct {
	mu    sync.Mutex
	state string        // "" (no-failover), "waiting-for-sync", "failover-in-progress"
	abort chan struct{} // closed by FAILOVER ABORT
}

// failoverInfo is INFO replication's master_failover_state.
func (s *Server) failoverInfo() string {
	f := &s.replica.failover
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

// failoverCommand: semantics: redis.io FAILOVER. Reply: +OK once the
// failover starts (it goes on in the background; INFO replication's
// master_failover_state follows it); errors as Redis 7.0.
func failoverCommand(c *Client, args [][]byte) {
	s := c.Srv
	f := &s.replica.failover
	if len(args) == 2 && ArgIs(args[1], "abort") {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.state == "" {
			c.WriteError("ERR No failover in progress.")
			return
		}
		close(f.abort)
		f.abort = make(chan struct{}) // a second ABORT finds the next state
		c.WriteOK()
		return
	}
	var host string
	port, timeout := -1, int64(0)
	force := false
	// Redis 7.0's order: the syntax, then the state, then the target.
	for i := 1; i < len(args); i++ {
		switch {
		case ArgIs(args[i], "timeout") && i+1 < len(args) && timeout == 0:
			t, ok := ParseInt64(args[i+1])
			if !ok {
				c.WriteErr(ErrNotIntegerReply)
				return
			}
			if t <= 0 {
				c.WriteError("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = t
			i++
		case ArgIs(args[i], "to") && i+2 < len(args) && host == "":
			p, ok := ParseInt64(args[i+2])
			if !ok {
				c.WriteErr(ErrNotIntegerReply)
				return
			}
			host, port = string(args[i+1]), int(p)
			i += 2
		case ArgIs(args[i], "force") && !force:
			force = true
		default:
			c.WriteErr(ErrSyntaxReply)
			return
		}
	}
	if s.failoverInfo() != "" {
		c.WriteError("ERR FAILOVER already in progress.")
		return
	}
	if s.replicaStatus() != nil {
		c.WriteError("ERR FAILOVER is not valid when server is a replica.")
		return
	}
	reps := s.master.Replicas()
	if len(reps) == 0 {
		c.WriteError("ERR FAILOVER requires connected replicas.")
		return
	}
	if force && (host == "" || timeout == 0) {
		c.WriteError("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
		return
	}
	if host != "" {
		found := false
		for _, r := range reps {
			if r.IP == host && r.Port == port {
				found = true
				if r.State != "online" {
					c.WriteError("ERR FAILOVER target replica is not online.")
					return
				}
			}
		}
		if !found {
			c.WriteError("ERR FAILOVER target HOST and PORT is not a replica.")
			return
		}
	}
	f.mu.Lock()
	if f.state != "" {
		f.mu.Unlock()
		c.WriteError("ERR FAILOVER already in progress.")
		return
	}
	f.state = "waiting-for-sync"
	f.abort = make(chan struct{})
	abortCh := f.abort
	f.mu.Unlock()
	s.pauseClients(pauseForFailover, pauseWrite, time.Now().Add(100*365*24*time.Hour)) // until the failover ends
	s.logf("replication: FAILOVER requested (to %s:%d, timeout %d ms, force %v): writes paused", host, port, timeout, force)
	go s.runFailover(host, port, time.Duration(timeout)*time.Millisecond, force, abortCh)
	c.WriteOK()
}

// runFailover waits for a replica to hold the whole stream, then hands
// over to it (under the keyspace lock, so no write slips between the
// check and the switch).
func (s *Server) runFailover(host string, port int, timeout time.Duration, force bool, abort chan struct{}) {
	f := &s.replica.failover
	end := func(why string) {
		f.mu.Lock()
		f.state = ""
		f.mu.Unlock()
		s.unpauseClients(pauseForFailover)
		s.logf("replication: FAILOVER %s", why)
	}
	start := time.Now()
	s.master.GetAck()
	lastAsk := start
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-abort:
			end("aborted: writes resume")
			return
		case <-s.closing:
			end("stopped: the server is closing")
			return
		case now := <-tick.C:
			if now.Sub(lastAsk) >= time.Second {
				s.master.GetAck()
				lastAsk = now
			}
			timedOut := timeout > 0 && now.Sub(start) >= timeout
			if timedOut && !force {
				end("timed out before the target caught up: writes resume")
				return
			}
			s.env.lock()
			target, ok := s.failoverTarget(host, port, timedOut)
			if ok {
				f.mu.Lock()
				f.state = "failover-in-progress"
				f.mu.Unlock()
				s.startReplicaofFailover(target.IP, target.Port)
			}
			s.env.unlock()
			if ok {
				end("done: now a replica of " + target.IP + ":" + strconv.Itoa(target.Port))
				return
			}
		}
	}
}

// failoverTarget is the replica to hand over to: host:port (when given)
// or any online replica, once its acknowledged offset is the stream's
// (any offset when forced). Under the keyspace lock.
func (s *Server) failoverTarget(host string, port int, forced bool) (repl.ReplicaInfo, bool) {
	off := s.master.Offset()
	for _, r := range s.master.Replicas() {
		if host != "" && (r.IP != host || r.Port != port) {
			continue
		}
		if r.State == "online" && (r.Offset >= off || forced && host != "") {
			return r, true
		}
	}
	return repl.ReplicaInfo{}, false
}

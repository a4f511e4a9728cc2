package server

// Propagation units, as Redis 7.0 makes them (server.c: alsoPropagate,
// propagatePendingCommands). Everything one execution unit sends to the
// replication stream is gathered under the keyspace lock and goes out
// when the unit ends:
//
//   - a unit is a command a client sent, with all it caused: its effects
//     (replication_effects.go), the DEL of each key it found expired
//     (propagateExpired), and for EXEC, EVAL and FCALL the writes of the
//     commands they ran; a blocked client served later is a unit of its
//     own;
//   - one command alone goes as itself, with no MULTI/EXEC around it (an
//     EXEC or a script with a single write too);
//   - several go between MULTI (in the database of the first) and EXEC
//     (with no SELECT of its own);
//   - a unit that changed nothing sends nothing (a write whose run
//     appended nothing to the log: DEL of a missing key, SET NX that did
//     not set, ...), except the commands Redis propagates whatever they
//     did (PUBLISH, FLUSHDB, ...: alwaysPropagated).
//
// Outside a unit (the background expiry cycle, eviction) each command is
// sent at once, alone, as Redis does for them (propagate_no_multi).

// propUnit is the unit being gathered; guarded by the keyspace lock.
type propUnit struct {
	depth int      // open propBegin calls
	ops   []propOp // the commands, in order
	buf   []byte   // their arguments' bytes, one after another
	lens  []int    // each argument's length, in order
	argv  [][]byte // propEnd's scratch
}

type propOp struct{ db, nargs int }

// propBegin opens a unit (or nests in the one open). With the keyspace
// lock held; each propBegin has its propEnd under the same hold.
func (s *Server) propBegin() { s.prop.depth++ }

// alsoPropagate adds a command run in database db to the open unit (the
// arguments are copied: they may alias buffers reused before it ends), or
// sends it at once when no unit is open.
func (s *Server) alsoPropagate(db int, argv ...[]byte) {
	p := &s.prop
	if p.depth == 0 {
		s.master.Propagate(db, argv...)
		return
	}
	p.ops = append(p.ops, propOp{db: db, nargs: len(argv)})
	for _, a := range argv {
		p.buf = append(p.buf, a...)
		p.lens = append(p.lens, len(a))
	}
}

// propEnd closes what propBegin opened; the outermost sends the unit (see
// above) and notes the stream's offset after it as c's (WAIT), when c is
// not nil.
func (s *Server) propEnd(c *conn) {
	p := &s.prop
	if p.depth--; p.depth > 0 || len(p.ops) == 0 {
		return
	}
	m := s.master
	wrap := len(p.ops) > 1
	if wrap {
		m.Propagate(p.ops[0].db, []byte("MULTI"))
	}
	off, li, last := 0, 0, 0
	for _, op := range p.ops {
		argv := p.argv[:0]
		for range op.nargs {
			n := p.lens[li]
			li++
			argv = append(argv, p.buf[off:off+n:off+n])
			off += n
		}
		m.Propagate(op.db, argv...)
		p.argv = argv[:0]
		last = op.db
	}
	if wrap {
		m.Propagate(last, []byte("EXEC"))
	}
	clear(p.argv[:cap(p.argv)])
	p.ops, p.buf, p.lens = p.ops[:0], p.buf[:0], p.lens[:0]
	if cap(p.buf) > 1<<20 {
		p.buf = nil // a big unit's arena is not kept
	}
	if c != nil {
		c.replOff = m.Offset()
	}
}

// feedPublish propagates a PUBLISH or SPUBLISH run from a client (they
// run without the keyspace lock: it is taken here only when a replica is
// attached, to order the message among the writes).
func (c *conn) feedPublish(cmd *Command, args [][]byte, start int) {
	if m := c.srv.master; m == nil || !m.Streaming() {
		return
	}
	env := &c.srv.env
	env.lock()
	c.feed(cmd, args, start, 0)
	env.unlock()
}

// alwaysPropagated names the commands Redis 7.0 propagates whatever they
// changed (forceCommandPropagation, or a dirty count they raise even when
// nothing changed); other writes go only if their run appended to the log.
func alwaysPropagated(cmd *Command) bool {
	switch cmd.Name {
	case "publish", "spublish", // to replicas only (no AOF): their subscribers get it too
		"flushdb", "flushall", "swapdb", "function|flush", "function|restore":
		return true
	}
	return false
}

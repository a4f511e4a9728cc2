package server

// Reads that wait only for the writes they saw (msync durability).
//
// A reply may not leave before what it saw is durable (DESIGN.md
// invariant 1). The simple way to honour that is to make every command's
// batch wait for the log's last LSN, which is what a write must do; but in
// msync mode that makes a GET of an old, durable key wait a whole group
// commit (hundreds of µs) whenever any other client wrote anything, so
// reads slow down under a write load although they saw nothing new.
//
// dirtyKeys keeps, under the keyspace lock, the LSN of the last write of
// every key written by a plain keyed command since the log was last known
// durable, and a global LSN that covers every other write: commands whose
// written keys are not exactly their FirstKey/LastKey/Step positions in the
// selected database (a GetKeys proc: SORT STORE, ZUNIONSTORE, EVAL, FCALL;
// MOVE, COPY, SWAPDB, FLUSHALL, keyless writes), writes that served
// blocked clients, and every append made outside call (EXEC, the expiry
// cycle, blocked clients served later, the cleaner, replication) — those
// are found because the last LSN moved since the previous command was
// accounted. A read of keys at fixed positions then waits for
// max(global, each key's LSN), and any other read waits for the last LSN
// as before. Every LSN is either in the map or covered by global, so a
// read never waits for less than the writes that could have changed what
// it read.
//
// Pure overhead in the other durability modes (the log is durable when
// the command returns), so only msync mode tracks (s.dirty != nil).

// dirtyPrune is the map size above which entries already durable are
// dropped.
const dirtyPrune = 1024

type dirtyKeys struct {
	keys      map[string]uint64 // db byte + key → LSN of its last write
	global    uint64            // covers every write not in keys
	accounted uint64            // the last LSN classified into keys or global
	pruneAt   int               // map size that triggers the next prune (≥ dirtyPrune)
	buf       []byte            // scratch for map keys
}

func newDirtyKeys() *dirtyKeys { return &dirtyKeys{keys: map[string]uint64{}, pruneAt: dirtyPrune} }

// waitLSN classifies the appends of one command (before and after: the
// log's last LSN around it; served: it served blocked clients) and returns
// the LSN the command's replies must wait for. With the keyspace lock
// held.
func (d *dirtyKeys) waitLSN(cmd *Command, db int, args [][]byte, before, after uint64, served bool, durable uint64) uint64 {
	if before > d.accounted && before > d.global {
		d.global = before // appends made outside call since the last command
	}
	d.accounted = after
	keyed := cmd.fixedKeys
	if after > before {
		if !keyed || served {
			d.global = after
		} else {
			if len(d.keys) >= d.pruneAt {
				// Twice what is left after a prune: with many keys still
				// waiting for a slow sync, pruning stays amortised O(1)
				// per write instead of a scan on every one.
				d.prune(durable)
				d.pruneAt = max(dirtyPrune, 2*len(d.keys))
			}
			d.forKeys(cmd, db, args, func(k []byte) { d.keys[string(k)] = after })
		}
		return after
	}
	if !keyed || cmd.Flags&FlagWrite != 0 {
		return after // a read whose keys are not at fixed positions (KEYS, SCAN, DBSIZE …)
	}
	w := d.global
	d.forKeys(cmd, db, args, func(k []byte) {
		if l, ok := d.keys[string(k)]; ok && l > w {
			w = l
		}
	})
	return w
}

// forKeys calls fn with db byte + key for each key argument of cmd at its
// fixed positions (FirstKey, LastKey, Step; LastKey < 0 counts from the
// end). fn must not keep the slice.
func (d *dirtyKeys) forKeys(cmd *Command, db int, args [][]byte, fn func(k []byte)) {
	last := cmd.LastKey
	if last < 0 {
		last = len(args) + last
	}
	step := max(cmd.Step, 1)
	for i := cmd.FirstKey; i <= last && i < len(args); i += step {
		d.buf = append(append(d.buf[:0], byte(db)), args[i]...)
		fn(d.buf)
	}
}

// prune drops the entries whose writes are durable.
func (d *dirtyKeys) prune(durable uint64) {
	for k, l := range d.keys {
		if l <= durable {
			delete(d.keys, k)
		}
	}
}

// hasFixedKeys reports whether every key cmd touches is at its
// FirstKey/LastKey/Step positions in the selected database: not for
// movable keys (a numkeys, STORE, STREAMS: SORT, ZUNIONSTORE, EVAL,
// XREADGROUP), a numkeys or keyword key spec, an incomplete one, a GetKeys
// proc without index-only key specs, a spec of arguments that are not keys
// (SPUBLISH's channel: such a command waits as PUBLISH does), or commands that
// reach another database (MOVE, COPY … DB) or another server (MIGRATE).
func hasFixedKeys(cmd *Command) bool {
	if cmd.FirstKey <= 0 || len(cmd.Subcommands) > 0 || cmd.Flags&FlagMovableKeys != 0 {
		return false
	}
	switch cmd.Name {
	case "move", "copy", "migrate", "swapdb":
		return false
	}
	for i := range cmd.KeySpecs {
		sp := &cmd.KeySpecs[i]
		if sp.Flags&(KeyIncomplete|KeyNotKey) != 0 || sp.KeyNum || sp.Keyword != "" || sp.Unknown {
			return false
		}
	}
	// A GetKeys proc with index-only specs only refines the flags (SET's
	// GET, BITFIELD's GET): its keys are still at the fixed positions.
	return cmd.GetKeys == nil || len(cmd.KeySpecs) > 0
}

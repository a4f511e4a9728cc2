package server

import "github.com/cespare/xxhash/v2"

// Reads that wait only for the writes they saw (msync durability).
//
// A reply may not leave before what it saw is durable (DESIGN.md
// invariant 1). The simple way to honour that is to make every command's
// batch wait for the log's last LSN, which is what a write must do; but in
// msync mode that makes a GET of an old, durable key wait a whole group
// commit (hundreds of µs) whenever any other client wrote anything, so
// reads slow down under a write load although they saw nothing new.
//
// dirtyKeys keeps, under the keyspace lock, a table of LSNs indexed by a
// hash of database and key: each slot holds the LSN of the last write of
// any key that hashes to it, made by a plain keyed command; and a global
// LSN that covers every other write: commands whose
// written keys are not exactly their FirstKey/LastKey/Step positions in the
// selected database (a GetKeys proc: SORT STORE, ZUNIONSTORE, EVAL, FCALL;
// MOVE, COPY, SWAPDB, FLUSHALL, keyless writes), writes that served
// blocked clients, and every append made outside call (EXEC, the expiry
// cycle, blocked clients served later, the cleaner, replication) — those
// are found because the last LSN moved since the previous command was
// accounted. A read of keys at fixed positions then waits for
// max(global, each key's slot), and any other read waits for the last LSN
// as before. Every LSN is either in its key's slot (or a later one: LSNs
// only grow) or covered by global, so a read never waits for less than
// the writes that could have changed what it read; a key that shares a
// slot with one written since the last sync waits for that sync too
// (dirtySlots: with 50 writers about 0.6% of reads of other keys).
//
// The table replaced a map of key → LSN pruned of durable entries: a new
// key cost a string allocation, a map insert and later a delete (with
// redis-benchmark -r 100000, nearly every SET), ~0.3-0.4 µs per SET of
// server CPU in a perf profile (mapassign_faststr, aeshash, the prune's
// iteration); BenchmarkDirtyKeys in dirty_test.go.
//
// Pure overhead in the other durability modes (the log is durable when
// the command returns), so only msync mode tracks (s.dirty != nil).

// dirtySlots is the size of the table (a power of two): 64 KiB of LSNs.
const dirtySlots = 1 << 13

type dirtyKeys struct {
	slots     *[dirtySlots]uint64 // LSN of the last write of any key hashing here
	global    uint64              // covers every write not in slots
	accounted uint64              // the last LSN classified into slots or global
	buf       []byte              // scratch: db byte + key
}

func newDirtyKeys() *dirtyKeys { return &dirtyKeys{slots: new([dirtySlots]uint64)} }

// slot is the table index of db byte + key k.
func slot(k []byte) uint64 { return xxhash.Sum64(k) & (dirtySlots - 1) }

// waitLSN classifies the appends of one command (before and after: the
// log's last LSN around it; served: it served blocked clients) and returns
// the LSN the command's replies must wait for. With the keyspace lock
// held. durable is unused (the table needs no pruning); kept for callers.
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
			d.forKeys(cmd, db, args, func(k []byte) {
				if p := &d.slots[slot(k)]; after > *p { // LSNs grow; max keeps that true regardless
					*p = after
				}
			})
		}
		return after
	}
	if !keyed || cmd.Flags&FlagWrite != 0 {
		return after // a read whose keys are not at fixed positions (KEYS, SCAN, DBSIZE …)
	}
	w := d.global
	d.forKeys(cmd, db, args, func(k []byte) {
		if l := d.slots[slot(k)]; l > w {
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

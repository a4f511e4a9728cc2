package keyspace

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// The time of a write, for the expiry decisions its replay repeats.
//
// An expiry has no record: a key whose time has passed is removed by a
// lookup, the active cycle or the cleaner, and a later write to the key
// begins a new incarnation. A replay therefore meets, after the operation
// that gave a collection (or a patched string) its expiry, the later
// operations of the key, and must tell those written before that time
// (the same incarnation: apply them to it) from those written after it
// (the server had removed the key: a new incarnation from nothing). The
// replay runs at another time than the writes, so its own clock cannot
// tell them apart: judged at the restart, every operation of the old
// incarnation after the expiry's made a collection of their own without
// the expiry, a key the server never held.
//
// So a batch whose object operations name a key that has an expiry when
// it is committed (the only case where an expiry decides where an
// operation goes) begins with an opClock holding the time its apply
// judges expiries by, live and at every replay alike (applyNow): the
// decision is made once, at that time, and the log says which. Where no
// key expires (a replica waiting for its master's DEL, CLIENT PAUSE) that
// time is clockKeepAll, before every expiry. A batch
// without one named no key with an expiry, so at a replay a key of it that
// has one must have been removed by the server before the batch: the
// replay judges it by its own clock (the restart's time, later than any
// write), as the log written before opClock existed is judged too.
// An operation that gives a key an expiry already past at the replay
// (opSet, opSetRef, opExpire) no longer drops the key there unless the
// record's time says it had passed when it was written: the key is kept
// with its deadline, the operations after it are judged as above, and
// what is still past its deadline at the end of the replay is removed
// (sweepReplayExpired), as the server removed it without a record.
//
//	opClock  db 0 | time int64 LE (Unix ms): the time the record's
//	         operations (and those of the rest of its transaction group)
//	         are judged by
const opClock = 9

// clockOpSize is the encoded size of an opClock.
const clockOpSize = 2 + 8

// clockKeepAll is the time an opClock carries for a batch applied where
// no key expires (a replica, CLIENT PAUSE: keepExpiredApply): a time
// before every expiry, so its replay keeps what the server kept.
const clockKeepAll = 1

// commitClock is the time a batch's opClock carries.
func (ks *Keyspace) commitClock() int64 {
	if ks.keepExpiredApply() {
		return clockKeepAll
	}
	return ks.NowMs()
}

// expiredApplying reports whether an expiry at expireAt has passed for
// the operations being applied: at the time their record says (applyNow),
// else at the keyspace's clock.
func (ks *Keyspace) expiredApplying(expireAt int64) bool {
	if ks.applyNow != 0 {
		return expiredAt(expireAt, ks.applyNow)
	}
	return ks.expiredNow(expireAt)
}

// dropsAtExpiry reports whether an operation that gives (dbi, key) the
// expiry at removes the key instead, its time having passed. A replay
// without the record's time keeps the key with its deadline (see above);
// a replay remembers every key it gives a deadline already past for
// sweepReplayExpired.
func (ks *Keyspace) dropsAtExpiry(dbi int, key []byte, at int64) bool {
	if at == 0 {
		return false
	}
	if ks.replaying && ks.expiredNow(at) {
		ks.replayExpired = append(ks.replayExpired, dbKey{dbi, string(key)})
	}
	if ks.keepExpiredApply() || ks.replaying && ks.applyNow == 0 {
		return false
	}
	return ks.expiredApplying(at)
}

// dbKey names a key of a database.
type dbKey struct {
	db  int
	key string
}

// applyClock applies an opClock: the operations after it in its record
// and group are judged at its time. A model keyspace whose clock is
// stopped (FreezeClockForReplay) ignores it: nothing expires there.
func (ks *Keyspace) applyClock(o op) error {
	if len(o.body) != 8 {
		return fmt.Errorf("%w: clock body of %d bytes", errBadOp, len(o.body))
	}
	if ks.expiryHist == nil {
		ks.applyNow = int64(binary.LittleEndian.Uint64(o.body))
	}
	return nil
}

// sweepReplayExpired removes, at the end of a replay, the keys it kept
// past their deadline (dropsAtExpiry) whose time has passed, as the
// server removed them without a record. Only tidiness: such a key reads
// as missing anyway, but would count in DBSIZE until a lookup or the
// active cycle removed it.
func (ks *Keyspace) sweepReplayExpired() {
	for _, k := range ks.replayExpired {
		if e := ks.rawEntry(k.db, []byte(k.key)); e != nil && ks.expiredNow(e.expireAt) && !ks.keepExpired() {
			ks.removeKey(k.db, k.key)
		}
	}
	ks.replayExpired = nil
}

// replayExpiredSwapped follows a SWAPDB with the keys sweepReplayExpired
// will look at.
func (ks *Keyspace) replayExpiredSwapped(a, b int) {
	for i := range ks.replayExpired {
		switch ks.replayExpired[i].db {
		case a:
			ks.replayExpired[i].db = b
		case b:
			ks.replayExpired[i].db = a
		}
	}
}

// prepareBatch puts at the start of b's payload the operations its
// apply and replay need before its own: an opClock, when one of its object
// operations names a key that has an expiry now (object operations are
// rare next to sets, and only the databases holding a key with an expiry
// are looked at), and, with the key index attached, an opPatchBase for
// each plain string one of its patches is the first of (patchbase.go).
func (ks *Keyspace) prepareBatch(b *Batch) {
	if b.objDBs == 0 || ks.cleaning {
		return // the cleaner's copies reset their keys first
	}
	var clockDBs uint16
	for dbi := range NumDBs {
		if b.objDBs&(1<<dbi) != 0 && (ks.dbs[dbi].volatile > 0 || ks.kix.ttlCounts[dbi] > 0) {
			clockDBs |= 1 << dbi
		}
	}
	if clockDBs == 0 && (!b.patches || !ks.kixOn()) {
		return
	}
	clock := false
	pre := ks.preBuf[:0]
	var based []dbKey
	// The operations of b in order, a set whose value is borrowed
	// skipped (not an object operation); a loop, not a callback, on a
	// path every HSET takes.
	next := 0
	var o op // decoded in place: see op.decode
	for off := 0; off < len(b.buf); {
		if next < len(b.borrowed) && b.borrowed[next].start == off {
			off = b.borrowed[next].at
			next++
			continue
		}
		if err := o.decode(b.buf[off:]); err != nil {
			break // Commit's split reports it
		}
		off += o.size
		if o.kind < opObjectBase {
			continue
		}
		if !clock && clockDBs&(1<<o.db) != 0 && ks.hasExpiry(o.db, o.key) {
			clock = true
		}
		if (o.kind == opSetRange || o.kind == opHLLAdd) && ks.kixOn() {
			if base, ok := ks.plainStringBase(o.db, o.key); ok && !slices.Contains(based, dbKey{o.db, string(o.key)}) {
				based = append(based, dbKey{o.db, string(o.key)})
				pre = appendPatchBase(pre, o.db, o.key, base)
			}
		}
		if clock && !b.patches {
			break // nothing more to find
		}
	}
	n := len(based)
	if clock {
		var c [clockOpSize]byte
		c[0] = opClock
		binary.LittleEndian.PutUint64(c[2:], uint64(ks.commitClock()))
		pre = slices.Insert(pre, 0, c[:]...) // in preBuf's capacity once it has grown
		n++
	}
	if n > 0 {
		b.prepend(pre, n)
	}
	ks.preBuf = pre[:0]
}

// hasExpiry reports whether (dbi, key), a DRAM entry or an indexed
// string, has an expiry (true too when its operation cannot be read).
func (ks *Keyspace) hasExpiry(dbi int, key []byte) bool {
	d := ks.dbs[dbi]
	if i, ok := d.index[string(key)]; ok {
		return d.entries[i].expireAt != 0
	}
	if loc, ok := ks.kixGet(dbi, key); ok {
		o, err := ks.opAt(loc)
		return err != nil || o.expireAt != 0
	}
	return false
}

// prepend puts p, n whole operations, at the start of b's payload.
func (b *Batch) prepend(p []byte, n int) {
	k := len(p)
	b.buf = append(b.buf, p...)
	copy(b.buf[k:], b.buf[:len(b.buf)-k])
	copy(b.buf, p)
	for i := range b.borrowed {
		b.borrowed[i].start += k
		b.borrowed[i].at += k
	}
	b.n += n
}

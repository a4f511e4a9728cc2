package keyspace

import "sync/atomic"

// Expiry on a replica, as Redis 7.0 has it (db.c expireIfNeeded,
// expire.c expireSlaveKeys):
//
//   - A replica never expires keys on its own: its master expires them and
//     sends a DEL. Until that DEL arrives, a read of a key whose time has
//     passed answers as if the key were missing (GET, EXISTS, TTL, TYPE,
//     SCAN, KEYS hide it) but the key stays: DBSIZE and INFO keyspace
//     still count it, the active cycle and the cleaner keep it.
//   - The master's own commands, applied from its stream, see no key as
//     expired (Redis: current_client == master): a write the master made
//     to a key it still had lands on the same key here, whatever this
//     server's clock says.
//   - A writable replica (replica-read-only no): a client's write command
//     removes the expired keys it looks up (Redis's LOOKUP_WRITE forcing
//     the deletion), and the keys a client gave an expiry to are tracked
//     (INFO slave_expires_tracked_keys) and expired by the active cycle
//     here, since the master does not know them.
//
// CLIENT PAUSE (PauseExpiry) keeps expired keys the same way on a master.
type replicaExpiry struct {
	on          bool // SetReplica: the server is a replica
	fromMaster  bool // SetApplyingMaster: the command running is the master's
	clientWrite bool // SetClientWrite: a client's write on a writable replica
	// tracked: the keys a client of a writable replica set an expiry on,
	// each with a bit per database (Redis's slaveKeysWithExpire).
	tracked  map[string]uint16
	trackedN atomic.Int64 // len(tracked), for INFO without the lock
}

// SetReplica turns replica expiry on (the server became a replica) or off
// (it was promoted: the active cycle expires keys again, and a master's
// expiries are propagated). Call it with the lock held.
func (ks *Keyspace) SetReplica(on bool) { ks.rx.on = on }

// IsReplica reports what SetReplica set. Call it with the lock held.
func (ks *Keyspace) IsReplica() bool { return ks.rx.on }

// SetApplyingMaster marks the commands run until it is turned off again as
// the master's, applied from its replication stream: no key is expired
// for them (they see a key whose time has passed here as it is). Call it
// with the lock held, around each of the master's commands.
func (ks *Keyspace) SetApplyingMaster(on bool) { ks.rx.fromMaster = on }

// SetClientWrite marks the command running as a client's write on a
// writable replica: its lookups remove the expired keys they meet, as a
// master's do, and the expiries it sets are tracked. Call it with the lock
// held, around the command; it returns the previous setting, for a
// nested command (EXEC's, a script's) to restore.
func (ks *Keyspace) SetClientWrite(on bool) (was bool) {
	was, ks.rx.clientWrite = ks.rx.clientWrite, on
	return was
}

// TrackedExpires is the number of keys a writable replica's clients gave
// an expiry to that it still tracks (INFO slave_expires_tracked_keys).
// Safe without the lock.
func (ks *Keyspace) TrackedExpires() int64 { return ks.rx.trackedN.Load() }

// liveAt reports whether a lookup treats a key expiring at expireAt as
// existing: its time has not passed, or the command is the master's.
func (ks *Keyspace) liveAt(expireAt int64) bool {
	return !ks.expiredNow(expireAt) || ks.rx.fromMaster || ks.seeExpired
}

// WithExpiredVisible runs fn with keys past their expiry read as live and
// left in place, as Redis's DEBUG OBJECT finds a key in the dictionary
// without the expiry check. Call with the lock held.
func (ks *Keyspace) WithExpiredVisible(fn func()) {
	ks.seeExpired = true
	defer func() { ks.seeExpired = false }()
	fn()
}

// keepExpired reports whether a lookup that meets an expired key leaves it
// in place (reading it as missing) rather than removing it: while expiry
// is paused, and on a replica except for a client's write.
func (ks *Keyspace) keepExpired() bool {
	return ks.expiryPaused.Load() || ks.rx.on && !ks.rx.clientWrite
}

// keepExpiredApply reports whether applying an operation keeps a key whose
// time has passed (a set or an expiry already in the past, or an operation
// on an expired collection) instead of dropping it: on a replica and while
// expiry is paused (Redis's checkAlreadyExpired is false on a replica: the
// key is added with its expiry and waits for the DEL), and for the
// cleaner's copies, which only rewrite what cleanOp decided is kept (a key
// it expires is gone before its copy would be made), and for recovery's
// scan of the anchored entries up to the key index's checkpoint: each was
// alive at the checkpoint, so every operation from its anchor on belongs
// to it even if its time has passed since (dropped at its expiry, the
// operations after the expiry's would make a new, partial collection of
// it: kixanchor.go).
func (ks *Keyspace) keepExpiredApply() bool {
	return ks.cleaning || ks.rx.on || ks.expiryPaused.Load() || ks.anchorFilter
}

// trackExpiry records that a client of a writable replica set an expiry
// on (dbi, key) (Redis's rememberSlaveKeyWithExpire, from setExpire):
// only a client's write (SetClientWrite) does, not the master's nor the
// cleaner's copies.
func (ks *Keyspace) trackExpiry(dbi int, key []byte) {
	if !ks.rx.on || !ks.rx.clientWrite || ks.rx.fromMaster || ks.cleaning || ks.replaying {
		return
	}
	if ks.rx.tracked == nil {
		ks.rx.tracked = map[string]uint16{}
	}
	bits, ok := ks.rx.tracked[string(key)]
	ks.rx.tracked[string(key)] = bits | 1<<dbi
	if !ok {
		ks.rx.trackedN.Add(1)
	}
}

// flushTracked forgets every tracked key (FLUSHALL and SWAPDB, as Redis's
// flushSlaveKeysWithExpireList).
func (ks *Keyspace) flushTracked() {
	if len(ks.rx.tracked) == 0 {
		return
	}
	clear(ks.rx.tracked)
	ks.rx.trackedN.Store(0)
}

// rawEntry returns the entry of (dbi, key) whatever its expiry, or nil:
// the DRAM entry, or a transient one for an indexed key.
func (ks *Keyspace) rawEntry(dbi int, key []byte) *entry {
	d := ks.dbs[dbi]
	if i, ok := d.index[string(key)]; ok {
		return &d.entries[i]
	}
	if loc, ok := ks.kixGet(dbi, key); ok {
		return ks.kixEntry(string(key), loc)
	}
	return nil
}

// trackedExpireLimit bounds the tracked keys looked at per cycle.
const trackedExpireLimit = 2000

// expireTracked is a replica's active expiry (Redis's expireSlaveKeys):
// it removes the tracked keys whose time has passed and forgets those that
// are gone or no longer have an expiry (the master overwrote them, a DEL
// came). Keys the master gave an expiry to are not its to expire. Called
// with the lock held.
func (ks *Keyspace) expireTracked(now int64) {
	n := 0
	for key, bits := range ks.rx.tracked {
		if n >= trackedExpireLimit {
			return
		}
		n++
		left := bits
		for dbi := 0; dbi < NumDBs; dbi++ {
			if bits&(1<<dbi) == 0 {
				continue
			}
			e := ks.rawEntry(dbi, []byte(key))
			switch {
			case e == nil || e.expireAt == 0:
				left &^= 1 << dbi
			case expiredAt(e.expireAt, now):
				ks.expire(dbi, key) // calls the OnKeyTouched hooks
				ks.touchWatchers(dbi, []byte(key))
				left &^= 1 << dbi
			}
		}
		if left == 0 {
			delete(ks.rx.tracked, key)
			ks.rx.trackedN.Add(-1)
		} else {
			ks.rx.tracked[key] = left
		}
	}
}

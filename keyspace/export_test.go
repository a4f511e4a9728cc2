package keyspace

import (
	"fmt"
	"slices"

	"github.com/persimmon-db/persimmon/wal"
)

// Test hooks for the external tests (package keyspace_test).

// ObjectFirstSeg returns the oldest segment that may hold an operation of
// the collection at key; ok is false when key holds no collection.
func (ks *Keyspace) ObjectFirstSeg(db int, key []byte) (seg uint64, ok bool) {
	e := ks.lookup(db, key)
	if e == nil || e.obj == nil {
		return 0, false
	}
	return e.obj.firstSeg, true
}

// OldestSegment is the ID of the oldest segment of the arena.
func (ks *Keyspace) OldestSegment() uint64 { return ks.arena.Segments()[0].ID() }

// SetRecordLimit lowers the largest batch record payload Commit writes (a
// larger batch becomes a group of records), so tests can make groups of
// many records from small collections.
func (ks *Keyspace) SetRecordLimit(n int) { ks.recordLimit = n }

// RecordLimit is the largest batch record payload Commit writes.
const RecordLimit = maxRecordPayload

// AdvanceClock moves the keyspace's clock forward by ms milliseconds.
func (ks *Keyspace) AdvanceClock(ms int64) { ks.clockSkew.Add(ms) }

// CleanOldest cleans the oldest segment if it is sealed, whatever the
// space bound says; it reports whether it did.
func (ks *Keyspace) CleanOldest() bool {
	ks.cleanMu.Lock()
	defer ks.cleanMu.Unlock()
	segs := ks.arena.Segments()
	if len(segs) < 2 {
		return false
	}
	if _, sealed := segs[0].Sealed(); !sealed {
		return false
	}
	return ks.cleanSegment(segs[0])
}

// AdvanceLRUClock moves the access clock (OBJECT IDLETIME) sec seconds on.
func AdvanceLRUClock(sec int64) {
	lruSkew.Add(sec)
	tickLRUClock()
}

// AccessTableMax is the number of indexed keys whose access data is kept
// exactly (lru.go).
const AccessTableMax = accessTableMax

// KixCheckpoint checkpoints the key index as the background tick does.
func (ks *Keyspace) KixCheckpoint() error {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.kixCheckpoint()
}

// NextSetLoc is where Commit expects the first operation of the next
// batch to land (the access-data prefetch's address).
func (ks *Keyspace) NextSetLoc() uint64 { return ks.kix.endSeg<<40 | (ks.kix.endOff + wal.HeaderSize) }

// IndexedLoc is the location the key index holds for (db, key).
func (ks *Keyspace) IndexedLoc(db int, key []byte) (uint64, bool) { return ks.kixGet(db, key) }

// KillAtClose makes Close leave the key index at its last checkpoint, as
// a kill after it would (the log itself is closed as usual: every record
// stays).
func (ks *Keyspace) KillAtClose() {
	ks.mu.Lock()
	ks.noCloseCheckpoint = true
	ks.mu.Unlock()
}

// AnchorOf is the anchor of the DRAM entry of (db, key) (kixanchor.go),
// and whether the key index holds it under the anchor key.
func (ks *Keyspace) AnchorOf(db int, key []byte) (anchor uint64, indexed bool) {
	i, ok := ks.dbs[db].index[string(key)]
	if !ok || ks.dbs[db].entries[i].obj == nil {
		return 0, false
	}
	anchor = ks.dbs[db].entries[i].obj.anchor
	if ks.kixOn() {
		loc, ok := ks.kix.ix.Get(ks.kixAnchorKey(db, key))
		indexed = ok && loc == anchor
	}
	return anchor, indexed
}

// StateDump describes the whole keyspace (every database's keys in order,
// each with its type, expiry and value: a string's bytes, a collection's
// rebuild operations and its encoding) and its accounting (live bytes,
// keys with an expiry), for comparing two recoveries of one log.
func (ks *Keyspace) StateDump() string {
	var out []byte
	for db := range ks.dbs {
		var keys []string
		ks.Keys(db, func(k string) { keys = append(keys, k) })
		slices.Sort(keys)
		for _, k := range keys {
			e := ks.peek(db, []byte(k))
			if e == nil {
				continue
			}
			out = fmt.Appendf(out, "%d %q %s exp=%d ", db, k, ks.typeOf(e), e.expireAt)
			switch {
			case e.obj == nil:
				out = fmt.Appendf(out, "%q\n", ks.value(e))
			default:
				var b Batch
				e.obj.coll.rebuild(ks, &b, db, []byte(k))
				conv := false
				if c, ok := e.obj.coll.(convertible); ok {
					conv = c.converted()
				}
				out = fmt.Appendf(out, "conv=%v bytes=%d %x\n", conv, e.obj.bytes, b.buf)
			}
		}
		out = fmt.Appendf(out, "db %d: %d keys, %d expiring\n", db, ks.DBSize(db), ks.DBInfo(db).Expires)
	}
	return string(fmt.Appendf(out, "live bytes %d\n", ks.liveBytes))
}

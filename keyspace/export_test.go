package keyspace

import "github.com/persimmon-db/persimmon/wal"

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

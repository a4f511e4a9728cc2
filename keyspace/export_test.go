package keyspace

import (
	"fmt"
	"slices"

	"github.com/persimmon-db/persimmon/wal"
	"golang.org/x/sys/unix"
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

// RecordCacheEntries is the number of record cache entries of segment
// seg (all segments when seg is 0).
func (ks *Keyspace) RecordCacheEntries(seg uint64) int {
	c := ks.rc
	if c == nil {
		return 0
	}
	n := 0
	for _, s := range c.slots {
		if s.loc != 0 && (seg == 0 || s.loc>>40 == seg) {
			n++
		}
	}
	return n
}

// SegmentIDs are the ids of the arena's segments, oldest first.
func (ks *Keyspace) SegmentIDs() []uint64 {
	var ids []uint64
	for _, s := range ks.arena.Segments() {
		ids = append(ids, s.ID())
	}
	return ids
}

// ProtectSegments makes every segment's mapping unreadable (on) or
// readable and writable again: a read of a record's page while protected
// kills the process.
func (ks *Keyspace) ProtectSegments(on bool) error {
	prot := unix.PROT_READ | unix.PROT_WRITE
	if on {
		prot = unix.PROT_NONE
	}
	for _, s := range ks.arena.Segments() {
		if err := unix.Mprotect(s.Bytes(), prot); err != nil {
			return err
		}
	}
	return nil
}

// RecordCacheHas reports whether the record cache holds the operation at
// loc (without counting it as read).
func (ks *Keyspace) RecordCacheHas(loc uint64) bool { return ks.rc != nil && ks.rc.find(loc) >= 0 }

// PublishStats publishes the figures Stats reports of the tiers now.
func (ks *Keyspace) PublishStats() { ks.snapshotTiers() }

// PageOutAll asks the kernel to reclaim the pages of every segment and of
// the key index (MADV_PAGEOUT): they are then not resident.
func (ks *Keyspace) PageOutAll() error {
	for _, s := range ks.arena.Segments() {
		if err := unix.Madvise(s.Bytes(), unix.MADV_PAGEOUT); err != nil {
			return err
		}
	}
	if ks.kixOn() {
		return ks.kix.ix.PageOut()
	}
	return nil
}

// ForceRecordCache keeps the record cache in use whether or not the
// process is under memory pressure.
func (ks *Keyspace) ForceRecordCache() {
	ks.mu.Lock()
	ks.rcForce = true
	ks.useRecordCache()
	ks.Unlock()
}

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

package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/keyindex"
	"github.com/persimmon-db/persimmon/wal"
)

// The persistent key index (package keyindex; "kix" here), when attached
// (AttachIndex), holds every plain string key: a string without an
// expiry, whatever its database. Such a key has no entry in its db's
// DRAM tables: its slot names the set operation holding its value, and
// the key, its database and its size are read back from that operation.
// Everything else (collections, patched strings, keys with an expiry)
// keeps its DRAM entry as before; a key is in exactly one of the two.
//
// The index's key is the database byte followed by the key. Writes are
// staged with the LSN of their record (held until the commit record of a
// transaction group) and published once durable (keyindex's invariant).
// FLUSHDB, FLUSHALL and SWAPDB invalidate the index's checkpoint durably
// before they change the table in bulk (a crash before the next
// checkpoint rebuilds it from the log); SWAPDB first moves the indexed
// keys of both databases into DRAM entries, since their operations name
// the database they were written in.

// kixState is the keyspace's side of the index.
type kixState struct {
	ix         *keyindex.Index
	keyBuf     []byte // KeyAt's result
	lookBuf    []byte // the composite key of a lookup
	lastCP     uint64 // LSN of the last checkpoint
	replayCP   uint64 // recovery: records up to this LSN are in the index already
	applyingTo uint64 // recovery: records up to this LSN were being applied by a checkpoint (repair mode)
	repaired   bool
	report     IndexReport
	counts     [NumDBs]int // indexed keys per database
	lastDRAM   uint64      // DRAM entries at the last checkpoint

	endSeg, endOff uint64 // where the record after the last one appended (or replayed) starts

	firstTail uint64 // recovery: location of the first record replayed after the checkpoint
	replayed  int64  // recovery: records replayed into the index
	swept     int

	checkpoints  atomic.Int64
	lastCPMicros atomic.Int64
	snap         atomic.Pointer[IndexStats]
}

// Checkpoint user words (keyindex.Checkpoint.User).
const (
	cpDRAMKeys     = iota // keys with a DRAM entry at the checkpoint: a restart from it needs them all replayed
	cpLiveBytes           // ks.liveBytes
	cpSwappedSeg          // ks.swappedSeg
	cpFlushAllSeg         // ks.flushAllSeg
	cpMagic               // cpMagicValue: written by this keyspace
	cpDRAMKeysBase        // cpDRAMKeys of the checkpoint before (an applying block's base)
)

const cpMagicValue = 0x6b69_7831 // "kix1"

// kixOn reports whether the index is attached.
func (ks *Keyspace) kixOn() bool { return ks.kix.ix != nil }

// IndexKeyAt is the key index's KeyAt (keyindex.Options): the index key
// (database byte, then the key) of the set operation at loc; the bytes are
// valid until the next call.
func (ks *Keyspace) IndexKeyAt(loc uint64) ([]byte, bool) {
	o, err := ks.opAt(loc)
	if err != nil || o.kind != opSet {
		return nil, false
	}
	ks.kix.keyBuf = append(append(ks.kix.keyBuf[:0], byte(o.db)), o.key...)
	return ks.kix.keyBuf, true
}

func (ks *Keyspace) kixComposite(dbi int, key []byte) []byte {
	ks.kix.lookBuf = append(append(ks.kix.lookBuf[:0], byte(dbi)), key...)
	return ks.kix.lookBuf
}

// kixGet returns the location of the indexed plain string (dbi, key).
func (ks *Keyspace) kixGet(dbi int, key []byte) (uint64, bool) {
	if !ks.kixOn() {
		return 0, false
	}
	return ks.kix.ix.Get(ks.kixComposite(dbi, key))
}

// kixEntry makes a transient entry for an indexed key (its fields are
// read from the set operation; changing them changes nothing).
func (ks *Keyspace) kixEntry(key string, loc uint64) *entry {
	o, err := ks.opAt(loc)
	if err != nil {
		panic(fmt.Sprintf("keyspace: the key index points at a bad operation: %v", err))
	}
	return &entry{key: key, loc: loc, size: uint32(o.size), kix: true}
}

// kixWrite records (dbi, key) -> loc (0: deleted) in the index: staged
// until the next checkpoint, or, while recovery replays the records a
// checkpoint was applying (AttachIndex), stored at once in repair mode.
func (ks *Keyspace) kixWrite(dbi int, key []byte, loc uint64) {
	k := ks.kixComposite(dbi, key)
	var err error
	if loc != 0 {
		ks.kix.ix.SetNewest(loc >> 40)
	}
	if ks.replaying && ks.curLSN <= ks.kix.applyingTo {
		err = ks.kix.ix.Apply(k, loc)
	} else {
		err = ks.kix.ix.Stage(k, loc)
	}
	if err != nil {
		panic(fmt.Sprintf("keyspace: key index: %v", err))
	}
}

// kixRemove removes the indexed key (dbi, key) if it is there, with the
// accounting removeKey does; it reports whether it was.
func (ks *Keyspace) kixRemove(dbi int, key []byte) bool {
	if ks.kixRepairing() {
		ks.kixWrite(dbi, key, 0) // repair mode removes every copy; counts come from the checkpoint
		return false
	}
	loc, ok := ks.kixGet(dbi, key)
	if !ok {
		return false
	}
	e := ks.kixEntry("", loc)
	ks.liveBytes -= int64(e.size)
	ks.setDied(loc)
	ks.kixWrite(dbi, key, 0)
	ks.kix.counts[dbi]--
	return true
}

// kixRepairing reports whether recovery is replaying the records a
// checkpoint was applying when the process stopped: the table may hold
// any part of their writes, so nothing is counted (the checkpoint's
// counters already include them).
func (ks *Keyspace) kixRepairing() bool {
	return ks.replaying && ks.kix.applyingTo != 0 && ks.curLSN <= ks.kix.applyingTo
}

// kixMaterialize moves the indexed key of e (a transient entry) into a
// DRAM entry of its db and returns that entry.
func (ks *Keyspace) kixMaterialize(dbi int, e *entry) *entry {
	ks.kixWrite(dbi, []byte(e.key), 0)
	ks.kix.counts[dbi]--
	d := ks.dbs[dbi]
	d.insert(entry{key: e.key, loc: e.loc, size: e.size})
	return &d.entries[d.index[e.key]]
}

// kixInvalidate makes the index's checkpoint void (durably) before a bulk
// change, so that a crash before the next checkpoint rebuilds the index
// from the log, and publishes every staged write.
func (ks *Keyspace) kixInvalidate() {
	if err := ks.kix.ix.Invalidate(); err != nil {
		panic(fmt.Sprintf("keyspace: key index: %v", err))
	}
}

// kixFlushDB removes every indexed key of the databases in dbs (all of
// them for nil), calling each for each key removed.
func (ks *Keyspace) kixFlushDB(dbs []int, each func(key []byte, loc uint64)) {
	ks.kixInvalidate()
	if dbs == nil && each == nil {
		ks.kix.ix.Clear()
		ks.kix.counts = [NumDBs]int{}
		return
	}
	ks.kix.ix.RemoveIf(func(loc uint64) bool {
		o, err := ks.opAt(loc)
		if err != nil || dbs != nil && !slices.Contains(dbs, o.db) {
			return false
		}
		if each != nil {
			each(o.key, loc)
		}
		return true
	})
	for _, d := range dbs {
		ks.kix.counts[d] = 0
	}
}

// kixLen is the number of indexed keys of dbi.
func (ks *Keyspace) kixLen(dbi int) int {
	if !ks.kixOn() {
		return 0
	}
	return ks.kix.counts[dbi]
}

// kixRandom returns a random indexed key of dbi.
func (ks *Keyspace) kixRandom(dbi int) (string, bool) {
	if ks.kixLen(dbi) == 0 {
		return "", false
	}
	found := ""
	ok := false
	ks.kix.ix.RangeStaged(func(k string, loc uint64) bool {
		if loc != 0 && int(k[0]) == dbi && rand.IntN(4) == 0 {
			found, ok = k[1:], true
			return false
		}
		return true
	})
	if ok {
		return found, true
	}
	slots := ks.kix.ix.Stats().Slots
	for tries := 0; tries < 64; tries++ {
		loc, any := ks.kix.ix.RandomLoc(rand.IntN(slots))
		if !any {
			break
		}
		if o, err := ks.opAt(loc); err == nil && o.db == dbi {
			if l, ok := ks.kixGet(dbi, o.key); ok && l == loc {
				return string(o.key), true
			}
		}
	}
	// Few keys of dbi among many: walk.
	var key string
	ks.kixKeys(dbi, func(k string) bool { key = k; return false })
	return key, key != ""
}

// kixKeys calls fn for every indexed key of dbi until fn returns false.
func (ks *Keyspace) kixKeys(dbi int, fn func(key string) bool) {
	if !ks.kixOn() {
		return
	}
	var staged []string
	ks.kix.ix.RangeStaged(func(k string, loc uint64) bool {
		if loc != 0 && int(k[0]) == dbi {
			staged = append(staged, k[1:])
		}
		return true
	})
	for _, k := range staged {
		if !fn(k) {
			return
		}
	}
	ks.kix.ix.Range(func(loc uint64) bool {
		o, err := ks.opAt(loc)
		if err != nil || o.db != dbi {
			return true
		}
		if l, ok := ks.kixGet(dbi, o.key); !ok || l != loc {
			return true // superseded by a staged write (visited above) or deleted
		}
		return fn(string(o.key))
	})
}

// AttachIndex attaches the persistent key index to a keyspace made by
// NewRecovering, before any record is replayed; cp and ok are what
// keyindex.Open found. If the checkpoint can be trusted (written by this
// keyspace, with no DRAM entry at the time: every key then was a plain
// string in the index) the keyspace takes its counters from it and from
// returns the checkpoint's LSN: recovery replays only the records after
// it (ReplayRecord skips the others), in repair mode. Otherwise the index
// is emptied and from is 0: the whole log is replayed into it.
func (ks *Keyspace) AttachIndex(ix *keyindex.Index, cp keyindex.Checkpoint, ok bool) (from uint64, err error) {
	ks.kix.ix = ix
	trusted := ok && cp.User[cpMagic] == cpMagicValue && cp.User[cpDRAMKeys] == 0
	if trusted && cp.Applying && (cp.BaseLSN == 0 || cp.User[cpDRAMKeysBase] != 0) {
		trusted = false // no base to start from, or one with DRAM entries
	}
	if trusted {
		ks.liveBytes = int64(cp.User[cpLiveBytes])
		ks.swappedSeg = cp.User[cpSwappedSeg]
		ks.flushAllSeg = cp.User[cpFlushAllSeg]
		for i := range ks.kix.counts {
			ks.kix.counts[i] = int(cp.User[cpCounts+i])
		}
		from, ks.kix.endSeg, ks.kix.endOff = cp.LSN, cp.Seg, cp.Off
		if cp.Applying {
			ix.SetRepair(true)
			ks.kix.applyingTo, ks.kix.repaired = cp.LSN, true
			from, ks.kix.endSeg, ks.kix.endOff = cp.BaseLSN, cp.BaseSeg, cp.BaseOff
		}
		ks.kix.replayCP, ks.kix.lastCP = from, cp.LSN
		return from, nil
	}
	if ok {
		if err := ix.Invalidate(); err != nil {
			return 0, err
		}
	}
	ix.Clear()
	return 0, nil
}

// cpCounts is the first of NumDBs user words holding the indexed keys
// per database.
const cpCounts = 8

// kixAppended notes the record of n payload bytes just appended at loc:
// a checkpoint at its LSN says replay starts after it.
func (ks *Keyspace) kixAppended(loc wal.Location, n int) {
	ks.kix.endSeg, ks.kix.endOff = loc.Seg.ID(), uint64(loc.Off+wal.RecordSize(n))
}

// kixCheckpoint makes the index consistent as of the last record appended
// (waiting for it to be durable) and checkpoints it, unless nothing was
// written since the last checkpoint. Call with the lock held, outside any
// transaction group (its LSN must be a group boundary).
func (ks *Keyspace) kixCheckpoint() error {
	if !ks.kixOn() || ks.txnOpen || ks.failed != nil || ks.wal == nil {
		return nil
	}
	c := ks.wal.LastLSN()
	if last, _ := ks.kix.ix.Checkpointed(); c == ks.kix.lastCP && ks.kix.ix.Valid() && !last.Applying && ks.kix.ix.Staged() == 0 {
		return nil
	}
	if err := ks.wal.WaitDurable(c); err != nil {
		return err
	}
	cp := keyindex.Checkpoint{LSN: c, Seg: ks.kix.endSeg, Off: ks.kix.endOff}
	dram := 0
	for i, d := range ks.dbs {
		dram += len(d.entries)
		cp.User[cpCounts+i] = uint64(ks.kix.counts[i])
	}
	cp.User[cpDRAMKeys] = uint64(dram)
	cp.User[cpDRAMKeysBase] = ks.kix.lastDRAM
	cp.User[cpLiveBytes] = uint64(ks.liveBytes)
	cp.User[cpSwappedSeg] = ks.swappedSeg
	cp.User[cpFlushAllSeg] = ks.flushAllSeg
	cp.User[cpMagic] = cpMagicValue
	start := time.Now()
	if err := ks.kix.ix.Checkpoint(cp); err != nil {
		return err
	}
	ks.kix.lastCP, ks.kix.lastDRAM = c, uint64(dram)
	ks.kix.checkpoints.Add(1)
	ks.kix.lastCPMicros.Store(time.Since(start).Microseconds())
	return nil
}

// kixFinishReplay ends recovery's replay after a checkpoint: the slots
// stored after it that a crash left cut off or duplicated are removed.
func (ks *Keyspace) kixFinishReplay() error {
	if !ks.kixOn() {
		return nil
	}
	defer ks.kix.ix.SetRepair(false)
	ks.kix.applyingTo = 0
	if ks.kix.replayCP == 0 || ks.kix.firstTail == 0 || !ks.kix.ix.Repairing() {
		return nil
	}
	n, err := ks.kix.ix.Sweep(ks.kix.firstTail)
	ks.kix.swept = n
	return err
}

// IndexReport describes how recovery used the key index.
type IndexReport struct {
	Attached   bool   // the index is on
	FromLSN    uint64 // records up to this LSN came from the index's checkpoint (0: rebuilt from the whole log)
	Replayed   int64  // records replayed into it
	Swept      int    // leftover slots removed after the replay
	Repaired   bool   // a checkpoint was being applied: the table was repaired from FromLSN on
	TableBytes int64  // size of the index file
}

// IndexReport returns the key index's part of the recovery (as of Start;
// safe without the lock).
func (ks *Keyspace) IndexReport() IndexReport { return ks.kix.report }

// kixReport records the recovery's figures (Start, lock held).
func (ks *Keyspace) kixReport() {
	if ks.kixOn() {
		ks.kix.report = IndexReport{Attached: true, FromLSN: ks.kix.replayCP, Repaired: ks.kix.repaired, Replayed: ks.kix.replayed, Swept: ks.kix.swept, TableBytes: ks.kix.ix.Stats().FileBytes}
	}
}

// IndexStats is the key index's part of Stats.
type IndexStats struct {
	On                   bool
	FileBytes            int64 // bytes of the mapped index file (file-backed, not heap)
	Slots                int64 // slots in the table
	Keys                 int64 // plain string keys in it
	Staged               int64 // keys written since the last checkpoint (heap overlay)
	Checkpoints          int64 // checkpoints since start
	CheckpointLSN        uint64
	LastCheckpointMicros int64 // duration of the last checkpoint
}

// snapshotIndex publishes the index's figures for Stats (lock held).
func (ks *Keyspace) snapshotIndex() {
	if !ks.kixOn() {
		return
	}
	st := ks.kix.ix.Stats()
	n := 0
	for _, c := range ks.kix.counts {
		n += c
	}
	ks.kix.snap.Store(&IndexStats{On: true, FileBytes: st.FileBytes, Slots: int64(st.Slots), Keys: int64(n), Staged: int64(st.Staged),
		Checkpoints: ks.kix.checkpoints.Load(), CheckpointLSN: ks.kix.lastCP, LastCheckpointMicros: ks.kix.lastCPMicros.Load()})
}

// PlainStrings calls fn for every key that is a plain string (no expiry,
// not patched) in a DRAM entry: what the key index holds when it is
// attached. For persimmon-check, which replays the log into a keyspace
// without the index and compares.
func (ks *Keyspace) PlainStrings(fn func(db int, key string, loc uint64)) {
	for dbi, d := range ks.dbs {
		for i := range d.entries {
			if e := &d.entries[i]; e.obj == nil && e.expireAt == 0 {
				fn(dbi, e.key, e.loc)
			}
		}
	}
}

// DRAMKeys is the number of keys in DRAM entries (collections, keys with
// an expiry, patched strings; every key when the index is not attached).
func (ks *Keyspace) DRAMKeys() int {
	n := 0
	for _, d := range ks.dbs {
		n += len(d.entries)
	}
	return n
}

// IndexCheckpointUser decodes the keyspace's counters in a key index
// checkpoint (persimmon-check): keys in DRAM entries at the checkpoint,
// indexed keys per database, whether this keyspace wrote it.
func IndexCheckpointUser(cp keyindex.Checkpoint) (dramKeys uint64, counts [NumDBs]uint64, ours bool) {
	for i := range counts {
		counts[i] = cp.User[cpCounts+i]
	}
	return cp.User[cpDRAMKeys], counts, cp.User[cpMagic] == cpMagicValue
}

package keyindex

import (
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/persimmon-db/persimmon/pmem"
)

// Incremental growth.
//
// A growth in one go (grow) reads every slot, reads every key back from
// its record to rehash it, and persists the whole new file, all with the
// caller's lock held: at millions of keys a stall of a second or more.
// Instead, once live slots and tombstones reach growStart of the table,
// the caller drives a migration in small steps (GrowStep, under its lock
// like every other call), each copying up to a budget of slots into the
// new table in the side file, which nothing else reads. The old table
// stays the only one lookups and checkpoints use; every Apply to it while
// a migration runs is also recorded in the migration's delta. When every
// slot is copied, the caller persists the whole side file without its lock
// (a GrowJob: nothing else writes it), then further steps apply the delta
// to the new table, up to a budget of writes each, in repair mode
// (scanning a key's whole probe run and tombstoning every duplicate: a key
// may have been copied twice, from its old slot and from a slot it was
// re-inserted in after it was deleted; the delta's newest state of the
// key wins; the delta grows meanwhile and is applied in order), another
// GrowJob persists the pages that changed if they are many, and the last
// step applies what is left of the delta, persists the pages that changed
// since, writes the current checkpoint block into it (the new
// table then holds exactly the old one's state, which between checkpoints
// is the block's), renames it over the table and syncs the directory, as
// grow does. The crash invariants are grow's: before the rename the old
// file stands (the side file is removed at Open), after it the new one,
// each valid as of the same block.
//
// The old table may fill up to growLimit while the migration runs; past
// that, Apply finishes the migration at once (grow's stall, as a last
// resort). A bulk change (Clear, RemoveIf, Sweep) abandons a migration.

const (
	growStartNum, growDen = 5, 8 // a migration starts at 5/8 of the slots used
	growLimitNum          = 7    // and must end before 7/8
)

// migration is a growth in progress.
type migration struct {
	nx         *Index        // the new table, in the side file
	pos        int           // the next old slot to copy
	delta      deltaLog      // the writes applied to the old table since the copy started
	persisted  bool          // the whole side file was persisted (GrowJob)
	persisting bool          // a GrowJob is running without the lock
	jobDone    chan struct{} // closed when that GrowJob's Run returns
	removed    []uint64      // segments removed since the copy started (SegmentRemoved)
	dropped    int           // removed[:dropped] are dropped from nx already
	applied    int           // the delta's first applied writes are applied to nx already
	abandoned  bool          // dropped while persisting: EndGrowPersist unmaps it
}

// Growing reports whether a migration is in progress.
func (ix *Index) Growing() bool { return ix.mig != nil }

// GrowPhase says what a migration needs next from its caller.
type GrowPhase int

// GrowPhase values.
const (
	GrowIdle            GrowPhase = iota // no migration (none needed)
	GrowCopying                          // call GrowStep again
	GrowNeedsPersist                     // run BeginGrowPersist's job without the lock, then GrowStep
	GrowWaitsCheckpoint                  // a checkpoint's job is in flight (or its steps, for the swap): call GrowStep again a little later
)

// GrowStep starts a migration if the table needs one, or advances the one
// in progress by up to budget slots copied; once every slot is copied and
// the side file persisted (a GrowJob), it applies the delta and swaps
// the tables. Call it with the caller's lock held, outside Checkpoint, as
// every other method. It returns what the migration needs next.
func (ix *Index) GrowStep(budget int) (GrowPhase, error) {
	if ix.job != nil && ix.job.fz != nil {
		// A frozen job stores into this table without the lock: a copy
		// now would miss its stores (they are not in a delta).
		return GrowWaitsCheckpoint, nil
	}
	m := ix.mig
	if m == nil {
		if (ix.live+ix.tombs)*growDen < len(ix.slots)*growStartNum || ix.repair || !ix.valid {
			return GrowIdle, nil
		}
		capacity := uint64(len(ix.slots))
		if ix.live*8 >= len(ix.slots)*3 {
			capacity *= 2 // else the same size: tombstones dropped
		}
		nx, err := create(ix.path, ix.opts, capacity, Checkpoint{}, false)
		if err != nil {
			return GrowIdle, err
		}
		m = &migration{nx: nx}
		ix.mig = m
		ix.hook("grow:started")
	}
	if m.pos < len(ix.slots) {
		end := min(len(ix.slots), m.pos+budget)
		for ; m.pos < end; m.pos++ {
			ix.copySlot(m.nx, ix.slots[m.pos])
		}
		ix.hook("grow:step")
		if m.pos < len(ix.slots) {
			return GrowCopying, nil
		}
	}
	if !m.persisted {
		return GrowNeedsPersist, nil
	}
	if ix.job != nil {
		// What is left (the delta, the swap, or a growth in one go if
		// the delta overfills) would store into nx from this table's
		// state or swap the tables: not while a checkpoint's job is
		// persisting this table without the lock (the grower would
		// wait for it holding the caller's lock).
		return GrowWaitsCheckpoint, nil
	}
	if m.applied < m.delta.n {
		// The delta in steps too: after a bulk load it holds a write for
		// most keys, and applying it whole made the last step one hold
		// of 100-200 ms at 1,000,000 keys. Nothing else reads nx.
		// Checked a step at a time: the whole delta's length counts a
		// key written again (or one the copy has) as a new slot.
		if ix.deltaOverfills(min(budget, m.delta.n-m.applied)) {
			if ix.fz != nil {
				return GrowWaitsCheckpoint, nil // a growth in one go would finish the checkpoint in steps at once
			}
			ix.abandonMigration()
			return GrowIdle, ix.grow()
		}
		if err := ix.applyDelta(budget); err != nil {
			ix.abandonMigration()
			return GrowIdle, err
		}
		return GrowCopying, nil
	}
	if dirtyPages(m.nx.dirty) > finishPages && m.nx.opts.Mode == pmem.ModePmem && !m.nx.region.DAX() {
		return GrowNeedsPersist, nil // the delta's pages written back without the lock first
	}
	if ix.fz != nil {
		// The swap settles: it would store the rest of a checkpoint in
		// steps and persist it at once. The delta above goes on between
		// steps (their stores join it); the swap waits for the gap
		// between two checkpoints.
		return GrowWaitsCheckpoint, nil
	}
	if err := ix.finishMigration(); err != nil {
		return GrowIdle, err
	}
	return GrowIdle, nil
}

// GrowJob is the persist of a migration's side file, run without the
// caller's lock (it takes as long as writing the file out).
type GrowJob struct {
	ix    *Index
	m     *migration
	pages []uint64 // nil: the whole side file; else these dirty pages of it
}

// finishPages is the most dirty pages of the side file the last step
// persists (and writes back) under the lock; more are a GrowJob first.
const finishPages = 64

func dirtyPages(bitmap []uint64) int {
	n := 0
	for _, w := range bitmap {
		n += bits.OnesCount64(w)
	}
	return n
}

// deltaOverfills reports whether applying n more delta writes could take
// the new table to its growth point (a same-size rebuild outrun by
// inserts): nx must never grow itself. A write uses at most one more slot.
func (ix *Index) deltaOverfills(n int) bool {
	nx := ix.mig.nx
	return (nx.live+nx.tombs+n+1)*4 > len(nx.slots)*3
}

// applyDelta drops from the new table the copies naming segments removed
// since the last call, then applies up to budget delta writes to it in
// repair mode (budget < 0: all of them). The drop comes before the delta
// writes recorded after the removal (the cleaner's checkpoint of a
// segment's moved keys and the removal share one lock hold), as one
// finish in one go does it.
func (ix *Index) applyDelta(budget int) error {
	m := ix.mig
	nx := m.nx
	nx.newest = ix.newest
	if len(m.removed) > m.dropped {
		nx.dropRemoved(m.removed[m.dropped:])
		m.dropped = len(m.removed)
	}
	end := m.delta.n
	if budget >= 0 {
		end = min(end, m.applied+budget)
	}
	nx.repair = true
	defer func() { nx.repair = false }()
	for ; m.applied < end; m.applied++ {
		key, loc, expiring := m.delta.next()
		if err := nx.Apply(key, loc, expiring); err != nil {
			return err
		}
	}
	ix.hook("grow:delta")
	return nil
}

// BeginGrowPersist (under the lock, after GrowStep returned GrowNeedsPersist)
// returns the job to Run without the lock; EndGrowPersist, under the lock
// again, records its outcome. Nothing else writes the side file meanwhile
// (deltas wait in memory), and a migration abandoned meanwhile keeps its
// mapping until EndGrowPersist.
func (ix *Index) BeginGrowPersist() *GrowJob {
	if ix.mig == nil {
		return &GrowJob{}
	}
	ix.mig.persisting = true
	ix.mig.jobDone = make(chan struct{})
	j := &GrowJob{ix: ix, m: ix.mig}
	if ix.mig.persisted {
		// The delta's pages: nx.dirty stays set until EndGrowPersist,
		// for a finish in one go (Apply) meanwhile.
		j.pages = slices.Clone(ix.mig.nx.dirty)
	}
	return j
}

// Run persists the side file (without the lock).
func (j *GrowJob) Run() error {
	if j.m == nil {
		return nil
	}
	defer close(j.m.jobDone)
	if j.pages != nil {
		return j.m.nx.persistPagesWritten(j.pages)
	}
	if err := persistWhole(j.m.nx); err != nil {
		return err
	}
	j.ix.hook("grow:persisted")
	return nil
}

// EndGrowPersist records the job's outcome (under the lock): on success
// the next GrowStep finishes the migration; on an error the migration is
// abandoned (the error is returned).
func (ix *Index) EndGrowPersist(j *GrowJob, err error) error {
	m := j.m
	if m == nil {
		return nil
	}
	m.persisting = false
	if m.abandoned {
		m.nx.region.Close()
		return nil
	}
	if ix.mig != m {
		return nil // finished at once by Apply meanwhile
	}
	if err != nil {
		ix.abandonMigration()
		return err
	}
	m.persisted = true
	clear(m.nx.dirty) // persisted (whole, or the pages of j.pages, all that was dirty: nothing wrote nx meanwhile)
	return nil
}

// persistWhole persists all of nx's file (and, for pmem mode off DAX,
// writes it back: see finishFile).
func persistWhole(nx *Index) error {
	if err := nx.region.Persist(0, nx.region.Size()); err != nil {
		return err
	}
	if nx.opts.Mode == pmem.ModePmem && !nx.region.DAX() {
		return nx.region.Msync(0, nx.region.Size())
	}
	return nil
}

// copySlot places the live slot word w of ix into nx by its key's home.
func (ix *Index) copySlot(nx *Index, w uint64) {
	if w == 0 || w&offMask == 0 {
		return
	}
	k, ok := ix.opts.KeyAt(ix.unpack(w))
	if !ok {
		return // no key: a slot no lookup can match
	}
	j := xxhash.Sum64(k) & nx.mask
	for nx.slots[j] != 0 {
		j = (j + 1) & nx.mask
	}
	nx.store(int(j), w)
	nx.live++
}

// finishMigration applies the delta to the new table, persists it with the
// current block and swaps it in (see the comment at the top).
func (ix *Index) finishMigration() error {
	ix.settle() // the swap closes this table's mapping and copies its block
	m := ix.mig
	nx := m.nx
	if m.persisting {
		// Finishing at once (Apply) while a GrowJob persists nx without
		// the lock: wait for it, since what follows writes nx's fields,
		// may unmap its region (a growth in one go) and swaps it in. The
		// job takes no lock, so waiting under the caller's cannot
		// deadlock; its work is redone below (m.persisted is still false
		// until EndGrowPersist).
		<-m.jobDone
	}
	for ; m.pos < len(ix.slots); m.pos++ { // finishing at once (Apply): the rest of the copy
		ix.copySlot(nx, ix.slots[m.pos])
	}
	if ix.deltaOverfills(m.delta.n - m.applied) {
		// The delta could overfill the new table (a same-size rebuild
		// outrun by inserts): grow in one go instead.
		ix.abandonMigration()
		return ix.grow()
	}
	if err := ix.applyDelta(-1); err != nil { // the rest of it
		ix.abandonMigration()
		return err
	}
	if !m.persisted {
		if err := persistWhole(nx); err != nil {
			ix.abandonMigration()
			return err
		}
	} else if err := nx.persistDirtyWritten(); err != nil {
		ix.abandonMigration()
		return err
	}
	nx.cp, nx.hasCP, nx.valid = ix.cp, ix.hasCP, ix.valid
	if nx.hasCP {
		nx.tombs = 0
		nx.writeBlock(blockOff(nx.cp.gen), nx.cp) // with the new table's counts
		if err := nx.region.Persist(0, headerSize); err != nil {
			ix.abandonMigration()
			return err
		}
	}
	if err := nx.renameOver(); err != nil {
		ix.abandonMigration()
		return err
	}
	ix.mig = nil
	ix.region.Close()
	nx.opts, nx.ov, nx.repair, nx.Grows, nx.newest, nx.last = ix.opts, ix.ov, ix.repair, ix.Grows+1, ix.newest, ix.last
	nx.fz, nx.spareOv = ix.fz, ix.spareOv // a swap inside a checkpoint's step: the rest of its writes go to nx
	nx.cp, nx.hasCP = ix.cp, ix.hasCP
	nx.lockBudget = ix.lockBudget
	*ix = *nx
	ix.relockAfterSwap()
	return nil
}

// persistDirtyWritten persists the pages written since the last persist
// and, for pmem mode off DAX, writes them back too (they must be on disk
// before the rename). A run of consecutive dirty pages is one Persist and
// one Msync: after a bulk load the delta dirties most pages, and one
// msync call a page made the growth's last step (under the caller's
// lock) take most of a second at 1,000,000 keys.
func (ix *Index) persistDirtyWritten() error {
	if ix.opts.Mode != pmem.ModePmem || ix.region.DAX() {
		return ix.persistDirty()
	}
	if err := ix.persistPagesWritten(ix.dirty); err != nil {
		return err
	}
	clear(ix.dirty)
	return nil
}

// persistPagesWritten persists and writes back the pages set in bitmap
// (pmem mode off DAX; it does not clear it).
func (ix *Index) persistPagesWritten(bitmap []uint64) error {
	pages := int(ix.region.Size() / pageSize)
	dirty := func(p int) bool { return p < pages && bitmap[p/64]&(1<<(p%64)) != 0 }
	for p := 0; p < len(bitmap)*64 && p < pages; {
		if !dirty(p) {
			p++
			continue
		}
		end := p + 1
		for dirty(end) {
			end++
		}
		off, n := int64(p)*pageSize, int64(end-p)*pageSize
		if err := ix.region.Persist(off, n); err != nil {
			return err
		}
		if err := ix.region.Msync(off, n); err != nil {
			return err
		}
		p = end
	}
	return nil
}

// renameOver renames the side file over the table and syncs the directory
// (finishFile's last steps).
func (ix *Index) renameOver() error {
	ix.hook("grow:built")
	if err := os.Rename(ix.path+".grow", ix.path); err != nil {
		return err
	}
	if err := pmem.SyncDir(filepath.Dir(ix.path)); err != nil {
		return err
	}
	ix.hook("grow:renamed")
	return nil
}

// abandonMigration drops the migration in progress: its side file is
// removed and unmapped (a bulk change, an error), or unmapped by
// EndGrowPersist if a GrowJob is using it.
func (ix *Index) abandonMigration() {
	m := ix.mig
	if m == nil {
		return
	}
	os.Remove(ix.path + ".grow") // the mapping outlives the name
	if m.persisting {
		m.abandoned = true
	} else {
		m.nx.region.Close()
	}
	ix.mig = nil
}

// SegmentRemoved tells the index that the caller removed segment id (after
// a checkpoint that moved every slot naming it): a migration's copies made
// before may still name it, and are dropped before its delta is applied
// (a delta write for such a key cannot match a copy whose key is gone).
func (ix *Index) SegmentRemoved(id uint64) {
	if ix.mig != nil {
		ix.mig.removed = append(ix.mig.removed, id)
	}
}

// dropRemoved tombstones every live slot naming one of the segments ids
// (slot words only: no key is read).
func (ix *Index) dropRemoved(ids []uint64) {
	for i, w := range ix.slots {
		if w == 0 || w&offMask == 0 {
			continue
		}
		seg := ix.unpack(w) >> 40
		for _, id := range ids {
			if seg == id {
				ix.store(i, tombstone)
				ix.live--
				ix.tombs++
				break
			}
		}
	}
}

// recordDelta notes a write applied to the table while a migration runs.
func (ix *Index) recordDelta(key []byte, loc uint64, expiring bool) {
	if ix.mig != nil {
		ix.mig.delta.add(key, loc, expiring)
	}
}

// WantsGrow reports whether GrowStep has work: a migration in progress,
// or a table used past growStart.
func (ix *Index) WantsGrow() bool {
	return ix.mig != nil || ix.valid && !ix.repair && (ix.live+ix.tombs)*growDen >= len(ix.slots)*growStartNum
}

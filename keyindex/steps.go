package keyindex

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// A checkpoint whose stores leave the caller's lock.
//
// BeginCheckpoint stores every staged write into the table in one call,
// under the caller's lock: at 10,000,000 keys nearly every write lands on
// a page of its own (a cache and TLB miss each, 0.2-0.7 µs), so the
// caller's lock is held for the whole batch, and every command waits it
// out (issue 11's target 5, the SET p99.9 tail); on a loaded machine the
// holder is also descheduled inside it now and then, for milliseconds.
// FreezeCheckpoint instead persists the applying block and freezes the
// overlay as the checkpoint's writes (a new, empty overlay takes the
// writes that follow). Then either:
//
//   - the stores are the job's (a frozen job): the writes whose hint is
//     unknown are stored at the freeze (their stores read keys back
//     through KeyAt, which needs the caller's lock), the rest by the
//     job's Run, without the lock, before it persists the pages: one
//     atomic 8-byte store a slot, matching a key's slot by its hint alone.
//     Only when no migration runs or is due (its copy would miss them:
//     GrowStep waits while such a job is in flight), so the table cannot
//     reach its growth point with them either, no cursor wants Placed
//     notes (SetPlaced settles first) and not in repair mode. Lookups and
//     scans (ScanSlots, ScanExpiring, ScanHomes, Range, RandomLoc) read
//     slot words atomically (word) meanwhile; ScanHomes gives a key with
//     a frozen write from the staged writes, never from the table, whose
//     slot for it may or may not be stored yet. Nothing else stores into
//     the table until the job has ended (every such call settles first);
//   - or, when one of those does not hold, CheckpointStep stores up to a
//     budget of the frozen writes at a time, under the caller's lock,
//     which the caller releases between steps.
//
// While a frozen checkpoint is being stored, lookups consult the overlay,
// then the frozen writes, then the table: a key the frozen writes hold
// answers from them whether or not its store has happened yet, and the
// stores touch only the slots of the frozen keys (and empty slots or
// tombstones they take), never the probe run of another key, since no
// store empties a slot. The file's block is the applying one from the
// freeze until the job of the last step has ended, exactly as for
// BeginCheckpoint's apply and job: a crash meanwhile leaves B's state plus
// any subset of the writes up to C, all durable. Nothing else stores into
// the table in between: Apply and every bulk change (Clear, Invalidate,
// RemoveIf, Sweep), growth in one go and a migration's swap, the next
// checkpoint and Close first finish the frozen writes and their job
// (Settle); a migration copies and records deltas between steps as it
// does between checkpoints, but waits with its delta and swap
// (GrowWaitsCheckpoint).

// frozen is a checkpoint whose staged writes are being stored in steps.
type frozen struct {
	ov      overlay    // the checkpoint's writes, in staging order
	next    int        // ov.ents[:next] are stored (in steps)
	async   bool       // a frozen job's: its Run stores the hinted writes (see storeAsync)
	cp      Checkpoint // the final block to write (its generation set by the job)
	onEnd   func(err error)
	storing bool // a step is storing (a growth in one go inside it settles: nothing to finish)
	staged  int
	apply   time.Duration // the steps' time so far
	stepMax time.Duration
	steps   int
}

// FreezeCheckpoint begins a checkpoint whose stores leave the lock (see
// the comment above), under the caller's lock: it waits for a checkpoint
// still in flight (Settle), persists the applying block and freezes the
// staged writes. If it returns a job, Run it without the lock (it stores
// the frozen writes, then persists as BeginCheckpoint's) and end it under
// the lock; else call CheckpointStep, under the lock, until it returns a
// job or says no more. onEnd becomes the job's OnEnd, whoever ends it.
// With nothing staged it freezes nothing: the first step returns the job.
func (ix *Index) FreezeCheckpoint(cp Checkpoint, onEnd func(err error)) (*CheckpointJob, error) {
	if err := ix.Settle(); err != nil {
		return nil, err
	}
	cp.Applying, cp.BaseLSN, cp.BaseSeg, cp.BaseOff = false, 0, 0, 0
	if ix.ov.len() > 0 {
		if err := ix.putApplying(cp); err != nil {
			return nil, err
		}
	}
	fz := &frozen{cp: cp, onEnd: onEnd, staged: ix.ov.len()}
	if ix.ov.len() > 0 {
		// The overlay becomes the frozen writes, and the spare one (the
		// last frozen, reset) takes the writes from now on.
		fz.ov, ix.ov = ix.ov, ix.spareOv
		ix.spareOv = overlay{gen: fz.ov.gen + 1}
		ix.ov.gen = fz.ov.gen + 1 // RangeStaged's walks end at a change of overlay
		ix.forget()
	}
	ix.fz = fz
	n := fz.ov.len()
	if n == 0 || ix.mig != nil || ix.repair || ix.opts.Placed != nil || (ix.live+ix.tombs+n)*growDen >= len(ix.slots)*growStartNum {
		// In steps: a migration runs or is due (its copy cannot run
		// beside a frozen job, GrowStep waits for it: with a job in
		// flight at every try during a bulk load the table reached its
		// growth point, and a growth in one go inside a step held the
		// lock for 4 s at 10,000,000 keys), or Placed notes are wanted.
		return nil, nil
	}
	// A frozen job. The writes without a hint first, here: each store
	// adds at most one slot, so none of them grows the table.
	t0 := time.Now()
	fz.storing = true
	for i := range fz.ov.ents {
		if s := &fz.ov.ents[i]; !s.hinted {
			if err := ix.apply(s.hash, fz.ov.key(i), s.loc, s.expiring, 0, false); err != nil {
				fz.storing = false
				ix.unfreeze(fz)
				return nil, err
			}
		}
	}
	fz.storing = false
	ix.forget()
	fz.async, fz.apply = true, time.Since(t0)
	ix.last = CheckpointTimes{Staged: fz.staged}
	j := ix.newJob(fz.cp)
	j.fz, j.newest, j.OnEnd = fz, ix.newest, onEnd
	return j, nil
}

// storeAsync is a frozen job's stores (its Run, without the caller's
// lock): every hinted frozen write (the others were stored at the
// freeze), in staging order. Only this goroutine writes the table
// meanwhile; its stores are atomic, since lookups read the words
// (word) under the caller's lock; the pages it dirties go to the job's
// bitmap and its count changes to the job, for EndCheckpoint.
func (j *CheckpointJob) storeAsync() {
	ix, fz := j.ix, j.fz
	t0 := time.Now()
	slots, mask := ix.slots, ix.mask
	ents := fz.ov.ents
	n := len(ents)
	if prefetching {
		for i := 0; i < min(applyAhead, n); i++ {
			prefetch(uintptr(unsafe.Pointer(&slots[ents[i].hash&mask])))
		}
	}
	for i := 0; i < n; i++ {
		if k := i + applyAhead; prefetching && k < n {
			prefetch(uintptr(unsafe.Pointer(&slots[ents[k].hash&mask])))
		}
		if s := &ents[i]; s.hinted {
			j.storeHinted(s)
		}
	}
	j.storeDur = time.Since(t0)
}

// storeHinted is apply outside repair mode for a write whose hint is
// known (a slot of the key's tag is its slot if and only if it holds the
// hint): no key is read back, nothing but the table, the job's bitmap and
// counts is touched.
func (j *CheckpointJob) storeHinted(s *staged) {
	ix := j.ix
	slots, mask := ix.slots, ix.mask
	tag, home := s.hash>>tagShift, s.hash&mask
	var w uint64
	if s.loc != 0 {
		w, _ = pack(tag, s.loc, s.expiring) // checked at Stage
	}
	put := func(i uint64, v uint64) {
		atomic.StoreUint64(&slots[i], v)
		p := (headerSize + int(i)*8) / pageSize
		j.pages[p/64] |= 1 << (p % 64)
	}
	free := int64(-1)
	i := home
	for n := uint64(0); n <= mask; n++ {
		cur := slots[i] // only this goroutine writes the table: a plain read
		if cur == 0 {
			break
		}
		switch {
		case cur&offMask == 0:
			if free < 0 {
				free = int64(i)
			}
		case cur>>tagShift == tag && s.hint != 0 && unpackAt(j.newest, cur) == s.hint:
			if s.loc == 0 {
				put(i, tombstone)
				j.dLive--
				j.dTombs++
			} else {
				put(i, w)
			}
			return
		}
		i = (i + 1) & mask
	}
	if s.loc == 0 {
		return
	}
	if free >= 0 {
		put(uint64(free), w)
		j.dTombs--
		j.dLive++
		return
	}
	put(i, w) // the first empty slot of the run (the freeze checked the table has room)
	j.dLive++
}

// CheckpointStep stores up to budget of the frozen writes into the table
// (under the caller's lock). Once they are all stored it returns the
// checkpoint's job, to Run without the lock and end under it
// (EndCheckpoint), as BeginCheckpoint's. more reports whether to call
// again; job nil and more false: no checkpoint in steps is pending (a
// Settle finished it), or err. On an error the writes not yet stored are
// staged again (without hints), and the applying block stands: the next
// checkpoint stores them.
func (ix *Index) CheckpointStep(budget int) (job *CheckpointJob, more bool, err error) {
	fz := ix.fz
	if fz == nil || fz.async {
		return nil, false, nil // none, or a frozen job's (it stores them)
	}
	t0 := time.Now()
	end := fz.ov.len()
	if budget >= 0 {
		end = min(end, fz.next+budget)
	}
	fz.storing = true
	err = ix.storeFrozen(fz, end)
	fz.storing = false
	took := time.Since(t0)
	fz.apply += took
	fz.stepMax = max(fz.stepMax, took)
	fz.steps++
	if err != nil {
		ix.unfreeze(fz)
		return nil, false, err
	}
	if fz.next < fz.ov.len() {
		ix.hook("ckpt:step")
		return nil, true, nil
	}
	ix.fz = nil
	ix.last = CheckpointTimes{Staged: fz.staged, Apply: fz.apply, Steps: fz.steps, StepMax: fz.stepMax}
	fz.ov.reset()
	ix.spareOv = fz.ov // its buffers (a new key buffer if it lent views) serve the next freeze
	j := ix.newJob(fz.cp)
	j.OnEnd = fz.onEnd
	return j, false, nil
}

// storeFrozen stores fz's writes up to end (in staging order, with the
// hash and hint each was staged with), prefetching ahead as applyStaged.
func (ix *Index) storeFrozen(fz *frozen, end int) error {
	ents := fz.ov.ents
	if prefetching {
		for i := fz.next; i < min(fz.next+applyAhead, end); i++ {
			prefetch(uintptr(unsafe.Pointer(&ix.slots[ents[i].hash&ix.mask])))
		}
	}
	for ; fz.next < end; fz.next++ {
		i := fz.next
		if j := i + applyAhead; prefetching && j < end {
			prefetch(uintptr(unsafe.Pointer(&ix.slots[ents[j].hash&ix.mask])))
		}
		s := ents[i]
		if err := ix.apply(s.hash, fz.ov.key(i), s.loc, s.expiring, s.hint, s.hinted); err != nil {
			return err
		}
	}
	ix.forget()
	return nil
}

// unfreeze gives up a checkpoint in steps after a failed store: every
// frozen write that no newer staging supersedes is staged again, and no
// staged write keeps its hint (some frozen writes were stored, some not:
// the table's state for a key is no longer known without reading keys).
func (ix *Index) unfreeze(fz *frozen) {
	ix.fz = nil
	for i := range fz.ov.ents {
		s := fz.ov.ents[i]
		k := fz.ov.key(i)
		if ix.ov.find(s.hash, k) >= 0 {
			continue
		}
		ix.ov.insert(s.hash, k, staged{loc: s.loc, expiring: s.expiring})
	}
	for i := range ix.ov.ents {
		ix.ov.ents[i].hint, ix.ov.ents[i].hinted = 0, false
	}
	ix.forget()
}

// finishFrozen finishes a checkpoint in steps at once (Settle, under the
// caller's lock): the rest of its writes stored, its job run and ended.
// Inside a step (a growth in one go settles) there is nothing to finish.
func (ix *Index) finishFrozen() error {
	fz := ix.fz
	if fz == nil || fz.storing {
		return nil
	}
	j, _, err := ix.CheckpointStep(-1)
	if err != nil {
		return err
	}
	j.Run()
	return ix.EndCheckpoint(j)
}

// Frozen reports whether a checkpoint in steps is still storing its
// writes (FreezeCheckpoint, before the last CheckpointStep) or a frozen
// job has not ended yet.
func (ix *Index) Frozen() bool { return ix.fz != nil }

// findFrozen returns key's frozen write (h its hash), if a checkpoint in
// steps or a frozen job is pending and has one (read-only: a frozen job's
// Run reads the same entries).
func (ix *Index) findFrozen(h uint64, key []byte) *staged {
	if ix.fz == nil {
		return nil
	}
	if e := ix.fz.ov.find(h, key); e >= 0 {
		return &ix.fz.ov.ents[e]
	}
	return nil
}

package keyindex

import (
	"time"
	"unsafe"
)

// A checkpoint in steps.
//
// BeginCheckpoint stores every staged write into the table in one call,
// under the caller's lock: at 10,000,000 keys nearly every write lands on
// a page of its own (a cache and TLB miss each, 0.2-0.7 µs), so the
// caller's lock is held for the whole batch, and every command waits it
// out (issue 11's target 5, the SET p99.9 tail). FreezeCheckpoint instead
// persists the applying block and freezes the overlay as the checkpoint's
// writes (a new, empty overlay takes the writes that follow), and
// CheckpointStep stores up to a budget of the frozen writes at a time;
// the caller releases its lock between steps, so commands run between
// them. Every call still runs under the caller's lock: nothing here runs
// concurrently with a lookup.
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
	next    int        // ov.ents[:next] are stored
	cp      Checkpoint // the final block to write (its generation set by the job)
	onEnd   func(err error)
	storing bool // a step is storing (a growth in one go inside it settles: nothing to finish)
	staged  int
	apply   time.Duration // the steps' time so far
	stepMax time.Duration
	steps   int
}

// FreezeCheckpoint begins a checkpoint in steps (see the comment above),
// under the caller's lock: it waits for a checkpoint still in flight
// (Settle), persists the applying block and freezes the staged writes.
// Call CheckpointStep, under the lock, until it returns a job or says no
// more; onEnd becomes the job's OnEnd, whoever ends it. With nothing
// staged it freezes nothing: the first step returns the job.
func (ix *Index) FreezeCheckpoint(cp Checkpoint, onEnd func(err error)) error {
	if err := ix.Settle(); err != nil {
		return err
	}
	cp.Applying, cp.BaseLSN, cp.BaseSeg, cp.BaseOff = false, 0, 0, 0
	if ix.ov.len() > 0 {
		if err := ix.putApplying(cp); err != nil {
			return err
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
	return nil
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
	if fz == nil {
		return nil, false, nil
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
// writes (FreezeCheckpoint, before the last CheckpointStep).
func (ix *Index) Frozen() bool { return ix.fz != nil }

// findFrozen returns key's frozen write (h its hash), if a checkpoint in
// steps is pending and has one.
func (ix *Index) findFrozen(h uint64, key []byte) *staged {
	if ix.fz == nil {
		return nil
	}
	if e := ix.fz.ov.find(h, key); e >= 0 {
		return &ix.fz.ov.ents[e]
	}
	return nil
}

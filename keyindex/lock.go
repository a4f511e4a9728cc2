package keyindex

import (
	"github.com/persimmon-db/persimmon/pmem"
)

// Keeping the table resident. Every lookup reads a slot, and the slots of
// the hot keys are spread over the whole table, so under memory pressure
// (a data set larger than memory) an index page evicted from the page
// cache costs a major fault on a lookup that the record's own page may
// not need. SetLockBudget keeps up to a budget of the mapping's bytes
// locked in memory (pmem.LockResident: each page locked once it is first
// faulted in, the range read ahead in the background), from the start of
// the file: since keys hash uniformly over the slots, locking a fraction
// of the table saves that fraction of its faults. The lock follows the
// table across growth (the new mapping is locked within the same budget
// once it is swapped in; the old one's lock ends with its unmapping).

// SetLockBudget keeps the first min(n, file size) bytes of the table's
// mapping resident (n <= 0: none) and returns the bytes locked. On an
// error (EPERM past RLIMIT_MEMLOCK without CAP_IPC_LOCK, ENOMEM) nothing
// is locked and the table works as before: the error is only reported.
func (ix *Index) SetLockBudget(n int64) (locked int64, err error) {
	ix.lockBudget = max(n, 0)
	return ix.relock()
}

// LockedBytes is the part of the mapping kept resident (SetLockBudget).
func (ix *Index) LockedBytes() int64 { return ix.locked }

// LockBudget is the budget SetLockBudget set.
func (ix *Index) LockBudget() int64 { return ix.lockBudget }

// relock applies the lock budget to the current mapping: unlocks what was
// locked, then locks the budget's part of it.
func (ix *Index) relock() (int64, error) {
	if ix.region == nil {
		ix.locked = 0
		return 0, nil
	}
	b := ix.region.Bytes()
	if ix.locked > 0 {
		_ = pmem.UnlockResident(b[:min(ix.locked, int64(len(b)))])
		ix.locked = 0
	}
	want := min(ix.lockBudget, int64(len(b))) &^ (pageSize - 1)
	if want <= 0 {
		return 0, nil
	}
	if err := pmem.LockResident(b[:want]); err != nil {
		return 0, err
	}
	ix.locked = want
	return want, nil
}

// relockAfterSwap locks the mapping a growth swapped in, within the same
// budget, and logs what it locked or why it could not (Options.Logf).
func (ix *Index) relockAfterSwap() {
	if ix.lockBudget <= 0 {
		ix.locked = 0
		return
	}
	ix.locked = 0 // the old mapping's lock went with it
	n, err := ix.relock()
	if ix.opts.Logf == nil {
		return
	}
	if err != nil {
		ix.opts.Logf("key index: the grown table (%d bytes) is not locked in memory: %v", ix.region.Size(), err)
		return
	}
	ix.opts.Logf("key index: %d of the grown table's %d bytes locked in memory (budget %d)", n, ix.region.Size(), ix.lockBudget)
}

// SlotPage is the page of the mapping that holds key's home slot (for a
// residency check before a lookup that would otherwise fault on it: the
// caller's warming of cold reads).
func (ix *Index) SlotPage(key []byte) []byte {
	_, home := ix.tagHome(hashKey(key))
	b := ix.region.Bytes()
	p := (headerSize + int(home)*8) &^ (pageSize - 1)
	return b[p : p+pageSize : p+pageSize]
}

// Candidates calls fn with every location a Lookup of key might read a
// key back from: the staged write's, or those of the slots of key's tag
// in its probe run, without reading any record (KeyAt is not called) and
// without changing anything (the lookup memo included).
func (ix *Index) Candidates(key []byte, fn func(loc uint64)) {
	h := hashKey(key)
	if e := ix.ov.find(h, key); e >= 0 {
		if l := ix.ov.ents[e].loc; l != 0 {
			fn(l)
		}
		return
	}
	tag, i := ix.tagHome(h)
	for n := 0; n <= int(ix.mask); n++ {
		w := ix.slots[i]
		if w == 0 {
			return
		}
		if w&offMask != 0 && w>>tagShift == tag {
			fn(ix.unpack(w))
		}
		i = (i + 1) & ix.mask
	}
}

// PageOut asks the kernel to reclaim the table's pages (MADV_PAGEOUT;
// locked ones stay): for tests of reads that find it not resident.
func (ix *Index) PageOut() error { return pmem.AdvisePageOut(ix.region.Bytes()) }

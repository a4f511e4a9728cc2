package keyspace

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Cold reads: taking page faults off the keyspace lock. With the data set
// larger than memory, a GET whose record (or index slot) is not in the
// page cache takes a major fault, a device read of 100-300 µs, and it
// takes it holding the keyspace lock, so the faults of all connections
// happen one at a time however many connections wait: the device is used
// at queue depth 1. A server serving each connection on its own goroutine
// can instead ask, under the lock, which pages a GET would fault on
// (ColdPages: residency checked with mincore, nothing read), let the lock
// go, have them read in (WaitResident: MADV_WILLNEED, then waiting until
// they are resident, sleeping, so that other goroutines run and their
// reads overlap), and only then run the GET, which finds them resident.
// The check costs two mincore calls a GET, so it is on only while the
// process is taking major faults or finding pages to warm (ColdReads:
// more than coldFaults of them in the last stats tick).

// coldFaults is the major faults per stats tick (about 100 ms) above
// which ColdReads is on.
const coldFaults = 20

// coldHold is how long ColdReads stays on after a tick with that many:
// the record cache and the warming remove the faults that turn them on,
// and must not turn themselves off by working.
const coldHold = 10 * time.Second

// coldWait bounds WaitResident: with fifty connections' reads queued on
// a device doing a few thousand a second, a read waits tens of
// milliseconds; a GET that gives up sooner faults under the lock on a
// read already under way.
const coldWait = 200 * time.Millisecond

// ColdReads reports whether the process has been taking major faults
// lately (the caller then warms GETs: ColdPages, WaitResident). Safe
// without the lock.
func (ks *Keyspace) ColdReads() bool { return ks.coldMode.Load() }

// noteFaults updates ColdReads from the process's major fault count
// (under the lock, from the stats tick).
func (ks *Keyspace) noteFaults() {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return
	}
	// The pages warmed count too: warming turns faults into reads that
	// are not faults, and must not turn itself off by working.
	n := int64(ru.Majflt) + ks.coldWarmed
	now := time.Now()
	if n-ks.lastMajflt > coldFaults {
		ks.coldUntil = now.Add(coldHold)
	}
	ks.coldMode.Store(now.Before(ks.coldUntil))
	ks.lastMajflt = n
	ks.useRecordCache()
}

// useRecordCache puts the record cache in use (rcOn) while ColdReads is
// on, or always when forced (under the lock; see reccache.go).
func (ks *Keyspace) useRecordCache() {
	if ks.rcForce || ks.coldMode.Load() {
		ks.rcOn = ks.rc
	} else {
		ks.rcOn = nil
	}
}

// resident reports whether page p of a mapping is in memory (an error,
// such as a range no longer mapped, reads as resident: nothing to warm).
func resident(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	var v [1]byte
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(unsafe.Pointer(&v[0])))
	return e != 0 || v[0]&1 != 0
}

// pageOf is the page of b holding b[off] (b starts on a page boundary).
func pageOf(b []byte, off uint64) []byte {
	p := off &^ 4095
	return b[p:min(p+4096, uint64(len(b))):min(p+4096, uint64(len(b)))]
}

// ColdPages appends to pages those a GET of (db, key) would fault in: the
// page of the key index's home slot when it is not resident (then
// nothing more: finding the record needs it; slot is true), else the
// pages of the records the index's probe would read back that are
// neither cached (reccache.go) nor resident. A caller warms the slot's
// page, then asks again for the records'. It reads no record and
// changes nothing. The slices stay valid only while the lock is held: a
// caller that lets it go may pass them to WaitResident only (which
// touches none of their bytes).
func (ks *Keyspace) ColdPages(db int, key []byte, pages [][]byte) (_ [][]byte, slot bool) {
	if !ks.kixOn() || db < 0 || db >= NumDBs {
		return pages, false
	}
	if _, inDRAM := ks.dbs[db].index[string(key)]; inDRAM {
		return pages, false
	}
	k := ks.kixComposite(db, key)
	ix := ks.kix.ix
	n := len(pages)
	defer func() { ks.coldWarmed += int64(len(pages) - n) }()
	if p := ix.SlotPage(k); !resident(p) {
		return append(pages, p), true
	}
	ix.Candidates(k, func(loc uint64) {
		if ks.rc != nil && ks.rc.find(loc) >= 0 {
			return
		}
		seg := ks.arena.Segment(loc >> 40)
		if seg == nil {
			return
		}
		b := seg.Bytes()
		off := loc & (1<<40 - 1)
		if off >= uint64(len(b)) {
			return
		}
		if p := pageOf(b, off); !resident(p) {
			pages = append(pages, p)
		}
	})
	return pages, false
}

// WaitResident has pages (from ColdPages) read in and waits, up to
// coldWait, until they are resident, sleeping meanwhile (100 µs,
// doubling up to 1 ms). Sleeping, not a blocking pread: with one
// scheduler thread (goroutine mode in pmem) a goroutine blocked in a
// system call keeps the thread until the runtime's monitor takes it back,
// up to milliseconds later on a busy machine, and the other connections
// wait meanwhile (measured: 7,300 against 11,100 GET/s, zipfian, 2 M keys
// in a quarter of their size). Called without the
// lock: a page whose mapping went meanwhile (a segment removed) fails
// madvise and mincore, which end its wait; no byte of the pages is read.
func WaitResident(pages [][]byte) {
	for _, p := range pages {
		_ = unix.Madvise(p, unix.MADV_WILLNEED)
	}
	deadline := time.Now().Add(coldWait)
	wait := 100 * time.Microsecond // about one device read: fewer wake-ups, each one CPU
	for _, p := range pages {
		for !resident(p) && time.Now().Before(deadline) {
			time.Sleep(wait)
			wait = min(2*wait, time.Millisecond) // a read at a deep queue takes milliseconds
		}
	}
}

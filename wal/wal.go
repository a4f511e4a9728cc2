package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
)

// commitReserve is kept free at the end of a segment after every batch
// record, so a transaction's commit record always fits where its group is
// (a full disk cannot strand an EXEC whose commands already applied).
const commitReserve = HeaderSize

// freeingReserve is kept free (and allocated) after every batch record but
// those appended with AppendFreeing, and after commit records, so that a
// record that frees space (a FLUSHALL: a 2-byte payload) still fits on a
// full disk, also right after an EXEC or a script. It holds one such record
// and that record's own commit record.
const freeingReserve = HeaderSize + 8 + commitReserve

// WAL appends records to an arena and makes them durable.
type WAL struct {
	arena *arena.Arena

	mu      sync.Mutex // serialises appends (LSN assignment + arena allocation)
	lastLSN atomic.Uint64

	syncMu  sync.Mutex // guards leading and leadDone
	leading bool       // a leader persists
	// asyncLead: the leader is an asynchronous sync (async.go); waiters
	// reap it themselves rather than wait for whoever started it.
	asyncLead bool
	async     asyncSync
	// leadDone is closed when the current leader is done; made by the
	// first waiter, so a leader nobody waits for allocates nothing (in
	// pmem mode on the event loop that is every group commit).
	leadDone chan struct{}
	durable  atomic.Uint64 // every record with LSN <= durable is durable
	// persisted: every record with LSN <= persisted was persisted (in
	// the arena's mode) by this WAL, or found so at Open. It is durable
	// minus the records recovery found and nobody has persisted since (a
	// crash can leave them unpersisted): the durable gaps are measured
	// from it, so a record never claims an unpersisted one durable.
	persisted atomic.Uint64
	// flushed packs the active segment id (high 24 bits) and the offset up
	// to which it has been persisted (low 40 bits).
	flushed atomic.Uint64
	failed  atomic.Pointer[error] // sticky persistence error: fail-stop

	flushes       atomic.Int64
	syncedRecords atomic.Int64
	syncs         syncTimes // how long each group commit's persist took

	// shutdownMarked: the active segment carries a clean-shutdown mark,
	// cleared (durably) before the next append or rotation. Guarded by mu.
	shutdownMarked bool
	// keptAfter is the space the last append kept free (and allocated)
	// after its record in the active segment. Guarded by mu.
	keptAfter int64
}

// Open returns a WAL appending to a's active segment. lastLSN is the LSN of
// the last valid record recovery found (0 for an empty log).
//
// Where a persist outlives a power cut (msync mode, pmem mode on DAX),
// the records recovery found in the active segment may not have been
// persisted: a crash can come between an append and its group commit,
// and recovery reads them from the page cache (or the CPU cache). So they
// are not durable yet: the first group commit (a WaitDurable of any of
// them, or of a later record) persists the active segment from its first
// record, and until it has, no durable gap claims them (see "Durable
// gap" in the package doc) and a key index checkpoint of them waits for
// it. Elsewhere a persist reaches the page cache, which is where recovery
// read them: they are as durable as the mode makes anything, at once.
func Open(a *arena.Arena, lastLSN uint64) *WAL {
	w := &WAL{arena: a}
	w.lastLSN.Store(lastLSN)
	w.durable.Store(lastLSN)
	w.persisted.Store(lastLSN)
	if seg, tail := a.Active(); seg != nil {
		w.flushed.Store(packFlushed(seg.ID(), tail))
		// A damaged word is cleared before the next append as a valid
		// one is (arena.Segment.ShutdownWordDamaged).
		_, w.shutdownMarked = seg.ShutdownEnd()
		w.shutdownMarked = w.shutdownMarked || seg.ShutdownWordDamaged()
		if powerSafe(a.Mode(), seg) {
			w.flushed.Store(packFlushed(seg.ID(), arena.HeaderSize))
			w.persisted.Store(seg.BaseLSN())
			w.durable.Store(seg.BaseLSN())
		}
	}
	return w
}

// powerSafe reports whether a persist of seg under mode survives a power
// cut: in none mode, and in pmem mode off DAX, it reaches only the page
// cache.
func powerSafe(mode pmem.Mode, seg *arena.Segment) bool {
	return mode == pmem.ModeMsync || (mode == pmem.ModePmem && seg.DAX())
}

// gapFor is the durable gap of the record of LSN lsn about to be appended
// to seg: how far back the last persisted record is, or GapUnknown in a
// version-1 segment, whose readers require zero there.
func (w *WAL) gapFor(seg *arena.Segment, lsn uint64) uint16 {
	if seg.Version() == arena.FormatVersion1 {
		return GapUnknown
	}
	return uint16(min(lsn-w.persisted.Load(), GapFar))
}

// clearShutdownMark clears a clean-shutdown mark left by the last Close
// before the log changes again. Call with w.mu held.
func (w *WAL) clearShutdownMark() error {
	if !w.shutdownMarked {
		return nil
	}
	seg, _ := w.arena.Active()
	if err := seg.ClearShutdown(); err != nil {
		return fmt.Errorf("wal: clearing the clean-shutdown mark of %s: %w", seg.Path(), err)
	}
	w.shutdownMarked = false
	return nil
}

// Close makes everything appended durable, then records a clean shutdown
// in the active segment: one 8-byte commit point holding the end of its
// records, stored after they were persisted (flush+fence or msync). At the
// next start-up any bad record before that end is corruption, not a torn
// tail. Nothing may be appended after Close.
func (w *WAL) Close() error {
	if err := w.Sync(); err != nil {
		return err
	}
	if err := w.closeAsync(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// In none mode, and in pmem mode off DAX, a persist reaches only the
	// page cache: a power cut after this clean shutdown could then leave
	// the mark on disk without the records it vouches for (start-up would
	// refuse a log that is merely torn), or a sealed segment with holes.
	// So a clean shutdown writes every segment back first, in every mode,
	// as redis-server fsyncs its AOF at SHUTDOWN: a one-time cost.
	powerSafe := func(seg *arena.Segment) bool { return powerSafe(w.arena.Mode(), seg) }
	for _, seg := range w.arena.Segments() {
		if !powerSafe(seg) {
			if err := seg.Msync(0, seg.Size()); err != nil {
				return fmt.Errorf("wal: writing back %s at shutdown: %w", seg.Path(), err)
			}
		}
	}
	seg, tail := w.arena.Active()
	if seg == nil {
		return nil
	}
	if _, sealed := seg.Sealed(); sealed {
		return nil
	}
	if err := seg.MarkShutdown(tail); err != nil {
		return fmt.Errorf("wal: recording the clean shutdown in %s: %w", seg.Path(), err)
	}
	if !powerSafe(seg) {
		if err := seg.Msync(0, arena.HeaderSize); err != nil {
			return fmt.Errorf("wal: writing back the clean-shutdown mark of %s: %w", seg.Path(), err)
		}
	}
	w.shutdownMarked = true
	return nil
}

func packFlushed(id uint64, off int64) uint64 { return id<<40 | uint64(off) }

// advanceFlushed moves flushed forward to v, never back: a leader that
// captured the append state before a direct write (writeDirect) moved
// flushed past it must not undo that. Packed values order as (segment,
// offset) do.
func (w *WAL) advanceFlushed(v uint64) {
	for {
		cur := w.flushed.Load()
		if cur >= v || w.flushed.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Arena is the arena the WAL appends to.
func (w *WAL) Arena() *arena.Arena { return w.arena }

// LastLSN is the LSN of the last record appended.
func (w *WAL) LastLSN() uint64 { return w.lastLSN.Load() }

// DurableLSN is the highest LSN known durable.
func (w *WAL) DurableLSN() uint64 { return w.durable.Load() }

// Flushes is the number of group commits (flush+fence or msync) so far.
func (w *WAL) Flushes() int64 { return w.flushes.Load() }

// SyncedRecords is the number of records made durable by group commits.
func (w *WAL) SyncedRecords() int64 { return w.syncedRecords.Load() }

// Location names a record: its segment and offset (bytes from segment start).
type Location struct {
	Seg *arena.Segment
	Off int64
	LSN uint64
}

// Append writes one record and returns where it went. It does not wait for
// durability (see WaitDurable). The payload is copied. Errors: a wrapped
// arena.ErrNoSpace when the disk is full, the sticky persistence error
// after a failed flush.
func (w *WAL) Append(typ, flags uint8, payload []byte) (Location, error) {
	return w.append(typ, flags, payload, nil, -1)
}

// AppendParts is Append of the payload that is the concatenation of parts,
// which are not copied into a payload first: a record of at least
// DirectMin bytes goes from them to the segment file in one pwritev.
func (w *WAL) AppendParts(typ, flags uint8, parts [][]byte) (Location, error) {
	return w.append(typ, flags, nil, parts, -1)
}

// AppendFreeing is Append for a small record that frees space (FLUSHALL):
// it may use the space every other batch record leaves free after it, so
// it is written even when the disk is full. payload must fit that space
// (at most 8 bytes).
func (w *WAL) AppendFreeing(typ, flags uint8, payload []byte) (Location, error) {
	if RecordSize(len(payload)) > freeingReserve-commitReserve {
		panic(fmt.Sprintf("wal: AppendFreeing of a %d-byte payload, more than the reserve holds", len(payload)))
	}
	return w.append(typ, flags, payload, nil, commitReserve)
}

// append writes a record whose payload is payload, or, if parts is not
// nil, the concatenation of parts.
func (w *WAL) append(typ, flags uint8, payload []byte, parts [][]byte, keep int64) (Location, error) {
	if errp := w.failed.Load(); errp != nil {
		return Location{}, *errp
	}
	n := len(payload)
	if parts != nil {
		n = 0
		for _, p := range parts {
			n += len(p)
		}
	}
	if n > MaxPayload {
		return Location{}, fmt.Errorf("wal: payload of %d bytes exceeds the record limit %d", n, MaxPayload)
	}
	size := RecordSize(n)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.clearShutdownMark(); err != nil {
		return Location{}, err
	}
	if keep < 0 { // Append
		keep = commitReserve + freeingReserve
		if typ == TypeCommit {
			// A commit record goes into the commitReserve its group's
			// records left free. It keeps the freeing reserve after it
			// when that reserve is there (the record before kept both),
			// so a FLUSHALL still fits on a full disk after an EXEC or a
			// script; after a freeing record it keeps nothing: asking for
			// more would move the commit to a new segment.
			keep = 0
			if w.keptAfter >= commitReserve+freeingReserve {
				keep = freeingReserve
			}
		}
	}
	last := w.lastLSN.Load()
	seg, off, err := w.arena.Alloc(size, keep, w.flushedFrom(), last)
	if errors.Is(err, arena.ErrSeal) {
		// A newer segment exists and the old one's records may not be
		// durable: appending to either would break the segment chain or
		// the durability promise. Fail-stop, as after a failed flush.
		err = w.failStop(fmt.Errorf("wal: %w", err))
	}
	if err != nil {
		return Location{}, err
	}
	w.keptAfter = keep
	lsn := last + 1
	gap := w.gapFor(seg, lsn)
	switch {
	case size >= DirectMin:
		if parts == nil {
			parts = [][]byte{payload}
		}
		if err := w.writeDirect(seg, off, typ, flags, gap, lsn, n, parts); err != nil {
			// The space is taken and holds a partial record: a record
			// after it would follow a hole. Fail-stop, as after a failed
			// flush.
			return Location{}, w.failStop(fmt.Errorf("wal: %w", err))
		}
	case parts != nil:
		encodeRecordParts(seg.Bytes()[off:off+size], typ, flags, gap, lsn, n, parts)
	default:
		encodeRecord(seg.Bytes()[off:off+size], typ, flags, gap, lsn, payload)
	}
	w.lastLSN.Store(lsn)
	return Location{Seg: seg, Off: off, LSN: lsn}, nil
}

// zeroPad is the padding of a record written by writeDirect.
var zeroPad [8]byte

// directChunk is how many payload bytes writeDirect checksums and then
// writes at a time: small enough that the write reads them from the CPU
// cache the checksum just filled, instead of from DRAM a second time.
const directChunk = 256 << 10

// writeDirect writes the record of LSN lsn whose n-byte payload is the
// concatenation of parts at off in seg with pwritev (arena.Segment.WriteAt)
// instead of storing it through the mapping (see "Big records" in the
// package doc): the payload and padding a chunk at a time, each chunk
// checksummed just before a writer goroutine writes it (while the next
// is checksummed), then, once every chunk is written, the header, which
// holds the checksum. In pmem and none modes the records before it in seg are
// persisted first and the flushed offset then moves past it, so no group
// commit flushes its cache lines (that would fault in every page of it);
// in msync mode the group commit's msync of the range covers it as it
// covers stores. Call with w.mu held.
func (w *WAL) writeDirect(seg *arena.Segment, off int64, typ, flags uint8, gap uint16, lsn uint64, n int, parts [][]byte) error {
	direct := w.arena.Mode() != pmem.ModeMsync
	if direct {
		if from := w.flushedIn(seg); from < off {
			if err := seg.Persist(from, off-from); err != nil {
				return fmt.Errorf("persisting %s [%d, %d): %w", seg.Path(), from, off, err)
			}
		}
	}
	var hdr [HeaderSize]byte
	putHead(hdr[:], typ, flags, gap, lsn, n)
	var d xxhash.Digest
	d.Reset()
	d.Write(hdr[:16])
	// The checksum and the writes are independent until the header: a
	// writer goroutine writes each chunk while this one checksums the
	// next (the chunk it writes was just read into the cache by the
	// checksum), so a big record costs the longer of the two, not their
	// sum, in wall time.
	type job struct {
		iov [][]byte
		pos int64
	}
	jobs := make(chan job, 1)
	written := make(chan error, 1)
	go func() {
		var err error
		for j := range jobs {
			if err == nil {
				err = seg.WriteAt(j.iov, j.pos)
			}
		}
		written <- err
	}()
	pos := off + HeaderSize
	var chunk [][]byte
	size := 0
	send := func() {
		jobs <- job{chunk, pos}
		pos += int64(size)
		chunk, size = nil, 0
	}
	for _, p := range parts {
		for len(p) > 0 {
			k := min(len(p), directChunk-size)
			d.Write(p[:k])
			chunk = append(chunk, p[:k])
			size += k
			p = p[k:]
			if size == directChunk {
				send()
			}
		}
	}
	if pad := align8(int64(n)) - int64(n); pad > 0 {
		chunk = append(chunk, zeroPad[:pad])
		size += int(pad)
	}
	if size > 0 {
		send()
	}
	close(jobs)
	if err := <-written; err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(hdr[16:], d.Sum64())
	if err := seg.WriteAt([][]byte{hdr[:]}, off); err != nil {
		return err
	}
	if direct {
		// On DAX the kernel copied with non-temporal stores: fence them
		// as a flush would be.
		pmem.Drain()
		w.advanceFlushed(packFlushed(seg.ID(), off+RecordSize(n)))
	}
	return nil
}

// WaitDurable returns once every record with LSN <= lsn is durable, or with
// the persistence error that prevented it (after which the WAL refuses
// appends: fail-stop). Concurrent callers share one flush+fence or msync:
// the first becomes the leader and persists everything appended so far;
// the rest wait on the leader's generation channel, which is closed (waking
// all of them at once, not one by one as a mutex would) when it finishes.
// Those whose records were appended after the leader's capture loop and
// elect the next leader among themselves.
func (w *WAL) WaitDurable(lsn uint64) error { return w.waitDurable(lsn, true) }

// WaitDurableNow is WaitDurable for the event loop and its committer: a
// leader persists at once instead of first yielding to let runnable
// appenders in. There every appender runs on the loop, so the yield lets
// nobody in, and on the loop's locked thread it costs two thread hand-offs.
func (w *WAL) WaitDurableNow(lsn uint64) error { return w.waitDurable(lsn, false) }

func (w *WAL) waitDurable(lsn uint64, yield bool) error {
	for {
		if w.durable.Load() >= lsn {
			return nil
		}
		w.syncMu.Lock()
		if errp := w.failed.Load(); errp != nil {
			w.syncMu.Unlock()
			return *errp
		}
		if w.durable.Load() >= lsn {
			w.syncMu.Unlock()
			return nil
		}
		if w.leading {
			if w.asyncLead {
				w.syncMu.Unlock()
				if err := w.reapWait(); err != nil {
					return err
				}
				continue
			}
			done := w.leaderDone()
			w.syncMu.Unlock()
			<-done
			continue
		}
		w.leading = true
		w.syncMu.Unlock()

		err := w.persistPending(yield)

		w.syncMu.Lock()
		w.leading = false
		done := w.leadDone
		w.leadDone = nil
		w.syncMu.Unlock()
		if done != nil {
			close(done)
		}
		if err != nil {
			return err
		}
	}
}

// persistPending persists everything appended so far; only the leader
// calls it. yield: see WaitDurableNow.
func (w *WAL) persistPending(yield bool) error {
	if yield && w.arena.Mode() == pmem.ModeMsync {
		// An msync costs ~100 µs: let connections that are runnable now
		// append first, so they ride this sync instead of the next.
		runtime.Gosched()
	}
	// Capture the append state: everything up to tail / last is written.
	w.mu.Lock()
	seg, tail := w.arena.Active()
	last := w.lastLSN.Load()
	from := w.flushedIn(seg)
	w.mu.Unlock()
	if seg != nil {
		if tail > from {
			start := time.Now()
			err := seg.Persist(from, tail-from)
			w.syncs.add(time.Since(start), last-w.durable.Load())
			if err != nil {
				return w.failStop(fmt.Errorf("wal: persisting %s [%d, %d): %w", seg.Path(), from, tail, err))
			}
		}
		w.advanceFlushed(packFlushed(seg.ID(), tail))
	}
	w.persisted.Store(last)
	prev := w.durable.Swap(last)
	w.flushes.Add(1)
	w.syncedRecords.Add(int64(last - prev))
	return nil
}

// Rotate seals the active segment and starts a new one (see
// arena.Arena.Rotate). Callers serialise it with appends.
func (w *WAL) Rotate() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.clearShutdownMark(); err != nil {
		return err
	}
	err := w.arena.Rotate(w.flushedFrom(), w.lastLSN.Load())
	if errors.Is(err, arena.ErrSeal) {
		err = w.failStop(fmt.Errorf("wal: %w", err)) // as in append
	}
	return err
}

// failStop makes err the sticky persistence error and returns it. It
// takes err as its own variable so that callers' error variables stay on
// the stack: taking their address would move them to the heap on every
// call, failing or not (an allocation per append).
func (w *WAL) failStop(err error) error {
	w.failed.Store(&err)
	return err
}

// Writable reports whether an append of a record with an n-byte payload
// would find disk space now (arena.Arena.Writable): the probe after a full
// disk. Errors wrap arena.ErrNoSpace while it would not.
func (w *WAL) Writable(n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.arena.Writable(RecordSize(n), commitReserve+freeingReserve)
}

// flushedFrom is the offset of the active segment up to which it has been
// persisted. Call with w.mu held.
func (w *WAL) flushedFrom() int64 {
	seg, _ := w.arena.Active()
	return w.flushedIn(seg)
}

// flushedIn is the offset up to which seg has been persisted by group
// commits (arena.HeaderSize if none has touched it).
func (w *WAL) flushedIn(seg *arena.Segment) int64 {
	if f := w.flushed.Load(); seg != nil && f>>40 == seg.ID() {
		return int64(f & (1<<40 - 1))
	}
	return arena.HeaderSize
}

// Barrier waits until no group-commit leader is persisting. After it, no
// flush is in progress on a segment that was not active at the call.
func (w *WAL) Barrier() {
	w.syncMu.Lock()
	if !w.leading {
		w.syncMu.Unlock()
		return
	}
	if w.asyncLead {
		w.syncMu.Unlock()
		w.reapWait() // an error is sticky: the next append or wait reports it
		return
	}
	done := w.leaderDone()
	w.syncMu.Unlock()
	<-done
}

// leaderDone returns the channel closed when the current leader is done,
// making it if no one waited yet. Call with syncMu held while leading.
func (w *WAL) leaderDone() chan struct{} {
	if w.leadDone == nil {
		w.leadDone = make(chan struct{})
	}
	return w.leadDone
}

// Sync makes everything appended so far durable.
func (w *WAL) Sync() error { return w.WaitDurable(w.lastLSN.Load()) }

// TornTailLimit is the most valid-record bytes that may follow a damaged
// record (or a zeroed header) in the active segment for it to count as a
// torn tail. A torn write can damage records of the last group commit in
// any order, so a few intact records after a damaged one are expected;
// more than this many means the damage is in the middle of the log, which
// is corruption (start-up stops instead of silently cutting acknowledged
// records).
const TornTailLimit = 64 << 10

// validRecordsAfter looks past a damaged record at off for records that
// continue the log (LSN above last), scanning 8-byte aligned offsets. It
// returns where the first one starts, the count and bytes of the
// consecutive run starting there, and the highest LSN that a durable gap
// of the run says was durable when its record was appended (0 if none
// says anything; gaps are read only when gaps is set: a version-2
// segment).
func validRecordsAfter(buf []byte, off int64, last uint64, gaps bool) (first int64, n int, bytes int64, durable uint64) {
	for p := off + 8; p+HeaderSize <= int64(len(buf)); p += 8 {
		h := buf[p : p+HeaderSize]
		if h[4] != TypeBatch && h[4] != TypeCommit {
			continue
		}
		lsn := binary.LittleEndian.Uint64(h[8:])
		if lsn <= last || lsn > last+1<<32 {
			continue
		}
		rec, err := DecodeRecord(buf, p)
		if err != nil {
			continue
		}
		first = p
		for prev := rec.LSN - 1; err == nil && rec.LSN == prev+1; rec, err = DecodeRecord(buf, p) {
			n++
			bytes += rec.Size
			p += rec.Size
			prev = rec.LSN
			if gaps && rec.Gap != GapUnknown && rec.Gap != GapFar && uint64(rec.Gap) < rec.LSN {
				durable = max(durable, rec.LSN-uint64(rec.Gap))
			}
		}
		return first, n, bytes, durable
	}
	return 0, 0, 0, 0
}

// ScanSegment calls fn for each valid record of seg in order, starting at
// arena.HeaderSize, checking that LSNs run consecutively from the segment's
// base LSN. It returns the offset just past the last valid record and the
// last LSN. For an unsealed segment an invalid record ends the scan with an
// error wrapping ErrTornTail (end is where it starts); for a sealed segment,
// or one carrying a clean-shutdown mark, any invalid record, or records not
// ending exactly at the sealed (or marked) end, is an error wrapping
// ErrCorruption. Errors name the file and offset.
func ScanSegment(seg *arena.Segment, fn func(Record) error) (end int64, lastLSN uint64, err error) {
	return ScanSegmentFrom(seg, arena.HeaderSize, seg.BaseLSN(), fn)
}

// ScanSegmentFrom is ScanSegment starting at offset off, where the record
// of LSN after+1 (or the end of the records) must begin: the key index's
// checkpoint names where the log after it starts (package keyindex).
func ScanSegmentFrom(seg *arena.Segment, off int64, after uint64, fn func(Record) error) (end int64, lastLSN uint64, err error) {
	return scanSegment(seg, off, after, 0, fn)
}

// VerifyPrefix checks the records of seg from its first up to end (bytes
// from segment start), as if seg were sealed there: every record must
// verify, continue the LSNs from the segment's base, and the last must
// end exactly at end with LSN last. It reads nothing at or after end, so
// it may run while records are appended there (the key index's
// checkpoint names such a prefix of the active segment: records up to it
// were durable when it was taken, so damage there is corruption, never a
// torn write). Errors wrap ErrCorruption and name the file and offset.
func VerifyPrefix(seg *arena.Segment, end int64, last uint64) error {
	at, lsn, err := scanSegment(seg, arena.HeaderSize, seg.BaseLSN(), end, func(Record) error { return nil })
	if err == nil && lsn != last {
		err = fmt.Errorf("%w: %s: records up to offset %d end at LSN %d, want %d", ErrCorruption, seg.Path(), at, lsn, last)
	}
	return err
}

// EndsAt reports whether the record of LSN lsn in seg ends exactly at
// end (bytes from segment start); lsn may also be seg's base LSN with end
// its first record's offset. It looks back from end for the header, at
// each 8-byte aligned offset, comparing the LSN and length fields (one
// or two steps for the usual record: the cost is the record's size), and
// the record found must verify whole (checksum): a log cut short before
// end (a power cut that lost its tail) does not pass.
func EndsAt(seg *arena.Segment, end int64, lsn uint64) bool {
	if end == arena.HeaderSize {
		return seg.BaseLSN() == lsn
	}
	buf := seg.Bytes()
	if end < arena.HeaderSize+HeaderSize || end > int64(len(buf)) || end%8 != 0 {
		return false
	}
	for p := end - HeaderSize; p >= arena.HeaderSize; p -= 8 {
		h := buf[p : p+HeaderSize]
		if binary.LittleEndian.Uint64(h[8:]) != lsn || p+HeaderSize+align8(int64(binary.LittleEndian.Uint32(h))) != end {
			continue
		}
		if rec, err := DecodeRecord(buf, p); err == nil && rec.LSN == lsn && p+rec.Size == end {
			return true
		}
	}
	return false
}

// scanSegment is ScanSegmentFrom; a limit above zero bounds the scan as a
// seal at limit would (VerifyPrefix).
func scanSegment(seg *arena.Segment, off int64, after uint64, limit int64, fn func(Record) error) (end int64, lastLSN uint64, err error) {
	buf := seg.Bytes()
	sealedEnd, sealed := seg.Sealed()
	bound := "sealed end"
	shutdown := false
	strict := false // a damaged clean-shutdown word: no torn tail
	if limit > 0 {
		sealedEnd, sealed, bound = limit, true, "end of the records the key index's checkpoint covers"
	} else if !sealed {
		// A clean shutdown bounds the active segment as a seal does.
		if end, ok := seg.ShutdownEnd(); ok {
			sealedEnd, sealed, shutdown, bound = end, true, true, "end recorded at the last clean shutdown"
		} else {
			strict = seg.ShutdownWordDamaged()
		}
	}
	lastLSN = after
	for {
		if sealed && off == sealedEnd {
			if !shutdown || off+HeaderSize > int64(len(buf)) || isZero(buf[off:off+HeaderSize]) {
				return off, lastLSN, nil
			}
			// Bytes after the clean-shutdown end: a writer that predates
			// the mark (an older binary) appended without clearing it.
			// The mark is stale; scan on as an ordinary active segment.
			sealed, shutdown = false, false
			continue
		}
		rec, derr := DecodeRecord(buf, off)
		if derr == nil && rec.Gap != GapUnknown && seg.Version() == arena.FormatVersion1 {
			derr = fmt.Errorf("%w at offset %d: durable gap %d in a version-%d segment, want 0", ErrInvalidRecord, off, rec.Gap, arena.FormatVersion1)
		}
		if derr == nil && rec.LSN != lastLSN+1 {
			derr = fmt.Errorf("%w at offset %d: LSN %d, want %d", ErrInvalidRecord, off, rec.LSN, lastLSN+1)
		}
		if derr == nil && sealed && off+rec.Size > sealedEnd {
			derr = fmt.Errorf("%w at offset %d: record of %d bytes runs past the %s %d", ErrInvalidRecord, off, rec.Size, bound, sealedEnd)
		}
		if derr != nil && !sealed {
			gaps := seg.Version() != arena.FormatVersion1
			first, n, bytes, durable := validRecordsAfter(buf[:min(int64(len(buf)), seg.AllocatedBytes())], off, lastLSN, gaps)
			switch {
			case durable > lastLSN:
				// A crash tears only what was not yet persisted; this
				// record was, before a later one was appended.
				return off, lastLSN, fmt.Errorf("%w: %s offset %d: %v; yet %d valid records (%d bytes, from offset %d) follow it, and their durable gaps say every record up to LSN %d was durable before they were appended, so the record of LSN %d here was durable (acknowledged) and no crash tore it: run persimmon-check repair to cut the log here (losing LSN %d on)",
					ErrCorruption, seg.Path(), off, derr, n, bytes, first, durable, lastLSN+1, lastLSN+1)
			case bytes > TornTailLimit:
				return off, lastLSN, fmt.Errorf("%w: %s offset %d: %v; yet %d valid records (%d bytes, LSN %d on, from offset %d) follow it, more than a torn write of the last group commit can leave: run persimmon-check repair to cut the log here",
					ErrCorruption, seg.Path(), off, derr, n, bytes, lastLSN+1, first)
			}
		}
		switch {
		case errors.Is(derr, ErrCleanEnd) && !sealed:
			return off, lastLSN, nil
		case derr != nil && strict:
			return off, lastLSN, fmt.Errorf("%w: %s: %v; the clean-shutdown word (header offset %d) is set but does not verify, so the segment may have been shut down cleanly and the record is not taken for a torn tail: run persimmon-check repair to cut the log here",
				ErrCorruption, seg.Path(), derr, arena.ShutdownWordOffset)
		case errors.Is(derr, ErrCleanEnd):
			return off, lastLSN, fmt.Errorf("%w: %s offset %d: zeroed record header, want records up to the %s %d", ErrCorruption, seg.Path(), off, bound, sealedEnd)
		case derr != nil && sealed:
			return off, lastLSN, fmt.Errorf("%w: %s: %v (records must be valid up to the %s %d)", ErrCorruption, seg.Path(), derr, bound, sealedEnd)
		case derr != nil:
			return off, lastLSN, fmt.Errorf("%w: %s: %v", ErrTornTail, seg.Path(), derr)
		}
		if err := fn(rec); err != nil {
			return off, lastLSN, err
		}
		lastLSN = rec.LSN
		off += rec.Size
	}
}

package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyindex"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/wal"
)

// Options configure Open.
type Options struct {
	Dir         string    // data directory, created if missing
	Mode        pmem.Mode // durability mode
	SegmentSize int64     // bytes per segment file (default 64 MiB)
	// NoKeyIndex keeps every key in DRAM entries. By default string keys
	// (a value of one set operation, with or without an expiry) live in
	// the persistent key index (package keyindex, file IndexFile) instead
	// of DRAM, and a restart re-attaches its checkpoint, replaying only
	// the log after it.
	NoKeyIndex bool
	// Logf receives the one-line recovery summary (and progress lines when
	// recovery takes longer than a second). nil discards them.
	Logf func(format string, args ...any)
	// NoScrub leaves the segments the key index's checkpoint covered (not
	// read at start-up) unverified; by default they are verified in the
	// background once serving (keyspace.StartScrub).
	NoScrub bool
	// Progress, if set, is kept up to date while Open runs (the server's
	// INFO loading fields read it from another goroutine).
	Progress *Progress
}

// Progress is how far a recovery is: the bytes of the segments it has to
// scan (their mapped size), and the record bytes scanned so far (updated
// every 1024 records and at each segment's end).
type Progress struct {
	Total, Loaded atomic.Int64
}

// Report summarises one recovery.
type Report struct {
	Segments  int
	Records   int64
	Keys      int
	Bytes     int64 // bytes of records scanned
	TornBytes int64 // bytes cut from the tail of the active segment
	Dropped   int   // records of an unfinished transaction group dropped
	Duration  time.Duration

	// The key index (Options.NoKeyIndex unset): how long mapping it took, how
	// long validating and replaying the log after its checkpoint took (with
	// the checkpoint that follows), the segments not read because its
	// checkpoint covers them, and the rest.
	IndexAttach     time.Duration
	IndexValidate   time.Duration
	SkippedSegments int
	Index           keyspace.IndexReport
}

// IndexFile is the key index's file in the data directory.
const IndexFile = "keyindex"

// PERSIMMON_TEST_KEY_INDEX=1 (or 0) turns the key index on (off) for every
// Open whatever its Options say, so that a package's tests run whole
// either way. Unset in production.
const testKeyIndexEnv = "PERSIMMON_TEST_KEY_INDEX"

// Open verifies and replays the arena in opts.Dir and returns the keyspace,
// started (background expiry and cleaning running). Errors wrap
// wal.ErrCorruption when a record outside the torn tail is bad.
func Open(opts Options) (*keyspace.Keyspace, Report, error) {
	switch os.Getenv(testKeyIndexEnv) {
	case "1":
		opts.NoKeyIndex = false
	case "0":
		opts.NoKeyIndex = true
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	start := time.Now()
	a, err := arena.Open(arena.Options{Dir: opts.Dir, Mode: opts.Mode, SegmentSize: opts.SegmentSize, Logf: logf})
	if errors.Is(err, arena.ErrShortFile) {
		err = fmt.Errorf("%w: %w", wal.ErrCorruption, err)
	}
	if err != nil {
		return nil, Report{}, err
	}
	if err := a.CheckChain(); err != nil {
		a.Close()
		return nil, Report{}, fmt.Errorf("%w: %w", wal.ErrCorruption, err)
	}
	segs := a.Segments()
	var rep Report
	if p := opts.Progress; p != nil {
		var total int64
		for _, seg := range segs {
			total += seg.Size()
		}
		p.Total.Store(total)
	}
	var indexKS **keyspace.Keyspace
	var ix *keyindex.Index
	var cp keyindex.Checkpoint
	var cpOK bool
	if !opts.NoKeyIndex && a.SegmentSize() > 1<<32 {
		a.Close()
		return nil, Report{}, fmt.Errorf("recovery: the key index holds 32-bit offsets: segments of %d bytes are too large (at most 4 GiB)", a.SegmentSize())
	}
	if !opts.NoKeyIndex {
		ixStart := time.Now()
		path := filepath.Join(opts.Dir, IndexFile)
		kopts := keyindex.Options{Mode: opts.Mode, Newest: 1}
		if len(segs) > 0 {
			kopts.Newest = segs[len(segs)-1].ID()
		}
		var ks0 *keyspace.Keyspace // KeyAt reads through the keyspace being built
		kopts.KeyAt = func(loc uint64) ([]byte, bool) { return ks0.IndexKeyAt(loc) }
		ix, cp, cpOK, err = keyindex.Open(path, kopts)
		if errors.Is(err, keyindex.ErrFormat) {
			logf("recovery: %s is not a key index (%v): rebuilding it", path, err)
			ix, err = keyindex.Reset(path, kopts)
		}
		if err != nil {
			a.Close()
			return nil, Report{}, fmt.Errorf("recovery: key index: %w", err)
		}
		rep.IndexAttach = time.Since(ixStart)
		indexKS = &ks0
	}
	var ks *keyspace.Keyspace
	rep.Segments = len(segs)
	var lastLSN uint64
	var from uint64
attempt:
	ks = keyspace.NewRecovering(a)
	ks.SetLogf(logf) // damage met while serving (keyspace/damage.go)
	if ix != nil {
		*indexKS = ks
		if from, err = ks.AttachIndex(ix, cp, cpOK); err != nil {
			a.Close()
			return nil, rep, fmt.Errorf("recovery: key index: %w", err)
		}
	}
	rep.Records, rep.Bytes, rep.SkippedSegments = 0, 0, 0
	validateStart := time.Now()
	var skipped []uint64                // segments not read: verified after start-up (keyspace.StartScrub)
	var prefixes []keyspace.ScrubPrefix // the parts of segments not read, likewise
	cpSeg, cpOff := cp.Seg, cp.Off      // where the records after from start
	// The records up to from are read from the oldest anchor's segment
	// on (0: none), for the operations of the anchored DRAM entries.
	anchorSeg := ks.AnchorScanFrom()
	before := func(seg *arena.Segment) bool { return anchorSeg == 0 || seg.ID() < anchorSeg }
	if cp.Applying {
		cpSeg, cpOff = cp.BaseSeg, cp.BaseOff
	}
	lastLSN = 0
	nextProgress := start.Add(time.Second)
	orphanCut := false // the previous segment was an orphan (its unpersisted tail may be gone)
	for i, seg := range segs {
		newest := i == len(segs)-1
		if err := ChainLSN(segs, i, lastLSN, orphanCut); err != nil {
			a.Close()
			return nil, rep, err
		}
		orphanCut = false
		if _, sealed := seg.Sealed(); from > 0 && sealed && !newest && segs[i+1].BaseLSN() <= from && before(seg) {
			// Every record here is in the key index's checkpoint: not
			// read (persimmon-check verify still checks it).
			lastLSN = segs[i+1].BaseLSN()
			rep.SkippedSegments++
			skipped = append(skipped, seg.ID())
			continue
		}
		scanFrom, after := int64(arena.HeaderSize), seg.BaseLSN()
		if from > 0 && seg.ID() == cpSeg && before(seg) && startsAt(seg, int64(cpOff), from) && (!newest || trustPrefix(seg, int64(cpOff), from)) {
			// The checkpoint names where the records after it start;
			// those before it are verified after start-up (the scrub).
			// The checkpoint was taken once its LSN was durable, so a
			// crash tore nothing before it: the torn writes a crash
			// leaves are after it, where the scan starts. In the newest
			// segment the log must also reach the checkpoint: its last
			// record must end where the checkpoint says (wal.EndsAt). A
			// log cut short before it (a power cut that lost the tail)
			// fails that, the segment is validated whole, ends before
			// the checkpoint, and the index is rebuilt. After a clean
			// shutdown the segment is validated whole (trustPrefix).
			scanFrom, after = int64(cpOff), from
			if int64(cpOff) > arena.HeaderSize {
				prefixes = append(prefixes, keyspace.ScrubPrefix{Seg: seg.ID(), End: int64(cpOff), Last: from})
			}
		}
		if seg.ShutdownWordDamaged() {
			logf("recovery: %s: the clean-shutdown word (header offset %d) is set but does not verify (damaged): scanned as after a clean shutdown, with no torn tail", seg.Path(), arena.ShutdownWordOffset)
		}
		// Read-ahead for the scan, random-access advice again after it
		// (pmem.AdviseSequential).
		pmem.AdviseSequential(seg.Bytes())
		end, last, err := wal.ScanSegmentFrom(seg, scanFrom, after, func(rec wal.Record) error {
			rep.Records++
			rep.Bytes += rec.Size
			if p := opts.Progress; p != nil && rep.Records&1023 == 0 {
				p.Loaded.Store(rep.Bytes)
			}
			if now := time.Now(); now.After(nextProgress) {
				nextProgress = now.Add(time.Second)
				logf("recovery: segment %d/%d, %d records, %d keys so far, %.1fs", i+1, len(segs), rep.Records, ks.KeyCount(), now.Sub(start).Seconds())
			}
			return ks.ReplayRecord(seg, rec)
		})
		pmem.AdviseRandom(seg.Bytes())
		if p := opts.Progress; p != nil {
			p.Loaded.Store(rep.Bytes)
		}
		// Alloc and Rotate create the new segment before they seal the old
		// one: a crash in between leaves the one before the newest unsealed.
		// Its records end where the scan stopped (a torn record there is
		// possible only if nothing was appended after it, i.e. the newest
		// segment is still empty); seal it there, or the cleaner would wait
		// for it to be sealed forever.
		_, sealed := seg.Sealed()
		orphan := !newest && !sealed && EmptyFrom(segs, i+1)
		switch {
		case err == nil:
		case wal.IsTornTail(err) && (newest || orphan):
			n, cerr := cutTail(seg, end)
			if cerr != nil {
				a.Close()
				return nil, rep, cerr
			}
			rep.TornBytes = n
			logf("recovery: cut a torn tail of %d bytes at offset %d of %s (%v)", n, end, seg.Path(), err)
		case wal.IsTornTail(err):
			a.Close()
			return nil, rep, fmt.Errorf("%w: %s is not the newest segment yet ends in an invalid record: %v", wal.ErrCorruption, seg.Path(), err)
		default:
			a.Close()
			return nil, rep, err
		}
		lastLSN = last
		orphanCut = orphan
		if !newest && !sealed {
			if serr := seg.SealAt(end); serr != nil {
				a.Close()
				return nil, rep, fmt.Errorf("recovery: sealing %s: %w", seg.Path(), serr)
			}
			logf("recovery: sealed %s at offset %d (a crash came between starting a new segment and sealing this one)", seg.Path(), end)
		}
		if newest {
			a.Resume(seg, end)
		}
	}
	if from > lastLSN {
		// The log ends before the index's checkpoint (a power cut lost
		// records the index had): the index cannot be trusted.
		logf("recovery: the key index's checkpoint (LSN %d) is past the end of the log (LSN %d): rebuilding it", from, lastLSN)
		cpOK, from = false, 0
		goto attempt
	}
	rep.Dropped = ks.PendingRecords()
	w := wal.Open(a, lastLSN)
	ks.Start(w)
	if !opts.NoScrub {
		ks.StartScrub(skipped, prefixes)
	}
	rep.IndexValidate = time.Since(validateStart)
	rep.Keys = ks.KeyCount()
	rep.Duration = time.Since(start)
	logf("recovery: %d segments, %d records, %d keys, %d bytes, %d ms (torn tail cut: %d bytes; unfinished transaction records dropped: %d; operations of cleaned-away collection states skipped: %d)",
		rep.Segments, rep.Records, rep.Keys, rep.Bytes, rep.Duration.Milliseconds(), rep.TornBytes, rep.Dropped, ks.ReplaySkipped())
	if ix != nil {
		rep.Index = ks.IndexReport()
		how := "re-attached at its checkpoint, LSN " + strconv.FormatUint(rep.Index.FromLSN, 10)
		switch {
		case rep.Index.FromLSN == 0:
			how = "rebuilt from the whole log"
		case rep.Index.Repaired:
			how += " (the next checkpoint was being applied: repair mode)"
		}
		logf("recovery: key index %s: mapped in %d µs, %d segments skipped, %d records validated and %d of them replayed after the checkpoint in %d ms (the checkpoint that follows included), %d leftover slots swept, %d bytes of table; collections: %d records up to the checkpoint scanned from segment %d, %d of their operations applied, %d anchored keys",
			how, rep.IndexAttach.Microseconds(), rep.SkippedSegments, rep.Records, rep.Index.Replayed, rep.IndexValidate.Milliseconds(), rep.Index.Swept, rep.Index.TableBytes,
			rep.Index.AnchorScanned, rep.Index.AnchorSeg, rep.Index.AnchorApplied, rep.Index.Anchored)
	}
	return ks, rep, nil
}

// trustPrefix reports whether the records of the newest segment seg up
// to the key index's checkpoint (offset cpOff, LSN from) may go unread at
// start-up, verified by the scrub instead: the log must reach the
// checkpoint (its record of LSN from ends at cpOff), and seg must carry no
// clean-shutdown mark (nor a damaged word that may have been one). A clean shutdown vouches for every record before
// its mark, and start-up holds it to that (any bad record before the mark
// is corruption, refused at once), so after one the segment is read
// whole: a clean restart pays that read, a restart after a crash does not.
func trustPrefix(seg *arena.Segment, cpOff int64, from uint64) bool {
	if _, marked := seg.ShutdownEnd(); marked || seg.ShutdownWordDamaged() {
		return false
	}
	return wal.EndsAt(seg, cpOff, from)
}

// startsAt reports whether the record of LSN after+1 begins at off in seg,
// or the records end there (a checkpoint's replay start).
func startsAt(seg *arena.Segment, off int64, after uint64) bool {
	if off < arena.HeaderSize || off > seg.Size() {
		return false
	}
	if end, sealed := seg.Sealed(); sealed && end == off {
		return true
	}
	rec, err := wal.DecodeRecord(seg.Bytes(), off)
	return err == nil && rec.LSN == after+1 || errors.Is(err, wal.ErrCleanEnd)
}

// ChainLSN checks that segment segs[i] continues the log where segs[i-1]
// ended at LSN prevLast: its base LSN (the LSN of the last record appended
// before it was created) must equal prevLast. The one exception is an
// orphan (see Open; orphanCut): records appended to it but never persisted
// (cut as a torn tail, or never written back at all) had LSNs up to the
// base, so the base may lie above prevLast. A base below prevLast, or above it otherwise, means
// records are missing or the files are not one log: wal.ErrCorruption,
// naming both files. The oldest segment (i == 0) has no predecessor to
// check against.
func ChainLSN(segs []*arena.Segment, i int, prevLast uint64, orphanCut bool) error {
	if i == 0 {
		return nil
	}
	seg, prev := segs[i], segs[i-1]
	base := seg.BaseLSN()
	switch {
	case base == prevLast, base > prevLast && orphanCut:
		return nil
	case base < prevLast:
		return fmt.Errorf("%w: %s: base LSN %d is below the last LSN %d of %s: the files are not one log", wal.ErrCorruption, seg.Path(), base, prevLast, prev.Path())
	default:
		return fmt.Errorf("%w: %s starts after LSN %d but %s ends at LSN %d: records %d to %d are missing between them", wal.ErrCorruption, seg.Path(), base, prev.Path(), prevLast, prevLast+1, base)
	}
}

// EmptyFrom reports whether segs[i:] hold no record yet.
func EmptyFrom(segs []*arena.Segment, i int) bool {
	for _, seg := range segs[i:] {
		if _, err := wal.DecodeRecord(seg.Bytes(), arena.HeaderSize); !errors.Is(err, wal.ErrCleanEnd) {
			return false
		}
	}
	return true
}

// cutTail zeroes seg from end to the last non-zero byte and persists it, so
// later appends never run into stale bytes. It returns the bytes cleared.
func cutTail(seg *arena.Segment, end int64) (int64, error) {
	buf := seg.Bytes()
	last := int64(len(buf))
	for last > end && buf[last-1] == 0 {
		last--
	}
	if last <= end {
		return 0, nil
	}
	clear(buf[end:last])
	if err := seg.Persist(end, last-end); err != nil {
		return 0, fmt.Errorf("recovery: persisting the cut tail of %s: %w", seg.Path(), err)
	}
	return last - end, nil
}

// ErrCorruption is wal.ErrCorruption, re-exported for callers of Open.
var ErrCorruption = wal.ErrCorruption

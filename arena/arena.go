package arena

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cespare/xxhash/v2"
	"github.com/persimmon-db/persimmon/pmem"
	"golang.org/x/sys/unix"
)

// On-disk constants. Never change them: they are the segment format.
const (
	HeaderSize = 4096 // bytes before the first record
	Magic      = "PSMNARNA"
	// FormatVersion is the version this build writes into new segments.
	// Version 2 is version 1 whose record headers may carry the durable
	// gap (package wal, reserved bytes 6-7 of a record header, zero in
	// version 1): a binary that knows only version 1 would take such a
	// record for an invalid one (a torn tail to cut), so it must refuse
	// the segment instead, and does (ErrBadVersion).
	FormatVersion = 2
	// FormatVersion1 is the first format: still read, and still appended
	// to (with version-1 records) when it is the active segment.
	FormatVersion1  = 1
	ChecksumXXHash  = 1
	sealWordOffset  = 64
	baseLSNOffset   = 32
	headerSumOffset = 40
	// headerCheckedEnd is the end of the bytes headerSum reads.
	headerCheckedEnd = HeaderSize
	pageSize         = 4096
	// Words added after format version 1 shipped. They lie outside the
	// range the version-1 header checksum covers, so a version-1 reader
	// ignores them and a version-1 segment (zeros there) still opens;
	// each is self-checking (checkedWord). From version 2 the checksum
	// covers the chain word (see the package doc).
	chainWordOffset   = 48 // set at creation: this segment's writer keeps the chain marks
	cleanedWordOffset = 72 // set before the predecessor is removed by the cleaner
	// ShutdownWordOffset is where the clean-shutdown commit point (8 bytes)
	// lies in a segment's header; tests zero it to turn a cleanly closed
	// directory into what a crash leaves.
	ShutdownWordOffset = 80
	shutdownWordOffset = ShutdownWordOffset

	// Tags mixed into checkedWord so that one word cannot pass for another.
	tagChain    = 1
	tagCleaned  = 2
	tagShutdown = 3

	// DefaultSegmentSize is the size of a segment file unless configured.
	DefaultSegmentSize = 64 << 20
	// MinSegmentSize is the smallest segment size accepted.
	MinSegmentSize = 64 << 10
	// allocChunk is how far ahead of the append offset blocks are allocated.
	allocChunk = 1 << 20
)

// Errors from opening segment headers. Each is wrapped with the file name.
var (
	ErrBadMagic    = errors.New("arena: bad segment magic")
	ErrBadVersion  = errors.New("arena: unsupported segment format version")
	ErrBadChecksum = errors.New("arena: segment header checksum mismatch")
	ErrBadSeal     = errors.New("arena: seal word does not match segment")
	// ErrShortFile: a segment file is shorter (or longer) than the size its
	// header records: it was truncated, or its header is not its own.
	ErrShortFile = errors.New("arena: segment file size does not match its header")
	// ErrMissingSegment: the segment files do not form an unbroken chain
	// (a file in the middle, or one the cleaner never removed, is gone).
	ErrMissingSegment = errors.New("arena: missing segment")
	// ErrNoSpace wraps a failure to create a segment because the disk is full.
	ErrNoSpace = errors.New("arena: no space left on device")
	// ErrSeal wraps a failure to persist a segment's records and seal word
	// when a new segment takes over: the log can no longer promise those
	// records are durable, so the writer must stop (fail-stop).
	ErrSeal = errors.New("arena: sealing the previous segment failed")
	// ErrLocked: another process (a server or persimmon-check) has the
	// data directory open.
	ErrLocked = errors.New("arena: data directory is in use by another process")
)

// Options configure Open.
type Options struct {
	Dir         string
	Mode        pmem.Mode
	SegmentSize int64 // bytes; 0 means DefaultSegmentSize; rounded up to a page
	// Inspect opens the directory for offline inspection: nothing is
	// created, removed or changed by Open (persimmon-check verify/dump).
	Inspect bool
	// Logf, if set, receives a line for each file Open changes (a
	// half-created newest segment it removes) or, with Inspect, skips.
	Logf func(format string, args ...any)
}

// Segment is one mapped segment file. Its file is sparse: blocks are
// allocated (fallocate) as appends reach them, so disk usage follows the
// data rather than the segment size.
type Segment struct {
	id        uint64
	region    *pmem.Region
	buf       []byte
	sealedEnd atomic.Int64 // 0 while active
	allocated atomic.Int64 // bytes allocated on disk (a prefix of the file)
	// prefill: ensure writes zeros into the page cache ahead of the
	// appends, up to filled (a segment this process created, not on DAX;
	// see prefillAhead). Single writer, like Alloc.
	prefill bool
	filled  int64

	fileMu sync.Mutex // guards file
	file   *os.File   // opened by the first WriteAt; closed with the mapping
}

// WriteAt writes the concatenation of bufs at off (bytes from segment
// start) with pwritev(2) on the segment file instead of storing through
// the mapping: the kernel copies into the page cache (on DAX, into the
// persistent memory itself), so nothing faults on pages of the mapping
// that were never touched. The bytes are visible through Bytes when it
// returns (one page cache). They are as durable as stores into the
// mapping that were never flushed: a process crash keeps them; power loss
// needs an msync or fdatasync of the range, except on DAX, where the
// kernel writes them with cache-flushing stores before returning. The
// range must lie within what Alloc returned, blocks allocated. Single
// writer, like Alloc.
func (s *Segment) WriteAt(bufs [][]byte, off int64) error {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	if off < HeaderSize || n > s.Size()-off {
		panic(fmt.Sprintf("arena: WriteAt [%d, %d) outside the records of segment %d (%d bytes)", off, off+n, s.id, s.Size()))
	}
	f, err := s.writeFile()
	if err != nil {
		return err
	}
	fd := int(f.Fd())
	for len(bufs) > 0 {
		// pwritev takes at most IOV_MAX (1024) buffers at a time.
		iov := bufs[:min(len(bufs), 1024)]
		w, err := unix.Pwritev(fd, iov, off)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("%w: writing %s at %d: %v", ErrNoSpace, s.Path(), off, err)
			}
			return fmt.Errorf("arena: writing %s at %d: %w", s.Path(), off, err)
		}
		if w == 0 {
			return fmt.Errorf("arena: writing %s at %d: %w", s.Path(), off, io.ErrShortWrite)
		}
		off += int64(w)
		// Drop what was written: whole buffers, then the front of one.
		for w > 0 && len(bufs) > 0 {
			if w >= len(bufs[0]) {
				w -= len(bufs[0])
				bufs = bufs[1:]
				continue
			}
			bufs = append([][]byte{bufs[0][w:]}, bufs[1:]...)
			w = 0
		}
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
	}
	return nil
}

// writeFile returns the descriptor WriteAt writes through, opening it the
// first time.
func (s *Segment) writeFile() (*os.File, error) {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	if s.file == nil {
		f, err := os.OpenFile(s.Path(), os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("arena: %w", err)
		}
		s.file = f
	}
	return s.file, nil
}

// close unmaps the segment and closes WriteAt's descriptor.
func (s *Segment) close() error {
	err := s.region.Close()
	s.fileMu.Lock()
	if s.file != nil {
		err = errors.Join(err, s.file.Close())
		s.file = nil
	}
	s.fileMu.Unlock()
	return err
}

// ID is the segment id (also its position in replay order).
func (s *Segment) ID() uint64 { return s.id }

// Bytes is the whole mapping, header included.
func (s *Segment) Bytes() []byte { return s.buf }

// Size is the segment size in bytes.
func (s *Segment) Size() int64 { return int64(len(s.buf)) }

// Path is the segment file's path.
func (s *Segment) Path() string { return s.region.Path() }

// Sealed returns the sealed end offset (bytes from segment start) and true
// once the segment has been sealed.
func (s *Segment) Sealed() (end int64, ok bool) {
	e := s.sealedEnd.Load()
	return e, e != 0
}

// Persist makes [off, off+n) durable under the arena's mode.
func (s *Segment) Persist(off, n int64) error { return s.region.Persist(off, n) }

// Flush writes back the cache lines of [off, off+n) without a fence (pmem mode
// building block; see pmem.Region.Flush).
func (s *Segment) Flush(off, n int64) { s.region.Flush(off, n) }

// Msync msyncs [off, off+n).
func (s *Segment) Msync(off, n int64) error { return s.region.Msync(off, n) }

// SyncFd is the segment file's descriptor for a range sync by other means
// than Msync (pmem.Region.SyncFd), or false where that would not do.
func (s *Segment) SyncFd() (int, bool) { return s.region.SyncFd() }

// BaseLSN is the LSN of the last record written before this segment was
// created: every record in it has a higher LSN.
func (s *Segment) BaseLSN() uint64 { return binary.LittleEndian.Uint64(s.buf[baseLSNOffset:]) }

// Version is the segment's format version (FormatVersion1 or
// FormatVersion): what its records may hold (package wal).
func (s *Segment) Version() uint32 { return binary.LittleEndian.Uint32(s.buf[8:]) }

// Mode is the durability mode of the segment's mapping.
func (s *Segment) Mode() pmem.Mode { return s.region.Mode() }

// seal persists [from, end), then stores and persists the seal word.
func (s *Segment) seal(from, end int64) error {
	if end < HeaderSize || end > s.Size() {
		panic(fmt.Sprintf("arena: seal end %d outside segment %d of %d bytes", end, s.id, s.Size()))
	}
	if from < end {
		if err := s.region.Persist(from, end-from); err != nil {
			return err
		}
	}
	binary.LittleEndian.PutUint64(s.buf[sealWordOffset:], sealWord(s.id, end))
	if err := s.region.Persist(sealWordOffset, 8); err != nil {
		return err
	}
	s.sealedEnd.Store(end)
	return nil
}

// SealAt seals a segment recovery found unsealed although a newer one
// exists (a crash between creating the new segment and sealing this one,
// see Alloc): [HeaderSize, end) is persisted, then the seal word. end is
// where its valid records stop (bytes from segment start).
func (s *Segment) SealAt(end int64) error { return s.seal(HeaderSize, end) }

// Unseal clears the seal word, making seg active again (offline repair:
// the segment is about to be cut and become the newest).
func (s *Segment) Unseal() error {
	binary.LittleEndian.PutUint64(s.buf[sealWordOffset:], 0)
	if err := s.region.Persist(sealWordOffset, 8); err != nil {
		return err
	}
	s.sealedEnd.Store(0)
	return nil
}

// ShutdownEnd returns the end offset of the records (bytes from segment
// start) recorded by a clean shutdown, and true if the segment carries
// that mark. Records must be valid exactly up to it: a bad record before
// it is corruption, not a torn tail.
func (s *Segment) ShutdownEnd() (end int64, ok bool) {
	w := binary.LittleEndian.Uint64(s.buf[shutdownWordOffset:])
	if w == 0 {
		return 0, false
	}
	end = int64(w & (1<<48 - 1))
	if checkedWord(s.id, tagShutdown, uint64(end)) != w || end < HeaderSize || end > s.Size() {
		return 0, false
	}
	return end, true
}

// ShutdownWordDamaged reports whether the clean-shutdown word is set but
// does not verify. A crash cannot leave that (the word is one aligned
// 8-byte store, atomic across power loss), so the word was damaged, and
// whether the segment was shut down cleanly is unknown: its readers take
// the stricter answer (package wal: no torn tail).
func (s *Segment) ShutdownWordDamaged() bool {
	_, ok := s.ShutdownEnd()
	return !ok && s.shutdownWordSet()
}

// shutdownWordSet reports whether the clean-shutdown word is non-zero
// (valid or not).
func (s *Segment) shutdownWordSet() bool {
	return binary.LittleEndian.Uint64(s.buf[shutdownWordOffset:]) != 0
}

// MarkShutdown records a clean shutdown: every record of the segment,
// which end ends, has been persisted by the caller; the 8-byte
// clean-shutdown word is stored and persisted after them (a commit point,
// invariant 4 of DESIGN.md).
func (s *Segment) MarkShutdown(end int64) error {
	if end < HeaderSize || end > s.Size() {
		panic(fmt.Sprintf("arena: shutdown end %d outside segment %d of %d bytes", end, s.id, s.Size()))
	}
	binary.LittleEndian.PutUint64(s.buf[shutdownWordOffset:], checkedWord(s.id, tagShutdown, uint64(end)))
	return s.region.Persist(shutdownWordOffset, 8)
}

// ClearShutdown clears the clean-shutdown word durably; the writer calls it
// before it appends again after a clean shutdown, so that a later crash
// leaves an ordinary (torn-tail tolerant) active segment.
func (s *Segment) ClearShutdown() error {
	if !s.shutdownWordSet() {
		return nil
	}
	binary.LittleEndian.PutUint64(s.buf[shutdownWordOffset:], 0)
	return s.region.Persist(shutdownWordOffset, 8)
}

// chainAware reports whether the segment was created by a writer that
// marks a segment before removing its predecessor (the cleaned word). In
// version 2 the chain word is covered by the header checksum; in version
// 1 it is not, and a word that is set but does not verify (damaged) counts
// as set: the stricter reading (the oldest segment must then show that its
// predecessor was cleaned, or persimmon-check repair accepts the loss).
func (s *Segment) chainAware() bool {
	return binary.LittleEndian.Uint64(s.buf[chainWordOffset:]) != 0
}

// predecessorCleaned reports whether the cleaner removed the segment
// before this one.
func (s *Segment) predecessorCleaned() bool {
	return binary.LittleEndian.Uint64(s.buf[cleanedWordOffset:]) == checkedWord(s.id, tagCleaned, s.id-1)
}

// DAX reports whether the segment is mapped with MAP_SYNC on a DAX
// filesystem.
func (s *Segment) DAX() bool { return s.region.DAX() }

func sealWord(id uint64, end int64) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], id)
	binary.LittleEndian.PutUint64(b[8:], uint64(end))
	check := xxhash.Sum64(b[:]) >> 48
	if check == 0 {
		check = 1 // a sealed word is never zero
	}
	return check<<48 | uint64(end)
}

// checkedWord packs a 48-bit value v with a 16-bit check over (id, tag,
// v) into one word, never zero: a header word that is read back as valid
// was written whole for this segment and this purpose.
func checkedWord(id uint64, tag uint8, v uint64) uint64 {
	var b [17]byte
	binary.LittleEndian.PutUint64(b[0:], id)
	binary.LittleEndian.PutUint64(b[8:], v)
	b[16] = tag
	check := xxhash.Sum64(b[:]) >> 48
	if check == 0 {
		check = 1
	}
	return check<<48 | v&(1<<48-1)
}

func decodeSeal(id uint64, w uint64) (end int64, err error) {
	if w == 0 {
		return 0, nil
	}
	end = int64(w & (1<<48 - 1))
	if sealWord(id, end) != w {
		return 0, ErrBadSeal
	}
	return end, nil
}

// Arena is the set of segment files of one data directory.
type Arena struct {
	opts Options
	dir  *os.File

	mu    sync.Mutex                 // guards segment creation and removal
	table atomic.Pointer[[]*Segment] // index: id → segment, nil when absent

	// Append state: owned by the single writer (see Alloc).
	active *Segment
	tail   int64
}

// mkdirDurable creates dir and any missing parents, and fsyncs the parent
// of each directory it created, so that a power cut right after the first
// acknowledged write cannot take the directory (and the segments in it)
// away with it.
func mkdirDurable(dir string) error {
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := pmem.SyncDir(filepath.Dir(missing[i])); err != nil {
			return fmt.Errorf("syncing the parent of %s: %w", missing[i], err)
		}
	}
	return nil
}

// Open opens (creating if needed) the data directory and maps every segment
// file in it, verifying headers and seal words. It does not scan records.
// A newest segment whose header is invalid (a crash while creating it) is
// removed; an invalid header elsewhere is an error naming the file.
func Open(opts Options) (*Arena, error) {
	if opts.SegmentSize == 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.SegmentSize < MinSegmentSize {
		return nil, fmt.Errorf("arena: segment size %d is below the minimum %d", opts.SegmentSize, MinSegmentSize)
	}
	opts.SegmentSize = roundUp(opts.SegmentSize, pageSize)
	if !opts.Inspect {
		if err := mkdirDurable(opts.Dir); err != nil {
			return nil, fmt.Errorf("arena: %w", err)
		}
	}
	dir, err := os.Open(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("arena: %w", err)
	}
	// One process at a time: a second server (or a repair) on a live
	// directory would interleave appends and lose acknowledged writes.
	if err := syscall.Flock(int(dir.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		dir.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, opts.Dir)
		}
		return nil, fmt.Errorf("arena: locking %s: %w", opts.Dir, err)
	}
	a := &Arena{opts: opts, dir: dir}
	empty := []*Segment{}
	a.table.Store(&empty)

	ids, err := listSegments(opts.Dir)
	if err != nil {
		dir.Close()
		return nil, err
	}
	for i, id := range ids {
		seg, err := a.openSegment(id)
		if err != nil {
			if i == len(ids)-1 && isHeaderError(err) && a.mayBeHalfCreated(id) && a.halfCreated(id) {
				if opts.Inspect {
					// Offline inspection changes nothing: the file is left
					// for the server to remove, and skipped here as the
					// server would skip it.
					if opts.Logf != nil {
						opts.Logf("arena: skipped %s, left half-created by a crash while it was being created (%v); the server removes it at start-up", a.segmentPath(id), err)
					}
					continue
				}
				// Crash between creating the newest file and persisting its
				// header: nothing was ever appended to it (its records area
				// is all zero), so there is nothing to lose.
				logRemoved(opts, a.segmentPath(id), err)
				if rmErr := os.Remove(a.segmentPath(id)); rmErr != nil {
					a.Close()
					return nil, fmt.Errorf("arena: removing half-created %s: %w", a.segmentPath(id), rmErr)
				}
				if err := a.dir.Sync(); err != nil {
					a.Close()
					return nil, fmt.Errorf("arena: fsync dir: %w", err)
				}
				continue
			}
			a.Close()
			return nil, err
		}
		a.publish(seg)
	}
	return a, nil
}

// mayBeHalfCreated reports whether a crash could have left the newest
// segment id half-created, judging by the segment before it: Alloc and
// Rotate create a segment before they seal the previous one, so while a
// segment is being created the one before it is unsealed. A sealed
// predecessor means id was created in full; a missing one (id > 1: the
// cleaner removed it) means id existed, sealed predecessor and all, when
// the cleaner ran. Call it with the older segments published.
func (a *Arena) mayBeHalfCreated(id uint64) bool {
	prev := a.Segment(id - 1)
	if prev == nil {
		return id == 1
	}
	_, sealed := prev.Sealed()
	return !sealed
}

// firstAlloc is what create allocates of a new segment file before it sets
// the file's full size: the header and one page of records.
const firstAlloc = HeaderSize + pageSize

// halfCreated reports whether segment id's file is what a crash while
// creating it leaves, and nothing else: create allocates its first pages
// (the header and one page of records: the file is then HeaderSize +
// pageSize bytes of zeros, or less if the crash came during that
// allocation), sets the full size, then stores and persists the header. So
// either the file is at most that first allocation long and all zero, or
// it has a full segment's size, a header that does not verify and nothing
// but zeros after it. A file whose header verifies, or
// that holds anything but zeros at a size create never leaves, was
// truncated or damaged: never removed silently. Read errors count as not
// half-created.
func (a *Arena) halfCreated(id uint64) bool {
	f, err := os.Open(a.segmentPath(id))
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	head := make([]byte, HeaderSize)
	n, _ := f.ReadAt(head, 0)
	if n >= headerCheckedEnd && checkHeaderSum(head) == nil {
		return false
	}
	if fi.Size() <= firstAlloc {
		return zeroFrom(f, 0)
	}
	if fi.Size() < MinSegmentSize || fi.Size()%pageSize != 0 {
		return false
	}
	return zeroFrom(f, HeaderSize)
}

// zeroFrom reports whether f holds only zeros from off to its end.
func zeroFrom(f *os.File, off int64) bool {
	buf := make([]byte, 1<<16)
	for {
		n, err := f.ReadAt(buf, off)
		if !isZero(buf[:n]) {
			return false
		}
		off += int64(n)
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// logRemoved reports the removal of a half-created segment file on stderr:
// a file disappearing from the data directory is never silent.
func logRemoved(opts Options, path string, why error) {
	if opts.Logf != nil {
		opts.Logf("arena: removed %s, left half-created by a crash while it was being created (%v)", path, why)
	}
}

func isHeaderError(err error) bool {
	return errors.Is(err, ErrBadMagic) || errors.Is(err, ErrBadChecksum) || errors.Is(err, ErrBadVersion) || errors.Is(err, ErrShortFile)
}

// SegmentFiles lists the segment files of dir in id order.
func SegmentFiles(dir string) ([]string, error) {
	ids, err := listSegments(dir)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = filepath.Join(dir, fmt.Sprintf("seg-%016x.arena", id))
	}
	return paths, nil
}

// HeaderFileSize reads the header of the segment file at path and returns
// the file size its header records and the file's actual size. err is
// non-nil when the header cannot be read or does not verify.
func HeaderFileSize(path string) (want, have int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("arena: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("arena: %w", err)
	}
	head := make([]byte, headerCheckedEnd)
	if n, _ := f.ReadAt(head, 0); n < headerSumOffset+8 {
		return 0, fi.Size(), fmt.Errorf("%s: %w: %d bytes, shorter than a segment header", path, ErrShortFile, fi.Size())
	}
	want = int64(binary.LittleEndian.Uint64(head[24:]))
	if err := checkHeaderSum(head); err != nil {
		// A file cut inside its header page (the version-2 checksum
		// covers all of it; what is missing reads as zeros, as the
		// unused bytes are): its sizes say what happened, if the size
		// it records is one a segment can have.
		if fi.Size() < HeaderSize && string(head[:8]) == Magic && want >= MinSegmentSize && want%pageSize == 0 && want < 1<<44 {
			return want, fi.Size(), nil
		}
		return 0, fi.Size(), fmt.Errorf("%s: %w", path, err)
	}
	return want, fi.Size(), nil
}

// CheckChain checks that the open segments form an unbroken chain: their
// ids are consecutive (the cleaner removes only the oldest segment, so a
// gap means a file was lost), and the oldest is either segment 1 or one
// whose predecessor the cleaner removed (it marks the successor first).
// Segments written before that mark existed (format version 1 writers)
// cannot show it; for them the oldest is taken as is. Errors wrap
// ErrMissingSegment and name the files on either side of the gap.
// LSN continuity across segments needs their records: recovery and
// persimmon-check check it while scanning.
func (a *Arena) CheckChain() error {
	if err := a.CheckOldest(); err != nil {
		return err
	}
	segs := a.Segments()
	for i := 1; i < len(segs); i++ {
		prev, seg := segs[i-1], segs[i]
		if seg.id != prev.id+1 {
			missing := filepath.Base(a.segmentPath(prev.id + 1))
			if seg.id > prev.id+2 {
				missing += " to " + filepath.Base(a.segmentPath(seg.id-1))
			}
			return fmt.Errorf("%w: %s is followed by %s: %s missing (the cleaner removes only the oldest segment); restore it, or run persimmon-check repair to keep the log up to %s",
				ErrMissingSegment, prev.Path(), seg.Path(), missing, filepath.Base(prev.Path()))
		}
	}
	return nil
}

// CheckOldest checks the first half of CheckChain: that the oldest
// segment is segment 1 or one whose predecessor the cleaner removed.
func (a *Arena) CheckOldest() error {
	segs := a.Segments()
	if len(segs) == 0 {
		return nil
	}
	if first := segs[0]; first.id != 1 && first.chainAware() && !first.predecessorCleaned() {
		return fmt.Errorf("%w: %s is the oldest segment file, but the cleaner did not remove %s before it (it marks the next segment first): that file is missing; restore it, or run persimmon-check repair to accept the loss",
			ErrMissingSegment, first.Path(), filepath.Base(a.segmentPath(first.id-1)))
	}
	return nil
}

// AcceptOldest marks the oldest segment as if the cleaner had removed its
// predecessor (persimmon-check repair, when the operator accepts that the
// segments before it are lost).
func (a *Arena) AcceptOldest() error {
	segs := a.Segments()
	if len(segs) == 0 || segs[0].id == 1 {
		return nil
	}
	return segs[0].markPredecessorCleaned()
}

func (s *Segment) markPredecessorCleaned() error {
	binary.LittleEndian.PutUint64(s.buf[cleanedWordOffset:], checkedWord(s.id, tagCleaned, s.id-1))
	return s.region.Persist(cleanedWordOffset, 8)
}

func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("arena: %w", err)
	}
	var ids []uint64
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "seg-") || !strings.HasSuffix(name, ".arena") {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "seg-"), ".arena"), 16, 64)
		if err != nil || id == 0 {
			continue
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func (a *Arena) segmentPath(id uint64) string {
	return filepath.Join(a.opts.Dir, fmt.Sprintf("seg-%016x.arena", id))
}

func (a *Arena) openSegment(id uint64) (*Segment, error) {
	path := a.segmentPath(id)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("arena: %w", err)
	}
	if want, have, err := HeaderFileSize(path); err != nil {
		return nil, err
	} else if want != have {
		return nil, fmt.Errorf("%s: %w: the file is %d bytes, its header says %d (%s); run persimmon-check repair to keep its valid prefix",
			path, ErrShortFile, have, want, shortness(want, have))
	}
	if fi.Size() < HeaderSize || fi.Size()%pageSize != 0 {
		return nil, fmt.Errorf("%s: %w: %d bytes is not a whole number of pages", path, ErrShortFile, fi.Size())
	}
	r, err := pmem.MapSparse(path, fi.Size(), 0, a.opts.Mode)
	if err != nil {
		return nil, fmt.Errorf("arena: %w", err)
	}
	seg := &Segment{id: id, region: r, buf: r.Bytes()}
	if n, err := r.AllocatedBytes(); err == nil {
		seg.allocated.Store(n)
	}
	if err := checkHeader(seg.buf, id); err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	end, err := decodeSeal(id, binary.LittleEndian.Uint64(seg.buf[sealWordOffset:]))
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s offset %d: %w", path, sealWordOffset, err)
	}
	if end != 0 && (end < HeaderSize || end > seg.Size()) {
		r.Close()
		return nil, fmt.Errorf("%s offset %d: %w (end %d)", path, sealWordOffset, ErrBadSeal, end)
	}
	seg.sealedEnd.Store(end)
	if w := binary.LittleEndian.Uint64(seg.buf[cleanedWordOffset:]); w != 0 && !seg.predecessorCleaned() && a.opts.Logf != nil {
		// Read only in the oldest segment (CheckOldest: there it reads as
		// unset, a missing predecessor); elsewhere the cleaner rewrites it
		// before it can matter.
		a.opts.Logf("arena: %s offset %d: the cleaned word %#016x does not verify (damaged); it counts as unset", path, cleanedWordOffset, w)
	}
	return seg, nil
}

func shortness(want, have int64) string {
	if have < want {
		return fmt.Sprintf("truncated: %d bytes missing", want-have)
	}
	return fmt.Sprintf("%d bytes too long", have-want)
}

// checkHeaderSum checks the magic and checksum of the header in b (at
// least headerCheckedEnd bytes).
func checkHeaderSum(b []byte) error {
	if string(b[0:8]) != Magic {
		return fmt.Errorf("%w: got %q, want %q", ErrBadMagic, b[0:8], Magic)
	}
	if sum := headerSum(b); sum != binary.LittleEndian.Uint64(b[headerSumOffset:]) {
		return fmt.Errorf("%w: stored %#x, computed %#x", ErrBadChecksum, binary.LittleEndian.Uint64(b[headerSumOffset:]), sum)
	}
	return nil
}

// headerSum is the header checksum of the header in b (at least
// headerCheckedEnd bytes): xxhash64 of bytes [0, 40) in version 1; from
// version 2 on, of the whole header page but the checksum itself and the
// three commit-point words at [64, 88) (seal, cleaned, clean-shutdown),
// which change after creation: the chain word, written once at creation
// before the checksum, and the unused bytes are covered too.
func headerSum(b []byte) uint64 {
	if binary.LittleEndian.Uint32(b[8:]) < 2 {
		return xxhash.Sum64(b[:headerSumOffset])
	}
	var d xxhash.Digest
	d.Reset()
	d.Write(b[:headerSumOffset])
	d.Write(b[chainWordOffset:sealWordOffset])
	d.Write(b[shutdownWordOffset+8 : HeaderSize])
	return d.Sum64()
}

func checkHeader(b []byte, id uint64) error {
	if err := checkHeaderSum(b); err != nil {
		return err
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v < FormatVersion1 || v > FormatVersion {
		return fmt.Errorf("%w: %d (want %d to %d)", ErrBadVersion, v, FormatVersion1, FormatVersion)
	}
	if c := binary.LittleEndian.Uint32(b[12:]); c != ChecksumXXHash {
		return fmt.Errorf("%w: checksum algorithm %d", ErrBadVersion, c)
	}
	if got := binary.LittleEndian.Uint64(b[16:]); got != id {
		return fmt.Errorf("%w: header names segment %d, file name %d", ErrBadChecksum, got, id)
	}
	if got := binary.LittleEndian.Uint64(b[24:]); got != uint64(len(b)) {
		return fmt.Errorf("%w: header size %d, file size %d", ErrBadChecksum, got, len(b))
	}
	return nil
}

// publish adds seg to the lookup table (copy on write).
func (a *Arena) publish(seg *Segment) {
	old := *a.table.Load()
	n := len(old)
	if int(seg.id) >= n {
		n = int(seg.id) + 1
	}
	t := make([]*Segment, n)
	copy(t, old)
	t[seg.id] = seg
	a.table.Store(&t)
}

// Segment returns the segment with id, or nil.
func (a *Arena) Segment(id uint64) *Segment {
	t := *a.table.Load()
	if id >= uint64(len(t)) {
		return nil
	}
	return t[id]
}

// Segments returns the open segments in id order.
func (a *Arena) Segments() []*Segment {
	var out []*Segment
	for _, s := range *a.table.Load() {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Bytes is the disk space the segment files occupy (allocated blocks).
func (a *Arena) Bytes() int64 {
	var n int64
	for _, s := range *a.table.Load() {
		if s != nil {
			n += s.allocated.Load()
		}
	}
	return n
}

// AllocatedBytes is the disk space the segment occupies.
func (s *Segment) AllocatedBytes() int64 { return s.allocated.Load() }

// ensure allocates the segment's blocks up to at least end (bytes from
// segment start), a chunk at a time, and keeps the prefill ahead of end.
func (s *Segment) ensure(end int64) error {
	have := s.allocated.Load()
	if end > have {
		want := min(roundUp(end+allocChunk, allocChunk), s.Size())
		err := s.region.Allocate(have, want-have)
		if errors.Is(err, syscall.ENOSPC) {
			// The chunk ahead is an optimisation (fewer fallocate calls), not
			// a need: on a nearly full (or tiny) filesystem allocate just the
			// pages this append needs.
			want = min(roundUp(end, pageSize), s.Size())
			err = s.region.Allocate(have, want-have)
		}
		if err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("%w: %v", ErrNoSpace, err)
			}
			return fmt.Errorf("arena: %w", err)
		}
		s.allocated.Store(want)
		have = want
	}
	if s.prefill && end+prefillLead > s.filled {
		s.prefillAhead(end, have)
	}
	return nil
}

// The prefill writes prefillStep bytes at a time, to stay prefillLead
// bytes ahead of the appends.
const (
	prefillStep = 128 << 10
	prefillLead = 2 * prefillStep
)

// zeroStep is what prefillAhead writes.
var zeroStep [prefillStep]byte

// prefillAhead writes zeros with pwrite over the next prefillStep bytes
// at or after end (where no append has reached: every record written
// lies before the allocation that asked for end) and below allocated, so
// that the appends' stores into the mapping find those pages in the page
// cache. A store into a page of an allocated but never written range is
// a major fault, one page at a time: the kernel allocates the page,
// "reads" it (zeros, from the unwritten extent) and has ext4 map its
// block. The pwrite does that work for 32 pages in one call, in large
// folios, and a store then takes one minor fault per folio
// (TestPrefillKeepsRecords: 4,097 major faults for 4,094 pages appended
// without it, 520 minor faults with it). The arena's page faults were 8%
// of the server's CPU at SET -P 16 (perf); with the prefill the process
// takes 0.016 faults a SET instead of 0.039 (/proc/PID/stat, minor plus
// major, the Go heap's included). A step of 128 KB keeps the pause of
// one pwrite short (tens of µs) where a whole chunk at a time held a
// command for a megabyte's worth. The range holds zeros already (it was
// never written), so its content does not change; a failure only leaves
// the faults to happen.
//
// It runs only on a segment this process created (create sets prefill):
// there nothing at or after end has been written. A segment reopened at
// start-up is not prefilled: it is only ever appended to until it fills.
func (s *Segment) prefillAhead(end, allocated int64) {
	from := max(s.filled, end)
	to := min(from+prefillStep, allocated)
	if to <= from {
		return
	}
	f, err := s.writeFile()
	if err != nil {
		return
	}
	fd := int(f.Fd())
	for off := from; off < to; {
		w, err := unix.Pwrite(fd, zeroStep[:to-off], off)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || w <= 0 {
			return
		}
		off += int64(w)
		s.filled = off
	}
}

// Writable reports whether an append of n bytes (keeping keep bytes free
// after it, as Alloc) would find space now, allocating the blocks if it
// fits in the active segment. It is the probe a writer uses after a full
// disk to decide that the log is writable again; like Alloc it is single
// writer. Errors: ErrNoSpace (wrapped) while the disk is still too full.
func (a *Arena) Writable(n, keep int64) error {
	if a.active != nil && a.active.sealedEnd.Load() == 0 && a.tail+n+keep <= a.active.Size() {
		return a.active.ensure(a.tail + n + keep)
	}
	// A new segment is needed: its header page and the append.
	need := roundUp(HeaderSize+n+keep, pageSize)
	var st syscall.Statfs_t
	if err := syscall.Statfs(a.opts.Dir, &st); err != nil {
		return fmt.Errorf("arena: statfs %s: %w", a.opts.Dir, err)
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free < need {
		return fmt.Errorf("%w: %d bytes free in %s, a new segment needs %d", ErrNoSpace, free, a.opts.Dir, need)
	}
	return nil
}

// Dir is the data directory.
func (a *Arena) Dir() string { return a.opts.Dir }

// SegmentSize is the size of a new segment file in bytes.
func (a *Arena) SegmentSize() int64 { return a.opts.SegmentSize }

// Mode is the durability mode of every mapping.
func (a *Arena) Mode() pmem.Mode { return a.opts.Mode }

// Resume makes seg the active segment with appends continuing at tail
// (bytes from segment start). Recovery calls it after scanning.
func (a *Arena) Resume(seg *Segment, tail int64) {
	a.active, a.tail = seg, tail
}

// Active returns the active segment and its append offset (nil if none).
func (a *Arena) Active() (*Segment, int64) { return a.active, a.tail }

// Alloc reserves n bytes (a multiple of 8) for appending and returns the
// segment and offset (bytes from segment start). keep bytes must stay free
// in the segment after the allocation (room for a commit marker). When the
// active segment lacks room it is sealed — persisting [flushedFrom, tail)
// first — and a new one is created, sized to fit n+keep if that is more
// than the segment size. Single writer: callers serialise Alloc.
// Errors: ErrNoSpace (wrapped) when the disk is full; other I/O errors.
// baseLSN is the LSN of the last record appended before this allocation.
func (a *Arena) Alloc(n, keep, flushedFrom int64, baseLSN uint64) (*Segment, int64, error) {
	if n%8 != 0 {
		panic(fmt.Sprintf("arena: Alloc of %d bytes is not 8-byte aligned", n))
	}
	if a.active != nil && a.active.sealedEnd.Load() == 0 && a.tail+n+keep <= a.active.Size() {
		if err := a.active.ensure(a.tail + n + keep); err != nil {
			return nil, 0, err
		}
		off := a.tail
		a.tail += n
		return a.active, off, nil
	}
	size := a.opts.SegmentSize
	if need := roundUp(HeaderSize+n+keep, pageSize); need > size {
		size = need
	}
	// Create first, seal after: if creation fails the active segment keeps
	// serving smaller appends.
	seg, err := a.create(size, baseLSN)
	if err != nil {
		return nil, 0, err
	}
	if a.active != nil && a.active.sealedEnd.Load() == 0 {
		if err := a.active.seal(max(flushedFrom, HeaderSize), a.tail); err != nil {
			return nil, 0, fmt.Errorf("%w: %s: %w", ErrSeal, a.active.Path(), err)
		}
	}
	a.active, a.tail = seg, HeaderSize+n
	if err := seg.ensure(a.tail + keep); err != nil {
		// The new segment is empty and active; the caller gets the error
		// and a later Alloc retries the allocation.
		a.tail = HeaderSize
		return nil, 0, err
	}
	return seg, HeaderSize, nil
}

// Rotate seals the active segment now (persisting [flushedFrom, tail)
// first) and starts a new one, so the cleaner can reclaim the old one.
// baseLSN is the LSN of the last record appended. It does nothing when the
// active segment is empty. Single writer, like Alloc.
func (a *Arena) Rotate(flushedFrom int64, baseLSN uint64) error {
	if a.active == nil || a.tail <= HeaderSize {
		return nil
	}
	seg, err := a.create(a.opts.SegmentSize, baseLSN)
	if err != nil {
		return err
	}
	if a.active.sealedEnd.Load() == 0 {
		if err := a.active.seal(max(flushedFrom, HeaderSize), a.tail); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSeal, a.active.Path(), err)
		}
	}
	a.active, a.tail = seg, HeaderSize
	return nil
}

// create makes, maps and publishes a new segment file of size bytes whose
// records will have LSNs above baseLSN.
func (a *Arena) create(size int64, baseLSN uint64) (*Segment, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var id uint64 = 1
	if t := *a.table.Load(); len(t) > 0 {
		id = uint64(len(t))
	}
	path := a.segmentPath(id)
	// The header page and the first page of records: a segment that could
	// be created always has room for a small record (a FLUSHALL that frees
	// space on a full disk, see wal.AppendFreeing).
	r, err := pmem.MapSparse(path, size, firstAlloc, a.opts.Mode)
	if err != nil {
		os.Remove(path)
		if errors.Is(err, syscall.ENOSPC) {
			return nil, fmt.Errorf("%w: creating %s: %v", ErrNoSpace, path, err)
		}
		return nil, fmt.Errorf("arena: creating %s: %w", path, err)
	}
	seg := &Segment{id: id, region: r, buf: r.Bytes(), prefill: !r.DAX()}
	seg.allocated.Store(firstAlloc)
	b := seg.buf
	copy(b[0:8], Magic)
	binary.LittleEndian.PutUint32(b[8:], FormatVersion)
	binary.LittleEndian.PutUint32(b[12:], ChecksumXXHash)
	binary.LittleEndian.PutUint64(b[16:], id)
	binary.LittleEndian.PutUint64(b[24:], uint64(size))
	binary.LittleEndian.PutUint64(b[baseLSNOffset:], baseLSN)
	binary.LittleEndian.PutUint64(b[chainWordOffset:], checkedWord(id, tagChain, 1))
	binary.LittleEndian.PutUint64(b[headerSumOffset:], headerSum(b))
	if err := r.Persist(0, HeaderSize); err != nil {
		r.Close()
		os.Remove(path)
		return nil, fmt.Errorf("arena: persisting header of %s: %w", path, err)
	}
	if err := a.dir.Sync(); err != nil {
		r.Close()
		os.Remove(path)
		return nil, fmt.Errorf("arena: fsync %s: %w", a.opts.Dir, err)
	}
	a.publish(seg)
	return seg, nil
}

// Remove unmaps and deletes segment id and fsyncs the directory. The caller
// guarantees nothing reads the segment any more (the keyspace lock).
func (a *Arena) Remove(id uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	seg := a.Segment(id)
	if seg == nil {
		return nil
	}
	if seg == a.active {
		panic("arena: removing the active segment")
	}
	// Mark the successor first: a crash after the mark and before the
	// removal leaves both, which replays as before; a missing file without
	// the mark is a lost segment (CheckChain).
	if next := a.Segment(id + 1); next != nil {
		if err := next.markPredecessorCleaned(); err != nil {
			return fmt.Errorf("arena: marking %s before removing %s: %w", next.Path(), seg.Path(), err)
		}
	}
	old := *a.table.Load()
	t := make([]*Segment, len(old))
	copy(t, old)
	t[id] = nil
	a.table.Store(&t)
	if err := seg.close(); err != nil {
		return fmt.Errorf("arena: %w", err)
	}
	if err := os.Remove(seg.Path()); err != nil {
		return fmt.Errorf("arena: %w", err)
	}
	if err := a.dir.Sync(); err != nil {
		return fmt.Errorf("arena: fsync %s: %w", a.opts.Dir, err)
	}
	return nil
}

// Close unmaps every segment. Callers make data durable first.
func (a *Arena) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var first error
	for _, s := range *a.table.Load() {
		if s != nil {
			if err := s.close(); err != nil && first == nil {
				first = err
			}
		}
	}
	empty := []*Segment{}
	a.table.Store(&empty)
	if a.dir != nil {
		a.dir.Close()
	}
	return first
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

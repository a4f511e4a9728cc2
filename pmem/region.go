//go:build unix

package pmem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// Errors returned (wrapped, so test with errors.Is) by Map and the Region
// methods.
var (
	// ErrSize means the size given to Map is not a positive multiple of the
	// OS page size (os.Getpagesize), or does not fit in an int.
	ErrSize = errors.New("pmem: size must be a positive multiple of the page size")
	// ErrRange means an offset or length is negative, or off+n lies past
	// the end of the mapping.
	ErrRange = errors.New("pmem: range outside the mapping")
	// ErrClosed means the Region was used after Close.
	ErrClosed = errors.New("pmem: region is closed")
)

// Region is one file mapped shared and read-write. Stores into Bytes reach
// the file's page cache (or, on DAX, the persistent memory itself) at once;
// Flush, Drain, Msync and Persist make them durable as the package comment
// describes. The methods may be called concurrently with each other and
// with stores into the mapping, but not concurrently with or after Close.
type Region struct {
	path string
	size int64
	mode Mode
	dax  bool
	data []byte // the mapping; nil after Close
	file *os.File
}

// Map opens path, creating it (mode 0644) if it is missing, makes the file
// exactly size bytes long and maps all of it MAP_SHARED read-write.
//
// size is in bytes and must be > 0 and a multiple of the OS page size;
// otherwise Map returns an error wrapping ErrSize. A shorter file is
// extended, a longer one truncated (its tail is lost). The whole file is
// allocated with fallocate(2), so a full disk fails here with an error
// wrapping syscall.ENOSPC rather than later with SIGBUS on a store. On a
// filesystem without fallocate (EOPNOTSUPP) the file is sized with
// ftruncate instead, and that protection is lost. If Map created or resized
// the file it fsyncs the file, and the directory too if it created the
// file, so the file's existence and size survive power loss.
//
// Map first asks for MAP_SHARED_VALIDATE|MAP_SYNC. The kernel grants that
// only on a DAX filesystem (persistent memory mapped directly, no page
// cache); then DAX reports true. Otherwise the file is mapped with a plain
// MAP_SHARED through the page cache. A file Map created is removed again if
// Map fails. mode must be ModePmem, ModeMsync or ModeNone.
func Map(path string, size int64, mode Mode) (r *Region, err error) {
	return mapAlloc(path, size, size, mode)
}

// MapSparse is Map for a file that is allocated as it fills: the file is
// size bytes long (a hole past what is allocated) and only its first alloc
// bytes are allocated now (rounded up to a page; alloc <= size). Before
// storing past what is allocated, call Allocate for that range: a store
// into a hole on a full disk raises SIGBUS. An existing file keeps the
// blocks it already has. Disk usage then follows the data, not the mapping.
func MapSparse(path string, size, alloc int64, mode Mode) (*Region, error) {
	return mapAlloc(path, size, alloc, mode)
}

// Allocate allocates the blocks of [off, off+n) (bytes) with fallocate, so
// stores there cannot fault on a full disk. Errors wrap syscall.ENOSPC when
// the disk is full, ErrRange for a range outside the mapping.
func (r *Region) Allocate(off, n int64) error {
	if err := r.check(off, n); err != nil {
		return err
	}
	if err := allocateRange(r.file, off, n); err != nil {
		return fmt.Errorf("pmem: %s: allocate [%d, %d): %w", r.path, off, off+n, err)
	}
	return nil
}

// AllocatedBytes is the space the file occupies on disk (st_blocks × 512).
func (r *Region) AllocatedBytes() (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(r.file.Fd()), &st); err != nil {
		return 0, fmt.Errorf("pmem: %s: %w", r.path, err)
	}
	return st.Blocks * 512, nil
}

func mapAlloc(path string, size, alloc int64, mode Mode) (r *Region, err error) {
	if !mode.valid() {
		return nil, fmt.Errorf("pmem: map %s: invalid durability mode %d", path, int(mode))
	}
	ps := int64(os.Getpagesize())
	if size <= 0 || size%ps != 0 || size != int64(int(size)) {
		return nil, fmt.Errorf("pmem: map %s: size %d bytes, page size %d: %w", path, size, ps, ErrSize)
	}

	f, created, err := openOrCreate(path)
	if err != nil {
		return nil, fmt.Errorf("pmem: map: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close() // already failing; the first error is the one to report
			if created {
				_ = os.Remove(path)
			}
		}
	}()

	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("pmem: map: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("pmem: map %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	resized := fi.Size() != size
	if fi.Size() > size {
		if err := f.Truncate(size); err != nil {
			return nil, fmt.Errorf("pmem: map: %w", err)
		}
	}
	if alloc < 0 || alloc > size {
		return nil, fmt.Errorf("pmem: map %s: allocate %d of %d bytes: %w", path, alloc, size, ErrRange)
	}
	alloc = (alloc + ps - 1) / ps * ps
	// Allocate even when the size already matches: an existing file may be
	// sparse, and a store into a hole on a full disk would raise SIGBUS.
	if alloc > 0 {
		if err := allocateRange(f, 0, alloc); err != nil {
			return nil, fmt.Errorf("pmem: map %s: allocate %d bytes: %w", path, alloc, err)
		}
	}
	if fi.Size() < size {
		if err := f.Truncate(size); err != nil {
			return nil, fmt.Errorf("pmem: map: %w", err)
		}
	}
	if created || resized {
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("pmem: map: %w", err)
		}
	}
	if created {
		if err := SyncDir(filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("pmem: map %s: %w", path, err)
		}
	}

	data, dax, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("pmem: map %s: mmap %d bytes: %w", path, size, err)
	}
	r = &Region{path: path, size: size, mode: mode, dax: dax, data: data, file: f}
	traceMap(r)
	return r, nil
}

// openOrCreate opens path read-write, creating it if it does not exist, and
// reports whether this call created it.
func openOrCreate(path string) (f *os.File, created bool, err error) {
	for {
		f, err = os.OpenFile(path, os.O_RDWR, 0)
		if !errors.Is(err, os.ErrNotExist) {
			return f, false, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, os.ErrExist) {
			return f, err == nil, err
		}
		// Someone else created it between the two opens: open theirs.
	}
}

// SyncDir fsyncs directory dir so that the entries created, renamed or
// removed in it are durable (a new file's name is not, until its directory
// is synced). Errors are those of open(2) and fsync(2).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close() // the Sync error is the one that matters
		return err
	}
	return d.Close()
}

// Bytes returns the whole mapping: len is Size(). Stores into it are
// visible at once to every other mapping of the file. The slice must not be
// used after Close (that faults), nor retained past it.
func (r *Region) Bytes() []byte { return r.data }

// Size returns the length of the mapping and of the file, in bytes.
func (r *Region) Size() int64 { return r.size }

// Path returns the path the Region was mapped from, as given to Map.
func (r *Region) Path() string { return r.path }

// DAX reports whether the kernel accepted MAP_SYNC: the file lives on a DAX
// filesystem and stores go to persistent memory without the page cache, so
// Flush+Drain alone make them survive power loss.
func (r *Region) DAX() bool { return r.dax }

// Mode returns the durability mode Persist applies.
func (r *Region) Mode() Mode { return r.mode }

// check validates the byte range [off, off+n) against the mapping.
func (r *Region) check(off, n int64) error {
	if r.data == nil {
		return ErrClosed
	}
	if off < 0 || n < 0 || off > r.size || n > r.size-off {
		return fmt.Errorf("pmem: %s: [%d, %d+%d) outside %d bytes: %w", r.path, off, off, n, r.size, ErrRange)
	}
	return nil
}

// Flush writes back the cache lines covering the bytes [off, off+n) with
// the instruction FlushInstruction names, without a fence: call Drain
// (once, after several Flushes) before relying on them. off and n are in
// bytes; the start is rounded down and the end up to CacheLineSize. n == 0
// flushes nothing. Flush is safe to call concurrently on disjoint or
// overlapping ranges. Where FlushInstruction is "none" it does nothing.
//
// A range outside the mapping, or a closed Region, is a programming error:
// Flush panics with an error wrapping ErrRange or ErrClosed.
func (r *Region) Flush(off, n int64) {
	r.flushRange(off, n)
}

// flushRange is Flush, returning how many cache lines it wrote back.
func (r *Region) flushRange(off, n int64) int {
	if err := r.check(off, n); err != nil {
		panic(err)
	}
	if n == 0 || flushLines == nil {
		return 0
	}
	lo, hi := lineRange(off, n)
	return flushLines(r.data[lo:hi])
}

// lineRange returns [lo, hi): the bytes [off, off+n) widened to whole cache
// lines. The mapping is page-aligned, so offsets aligned here are addresses
// aligned in memory, and hi never passes a page-multiple mapping's end.
func lineRange(off, n int64) (lo, hi int64) {
	lo = off &^ (CacheLineSize - 1)
	hi = (off + n + CacheLineSize - 1) &^ (CacheLineSize - 1)
	return lo, hi
}

// pageRange returns [lo, hi): the bytes [off, off+n) widened to whole pages
// of pageSize bytes (a power of two).
func pageRange(off, n, pageSize int64) (lo, hi int64) {
	lo = off &^ (pageSize - 1)
	hi = (off + n + pageSize - 1) &^ (pageSize - 1)
	return lo, hi
}

// Msync calls msync(MS_SYNC) on the pages covering the bytes [off, off+n):
// off is rounded down and off+n up to the OS page size. n == 0 does
// nothing. It returns an error wrapping ErrRange or ErrClosed for a bad
// range or a closed Region, and the *os.SyscallError from msync otherwise;
// after an msync error the durability of the range is unknown and the
// caller should stop acknowledging writes.
func (r *Region) Msync(off, n int64) error {
	if err := r.check(off, n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	lo, hi := pageRange(off, n, int64(os.Getpagesize()))
	if err := msyncPages(r.data[lo:hi], unix.MS_SYNC); err != nil {
		return fmt.Errorf("pmem: %s [%d, %d): %w", r.path, lo, hi, os.NewSyscallError("msync", err))
	}
	return nil
}

// msyncPages is unix.Msync; a pmemtrace build wraps it to record the
// msync (trace.go). The indirect call costs nanoseconds against the
// ~100 µs of an msync.
var msyncPages = unix.Msync

// Persist makes the bytes [off, off+n) durable as the Region's mode
// promises: ModePmem does Flush then Drain (or Msync where
// FlushInstruction is "none"); ModeMsync does Msync; ModeNone checks the
// range and does nothing. Errors are those of Msync: ErrRange or ErrClosed
// (wrapped) for a bad range or closed Region, or the msync failure.
func (r *Region) Persist(off, n int64) error {
	switch r.mode {
	case ModePmem:
		if flushLines == nil {
			return r.Msync(off, n)
		}
		if err := r.check(off, n); err != nil {
			return err
		}
		r.flushRange(off, n)
		Drain()
		return nil
	case ModeMsync:
		return r.Msync(off, n)
	default:
		return r.check(off, n)
	}
}

// Close unmaps the Region and closes the file. It does not persist
// anything: in page-cache modes the kernel still writes dirty pages back
// later, but nothing is promised about power loss for ranges not Persisted.
// After Close the slice from Bytes must not be touched. A second Close
// returns ErrClosed. Close must not run concurrently with other methods.
func (r *Region) Close() error {
	if r.data == nil {
		return ErrClosed
	}
	traceUnmap(r)
	var unmapErr error
	if r.dax {
		unmapErr = unix.Munmap(r.data)
	} else {
		m := mmap.MMap(r.data)
		unmapErr = m.Unmap()
	}
	r.data = nil
	if unmapErr != nil {
		unmapErr = fmt.Errorf("pmem: unmap %s: %w", r.path, unmapErr)
	}
	return errors.Join(unmapErr, r.file.Close())
}

// SyncFd returns the descriptor of the mapped file for a caller that syncs
// a range of it by other means than Msync (an io_uring fdatasync of the
// range, which writes back the pages stores dirtied as msync does:
// package uring), and false where that would not do what Msync does: a
// DAX mapping, a mode other than ModeMsync, a closed Region, or a build
// that records syncs (pmemtrace). The descriptor stays valid until Close.
func (r *Region) SyncFd() (int, bool) {
	if r.data == nil || r.mode != ModeMsync || r.dax || tracing {
		return -1, false
	}
	return int(r.file.Fd()), true
}

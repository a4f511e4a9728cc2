//go:build unix && !linux

package pmem

import (
	"errors"
	"os"

	"github.com/edsrzf/mmap-go"
)

// allocate sizes f with ftruncate: outside Linux there is no portable
// fallocate, so a full disk may surface later as SIGBUS on a store.
func allocate(f *os.File, size int64) error {
	return f.Truncate(size)
}

// allocateRange extends f to at least off+n bytes (no fallocate here).
func allocateRange(f *os.File, off, n int64) error {
	if fi, err := f.Stat(); err == nil && fi.Size() >= off+n {
		return nil
	}
	return f.Truncate(off + n)
}

// mapFile maps size bytes of f shared read-write through the page cache;
// MAP_SYNC (and so DAX) exists only on Linux.
func mapFile(f *os.File, size int64) (data []byte, dax bool, err error) {
	m, err := mmap.MapRegion(f, int(size), mmap.RDWR, 0, 0)
	if err != nil {
		return nil, false, err
	}
	return m, false, nil
}

// AdviseSequential is advice for a sequential scan of b; nothing outside
// Linux.
func AdviseSequential(b []byte) {}

// AdviseRandom is advice for random access to b; nothing outside Linux.
func AdviseRandom(b []byte) {}

// LockResident is unsupported outside Linux: it locks nothing.
func LockResident(b []byte) error { return errors.ErrUnsupported }

// UnlockResident does nothing outside Linux.
func UnlockResident(b []byte) error { return nil }

// AdviseCold is advice that b will not be needed soon; nothing outside
// Linux.
func AdviseCold(b []byte) {}

// AdvisePageOut is unsupported outside Linux.
func AdvisePageOut(b []byte) error { return errors.ErrUnsupported }

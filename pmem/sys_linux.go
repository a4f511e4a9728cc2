package pmem

import (
	"errors"
	"os"
	"unsafe"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// allocate makes f size bytes long with every block allocated, so that a
// full disk is reported now (ENOSPC) instead of as SIGBUS on a later store.
// Filesystems without fallocate get ftruncate, which allocates nothing.
func allocate(f *os.File, size int64) error { return allocateRange(f, 0, size) }

// allocateRange allocates the blocks of bytes [off, off+n) of f, extending
// it if needed (ftruncate where fallocate is unsupported).
func allocateRange(f *os.File, off, n int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, off, n)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EOPNOTSUPP):
			if fi, serr := f.Stat(); serr == nil && fi.Size() >= off+n {
				return nil
			}
			return f.Truncate(off + n)
		default:
			return os.NewSyscallError("fallocate", err)
		}
	}
}

// mapFile maps size bytes of f shared read-write. It tries
// MAP_SHARED_VALIDATE|MAP_SYNC first; the kernel accepts that only for a
// file on a DAX filesystem (EOPNOTSUPP otherwise, EINVAL on kernels older
// than 4.15), and then dax is true. Otherwise it maps through the page
// cache with mmap-go.
func mapFile(f *os.File, size int64) (data []byte, dax bool, err error) {
	data, err = unix.Mmap(int(f.Fd()), 0, int(size),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED_VALIDATE|unix.MAP_SYNC)
	if err == nil {
		return data, true, nil
	}
	m, err := mmap.MapRegion(f, int(size), mmap.RDWR, 0, 0)
	if err != nil {
		return nil, false, err
	}
	// No read-around on a fault: the kernel otherwise reads up to the
	// device's read_ahead_kb (8 MiB on the benchmark VM) around every page
	// fault of a shared file mapping. Reads of records and index slots are
	// random; under a memory cgroup smaller than the arena each fault then
	// evicted megabytes of other pages (scripts/bench-restart.sh, phase
	// cgroup: 110 GET/s before, 5,400 after, 2 M keys in a quarter of
	// their size). A sequential scan asks for read-ahead back
	// (AdviseSequential). Advice only: an error changes nothing.
	_ = unix.Madvise(m, unix.MADV_RANDOM)
	return m, false, nil
}

// AdviseSequential tells the kernel that b, a mapping from this package,
// is about to be read from start to end (recovery's scan of a segment):
// aggressive read-ahead instead of the random-access advice every mapping
// gets (without it a cold-cache restart took a fault per 4 KiB page: 2 M
// keys replayed in 10.2 s instead of 3.9-6.0 s). AdviseRandom restores that
// advice. Advice only: errors are ignored.
func AdviseSequential(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	}
}

// AdviseRandom gives b back the random-access advice of mapFile.
func AdviseRandom(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_RANDOM)
	}
}

// LockResident keeps the pages of b, a mapping from this package, in memory
// once touched: mlock2 with MLOCK_ONFAULT (a page is locked when it is
// first faulted in, so the call itself reads nothing and returns at once),
// then MADV_WILLNEED, which starts reading the range into the page cache
// in the background so that the first touches find it there. Locked pages
// are never reclaimed, also not under a memory cgroup's limit: the caller
// bounds len(b). Errors are mlock2's (EPERM without CAP_IPC_LOCK past
// RLIMIT_MEMLOCK, ENOMEM, EINVAL on kernels before 4.4); nothing is
// locked then. The lock ends with UnlockResident or the unmapping.
func LockResident(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, _, e := unix.Syscall(unix.SYS_MLOCK2, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MLOCK_ONFAULT)
	if e != 0 {
		return os.NewSyscallError("mlock2", e)
	}
	_ = unix.Madvise(b, unix.MADV_WILLNEED) // advice only
	return nil
}

// UnlockResident undoes LockResident on b (munlock).
func UnlockResident(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return os.NewSyscallError("munlock", unix.Munlock(b))
}

// AdviseCold tells the kernel that b's pages will not be needed soon
// (MADV_COLD: moved to the inactive list, so that reclaim takes them
// before pages in use): after a one-time read such as a scrub, which
// would otherwise push the pages being served out of a memory cgroup.
// Advice only: errors are ignored.
func AdviseCold(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_COLD)
	}
}

// AdvisePageOut asks the kernel to reclaim b's pages now (MADV_PAGEOUT;
// dirty pages are written back first, locked ones stay).
func AdvisePageOut(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return os.NewSyscallError("madvise", unix.Madvise(b, unix.MADV_PAGEOUT))
}

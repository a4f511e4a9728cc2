//go:build linux

// Package uring is a minimal io_uring ring for one kind of request: an
// fdatasync of a byte range of a file (IORING_OP_FSYNC with
// IORING_FSYNC_DATASYNC), submitted without blocking and reaped later,
// by peeking the completion queue or by waiting for it. The kernel runs
// the sync on one of its io-wq worker threads (an fsync cannot complete
// without blocking), so the submitter goes on at once; an eventfd
// registered with the ring is signalled when a completion is posted, so
// an event loop can watch it with epoll.
//
// A range sync is what msync(MS_SYNC) does for the pages of a shared file
// mapping: msync calls vfs_fsync_range(file, start, end, datasync=1) for
// each mapped file range, and IORING_OP_FSYNC calls the same function
// with the range and flag of the request, so pages dirtied by stores into
// a mapping of the file are written back and waited for either way.
//
// The package owns the ring's descriptor, its two mappings and the
// eventfd. It keeps no state about requests beyond the rings: the caller
// picks user data values and matches completions. A Ring is not safe for
// concurrent use; callers serialise Submit, Peek and Wait.
package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux ABI numbers (include/uapi/linux/io_uring.h).
const (
	sysSetup    = 425
	sysEnter    = 426
	sysRegister = 427

	opFsync         = 3
	fsyncDatasync   = 1
	enterGetEvents  = 1
	registerEventfd = 4
	offSQRing       = 0
	offSQEs         = 0x10000000
	featSingleMmap  = 1
	sqeSize         = 64
	cqeSize         = 16
)

type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad         uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// ErrFull is returned by Submit when the submission queue has no free slot.
var ErrFull = errors.New("uring: submission queue full")

// Ring is one io_uring instance.
type Ring struct {
	fd, efd int
	rings   []byte // SQ and CQ rings (one mapping: IORING_FEAT_SINGLE_MMAP)
	sqes    []byte

	sqHead, sqTail, sqMask, sqArray *uint32
	cqHead, cqTail, cqMask          *uint32
	cqes                            unsafe.Pointer
	sqEntries                       uint32
}

// New sets up a ring with room for entries requests in flight and an
// eventfd signalled on every completion. It fails where io_uring is not
// available (old kernels, seccomp filters, io_uring_disabled).
func New(entries uint32) (*Ring, error) {
	var p params
	fd, _, e := unix.Syscall(sysSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("uring: io_uring_setup: %w", e)
	}
	r := &Ring{fd: int(fd), efd: -1}
	fail := func(err error) (*Ring, error) {
		r.Close()
		return nil, err
	}
	if p.features&featSingleMmap == 0 {
		return fail(errors.New("uring: kernel lacks IORING_FEAT_SINGLE_MMAP"))
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*cqeSize)
	var err error
	if r.rings, err = unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fail(fmt.Errorf("uring: mmap rings: %w", err))
	}
	if r.sqes, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries*sqeSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fail(fmt.Errorf("uring: mmap sqes: %w", err))
	}
	at := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&r.rings[off])) }
	r.sqHead, r.sqTail, r.sqMask, r.sqArray = at(p.sqOff.head), at(p.sqOff.tail), at(p.sqOff.ringMask), at(p.sqOff.array)
	r.cqHead, r.cqTail, r.cqMask = at(p.cqOff.head), at(p.cqOff.tail), at(p.cqOff.ringMask)
	r.cqes = unsafe.Pointer(&r.rings[p.cqOff.cqes])
	r.sqEntries = p.sqEntries
	if r.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		r.efd = -1
		return fail(fmt.Errorf("uring: eventfd: %w", err))
	}
	efd := int32(r.efd)
	if _, _, e := unix.Syscall6(sysRegister, uintptr(r.fd), registerEventfd, uintptr(unsafe.Pointer(&efd)), 1, 0, 0); e != 0 {
		return fail(fmt.Errorf("uring: register eventfd: %w", e))
	}
	return r, nil
}

// EventFd is the eventfd the kernel signals when it posts a completion:
// readable (non-blocking, a counter) while any signal was not read.
func (r *Ring) EventFd() int { return r.efd }

// ClearEvent reads the eventfd's counter (non-blocking), so that it is
// readable again only after the next completion.
func (r *Ring) ClearEvent() {
	var b [8]byte
	unix.Read(r.efd, b[:])
}

// SubmitDatasync submits an fdatasync of [off, off+n) of fd (n == 0: to
// the end of the file) tagged with user and returns once the kernel has
// taken the request (the sync runs on a kernel worker). The descriptor is
// resolved at submission, so closing it afterwards does not cancel the
// sync; keep the file's data in place until the completion anyway.
func (r *Ring) SubmitDatasync(fd int, off int64, n uint32, user uint64) error {
	head := atomic.LoadUint32(r.sqHead)
	tail := *r.sqTail
	if tail-head >= r.sqEntries {
		return ErrFull
	}
	idx := tail & *r.sqMask
	s := (*sqe)(unsafe.Pointer(&r.sqes[idx*sqeSize]))
	*s = sqe{opcode: opFsync, fd: int32(fd), off: uint64(off), len: n, opFlags: fsyncDatasync, userData: user}
	*(*uint32)(unsafe.Add(unsafe.Pointer(r.sqArray), idx*4)) = idx
	atomic.StoreUint32(r.sqTail, tail+1)
	for {
		got, _, e := unix.Syscall6(sysEnter, uintptr(r.fd), 1, 0, 0, 0, 0)
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			return fmt.Errorf("uring: io_uring_enter: %w", e)
		case got != 1:
			return fmt.Errorf("uring: io_uring_enter submitted %d of 1", got)
		}
		return nil
	}
}

// Completion is one reaped request: its user data and result (0, or a
// negative errno).
type Completion struct {
	User uint64
	Res  int32
}

// Err is the completion's result as an error (nil for success).
func (c Completion) Err() error {
	if c.Res < 0 {
		return unix.Errno(-c.Res)
	}
	return nil
}

// Peek takes the next completion if one is posted, without blocking.
func (r *Ring) Peek() (Completion, bool) {
	head := *r.cqHead
	if head == atomic.LoadUint32(r.cqTail) {
		return Completion{}, false
	}
	c := (*cqe)(unsafe.Add(r.cqes, (head&*r.cqMask)*cqeSize))
	out := Completion{User: c.userData, Res: c.res}
	atomic.StoreUint32(r.cqHead, head+1)
	return out, true
}

// Wait blocks until a completion is posted and takes it.
func (r *Ring) Wait() (Completion, error) {
	for {
		if c, ok := r.Peek(); ok {
			return c, nil
		}
		_, _, e := unix.Syscall6(sysEnter, uintptr(r.fd), 0, 1, enterGetEvents, 0, 0)
		if e != 0 && e != unix.EINTR {
			return Completion{}, fmt.Errorf("uring: io_uring_enter (wait): %w", e)
		}
	}
}

// Close releases the ring (requests still in flight complete in the
// kernel; their completions are dropped) and its eventfd.
func (r *Ring) Close() error {
	if r.sqes != nil {
		unix.Munmap(r.sqes)
		r.sqes = nil
	}
	if r.rings != nil {
		unix.Munmap(r.rings)
		r.rings = nil
	}
	if r.efd >= 0 {
		unix.Close(r.efd)
		r.efd = -1
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
	return nil
}

package evloop

import (
	"syscall"
	"unsafe"
)

// Reads and writes of the loop's sockets are raw system calls: the sockets
// are non-blocking, so read(2) and write(2) return at once, and the
// runtime's entersyscall/exitsyscall around a blocking call (which let
// another goroutine have the P) is pure cost here: measured at 3-4% of the
// loop's CPU with redis-benchmark -c 50 GET. The one call that blocks,
// epoll_wait, goes through the ordinary wrapper.

// rawRead is read(2) on a non-blocking descriptor.
func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawWrite is write(2) on a non-blocking descriptor.
func rawWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

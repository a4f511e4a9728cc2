package pmem

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkSyncCost compares what one durable write of a small group
// commit costs by each way of making it durable on a disk filesystem:
// the wall time per sync (ns/op) and, what the msync mode's server is
// short of, the process CPU (user + system, all threads) per sync
// (cpu-us/op). Every iteration appends a 1 KiB record (a group commit of
// about 12 SETs of 64-byte values) after the previous one, then makes it
// durable:
//
//	msync-range    msync(MS_SYNC) of the pages the record touched, in a
//	               64 MiB segment mapping (what msync mode does)
//	msync-segment  msync(MS_SYNC) of the whole 64 MiB mapping
//	fdatasync-map  fdatasync of the mapped segment's file
//	pwrite-fdatasync  pwrite to an append-only, preallocated file, then
//	               fdatasync (redis-server appendfsync always)
//	pwrite-odsync  pwrite to a preallocated file opened O_DSYNC
//	odirect-dsync  pwrite of the 4 KiB block the record ends in (the block
//	               rewritten whole, from an aligned buffer) to a
//	               preallocated file opened O_DIRECT|O_DSYNC: no page cache,
//	               so no writeback walk and no write-protected pages
//
// Run it on the filesystem in question (TMPDIR): on tmpfs every sync is
// free. The machine running it may be shared: compare within one run.
func BenchmarkSyncCost(b *testing.B) {
	const (
		segSize = 64 << 20
		rec     = 1 << 10
	)
	dir := b.TempDir()
	mapped := func(b *testing.B) (*Region, []byte) {
		r := mustMap(b, filepath.Join(dir, "seg"), segSize, ModeMsync)
		b.Cleanup(func() { mustClose(b, r) })
		return r, r.Bytes()
	}
	appendOnly := func(b *testing.B, flags int) *os.File {
		f, err := os.OpenFile(filepath.Join(dir, "aof"), os.O_RDWR|os.O_CREATE|os.O_TRUNC|flags, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		if err := allocate(f, segSize); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		return f
	}
	buf := make([]byte, rec)
	cases := []struct {
		name string
		sync func(b *testing.B) func(off int64) error
	}{
		{"msync-range", func(b *testing.B) func(int64) error {
			r, data := mapped(b)
			return func(off int64) error {
				copy(data[off:], buf)
				return r.Msync(off, rec)
			}
		}},
		{"msync-segment", func(b *testing.B) func(int64) error {
			r, data := mapped(b)
			return func(off int64) error {
				copy(data[off:], buf)
				return r.Msync(0, segSize)
			}
		}},
		{"fdatasync-map", func(b *testing.B) func(int64) error {
			r, data := mapped(b)
			return func(off int64) error {
				copy(data[off:], buf)
				return unix.Fdatasync(int(r.file.Fd()))
			}
		}},
		{"pwrite-fdatasync", func(b *testing.B) func(int64) error {
			f := appendOnly(b, 0)
			return func(off int64) error {
				if _, err := f.WriteAt(buf, off); err != nil {
					return err
				}
				return unix.Fdatasync(int(f.Fd()))
			}
		}},
		{"pwrite-odsync", func(b *testing.B) func(int64) error {
			f := appendOnly(b, syscall.O_DSYNC)
			return func(off int64) error {
				_, err := f.WriteAt(buf, off)
				return err
			}
		}},
		{"odirect-dsync", func(b *testing.B) func(int64) error {
			f := appendOnly(b, syscall.O_DIRECT|syscall.O_DSYNC)
			block := alignedBlock(4096)
			return func(off int64) error {
				copy(block, buf) // the contents do not matter here
				_, err := f.WriteAt(block, (off+rec-1)&^4095)
				return err
			}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			sync := c.sync(b)
			off := int64(0)
			cpu0 := processCPU(b)
			for i := 0; b.Loop(); i++ {
				buf[0] = byte(i)
				if err := sync(off); err != nil {
					b.Fatal(err)
				}
				if off += rec; off+rec > segSize {
					off = 0
				}
			}
			b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-us/op")
		})
	}
}

// alignedBlock is a zeroed n-byte buffer aligned to 4 KiB, as O_DIRECT
// needs.
func alignedBlock(n int) []byte {
	raw := make([]byte, n+4096)
	off := (4096 - int(uintptr(unsafe.Pointer(unsafe.SliceData(raw)))&4095)) & 4095
	return raw[off : off+n : off+n]
}

// processCPU is the user + system CPU time of the process so far.
func processCPU(tb testing.TB) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

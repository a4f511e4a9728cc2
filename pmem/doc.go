// Package pmem emulates persistent memory over memory-mapped files and
// makes stores into them durable in one of three modes.
//
// A Region is a file mapped MAP_SHARED read-write (Map). Callers store into
// Region.Bytes directly and then make the stored range durable with the
// primitives below. Each primitive's promise, from weakest to strongest:
//
// # Stores
//
// A store into Bytes is visible to every other mapping of the same file as
// soon as it executes. Without DAX it lands in the kernel page cache, so it
// survives a crash of this process (kill -9) but not of the machine. With
// DAX it lands in a CPU cache line backed by persistent memory, which also
// survives a process crash. Nothing is promised about power loss, but the
// kernel (page cache) or the CPU (cache eviction) may write any dirty data
// back at any time and in any order: after power loss the file may hold any
// mix of old and new contents of ranges that were not made durable, down to
// single pages (page cache) or aligned 8-byte words (persistent memory).
// Only an aligned 8-byte store is atomic across power loss, so on-disk
// formats must detect torn records (checksums) rather than assume an order.
//
// # Flush and Drain (ModePmem)
//
// Flush(off, n) starts writing back every 64-byte cache line (CacheLineSize)
// that holds a byte of [off, off+n), with CLWB, else CLFLUSHOPT, else
// CLFLUSH, chosen once by CPUID (FlushInstruction). It does not wait:
// CLWB and CLFLUSHOPT are not ordered with each other or with later stores,
// so a Flush alone guarantees nothing. Drain (SFENCE) waits: when it
// returns, every Flush the goroutine issued before it has completed, and no
// later store is visible before that. Flushes from other goroutines are
// covered only if they happen before the Drain by Go synchronization. The
// usual pattern batches: Flush each changed range, then Drain once.
//
// On a DAX filesystem mapped with MAP_SYNC (Region.DAX), a completed flush
// has reached the platform's persistence domain, and MAP_SYNC means the
// file's block mapping for every written page was made durable before the
// store could happen, so Flush+Drain survives power loss. Without DAX the
// flush only moves the line from the CPU cache into the page cache in RAM:
// it survives a process crash, exactly as a plain store does, and NOT power
// loss. To order two writes A before B across power loss (a record before
// the commit word naming it), store A, Flush A, Drain, then store B, Flush
// B, Drain. Flush and Drain are safe from any number of goroutines at once,
// on disjoint or overlapping ranges; they cannot fail. On architectures
// without a write-back instruction here (FlushInstruction is "none") both
// are no-ops and ModePmem's Persist uses Msync.
//
// # Msync (ModeMsync)
//
// Msync(off, n) calls msync(MS_SYNC) on the pages covering [off, off+n).
// When it returns nil, every store into those pages that completed before
// the call is on stable storage, together with the file metadata needed to
// read it back (Map already made the file's size and directory entry
// durable when it created or resized the file). It says nothing about pages
// outside the range, and a store racing with the call may or may not be
// included: finish the stores first. Msync is safe from several goroutines
// at once, but one Msync over a batch of records (group commit) costs about
// as much as one over a single record, so batch. Like
// fsync, after an error the state of the range is unknown (the kernel may
// already have marked the pages clean); do not retry and acknowledge,
// stop instead. msync works on any filesystem, DAX included, but on a
// filesystem in RAM (tmpfs) nothing survives power loss.
//
// # Persist
//
// Persist(off, n) applies the Region's Mode: ModePmem is Flush then Drain,
// ModeMsync is Msync, ModeNone does nothing. A write may be acknowledged
// when Persist returns nil. Describe states, in one line, what the chosen
// mode survives on the given filesystem.
//
// # Close and failures
//
// Close unmaps and closes the file and persists nothing. Neither stores nor
// Bytes may be used after Close. A store can raise SIGBUS (killing the
// process) if another process truncates the file or the device fails; Map
// allocates every block up front (fallocate) so that a full disk is an
// ENOSPC error from Map rather than a SIGBUS later.
//
// # The recorder (build tag pmemtrace)
//
// A test build with the pmemtrace tag adds a recorder (trace.go): while a
// Trace is active it records every Map and Close of a Region, every
// cache-line write-back (the flush loop), every fence (Drain) and every
// successful msync, and at each of them the aligned 8-byte units of the
// traced mappings that changed since the previous one. Trace.Replay turns
// the record into crash points: what the media certainly holds, and which
// units may hold an older or newer value if the power fails there (the
// crash images of package crashimage). Without the tag the hooks are
// empty functions that the compiler inlines away: Persist compiles to the
// flush loop and the SFENCE call as before.
//
// # A broken build for tests (build tag persimmon_ackbeforesync)
//
// With the persimmon_ackbeforesync tag (ackbeforesync.go) every
// msync(MS_SYNC) returns nil at once and runs a moment later on a
// goroutine of its own, so msync mode acknowledges before it syncs: the
// negative control of the power-cut test (e2e TestPowerCut), which must
// see acknowledged writes lost. Never build a server for use with it.
//
// The package keeps no Go pointers in mapped memory and uses no unsafe code:
// the assembly write-back loops take the mapped slice as their argument.
package pmem

// Package faultfs is a FUSE filesystem for tests that can cut the power.
//
// Mount serves a backing directory at a mount point (a loopback through
// github.com/hanwen/go-fuse/v2): reads and writes pass through to the
// backing files at once, so processes on the mount see an ordinary
// filesystem. Alongside, faultfs remembers for every file what a disk
// would still hold after power loss: what was made durable by fsync,
// fdatasync or msync(MS_SYNC). A power cut is three steps, in this
// order: PowerOff turns the power off at once (every request from then
// on fails with EIO and nothing more reaches the backing files); the
// caller kills (SIGKILL) every process using the mount; Cut unmounts
// (dropping the kernel's page cache and refusing every dirty page the
// kernel still writes back), rolls the backing directory back to its
// durable state and mounts a fresh, powered filesystem over what
// survived, for the processes to start again.
//
// # Power off
//
// Every request that reads or changes a file or a name (READ, WRITE,
// FSYNC, FSYNCDIR, CREATE, OPEN, SETATTR, FALLOCATE, UNLINK, RENAME,
// MKDIR, RMDIR) holds a lock shared for its whole length; PowerOff takes
// it exclusively, so the power goes off between two requests, never in
// the middle of one, and once PowerOff has returned no request changes
// anything (TestPowerOffRacingSyncs). Lookups, attributes, directory
// listings, FLUSH and RELEASE pass through: they change nothing. The
// order matters: killed first, a process's requests in flight are still
// served (an msync's FSYNC included) and its dirty pages are written back
// as its files close, so a sync it had started but not finished when it
// replied would still complete. Options.SyncLatency makes every sync wait
// (1 ms in the e2e tests) before it takes the lock and commits, so a
// reply sent while its sync is in flight has time to reach a client
// before the power goes off, and AtSync runs a function (PowerOff, say)
// at the n-th sync, to cut at an exact point.
//
// It is a test tool, not a model of a particular disk: it is stricter than
// ext4 wherever that is cheap (durability per file, a new name needs an
// fsync of its directory), so that software that survives it relies only
// on the syncs POSIX promises; in one place it is as lenient as ext4's
// journal (namespace operations become durable as a prefix, below). It
// imports nothing of Persimmon and only tests use it (e2e.TestPowerCut);
// it owns nothing but the mount, the backing directory and the graveyard
// beside it.
//
// # Data (per file, in 4096-byte pages)
//
// The first time a page is written after the file's last fsync (a WRITE
// request, a truncate that shrinks past it, a hole punched or a range
// zeroed by fallocate), faultfs reads the page's current contents from the
// backing file and keeps them in the file's undo log: those are the
// page's durable contents. An fsync or fdatasync of the file (FUSE FSYNC,
// with or without the datasync flag) empties the log and makes the
// current size the durable size. At Cut, every logged page gets its
// durable contents back and the file its durable size. In KeepRandom mode
// each logged page instead keeps its new contents with probability 1/2, as
// a disk may have written back any subset of what the page cache held;
// the size is still the durable size, and pages are never torn. In
// TearSectors mode each 512-byte sector of a logged page is chosen on its
// own, so a page can come back part old, part new (a torn write).
//
// A MAP_SHARED mapping needs no special case: FUSE sends dirty mapped
// pages as WRITE requests (on writeback, on close of a descriptor, and
// for msync), and msync(MS_SYNC) writes the range's dirty pages back and
// then sends FSYNC for the file. Files are opened without FOPEN_DIRECT_IO,
// so shared writable mappings work, and without FUSE passthrough, so every
// write is seen. An FSYNC covers the whole file: the FUSE request carries
// no range, and on a disk with a volatile cache a cache flush makes every
// write that reached the disk durable too. Durability is tracked per file
// only: an fsync of one file makes nothing of another durable.
//
// Measured on Linux 6.18 (TestMmapMsync, TestPowerCut): msync(MS_SYNC) of
// the first 8 of 16 dirty mapped pages arrives as one 32 KiB WRITE and
// then one FSYNC; the other 8 stay in the page cache until the process is
// killed, when closing its descriptors writes them back (FUSE flushes dirty
// pages on close) as one more WRITE, which after a PowerOff is refused
// (and before one would be accepted, then dropped by the cut).
//
// Block allocation (fallocate without PUNCH_HOLE or ZERO_RANGE) changes no
// contents and is not rolled back; a size it extends is like any other
// size change, durable at the next fsync. COLLAPSE_RANGE and INSERT_RANGE
// are refused (EOPNOTSUPP). Modes, owners and times pass through and are
// never rolled back.
//
// # Names (per directory)
//
// create, unlink, rename, mkdir and rmdir are applied to the backing
// directory at once and appended to a namespace log; an unlinked file (or
// a file a rename replaced) is moved into a hidden graveyard directory
// beside the backing directory instead of being deleted, so it can come
// back with the contents it had. fsync of a directory (FUSE FSYNCDIR)
// makes every logged operation up to the last one that touched that
// directory durable, as a journal commit would (ops are durable as a
// prefix, never out of order). At Cut the pending operations are undone
// newest first (created names removed, unlinked files moved back, renames
// reversed); KeepRandom and TearSectors keep a random prefix of them. As with ext4's
// documented promise (and stricter than its journal in practice), an fsync
// of a new file does not make its name durable: only an fsync of its
// directory does. With Options.StrictNames a directory fsync commits only
// the operations in that directory (a rename: in either), the letter of
// POSIX: a new directory's own entry then needs an fsync of its parent,
// and undoing its mkdir at a cut takes everything inside with it. Hard
// links, symlinks and device nodes pass through and are durable at once.
//
// # Concurrency and limits
//
// FUSE requests are served concurrently; a file's log is guarded by its
// own mutex, held across saving a page and writing it, so the saved page
// is always the durable one (taken after the power lock, never before).
// PowerOff, AtSync and Stats may be called at any time, from any
// goroutine; Cut and Close must not run concurrently with each other. The undo state keeps its own descriptor on every file it
// tracks until the next Cut, so deleted files hold their space until then
// (and their inode numbers, which key the state, cannot be reused). The test process itself must not map files of its own mount
// (a page fault served by its own goroutines can deadlock with the Go
// runtime's stop-the-world): use a child process for mmap.
package faultfs

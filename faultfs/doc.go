// Package faultfs is a FUSE filesystem for tests that can cut the power.
//
// Mount serves a backing directory at a mount point (a loopback through
// github.com/hanwen/go-fuse/v2): reads and writes pass through to the
// backing files at once, so processes on the mount see an ordinary
// filesystem. Alongside, faultfs remembers for every file what a disk
// would still hold after power loss: what was made durable by fsync,
// fdatasync or msync(MS_SYNC). Cut then "cuts the power": it stops
// accepting writes, unmounts (dropping the kernel's page cache and every
// dirty page the kernel still writes back), rolls the backing directory
// back to its durable state and mounts a fresh filesystem over what
// survived. The caller kills (SIGKILL) every process using the mount
// before Cut and starts them again after.
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
// pages on close) as one more WRITE, which is accepted and dropped by the
// cut. By the time Cut unmounts nothing is left to write back: over 200
// cuts of the server, 0 requests were refused after the power went off.
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
// is always the durable one. Cut and Close must not run concurrently with
// each other. The undo state keeps its own descriptor on every file it
// tracks until the next Cut, so deleted files hold their space until then
// (and their inode numbers, which key the state, cannot be reused). The test process itself must not map files of its own mount
// (a page fault served by its own goroutines can deadlock with the Go
// runtime's stop-the-world): use a child process for mmap.
package faultfs

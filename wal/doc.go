// Package wal is Persimmon's write-ahead log: checksummed records appended to
// arena segments, LSNs, transaction groups and group commit.
//
// # Record format
//
// Records start 8-byte aligned, at or after arena.HeaderSize, and follow one
// another with no gaps:
//
//	+-----------+------+-------+----------+---------+-------------+---------------------+
//	| length    | type | flags | gap      | LSN     | checksum    | payload | zero pad  |
//	| u32 LE    | u8   | u8    | u16 LE   | u64 LE  | u64 LE      | length  | to 8      |
//	+-----------+------+-------+----------+---------+-------------+---------------------+
//	0           4      5       6          8         16            24
//
// length is the payload length in bytes (padding excluded). gap is the
// durable gap (below); it is 0 in segments of format version 1 (package
// arena), which called those bytes reserved. The checksum is
// xxhash64 over bytes [0, 16) — length, type, flags, gap and LSN — then
// the payload: a record is valid only if every field of it is what was
// written. LSNs increase by one per record across the whole log, and every
// record of a segment has an LSN above the segment's base LSN.
//
// Types (durable: never renumber):
//
//	1 batch   payload is a batch of keyspace operations (package keyspace),
//	          applied as one unit
//	2 commit  empty payload; commits the transaction group before it
//
// Flags (durable: never renumber):
//
//	1 txn       the record belongs to a transaction group (MULTI/EXEC, a
//	            script, or one keyspace batch over 1 MiB split into records
//	            of at most 1 MiB); it takes effect only when the group's
//	            commit record follows
//	2 txn-begin the first record of a group; an open group that is followed
//	            by a new group or a record outside any group was abandoned
//	            (its EXEC never finished) and is discarded
//
// # Durable gap
//
// A record's gap says how far back the log was durable when it was
// appended: LSN minus the last LSN this WAL had persisted (every record up
// to it persisted, in the arena's mode: flush+fence or msync), capped at
// GapFar. 0 (GapUnknown, version-1 segments) and GapFar say nothing; any
// other gap g in the record of LSN M proves that every record up to M - g
// was durable before M was written. Records are never rewritten in place,
// so a crash cannot tear a record that was durable: a damaged record of
// LSN L followed by a valid one whose gap proves L durable is damage to
// acknowledged data, not a torn write (see below). After a restart the
// records recovery found in the active segment may never have been
// persisted (a crash before their group commit; recovery read them from
// the page cache), so no gap claims them until the first group commit has
// persisted the segment from its first record (Open).
//
// # End of log, torn tails and corruption
//
// A record header of 24 zero bytes is the clean end of a segment (segment
// files are created zero-filled). Any other header that does not verify —
// impossible length, unknown type, checksum mismatch, LSN out of order, a
// gap in a version-1 segment — is an invalid record. In the active
// (unsealed) segment an invalid record (or a zeroed header) is a torn
// tail: recovery keeps the records before it and cuts the rest, unless
// valid records follow it that show it is not one: a durable gap proving
// it durable, or more than TornTailLimit bytes of them (a torn write of one
// group commit leaves less). In a sealed segment, or before a sealed
// segment's end, or before the end a clean shutdown recorded, any invalid
// record is corruption. Corruption stops start-up with the file, the
// offset and the LSNs (ErrCorruption); persimmon-check repair cuts the log
// there when the operator accepts the loss.
//
// In none mode, and pmem mode off DAX, a persist reaches only the page
// cache, which a power cut can lose in any order: there a power cut can
// leave a damaged record that a gap calls durable, and start-up refuses
// (the loss of writes that were acknowledged is reported, not cut away
// silently). A kill -9 never does: the page cache survives it.
//
// # Clean shutdown
//
// Close persists every record, then stores the end of the active
// segment's records in its clean-shutdown word (package arena): one
// aligned 8-byte commit point written after the data it covers was
// flushed and fenced (or msynced). ScanSegment then treats that end as a
// seal: an invalid record before it is corruption, not a torn tail, since
// a clean shutdown left nothing half written. Before the next append or
// rotation the WAL clears the word and persists the clearing, so a crash
// after the server starts writing again is an ordinary torn-tail case. A
// word that is set but does not verify (damaged: a crash cannot leave one,
// it is a single aligned 8-byte store) may have been a mark, so
// ScanSegment then allows no torn tail at all, and the WAL clears it as it
// clears a mark.
//
// # Space kept free after each record
//
// After every batch record Append keeps room for a commit record (so a
// transaction's commit always fits where its group is) and for one small
// record that frees space plus that record's own commit, allocated on
// disk: AppendFreeing (FLUSHALL) may use it, so a FLUSHALL can be written
// on a full disk. A commit record keeps the freeing part of that room
// after itself (it is there whenever the record before kept it), so the
// same holds right after an EXEC or a script.
//
// # Big records
//
// A record of at least DirectMin (1 MiB) bytes is not stored through the
// mapping: Append writes it to the segment file with pwritev(2)
// (arena.Segment.WriteAt), the payload a 256 KiB chunk at a time, each
// chunk checksummed just before it is written (so that the write can
// read it from the CPU cache rather than from memory a second time; at
// load 17 the difference from one checksum pass and one pwritev was
// within the noise, BenchmarkAppendBig), and the 24-byte header, which
// carries the checksum, last, once every chunk is written. The writes
// run on a goroutine of their own, a chunk behind the checksum, so the
// two overlap: BenchmarkAppendBig (100 MB, interleaved, load 24) went
// from 262/294/161 ms to 164/182/103 ms a record, for about 8% more CPU
// (the writer reads a chunk from a cache the checksum did not fill). Stores into fresh pages of a shared mapping take a page
// fault per page (a third of a 100 MB SET's CPU), and a flush of the
// record would walk every cache line of it; pwrite fills the same page
// cache without either. The bytes on disk are the same as a store would
// leave, so readers, recovery and the format do not change, and the
// mapping sees them as soon as the write returns (one page cache).
//
// Durability per mode is what it is for stores. In pmem and none modes,
// Append first persists the records before the big one in its segment
// (flush+fence: what the next group commit would have done), writes the
// record, fences (on DAX the kernel wrote it with non-temporal stores)
// and moves the flushed offset past it, so no group commit flushes it
// again: the record is in the page cache (on DAX, in persistent memory)
// before Append returns, which is what a flush gives off DAX. In msync
// mode nothing changes: the group commit's msync of the range, which the
// reply waits for, writes back the pages pwrite dirtied as it does pages
// dirtied by stores (msync syncs the file range, however it was
// written).
//
// Torn writes are caught as for any record: the checksum covers header
// and payload, and until the header is written the record's first bytes
// are whatever the tail held (zeros: the clean end). A failed write
// leaves allocated space holding part of a record, which a later record
// must not follow: the WAL fail-stops, as after a failed flush.
//
// # Group commit
//
// Appends are serialised by the caller's lock (the keyspace's) and by the
// wal's own append mutex; they store into the mapping and return at once.
// Durability is requested separately with WaitDurable(lsn): the first waiter
// becomes the leader, captures the active segment's append offset and the
// last LSN, persists everything not yet persisted with one flush+fence (pmem
// mode) or one msync (msync mode), publishes the durable LSN and releases
// the others, most of whom find their LSN already durable. While a leader is
// in msync, writers keep appending; the next leader persists all of that at
// once, so the batch grows with the sync latency. The server's event loop
// never calls WaitDurable in msync mode: a committer goroutine of its own
// does (package resp, commit.go), so the loop keeps appending meanwhile.
// StartAsync (async.go) is the same leader's work submitted as an io_uring
// range fdatasync (package uring) that returns at once; the leader's turn
// ends when ReapAsync, or any WaitDurable, Barrier or Close that needs
// it, takes the completion, so no caller depends on the submitter to
// finish it. The server uses it only when asked (PERSIMMON_URING): it did
// not lower the CPU per write (server/commit.go).
// SyncStats reports each persist's cost (mean, p99 of the last 1024) and
// how many records one covers (the mean, and the distribution in Sizes).
//
// What a sync costs is mostly fixed: on the virtual disks measured here an
// msync of a 1 KiB range, an msync of the whole segment, an fdatasync of
// the segment file and a pwrite+fdatasync of an append-only file each
// cost 55-80 µs of CPU and 150-240 µs of wall time
// (pmem.BenchmarkSyncCost), so the CPU a durable write costs is that
// divided by the records per sync: batch size, not the kind of sync, is
// what to improve. One cost is particular to stores into a mapping: the
// kernel write-protects the pages a sync cleans, so the first append
// into each of them afterwards (the tail page at least) takes a page
// fault, about 3% of the server's CPU at 50 clients.
package wal

// Package arena is Persimmon's persistent heap: a directory of segment files,
// each mapped shared read-write through package pmem, filled by append.
//
// # Segment files
//
// A segment is named seg-<id>.arena (id: 16 hex digits, increasing from 1).
// Its file has the full segment size but is sparse: blocks are allocated
// with fallocate a chunk ahead of the append offset, so disk usage follows
// the data, and a full disk surfaces as an error from Alloc (a write
// command's error reply) and never as SIGBUS on a store into the mapping.
// Reads of existing segments keep working.
//
//	offset  size  field
//	     0     8  magic "PSMNARNA"
//	     8     4  format version (1)
//	    12     4  checksum algorithm (1 = xxhash64)
//	    16     8  segment id
//	    24     8  segment size in bytes, header included
//	    32     8  base LSN: every record in the segment has a higher LSN
//	    40     8  xxhash64 of bytes [0, 40)
//	    64     8  seal word: 0 while the segment is active; once sealed,
//	              the end offset of its last record (low 48 bits) and a
//	              16-bit check of (id, end) (high 16 bits)
//	  4096        first record (records are 8-byte aligned; see package wal)
//
// All integers are little-endian. The header is written and persisted
// (flush+fence or msync) before the segment is used, and the directory is
// fsynced after the file is created or removed. These constants are part of
// the on-disk format: never renumber them.
//
// # Commit points
//
// The seal word is the segment's only commit point after creation. It is a
// single aligned 8-byte store made after every record before it has been
// persisted (invariant 4 of DESIGN.md). A sealed segment must hold valid
// records exactly up to its sealed end; anything else is corruption.
// The unsealed (active) segment's end is found by scanning: the first record
// that fails its checksum ends it (a torn tail).
//
// # Allocation and locking
//
// Alloc is single-writer: the caller (the wal, under its append lock)
// serialises it. Lookups by id (Segment) are lock-free through a
// copy-on-write table, so readers holding the keyspace lock can resolve
// locations while the cleaner removes other segments.
package arena

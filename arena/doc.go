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
//	     8     4  format version (1 or 2; see FormatVersion)
//	    12     4  checksum algorithm (1 = xxhash64)
//	    16     8  segment id
//	    24     8  segment size in bytes, header included
//	    32     8  base LSN: every record in the segment has a higher LSN
//	    40     8  header checksum: xxhash64 of bytes [0, 40) (version 1);
//	              from version 2, of the header page but [40, 48) and
//	              [64, 88)
//	    48     8  chain word, set at creation: this segment's writer marks
//	              a segment before the cleaner removes its predecessor
//	    64     8  seal word: 0 while the segment is active; once sealed,
//	              the end offset of its last record (low 48 bits) and a
//	              16-bit check of (id, end) (high 16 bits)
//	    72     8  cleaned word: set (and persisted) just before the
//	              cleaner removes the segment before this one
//	    80     8  clean-shutdown word: the end of the records, stored by a
//	              clean shutdown after they were persisted; cleared
//	              (durably) before the next append
//	  4096        first record (records are 8-byte aligned; see package wal)
//
// All integers are little-endian. The header is written and persisted
// (flush+fence or msync) before the segment is used, and the directory is
// fsynced after the file is created or removed. These constants are part of
// the on-disk format: never renumber them.
//
// The words at 48, 72 and 80 came after format version 1 shipped, outside
// the range its header checksum covers: a data directory written before
// them (zeros there) opens as before, and a reader that predates them
// ignores them. Each is a single aligned 8-byte store that checks itself:
// a 48-bit value and a 16-bit xxhash check of (segment id, word tag,
// value), never zero, so a word is valid only if it was written whole for
// this segment and this purpose.
//
// Format version 2 (records may carry a durable gap, package wal) also
// widens the header checksum to every byte of the header page that does
// not change after creation: all but the checksum itself and the three
// commit points at [64, 88) (seal, cleaned, clean-shutdown), stored after
// it, each with one aligned 8-byte store. The chain word, written once
// before the checksum, is covered. The commit points stay outside (a
// checksum over them would be a second store, and a crash between the two
// would leave a header that does not verify); each is checked on its own,
// and a word that is set but does not verify is never taken for an unset
// one silently: a bad seal word fails Open (ErrBadSeal); a bad cleaned
// word reads as unset, which in the oldest segment is ErrMissingSegment
// (CheckChain; repair accepts it) and in another is logged by Open (the
// cleaner rewrites it before it matters); a bad clean-shutdown word is
// reported by ShutdownWordDamaged, and package wal then scans the segment
// as one that may have been shut down cleanly (no torn tail). In a
// version-1 segment the chain word stays outside the checksum: one that
// is set but does not verify counts as set (chainAware: the stricter
// reading).
//
// # The segment chain
//
// A new segment takes the id after the highest one, and the cleaner only
// ever removes the oldest segment, after storing the cleaned word in the
// next one. So the segment files of a data directory are always a run of
// consecutive ids; the oldest is segment 1 or carries the cleaned word
// (unless it was created before the chain word existed); and each
// segment's base LSN is the last LSN of the one before (package recovery
// checks that while scanning). CheckChain reports a gap, or an oldest
// segment whose predecessor vanished without the cleaner, naming the
// files (ErrMissingSegment): replaying around a lost segment would bring
// back deleted keys and undo overwrites.
//
// # Damaged, short and half-created files
//
// A segment file whose size differs from the size its header records was
// truncated (or is not its own): ErrShortFile with the file name and both
// sizes; it is never removed. The only file Open removes is a newest
// segment left half-created by a crash inside create, and it logs that
// (Options.Logf): create allocates the header page, sets the full size,
// then writes and persists the header, and it runs before the previous
// segment is sealed. So a half-created file follows an unsealed segment
// (or is segment 1), and is either at most a page of zeros or a full-size
// file whose header does not verify and holds nothing after it.
//
// # Full disk
//
// Blocks are allocated a chunk (1 MiB) ahead of the append offset; when
// the chunk does not fit, just the pages the append needs are allocated,
// so a filesystem smaller than a chunk still takes writes until it is
// really full. A new segment is created with its header page and its
// first page of records allocated. Writable answers whether an append of a
// given size would find room now (the retry after a full disk).
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
// # Writes through the file
//
// Records are stored through the mapping, except big ones: Segment.WriteAt
// writes with pwritev(2) on a descriptor of the segment file opened on
// first use (package wal writes records of 1 MiB and more that way, so
// fresh pages of the mapping do not fault one by one). The page cache is
// shared, so the mapping sees the bytes at once; on DAX the kernel writes
// to the persistent memory itself. WriteAt writes only within what Alloc
// returned, whose blocks are allocated, so a full disk still fails in
// Alloc, before anything is written.
//
// # Allocation and locking
//
// Alloc is single-writer: the caller (the wal, under its append lock)
// serialises it. Lookups by id (Segment) are lock-free through a
// copy-on-write table, so readers holding the keyspace lock can resolve
// locations while the cleaner removes other segments.
package arena

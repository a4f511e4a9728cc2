// Package keyindex is the persistent key index: a pointer-free hash table
// of 64-bit slots in a memory-mapped file beside the arena's segments,
// mapping a key to the location of the operation that holds its value.
// The keys themselves are not stored: a slot names a location, and the
// caller's KeyAt reads the key back from the record there. The Go
// collector never scans the table, and the table's pages are file-backed
// (the page cache, or persistent memory on DAX), not anonymous memory.
//
// # Slots
//
// A slot is one aligned 8-byte word, the table's only commit point:
//
//	bits 63..48  tag: the high 16 bits of the key's xxhash
//	bits 47..32  the low 16 bits of the segment id
//	bits 31..0   the byte offset of the operation in its segment
//
// 0 is an empty slot and a word with offset 0 (no operation starts inside
// a segment header) is a tombstone. The arena's live segments are always a
// run of consecutive ids, so the low 16 bits name one of them as long as
// fewer than 65,536 segments are live (Options.Newest resolves them);
// segments must be at most 4 GiB. Probing is linear from the home slot
// (the hash's low bits); a deletion leaves a tombstone, never moves an
// entry, so every change to the table is one 8-byte store, and a store
// never turns a slot back to empty. The table grows (or is rebuilt at the
// same size to drop tombstones) when live slots and tombstones reach 3/4
// of it.
//
// # Invariants
//
//   - A slot is never published before the record it points to is durable.
//     Live writes are staged (Stage) in a small heap overlay with their
//     LSN, which lookups consult first; Publish(durable) stores into the
//     table only the staged states whose LSN is durable, in log order,
//     each the newest state of its key.
//   - A checkpoint (Checkpoint) names an LSN C: every operation in records
//     up to C is in the table. It persists the table's dirty pages first,
//     then writes a checkpoint block (LSN, where replay starts, the
//     caller's counters, a generation number and a CRC-32C) into one of
//     two 512-byte sectors of the header, alternately, and persists it. A
//     torn block fails its CRC and the other, older one is used.
//   - Between checkpoints the file holds the checkpoint's state plus any
//     subset of later slot stores (a kill -9 keeps all of them, a power
//     cut any subset): each points at a durable record, no store empties a
//     slot, and so a key not written since C keeps its slot and its probe
//     run. Recovery trusts the table as of C and re-validates only the
//     log written after C, replaying it with Apply in repair mode, which
//     scans a key's whole probe run and removes any duplicate a partial
//     subset left behind, then Sweep: a slot stored after C (its location
//     is past C's) that is not the first slot of its key's probe run is a
//     leftover (a duplicate, or cut off from its run by a slot empty at C
//     that was filled only in memory) and is tombstoned. Sweep reads every
//     slot word (8 bytes a slot, sequentially) and decodes only the keys
//     of slots stored after C.
//   - Growth builds the new table in a side file, persists all of it with
//     the current checkpoint block, renames it over the table and syncs
//     the directory: a crash before the rename leaves the old file (the
//     side file is removed at Open), one after it the new, each a valid
//     state as of the same checkpoint.
//
// What it may not touch: the segments (it reads keys only through KeyAt)
// and any other file of the data directory than its own.
package keyindex

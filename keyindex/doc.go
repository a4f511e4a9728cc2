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
//	bits 63..49  tag: the high 15 bits of the key's xxhash
//	bit  48      expiring: the operation has an expiry (it is read from
//	             the operation, never from the slot)
//	bits 47..32  the low 16 bits of the segment id
//	bits 31..0   the byte offset of the operation in its segment
//
// The expiring bit lets the caller's active-expiry cursor (ScanExpiring)
// read slot words sequentially and decode only the operations that have
// an expiry: no structure besides the table, nothing rebuilt at restart.
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
// # The overlay
//
// The writes staged since the last checkpoint are in a heap overlay
// (overlay.go): an open-addressed hash table keyed by the key's 64-bit
// xxhash, the same hash whose bits give the slot's tag and home, so a
// lookup hashes its key once for both. Its entries (hash, the key's
// offset and length in one append buffer of key bytes, location, expiring
// bit, hint) are kept in staging order, which Checkpoint stores in; full
// keys are compared on a hash match only. An entry is never removed: a
// deletion is staged as location 0, and a checkpoint (or Clear,
// Invalidate) resets the whole overlay. The key strings RangeStaged hands
// out are views of the append buffer and stay valid: once one is handed
// out, the reset takes a new buffer instead of reusing it. The last
// Lookup's answer (its hash, its overlay entry or the table's location
// for the key) lets the Stage that follows it skip both the hash and the
// probe.
//
// Prefetch (prefetch.go) takes a batch of keys about to be looked up (a
// pipeline's) and issues processor prefetches for their home slots and
// overlay positions, then for the overlay entries those name and, for a
// home slot of the key's tag, for what the caller says it will read at
// that location (the record, its own side data): the cache misses of the
// whole batch overlap. It reads the table and the overlay only (the
// caller's addresses are only prefetched), changes nothing, and is a
// no-op off amd64.
//
// # Invariants
//
//   - A slot is never stored before the record it points to is durable.
//     Writes are staged (Stage) in a heap overlay that lookups consult
//     first; only a checkpoint stores them into the table, and its caller
//     names an LSN C that is durable and covers them all. Between
//     checkpoints the file is exactly the last checkpoint's state.
//   - A checkpoint takes three steps, each persisted before the next: an
//     "applying" block (C, and its base B: the previous checkpoint), the
//     staged writes stored into the table (one 8-byte store a slot; the
//     dirty pages persisted), the block of C. The blocks live in two
//     512-byte sectors of the header, written alternately with a
//     generation number and a CRC-32C: a torn block fails its CRC and the
//     other one stands.
//   - A checkpoint comes in two halves (BeginCheckpoint, then a
//     CheckpointJob): the first, under the caller's lock, persists the
//     applying block and stores the staged writes into the table; the
//     job persists the dirty pages and then the block of C and may run
//     without the lock, since nothing stores into the table between
//     checkpoints (writes are staged) and the job touches only its own
//     copy of the dirty page bitmap, the mapping's pages (write-back
//     instructions or msync) and the header's next block. Lookups and
//     Stage go on meanwhile (the overlay is already empty, the table
//     holds C's state in memory). Until the job is ended (EndCheckpoint,
//     under the lock) the index's block is the applying one; every call
//     that would store into the table, write the header or unmap the
//     file (the next checkpoint, growth in one go or a migration's swap,
//     Invalidate, Clear, RemoveIf, Sweep, Close) first waits for it and
//     ends it (Settle), so the applying block stands on disk until the
//     pages are durable and a checkpoint never overlaps the next. A job
//     that fails leaves the applying block and its pages dirty: the next
//     checkpoint (whose base is the applying block's base) persists them.
//   - A checkpoint may also take its stores out of the caller's lock
//     (steps.go): FreezeCheckpoint persists the applying block and
//     freezes the overlay as the checkpoint's writes (a new overlay takes
//     the writes that follow). Lookups consult the overlay, the frozen
//     writes, then the table; the stores touch only the frozen keys'
//     slots and empty slots or tombstones, so another key's probe run
//     never changes under its lookup. Normally the stores are the job's
//     (a frozen job): the writes without a hint are stored at the
//     freeze, the others by Run, without the lock, before the pages: one
//     atomic 8-byte store a slot, matched by the hint alone, while the
//     lookups under the lock read slot words atomically; only with no
//     migration, no Placed notes wanted, room for them below the growth
//     point and not in repair mode. Otherwise CheckpointStep stores them
//     a budget at a time under the lock, released between steps. Until
//     the job has ended nothing else stores into the table: Apply, the
//     bulk changes, growth in one go, a migration (its copy and its
//     delta: GrowWaitsCheckpoint), SetPlaced, the next checkpoint and
//     Close settle first, except a growth that a step's own store starts.
//   - A crash during a checkpoint leaves the applying block: the table is
//     B's state plus any subset of the writes up to C (a kill -9 keeps the
//     stores made, a power cut any subset of pages, sectors or words), no
//     store ever empties a slot, so a key not written since B keeps its
//     slot and its probe run. Recovery trusts B's state and replays the
//     log after B with Apply in repair mode, which scans a key's whole
//     probe run and removes any duplicate a partial subset left, then
//     Sweep: a slot stored after B (its location is past B's) that is not
//     the first slot of its key's probe run is a leftover (a duplicate, or
//     cut off from its run by a slot empty at B and filled only in
//     memory) and is tombstoned. Sweep reads every slot word (8 bytes a
//     slot, sequentially) and decodes only the keys of slots stored after
//     B. The caller's counters are those of C (User): exact.
//   - After a crash between checkpoints the table is exactly C's state:
//     recovery replays the log after C through Stage, with exact
//     accounting, and checkpoints before serving.
//   - Growth builds the new table in a side file, persists all of it with
//     the current block, renames it over the table and syncs the
//     directory: a crash before the rename leaves the old file (the side
//     file is removed at Open), one after it the new, each a valid state
//     as of the same block. Normally it is incremental (grow.go): started
//     at 5/8 of the slots used, copied in steps under the caller's lock
//     with checkpoints in between (their writes kept as a delta), the side
//     file persisted without the lock, the delta applied in repair mode
//     and the swap done between checkpoints. In one go (a stall) only when
//     the table reaches 7/8 before the steps are done, or 3/4 with no
//     migration (recovery's replay, a table nobody steps).
//   - Invalidate voids both blocks durably before a bulk change (Clear,
//     RemoveIf: FLUSHALL, FLUSHDB, SWAPDB), which stores without waiting
//     for a checkpoint: until the next one, Open finds no checkpoint and
//     the caller rebuilds from the log.
//
// What it may not touch: the segments (it reads keys only through KeyAt)
// and any other file of the data directory than its own.
package keyindex

// Package keyspace is the 16 databases: it turns commands' batches into
// log records (through the wal), applies every record to the in-memory
// state in one place (apply, for live writes and recovery alike), and
// serves reads from the arena mapping. It owns the per-database key
// tables, the collections' heap objects, expiry, WATCH, segment cleaning
// (clean.go) and, when attached, the keyspace's side of the persistent key
// index (kix.go), and the KeyCursor (cursor.go) with the BeforeWrite hook
// (beforewrite.go) through which a replication snapshot reads every
// database as of one instant, a chunk at a time, while writes go on. It
// does not parse commands (resp), open data directories
// (recovery) or persist anything itself (wal, arena).
//
// Invariants: the in-memory state is exactly the log applied in order
// (a batch is one record or one transaction group, recovered whole or not
// at all), each expiry decided at the time its record says (applyclock.go); every value a read returns aliases a logged operation, valid
// until Unlock; an entry names its operation by location (segment id and
// offset), never by pointer; a key is gone once now is past its expiry
// (now > expireAt: it lives through its expiry's millisecond, as in
// Redis), one rule (expiredAt, expire.go) for every read, the active
// cycle, the cleaner and WATCH, so a Redis replica of this master, which
// applies the same rule to the same absolute time, agrees with it about a
// key in every millisecond. Who removes such a key differs: a master (its
// lookups, the active cycle, the cleaner); on a replica (SetReplica) no
// one but the master's DEL, the replica's reads only hiding it, except
// the expiries a writable replica's own clients set (replica_expiry.go).
//
// # A data set larger than memory
//
// Three mechanisms keep GETs of indexed keys from faulting under memory
// pressure, sized by SetMemoryTiers (memtier.go; the server's CONFIG
// key-index-lock and record-cache-bytes): part or all of the key index's
// mapping locked resident (keyindex SetLockBudget); a DRAM cache of hot
// set operations keyed by location (reccache.go), which opAt and the
// index probe read before the mapping, so that a cached record's page is
// never touched; and, for a server with a goroutine per connection, the
// pages a GET would still fault on read in without the lock before it
// runs (coldread.go). Invariant: a value read from the cache is, like one
// read from the mapping, valid until Unlock; the cache needs no
// invalidation beyond a removed segment's entries, because an operation
// never changes and segment ids are never reused.
//
// # The key index (on by default; --key-index no turns it off)
//
// Decision. A string key costs about 320 bytes of RSS on the Go heap
// today (the entry, its map slot, the key string, the collector's slack)
// and a restart replays the whole log. Of the structures in the
// literature, a checkpointed index plus log tail (FASTER/Garnet's recovery
// model) over a pointer-free open-addressing table (the slot format of
// level/CCEH-style persistent hash tables, without their in-place
// crash-consistency machinery) fits this log best: the log is already the
// redo log, so the table need only be consistent at checkpoints, and one
// 8-byte slot per key (16-bit hash tag, 16 segment bits, 32-bit offset;
// package keyindex) keeps DRAM out of the picture entirely: the table is a
// file-backed mapping beside the segments, its keys are read back from the
// records. Extendible hashing (CCEH, Dash) would bound growth pauses by
// splitting one segment at a time; this table keeps one flat array (SCAN
// stays a cursor over slot positions that restarts when the table grows)
// and bounds them instead by migrating to the doubled table in steps
// beside the commands (kixGrow; keyindex/grow.go), swapping it in between
// two checkpoints.
//
// Scope. The index holds string keys whose value is one set operation,
// with or without an expiry (the expiry is read from that operation; the
// slot's expiring bit only guides active expiry, see kix.go), or one
// reference to a large value's set operation (valueref.go: EXPIRE,
// PERSIST, RENAME and MOVE of a value of 64 KiB or more log the reference,
// not the value).
// Collections and patched strings keep their DRAM entry as before (a key
// is in exactly one of the two); SETRANGE and APPEND move an indexed key
// into DRAM. The table also holds one anchor slot per DRAM entry that has
// an anchor (kixanchor.go): under the index key (db|0x80, key) the
// location of the operation the entry's current incarnation began at.
// The anchor rule: an incarnation begins at the object operation that
// created the key from nothing (createObject; for a rewrite whole, the
// cleaner's, COPY's, RENAME's, MOVE's or a *STORE's, the creating
// operation right after its delete), and every operation that shaped it
// since (elements, expiry) is an object operation of the key at or after
// that location; a string patched from a set operation is anchored at the
// opPatchBase written before its first patch (patchbase.go). A string
// patched from a value reference and an entry SWAPDB moved (its
// operations name the other database) have no anchor. A restart re-attaches the index if the checkpoint was taken
// with no DRAM entry without an anchor and no large value held by a
// reference (the cleaner's table of them is not in the checkpoint:
// valueref.go); otherwise it replays the whole log and rebuilds the
// index, as before. Access data (OBJECT IDLETIME, FREQ) of indexed
// keys is a bounded DRAM cache (lru.go), carried into the DRAM entry when
// a key moves there; the sealed segments a re-attach
// does not read are verified in the background (scrub.go).
//
// Invariants (see package keyindex for the table's own):
//   - A write is staged in the index's heap overlay with the record
//     applied; lookups see it at once. Only a checkpoint stores staged
//     writes into the table, at an LSN C that is the last record appended
//     (a transaction-group boundary: the keyspace lock is held and no group
//     is open) and is durable first (WaitDurable), so no slot is ever
//     stored before its record is durable and no slot shows half a group.
//   - Checkpoints run from their own goroutine (kixCheckpointer in
//     expire.go: every 20 ms it checkpoints if 1024 writes are staged,
//     else at least once a second), at a clean shutdown, right after
//     recovery, and before the cleaner removes a segment (so a restart
//     never needs a removed segment's records). The cleaner holds the
//     lock to wait for C and store the staged writes into the table; the
//     checkpointer holds it to wait for C and freeze them
//     (keyindex.FreezeCheckpoint), and its job stores them without the
//     lock (or, during a migration, with a replication cursor open or a
//     table at its growth point, it stores them 128 at a time, taking
//     the lock for each step: keyindex.CheckpointStep); lookups see the
//     frozen writes meanwhile. The dirty pages and the final block are
//     persisted without it, and every later checkpoint and Close end
//     that job (and the steps not taken yet) first (keyindex.Settle). The cleaner removes the segment
//     only once its own checkpoint's job has ended without an error,
//     under the lock again, so a segment is only removed under a
//     checkpoint that is durable (a newer one in flight by then has it
//     as its base). The cleaner's checkpoints (and those in steps) hold
//     the lock for their stores: 0.2-0.7 µs a write at 10 M keys, which
//     every command waits out.
//     Each carries the per-database key counts, the live bytes and the
//     cleaner's FLUSHALL/SWAPDB marks as of C, and the number of DRAM
//     entries; they become the keyspace's last checkpoint (lastCP,
//     lastDRAM) when the index records the job's outcome (OnEnd), before
//     any next checkpoint can begin.
//   - FLUSHDB, FLUSHALL and SWAPDB invalidate the checkpoint durably before
//     changing the table in bulk; SWAPDB first moves the indexed keys of
//     both databases into DRAM entries (their operations name the database
//     they were written in). A crash before the next checkpoint rebuilds.
//   - An anchor slot is staged where its entry is created (createObject)
//     and removed where the entry goes (removeKey; FLUSHDB, FLUSHALL and
//     SWAPDB take them out with the strings), so the table as of C holds
//     exactly {(db, key) -> anchor} of the DRAM entries at C that have one.
//     The checkpoint counts the DRAM entries without one (cpDRAMKeys: any
//     makes it untrusted) and carries the oldest anchor's segment S and
//     the anchored entries' live bytes. The cleaner keeps S recent only as
//     a side effect: cleaning a segment that holds an anchor rewrites its
//     collection whole (a new anchor at the head of the log).
//   - Recovery trusts: the table as of C, and the segments whose records
//     are all at or before C and older than S (not read at all;
//     persimmon-check verify still checks every record, and compares the
//     index, strings and anchors, with the log). It rebuilds the anchored
//     entries by scanning the records from S up to C and applying only
//     the object operations of keys with an anchor slot at or after their
//     anchor, keeping an entry whose time passes meanwhile (it was alive
//     at C; its expiry is applied after the start); nothing else up to C
//     is applied (a key absent at C whose operations come after S is
//     never touched, so it cannot come back). A checkpoint being applied
//     at the crash is repaired from its base only if that base had no
//     DRAM entry at all (the applying block does not carry the base's
//     oldest anchor), else the index is rebuilt.
//     It re-validates: the log after C, from C's position (CRC, LSN chain,
//     torn tail as before), replayed through the overlay with exact
//     accounting; after a crash inside a checkpoint, the log after the
//     checkpoint's base in repair mode, then Sweep (package keyindex). A
//     checkpoint past the end of the recovered log (records lost in a
//     power cut that the index had) is discarded and the index rebuilt.
//
// Measured (scripts/bench-restart.sh, 16-byte names and values, on a
// machine loaded by seven other builds: load average ~20 on 2 CPUs, every
// time inflated): at 2 M keys anonymous RSS is 11 bytes a key with the
// index against 229 without it and redis-server's 125; at 10 M keys 5
// bytes a key (49 MB anonymous, 825 MB file-backed: the segments and the
// 134 MB table), Go heap 30 MB; the restart after kill -9 served its
// first reply in 0.110 s and every key in 0.138 s, against 65 s for
// redis-server loading its RDB of the same keys in the same run (the
// index's checkpoint covered the whole log there: the cost of re-attaching
// alone; a kill during writes also replays up to one checkpoint interval).
// BENCHMARKS.md section 6 has the tables. With 1,000 hashes of 1,000
// fields loaded before 2 M strings (the worst case for the anchors: the
// oldest anchor is in segment 1, so the restart scans all 2 M records for
// the 1,000 operations it applies), kill -9 and restart, five interleaved
// rounds on a machine at load ~17: every key served after 4.6 s (median)
// against 17.3 s for the build before anchors (whole log replayed) and
// 20.0 s for redis-server loading its RDB; in a quieter single run 2.16 s
// against 4.79 s and 12.3 s, and 1.78 s with the hashes loaded after the
// strings (137 k records scanned): most of what remains is building the
// hashes' 1 M fields in DRAM, which any restart of DRAM collections pays.
// The scan from an old anchor validates every record after it (CRC, LSN
// chain, as a replay does) and decodes their operations, probing the
// table once per object operation and applying only the anchored ones. Whether
// the cleaner should rewrite collections whose anchor is older than some
// number of segments, to bound that span at the cost of rewriting cold
// collections, is open; it does so today only when it cleans the segment
// holding an anchor.
package keyspace

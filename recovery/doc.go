// Package recovery opens a data directory: it maps the arena, verifies and
// replays every record in log order into a new keyspace, cuts a torn tail
// off the active segment, and refuses to start on corruption anywhere else.
//
// The decision table:
//
//	where                          what is found            outcome
//	sealed segment                 any invalid record       ErrCorruption: file, offset, expected
//	sealed segment                 records end != seal end  ErrCorruption
//	newest (active) segment        invalid record           torn tail: keep the prefix, zero the rest
//	newest (active) segment        invalid record, then     ErrCorruption (a later record's durable
//	                               a record whose durable   gap proves it was durable: no crash tore
//	                               gap covers it            it; wal package doc)
//	newest (active) segment        invalid record, then     ErrCorruption
//	                               > wal.TornTailLimit
//	                               bytes of valid records
//	older unsealed segment         invalid record           ErrCorruption
//	any segment header             bad magic/sum/version    error (the newest one is removed instead,
//	                                                        with a log line, if it is what a crash
//	                                                        while creating it leaves: it follows an
//	                                                        unsealed segment, and is all zero after
//	                                                        a header that does not verify)
//	any segment file               size != header's size    arena.ErrShortFile: name, both sizes
//	                                                        (never removed: repair keeps its prefix)
//	segment ids                    a gap                    arena.ErrMissingSegment: the files around it
//	oldest segment (id > 1)        no cleaned mark          arena.ErrMissingSegment (segments written
//	                                                        by version-1 writers are taken as is)
//	consecutive segments           base LSN != last LSN     ErrCorruption: both files, the missing LSNs
//	                               of the one before
//	newest segment with a          invalid record before    ErrCorruption (a clean shutdown persisted
//	clean-shutdown mark            the marked end           every record before the mark)
//	newest segment whose clean-    invalid record           ErrCorruption naming the word (it may have
//	shutdown word is set but                                been a mark; a crash cannot leave such a
//	does not verify                                         word); a log line either way
//
// # Segment chain
//
// The cleaner removes only the oldest segment, after marking its successor
// (arena), and new segments take the next id, so the segment files of a
// data directory are always a run of consecutive ids, and each segment's
// base LSN is the last LSN of the one before it (ChainLSN; the one
// exception is a segment after an orphan, an older unsealed segment left
// by a crash between creating a segment and sealing the one before, whose
// unpersisted records may be gone). Recovery checks the ids before
// replaying anything and each base LSN before replaying that segment: a
// lost middle segment would otherwise replay the log without its records
// (a deleted key coming back, an overwrite undone).
//
// # Clean shutdown
//
// wal.Close (the keyspace's Close, on SIGTERM or SHUTDOWN) persists every
// record and then stores one 8-byte commit point in the active segment's
// header: the end of its records. A segment carrying it is scanned as a
// sealed one: any bad record before the end is corruption, so damage after
// a clean shutdown is never cut as a torn tail. The wal clears the mark
// durably before it next appends or rotates, so a crash after that is an
// ordinary torn-tail case again.
//
// A transaction group without its commit record at the end of the log is
// dropped (its EXEC never replied).
//
// # The key index (on unless Options.NoKeyIndex)
//
// Open maps the key index and, when its checkpoint can be trusted (see
// package keyspace, AttachIndex), skips every sealed segment whose records
// are all at or before the checkpoint: they are not read, so damage inside
// them is not found at start-up (persimmon-check verify reads every record
// and compares the index with the log). That is the price of a restart
// that does not read the data. In the newest segment only the records
// after the checkpoint are read (and replayed), with the record just
// before it: the checkpoint was taken once its LSN was durable, so a
// crash tears nothing before it, and a torn tail after it is cut as
// without the index. A log that ends before the checkpoint (a power cut
// lost its tail; a repair removes the index) fails that look at the
// record before it (wal.EndsAt): the segment is then validated whole,
// ends before the checkpoint, and Open rebuilds the index from the whole
// log. The newest segment's records before the checkpoint are verified
// in the background with the skipped segments (keyspace.StartScrub,
// wal.VerifyPrefix): damage there is reported while serving, not at
// start-up. After a clean shutdown the newest segment is read whole all
// the same: damage before its clean-shutdown mark is refused at start-up.
// The start-up line says how long mapping and validation took and how many
// records were validated and replayed.
package recovery

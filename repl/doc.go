// Package repl is Redis's replication protocol (PSYNC2, as Redis 7.0
// speaks it), on both sides of a link, without the server around it: it
// imports rdb for the snapshot format and nothing of the wire protocol
// package or the keyspace. The server wires it in by implementing the
// interfaces named here.
//
// # Replica side
//
// Replica connects to a master and runs the handshake (PING; AUTH with
// masteruser/masterauth; REPLCONF listening-port, ip-address, capa eof
// capa psync2), then PSYNC replid offset+1 ("? -1" when it has no
// position). On +FULLRESYNC replid offset it streams the snapshot, sent
// either as "$<len>" and that many bytes or disk-less as "$EOF:<40-byte
// mark>" and bytes up to the mark, through rdb.Reader into the Applier's
// SnapshotLoader, key by key, which commits (or aborts: a truncated or
// corrupt snapshot leaves the old dataset and position). On +CONTINUE
// [replid] it goes on from its position, recording a new replication ID
// when the master names one. Then it reads the command stream: RESP
// arrays whose byte count is the replication offset. SELECT, PING and
// REPLCONF are the link's own; every other command is a write. The
// stream reaches Applier.Apply in Units: one write, or a MULTI/EXEC
// block's writes whole, with the raw bytes since the previous unit and
// the offset and database after them; link traffic alone goes as a unit
// of no writes when nothing more is buffered, or at a GETACK. A server
// relays Raw into its own Master (FeedRaw), so its backlog keeps the
// master's offsets: its replicas follow it, and after a promotion
// (Master.Promote) its master's other replicas continue with +CONTINUE.
//
// Invariants: the offset acknowledged (REPLCONF ACK, every AckPeriod and at
// once on REPLCONF GETACK) is never above what the Applier reports
// durable; the position a Replica resumes from (after a dropped link, or
// read back from the store by a restarted server) is always a unit
// boundary, so a half-received MULTI block is asked for again whole.
// While a snapshot loads, the replica sends a newline every AckPeriod, as
// Redis's replicas do, and a link silent for Timeout is closed.
//
// The master must not send the command stream after a disk-less snapshot
// before the replica's first ACK (Redis's masters wait for it): the mark
// is looked for in what has been read, and bytes read past it are kept.
//
// # Master side
//
// Backlog, ReplIDs, DecidePSYNC, Feed and Master: the replication backlog,
// the replication IDs with their Redis 7.0 rules, the choice between a
// full and a partial resync, the command-stream encoder, and the serving
// of replica links (snapshot, stream, ACKs); see their docs.
//
// A full resync's snapshot is taken through Snapshotter at one instant
// with the stream's offset (the server takes its view and calls at()
// under the lock its writes hold while they apply and propagate), and
// written by rdb.Writer: disk-less as $EOF:<mark> when the replica can
// take it (then the stream waits for its first ACK), else into a
// temporary file sent as $<len>, with a newline a second meanwhile. The
// writes made while it is made and sent are held for that replica up to
// BufferLimit, so a backlog smaller than a transfer's duration of writes
// does not loop it through full resyncs. A replica link reads only
// REPLCONF ACK (and newlines) from its replica.
//
// Not here: the server's commands (PSYNC, SYNC, REPLCONF, REPLICAOF,
// ROLE, WAIT, INFO replication), which parse their arguments and call
// these; persistence of the replica's position (the Applier's); Redis's
// SYNC fallback for masters older than PSYNC.
package repl

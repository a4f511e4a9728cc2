// Package commands holds the command families: one file per family
// (strings.go, bitops.go, lcs.go, keys.go, dump.go, hashes.go, lists.go,
// sort.go, sets.go, zsets.go with zscore.go, hll.go, geo.go, roaring.go,
// streams.go). Each file starts with its table, a function returning the
// family's entries (name, arity, flags, key specs, summary, handler), and
// then the handlers; Table (table.go) lists the families for
// server.NewServer. To find a command: grep its name in quotes here (or
// in package server for the connection, transaction, pub/sub, scripting
// and server commands).
//
// A handler is func(c *Client, args [][]byte). It reads and writes the
// keyspace through c.KS in database c.DB (under the keyspace lock unless
// its entry says NoLock), replies through c's proto.Writer calls
// (WriteBulk, WriteMap, WriteSet, WriteDouble, WritePairs...: the
// protocol version is not the handler's business), and makes a write
// durable by committing a keyspace batch before its reply counts
// (commitReply), then names each change it made with c.Notify(class,
// event, key) in Redis's order (keyspace notifications; notify.go). Blocking commands use the Client's blocking calls
// (BlockOn, ServingOrder, YieldsTo...), which package server implements.
//
// Invariants: a handler replies exactly once, with Redis 7.0's reply for
// the same arguments and data, error text included; it checks every
// argument before it changes anything; a write is one keyspace batch
// (atomic in the log).
//
// What it may not touch: connections, sockets, the event loop, other
// clients, configuration, the log or the arena directly. Everything it
// uses from the server is named once in context.go. Nothing imports this
// package but the server binary (cmd/persimmon-server) and tests.
package commands

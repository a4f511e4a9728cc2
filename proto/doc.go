// Package proto is the Redis wire protocol: the request reader and the
// reply writer, and nothing else.
//
// It owns the byte formats. The reader splits a client's buffered input
// into requests: multibulk requests (ScanMultibulk walks their headers
// against Redis's limits before the bytes arrive, SplitMultibulk cuts a
// complete one) and inline requests (SplitInline, with Redis's
// sdssplitargs quoting); ParseBatch takes the whole canonical requests at
// the front of a pipelined batch at once, with the arguments the reader
// would give them, for a server that looks at a batch before running it.
// The Writer appends replies through semantic calls
// (array, map, set, push, attribute, bulk, verbatim, simple string, error,
// integer, double, big number, boolean, null, null array) and encodes each
// in the protocol version of its connection, RESP2 or RESP3, so that no
// command handler knows which version it is speaking.
//
// Invariants: in RESP2 every call emits exactly the bytes Redis 7.0 sends
// a RESP2 client for that reply type (a map is a flat array of 2n
// elements, a set an array, a double a bulk string printed with %.17g, a
// boolean the integer 1 or 0, a verbatim string a bulk string, a null $-1
// and a null array *-1); in RESP3 it emits Redis 7.0's RESP3 types. Every
// call appends one complete element (or the header of an aggregate, whose
// elements the caller appends next). The writer never allocates except to
// grow its buffer.
//
// What it may not touch: connections, sockets, the keyspace, the command
// table. It imports only the standard library (its tests compare the
// request reader with redcon's scanner), and nothing in Persimmon imports it except the server and the
// command handlers (through the server's Client).
package proto

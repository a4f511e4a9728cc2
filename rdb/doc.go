// Package rdb is Redis's RDB serialization, version 10 (the format of Redis
// 7.0): the encoding of one value (what DUMP and RESTORE exchange) and the
// RDB file (what SAVE writes and a server loads at start-up).
//
// It owns the byte formats only: length and string encodings (6/14/32/64-bit
// lengths, int8/16/32 strings, LZF-compressed strings), the compact
// containers Redis embeds as strings (listpack, intset, and on read the older
// ziplist and zipmap), CRC64 (Jones polynomial, reflected, as Redis's
// crc64.c computes it), the DUMP payload footer and the file's opcodes. It
// knows nothing of the keyspace or the wire protocol: callers hand it a
// Value and take Values back.
//
// # Values
//
// A Value is one key's data in a neutral shape (see Value). Reading accepts
// every object type redis-server 7.0 writes, and the older encodings it still
// loads (ziplist lists, hashes and sorted sets, zipmap hashes, quicklists of
// ziplists, ASCII-double sorted sets, type-15 streams of Redis 5 to 6.2),
// except module types, which return ErrUnsupported. A stream is written as
// type 19 (RDB_TYPE_STREAM_LISTPACKS_2) with its consumer groups, nodes as
// the writer had them; see streamobj.go for the layout and the one liberty
// taken (a node's deleted entries are not written). Writing picks the encoding redis-server 7.0
// picks with its default configuration: a list is a quicklist of listpacks
// (type 18) cut where Redis cuts (list-max-listpack-size -2, 8 KB nodes); a
// set of at most 512 integers is an intset; a hash of at most 512 fields
// and a sorted set of at most 128 members, all of at most 64 bytes, are
// listpacks; anything bigger, or marked Big, is the plain type (2, 4, 5). Strings of at most 11 bytes holding a canonical
// 32-bit integer are integer-encoded; strings (keys, values and container
// blobs alike) longer than 20 bytes are LZF-compressed when that saves at
// least 4 bytes, with liblzf's algorithm as Redis builds it, so payloads
// are byte-identical to redis-server's (see lzfCompress for the one
// exception).
//
// TypeRoaring (id 80) is Persimmon's own type for TR.* roaring bitmaps: its
// body is one string holding the bitmap's portable serialization. Redis
// 7.0 does not know id 80 and refuses such a payload with "Bad data
// format", which is the point: a bitmap is not silently turned into
// something else.
//
// # DUMP payload
//
//	+------+------------------+-------------+-------------------------+
//	| type | object body      | version u16 | CRC64 u64 of all before |
//	+------+------------------+-------------+-------------------------+
//
// Both footer fields are little-endian. Payloads of a version above 10 or
// with a wrong checksum are refused with ErrChecksum.
//
// # RDB file
//
//	"REDIS0010"  AUX*  FUNCTION2*  ( SELECTDB db  RESIZEDB n e  ( [EXPIRETIME_MS t] [IDLE s | FREQ f] type key value )* )*  EOF  CRC64
//
// FUNCTION2 records (a function library's source) are read and written;
// the pre-7.0 FUNCTION record and module aux data return ErrUnsupported.
// The trailing checksum covers every byte before it, EOF included; a zero
// checksum means "not computed" (rdbchecksum no) and is accepted. Reader
// and Writer stream a file record by record (a replication transfer holds
// one key in memory at a time); ReadFile and WriteFile hold a whole File.
//
// Invariants: decoding never panics on malformed input (every length is
// checked against the bytes left); an encoded Value decodes back to an
// equal Value.
package rdb

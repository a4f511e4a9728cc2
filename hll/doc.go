// Package hll is Redis 7.0's HyperLogLog string format, byte for byte.
//
// An HLL is an ordinary string value: a 16-byte header followed by the
// registers in one of two encodings. The header is
//
//	+------+---+-----+----------+
//	| HYLL | E | N/U | Cardin.  |
//	+------+---+-----+----------+
//	  4      1   3     8 bytes
//
// E is 0 (dense) or 1 (sparse); N/U is three unused bytes; the cardinality
// is a little-endian uint64 cache of the last count, and its most
// significant bit (byte 15, bit 7) set means the cache is invalid.
//
// Dense: 16384 registers of 6 bits, packed least significant bit first
// (register i starts at bit 6*i), 12288 bytes, 12304 with the header.
//
// Sparse: a run-length code of opcodes covering exactly 16384 registers:
//
//	00xxxxxx           ZERO:  xxxxxx+1 (1..64) registers at 0
//	01xxxxxx yyyyyyyy  XZERO: xxxxxxyyyyyyyy+1 (1..16384) registers at 0
//	1vvvvvxx           VAL:   xx+1 (1..4) registers at vvvvv+1 (1..32)
//
// A sparse HLL becomes dense when a register needs a value above 32 or
// when an insertion would make the string longer than the sparse limit
// (Redis's hll-sparse-max-bytes, 3000 by default). Elements are hashed with
// MurmurHash64A (seed 0xadc83b19); the low 14 bits pick the register and
// the run of zero bits above them, plus one, is the candidate value. The
// count is Ertl's improved estimator, as Redis 7.0 computes it, so the same
// registers give the same number.
//
// The package owns only the byte format and its arithmetic: it takes and
// returns byte slices and never touches a keyspace. Functions that walk a
// sparse string report a malformed one with ErrCorrupt; Check says whether
// a string is an HLL at all (Redis's WRONGTYPE case).
package hll

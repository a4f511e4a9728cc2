package wal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// Record types and flags: part of the on-disk format, never renumber.
const (
	TypeBatch  = 1
	TypeCommit = 2

	FlagTxn      = 1
	FlagTxnBegin = 2

	// HeaderSize is the size of a record header in bytes.
	HeaderSize = 24
	// MaxPayload is the largest payload a record may carry (bytes).
	MaxPayload = 1<<32 - 1 - HeaderSize - 8

	// DirectMin is the record size (bytes, header and padding included)
	// from which Append writes a record with pwritev(2) instead of
	// stores into the mapping (see "Big records" in the package doc).
	// Not part of the format: either way the bytes are the same.
	DirectMin = 1 << 20

	// GapUnknown (0) in a record's durable gap says nothing: written by
	// version-1 segments, and never by this build in a version-2 one
	// (the gap of a record is at least 1).
	GapUnknown = 0
	// GapFar (65535) is the largest durable gap: the record of LSN M says
	// only that the durable LSN was at most M - GapFar when it was
	// appended, so, like GapUnknown, it proves nothing durable.
	GapFar = 1<<16 - 1
)

// Errors. ErrCleanEnd and ErrInvalidRecord come from DecodeRecord;
// ErrTornTail and ErrCorruption from scanning a segment; use IsTornTail and
// errors.Is(err, ErrCorruption) to tell them apart.
var (
	ErrCleanEnd      = errors.New("wal: clean end of segment")
	ErrInvalidRecord = errors.New("wal: invalid record")
	ErrTornTail      = errors.New("wal: torn tail")
	ErrCorruption    = errors.New("wal: corruption")
)

// IsTornTail reports whether err is a torn tail (safe to cut), as opposed to
// corruption (refuse to start).
func IsTornTail(err error) bool { return errors.Is(err, ErrTornTail) }

// Record is one decoded record. Payload aliases the segment mapping.
type Record struct {
	Type  uint8
	Flags uint8
	// Gap is the record's durable gap (see "Durable gap" in the package
	// doc): when it was appended, every record of LSN <= LSN - Gap was
	// durable, if 0 < Gap < GapFar.
	Gap     uint16
	LSN     uint64
	Payload []byte
	Offset  int64 // bytes from segment start
	Size    int64 // bytes the record occupies, padding included
}

// RecordSize is the space a record with an n-byte payload occupies.
func RecordSize(n int) int64 { return HeaderSize + align8(int64(n)) }

func align8(n int64) int64 { return (n + 7) &^ 7 }

// encodeRecord writes a record into dst, which has exactly RecordSize(len(payload)) bytes.
//
// The checksum covers the header's first 16 bytes and the payload, which
// the checksum field separates. Rather than feed them to a streaming
// digest (which copies both into its 32-byte buffer and reads them back
// with wider loads than the copy's stores: failed store forwardings, each
// waiting for the store buffer to drain, 40% of Digest.Sum64's samples
// and ~5% of a SET's CPU by perf), encodeRecord first puts those 16
// bytes right before the payload, in the checksum's place and the LSN's,
// as two 8-byte stores the hash's 8-byte loads forward from, hashes
// the contiguous range in one call, and then writes the header in its
// place. The bytes that result are the same; a crash in between leaves a
// record whose checksum fails, as any torn write does.
func encodeRecord(dst []byte, typ, flags uint8, gap uint16, lsn uint64, payload []byte) {
	w0 := uint64(uint32(len(payload))) | uint64(typ)<<32 | uint64(flags)<<40 | uint64(gap)<<48 // length, type, flags, durable gap (putHead's layout)
	n := copy(dst[HeaderSize:], payload)
	clear(dst[HeaderSize+n:])
	binary.LittleEndian.PutUint64(dst[8:], w0)
	binary.LittleEndian.PutUint64(dst[16:], lsn)
	sum := xxhash.Sum64(dst[8 : HeaderSize+n])
	binary.LittleEndian.PutUint64(dst[0:], w0)
	binary.LittleEndian.PutUint64(dst[8:], lsn)
	binary.LittleEndian.PutUint64(dst[16:], sum)
}

// encodeRecordParts is encodeRecord of the n-byte payload that is the
// concatenation of parts.
func encodeRecordParts(dst []byte, typ, flags uint8, gap uint16, lsn uint64, n int, parts [][]byte) {
	putHead(dst, typ, flags, gap, lsn, n)
	at := HeaderSize
	for _, p := range parts {
		at += copy(dst[at:], p)
	}
	clear(dst[at:])
	binary.LittleEndian.PutUint64(dst[16:], checksumParts(dst[:16], parts))
}

// putHead writes the first 16 bytes of a record header: length, type,
// flags, durable gap, LSN.
func putHead(dst []byte, typ, flags uint8, gap uint16, lsn uint64, n int) {
	binary.LittleEndian.PutUint32(dst[0:], uint32(n))
	dst[4] = typ
	dst[5] = flags
	binary.LittleEndian.PutUint16(dst[6:], gap)
	binary.LittleEndian.PutUint64(dst[8:], lsn)
}

// checksumParts is checksum of the payload that is the concatenation of
// parts.
func checksumParts(head []byte, parts [][]byte) uint64 {
	var d xxhash.Digest
	d.Reset()
	d.Write(head)
	for _, p := range parts {
		d.Write(p)
	}
	return d.Sum64()
}

func checksum(head, payload []byte) uint64 {
	var d xxhash.Digest
	d.Reset()
	d.Write(head)
	d.Write(payload)
	return d.Sum64()
}

// DecodeRecord decodes the record at off in seg (a whole segment mapping).
// It returns ErrCleanEnd for an all-zero header or when off is at the end,
// and an error wrapping ErrInvalidRecord, saying what was expected, for
// anything that does not verify. The durable gap (bytes 6-7) is checked
// only by the checksum: whether a segment may hold a non-zero one is its
// format version's business (ScanSegmentFrom).
func DecodeRecord(seg []byte, off int64) (Record, error) {
	if off+HeaderSize > int64(len(seg)) {
		if off == int64(len(seg)) {
			return Record{}, ErrCleanEnd
		}
		return Record{}, fmt.Errorf("%w: header at offset %d crosses the segment end %d", ErrInvalidRecord, off, len(seg))
	}
	h := seg[off : off+HeaderSize]
	if isZero(h) {
		return Record{}, ErrCleanEnd
	}
	n := int64(binary.LittleEndian.Uint32(h[0:]))
	typ, flags := h[4], h[5]
	switch {
	case typ != TypeBatch && typ != TypeCommit:
		return Record{}, fmt.Errorf("%w at offset %d: type %d, want %d or %d", ErrInvalidRecord, off, typ, TypeBatch, TypeCommit)
	case flags&^(FlagTxn|FlagTxnBegin) != 0:
		return Record{}, fmt.Errorf("%w at offset %d: unknown flags %#x", ErrInvalidRecord, off, flags)
	case off+HeaderSize+align8(n) > int64(len(seg)):
		return Record{}, fmt.Errorf("%w at offset %d: length %d runs past the segment end %d", ErrInvalidRecord, off, n, len(seg))
	}
	payload := seg[off+HeaderSize : off+HeaderSize+n]
	if want, got := binary.LittleEndian.Uint64(h[16:]), checksum(h[:16], payload); want != got {
		return Record{}, fmt.Errorf("%w at offset %d: checksum %#016x, want %#016x (length %d, LSN %d)", ErrInvalidRecord, off, got, want, n, binary.LittleEndian.Uint64(h[8:]))
	}
	return Record{
		Type:    typ,
		Flags:   flags,
		Gap:     binary.LittleEndian.Uint16(h[6:]),
		LSN:     binary.LittleEndian.Uint64(h[8:]),
		Payload: payload,
		Offset:  off,
		Size:    HeaderSize + align8(n),
	}, nil
}

func isZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

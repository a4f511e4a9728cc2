package rdb

import (
	"encoding/binary"
	"errors"
)

// Version is the RDB version this package writes (Redis 7.0's).
const Version = 10

// ErrChecksum is returned for a DUMP payload whose footer names a version
// above Version, or whose CRC64 does not match (Redis: "DUMP payload
// version or checksum are wrong").
var ErrChecksum = errors.New("rdb: DUMP payload version or checksum are wrong")

// Dump is the DUMP payload of v: its object, the version (2 bytes) and the
// CRC64 of both (8 bytes), little-endian.
func Dump(v *Value) ([]byte, error) {
	p, err := AppendObject(nil, v)
	if err != nil {
		return nil, err
	}
	p = binary.LittleEndian.AppendUint16(p, Version)
	return binary.LittleEndian.AppendUint64(p, CRC64(0, p)), nil
}

// VerifyDump checks a payload's footer as Redis's verifyDumpPayload does
// (with checksum validation on).
func VerifyDump(p []byte) error {
	if len(p) < 10 {
		return ErrChecksum
	}
	f := p[len(p)-10:]
	if binary.LittleEndian.Uint16(f) > Version {
		return ErrChecksum
	}
	if binary.LittleEndian.Uint64(f[2:]) != CRC64(0, p[:len(p)-8]) {
		return ErrChecksum
	}
	return nil
}

// Restore decodes a DUMP payload: ErrChecksum for a bad footer, an error
// wrapping ErrBadFormat or ErrUnsupported for a bad or unknown object.
// The object is read from the whole payload, as Redis reads it: bytes
// between the object and the footer are ignored, and an object whose last
// bytes are the footer's is accepted (Redis 7.0 does not bound the read).
func Restore(p []byte) (Value, error) {
	if err := VerifyDump(p); err != nil {
		return Value{}, err
	}
	v, _, err := DecodeObject(p)
	return v, err
}

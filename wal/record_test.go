package wal

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestEncodeRecordLayout checks encodeRecord's bytes against the format
// written out field by field (length, type, flags, two zero bytes, LSN,
// the checksum of the first 16 bytes and the payload, the payload, zero
// padding to 8 bytes) for every payload length around the hash's 32-byte
// stripes, over a destination full of garbage, and that DecodeRecord
// reads each back.
func TestEncodeRecordLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 200; n++ {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(r.Uint32())
		}
		typ, flags, gap, lsn := uint8(TypeBatch), uint8(n%4), uint16(r.Uint32()), r.Uint64()
		size := RecordSize(n)
		want := make([]byte, size)
		binary.LittleEndian.PutUint32(want[0:], uint32(n))
		want[4], want[5] = typ, flags
		binary.LittleEndian.PutUint16(want[6:], gap)
		binary.LittleEndian.PutUint64(want[8:], lsn)
		binary.LittleEndian.PutUint64(want[16:], checksum(want[:16], payload))
		copy(want[HeaderSize:], payload)

		seg := make([]byte, 8+size+8)
		for i := range seg {
			seg[i] = 0xa5
		}
		encodeRecord(seg[8:8+size], typ, flags, gap, lsn, payload)
		if got := seg[8 : 8+size]; !bytes.Equal(got, want) {
			t.Fatalf("payload of %d bytes: record\n%x\nwant\n%x", n, got, want)
		}
		for _, b := range append(seg[:8:8], seg[8+size:]...) {
			if b != 0xa5 {
				t.Fatalf("payload of %d bytes: a byte outside the record changed", n)
			}
		}
		rec, err := DecodeRecord(seg[:8+size], 8)
		if err != nil || rec.LSN != lsn || rec.Flags != flags || rec.Gap != gap || !bytes.Equal(rec.Payload, payload) {
			t.Fatalf("payload of %d bytes: decoded %+v, %v", n, rec, err)
		}
	}
}

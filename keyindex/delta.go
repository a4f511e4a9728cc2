package keyindex

import (
	"encoding/binary"
)

// deltaLog is a migration's delta: the writes applied to the old table
// while a migration runs, in order, to be applied to the new table in
// that order (grow.go). After a bulk load it holds a write for most of
// the keys written since the migration started (millions), so it is kept
// compact and free of pointers: each write is encoded as the key's length
// (uvarint), the key, its location (8 bytes, little-endian) and the
// expiring flag (1 byte), appended to fixed-size chunks. A 16-byte key
// costs 26 bytes, where a slice of {string, uint64, bool} cost 32 bytes a
// write plus the key's own allocation, plus the slice's doubling (the
// old arrays garbage until the next collection), all of it scanned by
// the GC; at 10 M keys loaded the old form took the live heap past 90 MB
// and left 300 MB of garbage behind once applied. A chunk is dropped as
// soon as its last write is applied (the delta is applied in steps while
// it grows).
type deltaLog struct {
	chunks [][]byte // chunks[i] nil once applied past
	n      int      // writes added
	rc, ro int      // the next write to read: chunk index, offset in it
}

// deltaChunk is the size of a chunk: a write longer than that (a key of
// more than deltaChunk-19 bytes) gets a chunk of its own size.
const deltaChunk = 64 << 10

// add appends a write.
func (d *deltaLog) add(key []byte, loc uint64, expiring bool) {
	need := binary.MaxVarintLen64 + len(key) + 9
	if len(d.chunks) == 0 || cap(d.chunks[len(d.chunks)-1])-len(d.chunks[len(d.chunks)-1]) < need {
		d.chunks = append(d.chunks, make([]byte, 0, max(deltaChunk, need)))
	}
	c := d.chunks[len(d.chunks)-1]
	c = binary.AppendUvarint(c, uint64(len(key)))
	c = append(c, key...)
	c = binary.LittleEndian.AppendUint64(c, loc)
	var e byte
	if expiring {
		e = 1
	}
	c = append(c, e)
	d.chunks[len(d.chunks)-1] = c
	d.n++
}

// next returns the next write not yet read (the caller counts them: it
// must not read past the n-th). The key aliases the chunk, which stays
// alive while the caller holds it.
func (d *deltaLog) next() (key []byte, loc uint64, expiring bool) {
	c := d.chunks[d.rc]
	if d.ro == len(c) {
		d.chunks[d.rc] = nil // every write of it read
		d.rc, d.ro = d.rc+1, 0
		c = d.chunks[d.rc]
	}
	kl, w := binary.Uvarint(c[d.ro:])
	p := d.ro + w
	key = c[p : p+int(kl) : p+int(kl)]
	p += int(kl)
	loc = binary.LittleEndian.Uint64(c[p:])
	expiring = c[p+8] != 0
	d.ro = p + 9
	return key, loc, expiring
}

package keyspace

import (
	"encoding/binary"
	"fmt"
)

// Function libraries (FUNCTION LOAD, DELETE, FLUSH, RESTORE) are server
// state outside the databases: FLUSHALL, FLUSHDB and SWAPDB leave them
// alone, as in Redis. Every change logs the whole set of libraries as one
// operation,
//
//	opFunctions  db 0 | body: count uvarint, then count × (code length uvarint, code)
//
// each code being a library's source as FUNCTION LOAD was given it (header
// line included). The last one applied is the set: replay needs no other,
// and a FUNCTION LOAD inside MULTI/EXEC or a script's group is recovered
// with its group, whole or not at all. The keyspace keeps the codes only
// (copies on the heap: the record's segment may be cleaned away); loading
// them into a Lua state is the server's job (package functions).
//
// Cleaning: the live operation is copied to the head of the log when its
// segment is cleaned, whatever else the segment holds (a FLUSHALL after it
// does not make it dead); an empty set is not copied, since every older
// operation is in segments cleaned before it. Sets are small (Redis keeps
// them in memory too), so writing the whole set per change is cheap.
const opFunctions = 6

// functionsState is the set of libraries as the last opFunctions left it.
type functionsState struct {
	codes [][]byte
	loc   uint64 // packed location of that operation (0: none applied)
	size  int    // its encoded bytes, counted in liveBytes
}

// SetFunctions appends the operation that makes codes (each a library's
// source) the server's function libraries, replacing the whole set.
func (b *Batch) SetFunctions(codes [][]byte) {
	var body []byte
	body = binary.AppendUvarint(body, uint64(len(codes)))
	for _, c := range codes {
		body = binary.AppendUvarint(body, uint64(len(c)))
		body = append(body, c...)
	}
	b.head(opFunctions, 0)
	b.bytes(body)
}

// Functions returns the libraries' sources as the last SetFunctions
// applied left them (at start-up: as recovered). The slices belong to the
// keyspace: do not modify them.
func (ks *Keyspace) Functions() [][]byte { return ks.fn.codes }

// decodeFunctions reads an opFunctions body into heap copies.
func decodeFunctions(body []byte) ([][]byte, error) {
	n, w := binary.Uvarint(body)
	if w <= 0 || n > uint64(len(body)) {
		return nil, fmt.Errorf("%w: functions count", errBadOp)
	}
	i := w
	codes := make([][]byte, 0, n)
	for range n {
		code, next, ok := readBytes(body, i)
		if !ok {
			return nil, fmt.Errorf("%w: truncated function library", errBadOp)
		}
		codes = append(codes, append([]byte(nil), code...))
		i = next
	}
	if i != len(body) {
		return nil, fmt.Errorf("%w: %d bytes after the function libraries", errBadOp, len(body)-i)
	}
	return codes, nil
}

// applyFunctions makes o's set the libraries.
func (ks *Keyspace) applyFunctions(o op, loc uint64) error {
	codes, err := decodeFunctions(o.body)
	if err != nil {
		return err
	}
	ks.liveBytes += int64(o.size - ks.fn.size)
	ks.fn = functionsState{codes: codes, loc: loc, size: o.size}
	return nil
}

// cleanFunctions copies the live functions operation to the head of the
// log if it is in segment segID (see the top of this file). Call it with
// the lock held; false means the copy could not be written.
func (ks *Keyspace) cleanFunctions(segID uint64) bool {
	if ks.fn.loc == 0 || ks.fn.loc>>40 != segID || len(ks.fn.codes) == 0 {
		return true
	}
	var b Batch
	b.SetFunctions(ks.fn.codes)
	ks.cleaning = true
	err := ks.Commit(&b)
	ks.cleaning = false
	return err == nil
}

package keyspace

import (
	"encoding/binary"
	"fmt"
)

// The replication position of a server that is a replica: the master's
// replication ID, the offset of the last byte of its stream applied, and
// the database selected there. The server logs it in the same transaction
// group as the writes of each unit of the stream it applies (and with the
// FLUSHALL and the end of a full resync), so what recovery brings back is
// always the position those writes leave: a restarted replica asks its
// master for the bytes after it (PSYNC replid offset+1) and neither loses
// nor repeats a write. Like the function libraries it is server state
// outside the databases (FLUSHALL and SWAPDB leave it alone), and the last
// one applied is the position:
//
//	opReplPosition  db 0 | body: replid (uvarint length, bytes) | offset int64 LE | db u8
//
// An empty replid means no position (a full resync began: its data is
// not whole until it ends). Cleaning copies the live operation to the
// head of the log when its segment is cleaned, as it does the functions.
const opReplPosition = 7

// replPosition is the position as the last opReplPosition left it.
type replPosition struct {
	replid string
	offset int64
	db     int
	loc    uint64 // packed location of that operation (0: none applied)
	size   int    // its encoded bytes, counted in liveBytes
}

// SetReplPosition appends the operation that records the replication
// position: replid (the master's, "" for none), offset (the last stream
// byte applied) and db (the database selected at it, 0..NumDBs-1).
func (b *Batch) SetReplPosition(replid string, offset int64, db int) {
	body := binary.AppendUvarint(nil, uint64(len(replid)))
	body = append(body, replid...)
	body = binary.LittleEndian.AppendUint64(body, uint64(offset))
	body = append(body, byte(db))
	b.head(opReplPosition, 0)
	b.bytes(body)
}

// ReplPosition returns the position the last SetReplPosition applied (at
// start-up: as recovered); ok is false when there is none.
func (ks *Keyspace) ReplPosition() (replid string, offset int64, db int, ok bool) {
	p := ks.repl
	return p.replid, p.offset, p.db, p.replid != ""
}

func decodeReplPosition(body []byte) (replPosition, error) {
	id, i, ok := readBytes(body, 0)
	if !ok || len(body)-i != 9 || int(body[i+8]) >= NumDBs {
		return replPosition{}, fmt.Errorf("%w: replication position", errBadOp)
	}
	return replPosition{replid: string(id), offset: int64(binary.LittleEndian.Uint64(body[i:])), db: int(body[i+8])}, nil
}

func (ks *Keyspace) applyReplPosition(o op, loc uint64) error {
	p, err := decodeReplPosition(o.body)
	if err != nil {
		return err
	}
	p.loc, p.size = loc, o.size
	ks.liveBytes += int64(o.size - ks.repl.size)
	ks.repl = p
	return nil
}

// cleanReplPosition copies the live position operation to the head of
// the log if it is in segment segID. Call it with the lock held; false
// means the copy could not be written.
func (ks *Keyspace) cleanReplPosition(segID uint64) bool {
	if ks.repl.loc == 0 || ks.repl.loc>>40 != segID || ks.repl.replid == "" {
		return true
	}
	var b Batch
	b.SetReplPosition(ks.repl.replid, ks.repl.offset, ks.repl.db)
	ks.cleaning = true
	err := ks.Commit(&b)
	ks.cleaning = false
	return err == nil
}

// SetReplPositionTrailer arms the operation SetReplPosition would append
// to ride at the end of the next batch committed (not the cleaner's), so
// a replica's unit of one write is one record with its position instead
// of two. Call it with the lock held inside a transaction group (BeginTxn)
// so the group, not the record, is the unit of atomicity;
// ReplPositionTrailerPending reports whether no commit took it (the unit
// wrote nothing: commit the position itself).
func (ks *Keyspace) SetReplPositionTrailer(replid string, offset int64, db int) {
	var b Batch
	b.SetReplPosition(replid, offset, db)
	ks.trailer = append(ks.trailer[:0], b.buf...)
	ks.trailerN = b.n
	ks.trailerSet = true
}

// ReplPositionTrailerPending reports whether the armed trailer is still
// waiting for a commit, and disarms it.
func (ks *Keyspace) ReplPositionTrailerPending() bool {
	pending := ks.trailerSet
	ks.trailerSet = false
	return pending
}

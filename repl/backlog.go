package repl

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// Backlog is the replication backlog: a ring holding the last Size bytes
// of the command stream, so a replica that lost its link can be sent what
// it missed (+CONTINUE) instead of a whole snapshot. Offsets are Redis's:
// the stream's bytes are numbered from 1, Offset is the number of the last
// byte appended (master_repl_offset), and a PSYNC names the first byte it
// wants. Not safe for concurrent use (Master locks it).
type Backlog struct {
	buf     []byte
	offset  int64 // the last byte appended
	histlen int64 // bytes held, at most len(buf)
}

// DefaultBacklogSize is repl-backlog-size's default: 1 MB.
const DefaultBacklogSize = 1 << 20

// NewBacklog returns an empty backlog of size bytes whose stream has
// reached offset (a restarted master goes on from its stored offset).
func NewBacklog(size int, offset int64) *Backlog {
	return &Backlog{buf: make([]byte, max(size, 1)), offset: offset}
}

// Append adds p to the stream.
func (b *Backlog) Append(p []byte) {
	size := int64(len(b.buf))
	if int64(len(p)) > size {
		b.offset += int64(len(p)) - size
		p = p[int64(len(p))-size:]
	}
	for len(p) > 0 {
		at := b.offset % size // where byte offset+1 goes
		n := copy(b.buf[at:], p)
		p = p[n:]
		b.offset += int64(n)
		b.histlen = min(b.histlen+int64(n), size)
	}
}

// Offset is the number of the last byte of the stream (0 before any).
func (b *Backlog) Offset() int64 { return b.offset }

// FirstByte is the number of the oldest byte held (Offset+1 when empty):
// INFO's repl_backlog_first_byte_offset.
func (b *Backlog) FirstByte() int64 { return b.offset - b.histlen + 1 }

// Histlen is how many bytes the backlog holds (repl_backlog_histlen).
func (b *Backlog) Histlen() int64 { return b.histlen }

// Size is the backlog's capacity in bytes.
func (b *Backlog) Size() int { return len(b.buf) }

// Covers reports whether a PSYNC asking for bytes from psync on can be
// served: psync is a held byte, or the next one (nothing missed).
func (b *Backlog) Covers(psync int64) bool {
	return psync >= b.FirstByte() && psync <= b.offset+1
}

// Copy copies into dst the bytes from number from on, as many as fit and
// are held, and returns how many; 0 when from is not held.
func (b *Backlog) Copy(dst []byte, from int64) int {
	if from < b.FirstByte() || from > b.offset {
		return 0
	}
	size := int64(len(b.buf))
	want := min(int64(len(dst)), b.offset-from+1)
	n := 0
	for int64(n) < want {
		at := (from - 1 + int64(n)) % size
		n += copy(dst[n:want], b.buf[at:])
	}
	return n
}

// Resize changes the capacity (CONFIG SET repl-backlog-size), keeping
// the newest bytes that fit.
func (b *Backlog) Resize(size int) {
	size = max(size, 1)
	keep := min(b.histlen, int64(size))
	held := make([]byte, keep)
	b.Copy(held, b.offset-keep+1)
	nb := &Backlog{buf: make([]byte, size), offset: b.offset - keep}
	nb.Append(held)
	*b = *nb
}

// ReplIDs are a master's replication IDs (Redis 7.0's replid and
// replid2). ID names the history the dataset follows; ID2, when set, the
// history it followed before a promotion, which it shares up to Offset2:
// a replica of the old master may go on with PSYNC ID2 and an offset of at
// most Offset2.
type ReplIDs struct {
	ID      string
	ID2     string // NoReplID when there is none
	Offset2 int64  // -1 when there is no ID2
}

// NoReplID is the all-zero ID Redis shows for an unset replid2.
const NoReplID = "0000000000000000000000000000000000000000"

// NewReplID returns a fresh random replication ID: 40 hex digits.
func NewReplID() string {
	var b [markLen / 2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NewReplIDs is a new history: a fresh ID and no ID2 (a master that
// starts without a stored history, or a full resync's new dataset).
func NewReplIDs() ReplIDs { return ReplIDs{ID: NewReplID(), ID2: NoReplID, Offset2: -1} }

// Shift is what a replica promoted to master does: the old history
// becomes ID2, valid to offset+1 (the first byte a replica that had
// everything up to offset would ask for), and a new ID starts.
func (r *ReplIDs) Shift(offset int64) {
	r.ID2, r.Offset2 = r.ID, offset+1
	r.ID = NewReplID()
}

// ClearID2 forgets the previous history (after a full resync from a
// new master).
func (r *ReplIDs) ClearID2() { r.ID2, r.Offset2 = NoReplID, -1 }

// DecidePSYNC is Redis 7.0's choice for PSYNC replid psync: a partial
// resync (+CONTINUE) when replid is ids.ID, or ids.ID2 with psync at most
// ids.Offset2, and the backlog covers psync; else a full resync, with the
// reason as Redis logs it. "?" asks for a full resync.
func DecidePSYNC(ids ReplIDs, b *Backlog, replid string, psync int64) (partial bool, reason string) {
	switch {
	case replid == "?":
		return false, "full resync requested by replica"
	case replid != ids.ID && replid != ids.ID2:
		return false, "replication ID mismatch (replica asked for '" + replid + "', my replication IDs are '" + ids.ID + "' and '" + ids.ID2 + "')"
	case replid != ids.ID && psync > ids.Offset2:
		return false, "requested offset for second ID was " + strconv.FormatInt(psync, 10) + ", but I can reply up to " + strconv.FormatInt(ids.Offset2, 10)
	case b == nil || !b.Covers(psync):
		return false, "lack of backlog (replica request was: " + strconv.FormatInt(psync, 10) + ")"
	}
	return true, ""
}

// Feed encodes writes into the command stream: each write a RESP array,
// preceded by SELECT when its database is not the stream's current one.
// The zero Feed emits SELECT before its first write.
type Feed struct {
	db    int
	known bool
}

// Append appends the stream bytes of argv run in database db to dst.
func (f *Feed) Append(dst []byte, db int, argv ...[]byte) []byte {
	if !f.known || f.db != db {
		dst = appendCommand(dst, []byte("SELECT"), strconv.AppendInt(nil, int64(db), 10))
		f.db, f.known = db, true
	}
	return appendCommand(dst, argv...)
}

// DB is the stream's current database and whether one is selected.
func (f *Feed) DB() (int, bool) { return f.db, f.known }

// Relayed notes that a relayed stream (FeedRaw) left database db
// selected: DB reports it (a full resync's repl-stream-db), and the next
// write of this master's own still selects.
func (f *Feed) Relayed(db int) { f.db, f.known = db, false }

// Reset makes the next write emit SELECT (a full resync starts, and its
// replica's database is not the stream's).
func (f *Feed) Reset() { f.known = false }

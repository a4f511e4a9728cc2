package keyspace

import "errors"

// NumDBs is the number of logical databases (SELECT 0..15).
const NumDBs = 16

// Errors returned by keyspace operations. The resp layer maps each to its
// Redis reply in one place; their texts are already Redis's reply texts.
var (
	// ErrWrongType: the key holds a value of another type.
	ErrWrongType = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	// ErrNoSpace: the arena could not grow (disk full). From that failed
	// write on, every write is refused with it (FLUSHALL excepted: it frees
	// space) until the log has room again (Keyspace.CheckWritable); reads
	// keep working. The text is redis-server's for a failed AOF write.
	ErrNoSpace = errors.New("MISCONF Errors writing to the AOF file: No space left on device")
	// ErrTooLarge: one record would be larger than the arena accepts.
	ErrTooLarge = errors.New("ERR value is too large for the arena")
)

// Type names as TYPE replies them.
const (
	TypeNone   = "none"
	TypeString = "string"
)

// Watcher is one client's WATCH state. The keyspace marks it dirty when a
// watched key is written, deleted or expires, or when FLUSHDB, FLUSHALL or
// SWAPDB replaces its database while the key holds a value before or after
// (a key missing on both sides did not change, as in Redis).
type Watcher struct {
	ks    *Keyspace
	dirty bool
	keys  []watchedKey
}

type watchedKey struct {
	db       int
	key      string
	expireAt int64 // the key's expiry when watched (0 = none or missing)
}

// Dirty reports whether any watched key changed since it was watched,
// including a key that has expired since (semantics: redis.io WATCH). Call
// with the keyspace lock held.
func (w *Watcher) Dirty() bool {
	if w.dirty {
		return true
	}
	if w.ks == nil {
		return false
	}
	now := w.ks.NowMs()
	for _, k := range w.keys {
		if expiredAt(k.expireAt, now) {
			return true
		}
	}
	return false
}

// Watching reports whether the watcher holds any key.
func (w *Watcher) Watching() bool { return len(w.keys) > 0 }

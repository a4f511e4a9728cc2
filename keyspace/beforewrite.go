package keyspace

// BeforeWrite sets fn, called under the lock before a batch is written
// and applied, once per operation that changes a key (db, key) and with
// key nil for one that changes a whole database (FLUSHDB: its database,
// SWAPDB: both, FLUSHALL: db AllDBs), while the key still holds its state
// before the batch. The cleaner's rewrites call it too: they change no
// value, but they may move a key between the key index and a DRAM entry,
// or into a slot a KeyCursor has passed, and the hook is how a cursor's
// owner learns of a key before it moves (cursor.go). A replication
// snapshot taken while writes go on uses it to copy a key's old state
// before it changes (the server's copy-on-write). fn must not write; nil
// removes it.
func (ks *Keyspace) BeforeWrite(fn func(db int, key []byte)) { ks.beforeWrite = fn }

// callBeforeWrite runs the BeforeWrite hook over the operations of p.
func (ks *Keyspace) callBeforeWrite(p []byte) {
	fn := ks.beforeWrite
	if fn == nil {
		return
	}
	for len(p) > 0 {
		o, err := decodeOp(p)
		if err != nil {
			return // Commit reports it
		}
		switch o.kind {
		case opFunctions, opReplPosition, opClock:
		case opFlushAll:
			fn(AllDBs, nil)
		case opFlushDB:
			fn(o.db, nil)
		case opSwapDB:
			fn(o.db, nil)
			fn(o.db2, nil)
		default:
			fn(o.db, o.key)
		}
		p = p[o.size:]
	}
}

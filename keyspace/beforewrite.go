package keyspace

// BeforeWrite sets fn, called under the lock before a batch is written
// and applied, once per operation that changes a key (db, key) and with
// key nil for one that changes a whole database (FLUSHDB, FLUSHALL:
// every database, SWAPDB: both), while the key still holds its state
// before the batch. The cleaner's rewrites (same data) do not call it.
// A replication snapshot taken while writes go on uses it to copy a key's
// old state before it changes (the server's copy-on-write). fn must not
// write; nil removes it.
func (ks *Keyspace) BeforeWrite(fn func(db int, key []byte)) { ks.beforeWrite = fn }

// callBeforeWrite runs the BeforeWrite hook over the operations of p.
func (ks *Keyspace) callBeforeWrite(p []byte) {
	fn := ks.beforeWrite
	if fn == nil || ks.cleaning {
		return
	}
	for len(p) > 0 {
		o, err := decodeOp(p)
		if err != nil {
			return // Commit reports it
		}
		switch o.kind {
		case opFunctions, opReplPosition:
		case opFlushAll:
			for db := range NumDBs {
				fn(db, nil)
			}
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

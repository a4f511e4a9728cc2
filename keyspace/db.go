package keyspace

// entry is one key of a database. It holds no pointer into the arena: loc
// packs the segment id (high 24 bits) and the offset of the key's live
// operation in that segment (low 40 bits), so remapping or restarting never
// leaves a dangling Go pointer.
type entry struct {
	key      string
	loc      uint64
	expireAt int64  // Unix ms, 0 = no expiry
	size     uint32 // encoded bytes of the live operation (live-bytes accounting)
	kix      bool   // a transient entry for a key of the persistent index (kix.go)
	lru      lruField
	obj      *object // a collection; nil for a string (whose value is at loc)
}

// db is one logical database: a dense table of entries plus a map from key
// to position. The dense table gives O(1) RANDOMKEY and a SCAN cursor that
// survives deletions (see Keyspace.Scan).
type db struct {
	index    map[string]int32
	entries  []entry
	volatile int          // entries with an expiry
	walkers  []*KeyCursor // cursors walking entries (cursor.go): told when remove moves one behind them
}

func newDB() *db { return &db{index: map[string]int32{}} }

func (d *db) insert(e entry) {
	e.lru = newLRU()
	d.index[e.key] = int32(len(d.entries))
	d.entries = append(d.entries, e)
}

// remove deletes key by moving the last entry into its slot.
func (d *db) remove(key string) (entry, bool) {
	i, ok := d.index[key]
	if !ok {
		return entry{}, false
	}
	e := d.entries[i]
	last := len(d.entries) - 1
	if int(i) != last {
		d.entries[i] = d.entries[last]
		d.index[d.entries[i].key] = i
		if len(d.walkers) > 0 {
			d.noteMoved(int(i), last)
		}
	}
	d.entries[last] = entry{}
	d.entries = d.entries[:last]
	delete(d.index, key)
	if e.expireAt != 0 {
		d.volatile--
	}
	return e, true
}

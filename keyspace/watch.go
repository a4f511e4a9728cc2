package keyspace

type watchKey struct {
	db  int
	key string
}

// Watch adds (db, key) to w (semantics: redis.io WATCH).
func (ks *Keyspace) Watch(w *Watcher, db int, key []byte) {
	k := watchKey{db, string(key)}
	for _, wk := range w.keys {
		if wk.db == db && wk.key == k.key {
			return
		}
	}
	w.ks = ks
	exp, _ := ks.ExpireAt(db, key)
	w.keys = append(w.keys, watchedKey{db: db, key: k.key, expireAt: exp})
	ks.watched[k] = append(ks.watched[k], w)
}

// Unwatch forgets every key of w and clears its dirty flag.
func (ks *Keyspace) Unwatch(w *Watcher) {
	for _, wk := range w.keys {
		k := watchKey{wk.db, wk.key}
		list := ks.watched[k]
		for i, x := range list {
			if x == w {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(ks.watched, k)
		} else {
			ks.watched[k] = list
		}
	}
	w.keys, w.dirty = w.keys[:0], false
}

// touch marks the watchers of (db, key) dirty.
func (ks *Keyspace) touch(db int, key []byte) {
	if ks.touchedFn != nil && !ks.cleaning {
		ks.touchedFn(db, key)
	}
	if len(ks.watched) == 0 || ks.cleaning {
		return
	}
	for _, w := range ks.watched[watchKey{db, string(key)}] {
		w.dirty = true
	}
}

// touchDB marks every watcher of a key in db dirty (FLUSHDB, SWAPDB).
func (ks *Keyspace) touchDB(db int) {
	if ks.touchedFn != nil && !ks.cleaning {
		ks.touchedFn(db, nil)
	}
	for k, list := range ks.watched {
		if k.db == db {
			for _, w := range list {
				w.dirty = true
			}
		}
	}
}

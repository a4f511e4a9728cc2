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

// touch marks the watchers of (db, key) dirty and calls the OnKeyTouched
// hooks.
func (ks *Keyspace) touch(db int, key []byte) {
	if ks.touchedFn != nil && !ks.cleaning {
		ks.touchedFn(db, key)
	}
	ks.touchWatchers(db, key)
}

// touchWatchers marks the watchers of (db, key) dirty.
func (ks *Keyspace) touchWatchers(db int, key []byte) {
	if len(ks.watched) == 0 || ks.cleaning {
		return
	}
	for _, w := range ks.watched[watchKey{db, string(key)}] {
		w.dirty = true
	}
}

// touchDB marks dirty the watchers of keys in database dbi whose value
// changes when the database's contents are replaced by replacement (nil:
// emptied by FLUSHDB or FLUSHALL; else the other database of a SWAPDB).
// Call it before the replacement. As in Redis, a key changes only if it
// holds a live value before or after: WATCH on a missing key, then
// FLUSHALL, then EXEC runs the transaction (missing stayed missing), and a
// key expired on both sides stays unchanged too.
func (ks *Keyspace) touchDB(dbi int, replacement *db) {
	if ks.touchedFn != nil && !ks.cleaning {
		ks.touchedFn(dbi, nil)
	}
	if len(ks.watched) == 0 {
		return
	}
	now := ks.NowMs()
	emptied := ks.dbs[dbi]
	for k, list := range ks.watched {
		indexed := ks.kixHolds(dbi, []byte(k.key), now) // an indexed key of the database emptied
		if k.db != dbi || !emptied.holds(k.key, now) && !indexed && (replacement == nil || !replacement.holds(k.key, now)) {
			continue
		}
		for _, w := range list {
			w.dirty = true
		}
	}
}

// holds reports whether key has a value in d that has not expired at now
// (milliseconds).
func (d *db) holds(key string, now int64) bool {
	i, ok := d.index[key]
	return ok && !expiredAt(d.entries[i].expireAt, now)
}

package keyspace

// Hooks for keyspace notifications (package server publishes them). Each
// runs under the keyspace lock, at the moment the keyspace itself makes
// the change a command cannot see: a key created by an applied operation
// ("new"), a key removed because its time had come ("expired", lazily or
// by the background cycle) and a read that found no key ("keymiss").
// Recovery's replay and the cleaner's copies call none of them.

// eventHooks are the callbacks set by OnKeyEvents (nil: none).
type eventHooks struct {
	created func(db int, key []byte)
	expired func(db int, key string)
	missed  func(db int, key []byte)
}

// OnKeyEvents sets the notification hooks: created for a key an applied
// operation adds to a database that did not hold it, expired for a key
// removed at its expiry (during a command, by the background cycle or by
// the cleaner), missed for a key a counted read looked
// up and did not find (see CountLookups). Call it before serving; the
// hooks run with the keyspace lock held and must not take it.
func (ks *Keyspace) OnKeyEvents(created func(db int, key []byte), expired func(db int, key string), missed func(db int, key []byte)) {
	ks.events = eventHooks{created: created, expired: expired, missed: missed}
}

// keyCreated reports a key added by a live operation.
func (ks *Keyspace) keyCreated(db int, key []byte) {
	if ks.events.created != nil && !ks.replaying && !ks.cleaning {
		ks.events.created(db, key)
	}
}

// keyExpired reports a key removed at its expiry.
func (ks *Keyspace) keyExpired(db int, key string) {
	if ks.events.expired != nil && !ks.replaying {
		ks.events.expired(db, key)
	}
}

// keyMissed reports a counted lookup that found nothing.
func (ks *Keyspace) keyMissed(db int, key []byte) {
	if ks.events.missed != nil && ks.countLookups {
		ks.events.missed(db, key)
	}
}

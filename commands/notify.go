package commands

// Keyspace notifications: each write handler calls c.Notify(class, event,
// key) once per event, after its batch is committed, in the order Redis
// 7.0's handler calls notifyKeyspaceEvent (server/notify.go publishes
// them). The helpers below cover the shapes several families share.

// notifyEach sends event for every step-th key of keys (MSET's keys,
// DEL's keys that existed...).
func notifyEach(c *Client, class int, event string, keys [][]byte, step int) {
	for i := 0; i < len(keys); i += step {
		c.Notify(class, event, keys[i])
	}
}

// notifyChanged sends event for key, then "del" if the write emptied it
// (a collection whose last element went): Redis's pattern for HDEL, SREM,
// LPOP, ZREM and their relatives.
func notifyChanged(c *Client, class int, event string, key []byte) {
	c.Notify(class, event, key)
	if !c.KS.Exists(c.DB, key) {
		c.Notify(notifyGeneric, "del", key)
	}
}

// pick is the event named a if cond holds, else b.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// geoStoreEvent is the event of GEORADIUS ... STORE and GEOSEARCHSTORE.
func geoStoreEvent(flags int) string {
	return pick(flags&geoSearchCmd != 0, "geosearchstore", "georadiusstore")
}

// bitfieldWrote reports whether a SET or INCRBY of a BITFIELD ran (one
// that OVERFLOW FAIL stopped replies nil): Redis then sends "setbit".
func bitfieldWrote(ops []bitfieldOp, res []bitfieldResult) bool {
	for i, op := range ops {
		if op.kind != bitfieldGet && !res[i].nil {
			return true
		}
	}
	return false
}

// appendNewConsumer appends key to keys if group has no consumer of that
// name yet: the write about to be committed creates it, and Redis sends
// "xgroup-createconsumer" (XREADGROUP, XCLAIM, XAUTOCLAIM).
func appendNewConsumer(c *Client, keys [][]byte, key, group, consumer []byte) [][]byte {
	if _, ok := c.KS.StreamConsumer(c.DB, key, group, consumer); !ok {
		keys = append(keys, key)
	}
	return keys
}

// notifyStore sends a *STORE command's event: event for dst if the result
// was stored, "del" if the empty result deleted an existing dst (existed),
// nothing otherwise.
func notifyStore(c *Client, class int, event string, dst []byte, stored, existed bool) {
	switch {
	case stored:
		if existed {
			c.Notify(notifyNew, "overwrite", dst) // Redis overwrote dst in place
		}
		c.Notify(class, event, dst)
	case existed:
		c.Notify(notifyGeneric, "del", dst)
	}
}

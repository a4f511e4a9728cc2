package keyspace

// Lazy free accounting (INFO lazyfreed_objects, lazyfree_pending_objects).
//
// Redis frees a deleted value in its background thread when the delete
// came through an asynchronous path (UNLINK, FLUSHDB/FLUSHALL ASYNC, the
// lazyfree-lazy-* settings) and the value's free effort
// (lazyfreeGetFreeEffort, lazyfree.c) is above LAZYFREE_THRESHOLD; INFO
// counts those objects. Persimmon never frees a value in the command: a
// removed key's DRAM object is left to the Go collector, which reclaims it
// concurrently, and its log bytes to the segment cleaner. So every removal
// is deferred, and the counter keeps Redis's meaning by counting the
// removals Redis would have handed to its thread: the same paths, the same
// effort rule. The hand-off is complete when the command returns (there
// is no queue of objects waiting for a thread), so nothing is ever pending.

// LazyFreeThreshold is Redis's LAZYFREE_THRESHOLD: a value whose free
// effort is above it is freed in the background by an asynchronous delete.
const LazyFreeThreshold = 64

// quicklistNodeBytes is the size of a quicklist node under Redis's default
// list-max-listpack-size (-2: 8 KiB), for the estimate of a list's nodes.
const quicklistNodeBytes = 8192

// FreeEffort returns Redis 7.0's free effort of the value at key
// (lazyfreeGetFreeEffort): the elements of a hashtable set or hash and of a
// skiplist sorted set, a list's quicklist nodes (estimated from its bytes,
// as Redis's 8 KiB nodes would hold them), a stream's nodes plus, per
// consumer group, one plus the first group's pending entries; 1 for
// anything else: a key the caller knows exists that has no DRAM entry is an
// indexed string. Call with the lock held; it neither touches the key nor
// counts a lookup.
func (ks *Keyspace) FreeEffort(db int, key []byte) int64 {
	i, ok := ks.dbs[db].index[string(key)]
	if !ok {
		return 1
	}
	e := &ks.dbs[db].entries[i]
	if e.obj == nil {
		return 1
	}
	return freeEffort(e.obj.coll)
}

func freeEffort(c collection) int64 {
	switch o := c.(type) {
	case *listObj:
		return max(1, (o.bytes+quicklistNodeBytes-1)/quicklistNodeBytes)
	case *setObj:
		if o.hashtable {
			return int64(len(o.members))
		}
	case *hashObj:
		if o.big {
			return int64(len(o.fields))
		}
	case *ZSet:
		if o.grown {
			return int64(o.zsl.n)
		}
	case *streamObj:
		var n int64
		for _, nd := range o.nodes {
			if nd.valid > 0 {
				n++
			}
		}
		if len(o.groups) > 0 {
			n += int64(len(o.groups)) * int64(1+len(o.groups[0].pel))
		}
		return n
	}
	return 1
}

// CountLazyFreed adds n objects to INFO lazyfreed_objects: the caller
// removed them through an asynchronous path (see FreeEffort).
func (ks *Keyspace) CountLazyFreed(n int64) { ks.lazyFreed.Add(n) }

// SetLazyExpire is lazyfree-lazy-expire: an expired key whose free effort is
// above LazyFreeThreshold counts as lazily freed when it is removed.
func (ks *Keyspace) SetLazyExpire(on bool) { ks.lazyExpire.Store(on) }

package keyspace

// registerZSetOps registers the zset operations (being written).
func registerZSetOps(m map[byte]objectApplier) {}

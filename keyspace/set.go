package keyspace

// registerSetOps registers the set operations (being written).
func registerSetOps(m map[byte]objectApplier) {}

package keyspace

// registerListOps registers the list operations (being written).
func registerListOps(m map[byte]objectApplier) {}

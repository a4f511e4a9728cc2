package keyspace

// Test hooks for the KeyCursor model test (cursor_test.go).

// CheckpointIndex checkpoints the key index now (under the lock): its
// staged writes go into the table.
func (ks *Keyspace) CheckpointIndex() error { return ks.kixCheckpoint() }

// IndexGeneration is the key index table's generation (-1 without one).
func (ks *Keyspace) IndexGeneration() int {
	if !ks.kixOn() {
		return -1
	}
	return ks.kix.ix.Generation()
}

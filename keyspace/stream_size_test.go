package keyspace

import (
	"testing"
	"unsafe"
)

// TestStreamEntSize pins the DRAM a stream entry costs in the index: 32
// bytes (ID, location, length, node number with the tombstone bit).
func TestStreamEntSize(t *testing.T) {
	if n := unsafe.Sizeof(streamEnt{}); n != 32 {
		t.Fatalf("streamEnt %d bytes; want 32", n)
	}
}

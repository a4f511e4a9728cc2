package keyspace

import (
	"testing"
	"unsafe"
)

// TestZSetNodeSizes pins the DRAM a sorted-set element costs: a node (with
// its index tag) is 32
// bytes and a small set's ordered-array entry 16.
func TestZSetNodeSizes(t *testing.T) {
	if n, e := unsafe.Sizeof(zslNode{}), unsafe.Sizeof(zslEntry{}); n != 32 || e != 16 {
		t.Fatalf("zslNode %d bytes, zslEntry %d bytes; want 32 and 16", n, e)
	}
}

package keyspace

import (
	"testing"
	"unsafe"
)

// TestZSetNodeSizes pins the DRAM a sorted-set element costs: a node (its
// member location, score, level-0 links and index tag) is 32 bytes, a
// level above level 0 (a third of a level a node on average) 24 and a
// small set's ordered-array entry 16.
func TestZSetNodeSizes(t *testing.T) {
	n, l, e := unsafe.Sizeof(zslNode{}), unsafe.Sizeof(zslLevel{}), unsafe.Sizeof(zslEntry{})
	if n != 32 || l != 24 || e != 16 {
		t.Fatalf("zslNode %d bytes, zslLevel %d, zslEntry %d; want 32, 24 and 16", n, l, e)
	}
	if zslChunk*n != 4096 {
		t.Fatalf("a node chunk is %d bytes, want 4096 (a size class of its own)", zslChunk*n)
	}
}

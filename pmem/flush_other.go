//go:build !amd64

package pmem

// flushLines is nil: this architecture has no write-back loop here, so
// Flush does nothing and ModePmem's Persist uses msync.
var flushLines func([]byte) int

// Drain does nothing on this architecture: Flush does nothing either, so
// there is nothing to wait for. ModePmem's Persist uses msync instead.
func Drain() { traceFence() }

// FlushInstruction returns "none": no cache-line write-back instruction is
// used on this architecture. Flush is a no-op and ModePmem's Persist falls
// back to msync semantics.
func FlushInstruction() string { return "none" }

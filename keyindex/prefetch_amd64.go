package keyindex

// prefetch asks the processor to bring the cache line holding address p
// into its cache, without waiting for it (PREFETCHT0: a hint, which never
// faults, so p may be any address).
//
//go:noescape
func prefetch(p uintptr)

// prefetching: prefetch is a real prefetch here (Prefetch does its work).
const prefetching = true

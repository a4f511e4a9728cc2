package pmem

// CacheLineSize is the unit, in bytes, that Flush writes back: every
// supported CPU writes back (at least) 64-byte lines. Flush rounds ranges
// out to it.
const CacheLineSize = 64

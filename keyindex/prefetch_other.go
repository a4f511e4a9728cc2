//go:build !amd64

package keyindex

// prefetch is a no-op off amd64 (see prefetch_amd64.go).
func prefetch(p uintptr) {}

// prefetching: Prefetch has nothing to do.
const prefetching = false

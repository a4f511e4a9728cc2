//go:build !(pmemtrace && unix)

package pmem

// Without the pmemtrace build tag the trace hooks are empty and inlined
// away: production builds pay nothing for the recorder (trace.go).

func traceFence() {}

// tracing reports whether this build records syncs (trace.go): a sync that
// bypasses Msync would escape the recorder.
const tracing = false

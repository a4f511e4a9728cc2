//go:build unix && !pmemtrace

package pmem

// The Region hooks of the recorder (trace.go), empty and inlined away
// without the pmemtrace build tag.

func traceMap(*Region)   {}
func traceUnmap(*Region) {}

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
)

// startPprof serves Go's profiles (net/http/pprof: /debug/pprof/heap and
// the others) on addr, for benchmarks that explain where memory goes
// (scripts/bench-restart.sh HEAPPROFILE=1). It is set only by the
// environment variable PERSIMMON_PPROF, so no configuration opens it; ""
// starts nothing. Bind it to a loopback address: the profiles are not
// authenticated.
func startPprof(addr string, stderr io.Writer) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("PERSIMMON_PPROF: %w", err)
	}
	fmt.Fprintf(stderr, "pprof: serving /debug/pprof/ on %s (PERSIMMON_PPROF)\n", ln.Addr())
	go http.Serve(ln, nil) //nolint:errcheck // ends with the process
	return nil
}

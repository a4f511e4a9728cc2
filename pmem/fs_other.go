//go:build !linux

package pmem

import (
	"fmt"
	"runtime"
)

// Filesystem names the filesystem holding dir. Only Linux is supported
// (from statfs f_type); elsewhere it returns an error.
func Filesystem(dir string) (string, error) {
	return "", fmt.Errorf("pmem: filesystem of %s: not supported on %s", dir, runtime.GOOS)
}

//go:build unix

package pmem

import (
	"os"
)

// ProbeDAX reports whether files in dir can be mapped with MAP_SYNC (a DAX
// filesystem), by mapping a one-page scratch file that it removes again.
// Any error means false.
func ProbeDAX(dir string) bool {
	f, err := os.CreateTemp(dir, ".dax-probe-*")
	if err != nil {
		return false
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	r, err := Map(path, int64(os.Getpagesize()), ModeNone)
	if err != nil {
		return false
	}
	defer r.Close()
	return r.DAX()
}

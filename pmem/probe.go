//go:build unix

package pmem

import (
	"os"
	"time"
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

// ProbeSync measures what one msync(MS_SYNC) of a freshly dirtied 4 KiB
// page costs on dir's filesystem: n rounds (n >= 1) on a scratch file that
// it removes again. It returns the mean and the largest of the n (with a
// small n, the largest stands for the tail), and an error if the file
// could not be made or synced.
func ProbeSync(dir string, n int) (mean, worst time.Duration, err error) {
	f, err := os.CreateTemp(dir, ".sync-probe-*")
	if err != nil {
		return 0, 0, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	ps := int64(os.Getpagesize())
	r, err := Map(path, 64*ps, ModeMsync)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	buf := r.Bytes()
	var total time.Duration
	for i := range max(n, 1) {
		off := int64(i%64) * ps
		buf[off] = byte(i + 1)
		start := time.Now()
		if err := r.Msync(off, 1); err != nil {
			return 0, 0, err
		}
		d := time.Since(start)
		total += d
		worst = max(worst, d)
	}
	return total / time.Duration(max(n, 1)), worst, nil
}

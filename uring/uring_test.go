//go:build linux

package uring

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDatasyncOfMappedRange submits range syncs of a file dirtied through
// a shared mapping and reaps them both ways (Peek after the eventfd
// fired, and Wait), checking user data, result and that the eventfd
// signals.
func TestDatasyncOfMappedRange(t *testing.T) {
	r, err := New(4)
	if err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	defer r.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 16); err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	for i := uint64(1); i <= 3; i++ {
		m[i*4096] = byte(i)
		if err := r.SubmitDatasync(int(f.Fd()), int64(i*4096), 4096, i); err != nil {
			t.Fatal(err)
		}
		var c Completion
		if i%2 == 1 {
			c, err = r.Wait()
			if err != nil {
				t.Fatal(err)
			}
			r.ClearEvent() // the completion signalled it
		} else {
			// The eventfd becomes readable once the completion is posted.
			pfd := []unix.PollFd{{Fd: int32(r.EventFd()), Events: unix.POLLIN}}
			if _, err := unix.Poll(pfd, 10000); err != nil || pfd[0].Revents&unix.POLLIN == 0 {
				t.Fatalf("eventfd not readable: %v %v", err, pfd[0].Revents)
			}
			r.ClearEvent()
			var ok bool
			if c, ok = r.Peek(); !ok {
				t.Fatal("eventfd signalled but no completion")
			}
		}
		if c.User != i || c.Err() != nil {
			t.Fatalf("completion %+v, want user %d and success", c, i)
		}
		if _, ok := r.Peek(); ok {
			t.Fatal("a second completion for one request")
		}
	}
	// A bad descriptor fails in the completion, not silently.
	if err := r.SubmitDatasync(1<<20, 0, 0, 9); err == nil {
		c, err := r.Wait()
		if err != nil || c.User != 9 || c.Err() == nil {
			t.Fatalf("sync of a bad descriptor: %+v %v", c, err)
		}
	}
}

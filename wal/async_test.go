//go:build linux

package wal

import (
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"golang.org/x/sys/unix"
)

// TestAsyncGroupCommit: an asynchronous sync makes exactly what was
// appended before it durable, only once its completion is reaped, and the
// records appended meanwhile wait for the next one.
func TestAsyncGroupCommit(t *testing.T) {
	_, w := openWAL(t, t.TempDir(), pmem.ModeMsync)
	if err := w.EnableAsync(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	efd := w.AsyncEventFd()
	for round := 0; round < 5; round++ {
		var last uint64
		for i := 0; i < 10; i++ {
			loc, err := w.Append(TypeBatch, 0, []byte("payload"))
			if err != nil {
				t.Fatal(err)
			}
			last = loc.LSN
		}
		st, err := w.StartAsync()
		if err != nil || st != AsyncPending {
			t.Fatalf("StartAsync = %v, %v; want pending", st, err)
		}
		if d := w.DurableLSN(); d >= last {
			t.Fatalf("durable %d before the completion was reaped, last %d", d, last)
		}
		// Appended during the sync: not covered by it.
		loc, err := w.Append(TypeBatch, 0, []byte("late"))
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := w.StartAsync(); st != AsyncPending {
			t.Fatalf("second StartAsync while in flight = %v, want pending", st)
		}
		for {
			pfd := []unix.PollFd{{Fd: int32(efd), Events: unix.POLLIN}}
			if _, err := unix.Poll(pfd, 10000); err != nil && err != unix.EINTR {
				t.Fatal(err)
			}
			idle, err := w.ReapAsync()
			if err != nil {
				t.Fatal(err)
			}
			if idle {
				break
			}
		}
		if d := w.DurableLSN(); d != last {
			t.Fatalf("durable %d after the sync, want %d (the late record %d is not covered)", d, last, loc.LSN)
		}
		// A synchronous waiter reaps an async sync itself.
		if st, err := w.StartAsync(); err != nil || st != AsyncPending {
			t.Fatalf("StartAsync for the late record = %v, %v", st, err)
		}
		done := make(chan error)
		go func() { done <- w.WaitDurable(loc.LSN) }()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if w.DurableLSN() < loc.LSN || w.AsyncInFlight() {
			t.Fatalf("after WaitDurable: durable %d want %d, in flight %v", w.DurableLSN(), loc.LSN, w.AsyncInFlight())
		}
		if idle, err := w.ReapAsync(); !idle || err != nil {
			t.Fatalf("ReapAsync after a waiter reaped: %v %v", idle, err)
		}
	}
	// Nothing appended: done at once.
	if st, err := w.StartAsync(); err != nil || st != AsyncDone {
		t.Fatalf("StartAsync with nothing to sync = %v, %v", st, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAsyncUnavailableOutsideMsync: pmem and none segments are not synced
// through the ring (their persist is not an msync).
func TestAsyncUnavailableOutsideMsync(t *testing.T) {
	_, w := openWAL(t, t.TempDir(), pmem.ModeNone)
	if err := w.EnableAsync(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	if _, err := w.Append(TypeBatch, 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, err := w.StartAsync(); err != nil || st != AsyncUnavailable {
		t.Fatalf("StartAsync in none mode = %v, %v; want unavailable", st, err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
}

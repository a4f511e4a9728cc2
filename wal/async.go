package wal

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/uring"
)

// Asynchronous group commit (msync mode, on the server's event loop).
//
// StartAsync does what a WaitDurable leader does — capture the active
// segment's tail and the last LSN, persist everything up to them — but
// submits the persist as an io_uring fdatasync of the range (package
// uring; it writes back the pages stores dirtied, as msync does) and
// returns at once; the group commit stays the WAL's leader until the
// completion is reaped. ReapAsync reaps it without blocking (the loop
// calls it when AsyncEventFd is readable) and publishes the durable LSN as
// persistPending would. Any other caller that needs durability meanwhile
// (WaitDurable, Sync, Barrier, Close: a goroutine of the keyspace, or the
// loop itself) does not wait for the loop to reap: it waits for the
// completion itself (reapWait), so no caller depends on the loop running.
//
// Invariants: at most one group commit leads at a time, async or not, so
// durable only moves forward and only past records a completed persist
// covered; async.mu is held from the moment StartAsync takes the lead
// until its request is in flight (or the lead is given back), and by
// every reaper, so a reaper that takes it sees either the request in
// flight or the lead gone.

// asyncSync is the state of the asynchronous group commit.
type asyncSync struct {
	mu       sync.Mutex
	ring     *uring.Ring // nil: disabled (never enabled, or closed)
	inflight bool
	seg      *arena.Segment
	tail     int64
	last     uint64
	start    time.Time
	gen      uint64 // user data of the request in flight
}

// AsyncState is what StartAsync did.
type AsyncState int

const (
	// AsyncUnavailable: no asynchronous sync was started (none enabled, the
	// segment cannot be synced that way, or a synchronous leader is
	// persisting now); use WaitDurable.
	AsyncUnavailable AsyncState = iota
	// AsyncDone: every record appended before the call is durable now.
	AsyncDone
	// AsyncPending: a sync is in flight (this call's or an earlier one);
	// AsyncEventFd becomes readable when it completes.
	AsyncPending
)

// EnableAsync sets up the io_uring ring StartAsync submits to. It fails
// where io_uring is unavailable; WaitDurable is then the only way.
func (w *WAL) EnableAsync() error {
	r, err := uring.New(4)
	if err != nil {
		return err
	}
	w.async.mu.Lock()
	defer w.async.mu.Unlock()
	if w.async.ring != nil {
		r.Close()
		return errors.New("wal: asynchronous sync already enabled")
	}
	w.async.ring = r
	return nil
}

// AsyncEventFd is the eventfd that becomes readable when an asynchronous
// sync completes (-1 when none is enabled). Reading it is ReapAsync's job.
func (w *WAL) AsyncEventFd() int {
	w.async.mu.Lock()
	defer w.async.mu.Unlock()
	if w.async.ring == nil {
		return -1
	}
	return w.async.ring.EventFd()
}

// StartAsync starts a group commit of everything appended so far without
// waiting for it (see AsyncState).
func (w *WAL) StartAsync() (AsyncState, error) {
	a := &w.async
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ring == nil {
		return AsyncUnavailable, nil
	}
	if a.inflight {
		return AsyncPending, nil
	}
	w.syncMu.Lock()
	if errp := w.failed.Load(); errp != nil {
		w.syncMu.Unlock()
		return AsyncUnavailable, *errp
	}
	if w.leading {
		w.syncMu.Unlock()
		return AsyncUnavailable, nil
	}
	w.leading, w.asyncLead = true, true
	w.syncMu.Unlock()

	w.mu.Lock()
	seg, tail := w.arena.Active()
	last := w.lastLSN.Load()
	from := w.flushedIn(seg)
	w.mu.Unlock()
	if seg == nil || tail <= from {
		w.publish(seg, tail, last)
		w.giveLead()
		return AsyncDone, nil
	}
	fd, ok := seg.SyncFd()
	n := tail - from
	if !ok || n > 1<<31 {
		w.giveLead()
		return AsyncUnavailable, nil
	}
	a.gen++
	a.seg, a.tail, a.last, a.start = seg, tail, last, time.Now()
	if err := a.ring.SubmitDatasync(fd, from, uint32(n), a.gen); err != nil {
		// The ring refused the request (ENOMEM, say): persist inline,
		// as a leader would, and stop using the ring.
		a.ring.Close()
		a.ring = nil
		err := seg.Persist(from, n)
		w.syncs.add(time.Since(a.start), last-w.durable.Load())
		if err != nil {
			err = w.failStop(fmt.Errorf("wal: persisting %s [%d, %d): %w", seg.Path(), from, tail, err))
		} else {
			w.publish(seg, tail, last)
		}
		w.giveLead()
		if err != nil {
			return AsyncUnavailable, err
		}
		return AsyncDone, nil
	}
	a.inflight = true
	return AsyncPending, nil
}

// AsyncInFlight reports whether an asynchronous sync is in flight.
func (w *WAL) AsyncInFlight() bool {
	w.async.mu.Lock()
	defer w.async.mu.Unlock()
	return w.async.inflight
}

// ReapAsync clears AsyncEventFd and finishes the asynchronous sync if its
// completion is posted, without blocking (but for async.mu, which a
// reapWait holds for the rest of a sync). It reports whether no sync is
// in flight any more, and the sync's error (fail-stop, as for WaitDurable).
func (w *WAL) ReapAsync() (idle bool, err error) {
	a := &w.async
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ring == nil {
		return true, nil
	}
	// Cleared first, so a completion posted after the Peek signals again;
	// cleared also when a reapWait took the completion, which left the
	// signal behind (level-triggered: it would fire for ever).
	a.ring.ClearEvent()
	if !a.inflight {
		return true, nil
	}
	c, ok := a.ring.Peek()
	if !ok {
		return false, nil
	}
	return true, w.finishAsync(c)
}

// reapWait waits for the asynchronous sync in flight, if any, and
// finishes it (any goroutine).
func (w *WAL) reapWait() error {
	a := &w.async
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ring == nil || !a.inflight {
		return nil
	}
	c, err := a.ring.Wait()
	if err != nil {
		err = fmt.Errorf("wal: waiting for the sync of %s: %w", a.seg.Path(), err)
		return w.finishAsyncErr(err)
	}
	return w.finishAsync(c)
}

// finishAsync publishes the completed sync c and gives the lead back.
// Call with async.mu held and a request in flight.
func (w *WAL) finishAsync(c uring.Completion) error {
	a := &w.async
	if c.User != a.gen {
		return w.finishAsyncErr(fmt.Errorf("wal: completion %d for sync %d", c.User, a.gen))
	}
	if err := c.Err(); err != nil {
		return w.finishAsyncErr(fmt.Errorf("wal: persisting %s up to %d: fdatasync: %w", a.seg.Path(), a.tail, err))
	}
	w.syncs.add(time.Since(a.start), a.last-w.durable.Load())
	w.publish(a.seg, a.tail, a.last)
	a.inflight, a.seg = false, nil
	w.giveLead()
	return nil
}

// finishAsyncErr ends the sync in flight with err: fail-stop, as a failed
// persist is (the state of the range is unknown).
func (w *WAL) finishAsyncErr(err error) error {
	a := &w.async
	w.syncs.add(time.Since(a.start), a.last-w.durable.Load())
	err = w.failStop(err)
	a.inflight, a.seg = false, nil
	w.giveLead()
	return err
}

// publish records that everything in seg up to tail, and every record up
// to last, is durable (a leader, after its persist).
func (w *WAL) publish(seg *arena.Segment, tail int64, last uint64) {
	if seg != nil {
		w.advanceFlushed(packFlushed(seg.ID(), tail))
	}
	w.persisted.Store(last)
	prev := w.durable.Swap(last)
	w.flushes.Add(1)
	w.syncedRecords.Add(int64(last - prev))
}

// giveLead ends the current (async) leader's turn and wakes its waiters.
func (w *WAL) giveLead() {
	w.syncMu.Lock()
	w.leading, w.asyncLead = false, false
	done := w.leadDone
	w.leadDone = nil
	w.syncMu.Unlock()
	if done != nil {
		close(done)
	}
}

// closeAsync waits for a sync in flight and releases the ring.
func (w *WAL) closeAsync() error {
	err := w.reapWait()
	a := &w.async
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ring != nil {
		a.ring.Close()
		a.ring = nil
	}
	return err
}

package wal

import (
	"slices"
	"sync"
	"time"
)

// syncWindow is how many of the latest group commits SyncStats's p99 is
// taken over.
const syncWindow = 1024

// syncTimes keeps the duration of every group commit's persist (msync, or
// flush+fence) since start, and the latest syncWindow of them for a tail
// percentile. Only the group-commit leader adds (one at a time); INFO reads.
type syncTimes struct {
	mu     sync.Mutex
	n      int64
	total  time.Duration
	recent [syncWindow]time.Duration
}

func (t *syncTimes) add(d time.Duration) {
	t.mu.Lock()
	t.recent[t.n%syncWindow] = d
	t.n++
	t.total += d
	t.mu.Unlock()
}

// SyncStats describes what the group commits so far cost and covered.
type SyncStats struct {
	// Syncs is the number of group commits that persisted something (an
	// msync or a flush+fence of a non-empty range).
	Syncs int64
	// Mean is the mean time one of them took; P99 the 99th percentile
	// over the latest 1024. Both zero before the first.
	Mean, P99 time.Duration
	// Records is the number of records made durable by group commits;
	// Records/Syncs is how many records one sync covers on average.
	Records int64
}

// SyncStats returns the cost of the group commits so far (INFO
// persistence, the benchmark reports).
func (w *WAL) SyncStats() SyncStats {
	t := &w.syncs
	t.mu.Lock()
	n, total := t.n, t.total
	window := slices.Clone(t.recent[:min(n, syncWindow)])
	t.mu.Unlock()
	st := SyncStats{Syncs: n, Records: w.syncedRecords.Load()}
	if n == 0 {
		return st
	}
	st.Mean = total / time.Duration(n)
	slices.Sort(window)
	st.P99 = window[(len(window)*99)/100]
	return st
}

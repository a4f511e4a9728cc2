package wal

import (
	"math/bits"
	"slices"
	"sync"
	"time"
)

// syncWindow is how many of the latest group commits SyncStats's p99 is
// taken over.
const syncWindow = 1024

// SyncSizeBuckets is the number of buckets of SyncStats.Sizes.
const SyncSizeBuckets = 10

// syncTimes keeps the duration of every group commit's persist (msync, or
// flush+fence) since start, and the latest syncWindow of them for a tail
// percentile, and how many records each covered. Only the group-commit
// leader adds (one at a time); INFO reads.
type syncTimes struct {
	mu     sync.Mutex
	n      int64
	total  time.Duration
	recent [syncWindow]time.Duration
	sizes  [SyncSizeBuckets]int64
	// slowest is the longest persist since TakeSlowestSync last looked.
	slowest time.Duration
}

// add records one persist that took d and covered records records.
func (t *syncTimes) add(d time.Duration, records uint64) {
	t.mu.Lock()
	t.recent[t.n%syncWindow] = d
	t.n++
	t.total += d
	t.sizes[sizeBucket(records)]++
	t.slowest = max(t.slowest, d)
	t.mu.Unlock()
}

// TakeSlowestSync returns the longest group-commit persist since its
// previous call (0: none), for the server's latency monitor.
func (w *WAL) TakeSlowestSync() time.Duration {
	t := &w.syncs
	t.mu.Lock()
	d := t.slowest
	t.slowest = 0
	t.mu.Unlock()
	return d
}

// sizeBucket is the SyncStats.Sizes bucket of a persist that covered n
// records: 0 for n <= 1, then b for 2^(b-1) < n <= 2^b, the last bucket
// taking everything larger.
func sizeBucket(n uint64) int {
	if n <= 1 {
		return 0
	}
	return min(bits.Len64(n-1), SyncSizeBuckets-1)
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
	// Sizes is the distribution of records per sync: Sizes[0] counts the
	// syncs that covered at most one record, Sizes[b] those that covered
	// more than 2^(b-1) and at most 2^b (2, 3-4, 5-8, ...), and the last
	// bucket every sync of more than 2^(SyncSizeBuckets-2) records.
	Sizes [SyncSizeBuckets]int64
}

// SyncStats returns the cost of the group commits so far (INFO
// persistence, the benchmark reports).
func (w *WAL) SyncStats() SyncStats {
	t := &w.syncs
	t.mu.Lock()
	n, total, sizes := t.n, t.total, t.sizes
	window := slices.Clone(t.recent[:min(n, syncWindow)])
	t.mu.Unlock()
	st := SyncStats{Syncs: n, Records: w.syncedRecords.Load(), Sizes: sizes}
	if n == 0 {
		return st
	}
	st.Mean = total / time.Duration(n)
	slices.Sort(window)
	st.P99 = window[(len(window)*99)/100]
	return st
}

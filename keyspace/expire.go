package keyspace

import (
	"container/heap"
	"time"

	"github.com/persimmon-db/persimmon/keyindex"
)

// expiryItem is a (time, key) pair in the expiry heap. Items are not removed
// when a key's expiry changes or the key goes away: a popped item is acted
// on only if the key still has exactly that expiry (lazy invalidation).
type expiryItem struct {
	at  int64
	db  int
	key string
}

type expiryHeap []expiryItem

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryItem)) }
func (h *expiryHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func (h *expiryHeap) push(it expiryItem) { heap.Push(h, it) }

// rebuild recreates the heap from the databases (after SWAPDB, or when
// stale items outnumber live ones).
func (h *expiryHeap) rebuild(dbs []*db) {
	*h = (*h)[:0]
	for i, d := range dbs {
		for j := range d.entries {
			if e := &d.entries[j]; e.expireAt != 0 {
				*h = append(*h, expiryItem{at: e.expireAt, db: i, key: e.key})
			}
		}
	}
	heap.Init(h)
}

// activeExpireLimit bounds the keys removed per cycle so the lock is held
// briefly; the next cycle continues.
const activeExpireLimit = 2000

// activeExpire removes keys whose expiry has passed (Redis's active expiry,
// exact rather than sampled). Called with the lock held.
func (ks *Keyspace) activeExpire(now int64) {
	if ks.noActiveExp || ks.expiryPaused.Load() {
		return
	}
	n := ks.kixActiveExpire(now, activeExpireLimit)
	for ; n < activeExpireLimit && len(ks.expires) > 0 && ks.expires[0].at <= now; n++ {
		it := heap.Pop(&ks.expires).(expiryItem)
		d := ks.dbs[it.db]
		i, ok := d.index[it.key]
		if !ok || d.entries[i].expireAt != it.at {
			continue
		}
		ks.expire(it.db, it.key) // calls the OnKeyTouched hooks
		ks.touchWatchers(it.db, []byte(it.key))
	}
	volatile := 0
	for _, d := range ks.dbs {
		volatile += d.volatile
	}
	if len(ks.expires) > 1024 && len(ks.expires) > 4*volatile {
		ks.expires.rebuild(ks.dbs[:])
	}
}

// kixCheckpointTicks is the key index's checkpoint interval in background
// ticks (100 ms): a restart after a crash replays at most about this much
// of the log.
const kixCheckpointTicks = 10

// kixCheckpointStaged is the number of staged index writes at which a
// background tick checkpoints before kixCheckpointTicks is reached. A
// checkpoint stores every staged write into the table under the lock
// (roughly 1 µs a key: a key read back per probe match), so after a bulk
// load (redis-cli --pipe at a few 100,000 SETs/s) a whole interval's
// writes made one hold of 100-300 ms; bounded by this it stays a few ms.
const kixCheckpointStaged = 4096

// background runs active expiry and segment cleaning until Close.
func (ks *Keyspace) background() {
	defer ks.stopped.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-ks.stop:
			return
		case <-t.C:
		}
		ks.mu.Lock()
		ks.CheckWritable() // a full disk's retry, as Redis's cron does
		tickLRUClock()
		began := time.Now()
		ks.activeExpire(ks.NowMs())
		if obs := ks.latencyObs; obs != nil {
			obs("expire-cycle", time.Since(began))
			if d := ks.wal.TakeSlowestSync(); d > 0 {
				obs("aof-fsync-always", d)
			}
		}
		var job *keyindex.CheckpointJob
		if tick%kixCheckpointTicks == 0 || ks.kixOn() && ks.kix.ix.Staged() >= kixCheckpointStaged {
			// The staged writes are stored under the lock; the dirty
			// pages and the final block are persisted without it (the
			// table is not stored into until the job ends: keyindex's
			// BeginCheckpoint). An error is sticky in the wal (the next
			// write reports it) or the job's (the next checkpoint
			// retries and reports it).
			job, _ = ks.kixCheckpointBegin(true)
		}
		ks.kixMaybeGrow()
		ks.snapshotIndex()
		ks.snapshotCounts()
		ks.Unlock()
		if job != nil {
			job.Run()
			ks.mu.Lock()
			_ = ks.kixCheckpointEnd(job)
			ks.snapshotIndex()
			ks.Unlock()
		}
		ks.Clean()
	}
}

// SetLatencyObserver makes the background loop report to obs, every 100 ms
// tick, how long its active-expiry pass took ("expire-cycle") and the
// longest WAL group-commit persist since the previous tick
// ("aof-fsync-always"), for the server's latency monitor (Redis's event
// names). obs runs with the keyspace lock held and must not take it; nil
// stops the reports. Call with the lock held.
func (ks *Keyspace) SetLatencyObserver(obs func(event string, d time.Duration)) { ks.latencyObs = obs }

// SetActiveExpire turns the background expiry cycle on or off (DEBUG
// SET-ACTIVE-EXPIRE, for tests that need an expired key to stay until it
// is read). Expired keys are still removed when accessed. The caller
// holds the keyspace lock, as for every command.
func (ks *Keyspace) SetActiveExpire(on bool) { ks.noActiveExp = !on }

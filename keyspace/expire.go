package keyspace

import (
	"container/heap"
	"runtime"
	"time"

	"github.com/persimmon-db/persimmon/keyindex"
)

// expiredAt reports whether an expiry at expireAt (Unix ms; 0 for none)
// has passed at now. A key lives through the millisecond of its expiry
// and is gone from the next one, as in Redis (keyIsExpired and the active
// cycle: now > when). Every decision that a key is gone — a lookup, KEYS,
// SCAN, the active cycle, the cleaner, WATCH — takes this one rule, so a
// master never drops or hides a key in a millisecond where a Redis
// replica, which answers by the same rule from the master's absolute
// time, still shows it (keys differing in the replication tests).
// Commands that set a time already reached (EXPIRE and PEXPIREAT,
// RESTORE with a TTL, at or before now) delete at once, as Redis's
// checkAlreadyExpired does: that is their rule, not this one.
func expiredAt(expireAt, now int64) bool { return expireAt != 0 && now > expireAt }

// expiredNow is expiredAt at the keyspace's current time, read only for an
// expiry (0 has none): a key without one, the common case on the SET and
// GET paths, costs no clock read (time.Now was 4.7% of the server's CPU
// at SET -P 16 when every lookup and every applied SET read it).
func (ks *Keyspace) expiredNow(expireAt int64) bool {
	return expireAt != 0 && ks.NowMs() > expireAt
}

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
	if ks.rx.on {
		ks.expireTracked(now) // a replica's master expires the rest (replica_expiry.go)
		return
	}
	n := ks.kixActiveExpire(now, activeExpireLimit)
	for ; n < activeExpireLimit && len(ks.expires) > 0 && expiredAt(ks.expires[0].at, now); n++ {
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

// kixCheckpointEvery is the key index's longest checkpoint interval: a
// restart after a crash replays at most about this much of the log.
const kixCheckpointEvery = time.Second

// kixCheckpointPoll is how often the checkpointer (kixCheckpointer) looks
// at the staged writes, and kixCheckpointStaged the number of them at
// which it checkpoints before kixCheckpointEvery has passed. A checkpoint
// stores every staged write into the table under the lock (0.2-0.7 µs a
// key: 0.2 at 100,000 keys, up to 0.7 at 10,000,000 where nearly every
// write lands on a page of its own), so the lock's hold, which every
// command waits out, grows with the writes staged: redis-benchmark -c 50
// SET runs ~35,000 writes/s here, and 4096 staged writes checked every
// 100 ms (the background tick) made holds of 3-6 ms at 10 M keys (the
// SET p99.9 tail of issue 11's target 5). Polled every 20 ms at 1024
// writes the holds stayed near 1 ms (0.25-0.6 ms for 1,000-2,000 writes
// at 10 M keys on a loaded machine, with a long tail where the holder was
// descheduled); the dirty pages and the final block are persisted without
// the lock (keyindex.BeginCheckpoint). The checkpointer now freezes the
// writes under the lock and stores them without it, in the job that then
// persists them (keyindex.FreezeCheckpoint), or, while the table cannot
// take that (a migration, a replication cursor, a table at its growth
// point), in steps of kixCheckpointStep under the lock
// (keyindex.CheckpointStep: tens of µs each), yielding between them.
const (
	kixCheckpointPoll   = 20 * time.Millisecond
	kixCheckpointStaged = 1024
	kixCheckpointStep   = 128
)

// kixCheckpointer checkpoints the key index until Close: every
// kixCheckpointPoll it takes the lock and, if kixCheckpointStaged writes
// are staged or kixCheckpointEvery has passed since its last checkpoint,
// begins one (the staged writes frozen), then runs its job without the
// lock (the frozen writes stored, the dirty pages and the final block
// persisted) and ends it under the lock again; or stores them a step at
// a time under the lock and runs the last step's job. A checkpoint in one go meanwhile (the cleaner's, SCAN's,
// Close's) finishes the one in steps first; the next step then finds
// nothing to do. It is its own goroutine, not a part
// of the background tick, so that the cleaner (which can run for seconds
// in that loop) does not hold the checkpoints back and let the staged
// writes pile up into one long hold. An error is sticky in the wal (the
// next write reports it) or the job's (the next checkpoint retries and
// reports it).
func (ks *Keyspace) kixCheckpointer() {
	defer ks.stopped.Done()
	t := time.NewTicker(kixCheckpointPoll)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ks.stop:
			return
		case <-t.C:
		}
		ks.mu.Lock()
		var job *keyindex.CheckpointJob
		stepping := false
		if ks.kixOn() && (ks.kix.ix.Staged() >= kixCheckpointStaged || time.Since(last) >= kixCheckpointEvery) {
			job, stepping, _ = ks.kixCheckpointFreeze()
			last = time.Now()
		}
		ks.Unlock()
		for stepping {
			ks.mu.Lock()
			if ks.kixOn() {
				job, stepping, _ = ks.kix.ix.CheckpointStep(kixCheckpointStep)
			} else {
				stepping = false
			}
			ks.Unlock()
			if stepping {
				// The commands waiting for the lock run before the next
				// step (the woken waiter goes first on this thread). Not
				// a sleep: during a bulk load (a migration, so steps)
				// the steps must keep up with the writes, and a sleep of
				// tens of µs took a millisecond or more on a loaded
				// machine, the staged writes piling up into checkpoints
				// of 30,000 writes and a migration that fell behind.
				runtime.Gosched()
			}
		}
		if job == nil {
			continue
		}
		job.Run()
		ks.mu.Lock()
		_ = ks.kixCheckpointEnd(job)
		ks.snapshotIndex()
		ks.Unlock()
	}
}

// background runs active expiry and segment cleaning until Close (the
// key index's checkpoints run in kixCheckpointer).
func (ks *Keyspace) background() {
	defer ks.stopped.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ks.stop:
			return
		case <-t.C:
		}
		ks.mu.Lock()
		if ks.cronPaused {
			ks.mu.Unlock()
			continue
		}
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
		ks.kixMaybeGrow()
		ks.snapshotIndex()
		ks.snapshotCounts()
		ks.Unlock()
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

// PauseBackground stops (on) or resumes the background loop's work, as
// DEBUG PAUSE-CRON stops Redis's serverCron: active expiry, the cleaner,
// growth of the key index and the full disk's retry wait until it
// resumes (the key index's checkpoints go on: durability is not cron
// work here). Call with the lock held.
func (ks *Keyspace) PauseBackground(on bool) { ks.cronPaused = on }

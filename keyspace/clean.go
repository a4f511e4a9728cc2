package keyspace

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/wal"
)

// Segment cleaning.
//
// Overwrites and deletes leave dead operations behind. The cleaner reclaims
// them oldest segment first (a circular log): it walks the oldest sealed
// segment, re-writes every operation that is still the live state of its
// key as a new record at the head of the log (a fresh LSN, so replay order
// stays log order), waits until those copies are durable, and deletes the
// segment. Deletions and flushes in the oldest segment are simply dropped:
// nothing older than them remains that they could hide. A collection (or
// patched string) with an operation in the segment is reset at the head:
// written whole if it exists, deleted if not, because the operations of
// the same incarnation in later segments would otherwise replay over a
// partial state (cleanOp).
//
// It runs while the disk space of the segment files exceeds cleanRatio
// times the live bytes plus one segment, in chunks of at most cleanChunkOps
// operations per lock hold, so commands keep being served while it works.
// The segment of slack (64 MiB by default, like Redis's
// auto-aof-rewrite-min-size) lets overwrites age before their segment is
// cleaned: with little live data and a tighter bound the cleaner would
// seal and clean the segment being written, most of it still live
// (redis-benchmark MSET -r 100000 -n 1M: 44k requests/s with a 2 MiB
// slack, 60k with one segment, arena 82 MB for 9.2 MB live).
// When the garbage sits in the active segment (no sealed segment is left to
// clean), the active segment is sealed early so it can be cleaned.
//
// Deciding that an operation is dead costs a key lookup (a cache miss or
// two). Set operations are known dead the moment their key is overwritten,
// deleted, expired or flushed, so apply records their offsets per segment
// (Keyspace.deadSets) and the cleaner skips those without a lookup (MSET
// above: 42k → 46-49k requests/s with the 2 MiB slack).
//
// A chunk that rewrites a huge collection is one batch of many operations;
// Commit writes it as a group of records of bounded size (commitGroup),
// under one lock hold: the rewrite must not interleave with other writers'
// records (the wal's groups cannot) nor show half a collection.
const (
	cleanRatio    = 2
	cleanChunkOps = 256
)

// needsCleaning reports whether the arena holds too much dead data.
func (ks *Keyspace) needsCleaning() bool {
	return ks.arena.Bytes() > cleanRatio*ks.liveSnapshot.Load()+ks.arena.SegmentSize()
}

// Clean runs segment cleaning now, until the arena is within its bound or
// cleaning cannot proceed (a full disk). The background loop calls it every
// 100 ms; tests and tools call it to reach the bound synchronously. Call it
// without the lock.
func (ks *Keyspace) Clean() {
	ks.cleanMu.Lock()
	defer ks.cleanMu.Unlock()
	ks.clean()
}

// clean cleans segments while the arena is larger than the bound.
func (ks *Keyspace) clean() {
	for ks.needsCleaning() {
		select {
		case <-ks.stop:
			return
		default:
		}
		segs := ks.arena.Segments()
		if len(segs) == 0 {
			return
		}
		oldest := segs[0]
		if _, sealed := oldest.Sealed(); !sealed {
			ks.mu.Lock()
			err := ks.wal.Rotate()
			ks.Unlock()
			if err != nil {
				return
			}
			continue
		}
		if !ks.cleanSegment(oldest) {
			return
		}
	}
}

// cleanOp adds to b what operation o (at loc, in segment segID, under
// its key in database dbi) needs written again before the segment goes:
//
//   - a set that is still its key's value: the set again;
//   - an operation older than its collection's last rewrite whole
//     (object.anchored, before firstSeg): nothing;
//   - any other set or collection operation: the key is reset at the head
//     of the log, once per segment (reset), by writing its current value
//     whole (CopyValue) or, if it no longer exists, a delete. Either o is
//     part of the current collection, which may have state in the
//     segment, or o belongs to an earlier incarnation of the key whose
//     later operations, in later segments, replay over a partial state
//     (see errStaleOp): a list emptied by pops, a hash that expired (no
//     record says so) would otherwise come back at recovery.
//
// Deletions, flushes and swaps need nothing: nothing older than them
// remains that they could hide.
func (ks *Keyspace) cleanOp(b *Batch, o op, dbi int, loc, segID uint64, now int64, reset map[string]bool) {
	if o.kind != opSet && o.kind != opSetRef && o.kind < opObjectBase {
		return
	}
	e := ks.cleanEntry(dbi, o.key, now)
	if e != nil && o.kind == opSet && e.loc == loc {
		b.Set(dbi, o.key, o.val, o.expireAt)
		return
	}
	if e != nil && o.kind == opSetRef && e.loc == loc {
		// Its base, older, was met first (cleanHeldBase): not reached
		// unless that failed; the value whole is always safe.
		if k := string(append([]byte{byte(dbi)}, o.key...)); !reset[k] {
			reset[k] = true
			b.Set(dbi, o.key, ks.value(e), o.expireAt)
		}
		return
	}
	if e != nil && e.obj != nil && e.obj.anchored && segID < e.obj.firstSeg {
		// The key was rewritten whole after this segment: replay wipes o
		// with the delete the rewrite starts with. Resetting it again
		// would rewrite every such collection once per cleaned segment,
		// more than cleaning frees when they outgrow a segment.
		return
	}
	k := string(append([]byte{byte(dbi)}, o.key...))
	if reset[k] {
		return
	}
	reset[k] = true
	if e == nil {
		b.Del(dbi, o.key)
		return
	}
	ks.copyEntry(b, e, dbi, o.key, e.expireAt)
}

// cleanEntry is the cleaner's lookup of (dbi, key) at now: a key whose
// time has passed is expired here, as the active cycle would, unless the
// cycle is off (DEBUG SET-ACTIVE-EXPIRE 0), expiry is paused or this is a
// replica. Then it stays (its master's DEL, or a lookup once the pause or
// the DEBUG setting ends, removes it) and is copied like a live key: a
// lookup that hid it would let the segment's removal take its value
// away (replica_expiry.go).
func (ks *Keyspace) cleanEntry(dbi int, key []byte, now int64) *entry {
	e := ks.rawEntry(dbi, key)
	if e != nil && expiredAt(e.expireAt, now) && !ks.noActiveExp && !ks.keepExpired() {
		ks.expire(dbi, e.key)
		return nil
	}
	return e
}

// liveSetDB returns the database whose key o (a set at loc) is still the
// value of, or -1. Before a SWAPDB an operation may name another database
// than its key's (swappedSeg): a live set is copied for that database
// alone, where anything else is reset in every database.
func (ks *Keyspace) liveSetDB(o op, loc uint64) int {
	if o.kind != opSet && o.kind != opSetRef {
		return -1
	}
	for dbi, d := range ks.dbs {
		if i, ok := d.index[string(o.key)]; ok && d.entries[i].loc == loc && d.entries[i].obj == nil {
			return dbi
		}
		if l, ok := ks.kixGet(dbi, o.key); ok && l == loc {
			return dbi
		}
	}
	return -1
}

// cleanSegment copies the live operations out of seg and removes it. It
// returns false if it stopped early (closing, or a write failed).
func (ks *Keyspace) cleanSegment(seg *arena.Segment) bool {
	end, _ := seg.Sealed()
	buf := seg.Bytes()
	var b Batch
	off := int64(arena.HeaderSize)
	// Set operations already known dead are skipped without a key lookup;
	// those that die while the segment is being cleaned are looked up.
	// The list is read without the lock: appends (setDied) never change
	// its first len elements, and sortOffsets only reads it.
	ks.mu.Lock()
	dead := ks.deadSets[seg.ID()]
	ks.Unlock()
	dead = sortOffsets(dead)
	nextDead := 0
	reset := map[string]bool{} // db byte + key: keys already reset from this segment
	ks.mu.Lock()
	if seg.ID() < ks.flushAllSeg && ks.failed == nil {
		// A FLUSHALL in a later segment wiped every key: nothing here is
		// live, nothing needs copying (this is how FLUSHALL gives space
		// back on a full disk, where copies could not be written). Not
		// after a fail-stop: the FLUSHALL may be an applied record of a
		// transaction whose commit record was never written.
		off = end
	}
	if !ks.cleanFunctions(seg.ID()) { // functions.go
		ks.Unlock()
		return false
	}
	if !ks.cleanReplPosition(seg.ID()) { // replpos.go
		ks.Unlock()
		return false
	}
	ks.Unlock()
	for off < end {
		ks.mu.Lock()
		if ks.closed {
			ks.Unlock()
			return false
		}
		b.Reset()
		now := ks.NowMs()
		for ops := 0; off < end && ops < cleanChunkOps; {
			rec, err := wal.DecodeRecord(buf, off)
			if err != nil {
				// Verified at recovery or written by us, unless it is a
				// segment the key index let recovery skip (scrub.go):
				// damage. Cleaning stops there, logged, with the segment
				// kept: copying around a bad record would drop keys.
				ks.noteDamage(seg.ID()<<40|uint64(off), nil, fmt.Errorf("the cleaner cannot decode the record in %s at offset %d: %w; cleaning stopped", seg.Path(), off, err))
				ks.Unlock()
				return false
			}
			if rec.Type == wal.TypeBatch {
				p := off + wal.HeaderSize
				pend := p + int64(len(rec.Payload))
				for p < pend {
					o, err := decodeOp(buf[p:pend])
					if err != nil {
						panic(err)
					}
					for nextDead < len(dead) && int64(dead[nextDead]) < p {
						nextDead++
					}
					if (o.kind == opSet || o.kind == opSetRef) && nextDead < len(dead) && int64(dead[nextDead]) == p {
						p += int64(o.size)
						ops++
						continue
					}
					loc := seg.ID()<<40 | uint64(p)
					if _, held := ks.refs[loc]; held && o.kind == opSet {
						// A large value another key (or this one, with
						// another expiry) reads through an opSetRef:
						// written whole for its holder (valueref.go).
						ks.cleanHeldBase(&b, loc, reset)
						p += int64(o.size)
						ops++
						continue
					}
					// Before a SWAPDB, o.db may no longer be where the key
					// lives: look in every database (locations are unique,
					// so only the key's current entry can match).
					if seg.ID() >= ks.swappedSeg {
						ks.cleanOp(&b, o, int(o.db), loc, seg.ID(), now, reset)
					} else if dbi := ks.liveSetDB(o, loc); dbi >= 0 {
						ks.cleanOp(&b, o, dbi, loc, seg.ID(), now, reset)
					} else {
						for dbi := range ks.dbs {
							ks.cleanOp(&b, o, dbi, loc, seg.ID(), now, reset)
						}
					}
					p += int64(o.size)
					ops++
				}
			}
			off += rec.Size
		}
		if b.n > 0 {
			ks.cleaning = true
			err := ks.Commit(&b)
			ks.cleaning = false
			if err != nil {
				ks.Unlock()
				return false
			}
		}
		ks.Unlock()
		runtime.Gosched()
	}
	if err := ks.wal.WaitDurable(ks.wal.LastLSN()); err != nil {
		return false
	}
	// A group-commit leader that captured seg before it was sealed may
	// still be persisting it: wait for it before unmapping.
	ks.wal.Barrier()
	pauseHook("clean:copied")
	ks.mu.Lock()
	defer ks.Unlock()
	if ks.closed {
		return false
	}
	// The key index's checkpoint must cover the segment's records (and
	// the copies just written) before they go: a restart replays only the
	// records after it.
	if ks.kixOn() && ks.failed != nil {
		return false // no checkpoint can be taken
	}
	// Its pages and final block are persisted without the lock (as the
	// checkpointer's); the segment goes only once the job has ended
	// without an error, under the lock again: the table then no longer
	// names it on disk either.
	job, err := ks.kixCheckpointBegin(true)
	if err != nil {
		return false
	}
	if job != nil {
		ks.Unlock()
		job.Run()
		ks.mu.Lock()
		if err := ks.kixCheckpointEnd(job); err != nil || ks.closed {
			return false
		}
	}
	size := seg.AllocatedBytes()
	if err := ks.arena.Remove(seg.ID()); err != nil {
		return false
	}
	if ks.kixOn() {
		ks.kix.ix.SegmentRemoved(seg.ID()) // a growth's copies may name it
	}
	ks.rc.dropSegment(seg.ID()) // reccache.go: its copies are never read again
	delete(ks.deadSets, seg.ID())
	ks.cleanedBytes.Add(size)
	pauseHook("clean:removed")
	return true
}

// sortOffsets returns the offsets of src in ascending order in a new
// slice. src is only read (the caller shares it with appenders). A
// least-significant-byte radix sort: a segment's dead list holds up to a
// few hundred thousand offsets, and a comparison sort of them was ~4% of
// the server's CPU under redis-benchmark SET -P 16 -r 100000.
func sortOffsets(src []uint32) []uint32 {
	n := len(src)
	if n < 256 {
		out := slices.Clone(src)
		slices.Sort(out)
		return out
	}
	var counts [4][256]int
	for _, v := range src {
		counts[0][v&0xff]++
		counts[1][v>>8&0xff]++
		counts[2][v>>16&0xff]++
		counts[3][v>>24]++
	}
	bufs := [2][]uint32{make([]uint32, n), nil}
	in, next := src, 0
	for pass := range counts {
		shift := 8 * uint(pass)
		c := &counts[pass]
		if c[in[0]>>shift&0xff] == n {
			continue // every offset has the same byte here
		}
		if bufs[next] == nil {
			bufs[next] = make([]uint32, n)
		}
		out := bufs[next]
		sum := 0
		for i, k := range c {
			c[i], sum = sum, sum+k
		}
		for _, v := range in {
			d := v >> shift & 0xff
			out[c[d]] = v
			c[d]++
		}
		in, next = out, 1-next
	}
	if n > 0 && &in[0] == &src[0] {
		return slices.Clone(src) // already sorted in every byte: all equal
	}
	return in
}

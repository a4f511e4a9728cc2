package keyspace

import (
	"fmt"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/wal"
)

// pendingRecord is a record of a transaction group waiting for its commit.
type pendingRecord struct {
	seg      *arena.Segment
	off, end int64 // payload bytes
}

// NewRecovering returns an empty keyspace over a, ready for ReplayRecord.
// Recovery (package recovery) calls ReplayRecord for every valid record in
// log order, then Start.
func NewRecovering(a *arena.Arena) *Keyspace { return newKeyspace(a) }

// ReplayRecord applies one valid record of seg in log order. Records of a
// transaction group are held until the group's commit record; a group that
// is followed by anything else was abandoned and is dropped.
func (ks *Keyspace) ReplayRecord(seg *arena.Segment, rec wal.Record) error {
	ks.kix.endSeg, ks.kix.endOff = seg.ID(), uint64(rec.Offset+rec.Size)
	filter := false
	if ks.kix.replayCP > 0 && rec.LSN <= ks.kix.replayCP {
		if rec.LSN > ks.kix.anchors.scanTo {
			return nil // in the key index's checkpoint already (AttachIndex)
		}
		// Up to the checkpoint only the operations of anchored entries
		// are applied (kixanchor.go): the rest is in the table.
		filter = true
		ks.kix.anchors.scanned++
	} else if ks.kixOn() {
		if ks.kix.firstTail == 0 {
			ks.kix.firstTail = seg.ID()<<40 | uint64(rec.Offset)
		}
		ks.kix.replayed++
	}
	ks.replaying = true
	ks.anchorFilter = filter
	defer func() { ks.replaying, ks.anchorFilter = false, false }()
	if rec.Flags&wal.FlagTxn == 0 || rec.Type == wal.TypeCommit {
		// An opClock judges its record, or its whole group (applyclock.go).
		ks.applyNow = 0
		defer func() { ks.applyNow = 0 }()
	}
	ks.curLSN = rec.LSN
	off := rec.Offset + wal.HeaderSize
	end := off + int64(len(rec.Payload))
	switch {
	case rec.Type == wal.TypeCommit:
		for _, p := range ks.pending {
			if err := ks.applyPayload(p.seg, p.off, p.end); err != nil {
				return err
			}
		}
		ks.pending = ks.pending[:0]
		return nil
	case rec.Type != wal.TypeBatch:
		return fmt.Errorf("keyspace: %s offset %d: record type %d", seg.Path(), rec.Offset, rec.Type)
	case rec.Flags&wal.FlagTxn != 0:
		if rec.Flags&wal.FlagTxnBegin != 0 {
			ks.pending = ks.pending[:0]
		}
		ks.pending = append(ks.pending, pendingRecord{seg: seg, off: off, end: end})
		return nil
	}
	ks.pending = ks.pending[:0]
	return ks.applyPayload(seg, off, end)
}

// ReplaySkipped is the number of operations recovery skipped because they
// did not fit the state left by segment cleaning (see errStaleOp).
func (ks *Keyspace) ReplaySkipped() int { return ks.replaySkipped }

// PendingRecords is the number of records of a transaction group still
// waiting for a commit record (an EXEC cut short by a crash).
func (ks *Keyspace) PendingRecords() int { return len(ks.pending) }

// KeyCount is the number of keys over all databases.
func (ks *Keyspace) KeyCount() int {
	n := 0
	for i := range ks.dbs {
		n += ks.DBSize(i)
	}
	return n
}

// Start ends recovery: an unfinished transaction group is dropped, w
// becomes the log for new writes, and background work (active expiry,
// segment cleaning) starts.
func (ks *Keyspace) Start(w *wal.WAL) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.pending = nil
	ks.wal = w
	if err := ks.kixFinishReplay(); err != nil {
		ks.failed = fmt.Errorf("ERR key index: %v", err)
	}
	ks.sweepReplayExpired()
	if err := ks.kixCheckpoint(); err != nil {
		ks.failed = fmt.Errorf("ERR key index checkpoint: %v", err)
	}
	ks.kixReport()
	ks.snapshotIndex()
	ks.expires.rebuild(ks.dbs[:])
	ks.snapshotCounts()
	ks.liveSnapshot.Store(ks.liveBytes)
	ks.stopped.Add(1)
	go ks.background()
	if ks.kixOn() {
		ks.stopped.Add(1)
		go ks.kixCheckpointer()
	}
}

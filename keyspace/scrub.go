package keyspace

import (
	"time"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/wal"
)

// Scrubbing the segments recovery trusted.
//
// A restart that re-attaches the key index reads no record of the sealed
// segments its checkpoint covers: that is what makes it fast. Their
// headers are still checked at start-up (package arena: magic, version,
// header checksum, file size, the seal word's check of id and end), so a
// file cut short, renamed or replaced is refused there; damage inside the
// records (a flipped bit, a zeroed page) was found only by persimmon-check
// verify. No cheap check covers it: the format has no per-segment
// checksum of the records (a footer written at seal would need a format
// change in package arena, and verifying it reads every byte anyway, the
// cost the re-attach avoids: 825 MB of segments at 10 M keys).
//
// So the check runs after start-up instead: StartScrub verifies every
// record of those segments (checksum, LSN chain, sealed end; wal's
// ScanSegmentFrom, as recovery does for the segments it reads) in the
// background, one segment at a time while holding the cleaner's mutex (a
// segment is never removed while it is read), without the keyspace lock,
// pausing after each segment as long as it took (so a restart's first
// requests keep most of the machine).
// Damage is logged ("DAMAGE: ...", naming file and offset) and counted
// (Stats.ScrubDamaged); the server keeps serving, as Redis does with a
// damaged key it has loaded: a read of a damaged value answers an error
// when the operation does not decode (damage.go), and persimmon-check
// repair is the operator's tool. A segment the cleaner removed before its
// turn is skipped: its live records were copied, verified, by the cleaner.

// The newest segment's records up to the checkpoint are not read at
// start-up either (recovery checks only that the log reaches the
// checkpoint: wal.EndsAt): they are verified last, up to the
// checkpoint's offset (wal.VerifyPrefix), while appends go on after it.

// ScrubPrefix names the records of a segment recovery did not read
// because the key index's checkpoint covers them: from the first up to
// End (bytes from segment start), the last of LSN Last.
type ScrubPrefix struct {
	Seg  uint64
	End  int64
	Last uint64
}

// StartScrub starts the background verification of the segments ids
// (those recovery did not read) and of prefixes, in that order. Call
// once, after Start.
func (ks *Keyspace) StartScrub(ids []uint64, prefixes []ScrubPrefix) {
	jobs := make([]ScrubPrefix, 0, len(ids)+len(prefixes))
	for _, id := range ids {
		jobs = append(jobs, ScrubPrefix{Seg: id})
	}
	jobs = append(jobs, prefixes...)
	if len(jobs) == 0 {
		return
	}
	ks.stopped.Add(1)
	go ks.scrub(jobs)
}

func (ks *Keyspace) scrub(jobs []ScrubPrefix) {
	defer ks.stopped.Done()
	for _, job := range jobs {
		id := job.Seg
		select {
		case <-ks.stop:
			return
		default:
		}
		ks.cleanMu.Lock()
		start := time.Now()
		seg := ks.arena.Segment(id)
		var err error
		if seg != nil {
			// Read ahead for the scan (a fault per 4 KiB page otherwise:
			// the mappings are MADV_RANDOM), then the pages marked cold,
			// so that under memory pressure (a data set larger than a
			// memory cgroup) the scrub's one-time read evicts its own
			// pages first, not those being served.
			if job.End == 0 {
				pmem.AdviseSequential(seg.Bytes())
				_, _, err = wal.ScanSegmentFrom(seg, arena.HeaderSize, seg.BaseLSN(), func(wal.Record) error { return nil })
				pmem.AdviseRandom(seg.Bytes())
				pmem.AdviseCold(seg.Bytes())
			} else {
				// The prefix of a segment being appended to: its pages
				// are the ones being served, not marked cold.
				pmem.AdviseSequential(seg.Bytes()[:job.End])
				err = wal.VerifyPrefix(seg, job.End, job.Last)
				pmem.AdviseRandom(seg.Bytes()[:job.End])
			}
		}
		took := time.Since(start)
		ks.cleanMu.Unlock()
		if seg == nil {
			continue
		}
		// Pacing, not synchronisation: at most half of one core (and of
		// the disk's reads) goes to the scrub, as for the index's growth.
		t := time.NewTimer(took)
		select {
		case <-ks.stop:
			t.Stop()
			return
		case <-t.C:
		}
		ks.scrubbed.Add(1)
		if err != nil {
			ks.scrubDamaged.Add(1)
			if ks.logf != nil {
				ks.logf("DAMAGE: segment %d, trusted at start-up through the key index's checkpoint, does not verify: %v; run persimmon-check verify", id, err)
			}
		}
	}
	if ks.logf != nil {
		ks.logf("scrub: %d segments trusted at start-up verified, %d damaged", ks.scrubbed.Load(), ks.scrubDamaged.Load())
	}
}

//go:build pmemtrace && unix

package crashimage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
	"github.com/persimmon-db/persimmon/wal"
)

const segmentSize = 64 << 10

func envInt(t *testing.T, name string, def int64) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// scratchDir returns a directory for images: in /dev/shm when there is one
// (images are written and read once), else the test's temp dir.
func scratchDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "persimmon-crashimage-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// TestCrashImages records a run of keyspace writes in pmem mode with pmem's
// store/flush/fence recorder and checks recovery on crash images taken
// between the run's events.
//
// The run (one goroutine, as the server's commit path: Lock, Commit,
// Unlock, then WaitDurable) opens a keyspace through recovery.Open on an
// empty directory with 64 KiB segments and performs units: SET, MSET-like
// batches of 2-5 keys, batches of large values, DEL, FLUSHDB, HSET/HDEL,
// SADD/SREM, RPUSH/LPOP, ZADD/ZREM, and MULTI-style transaction groups of
// 2-4 commits (BeginTxn … EndTxn under one lock hold). After a unit it
// calls WaitDurable three times in four (so group commits also cover
// several units) and notes the unit as acknowledged; every 25 units it
// runs a cleaning pass (Keyspace.Clean), and segments fill and rotate
// every few dozen units. The live keyspace is compared with a model after
// every unit, so the model is right before it judges recovery.
//
// For each point right after an event (a flush, a fence, a map or close of
// a segment) the test builds images: the one where every undetermined unit
// holds its persistent value, the one where each holds the last value
// stored, cuts at record boundaries (the log written back in order up to a
// record) and random mixtures (units chosen independently, with varying
// probability); see imagePick. Each distinct image is written to a fresh
// directory and opened with recovery.Open in pmem mode, as the server does
// at start-up. It must:
//
//   - start (every image is a possible crash state, so a refusal fails);
//   - hold exactly the model state after some prefix of the units, with
//     every unit acknowledged by the crash point inside it and no unit
//     whose stores had not begun by then (values carry the unit's number,
//     so half a batch or half a transaction group matches no prefix);
//   - obey the arena's ordering: a segment followed by a segment that holds
//     a record is sealed (the seal is persisted before the next segment is
//     written to).
//
// Sizes: PERSIMMON_CRASH_IMAGES images (default 3000, the `make test`
// sample; `make test-long` runs 100000; the other three tests take a third
// each), units a fifth as many (at least 300), PERSIMMON_CRASH_SEED fixes the
// workload (default 1; the cleaner goroutine's timer can still move events
// slightly between runs). Every failure prints the seed, the crash point
// and the recovery error or the state found.
//
// # Mutation check
//
// Each Flush, Drain (fence), Persist or Msync call site of the non-test
// code of pmem, arena and wal (and recovery's one) was deleted (the call
// replaced by nothing or by a nil error) one at a time, and the four tests
// run on the mutant with the default samples; crashimage/mutations.sh
// does it and prints this list (run of 2026-12-01):
//
//	 1 wal persistPending: seg.Persist (group commit)  FAIL: a unit acknowledged with no flush or fence since it began
//	 2 arena seal: Persist of [from, end) before the   FAIL: recovery refuses a possible crash state (a sealed
//	   seal word                                             segment whose records did not all reach the media)
//	 3 arena seal: Persist of the seal word            FAIL: a segment is not sealed although the next one holds a record
//	 4 arena Unseal: Persist of the cleared seal word  survives: only persimmon-check repair calls Unseal; no run here repairs
//	 5 arena create: Persist of the new header         FAIL: recovery refuses an image ("bad segment magic") whose segment has records
//	 6 arena Segment.Persist: region.Persist           FAIL: as 1
//	 7 arena Segment.Flush: region.Flush               survives: Segment.Flush has no caller
//	 8 arena Segment.Msync: region.Msync               survives: Segment.Msync has no caller
//	 9 pmem Region.Flush: flushRange                   survives: its only caller is Segment.Flush (no caller)
//	10 pmem flushRange: flushLines (write-back loop)   FAIL: an acknowledged unit is missing after recovery
//	11 pmem Persist (pmem mode): flushRange            FAIL: as 10
//	12 pmem Persist (pmem mode): Drain                 FAIL: as 10
//	13 pmem Persist (pmem mode without a write-back    survives: unreachable on a CPU with CLWB/CLFLUSHOPT/CLFLUSH,
//	   instruction): Msync                                   as here (the recorder does not model that fallback)
//	14 pmem Persist (msync mode): Msync                FAIL (msync test): as 1
//	15 pmem Region.Msync: msync(2)                     FAIL (msync test): as 1
//	16 pmem Drain (amd64): the SFENCE inside it        survives by construction: the recorder sees the Drain call,
//	                                                         not the instruction (flush_amd64.s is one line)
//	17 recovery cutTail: Persist of the zeroed tail    FAIL (after-recovery test): a crash while the lost units are
//	                                                         redone brings back the stale records after the redone
//	                                                         ones: a state that is no prefix
//	18 arena MarkShutdown: Persist of the clean-       survives: no recorded run shuts down; a lost mark only
//	   shutdown word                                         weakens damage detection (the segment is scanned with
//	                                                         torn-tail rules again), it loses no record
//	19 arena ClearShutdown: Persist of the cleared     survives: no recorded run restarts after a clean shutdown;
//	   word                                                  recovery ignores a mark that records follow
//	20 arena markPredecessorCleaned: Persist of the    FAIL: recovery refuses a possible crash state (missing
//	   cleaned word                                          segment) after the cleaner deleted the oldest one
//
// Not covered: the Persist calls of persimmon-check repair (offline; not
// recorded).
func TestCrashImages(t *testing.T) {
	if pmem.FlushInstruction() == "none" {
		t.Skip("no cache-line write-back instruction: pmem mode falls back to msync (TestCrashImagesMsync)")
	}
	crashImages(t, pmem.ModePmem, int(envInt(t, "PERSIMMON_CRASH_IMAGES", 3000)), 1)
}

// TestCrashImagesMsync is the same test in msync mode, with a third of the
// images: an msync is recorded as a write-back of its pages and a fence,
// and 8-byte units are finer than what the page cache can tear, so these
// images include every page-level mixture.
func TestCrashImagesMsync(t *testing.T) {
	crashImages(t, pmem.ModeMsync, int(envInt(t, "PERSIMMON_CRASH_IMAGES", 3000))/3, 1)
}

// TestCrashImagesConcurrent records four writers sharing group commits
// (pmem mode, a third of the images): one WaitDurable leader persists
// what all of them appended. The run's interleaving is not reproducible.
func TestCrashImagesConcurrent(t *testing.T) {
	if pmem.FlushInstruction() == "none" {
		t.Skip("no cache-line write-back instruction")
	}
	crashImages(t, pmem.ModePmem, int(envInt(t, "PERSIMMON_CRASH_IMAGES", 3000))/3, 4)
}

// TestCrashImagesAfterRecovery crashes a second time: during the recovery
// of a crash image whose newest segment ends in a torn tail (recovery
// zeroes and persists it) and while the units that crash lost are redone
// with values of the same lengths, so that their records land exactly
// where the cut ones were (stale bytes of a cut that never reached the
// media would then continue the log). Recovery is recorded like the first
// run; its crash images must recover the first recovery's state, and the
// later ones a prefix of the redone units on top of it, with every
// acknowledged one. A third of the images, over 8 first crashes (40 in the
// long run).
func TestCrashImagesAfterRecovery(t *testing.T) {
	if pmem.FlushInstruction() == "none" {
		t.Skip("no cache-line write-back instruction")
	}
	images := int(envInt(t, "PERSIMMON_CRASH_IMAGES", 3000)) / 3
	seed := uint64(envInt(t, "PERSIMMON_CRASH_SEED", 1))
	firsts := max(8, images/800)
	run := record(t, pmem.ModePmem, seed, max(300, 40*firsts), 1)
	base := scratchDir(t)

	// Pick first crashes whose recovery cuts a torn tail, spread over
	// the run.
	type firstCrash struct {
		event int
		names []string
		files [][]byte
		fp    uint64
		units int // the prefix it recovered
	}
	var picked []firstCrash
	dirty := 0
	run.trace.Replay(func(c *pmem.CrashPoint) bool {
		if len(c.Dirty) > 0 {
			dirty++
		}
		return true
	})
	stride := max(1, dirty/firsts)
	rng := rand.New(rand.NewPCG(seed, 0xf1257))
	n, next := 0, stride/2
	run.trace.Replay(func(c *pmem.CrashPoint) bool {
		if len(c.Dirty) == 0 {
			return true
		}
		if n++; n < next {
			return true
		}
		// Every other one: all units new but the first undetermined one of
		// the newest segment (so one record is torn and the ones after it
		// are intact); else each unit new with probability 0.7.
		newest, torn := 0, -1
		for i, f := range c.Files {
			if f.Name > c.Files[newest].Name {
				newest = i
			}
		}
		for i, u := range c.Dirty {
			if u.File == newest && u.Off >= firstRecord {
				torn = i
				break
			}
		}
		oneTorn := len(picked)%2 == 0
		files := c.Image(func(i int) int {
			if oneTorn {
				if i == torn {
					return 0
				}
				return len(c.Dirty[i].New)
			}
			if rng.Float64() < 0.7 {
				return 1 + rng.IntN(len(c.Dirty[i].New))
			}
			return 0
		})
		var names []string
		for _, f := range c.Files {
			names = append(names, f.Name)
		}
		dir := filepath.Join(base, "first")
		if err := writeImage(dir, names, files); err != nil {
			t.Fatal(err)
		}
		ks, rep, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModePmem, SegmentSize: segmentSize, NoKeyIndex: crashNoKeyIndex})
		if err != nil {
			t.Fatalf("crash point after event %d: recovery refused a possible crash state: %v", c.Event, err)
		}
		fp := fingerprintOf(dumpKeyspace(ks))
		ks.Close()
		os.RemoveAll(dir)
		if rep.TornBytes == 0 {
			return true
		}
		written := run.written(c.Event)
		units := -1
		for _, p := range run.prefix[fp] {
			if p >= min(run.acked(c.Event), written) && p <= written {
				units = p
			}
		}
		if units < 0 {
			t.Fatalf("crash point after event %d: recovered no allowed prefix", c.Event)
		}
		if oneTorn && written-units < 2 {
			return true // no intact record after the torn one to be stale
		}
		cp := make([][]byte, len(files))
		for i := range files {
			cp[i] = slices.Clone(files[i])
		}
		picked = append(picked, firstCrash{event: c.Event, names: names, files: cp, fp: fp, units: units})
		next += stride
		return len(picked) < firsts
	})
	if len(picked) == 0 {
		t.Fatal("no crash image with a torn tail")
	}
	t.Logf("%d first crashes with a torn tail (after events %v)", len(picked), func() []int {
		var e []int
		for _, p := range picked {
			e = append(e, p.event)
		}
		return e
	}())

	var total checkStats
	for _, first := range picked {
		dir := filepath.Join(base, fmt.Sprintf("second-%d", first.event))
		if err := writeImage(dir, first.names, first.files); err != nil {
			t.Fatal(err)
		}
		tr := pmem.StartTrace()
		ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModePmem, SegmentSize: segmentSize, NoKeyIndex: crashNoKeyIndex})
		if err != nil {
			tr.Stop()
			t.Fatal(err)
		}
		w := newWorkload(seed)
		w.dryRun(first.units)
		if w.m.fingerprint() != first.fp {
			tr.Stop()
			t.Fatalf("first crash after event %d: the dry run of %d units does not reach the recovered state", first.event, first.units)
		}
		w.ks, w.salt, w.base = ks, 13, first.units
		second := w.run(t, pmem.ModePmem, tr, 30, 1)
		// Crash points before recovery has mapped every file of the
		// image would lack the files not yet mapped; recovery writes
		// nothing before that, so those points are the image itself.
		maps := 0
		for k, ev := range tr.Events() {
			if ev.Kind == pmem.TraceMap {
				if maps++; maps == len(first.names) {
					second.from = k
					break
				}
			}
		}
		tr.Stop()
		if err := ks.Close(); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(dir)
		st := second.check(t, base, seed, images/len(picked))
		total.images += st.images
		total.points += st.points
		total.full += st.full
		if t.Failed() {
			t.Fatalf("after the first crash at event %d (%d units recovered)", first.event, first.units)
		}
	}
	t.Logf("%d distinct images at %d crash points of the recoveries and redone units; %d held every unit begun", total.images, total.points, total.full)
	if total.images < images {
		t.Errorf("only %d distinct images, want %d", total.images, images)
	}
}

// writeImage writes files (named names) into a new directory dir.
func writeImage(dir string, names []string, files [][]byte) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for i, name := range names {
		if err := writeSparse(filepath.Join(dir, name), files[i]); err != nil {
			return err
		}
	}
	return nil
}

func crashImages(t *testing.T, mode pmem.Mode, images, writers int) {
	seed := uint64(envInt(t, "PERSIMMON_CRASH_SEED", 1))
	units := max(300, images/5)
	t.Logf("%s mode, %d writers, seed %d, %d units, %d images", mode, writers, seed, units, images)

	start := time.Now()
	run := record(t, mode, seed, units, writers)
	removed := 0
	for _, ev := range run.trace.Events() {
		if ev.Kind == pmem.TraceRemove {
			removed++
		}
	}
	t.Logf("recorded %d events, %d units (%d acknowledged), %d segment files (%d removed by cleaning) in %v",
		len(run.trace.Events()), len(run.units), run.acked(len(run.trace.Events())), len(run.trace.Regions()), removed, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	st := run.check(t, scratchDir(t), seed, images)
	t.Logf("%d distinct images at %d crash points (%d with undetermined units, at most %d units), %d duplicates skipped, in %v",
		st.images, st.points, st.dirtyPoints, st.maxDirty, st.dups, time.Since(start).Round(time.Millisecond))
	t.Logf("prefixes recovered: %d images held every unit written by the crash point, %d lost only unacknowledged units",
		st.full, st.images-st.full)
	if st.images < images && !t.Failed() {
		t.Errorf("only %d distinct images, want %d: lengthen the run", st.images, images)
	}
}

// unitNote is what the run knew about one unit.
type unitNote struct {
	desc  string
	start int // trace.Len() before the unit's first store
	ack   int // trace.Len() when WaitDurable covering it returned (-1: never)
}

type recordedRun struct {
	from   int // the first event whose crash point is checked
	mode   pmem.Mode
	trace  *pmem.Trace
	units  []unitNote
	prefix map[uint64][]int // state fingerprint → prefixes (unit counts) with that state
}

// acked is how many units are acknowledged at the crash point after event
// k: WaitDurable returned before event k+1. The image at k is a possible
// media state then too: stores made after event k are simply not in it.
func (r *recordedRun) acked(k int) int {
	n := 0
	for i, u := range r.units {
		if u.ack >= 0 && u.ack <= k+1 {
			n = i + 1
		}
	}
	return n
}

// written is how many units had begun storing by event k (those are the
// only ones whose bytes an image at k can hold).
func (r *recordedRun) written(k int) int {
	n := 0
	for i, u := range r.units {
		if u.start <= k {
			n = i + 1
		}
	}
	return n
}

// record runs units units from writers goroutines (each as one client:
// its unit under the keyspace lock, then, three times in four, WaitDurable
// for the unit's LSN without the lock, and a note that the unit is
// acknowledged). Log order is lock order; the model follows it.
func record(t *testing.T, mode pmem.Mode, seed uint64, units, writers int) *recordedRun {
	dir := filepath.Join(scratchDir(t), "run")
	tr := pmem.StartTrace()
	defer tr.Stop()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: mode, SegmentSize: segmentSize, NoKeyIndex: crashNoKeyIndex})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorkload(seed)
	w.ks = ks
	run := w.run(t, mode, tr, units, writers)
	tr.Stop()
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	return run
}

func newWorkload(seed uint64) *workload {
	return &workload{rng: rand.New(rand.NewPCG(seed, 0x5eed)), m: model{}}
}

// dryRun advances w (dry) through units units as run would.
func (w *workload) dryRun(units int) {
	w.dry = true
	for i := 0; i < units; i++ {
		w.unit()
		w.rng.IntN(4) // run's acknowledgement draw
	}
	w.dry = false
}

// run performs units units on w.ks from writers goroutines (each as one
// client: its unit under the keyspace lock, then, three times in four,
// WaitDurable for the unit's LSN without the lock, and a note that the
// unit is acknowledged), recorded by tr. Log order is lock order; the
// model follows it and is compared with the live keyspace after each unit.
func (w *workload) run(t *testing.T, mode pmem.Mode, tr *pmem.Trace, units, writers int) *recordedRun {
	ks := w.ks
	run := &recordedRun{mode: mode, trace: tr, prefix: map[uint64][]int{}}
	prevFP := w.m.fingerprint()
	run.prefix[prevFP] = append(run.prefix[prevFP], 0)
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		go func() {
			errs <- func() error {
				for {
					ks.Lock()
					i := len(run.units)
					if i >= units {
						ks.Unlock()
						return nil
					}
					note := unitNote{start: tr.Len(), ack: -1}
					desc, err := w.unit()
					note.desc = desc
					if err != nil {
						ks.Unlock()
						return fmt.Errorf("unit %d (%s): %v", i, desc, err)
					}
					lsn := ks.LastLSN()
					run.units = append(run.units, note)
					fp := w.m.fingerprint()
					run.prefix[fp] = append(run.prefix[fp], i+1)
					changed := fp != prevFP
					prevFP = fp
					if got, want := dumpLocked(ks), w.m.dump(); got != want {
						ks.Unlock()
						return fmt.Errorf("after unit %d (%s) the live keyspace differs from the model:\n got %s\nwant %s", i, desc, got, want)
					}
					wait := w.rng.IntN(4) != 0
					ks.Unlock()
					if wait {
						if err := ks.WaitDurable(lsn); err != nil {
							return err
						}
						n := tr.Len()
						// A unit acknowledged with no event since it began
						// (its LSN was durable already) must have stored
						// nothing; then acked may exceed written at a crash
						// point (see check).
						if note.start == n && changed {
							return fmt.Errorf("unit %d (%s) changed the state and was acknowledged without a flush or fence", i, desc)
						}
						ks.Lock()
						run.units[i].ack = n
						ks.Unlock()
					}
					if (w.base+i)%25 == 24 {
						ks.Clean()
					}
				}
			}()
		}()
	}
	for g := 0; g < writers; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		tr.Stop()
		ks.Close()
		t.FailNow()
	}
	return run
}

type checkStats struct {
	images, points, dirtyPoints, maxDirty, dups, full int
}

func (r *recordedRun) check(t *testing.T, base string, seed uint64, want int) checkStats {
	var st checkStats
	events := r.trace.Events()
	// Spread the images over the crash points that have undetermined
	// units (the others have one image each), carrying any shortfall of
	// a point with few possible images over to the next ones.
	dirtyLeft, cleanLeft := 0, 0
	r.trace.Replay(func(c *pmem.CrashPoint) bool {
		switch {
		case c.Event < r.from:
		case len(c.Dirty) > 0:
			dirtyLeft++
		default:
			cleanLeft++
		}
		return true
	})
	target := want + want/8 // the last points may have fewer possible images than their share
	rng := rand.New(rand.NewPCG(seed, 0x1a9e))
	seen := map[uint64]bool{}
	failures := 0
	r.trace.Replay(func(c *pmem.CrashPoint) bool {
		if c.Event < r.from {
			return true
		}
		st.points++
		if len(c.Dirty) > 0 {
			st.dirtyPoints++
		}
		st.maxDirty = max(st.maxDirty, len(c.Dirty))
		// A unit begun and acknowledged with no event in between stored
		// nothing (record checks it): count it as written too.
		written := r.written(c.Event)
		acked := min(r.acked(c.Event), written)
		quota := 1
		if len(c.Dirty) > 0 {
			quota = max(1, (target-st.images-cleanLeft+dirtyLeft-1)/dirtyLeft)
			dirtyLeft--
		} else {
			cleanLeft--
		}
		distinct := 0
		cuts := recordCuts(c)
		for try := 0; (distinct < quota || try < 2+len(cuts)) && try < 4*quota+4+len(cuts); try++ {
			pick := imagePick(rng, c, cuts, try)
			if pick == nil {
				break
			}
			files := c.Image(func(i int) int { return pick[i] })
			key := imageKey(c, files, acked, written)
			if seen[key] {
				st.dups++
				continue
			}
			seen[key] = true
			distinct++
			st.images++
			dir := filepath.Join(base, strconv.Itoa(st.images))
			got, err := r.recover(dir, c, files)
			os.RemoveAll(dir)
			if err == nil {
				err = r.judge(got, acked, written, &st)
			}
			if err != nil {
				failures++
				ev := events[c.Event]
				t.Errorf("seed %d, crash point after event %d (kind %d, region %d) with %d of %d undetermined units taking a new value, %d units acknowledged, %d begun: %v",
					seed, c.Event, ev.Kind, ev.Region, countNew(pick), len(c.Dirty), acked, written, err)
				if failures >= 3 {
					return false
				}
			}
		}
		return true
	})
	return st
}

// recordCut is a record boundary: the offset where a wal record starts in
// file (an index into CrashPoint.Files).
type recordCut struct {
	file int
	off  int64
}

// imagePick returns the try-th choice for c's undetermined units (nil
// when there are no more): all old, then all newest, then one cut at each
// record boundary of recordCuts (in that file the units before the record
// newest and the units from it on old: a log written back in order up to
// that record, as a torn tail usually is; other files newest), then random mixtures in which a unit takes a
// new value with probability 0.5, 0.1, 0.9, 0.3 or 0.7 in turn.
func imagePick(rng *rand.Rand, c *pmem.CrashPoint, cuts []recordCut, try int) []int {
	d := len(c.Dirty)
	pick := make([]int, d)
	switch {
	case try == 0:
		return pick
	case d == 0:
		return nil
	case try == 1:
		for i, u := range c.Dirty {
			pick[i] = len(u.New)
		}
		return pick
	case try-2 < len(cuts):
		cut := cuts[try-2]
		for i, u := range c.Dirty {
			if u.File != cut.file || u.Off < cut.off {
				pick[i] = len(u.New)
			}
		}
		return pick
	}
	probs := []float64{0.5, 0.1, 0.9, 0.3, 0.7}
	p := probs[try%len(probs)]
	for i, u := range c.Dirty {
		if rng.Float64() < p {
			pick[i] = 1 + rng.IntN(len(u.New))
		}
	}
	return pick
}

// recordCuts returns, for each file with undetermined units, the offsets
// of the wal records (read from firstRecord on in the image where every
// unit holds its newest value) that start within the undetermined range,
// as cuts for imagePick.
func recordCuts(c *pmem.CrashPoint) []recordCut {
	if len(c.Dirty) == 0 {
		return nil
	}
	newest := c.Image(func(i int) int { return len(c.Dirty[i].New) })
	var cuts []recordCut
	for f := range c.Files {
		lo, hi := int64(-1), int64(-1)
		for _, u := range c.Dirty {
			if u.File == f {
				if lo < 0 {
					lo = u.Off
				}
				hi = u.Off
			}
		}
		if lo < 0 {
			continue
		}
		for off := int64(firstRecord); ; {
			rec, err := wal.DecodeRecord(newest[f], off)
			if err != nil {
				break
			}
			if off >= lo && off <= hi {
				cuts = append(cuts, recordCut{file: f, off: off})
			}
			off += rec.Size
		}
	}
	return cuts
}

func countNew(pick []int) int {
	n := 0
	for _, p := range pick {
		if p > 0 {
			n++
		}
	}
	return n
}

func imageKey(c *pmem.CrashPoint, files [][]byte, acked, written int) uint64 {
	var d xxhash.Digest
	d.Reset()
	for i, f := range c.Files {
		d.WriteString(f.Name)
		d.Write(files[i])
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(acked))
	binary.LittleEndian.PutUint64(b[8:], uint64(written))
	d.Write(b[:])
	return d.Sum64()
}

// recover writes the image into dir, checks the segment order on it and
// runs recovery; it returns the recovered state's fingerprint.
func (r *recordedRun) recover(dir string, c *pmem.CrashPoint, files [][]byte) (uint64, error) {
	var names []string
	for _, f := range c.Files {
		names = append(names, f.Name)
	}
	if err := writeImage(dir, names, files); err != nil {
		return 0, err
	}
	if err := checkSealOrder(c, files); err != nil {
		return 0, err
	}
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: r.mode, SegmentSize: segmentSize, NoKeyIndex: crashNoKeyIndex})
	if err != nil {
		return 0, fmt.Errorf("recovery refused a possible crash state: %w", err)
	}
	fp := fingerprintOf(dumpKeyspace(ks))
	if err := ks.Close(); err != nil {
		return 0, err
	}
	return fp, nil
}

func (r *recordedRun) judge(fp uint64, acked, written int, st *checkStats) error {
	prefixes := r.prefix[fp]
	for _, p := range prefixes {
		if p >= acked && p <= written {
			if p == written {
				st.full++
			}
			return nil
		}
	}
	if len(prefixes) == 0 {
		return fmt.Errorf("recovered a state that is no prefix of the units (a half-applied unit or a lost one in the middle)")
	}
	p := prefixes[len(prefixes)-1]
	return fmt.Errorf("recovered the state after %v units, want one of %d..%d (acknowledged..begun); the first unit missing, unit %d, was %s",
		prefixes, acked, written, p, r.units[min(p, len(r.units)-1)].desc)
}

// writeSparse writes b to a new file, skipping all-zero pages.
func writeSparse(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	const page = 4096
	var zero [page]byte
	for p := 0; p < len(b); p += page {
		end := min(p+page, len(b))
		if bytes.Equal(b[p:end], zero[:end-p]) {
			continue
		}
		if _, err := f.WriteAt(b[p:end], int64(p)); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Arena layout (package arena's doc): the seal word at offset 64, records
// from offset 4096.
const (
	sealWordOffset = 64
	firstRecord    = 4096
)

// checkSealOrder: in id order, a segment followed by one holding a record
// must be sealed.
func checkSealOrder(c *pmem.CrashPoint, files [][]byte) error {
	idx := make([]int, len(c.Files))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return c.Files[idx[a]].Name < c.Files[idx[b]].Name })
	for j := 0; j+1 < len(idx); j++ {
		cur, next := files[idx[j]], files[idx[j+1]]
		if len(next) < firstRecord+8 || binary.LittleEndian.Uint64(next[firstRecord:]) == 0 {
			continue
		}
		if binary.LittleEndian.Uint64(cur[sealWordOffset:]) == 0 {
			return fmt.Errorf("%s is not sealed although %s holds a record", c.Files[idx[j]].Name, c.Files[idx[j+1]].Name)
		}
	}
	return nil
}

// The model: the expected keyspace.

type mkey struct {
	db  int
	key string
}

type mval struct {
	typ  string
	str  string
	hash map[string]string
	set  map[string]bool
	list []string
	zset map[string]float64
}

type model map[mkey]*mval

func (m model) sortedKeys() []mkey {
	keys := make([]mkey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b mkey) int {
		if a.db != b.db {
			return a.db - b.db
		}
		return strings.Compare(a.key, b.key)
	})
	return keys
}

func (m model) dump() string {
	var sb strings.Builder
	for _, k := range m.sortedKeys() {
		v := m[k]
		var items []string
		switch v.typ {
		case keyspace.TypeString:
			items = []string{v.str}
		case keyspace.TypeHash:
			for f, x := range v.hash {
				items = append(items, f+"="+x)
			}
		case keyspace.TypeSet:
			for x := range v.set {
				items = append(items, x)
			}
		case keyspace.TypeZSet:
			for x, s := range v.zset {
				items = append(items, x+"="+strconv.FormatFloat(s, 'g', -1, 64))
			}
		case keyspace.TypeList:
			items = v.list
		}
		if v.typ != keyspace.TypeList {
			sort.Strings(items)
		}
		dumpLine(&sb, k.db, k.key, v.typ, items)
	}
	return sb.String()
}

// dumpLine writes one key of a state dump: db, key, type and the items
// (sorted unless a list), each with its length.
func dumpLine(sb *strings.Builder, db int, key, typ string, items []string) {
	sb.WriteString(strconv.Itoa(db))
	sb.WriteByte('/')
	sb.WriteString(key)
	sb.WriteByte(' ')
	sb.WriteString(typ)
	for _, it := range items {
		sb.WriteByte(' ')
		sb.WriteString(strconv.Itoa(len(it)))
		sb.WriteByte(':')
		sb.WriteString(it)
	}
	sb.WriteByte('\n')
}

func (m model) fingerprint() uint64 { return fingerprintOf(m.dump()) }

func fingerprintOf(dump string) uint64 { return xxhash.Sum64String(dump) }

// dumpKeyspace renders ks in the form of model.dump.
func dumpKeyspace(ks *keyspace.Keyspace) string {
	ks.Lock()
	defer ks.Unlock()
	return dumpLocked(ks)
}

// dumpLocked is dumpKeyspace with the keyspace lock held.
func dumpLocked(ks *keyspace.Keyspace) string {
	var sb strings.Builder
	for db := 0; db < keyspace.NumDBs; db++ {
		var keys []string
		ks.Keys(db, func(k string) { keys = append(keys, k) })
		sort.Strings(keys)
		for _, k := range keys {
			key := []byte(k)
			typ := ks.Type(db, key)
			var items []string
			var err error
			switch typ {
			case keyspace.TypeString:
				var v []byte
				v, _, err = ks.Get(db, key)
				items = []string{string(v)}
			case keyspace.TypeHash:
				err = ks.HRange(db, key, func(f, v []byte) { items = append(items, string(f)+"="+string(v)) })
			case keyspace.TypeSet:
				items, err = ks.SMembers(db, key)
			case keyspace.TypeZSet:
				var z *keyspace.ZSet
				z, err = ks.ZSetAt(db, key)
				if z != nil {
					for x := z.At(0); x != 0; x = z.Next(x) {
						items = append(items, string(z.Member(x))+"="+strconv.FormatFloat(z.ScoreOf(x), 'g', -1, 64))
					}
				}
			case keyspace.TypeList:
				var l keyspace.List
				l, err = ks.List(db, key)
				for i := 0; i < l.Len(); i++ {
					items = append(items, string(l.At(i)))
				}
			}
			if err != nil {
				items = append(items, "ERROR "+err.Error())
			}
			if typ != keyspace.TypeList {
				sort.Strings(items)
			}
			dumpLine(&sb, db, k, typ, items)
		}
	}
	return sb.String()
}

// The workload.

type workload struct {
	rng *rand.Rand
	ks  *keyspace.Keyspace
	m   model
	seq int
	// dry: update the model (and draw from rng) only, writing nothing, to
	// bring a second workload to the state of the first after as many
	// units.
	dry     bool
	scratch keyspace.Batch
	// salt changes the filler of values but not their lengths.
	salt int
	// base is the number of units before this workload's first (cleaning
	// passes come every 25 units counted from the first run's start).
	base int
}

// batch is the batch of the next commit (a throwaway one when dry).
func (w *workload) batch() *keyspace.Batch {
	if w.dry {
		w.scratch.Reset()
		return &w.scratch
	}
	return w.ks.NewBatch()
}

func (w *workload) commit(b *keyspace.Batch) error {
	if w.dry || b.Len() == 0 {
		return nil
	}
	return w.ks.Commit(b)
}

// unit performs one atomic unit (with the keyspace lock held) on ks and the
// model, and describes it.
func (w *workload) unit() (string, error) {
	w.seq++
	r := w.rng.IntN(100)
	switch {
	case r < 8:
		// A MULTI/EXEC block: 2-4 commits in one transaction group.
		if !w.dry {
			w.ks.BeginTxn()
		}
		n := 2 + w.rng.IntN(3)
		var parts []string
		for i := 0; i < n; i++ {
			b := w.batch()
			parts = append(parts, w.op(b, w.rng.IntN(60)))
			if err := w.commit(b); err != nil {
				return "txn", err
			}
		}
		desc := "txn[" + strings.Join(parts, "; ") + "]"
		if w.dry {
			return desc, nil
		}
		return desc, w.ks.EndTxn()
	case r < 10:
		// Large values: a record of several cache lines per key.
		b := w.batch()
		n := 2 + w.rng.IntN(4)
		for i := 0; i < n; i++ {
			db, k := w.key("s", 25)
			v := w.value(1000 + w.rng.IntN(5000))
			b.Set(db, []byte(k), []byte(v), 0)
			w.m[mkey{db, k}] = &mval{typ: keyspace.TypeString, str: v}
		}
		return fmt.Sprintf("big mset of %d", n), w.commit(b)
	default:
		b := w.batch()
		desc := w.op(b, r)
		if b.Len() == 0 {
			return desc + " (nothing)", nil
		}
		return desc, w.commit(b)
	}
}

// key picks a key of prefix p (one of n) in db 0, 1 or 2.
func (w *workload) key(p string, n int) (int, string) {
	return w.rng.IntN(3), fmt.Sprintf("%s%d", p, w.rng.IntN(n))
}

// value is a value that names the unit (so every unit's effect is unique)
// of about n bytes.
func (w *workload) value(n int) string {
	s := fmt.Sprintf("u%d.%d-", w.seq, w.rng.IntN(1000))
	if len(s) < n {
		s += strings.Repeat(string(rune('a'+(w.seq+w.salt)%26)), n-len(s))
	}
	return s
}

func (w *workload) existing(typ string) (mkey, *mval, bool) {
	var keys []mkey
	for _, k := range w.m.sortedKeys() {
		if typ == "" || w.m[k].typ == typ {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return mkey{}, nil, false
	}
	k := keys[w.rng.IntN(len(keys))]
	return k, w.m[k], true
}

func sortedMembers[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// op adds one command's operations to b (r picks the command) and applies
// them to the model.
func (w *workload) op(b *keyspace.Batch, r int) string {
	switch {
	case r < 30: // SET
		db, k := w.key("s", 25)
		v := w.value(8 + w.rng.IntN(300))
		b.Set(db, []byte(k), []byte(v), 0)
		w.m[mkey{db, k}] = &mval{typ: keyspace.TypeString, str: v}
		return "set " + k
	case r < 40: // MSET
		n := 2 + w.rng.IntN(4)
		for i := 0; i < n; i++ {
			db, k := w.key("s", 25)
			v := w.value(8 + w.rng.IntN(100))
			b.Set(db, []byte(k), []byte(v), 0)
			w.m[mkey{db, k}] = &mval{typ: keyspace.TypeString, str: v}
		}
		return fmt.Sprintf("mset of %d", n)
	case r < 48: // DEL
		k, _, ok := w.existing("")
		if !ok {
			return "del (no key)"
		}
		b.Del(k.db, []byte(k.key))
		delete(w.m, k)
		return "del " + k.key
	case r < 56: // HSET
		db, k := w.key("h", 6)
		mk := mkey{db, k}
		v := w.m[mk]
		if v == nil {
			v = &mval{typ: keyspace.TypeHash, hash: map[string]string{}}
			w.m[mk] = v
		}
		var pairs [][]byte
		for i := 1 + w.rng.IntN(3); i > 0; i-- {
			f := fmt.Sprintf("f%d", w.rng.IntN(8))
			x := w.value(4 + w.rng.IntN(40))
			pairs = append(pairs, []byte(f), []byte(x))
			v.hash[f] = x
		}
		b.HSet(db, []byte(k), pairs...)
		return "hset " + k
	case r < 60: // HDEL
		k, v, ok := w.existing(keyspace.TypeHash)
		if !ok {
			return "hdel (no hash)"
		}
		fields := sortedMembers(v.hash)
		f := fields[w.rng.IntN(len(fields))]
		b.HDel(k.db, []byte(k.key), []byte(f))
		if delete(v.hash, f); len(v.hash) == 0 {
			delete(w.m, k)
		}
		return "hdel " + k.key + " " + f
	case r < 68: // SADD
		db, k := w.key("S", 6)
		mk := mkey{db, k}
		v := w.m[mk]
		if v == nil {
			v = &mval{typ: keyspace.TypeSet, set: map[string]bool{}}
			w.m[mk] = v
		}
		var ms [][]byte
		for i := 1 + w.rng.IntN(3); i > 0; i-- {
			x := fmt.Sprintf("m%d", w.rng.IntN(12))
			ms = append(ms, []byte(x))
			v.set[x] = true
		}
		b.SAdd(db, []byte(k), ms...)
		return "sadd " + k
	case r < 72: // SREM
		k, v, ok := w.existing(keyspace.TypeSet)
		if !ok {
			return "srem (no set)"
		}
		ms := sortedMembers(v.set)
		x := ms[w.rng.IntN(len(ms))]
		b.SRem(k.db, []byte(k.key), []byte(x))
		if delete(v.set, x); len(v.set) == 0 {
			delete(w.m, k)
		}
		return "srem " + k.key + " " + x
	case r < 80: // RPUSH
		db, k := w.key("l", 6)
		mk := mkey{db, k}
		v := w.m[mk]
		if v == nil {
			v = &mval{typ: keyspace.TypeList}
			w.m[mk] = v
		}
		var xs [][]byte
		for i := 1 + w.rng.IntN(3); i > 0; i-- {
			x := w.value(4 + w.rng.IntN(30))
			xs = append(xs, []byte(x))
			v.list = append(v.list, x)
		}
		b.RPush(db, []byte(k), xs...)
		return "rpush " + k
	case r < 84: // LPOP
		k, v, ok := w.existing(keyspace.TypeList)
		if !ok {
			return "lpop (no list)"
		}
		b.LPop(k.db, []byte(k.key), 1)
		if v.list = v.list[1:]; len(v.list) == 0 {
			delete(w.m, k)
		}
		return "lpop " + k.key
	case r < 92: // ZADD
		db, k := w.key("z", 6)
		mk := mkey{db, k}
		v := w.m[mk]
		if v == nil {
			v = &mval{typ: keyspace.TypeZSet, zset: map[string]float64{}}
			w.m[mk] = v
		}
		var ms [][]byte
		var scores []float64
		seen := map[string]bool{}
		for i := 1 + w.rng.IntN(3); i > 0; i-- {
			x := fmt.Sprintf("z%d", w.rng.IntN(12))
			if seen[x] {
				continue
			}
			seen[x] = true
			s := float64(w.seq) + float64(w.rng.IntN(100))/8
			ms, scores = append(ms, []byte(x)), append(scores, s)
			v.zset[x] = s
		}
		b.ZAdd(db, []byte(k), ms, scores)
		return "zadd " + k
	case r < 96: // ZREM
		k, v, ok := w.existing(keyspace.TypeZSet)
		if !ok {
			return "zrem (no zset)"
		}
		ms := sortedMembers(v.zset)
		x := ms[w.rng.IntN(len(ms))]
		b.ZRem(k.db, []byte(k.key), [][]byte{[]byte(x)})
		if delete(v.zset, x); len(v.zset) == 0 {
			delete(w.m, k)
		}
		return "zrem " + k.key + " " + x
	default: // FLUSHDB 2
		b.FlushDB(2)
		for k := range w.m {
			if k.db == 2 {
				delete(w.m, k)
			}
		}
		return "flushdb 2"
	}
}

// crashNoKeyIndex: the images are of the arena's segments, whose stores,
// flushes and fences the trace records; the key index (on by default)
// maps files of its own that the image builder does not model, so these
// tests run without it (the index's crash tests are in keyindex and e2e).
const crashNoKeyIndex = true

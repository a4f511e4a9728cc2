package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/faultfs"
	"github.com/redis/go-redis/v9"
)

// powerCutCuts is how many power cuts TestPowerCut makes in msync mode:
// PERSIMMON_POWERCUT_CUTS (make test-long sets 200), else a short sample.
func powerCutCuts(t *testing.T) int {
	if s := os.Getenv("PERSIMMON_POWERCUT_CUTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PERSIMMON_POWERCUT_CUTS=%q: want a positive count", s)
		}
		return n
	}
	if testing.Short() {
		return 3
	}
	return 6
}

// powerCutSyncLatency is how long every sync takes on the power-cut
// mount (faultfs.Options.SyncLatency): a few times what one fdatasync
// costs on the disks here (150-240 µs), so that a reply sent while its
// sync is still running has time to reach the client before the power
// goes off.
const powerCutSyncLatency = time.Millisecond

// powerCutRig is a faultfs mount with the server's data directory on it.
type powerCutRig struct {
	fs  *faultfs.FS
	dir string
}

func newPowerCutRig(t *testing.T, seed uint64) *powerCutRig {
	t.Helper()
	dev, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("power-cut tests need /dev/fuse (FUSE), which cannot be opened here: %v", err)
	}
	dev.Close()
	base := t.TempDir()
	backing, mnt := filepath.Join(base, "backing"), filepath.Join(base, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := faultfs.Mount(backing, mnt, faultfs.Options{Seed: seed, StrictNames: true, SyncLatency: powerCutSyncLatency})
	if err != nil {
		t.Fatal(err)
	}
	// Registered before any server's cleanup, so it runs after the
	// servers are gone.
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	// The server creates the data directory itself, so the mount keeps
	// the letter of POSIX (StrictNames: a directory fsync commits only that
	// directory's own entries): the mkdir survives a cut only because the
	// server fsyncs the parent of a directory it creates (arena.Open).
	// Without that, the first cut lost the directory and everything in it
	// (measured 12-01: 1000 acknowledged SETs, 0 keys after the cut).
	return &powerCutRig{fs: f, dir: filepath.Join(mnt, "data")}
}

// powerCutTally counts what the checks after the cuts found.
type powerCutTally struct {
	acks    int64    // writes acknowledged before the kills
	acked   int64    // checks of acknowledged writes (each is checked again after every later cut)
	lost    int      // acknowledged writes missing
	half    int      // atomic units (MSET, EXEC, SMOVE) half-applied
	phantom int      // values past anything written (never correct)
	checks  int      // restarts whose holdings were checked against the model
	lossy   int      // of those, checks that found an acknowledged write lost
	samples []string // the first few findings, for the log
}

func (p *powerCutTally) add(kind *int, format string, args ...any) {
	*kind++
	if len(p.samples) < 8 {
		p.samples = append(p.samples, fmt.Sprintf(format, args...))
	}
}

// TestPowerCut cuts the power under the server (faultfs: everything not
// made durable by fsync, fdatasync or msync is dropped, or a random subset
// of the unsynced pages or of their sectors kept) while concurrent writers run SET, INCR,
// MSET, MULTI/EXEC, HINCRBY, RPUSH, SADD, ZINCRBY and SMOVE, restarts it
// on what survived and checks the acknowledged writes. In msync mode no
// acknowledged write is lost and no unit half-applied, over every cut. In
// pmem mode on this non-DAX filesystem acknowledged writes are lost: the
// negative control that shows the harness sees loss.
//
// Mutation check (12-01, each by hand in pmem.Region.Msync, 4-6 cuts):
// MS_ASYNC instead of MS_SYNC, not syncing the first page of a multi-page
// range, not syncing the last one, and skipping every 7th msync each made
// msync mode fail at the first cut (the server refused to start on a
// zeroed header, a zeroed record inside a sealed segment or a checksum
// mismatch; a server that refuses to start fails this test).
//
// The ack-before-sync control (12-03, 6 cuts a run, filler load): with
// the power off before the kill and 1 ms syncs, 10 of 10 runs found lost
// acknowledged writes (27 of 60 cuts), none a server refusing to start;
// killing before the power-off, 5 of 5 runs (10 of 30 cuts); with syncs
// of no latency, 2 of 5 runs (4 of 30 cuts).
func TestPowerCut(t *testing.T) {
	seed := crashSeed(t)
	t.Run("msync", func(t *testing.T) {
		cuts := powerCutCuts(t)
		start := time.Now()
		tally, stats, err := runPowerCuts(t, serverBin, "msync", cuts, seed, true)
		if err != nil {
			t.Fatalf("msync mode: the server does not start after a power cut: %v", err)
		}
		t.Logf("msync: %d cuts in %v, %d writes acknowledged, %d checks of acknowledged writes, %d lost, %d half-applied units, %d phantom values; faultfs dropped %d unsynced pages, kept %d and tore %d (random modes) in %d files, undid %d namespace ops; %d WRITE, %d FSYNC, %d FSYNCDIR requests, %d refused after the power was off",
			cuts, time.Since(start).Round(time.Second), tally.acks, tally.acked, tally.lost, tally.half, tally.phantom, stats.DroppedPages, stats.KeptPages, stats.TornPages, stats.Files, stats.UndoneOps, stats.writes, stats.fsyncs, stats.dirFsyncs, stats.refused)
		if tally.lost != 0 || tally.half != 0 || tally.phantom != 0 {
			t.Fatalf("msync mode after %d power cuts: %d acknowledged writes lost, %d half-applied units, %d phantom values: %s",
				cuts, tally.lost, tally.half, tally.phantom, strings.Join(tally.samples, "; "))
		}
		// A torn page lost part of what was not synced, as a dropped
		// one lost all of it: either shows a cut took unsynced data away
		// (6 cuts may all pick the tearing mode: dropped 0, torn 12).
		if stats.DroppedPages+stats.TornPages == 0 {
			t.Fatalf("no cut dropped or tore a page: the cuts tested nothing")
		}
	})
	// pmem mode persists with cache-line flushes, which on a page-cache
	// filesystem make nothing durable: the headers of new segments and
	// every record are lost at a cut. After a drop-all cut the newest
	// segment is all zeros, is taken for a half-created one and removed,
	// and the server starts empty: the loss is counted write by write
	// (no filler load, so there is one segment). After a keep-random cut
	// some record pages survive under a zeroed header and the server
	// refuses to start (bad segment magic), which counts as losing
	// everything the model holds.
	t.Run("pmem-loses", func(t *testing.T) {
		cuts := 3
		tally, stats, err := runPowerCuts(t, serverBin, "pmem", cuts, seed, false)
		if err != nil {
			t.Logf("pmem: the server refused to start after a cut: %v", err)
		}
		t.Logf("pmem (non-DAX): %d cuts, %d writes acknowledged, %d checks of acknowledged writes, %d lost, %d half-applied units, %d phantom values (%s); faultfs dropped %d pages; %d WRITE, %d FSYNC requests",
			cuts, tally.acks, tally.acked, tally.lost, tally.half, tally.phantom, strings.Join(tally.samples, "; "), stats.DroppedPages, stats.writes, stats.fsyncs)
		if tally.lost == 0 {
			t.Fatalf("pmem mode on a non-DAX filesystem lost nothing over %d power cuts: the harness cannot see loss", cuts)
		}
	})
	// The server built with persimmon_ackbeforesync (pmem/ackbeforesync.go)
	// acknowledges in msync mode before the sync: every msync returns at
	// once and runs a moment later. kill -9 cannot tell it from a correct
	// build (the syncs all happen); a power cut must. The cuts are the
	// msync case's, filler load included.
	t.Run("msync-ack-before-sync", func(t *testing.T) {
		bin := serverBinTagged(t, "persimmon_ackbeforesync")
		cuts := 6 // about half the cuts find a loss: 6 make a run that finds none rare
		tally, stats, err := runPowerCuts(t, bin, "msync", cuts, seed, true)
		if err != nil {
			t.Logf("ack-before-sync: the server refused to start after a cut: %v", err)
		}
		t.Logf("msync, acknowledging before the sync: %d cuts (%d of %d restarts found a loss), %d writes acknowledged, %d checks of acknowledged writes, %d lost, %d half-applied units, %d phantom values (%s); faultfs dropped %d pages; %d WRITE, %d FSYNC requests, %d refused after the power was off",
			cuts, tally.lossy, tally.checks, tally.acks, tally.acked, tally.lost, tally.half, tally.phantom, strings.Join(tally.samples, "; "), stats.DroppedPages, stats.writes, stats.fsyncs, stats.refused)
		if tally.lost == 0 {
			t.Fatalf("a server that acknowledges before its sync lost nothing over %d power cuts: the harness cannot see acknowledged-before-durable writes", cuts)
		}
	})
}

// powerCutStats sums faultfs's counts over a run.
type powerCutStats struct {
	faultfs.CutStats
	writes, fsyncs, dirFsyncs, refused int64
}

// runPowerCuts runs cuts rounds of: start the server (the binary bin) on
// the mount, check the model, run the writers (and, with filler, a
// pipelined load that makes segments rotate and be cleaned) until a
// random number of writes is acknowledged, turn the power off (from then
// on no write or sync reaches the backing files), SIGKILL the server,
// and cut (in turn: drop every unsynced page, keep a random half of
// them, keep a random half of their 512-byte sectors). Every write
// acknowledged until the kill is in the model: once the power is off a
// sync fails, so a correct server acknowledges nothing more. A last
// start checks the last cut. If the server refuses to start after a
// cut, every write of the model counts as lost, the run stops and
// refused holds the error.
func runPowerCuts(t *testing.T, bin, mode string, cuts int, seed uint64, filler bool) (tally *powerCutTally, total powerCutStats, refused error) {
	rng := rand.New(rand.NewPCG(seed, 2))
	rig := newPowerCutRig(t, seed)
	m := newCrashModel()
	tally = &powerCutTally{}
	defer func() {
		st := rig.fs.Stats()
		total.writes, total.fsyncs, total.dirFsyncs, total.refused = st.Writes, st.Fsyncs, st.DirFsyncs, st.Refused
	}()
	for round := 0; round <= cuts; round++ {
		s, err := launchServerBin(t, bin, rig.dir, "--durability", mode, "--segment-size", "256kb")
		if err != nil {
			n := len(m.sets) + len(m.counter) + len(m.mset) + len(m.txn) + len(m.hcounter) + len(m.listLen) + len(m.zscore) + len(m.smove)
			for _, ms := range m.members {
				n += len(ms)
			}
			tally.acked += int64(n)
			tally.lost += n
			return tally, total, fmt.Errorf("round %d: %w", round, err)
		}
		checkPowerCutModel(t, s, m, round, tally)
		if round == cuts {
			s.kill()
			break
		}
		var load <-chan struct{}
		if filler {
			load = startPowerCutFiller(s, round)
		}
		// Power off first, then kill: killed first, the server's syncs in
		// flight would still complete (faultfs.FS.Cut).
		target := int64(50 + rng.IntN(1500))
		tally.acks += runUntilStopped(t, s, m, round, target, func() { rig.fs.PowerOff(); s.kill() })
		if load != nil {
			<-load
		}
		if round == cuts-1 {
			// Every kind of write was acknowledged before the last cut, so
			// the checks after it had something to check.
			if len(m.sets) == 0 || len(m.counter) == 0 || len(m.mset) == 0 || len(m.txn) == 0 ||
				len(m.hcounter) == 0 || len(m.listLen) == 0 || len(m.members) == 0 || len(m.zscore) == 0 || len(m.smove) == 0 {
				t.Fatalf("some write kinds were never acknowledged: %d sets %d counters %d mset %d txn %d hash %d list %d set %d zset %d smove",
					len(m.sets), len(m.counter), len(m.mset), len(m.txn), len(m.hcounter), len(m.listLen), len(m.members), len(m.zscore), len(m.smove))
			}
		}
		cutMode := []faultfs.CutMode{faultfs.DropAll, faultfs.KeepRandom, faultfs.TearSectors}[round%3]
		cs, err := rig.fs.Cut(cutMode)
		if err != nil {
			t.Fatalf("round %d: cut: %v", round, err)
		}
		total.DroppedPages += cs.DroppedPages
		total.KeptPages += cs.KeptPages
		total.TornPages += cs.TornPages
		total.UndoneOps += cs.UndoneOps
		total.Files += cs.Files
	}
	return tally, total, nil
}

// powerCutFillers is how many filler connections run beside the writers.
const powerCutFillers = 3

// startPowerCutFiller runs powerCutFillers connections that overwrite 64
// keys each with 2 KB values in pipelines of 16 until the server dies, so
// that segments fill, rotate and are cleaned (created and deleted) between
// cuts and a cut finds unsynced pages in flight. Their writes are load,
// not part of the model. The channel closes when they all stop.
func startPowerCutFiller(s *server, round int) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for f := 0; f < powerCutFillers; f++ {
		wg.Add(1)
		go fillUntilKilled(s, round, f, &wg)
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// fillUntilKilled is one filler connection.
func fillUntilKilled(s *server, round, f int, wg *sync.WaitGroup) {
	defer wg.Done()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
	defer c.Close()
	val := strings.Repeat(fmt.Sprintf("filler-%d-", round), 2048/10)
	for i := 0; ; i++ {
		if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := 0; j < 16; j++ {
				p.Set(ctx, fmt.Sprintf("filler:%d:%d", f, (i*16+j)%64), val, 0)
			}
			return nil
		}); err != nil {
			return // the server was killed
		}
	}
}

// checkPowerCutModel compares what the restarted server holds with what
// was acknowledged before the cut, counts losses, half-applied units and
// phantoms into tally, then takes what the server holds as the model for
// the next round (so a loss is counted once).
func checkPowerCutModel(t *testing.T, s *server, m *crashModel, round int, tally *powerCutTally) {
	t.Helper()
	c := s.client()
	m.mu.Lock()
	defer m.mu.Unlock()
	if round > 0 {
		tally.checks++
		lost := tally.lost
		defer func() {
			if tally.lost > lost {
				tally.lossy++
			}
		}()
	}

	keys := make([]string, 0, len(m.sets))
	for k := range m.sets {
		keys = append(keys, k)
	}
	gets := make([]*redis.StringCmd, len(keys))
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			gets[i] = p.Get(ctx, k)
		}
		return nil
	}); err != nil && err != redis.Nil {
		t.Fatalf("round %d: %v", round, err)
	}
	for i, k := range keys {
		tally.acked++
		if got := gets[i].Val(); got != m.sets[k] {
			tally.add(&tally.lost, "round %d: SET %s=%s lost (got %q)", round, k, m.sets[k], got)
			delete(m.sets, k)
		}
	}
	// A counter-like value n acknowledged: the server must hold n or n+1
	// (one unacknowledged write may have landed).
	counter := func(what string, got, n int64) int64 {
		tally.acked++
		switch {
		case got < n:
			tally.add(&tally.lost, "round %d: %s = %d, acknowledged %d", round, what, got, n)
		case got > n+1:
			tally.add(&tally.phantom, "round %d: %s = %d, acknowledged %d (at most one more was sent)", round, what, got, n)
		}
		return got
	}
	for k, n := range m.counter {
		got, _ := c.Get(ctx, k).Int64()
		m.counter[k] = counter("INCR "+k, got, n)
	}
	for k, n := range m.hcounter {
		got, _ := c.HGet(ctx, k, "n").Int64()
		m.hcounter[k] = counter("HINCRBY "+k, got, n)
	}
	for k, n := range m.listLen {
		got, _ := c.LLen(ctx, k).Result()
		m.listLen[k] = counter("RPUSH "+k+" length", got, n)
	}
	for k, f := range m.zscore {
		got, _ := c.ZScore(ctx, k, "m").Result()
		m.zscore[k] = float64(counter("ZINCRBY "+k, int64(got), int64(f)))
	}
	for g, v := range m.mset {
		tally.acked++
		vals, err := c.MGet(ctx, g+":a", g+":b", g+":c").Result()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		a, b, cc := fmt.Sprint(vals[0]), fmt.Sprint(vals[1]), fmt.Sprint(vals[2])
		if a != b || b != cc {
			tally.add(&tally.half, "round %d: MSET %s half-applied: %s %s %s", round, g, a, b, cc)
		}
		got, _ := strconv.ParseInt(a, 10, 64)
		if got < v {
			tally.add(&tally.lost, "round %d: MSET %s = %d, acknowledged %d", round, g, got, v)
		}
		m.mset[g] = got
	}
	for g, v := range m.txn {
		tally.acked++
		a, _ := c.Get(ctx, g+":a").Int64()
		b, _ := c.Get(ctx, g+":b").Int64()
		if a != b {
			tally.add(&tally.half, "round %d: EXEC %s half-applied: a=%d b=%d", round, g, a, b)
		}
		if a < v {
			tally.add(&tally.lost, "round %d: EXEC %s = %d, acknowledged %d", round, g, a, v)
		}
		m.txn[g] = a
	}
	for k, ms := range m.members {
		checks := make([]*redis.BoolCmd, len(ms))
		if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, member := range ms {
				checks[i] = p.SIsMember(ctx, k, member)
			}
			return nil
		}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var kept []string
		for i, member := range ms {
			tally.acked++
			if checks[i].Val() {
				kept = append(kept, member)
			} else {
				tally.add(&tally.lost, "round %d: SADD %s %s lost", round, k, member)
			}
		}
		m.members[k] = kept
	}
	for member, inA := range m.smove {
		tally.acked++
		w := strings.TrimPrefix(member, "mover:")
		gotA, _ := c.SIsMember(ctx, "smove:"+w+":a", member).Result()
		gotB, _ := c.SIsMember(ctx, "smove:"+w+":b", member).Result()
		switch {
		case gotA && gotB:
			tally.add(&tally.half, "round %d: SMOVE %s is in both sets", round, member)
		case !gotA && !gotB:
			tally.add(&tally.lost, "round %d: SMOVE %s is in neither set (last acknowledged in a: %v)", round, member, inA)
			delete(m.smove, member) // the next SMOVE would fail: start over with SADD
			continue
		}
		m.smove[member] = gotA
	}
}

// TestPowerCutAfterCleanShutdown: a clean SHUTDOWN makes everything durable
// in every mode, as redis-server fsyncs its AOF at shutdown: pmem mode off
// DAX (whose flushes reach only the page cache, TestPowerCut/pmem-loses)
// and none mode write their segments back at shutdown, so a power cut
// right after it loses nothing and start-up accepts the clean-shutdown
// mark with the records it vouches for.
func TestPowerCutAfterCleanShutdown(t *testing.T) {
	for _, mode := range []string{"pmem", "none"} {
		t.Run(mode, func(t *testing.T) {
			rig := newPowerCutRig(t, crashSeed(t))
			s := startServer(t, rig.dir, "--durability", mode, "--segment-size", "256kb")
			c := s.client()
			ctx := context.Background()
			const n = 600 // about 1.3 MB: several segments, sealed and active
			val := strings.Repeat("v", 2000)
			for i := 0; i < n; i++ {
				if err := c.Set(ctx, fmt.Sprint("k", i), fmt.Sprint(i, val), 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			if err := s.stop(); err != nil {
				t.Fatalf("clean stop: %v", err)
			}
			if _, err := rig.fs.Cut(faultfs.DropAll); err != nil {
				t.Fatal(err)
			}
			s = startServer(t, rig.dir, "--durability", mode, "--segment-size", "256kb")
			c = s.client()
			defer c.Close()
			for i := 0; i < n; i++ {
				got, err := c.Get(ctx, fmt.Sprint("k", i)).Result()
				if err != nil || got != fmt.Sprint(i, val) {
					t.Fatalf("%s mode, power cut after a clean shutdown: k%d = %.20q, %v; want it kept", mode, i, got, err)
				}
			}
		})
	}
}

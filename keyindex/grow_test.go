package keyindex

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// driveGrowth runs one GrowStep of budget slots as the keyspace's grower
// does (the persist job inline: a test has no lock to release); it
// returns the phase GrowStep reported.
func driveGrowth(t *testing.T, ix *Index, budget int) GrowPhase {
	t.Helper()
	phase, err := ix.GrowStep(budget)
	if err != nil {
		t.Fatal(err)
	}
	if phase == GrowNeedsPersist {
		j := ix.BeginGrowPersist()
		if err := ix.EndGrowPersist(j, j.Run()); err != nil {
			t.Fatal(err)
		}
	}
	return phase
}

// TestIncrementalGrowth: random writes, checkpoints and growth steps
// interleaved (so checkpoints land while slots are being copied and the
// delta is caught up from both sides of the copy cursor); after every
// checkpoint and after a reopen the table is the model, and the growths
// happened in steps, not in one go.
func TestIncrementalGrowth(t *testing.T) {
	l := newMemLog()
	path := filepath.Join(t.TempDir(), "idx")
	ix, _, _, err := Open(path, l.opts())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	steps, finished := 0, 0
	for round := 0; round < 40; round++ {
		if err := randomOps(r, l, ix, 1500, 4000+round*800, 0); err != nil {
			t.Fatal(err)
		}
		if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
			t.Fatal(err)
		}
		check(t, ix, l, l.model(len(l.recs)))
		grows := ix.Grows
		for i := 0; i < 6; i++ {
			if driveGrowth(t, ix, 1024) != GrowIdle {
				steps++
			}
		}
		if ix.Grows > grows {
			finished++
		}
		check(t, ix, l, l.model(len(l.recs)))
	}
	if finished == 0 || steps < 3*finished {
		t.Fatalf("%d growths finished by steps, %d steps: not incremental (%+v)", finished, steps, ix.Stats())
	}
	ix.Close()
	ix, _, ok, err := Open(path, l.opts())
	if err != nil || !ok {
		t.Fatalf("reopen: %v %v", err, ok)
	}
	defer ix.Close()
	check(t, ix, l, l.model(len(l.recs)))
	t.Logf("%d records, %d growths by %d steps, %+v", len(l.recs), finished, steps, ix.Stats())
}

// TestFinishInsideApplyKeepsOneSlot: a checkpoint whose writes outrun a
// migration finishes it inside apply (the stall). That write is already in
// the migration's delta, so the finish puts it into the new table; the
// write's retry on the new table must find that slot, not trust the
// lookup's hint (taken on the old table: "no slot", or the old location)
// and add a second slot naming the same record. Two slots for one key made
// KEYS and SCAN list it twice, and a later overwrite or DEL changed only
// one of them, so the old value came back (found on a replica's full
// sync: RESTORE of 100,000 keys, goroutine I/O).
func TestFinishInsideApplyKeepsOneSlot(t *testing.T) {
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	stage := func(k string) {
		ix.Get([]byte(k)) // as the keyspace does before a write: the hint
		loc, _ := l.add(k, false)
		if err := ix.Stage([]byte(k), loc, false); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; !ix.WantsGrow(); i++ {
		stage(fmt.Sprintf("a%d", i))
		if i%64 == 63 {
			if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
		t.Fatal(err)
	}
	if driveGrowth(t, ix, 16) != GrowCopying || !ix.Growing() {
		t.Fatalf("no migration in progress after one small step")
	}
	grows := ix.Grows
	n := len(ix.slots)
	for i := 0; i < n; i++ {
		stage(fmt.Sprintf("a%d", i)) // overwrites (hint: the old location) ...
		stage(fmt.Sprintf("b%d", i)) // ... and new keys (hint: no slot)
	}
	if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
		t.Fatal(err)
	}
	if ix.Grows == grows {
		t.Fatalf("the checkpoint did not finish the migration inside apply (%+v)", ix.Stats())
	}
	check(t, ix, l, l.model(len(l.recs)))
}

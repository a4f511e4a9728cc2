package keyindex

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestCheckpointSteps: checkpoints in steps (FreezeCheckpoint, then
// CheckpointStep of random budgets) with writes, deletions and lookups
// between the steps, growths in one go inside a step and migrations
// stepped between them, and now and then a checkpoint in one go or a
// Close that finishes the one in steps (Settle). After every operation
// each key written answers as the log says, IsStaged and RangeStaged give
// every written key not yet in a done checkpoint once with its newest
// state, and Len counts the keys; after each checkpoint the table alone
// is the model; the file reopens at the last checkpoint.
func TestCheckpointSteps(t *testing.T) {
	l := newMemLog()
	o := l.opts()
	o.Capacity = 1024 // grows many times: in one go inside steps and by migrations
	path := filepath.Join(t.TempDir(), "idx")
	ix, _, _, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	cur := map[string]uint64{} // the log's newest state of each key written
	live := func() int {
		n := 0
		for _, v := range cur {
			if v != 0 {
				n++
			}
		}
		return n
	}
	lookupAll := func(when string, withLen bool) {
		t.Helper()
		for k, want := range cur {
			if got, ok := ix.Get([]byte(k)); got != want || ok != (want != 0) {
				t.Fatalf("%s: %s: Get %#x %v, want %#x", when, k, got, ok, want)
			}
		}
		if !withLen {
			return // Len settles: it would end a frozen job in flight
		}
		if n := ix.Len(); n != live() {
			t.Fatalf("%s: Len %d, want %d", when, n, live())
		}
	}
	var sinceCP map[string]bool // keys written since the last freeze or checkpoint in one go
	var frozenKeys map[string]bool
	checkStaged := func(when string) {
		t.Helper()
		seen := map[string]bool{}
		ix.RangeStaged(func(k string, loc uint64, _ bool) bool {
			if seen[k] {
				t.Fatalf("%s: RangeStaged gave %s twice", when, k)
			}
			seen[k] = true
			if loc != cur[k] {
				t.Fatalf("%s: RangeStaged: %s at %#x, want %#x", when, k, loc, cur[k])
			}
			return true
		})
		for k := range sinceCP {
			if !seen[k] || !ix.IsStaged([]byte(k)) {
				t.Fatalf("%s: %s written since the freeze: staged %v %v", when, k, seen[k], ix.IsStaged([]byte(k)))
			}
		}
		// ScanHomes in three steps gives every live key once, at its
		// newest location, whatever is frozen, stored or being stored.
		got := map[string]int{}
		n := ix.Stats().Slots
		for _, r := range [][2]int{{0, n / 3}, {n / 3, 2 * n / 3}, {2 * n / 3, n}} {
			ix.ScanHomes(r[0], r[1], func(key []byte, loc uint64, _ bool) {
				if loc != cur[string(key)] {
					t.Fatalf("%s: ScanHomes: %s at %#x, want %#x", when, key, loc, cur[string(key)])
				}
				got[string(key)]++
			})
		}
		for k, v := range cur {
			if (v != 0) != (got[k] == 1) || got[k] > 1 {
				t.Fatalf("%s: ScanHomes gave %s %d times (location %#x)", when, k, got[k], v)
			}
		}
		if ix.Frozen() {
			for k := range frozenKeys {
				if !seen[k] || !ix.IsStaged([]byte(k)) {
					t.Fatalf("%s: frozen %s: staged %v %v", when, k, seen[k], ix.IsStaged([]byte(k)))
				}
			}
		}
	}
	write := func(n, keys int) {
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("key:%d", r.IntN(keys))
			// A write looks its key up first (the memo's path), and
			// sometimes not (Stage alone).
			if r.IntN(3) > 0 {
				if got, ok := ix.Get([]byte(k)); got != cur[k] || ok != (cur[k] != 0) {
					t.Fatalf("%s: Get %#x %v, want %#x", k, got, ok, cur[k])
				}
			}
			loc, _ := l.add(k, r.IntN(5) == 0)
			cur[k] = loc
			sinceCP[k] = true
			if err := ix.Stage([]byte(k), loc, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	cpAt := func() Checkpoint {
		return Checkpoint{LSN: uint64(len(l.recs)), Seg: 1, Off: l.next() & (1<<40 - 1)}
	}
	var lastCP uint64
	ended := 0
	onEnd := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
		ended++
	}
	steps, settled, grows, inStep, jobs := 0, 0, 0, 0, 0
	for round := 0; round < 40; round++ {
		keys := 500 + round*400
		sinceCP = map[string]bool{}
		write(300+r.IntN(1500), keys)
		cp := cpAt()
		fj, err := ix.FreezeCheckpoint(cp, onEnd)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := ix.Checkpointed(); !got.Applying || got.LSN != cp.LSN {
			t.Fatalf("round %d: after the freeze the block is %+v, want the applying block of %d", round, got, cp.LSN)
		}
		frozenKeys, sinceCP = sinceCP, map[string]bool{}
		checkStaged("frozen")
		if fj != nil {
			// A frozen job: its Run stores without the lock while this
			// goroutine (the lock's holder) writes, looks up, lists the
			// staged keys and tries the grower (which must wait). Run
			// with -race.
			jobs++
			ran := make(chan struct{})
			go func() { fj.Run(); close(ran) }()
			for i := 0; i < 3; i++ {
				write(r.IntN(200), keys)
				lookupAll(fmt.Sprintf("round %d, job in flight", round), false)
				checkStaged(fmt.Sprintf("round %d, job in flight", round))
				if phase, err := ix.GrowStep(4096); err != nil || phase != GrowWaitsCheckpoint && phase != GrowIdle {
					t.Fatalf("GrowStep with a frozen job in flight: %v %v", phase, err)
				}
			}
			if r.IntN(4) == 0 {
				<-ran // sometimes ended after its Run, sometimes by EndCheckpoint's wait
			}
			if err := ix.EndCheckpoint(fj); err != nil {
				t.Fatal(err)
			}
			if got, _ := ix.Checkpointed(); got.Applying || got.LSN != cp.LSN || ix.Frozen() || ix.InFlight() {
				t.Fatalf("round %d: after the frozen job the block is %+v (frozen %v), want %d done", round, got, ix.Frozen(), cp.LSN)
			}
			lastCP = cp.LSN
			lookupAll(fmt.Sprintf("round %d after the job", round), true)
			continue
		}
		settleAt := -1
		if round%7 == 3 {
			settleAt = r.IntN(4) // a checkpoint in one go (the cleaner's) finishes this one
		}
		for step := 0; ; step++ {
			if step == settleAt {
				if err := ix.Checkpoint(cpAt()); err != nil {
					t.Fatal(err)
				}
				settled++
				if ix.Frozen() || ix.InFlight() {
					t.Fatal("a checkpoint in one go left the one in steps pending")
				}
				if j, more, err := ix.CheckpointStep(10); j != nil || more || err != nil {
					t.Fatalf("a step after Settle: %v %v %v", j, more, err)
				}
				sinceCP = map[string]bool{}
				lastCP = uint64(len(l.recs))
				check(t, ix, l, l.model(len(l.recs)))
				break
			}
			g := ix.Grows
			j, more, err := ix.CheckpointStep(1 + r.IntN(200))
			if err != nil {
				t.Fatal(err)
			}
			steps++
			if ix.Grows != g {
				inStep++
			}
			if j != nil {
				if more || ix.Frozen() {
					t.Fatal("a step returned the job with more to store")
				}
				j.Run()
				if err := ix.EndCheckpoint(j); err != nil {
					t.Fatal(err)
				}
				if got, _ := ix.Checkpointed(); got.Applying || got.LSN != cp.LSN {
					t.Fatalf("round %d: the block is %+v, want %d done", round, got, cp.LSN)
				}
				lastCP = cp.LSN
				break
			}
			if !more {
				t.Fatal("no job and no more steps")
			}
			// Between steps: the commands (writes and lookups) and the
			// grower.
			write(r.IntN(60), keys)
			lookupAll(fmt.Sprintf("round %d step %d", round, step), true)
			checkStaged(fmt.Sprintf("round %d step %d", round, step))
			if r.IntN(3) == 0 {
				phase, err := ix.GrowStep(1 + r.IntN(4096))
				if err != nil {
					t.Fatal(err)
				}
				if phase == GrowNeedsPersist {
					gj := ix.BeginGrowPersist()
					if err := ix.EndGrowPersist(gj, gj.Run()); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		lookupAll(fmt.Sprintf("round %d done", round), true)
		if ix.Staged() == 0 {
			check(t, ix, l, l.model(len(l.recs)))
		}
		grows = ix.Grows
	}
	if ended < 40 {
		t.Fatalf("onEnd called %d times for 40 checkpoints", ended)
	}
	// Close finishes a checkpoint in steps left pending.
	write(500, 20000)
	fj, err := ix.FreezeCheckpoint(cpAt(), onEnd)
	if err != nil {
		t.Fatal(err)
	}
	lastCP = uint64(len(l.recs))
	if fj != nil {
		go fj.Run()
	} else if _, _, err := ix.CheckpointStep(5); err != nil {
		t.Fatal(err)
	}
	write(100, 20000)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, cp, ok, err := Open(path, o)
	if err != nil || !ok || cp.Applying || cp.LSN != lastCP {
		t.Fatalf("reopen: %+v %v %v, want the done checkpoint of %d", cp, ok, err, lastCP)
	}
	defer ix.Close()
	for _, rc := range l.recs[cp.LSN:] {
		if err := ix.Stage([]byte(rc.key), rc.loc, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Checkpoint(cpAt()); err != nil {
		t.Fatal(err)
	}
	check(t, ix, l, l.model(len(l.recs)))
	t.Logf("%d frozen jobs, %d steps, %d checkpoints in steps finished by one in one go, %d growths (%d inside a step)", jobs, steps, settled, grows, inStep)
	if grows < 3 || settled == 0 || inStep == 0 || jobs < 5 {
		t.Fatalf("%d growths, %d settled: the test covers too little", grows, settled)
	}
}

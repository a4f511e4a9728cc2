package keyindex

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// TestCheckpointJobConcurrent: a checkpoint's job (pages and final block)
// runs in another goroutine, held at its stages, while this goroutine (the
// caller's lock) goes on staging and looking keys up; lookups see the
// newest writes throughout, the block is the job's once it ends, a growth
// migration steps between checkpoints, Close waits for a job in flight,
// and the file reopens at the last checkpoint with the log after it
// replayed to the model. Run with -race: Run must touch nothing a caller
// uses.
func TestCheckpointJobConcurrent(t *testing.T) {
	l := newMemLog()
	o := l.opts()
	o.Mode = pmem.ModeMsync // Run's persist does real work
	held := make(chan string)
	release := make(chan struct{})
	holdAt := ""
	o.testHook = func(s string) {
		if s == holdAt {
			held <- s
			<-release
		}
	}
	path := filepath.Join(t.TempDir(), "idx")
	ix, _, _, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	cur := map[string]uint64{}
	write := func(n, keys int) {
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("key:%d", r.IntN(keys))
			if got, ok := ix.Get([]byte(k)); got != cur[k] || ok != (cur[k] != 0) {
				t.Fatalf("%s: Get %#x %v, want %#x", k, got, ok, cur[k])
			}
			loc, _ := l.add(k, r.IntN(4) == 0)
			cur[k] = loc
			if err := ix.Stage([]byte(k), loc, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	var lastCP uint64
	grows, waited := 0, 0
	for round := 0; round < 12; round++ {
		write(3000, 2000+round*1500)
		for i := 0; i < 4; i++ { // the grower, between checkpoints
			phase, err := ix.GrowStep(4096)
			if err != nil {
				t.Fatal(err)
			}
			if phase == GrowNeedsPersist {
				j := ix.BeginGrowPersist()
				if err := ix.EndGrowPersist(j, j.Run()); err != nil {
					t.Fatal(err)
				}
			}
		}
		holdAt = []string{"ckpt:pages", "ckpt:block"}[round%2]
		lsn := uint64(len(l.recs))
		j, err := ix.BeginCheckpoint(Checkpoint{LSN: lsn, Seg: 1, Off: l.next() & (1<<40 - 1)})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := ix.Checkpointed(); !got.Applying || got.LSN != lsn || !ix.InFlight() {
			t.Fatalf("round %d: in flight, the index's block is %+v (in flight %v), want the applying block of %d", round, got, ix.InFlight(), lsn)
		}
		ran := make(chan struct{})
		go func() { j.Run(); close(ran) }()
		if s := <-held; s != holdAt {
			t.Fatalf("held at %s", s)
		}
		write(2000, 3000+round*1500) // the job is held: these writes overlap it
		for i := 0; i < 4; i++ {     // the grower meanwhile: it must not wait for the job (it would hold the lock)
			phase, err := ix.GrowStep(4096)
			if err != nil {
				t.Fatal(err)
			}
			if phase == GrowNeedsPersist {
				gj := ix.BeginGrowPersist()
				if err := ix.EndGrowPersist(gj, gj.Run()); err != nil {
					t.Fatal(err)
				}
			}
			if phase == GrowWaitsCheckpoint {
				waited++
			}
		}
		if ix.Staged() == 0 {
			t.Fatal("nothing staged while the job was held")
		}
		if round == 11 {
			grows = ix.Grows
			// Close settles: it must not return before the job ends.
			closed := make(chan error)
			go func() { closed <- ix.Close() }()
			select {
			case err := <-closed:
				t.Fatalf("Close returned (%v) with the job held", err)
			default:
			}
			close(release)
			if err := <-closed; err != nil {
				t.Fatal(err)
			}
			<-ran
			lastCP = lsn
			break
		}
		release <- struct{}{}
		<-ran
		if err := ix.EndCheckpoint(j); err != nil {
			t.Fatal(err)
		}
		if got, _ := ix.Checkpointed(); got.Applying || got.LSN != lsn || ix.InFlight() {
			t.Fatalf("round %d: after the job, the index's block is %+v (in flight %v), want %d done", round, got, ix.InFlight(), lsn)
		}
		if err := ix.EndCheckpoint(j); err != nil { // ending it again only answers its error
			t.Fatal(err)
		}
		check(t, ix, l, l.model(len(l.recs)))
	}
	o.testHook = nil
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
	if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
		t.Fatal(err)
	}
	check(t, ix, l, l.model(len(l.recs)))
	t.Logf("%d growths; %d growth steps deferred while a job was in flight", grows, waited)
	if grows == 0 {
		t.Fatalf("no growth in %d records (%+v)", len(l.recs), ix.Stats())
	}
}

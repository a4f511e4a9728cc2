package keyspace_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// cursorState reads key of db as a comparable string (type, value, expiry),
// ok false when missing. Under the lock.
func cursorState(t *testing.T, ks *keyspace.Keyspace, db int, key []byte) (string, bool) {
	var s string
	switch typ := ks.Type(db, key); typ {
	case keyspace.TypeNone:
		return "", false
	case keyspace.TypeString:
		v, ok, err := ks.Get(db, key)
		if err != nil || !ok {
			t.Fatalf("GET %d %q: %v %v", db, key, ok, err)
		}
		s = "s:" + string(v)
	case keyspace.TypeHash:
		var fs []string
		if err := ks.HRange(db, key, func(f, v []byte) { fs = append(fs, string(f)+"="+string(v)) }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(fs)
		s = "h:" + strings.Join(fs, ",")
	default:
		t.Fatalf("%d %q: type %s", db, key, typ)
	}
	at, _ := ks.ExpireAt(db, key)
	return fmt.Sprintf("%s|%d", s, at), true
}

// TestKeyCursorModel: a KeyCursor walk (Next and NextStrings, chunk by
// chunk at random), with a BeforeWrite hook that
// copies a key's old state on its first write as a replication snapshot
// does, gives every key of the start instant exactly once with its state
// then, while random writes run between its chunks: sets (new keys, which
// grow the index table, and overwrites), deletions, string patches (a key
// moving from the index to DRAM), hash writes (DRAM entries, whose
// deletions move other entries), expiries (the clock moved on), index
// checkpoints (staged writes stored into slots the walk may have passed),
// the cleaner's rewrites, FLUSHDB, SWAPDB and FLUSHALL. Compared with a
// copy taken at the instant; a key may be missing only if it expired.
func TestKeyCursorModel(t *testing.T) {
	for _, kix := range []string{"1", "0"} {
		for seed := range uint64(16) {
			t.Run(fmt.Sprintf("index=%s/seed=%d", kix, seed), func(t *testing.T) {
				t.Setenv("PERSIMMON_TEST_KEY_INDEX", kix)
				cursorModel(t, seed, kix == "1")
			})
		}
	}
}

func cursorModel(t *testing.T, seed uint64, indexed bool) {
	ks, _, err := recovery.Open(recovery.Options{Dir: t.TempDir(), Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	ks.SetActiveExpire(false) // expiry by reads only: the test's own
	r := rand.New(rand.NewPCG(seed, 14))
	// Each seed turns on a part of the mix: new keys (which grow the
	// table and fill the DRAM tables' tails), the cleaner, whole-database
	// changes. Each hides the others' bugs when always on: a new key at a
	// DRAM table's tail is what a deletion moves, a cleaner pass claims
	// most keys, a FLUSHDB drains them.
	creates, cleans, drains := seed&1 != 0, seed&2 != 0, seed&4 != 0
	const dbs = 4
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%d", i)) }
	now := ks.NowMs()
	nkeys := 1500 + r.IntN(1500)
	write := func(fill func(b *keyspace.Batch)) {
		b := ks.NewBatch()
		fill(b)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	ks.Lock()
	for i := 0; i < nkeys; i++ {
		db := r.IntN(dbs)
		write(func(b *keyspace.Batch) {
			switch x := r.IntN(10); {
			case x < 6:
				b.Set(db, key(i), []byte(fmt.Sprintf("v%d", i)), 0)
			case x < 8:
				b.Set(db, key(i), []byte(fmt.Sprintf("t%d", i)), now+int64(1000+r.IntN(60_000)))
			default:
				b.HSet(db, key(i), []byte("f"), []byte(fmt.Sprint(i)), []byte("g"), []byte("x"))
			}
		})
		if r.IntN(8) == 0 && ks.Type(db, key(i)) == keyspace.TypeString {
			write(func(b *keyspace.Batch) { b.SetRange(db, key(i), 0, []byte("p")) }) // a DRAM entry
		}
		if i == nkeys/3 {
			// Strings written whole as DRAM entries (the cleaner's copy
			// moves them into the index).
			write(func(b *keyspace.Batch) { b.SwapDB(0, 1) })
		}
		if i == nkeys/2 {
			if err := ks.CheckpointIndex(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Strings overwritten since the checkpoint: their table slots are
	// stale, the staged writes newer.
	for range 200 {
		j := r.IntN(nkeys / 2)
		for db := range dbs {
			if ks.Type(db, key(j)) == keyspace.TypeString {
				write(func(b *keyspace.Batch) { b.Set(db, key(j), []byte(fmt.Sprintf("o%d", j)), 0) })
			}
		}
	}
	// The instant: the model, then the cursor and the hook.
	model := map[string]string{}
	for db := range dbs {
		ks.Keys(db, func(k string) {
			if s, ok := cursorState(t, ks, db, []byte(k)); ok {
				model[fmt.Sprintf("%d/%s", db, k)] = s
			}
		})
	}
	got := map[string]string{}
	dups := 0
	var by [3]int // given by Next, Claim, Drain
	from := 0
	emit := func(db int, k []byte) {
		s, ok := cursorState(t, ks, db, k)
		if !ok {
			return
		}
		name := fmt.Sprintf("%d/%s", db, k)
		if _, seen := got[name]; seen {
			dups++
			t.Errorf("%s given twice", name)
		}
		got[name] = s
		by[from]++
	}
	emitString := func(db int, k, val []byte, at int64) { // as emit, from the value the walk read
		name := fmt.Sprintf("%d/%s", db, k)
		if _, seen := got[name]; seen {
			dups++
			t.Errorf("%s given twice", name)
		}
		got[name] = fmt.Sprintf("s:%s|%d", val, at)
		by[0]++
	}
	cur := ks.NewKeyCursor()
	ks.BeforeWrite(func(db int, k []byte) {
		if k == nil {
			from = 2
			cur.Drain(db, emit)
		} else if cur.Claim(db, k) {
			from = 1
			emit(db, k)
		}
		from = 0
	})
	gen0 := ks.IndexGeneration()
	ks.Unlock()

	next := nkeys
	chunks := 0
	for more := true; more; {
		ks.Lock()
		if r.IntN(2) == 0 {
			more = cur.Next(1+r.IntN(64), emit)
		} else {
			more = cur.NextStrings(1+r.IntN(64), emitString, emit)
		}
		chunks++
		for range r.IntN(12) {
			db := r.IntN(dbs)
			i := r.IntN(next + 1)
			switch x := r.IntN(1000); {
			case x < 300:
				if !creates && ks.Type(db, key(i)) == keyspace.TypeNone {
					break
				}
				write(func(b *keyspace.Batch) { b.Set(db, key(i), []byte(fmt.Sprintf("w%d", chunks)), 0) })
			case x < 450: // new keys, in bursts that grow the index table
				if !creates {
					break
				}
				for range 1 + r.IntN(40) {
					next++
					write(func(b *keyspace.Batch) { b.Set(db, key(next), []byte("new"), 0) })
				}
			case x < 600:
				write(func(b *keyspace.Batch) { b.Del(db, key(i)) })
			case x < 680:
				if ks.Type(db, key(i)) == keyspace.TypeString {
					write(func(b *keyspace.Batch) { b.SetRange(db, key(i), 1, []byte("P")) })
				}
			case x < 780:
				if typ := ks.Type(db, key(i)); typ == keyspace.TypeHash || creates && typ == keyspace.TypeNone {
					write(func(b *keyspace.Batch) { b.HSet(db, key(i), []byte("f"), []byte("changed")) })
				}
			case x < 830:
				if ks.Type(db, key(i)) == keyspace.TypeHash {
					write(func(b *keyspace.Batch) { b.HDel(db, key(i), []byte("f"), []byte("g")) })
				}
			case x < 900:
				ks.AdvanceClock(int64(r.IntN(3000)))
			case x < 960:
				if err := ks.CheckpointIndex(); err != nil {
					t.Fatal(err)
				}
			case x < 966:
				if drains && r.IntN(20) == 0 {
					write(func(b *keyspace.Batch) { b.FlushDB(db) })
				}
			case x < 976:
				if drains && r.IntN(8) == 0 {
					write(func(b *keyspace.Batch) { b.SwapDB(db, (db+1+r.IntN(dbs-1))%dbs) })
				}
			default:
				if drains && r.IntN(40) == 0 {
					write(func(b *keyspace.Batch) { b.FlushAll() })
				}
			}
		}
		ks.Unlock()
		if cleans && r.IntN(10) == 0 {
			ks.CleanOldest() // the cleaner's rewrites, under its own hold of the lock
		}
	}
	ks.Lock()
	ks.BeforeWrite(nil)
	end := ks.NowMs()
	restarts, examined := cur.Restarts, cur.Examined
	cur.Close()
	ks.Unlock()

	missing, expired := 0, 0
	for name, want := range model {
		g, ok := got[name]
		if !ok {
			var at int64
			if i := strings.LastIndexByte(want, '|'); i >= 0 {
				fmt.Sscan(want[i+1:], &at)
			}
			if at != 0 && at <= end {
				expired++
				continue
			}
			missing++
			if missing <= 10 {
				t.Errorf("%s (%s at the instant) never given", name, want)
			}
			continue
		}
		if g != want {
			t.Errorf("%s given as %s, was %s at the instant", name, g, want)
		}
	}
	for name, g := range got {
		if _, ok := model[name]; !ok {
			t.Errorf("%s given (%s) but made after the instant", name, g)
		}
	}
	if missing > 0 || dups > 0 {
		t.Fatalf("%d keys never given, %d given twice, of %d", missing, dups, len(model))
	}
	ks.Lock() // a growth's last step swaps the table in under the lock
	gen := ks.IndexGeneration()
	ks.Unlock()
	if indexed && gen == gen0 {
		t.Logf("the index table did not grow during the walk")
	}
	t.Logf("%d keys at the instant, %d given (%d by the walk, %d by Claim, %d by Drain; %d expired before), %d chunks, %d entries looked at, %d table walks started over",
		len(model), len(got), by[0], by[1], by[2], expired, chunks, examined, restarts)
}

// TestKeyCursorStagedAtStart: keys staged in the key index at the start
// (written since its last checkpoint) are given even when a checkpoint
// stores them, mid-walk, into slots the table walk has passed.
func TestKeyCursorStagedAtStart(t *testing.T) {
	ks, _ := openKix(t, t.TempDir())
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	b := ks.NewBatch()
	for i := range 1000 {
		b.Set(0, []byte(fmt.Sprintf("old%d", i)), []byte("v"), 0)
	}
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := ks.CheckpointIndex(); err != nil {
		t.Fatal(err)
	}
	b = ks.NewBatch()
	for i := range 60 {
		b.Set(0, []byte(fmt.Sprintf("staged%d", i)), []byte("v"), 0)
	}
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	gen := ks.IndexGeneration()
	cur := ks.NewKeyCursor()
	defer cur.Close()
	got := map[string]int{}
	checkpointed := false
	for more := true; more; {
		more = cur.Next(50, func(_ int, k []byte) { got[string(k)]++ })
		if !checkpointed && len(got) >= 700 {
			if err := ks.CheckpointIndex(); err != nil {
				t.Fatal(err)
			}
			checkpointed = true
		}
	}
	if ks.IndexGeneration() != gen {
		t.Fatalf("the index table grew: the test needs the staged keys stored in place")
	}
	for i := range 60 {
		if k := fmt.Sprintf("staged%d", i); got[k] != 1 {
			t.Errorf("%s given %d times", k, got[k])
		}
	}
	if len(got) != 1060 {
		t.Fatalf("%d keys given, want 1060", len(got))
	}
}

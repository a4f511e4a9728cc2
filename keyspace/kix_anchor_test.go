package keyspace_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// copyDir copies the files of the data directory src into a new one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// openNoKix opens dir without the key index: the whole log replayed into
// DRAM entries, the reference a re-attach must equal.
func openNoKix(t *testing.T, dir string) *keyspace.Keyspace {
	t.Helper()
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "0")
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize, NoKeyIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func dumpOf(ks *keyspace.Keyspace) string {
	ks.Lock()
	defer ks.Unlock()
	return ks.StateDump()
}

// TestKeyIndexAnchorsRestart: with collections of every kind in the
// keyspace (created, changed, emptied, deleted, re-created as another
// type, renamed and copied whole, given an expiry, expired without a
// record, rewritten by the cleaner) and strings patched by SETRANGE, a restart after a kill re-attaches
// the key index at its checkpoint, rebuilds the collections from their
// anchors, and holds exactly what a replay of the whole log without the
// index holds (values, encodings, expiries, live bytes).
func TestKeyIndexAnchorsRestart(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testKeyIndexAnchorsRestart(t, seed) })
	}
}

func testKeyIndexAnchorsRestart(t *testing.T, seed uint64) {
	dir := t.TempDir()
	ks, _ := openKix(t, dir)
	defer func() { ks.Close() }()
	rng := rand.New(rand.NewPCG(seed, 7))
	filler := make([]byte, 4<<10)
	var expiring []string // keys of db 1 given a short expiry
	steps, cycle := 6000, 1500
	if testing.Short() {
		steps = 3000
	}
	for step := 0; step < steps; step++ {
		db := rng.IntN(3)
		key := []byte(fmt.Sprintf("k%d", min(int(rng.ExpFloat64()*10), 79)))
		ks.Lock()
		typ := ks.Type(db, key)
		ks.Unlock()
		r := rng.IntN(100)
		commit(t, ks, func(b *keyspace.Batch) {
			v := []byte(fmt.Sprintf("v%d", step))
			switch {
			case r < 8:
				b.Set(db, key, v, 0)
			case r < 13:
				b.Del(db, key)
			case r < 28 && (typ == "none" || typ == "hash"):
				b.HSet(db, key, []byte(fmt.Sprintf("f%d", rng.IntN(200))), v)
			case r < 33 && typ == "hash":
				b.HDel(db, key, []byte(fmt.Sprintf("f%d", rng.IntN(200))))
			case r < 43 && (typ == "none" || typ == "set"):
				b.SAdd(db, key, []byte(fmt.Sprint(rng.IntN(300))))
			case r < 46 && typ == "set":
				b.SRem(db, key, []byte(fmt.Sprint(rng.IntN(300))))
			case r < 56 && (typ == "none" || typ == "zset"):
				b.ZAdd(db, key, [][]byte{[]byte(fmt.Sprintf("m%d", rng.IntN(200)))}, []float64{float64(rng.IntN(1000))})
			case r < 66 && (typ == "none" || typ == "list"):
				b.RPush(db, key, v)
			case r < 70 && typ == "list":
				b.LPop(db, key, 1+rng.IntN(2)) // lists empty and come back
			case r < 76 && (typ == "none" || typ == "stream"):
				b.XAdd(db, key, keyspace.StreamID{Ms: uint64(step) + 1}, [][]byte{[]byte("f"), v}) // above any stream's top
			case r < 79 && typ != "none" && typ != "string":
				b.Expire(db, key, time.Now().UnixMilli()+3600_000)
			case r < 82 && typ != "none":
				// RENAME (a rewrite whole under another key) or COPY.
				dst := []byte(fmt.Sprintf("k%d", rng.IntN(80)))
				ks.CopyValue(b, db, key, db, dst, 0)
				if rng.IntN(2) == 0 && string(dst) != string(key) {
					b.Del(db, key)
				}
			case r < 86 && typ == "string":
				b.SetRange(db, key, int64(rng.IntN(8)), v) // SETRANGE, APPEND: a patched string, anchored at its base
			case r < 87 && typ == "string":
				ks.SetExpire(b, db, key, time.Now().UnixMilli()+3600_000)
			default:
				b.Set(5, []byte("filler"), filler, 0) // turns segments over
			}
		})
		if step%400 == 399 {
			ks.Clean()
		}
		if step%cycle != cycle-1 {
			continue
		}
		// A few collections get a short expiry: by the restart they have
		// expired without a record, and some came back.
		expireAt := time.Now().UnixMilli() + 100
		expiring = expiring[:0]
		commit(t, ks, func(b *keyspace.Batch) {
			for i := 0; i < 10; i++ {
				k := fmt.Sprintf("k%d", i)
				if typ := ks.Type(1, []byte(k)); typ != "none" && typ != "string" {
					b.Expire(1, []byte(k), expireAt)
					expiring = append(expiring, k)
				}
			}
		})
		for time.Now().UnixMilli() <= expireAt+1 {
			time.Sleep(10 * time.Millisecond) // the expiry's time must pass (no record says it did)
		}
		for _, k := range expiring {
			ks.Lock()
			there := ks.Exists(1, []byte(k))
			ks.Unlock()
			if there {
				t.Fatalf("step %d: %s did not expire", step, k)
			}
		}
		commit(t, ks, func(b *keyspace.Batch) {
			for i, k := range expiring {
				if i%2 == 0 {
					b.SAdd(1, []byte(k), []byte("again"))
				}
			}
		})
		if err := ks.KixCheckpoint(); err != nil {
			t.Fatal(err)
		}
		// Writes after the checkpoint: the tail a kill leaves.
		commit(t, ks, func(b *keyspace.Batch) {
			b.HSet(0, []byte("tail"), []byte("f"), []byte(fmt.Sprint(step)))
			b.Del(2, []byte("k1"))
			b.RPush(2, []byte("k1"), []byte("x"))
		})
		ks.KillAtClose()
		if err := ks.Close(); err != nil {
			t.Fatal(err)
		}
		ref := openNoKix(t, copyDir(t, dir))
		want := dumpOf(ref)
		ref.Close()
		var rep recovery.Report
		ks, rep = openKix(t, dir)
		if rep.Index.FromLSN == 0 || rep.Index.Anchored == 0 || rep.Index.AnchorScanned == 0 || rep.Index.AnchorApplied == 0 {
			t.Fatalf("step %d: the restart did not re-attach the index with its anchors: %+v", step, rep.Index)
		}
		if got := dumpOf(ks); got != want {
			t.Fatalf("step %d: the keyspace re-attached from the anchors differs from a replay of the whole log:\n%s", step, firstDiff(got, want))
		}
		t.Logf("step %d: %d keys; index re-attached at LSN %d, %d records scanned from segment %d, %d operations applied, %d anchors, %d replayed after",
			step, ks.KeyCount(), rep.Index.FromLSN, rep.Index.AnchorScanned, rep.Index.AnchorSeg, rep.Index.AnchorApplied, rep.Index.Anchored, rep.Index.Replayed)
	}
}

// firstDiff shows where two dumps part.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("re-attached: ...%s\nwhole log:   ...%s", got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}

// TestKeyIndexAnchorsKeepExpiredIncarnation: a hash given an expiry, then
// written again before its time, both before the checkpoint; by the
// restart its time has passed. The scan from its anchor applies the
// expiry without dropping the hash (it was alive at the checkpoint), so
// the later write does not make a new hash of one field without an
// expiry: the key is gone after the restart, as it was in the server,
// and after a replay of the whole log (the later write carries its time:
// applyclock.go).
func TestKeyIndexAnchorsKeepExpiredIncarnation(t *testing.T) {
	dir := t.TempDir()
	ks, _ := openKix(t, dir)
	commit(t, ks, func(b *keyspace.Batch) { b.HSet(0, []byte("h"), []byte("a"), []byte("1")) })
	at := time.Now().UnixMilli() + 100
	commit(t, ks, func(b *keyspace.Batch) { b.Expire(0, []byte("h"), at) })
	commit(t, ks, func(b *keyspace.Batch) { b.HSet(0, []byte("h"), []byte("b"), []byte("2")) })
	commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("other"), []byte("m")) }) // another anchored key, alive
	if err := ks.KixCheckpoint(); err != nil {
		t.Fatal(err)
	}
	ks.KillAtClose()
	ks.Close()
	for time.Now().UnixMilli() <= at+1 {
		time.Sleep(10 * time.Millisecond) // the expiry's time must pass
	}
	ref := openNoKix(t, copyDir(t, dir))
	ref.Lock()
	n, _ := ref.HLen(0, []byte("h"))
	ref.Unlock()
	ref.Close()
	if n != 0 {
		t.Fatalf("a replay of the whole log without the index holds %d fields of h", n) // TestReplayKeepsExpiringIncarnation
	}
	ks, rep := openKix(t, dir)
	defer ks.Close()
	if rep.Index.FromLSN == 0 || rep.Index.AnchorApplied == 0 {
		t.Fatalf("the restart did not re-attach the index with its anchors: %+v", rep.Index)
	}
	ks.Lock()
	defer ks.Unlock()
	if ks.Exists(0, []byte("h")) {
		n, _ := ks.HLen(0, []byte("h"))
		at, _ := ks.ExpireAt(0, []byte("h"))
		t.Fatalf("h came back with %d fields (expiry %d) although its time has passed", n, at)
	}
	if !ks.Exists(0, []byte("other")) {
		t.Fatal("the set other is gone")
	}
}

// TestKeyIndexAnchorsPatchedString: strings patched by SETRANGE and
// APPEND (one with an expiry, one patched again after a checkpoint, one
// grown past the DRAM copy into the lazy form) are anchored at their base
// set: a restart after a kill re-attaches the index, rebuilds them from
// the base and the patches, and holds what a replay of the whole log
// holds. Before, a patched string had no anchor and its checkpoint was
// never trusted: every restart replayed the whole log.
func TestKeyIndexAnchorsPatchedString(t *testing.T) {
	dir := t.TempDir()
	ks, _ := openKix(t, dir)
	big := make([]byte, 70<<10) // past refMinValue: patched lazily
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("s"), []byte("hello"), 0)
		b.Set(0, []byte("t"), []byte("abcdef"), time.Now().UnixMilli()+3600_000)
		b.Set(1, []byte("u"), []byte("x"), 0)
		b.Set(0, []byte("big"), big, 0)
		b.Set(0, []byte("plain"), []byte("p"), 0)
		b.SAdd(0, []byte("set"), []byte("m"))
	})
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("s"), 5, []byte(" world")) }) // APPEND
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("t"), 2, []byte("XY")) })
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(1, []byte("u"), 3, []byte("pad")) })
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("big"), int64(len(big)), []byte("tail")) })
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("big"), 10, []byte("MID")) })
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("new"), 2, []byte("n")) }) // patched from nothing
	if err := ks.KixCheckpoint(); err != nil {
		t.Fatal(err)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("s"), 0, []byte("J")) }) // after the checkpoint
	ks.KillAtClose()
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ref := openNoKix(t, copyDir(t, dir))
	want := dumpOf(ref)
	ref.Close()
	ks, rep := openKix(t, dir)
	defer ks.Close()
	if rep.Index.FromLSN == 0 || rep.Index.AnchorApplied == 0 {
		t.Fatalf("the restart did not re-attach the index: %+v", rep.Index)
	}
	if got := dumpOf(ks); got != want {
		t.Fatalf("the keyspace re-attached from the anchors differs from a replay of the whole log:\n%s", firstDiff(got, want))
	}
	ks.Lock()
	defer ks.Unlock()
	for _, c := range []struct {
		db       int
		key, val string
	}{{0, "s", "Jello world"}, {0, "t", "abXYef"}, {1, "u", "x\x00\x00pad"}, {0, "new", "\x00\x00n"}, {0, "plain", "p"}} {
		if v, ok, err := ks.Get(c.db, []byte(c.key)); err != nil || !ok || string(v) != c.val {
			t.Errorf("db %d %s = %q (%v %v), want %q", c.db, c.key, v, ok, err, c.val)
		}
	}
	if at, ok := ks.ExpireAt(0, []byte("t")); !ok || at == 0 {
		t.Errorf("t lost its expiry (%d %v)", at, ok)
	}
	v, _, _ := ks.Get(0, []byte("big"))
	if len(v) != len(big)+4 || string(v[10:13]) != "MID" || string(v[len(big):]) != "tail" {
		t.Errorf("big came back as %d bytes", len(v))
	}
}

package keyindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// memLog is a stand-in for the arena: records of one key each in segment
// 1, a record's location (1<<40 | offset) standing for its value. A
// record's LSN is its position + 1.
type memLog struct {
	buf  []byte
	recs []rec
	offs []uint64 // offset of each record
}

type rec struct {
	key string
	loc uint64 // 0: a deletion
}

func newMemLog() *memLog { return &memLog{buf: make([]byte, 4096)} }

// parseMemLog reads back the records of b (a memLog's bytes from offset
// 4096), ignoring a last record cut short.
func parseMemLog(b []byte) *memLog {
	l := newMemLog()
	for len(b) >= 2 {
		n := int(binary.LittleEndian.Uint16(b))
		if len(b) < 3+n {
			break
		}
		l.add(string(b[2:2+n]), b[2+n] == 1)
		b = b[3+n:]
	}
	return l
}

func (l *memLog) add(key string, del bool) (loc, lsn uint64) {
	off := len(l.buf)
	l.offs = append(l.offs, uint64(off))
	l.buf = binary.LittleEndian.AppendUint16(l.buf, uint16(len(key)))
	l.buf = append(l.buf, key...)
	loc = 1<<40 | uint64(off)
	if del {
		loc = 0
		l.buf = append(l.buf, 1)
	} else {
		l.buf = append(l.buf, 0)
	}
	l.recs = append(l.recs, rec{key, loc})
	return loc, uint64(len(l.recs))
}

func (l *memLog) keyAt(loc uint64) ([]byte, bool) {
	if loc>>40 != 1 {
		return nil, false
	}
	off := int(loc & (1<<40 - 1))
	if off+2 > len(l.buf) {
		return nil, false
	}
	n := int(binary.LittleEndian.Uint16(l.buf[off:]))
	return l.buf[off+2 : off+2+n], true
}

func (l *memLog) opts() Options {
	return Options{Mode: pmem.ModeNone, KeyAt: l.keyAt, Newest: 1}
}

// model replays the first n records.
func (l *memLog) model(n int) map[string]uint64 {
	m := map[string]uint64{}
	for _, r := range l.recs[:n] {
		if r.loc == 0 {
			delete(m, r.key)
		} else {
			m[r.key] = r.loc
		}
	}
	return m
}

// check compares ix with model: every key found at its location, no other
// live slot, counts equal.
func check(t *testing.T, ix *Index, l *memLog, model map[string]uint64) {
	t.Helper()
	for k, want := range model {
		if got, ok := ix.Get([]byte(k)); !ok || got != want {
			t.Fatalf("key %q: got %#x %v, want %#x", k, got, ok, want)
		}
	}
	if ix.Staged() != 0 {
		return // the table lags the staged writes
	}
	n := 0
	ix.Range(func(loc uint64) bool {
		k, _ := l.keyAt(loc)
		if model[string(k)] != loc {
			t.Fatalf("slot for %q at %#x: model has %#x", k, loc, model[string(k)])
		}
		n++
		return true
	})
	if n != len(model) || ix.Len() != len(model) {
		t.Fatalf("%d live slots, Len %d, model %d keys", n, ix.Len(), len(model))
	}
}

// randomOps stages n random writes over keys keys, checkpointing every
// cpEvery (0: never).
func randomOps(r *rand.Rand, l *memLog, ix *Index, n, keys, cpEvery int) error {
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("key:%d", r.IntN(keys))
		loc, lsn := l.add(k, r.IntN(4) == 0)
		if err := ix.Stage([]byte(k), loc, false); err != nil {
			return err
		}
		if cpEvery > 0 && int(lsn)%cpEvery == 0 {
			if err := ix.Checkpoint(Checkpoint{LSN: lsn, Seg: 1, Off: l.next() & (1<<40 - 1)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestModel: staged and published writes, growth and rebuilds, checked
// against a model, with lookups seeing staged writes at once.
func TestModel(t *testing.T) {
	l := newMemLog()
	ix, _, ok, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil || ok {
		t.Fatalf("open: %v, checkpoint %v", err, ok)
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 6; round++ {
		if err := randomOps(r, l, ix, 8000, 5000+round*3000, 777); err != nil {
			t.Fatal(err)
		}
		check(t, ix, l, l.model(len(l.recs)))
		if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
			t.Fatal(err)
		}
		check(t, ix, l, l.model(len(l.recs)))
	}
	if ix.Grows == 0 {
		t.Fatalf("no growth in %d records (%+v)", len(l.recs), ix.Stats())
	}
	t.Logf("%d records, %+v, %d grows", len(l.recs), ix.Stats(), ix.Grows)
}

// TestStagedNotInTable: a write is not in the table until a checkpoint,
// and the file between checkpoints is the last checkpoint's state.
func TestStagedNotInTable(t *testing.T) {
	l := newMemLog()
	path := filepath.Join(t.TempDir(), "idx")
	ix, _, _, err := Open(path, l.opts())
	if err != nil {
		t.Fatal(err)
	}
	loc1, _ := l.add("a", false)
	loc2, _ := l.add("a", false)
	ix.Stage([]byte("a"), loc1, false)
	ix.Checkpoint(Checkpoint{LSN: 1})
	ix.Stage([]byte("a"), loc2, false)
	if got, _ := ix.Get([]byte("a")); got != loc2 {
		t.Fatalf("Get sees %#x, want the staged %#x", got, loc2)
	}
	if _, loc, _, _ := ix.find([]byte("a")); loc != loc1 {
		t.Fatalf("the table has %#x before the checkpoint, want %#x", loc, loc1)
	}
	ix.Close() // a crash: the staged write is lost with the heap
	ix, cp, ok, err := Open(path, l.opts())
	if err != nil || !ok || cp.LSN != 1 || cp.Applying {
		t.Fatalf("reopen: %v %v %+v", err, ok, cp)
	}
	defer ix.Close()
	if got, _ := ix.Get([]byte("a")); got != loc1 {
		t.Fatalf("after the crash a = %#x, want the checkpoint's %#x", got, loc1)
	}
	if err := ix.Stage([]byte("b"), 1<<40|1<<33, false); err == nil {
		t.Fatalf("an offset past 4 GiB was staged")
	}
}

// TestReopenReplaysTail: a checkpoint, more published writes, a Close
// without a checkpoint (what a kill -9 leaves), and recovery's replay of
// the records after the checkpoint in repair mode give the model.
func TestReopenReplaysTail(t *testing.T) {
	l := newMemLog()
	path := filepath.Join(t.TempDir(), "idx")
	ix, _, _, err := Open(path, l.opts())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	randomOps(r, l, ix, 20000, 8000, 0)
	cpLSN := uint64(len(l.recs))
	if err := ix.Checkpoint(Checkpoint{LSN: cpLSN, Seg: 1, Off: l.next() & (1<<40 - 1), User: [UserWords]uint64{7}}); err != nil {
		t.Fatal(err)
	}
	randomOps(r, l, ix, 20000, 16000, 0) // staged, never checkpointed
	ix.Close()
	ix, cp, ok, err := Open(path, l.opts())
	if err != nil || !ok || cp.LSN != cpLSN || cp.User[0] != 7 {
		t.Fatalf("reopen: %v %v %+v", err, ok, cp)
	}
	defer ix.Close()
	replay(t, ix, l, cp.LSN, cp.Seg<<40|cp.Off)
	check(t, ix, l, l.model(len(l.recs)))
}

// replay applies the records after LSN from in repair mode, then sweeps
// from the checkpoint's location loc.
func replay(t *testing.T, ix *Index, l *memLog, from, loc uint64) int {
	t.Helper()
	ix.SetRepair(true)
	for _, r := range l.recs[from:] {
		if err := ix.Apply([]byte(r.key), r.loc, false); err != nil {
			t.Fatal(err)
		}
	}
	ix.SetRepair(false)
	n, err := ix.Sweep(loc)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// next is the location the next record will take (a checkpoint's replay
// start).
func (l *memLog) next() uint64 { return 1<<40 | uint64(len(l.buf)) }

// TestPageSubsetImage: a crash inside a checkpoint, after it stored its
// writes into the table, keeps any subset of the pages (sectors, words)
// written since the last one (a kill -9 all of them, a power cut any). Every image of old and new pages, replayed from
// the checkpoint in repair mode, gives the model.
func TestPageSubsetImage(t *testing.T) {
	dir := t.TempDir()
	l := newMemLog()
	path := filepath.Join(dir, "idx")
	o := l.opts()
	o.Capacity = 1 << 13 // 4000 keys: no growth, and long probe runs
	ix, _, _, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	randomOps(r, l, ix, 10000, 4000, 0)
	cpLSN := uint64(len(l.recs))
	if err := ix.Checkpoint(Checkpoint{LSN: cpLSN, Seg: 1, Off: l.next() & (1<<40 - 1)}); err != nil {
		t.Fatal(err)
	}
	old := bytes.Clone(ix.region.Bytes())
	randomOps(r, l, ix, 30000, 4000, 0)
	// The next checkpoint stops after storing the writes and persisting
	// the pages, before its block: the image of a crash there.
	var cur []byte
	ix.opts.testHook = func(stage string) {
		if stage == "ckpt:pages" && cur == nil {
			cur = bytes.Clone(ix.region.Bytes())
		}
	}
	if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
		t.Fatal(err)
	}
	if ix.Grows != 0 {
		t.Fatal("grew in the checkpoint: the image would mix two files")
	}
	ix.Close()
	mixed, swept := 0, 0
	for img := 0; img < 40; img++ {
		// pages (page cache), sectors (torn pages), aligned words
		// (persistent memory): each old or new
		unit := []int{pageSize, 512, 8}[img%3]
		b := bytes.Clone(cur)
		// The header (the applying block) was persisted before the first
		// slot store: only the slots mix.
		for p := headerSize; p < len(b); p += unit {
			if r.IntN(2) == 0 && !bytes.Equal(b[p:p+unit], old[p:p+unit]) {
				copy(b[p:p+unit], old[p:p+unit])
				mixed++
			}
		}
		ipath := filepath.Join(dir, fmt.Sprint("img", img))
		if err := os.WriteFile(ipath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, cp, ok, err := Open(ipath, o)
		from, fromLoc := cp.LSN, cp.Seg<<40|cp.Off
		if cp.Applying {
			from, fromLoc = cp.BaseLSN, cp.BaseSeg<<40|cp.BaseOff
		}
		if err != nil || !ok || from != cpLSN {
			t.Fatalf("image %d: %v %v %+v", img, err, ok, cp)
		}
		swept += replay(t, ix, l, from, fromLoc)
		check(t, ix, l, l.model(len(l.recs)))
		ix.Close()
	}
	if mixed == 0 {
		t.Fatalf("%d units mixed, %d slots swept: the images tested nothing", mixed, swept)
	}
	t.Logf("%d units mixed, %d leftover slots swept", mixed, swept)
}

// TestTornCheckpointBlock: a damaged newest checkpoint block leaves the
// older one; both damaged leave no checkpoint (the caller rebuilds).
func TestTornCheckpointBlock(t *testing.T) {
	l := newMemLog()
	path := filepath.Join(t.TempDir(), "idx")
	ix, _, _, err := Open(path, l.opts())
	if err != nil {
		t.Fatal(err)
	}
	ix.Checkpoint(Checkpoint{LSN: 10})
	ix.Checkpoint(Checkpoint{LSN: 20}) // nothing staged: one block each
	newest := blockOff(ix.cp.gen)
	ix.region.Bytes()[newest+3] ^= 0xff
	ix.Close()
	ix, cp, ok, err := Open(path, l.opts())
	if err != nil || !ok || cp.LSN != 10 {
		t.Fatalf("after tearing the newest block: %v %v %+v, want LSN 10", err, ok, cp)
	}
	ix.region.Bytes()[blockOff(cp.gen)+9] ^= 0xff
	ix.Close()
	ix, _, ok, err = Open(path, l.opts())
	if err != nil || ok {
		t.Fatalf("both blocks torn: %v, checkpoint %v", err, ok)
	}
	ix.Close()
	os.WriteFile(path, make([]byte, 8192), 0o644)
	if _, _, _, err := Open(path, l.opts()); err == nil {
		t.Fatal("a file of zeros opened as an index")
	}
	if ix, err = Reset(path, l.opts()); err != nil {
		t.Fatal(err)
	}
	ix.Close()
}

// TestSegmentBitsWrap: the 16 segment bits name the newest live segment
// with those bits, across a wrap of the low bits.
func TestSegmentBitsWrap(t *testing.T) {
	ix := &Index{newest: 0x2_0003}
	for _, seg := range []uint64{0x2_0003, 0x2_0000, 0x1_ffff, 0x1_0004} {
		w, err := pack(5, seg<<40|4096, seg&1 == 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := ix.unpack(w); got != seg<<40|4096 {
			t.Fatalf("segment %#x came back as %#x", seg, got>>40)
		}
	}
}

// TestExpiringBit: the expiring bit of a write reaches its slot at the
// checkpoint, survives a reopen and growth (words are copied whole), is
// cleared by a write without it, and ScanExpiring visits exactly the
// slots that carry it.
func TestExpiringBit(t *testing.T) {
	l := newMemLog()
	path := filepath.Join(t.TempDir(), "idx")
	ix, _, _, err := Open(path, l.opts())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{} // key -> expiring
	locs := map[string]uint64{}
	write := func(k string, exp bool) {
		loc, _ := l.add(k, false)
		if err := ix.Stage([]byte(k), loc, exp); err != nil {
			t.Fatal(err)
		}
		want[k], locs[k] = exp, loc
	}
	for i := 0; i < 3000; i++ { // past 3/4 of 1024 slots: the table grows
		write(fmt.Sprintf("k%d", i), i%3 == 0)
	}
	if _, exp, ok := ix.Lookup([]byte("k3")); !ok || !exp {
		t.Fatalf("staged k3: expiring %v, found %v", exp, ok)
	}
	if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i += 2 { // flip half of them
		k := fmt.Sprintf("k%d", i)
		write(k, !want[k])
	}
	if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
		t.Fatal(err)
	}
	if ix.Grows == 0 {
		t.Fatalf("no growth: %+v", ix.Stats())
	}
	ix.Close()
	ix, _, ok, err := Open(path, l.opts())
	if err != nil || !ok {
		t.Fatalf("reopen: %v %v", err, ok)
	}
	defer ix.Close()
	nexp := 0
	for k, exp := range want {
		loc, got, ok := ix.Lookup([]byte(k))
		if !ok || loc != locs[k] || got != exp {
			t.Fatalf("%s: loc %#x expiring %v found %v; want %#x %v", k, loc, got, ok, locs[k], exp)
		}
		if exp {
			nexp++
		}
	}
	seen := map[string]bool{}
	for pos := 0; pos < ix.Stats().Slots; {
		pos = ix.ScanExpiring(pos, 100, func(loc uint64) bool {
			k, _ := l.keyAt(loc)
			if !want[string(k)] || seen[string(k)] {
				t.Fatalf("ScanExpiring visited %s (expiring %v, seen %v)", k, want[string(k)], seen[string(k)])
			}
			seen[string(k)] = true
			return true
		})
	}
	if len(seen) != nexp {
		t.Fatalf("ScanExpiring visited %d slots, %d keys are expiring", len(seen), nexp)
	}
}

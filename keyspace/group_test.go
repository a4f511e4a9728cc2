package keyspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/wal"
)

// collectionsState renders keys of db 0 whatever their type: type,
// encoding, TTL and elements in the order the type replies them.
func collectionsState(t *testing.T, ks *keyspace.Keyspace, keys ...string) string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	var sb strings.Builder
	for _, k := range keys {
		key := []byte(k)
		typ := ks.Type(0, key)
		fmt.Fprintf(&sb, "%s %s", k, typ)
		if typ != keyspace.TypeNone && typ != keyspace.TypeString {
			enc, _, _ := ks.ObjectEncoding(0, key)
			at, _ := ks.ExpireAt(0, key)
			fmt.Fprintf(&sb, " %s ttl=%v:", enc, at != 0)
		}
		switch typ {
		case keyspace.TypeString:
			v, _, _ := ks.Get(0, key)
			fmt.Fprintf(&sb, " %q", v)
		case keyspace.TypeHash:
			ks.HRange(0, key, func(f, v []byte) { fmt.Fprintf(&sb, " %s=%s", f, v) })
		case keyspace.TypeSet:
			ms, _ := ks.SMembers(0, key)
			slices.Sort(ms)
			fmt.Fprintf(&sb, " %q", ms)
		case keyspace.TypeZSet:
			z, _ := ks.ZSetAt(0, key)
			for x := z.At(0); x != 0; x = z.Next(x) {
				fmt.Fprintf(&sb, " %s:%v", z.Member(x), z.ScoreOf(x))
			}
		case keyspace.TypeList:
			l, _ := ks.List(0, key)
			for i := 0; i < l.Len(); i++ {
				fmt.Fprintf(&sb, " %s", l.At(i))
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// fillCollections writes a hash, set, sorted set and list named after
// prefix, n elements each, whose elements carry tag, in small batches.
func fillCollections(t *testing.T, ks *keyspace.Keyspace, prefix, tag string, n int) {
	t.Helper()
	for i := 0; i < n; i += 100 {
		commit(t, ks, func(b *keyspace.Batch) {
			for j := i; j < min(i+100, n); j++ {
				el := []byte(fmt.Sprintf("%s-%05d", tag, j))
				b.HSet(0, []byte(prefix+"h"), el, []byte(fmt.Sprint(j)))
				b.SAdd(0, []byte(prefix+"s"), el)
				b.ZAdd(0, []byte(prefix+"z"), [][]byte{el}, []float64{float64(j % 7)})
				b.RPush(0, []byte(prefix+"l"), el)
			}
		})
	}
}

// logRecord is one record of a segment file image.
type logRecord struct {
	off, end int64
	lsn      uint64
	typ      uint8
	flags    uint8
	payload  int
}

func segmentRecords(t testing.TB, img []byte) []logRecord {
	t.Helper()
	var out []logRecord
	for off := int64(arena.HeaderSize); ; {
		rec, err := wal.DecodeRecord(img, off)
		if err != nil {
			return out
		}
		out = append(out, logRecord{off: off, end: off + rec.Size, lsn: rec.LSN, typ: rec.Type, flags: rec.Flags, payload: len(rec.Payload)})
		off += rec.Size
	}
}

// TestBigBatchIsOneGroupAtEveryCut writes one batch that replaces four
// collections (a hash, a set, a sorted set and a list, as four COPY ...
// REPLACE would) with a record limit so low that the batch takes about
// fifteen records, alone and inside a MULTI group. It then cuts the log at
// the end of each record of the group and garbles a byte inside each:
// recovery must find all four old collections before the commit record is
// complete and all four new ones after, never a mix.
func TestBigBatchIsOneGroupAtEveryCut(t *testing.T) {
	for _, inTxn := range []bool{false, true} {
		t.Run(fmt.Sprintf("multi=%v", inTxn), func(t *testing.T) { testBigBatchAtEveryCut(t, inTxn) })
	}
}

func testBigBatchAtEveryCut(t *testing.T, inTxn bool) {
	const limit = 32 << 10
	dir := t.TempDir()
	ks := openKS(t, dir, 4<<20) // one segment: every cut is in the active one
	fillCollections(t, ks, "", "old", 400)
	fillCollections(t, ks, "src-", "new", 10000)
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("marker"), []byte("before"), 0) })
	keys := []string{"h", "s", "z", "l", "marker", "in-txn"}
	oldState := collectionsState(t, ks, keys...)
	lsnBefore := ks.LastLSN()

	ks.Lock()
	ks.SetRecordLimit(limit)
	if inTxn {
		ks.BeginTxn()
		b := ks.NewBatch()
		b.Set(0, []byte("in-txn"), []byte("x"), 0)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	b := ks.NewBatch()
	for _, k := range []string{"h", "s", "z", "l"} {
		ks.CopyValue(b, 0, []byte("src-"+k), 0, []byte(k), 0)
	}
	b.Set(0, []byte("marker"), []byte("after"), 0)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	if inTxn {
		if err := ks.EndTxn(); err != nil {
			t.Fatal(err)
		}
	}
	ks.Unlock()
	newState := collectionsState(t, ks, keys...)
	if oldState == newState || !strings.Contains(newState, "new-09999") || strings.Contains(newState, "old-") {
		t.Fatalf("the batch did not replace the collections:\n%.500s", newState)
	}
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}

	name := "seg-0000000000000001.arena"
	if segs, _ := filepath.Glob(filepath.Join(dir, "seg-*")); len(segs) != 1 {
		t.Fatalf("segments %q: the test cuts the only one", segs)
	}
	img, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	// The cuts below stand for crashes: no clean-shutdown mark.
	clear(img[arena.ShutdownWordOffset : arena.ShutdownWordOffset+8])
	var group []logRecord
	for _, r := range segmentRecords(t, img) {
		if r.lsn > lsnBefore {
			group = append(group, r)
		}
	}
	if len(group) < 10 {
		t.Fatalf("the batch took %d records; want many", len(group))
	}
	for i, r := range group {
		last := i == len(group)-1
		switch {
		case last && (r.typ != wal.TypeCommit || r.flags != wal.FlagTxn):
			t.Fatalf("last record: type %d flags %d, want a commit", r.typ, r.flags)
		case !last && (r.typ != wal.TypeBatch || r.flags&wal.FlagTxn == 0 || (r.flags&wal.FlagTxnBegin != 0) != (i == 0)):
			t.Fatalf("record %d: type %d flags %d", i, r.typ, r.flags)
		case r.payload > limit:
			t.Fatalf("record %d: payload %d bytes over the limit %d", i, r.payload, limit)
		}
	}
	t.Logf("%d records in the group", len(group))

	check := func(what string, img []byte, want string) {
		t.Helper()
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, name), img, 0o644); err != nil {
			t.Fatal(err)
		}
		ks := openKS(t, d, 4<<20)
		defer ks.Close()
		if got := collectionsState(t, ks, keys...); got != want {
			t.Fatalf("%s: recovered a state that is neither before nor after the batch:\n got %.400s\nwant %.400s", what, got, want)
		}
	}
	cuts := []int64{group[0].off}
	for _, r := range group {
		cuts = append(cuts, r.end)
	}
	for _, cut := range cuts {
		cutImg := append([]byte(nil), img...)
		clear(cutImg[cut:])
		want := oldState
		if cut == group[len(group)-1].end {
			want = newState
		}
		check(fmt.Sprintf("cut at %d", cut), cutImg, want)
	}
	// A torn write damages the record in flight: Commit makes each record
	// of the group durable before it appends the next, so nothing of the
	// group follows it except, for the last batch record, the commit
	// record (persisted by the same flush). Outside MULTI that commit
	// record is the group's own; inside, EndTxn's.
	for i, r := range group[:len(group)-1] {
		garbled := append([]byte(nil), img...)
		garbled[(r.off+r.end)/2] ^= 0x5a
		end := r.end
		if i == len(group)-2 {
			end = group[len(group)-1].end
		}
		clear(garbled[end:])
		check(fmt.Sprintf("record %d garbled", i), garbled, oldState)
	}
}

// TestHugeStoreBatchIsBoundedRecords writes, in one batch, what a *STORE
// or SORT ... STORE of huge results writes (a delete and one SAdd, ZAdd,
// RPush or HSet call with every element): the log holds no record over
// keyspace.RecordLimit, and a reopen gives back the same collections.
func TestHugeStoreBatchIsBoundedRecords(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 64<<20)
	const n = 200_000
	var els, pairs [][]byte
	var scores []float64
	for i := 0; i < n; i++ {
		el := []byte(fmt.Sprintf("element-%07d", i))
		els = append(els, el)
		pairs = append(pairs, el, []byte(fmt.Sprint(i)))
		scores = append(scores, float64(i%1000))
	}
	els = append(els, make([]byte, 3<<20)) // one element over every bound
	scores = append(scores, -1)
	pairs = append(pairs, []byte("big"), make([]byte, 3<<20))
	commit(t, ks, func(b *keyspace.Batch) {
		b.Del(0, []byte("s"))
		b.SAdd(0, []byte("s"), els...)
		b.ZAdd(0, []byte("z"), els, scores)
		b.RPush(0, []byte("l"), els...)
		b.HSet(0, []byte("h"), pairs...)
	})
	keys := []string{"s", "z", "l", "h"}
	want := collectionsState(t, ks, keys...)
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.arena"))
	largest, records := 0, 0
	for _, p := range segs {
		img, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range segmentRecords(t, img) {
			records++
			// The 3 MiB element is an operation, hence a record, of its own.
			if r.payload < 3<<20 || r.payload > 3<<20+64 {
				largest = max(largest, r.payload)
			}
		}
	}
	t.Logf("%d records, the largest (but the 3 MiB elements') %d bytes", records, largest)
	if largest > keyspace.RecordLimit {
		t.Fatalf("a record of %d bytes, over %d", largest, keyspace.RecordLimit)
	}
	ks = openKS(t, dir, 64<<20)
	defer ks.Close()
	if got := collectionsState(t, ks, keys...); got != want {
		t.Fatalf("state after reopen differs")
	}
}

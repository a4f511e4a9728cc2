package keyspace_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// hashState renders every key of every database: for a hash its fields in
// order, values, encoding and expiry; for a string its type. Two keyspaces
// with the same rendering answer every hash command the same way.
func hashState(t *testing.T, ks *keyspace.Keyspace) string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	var lines []string
	for db := 0; db < keyspace.NumDBs; db++ {
		var keys []string
		ks.Keys(db, func(k string) { keys = append(keys, k) })
		sort.Strings(keys)
		for _, k := range keys {
			at, _ := ks.ExpireAt(db, []byte(k))
			typ := ks.Type(db, []byte(k))
			line := fmt.Sprintf("db%d %q %s exp=%d", db, k, typ, at)
			if typ == keyspace.TypeHash {
				enc, ok, err := ks.HashEncoding(db, []byte(k))
				if !ok || err != nil {
					t.Fatalf("HashEncoding(%q): %v %v", k, ok, err)
				}
				n, _ := ks.HLen(db, []byte(k))
				line += fmt.Sprintf(" %s len=%d", enc, n)
				if err := ks.HRange(db, []byte(k), func(f, v []byte) { line += fmt.Sprintf(" %q=%q", f, v) }); err != nil {
					t.Fatal(err)
				}
			}
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func hashFieldsInOrder(t *testing.T, ks *keyspace.Keyspace, db int, key string) []string {
	t.Helper()
	var out []string
	if err := ks.HRange(db, []byte(key), func(f, _ []byte) { out = append(out, string(f)) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHashOpsReplay applies a random mix of every hash operation (sets of
// several fields, repeated fields, deletes of present and missing fields,
// emptying and re-creating keys, expiries, copies) over several databases,
// then checks that reopening rebuilds exactly the same state, field order
// and encoding included, before and after cleaning.
func TestHashOpsReplay(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	key := func() []byte { return []byte(fmt.Sprintf("h%d", r.IntN(6))) }
	field := func() []byte { return []byte(fmt.Sprintf("f%d", r.IntN(160))) }
	for i := 0; i < 5000; i++ {
		db := r.IntN(3)
		commit(t, ks, func(b *keyspace.Batch) {
			switch op := r.IntN(10); {
			case op < 5:
				var pairs [][]byte
				for n := 1 + r.IntN(3); n > 0; n-- {
					v := fmt.Sprintf("v%d", i)
					if r.IntN(50) == 0 {
						v = strings.Repeat("x", 65) // outgrows a listpack
					}
					pairs = append(pairs, field(), []byte(v))
				}
				b.HSet(db, key(), pairs...)
			case op < 8:
				b.HDel(db, key(), field(), field(), []byte("never"))
			case op == 8:
				if r.IntN(10) == 0 {
					b.Del(db, key())
				} else {
					b.Expire(db, key(), ks.NowMs()+int64(1+r.IntN(100))*3600_000)
				}
			default:
				ks.CopyValue(b, db, key(), (db+1)%3, key(), 0)
			}
		})
	}
	want := hashState(t, ks)
	if !strings.Contains(want, "listpack") || !strings.Contains(want, "hashtable") {
		t.Fatalf("the mix should leave both encodings:\n%s", want)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	if got := hashState(t, ks); got != want {
		t.Fatalf("state after reopen differs:\n got %s\nwant %s", got, want)
	}
	// Garbage elsewhere makes the cleaner go through every old segment,
	// rewriting each hash that has operations there.
	for i := 0; i < 60000; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.Set(5, []byte("junk"), make([]byte, 100), 0) })
	}
	commit(t, ks, func(b *keyspace.Batch) { b.Del(5, []byte("junk")) })
	ks.Clean()
	if ks.Stats().CleanedBytes < 4<<20 {
		t.Fatalf("cleaned only %d bytes: the hashes were not rewritten", ks.Stats().CleanedBytes)
	}
	if got := hashState(t, ks); got != want {
		t.Fatalf("state after cleaning differs:\n got %s\nwant %s", got, want)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if got := hashState(t, ks); got != want {
		t.Fatalf("state after cleaning and reopen differs:\n got %s\nwant %s", got, want)
	}
}

// TestHashCounterUpdatedManyTimesStaysCompact updates fields of a hash that
// has outgrown a listpack 150,000 times (a HINCRBY counter logs the new
// value each time) while deleting and re-adding others: cleaning keeps the
// arena small and the hash, TTL included, survives reopen.
func TestHashCounterUpdatedManyTimesStaysCompact(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	key := []byte("counters")
	for i := 0; i < 300; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.HSet(0, key, []byte(fmt.Sprintf("f%d", i)), []byte("0"))
		})
	}
	commit(t, ks, func(b *keyspace.Batch) { b.Expire(0, key, ks.NowMs()+3600_000) })
	for i := 1; i <= 150000; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.HSet(0, key, []byte("hot"), []byte(fmt.Sprint(i)))
			if i%1000 == 0 {
				b.HDel(0, key, []byte(fmt.Sprintf("f%d", i/1000)))
			}
		})
	}
	ks.Clean()
	if st := ks.Stats(); st.ArenaBytes > 8<<20 {
		t.Fatalf("arena %d bytes after 150,000 updates: not compacted (live %d)", st.ArenaBytes, st.LiveBytes)
	}
	want := hashState(t, ks)
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if got := hashState(t, ks); got != want {
		t.Fatalf("state after reopen differs:\n got %.300s\nwant %.300s", got, want)
	}
	ks.Lock()
	defer ks.Unlock()
	if v, ok, _ := ks.HGet(0, key, []byte("hot")); !ok || string(v) != "150000" {
		t.Fatalf("hot = %q", v)
	}
	if n, _ := ks.HLen(0, key); n != 300+1-150 {
		t.Fatalf("HLEN %d", n)
	}
	if at, _ := ks.ExpireAt(0, key); at == 0 {
		t.Fatalf("TTL lost")
	}
}

// TestHashOrderAndEncoding: a small hash keeps insertion order through
// deletes and is a listpack; 513 fields or a 65-byte value or field make
// it a hashtable for good (Redis never converts back), a copy included.
func TestHashOrderAndEncoding(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	k := []byte("h")
	commit(t, ks, func(b *keyspace.Batch) {
		b.HSet(0, k, []byte("a"), []byte("1"), []byte("b"), []byte("2"), []byte("c"), []byte("3"), []byte("d"), []byte("4"))
	})
	commit(t, ks, func(b *keyspace.Batch) { b.HDel(0, k, []byte("b")) })
	commit(t, ks, func(b *keyspace.Batch) { b.HSet(0, k, []byte("b"), []byte("5"), []byte("a"), []byte("6")) })
	ks.Lock()
	if got := hashFieldsInOrder(t, ks, 0, "h"); !slices.Equal(got, []string{"a", "c", "d", "b"}) {
		t.Errorf("order %q", got)
	}
	if enc, _, _ := ks.HashEncoding(0, k); enc != "listpack" {
		t.Errorf("encoding %s", enc)
	}
	ks.Unlock()

	check := func(name string, fill func(b *keyspace.Batch), want string) {
		t.Helper()
		commit(t, ks, func(b *keyspace.Batch) { b.Del(0, k); b.HSet(0, k, []byte("x"), []byte("y")) })
		commit(t, ks, fill)
		ks.Lock()
		defer ks.Unlock()
		if enc, _, _ := ks.HashEncoding(0, k); enc != want {
			t.Errorf("%s: encoding %s, want %s", name, enc, want)
		}
	}
	check("64-byte value", func(b *keyspace.Batch) { b.HSet(0, k, []byte("f"), make([]byte, 64)) }, "listpack")
	check("65-byte value", func(b *keyspace.Batch) { b.HSet(0, k, []byte("f"), make([]byte, 65)) }, "hashtable")
	check("65-byte field", func(b *keyspace.Batch) { b.HSet(0, k, make([]byte, 65), []byte("v")) }, "hashtable")
	fields := func(n int) func(b *keyspace.Batch) {
		return func(b *keyspace.Batch) {
			for i := 1; i < n; i++ { // plus "x"
				b.HSet(0, k, []byte(fmt.Sprint(i)), []byte("v"))
			}
		}
	}
	check("512 fields", fields(512), "listpack")
	check("513 fields", fields(513), "hashtable")
	// Sticky: deleting back to 2 fields keeps the hashtable.
	commit(t, ks, func(b *keyspace.Batch) {
		for i := 1; i < 512; i++ {
			b.HDel(0, k, []byte(fmt.Sprint(i)))
		}
	})
	ks.Lock()
	if enc, _, _ := ks.HashEncoding(0, k); enc != "hashtable" {
		t.Errorf("after shrinking: %s", enc)
	}
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) { ks.CopyValue(b, 0, k, 0, []byte("copy"), 0) })
	ks.Lock()
	defer ks.Unlock()
	if enc, _, _ := ks.HashEncoding(0, []byte("copy")); enc != "hashtable" {
		t.Errorf("copy of a converted hash: %s (Redis's COPY keeps the encoding)", enc)
	}
	if _, ok, err := ks.HashEncoding(0, []byte("missing")); ok || err != nil {
		t.Errorf("missing key: %v %v", ok, err)
	}
}

// TestHashWrongType: every hash read refuses a string, and string reads
// refuse a hash.
func TestHashWrongType(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("s"), []byte("v"), 0)
		b.HSet(0, []byte("h"), []byte("f"), []byte("v"))
	})
	ks.Lock()
	defer ks.Unlock()
	s := []byte("s")
	nop := func(_, _ []byte) {}
	errs := map[string]error{}
	_, _, errs["HGet"] = ks.HGet(0, s, []byte("f"))
	_, errs["HLen"] = ks.HLen(0, s)
	errs["HRange"] = ks.HRange(0, s, nop)
	_, errs["HScan"] = ks.HScan(0, s, 0, 10, nop)
	errs["HRandomFields"] = ks.HRandomFields(0, s, 3, true, nop)
	_, _, errs["HashEncoding"] = ks.HashEncoding(0, s)
	_, _, errs["Get on a hash"] = ks.Get(0, []byte("h"))
	for name, err := range errs {
		if err != keyspace.ErrWrongType {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n, err := ks.HLen(0, []byte("missing")); n != 0 || err != nil {
		t.Errorf("HLen of a missing key: %d %v", n, err)
	}
}

// TestHashScanBig: a hash past the listpack limits is scanned in steps,
// and every field present for the whole scan is returned even when fields
// are deleted and added between the steps.
func TestHashScanBig(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	k := []byte("big")
	const n = 1000
	commit(t, ks, func(b *keyspace.Batch) {
		for i := 0; i < n; i++ {
			b.HSet(0, k, []byte(fmt.Sprint(i)), []byte("v"+fmt.Sprint(i)))
		}
	})
	seen := map[string]int{}
	var cursor uint64
	steps := 0
	r := rand.New(rand.NewPCG(3, 4))
	for {
		ks.Lock()
		next, err := ks.HScan(0, k, cursor, 17, func(f, v []byte) {
			if string(v) != "v"+string(f) {
				t.Errorf("field %s value %s", f, v)
			}
			seen[string(f)]++
		})
		ks.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		steps++
		if next == 0 {
			break
		}
		cursor = next
		// Churn: delete two fields at or above 500, add one new field.
		commit(t, ks, func(b *keyspace.Batch) {
			b.HDel(0, k, []byte(fmt.Sprint(500+r.IntN(500))), []byte(fmt.Sprint(500+r.IntN(500))))
			b.HSet(0, k, []byte(fmt.Sprint(n+steps)), []byte("v"+fmt.Sprint(n+steps)))
		})
	}
	if steps < n/17 {
		t.Errorf("%d steps: a big hash should be scanned in steps", steps)
	}
	for i := 0; i < 500; i++ {
		if seen[fmt.Sprint(i)] == 0 {
			t.Errorf("field %d, present throughout, never returned", i)
		}
	}
	// A small hash comes back whole with cursor 0 whatever the count.
	commit(t, ks, func(b *keyspace.Batch) {
		b.HSet(0, []byte("small"), []byte("a"), []byte("1"), []byte("b"), []byte("2"), []byte("c"), []byte("3"))
	})
	ks.Lock()
	defer ks.Unlock()
	var got []string
	next, _ := ks.HScan(0, []byte("small"), 5, 1, func(f, _ []byte) { got = append(got, string(f)) })
	if next != 0 || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("small hash scan: next %d fields %q", next, got)
	}
}

// TestHashRandomFields: distinct sampling returns the requested number of
// distinct fields in hash order; repeats sampling returns exactly count
// picks; over many draws every field turns up.
func TestHashRandomFields(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	k := []byte("h")
	const n = 200
	commit(t, ks, func(b *keyspace.Batch) {
		for i := 0; i < n; i++ {
			b.HSet(0, k, []byte(fmt.Sprintf("%03d", i)), []byte(fmt.Sprint(i)))
		}
	})
	ks.Lock()
	defer ks.Unlock()
	order := hashFieldsInOrder(t, ks, 0, "h")
	pos := map[string]int{}
	for i, f := range order {
		pos[f] = i
	}
	hits := map[string]int{}
	for _, count := range []int{1, 2, 50, 199, 200, 500} {
		for trial := 0; trial < 20; trial++ {
			var got []string
			err := ks.HRandomFields(0, k, count, true, func(f, v []byte) {
				if iv, err := strconv.Atoi(string(v)); err != nil || fmt.Sprintf("%03d", iv) != string(f) {
					t.Errorf("field %s value %s", f, v)
				}
				got = append(got, string(f))
				hits[string(f)]++
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != min(count, n) {
				t.Fatalf("count %d: %d fields", count, len(got))
			}
			for i := 1; i < len(got); i++ {
				if pos[got[i-1]] >= pos[got[i]] {
					t.Fatalf("count %d: fields not distinct or not in hash order: %q", count, got)
				}
			}
		}
	}
	for _, f := range order {
		if hits[f] == 0 {
			t.Errorf("field %s never sampled", f)
		}
	}
	picks := 0
	if err := ks.HRandomFields(0, k, 1000, false, func(f, _ []byte) {
		if _, ok := pos[string(f)]; !ok {
			t.Errorf("unknown field %q", f)
		}
		picks++
	}); err != nil || picks != 1000 {
		t.Fatalf("repeats: %d picks, %v", picks, err)
	}
	if err := ks.HRandomFields(0, []byte("missing"), 3, false, func(_, _ []byte) { t.Error("missing key visited") }); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHashHSetHGet loads 100 hashes × 10,000 fields (64-byte values)
// and reports the Go heap bytes per field, then times HGET of random
// fields (b.N lookups).
func BenchmarkHashHSetHGet(b *testing.B) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	const keys, fields = 100, 10000
	val := make([]byte, 64)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	ks.Lock()
	for i := 0; i < fields; i++ {
		for k := 0; k < keys; k++ {
			bt := ks.NewBatch()
			bt.HSet(0, []byte(fmt.Sprintf("key:%d", k)), []byte(fmt.Sprintf("field:%d", i)), val)
			if err := ks.Commit(bt); err != nil {
				b.Fatal(err)
			}
		}
	}
	ks.Unlock()
	load := time.Since(start)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	var names [][]byte
	for i := 0; i < 4096; i++ {
		names = append(names, []byte(fmt.Sprintf("field:%d", rand.IntN(fields))))
	}
	var keyNames [][]byte
	for k := 0; k < keys; k++ {
		keyNames = append(keyNames, []byte(fmt.Sprintf("key:%d", k)))
	}
	b.ResetTimer()
	ks.Lock()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := ks.HGet(0, keyNames[i%keys], names[i%4096]); !ok {
			b.Fatal("missing")
		}
	}
	ks.Unlock()
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(keys*fields), "heapB/field")
	b.ReportMetric(float64(load.Nanoseconds())/(keys*fields), "ns/hset")
}

// TestHashIndexAgainstModel drives one hash through growth to thousands of
// fields, deletion back down to a few (the index shrinks) and regrowth,
// with random sets and deletes, and checks every lookup, the length and
// the fields against a map after each step; while the hash is small its
// order must be insertion order. The same checks run after reopening.
func TestHashIndexAgainstModel(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	k := []byte("h")
	model := map[string]string{}
	var order []string // insertion order while the hash is a listpack
	small := true
	r := rand.New(rand.NewPCG(5, 6))
	check := func(step int) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		n, _ := ks.HLen(0, k)
		if n != len(model) {
			t.Fatalf("step %d: HLEN %d, model %d", step, n, len(model))
		}
		got := map[string]string{}
		var gotOrder []string
		ks.HRange(0, k, func(f, v []byte) { got[string(f)] = string(v); gotOrder = append(gotOrder, string(f)) })
		if len(got) != len(model) {
			t.Fatalf("step %d: HRange %d distinct fields, model %d", step, len(got), len(model))
		}
		for f, v := range model {
			if got[f] != v {
				t.Fatalf("step %d: HRange %s=%q, model %q", step, f, got[f], v)
			}
			if hv, ok, _ := ks.HGet(0, k, []byte(f)); !ok || string(hv) != v {
				t.Fatalf("step %d: HGET %s = %q %v, model %q", step, f, hv, ok, v)
			}
		}
		for i := 0; i < 20; i++ {
			f := fmt.Sprint("absent", r.IntN(1000))
			if _, ok, _ := ks.HGet(0, k, []byte(f)); ok {
				t.Fatalf("step %d: HGET %s found", step, f)
			}
		}
		if small && !slices.Equal(gotOrder, order) {
			t.Fatalf("step %d: order %q, insertion order %q", step, gotOrder, order)
		}
	}
	phase := func(steps, fieldRange, setPercent int) {
		for i := 0; i < steps; i++ {
			f := fmt.Sprint("f", r.IntN(fieldRange))
			if r.IntN(100) < setPercent {
				v := fmt.Sprint("v", r.Int64())
				commit(t, ks, func(b *keyspace.Batch) { b.HSet(0, k, []byte(f), []byte(v)) })
				if _, ok := model[f]; !ok {
					order = append(order, f)
				}
				model[f] = v
				if len(model) > 512 {
					small = false
				}
			} else {
				commit(t, ks, func(b *keyspace.Batch) { b.HDel(0, k, []byte(f)) })
				if _, ok := model[f]; ok {
					delete(model, f)
					order = slices.DeleteFunc(order, func(s string) bool { return s == f })
				}
			}
			if i%97 == 0 {
				check(i)
			}
		}
		check(steps)
	}
	phase(3000, 100, 60)   // small: shifting deletes
	phase(20000, 5000, 80) // grows past 512: hashtable
	phase(40000, 5000, 5)  // shrinks to nearly nothing
	phase(10000, 3000, 70) // grows again
	want := hashState(t, ks)
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if got := hashState(t, ks); got != want {
		t.Fatalf("state after reopen differs")
	}
	check(0)
}

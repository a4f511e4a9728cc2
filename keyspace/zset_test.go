package keyspace_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

type zmodel map[string]float64

// sorted returns the model's members in (score, member) order.
func (m zmodel) sorted() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return m[a] < m[b] || (m[a] == m[b] && a < b)
	})
	return out
}

// checkZSet compares the sorted set at key with the model: order, scores,
// ranks, access by rank, backward links, score and lex range ranks.
func checkZSet(t *testing.T, ks *keyspace.Keyspace, key string, m zmodel) {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	z, err := ks.ZSetAt(0, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		if z != nil || ks.Exists(0, []byte(key)) {
			t.Fatalf("empty zset %q still exists", key)
		}
		return
	}
	if z == nil {
		t.Fatalf("zset %q missing", key)
	}
	want := m.sorted()
	if z.Len() != len(want) {
		t.Fatalf("len %d, want %d", z.Len(), len(want))
	}
	i := 0
	var last keyspace.ZNode
	for x := z.At(0); x != 0; x = z.Next(x) {
		if string(z.Member(x)) != want[i] || z.ScoreOf(x) != m[want[i]] {
			t.Fatalf("position %d: %q %v, want %q %v", i, z.Member(x), z.ScoreOf(x), want[i], m[want[i]])
		}
		last = x
		i++
	}
	if i != len(want) {
		t.Fatalf("walked %d elements, want %d", i, len(want))
	}
	for x := last; x != 0; x = z.Prev(x) {
		i--
		if string(z.Member(x)) != want[i] {
			t.Fatalf("backward position %d: %q, want %q", i, z.Member(x), want[i])
		}
	}
	for r, mem := range want {
		if got, ok := z.Rank([]byte(mem)); !ok || got != r {
			t.Fatalf("rank of %q = %d %v, want %d", mem, got, ok, r)
		}
		if s, ok := z.Score([]byte(mem)); !ok || s != m[mem] {
			t.Fatalf("score of %q = %v", mem, s)
		}
		if x := z.At(r); string(z.Member(x)) != mem {
			t.Fatalf("at %d: %q, want %q", r, z.Member(x), mem)
		}
	}
	for i := 0; i < 400; i++ {
		name := fmt.Sprintf("m%03d", i)
		if _, in := m[name]; !in {
			if _, ok := z.Score([]byte(name)); ok {
				t.Fatalf("removed member %q still has a score", name)
			}
			if _, ok := z.Rank([]byte(name)); ok {
				t.Fatalf("removed member %q still has a rank", name)
			}
		}
	}
	if z.At(len(want)) != 0 || z.At(-1) != 0 {
		t.Fatalf("At out of range returned an element")
	}
	for k := 0; k < 20; k++ {
		r := keyspace.ScoreRange{Min: float64(rand.IntN(60) - 5), Max: float64(rand.IntN(60) - 5), MinEx: rand.IntN(2) == 0, MaxEx: rand.IntN(2) == 0}
		lo, hi := z.ScoreRanks(r)
		wlo, whi := -1, -1
		for i, mem := range want {
			s := m[mem]
			in := (s > r.Min || (!r.MinEx && s == r.Min)) && (s < r.Max || (!r.MaxEx && s == r.Max))
			if in {
				if wlo < 0 {
					wlo = i
				}
				whi = i + 1
			}
		}
		if wlo < 0 {
			if lo < hi {
				t.Fatalf("range %+v: ranks [%d,%d), want none", r, lo, hi)
			}
		} else if lo != wlo || hi != whi {
			t.Fatalf("range %+v: ranks [%d,%d), want [%d,%d)", r, lo, hi, wlo, whi)
		}
	}
}

// TestZSetSkiplistAgainstModel applies random adds, score updates and
// removals and checks the structure against a model after each round, and
// again after reopening (replay).
func TestZSetSkiplistAgainstModel(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	m := zmodel{}
	for round := 0; round < 30; round++ {
		commit(t, ks, func(b *keyspace.Batch) {
			var mem [][]byte
			var sc []float64
			var rem [][]byte
			for i := 0; i < 50; i++ {
				name := fmt.Sprintf("m%03d", rand.IntN(300))
				if rand.IntN(4) == 0 {
					rem = append(rem, []byte(name))
					continue
				}
				s := float64(rand.IntN(50))
				if rand.IntN(10) == 0 {
					s = math.Inf(1 - 2*rand.IntN(2))
				}
				mem = append(mem, []byte(name))
				sc = append(sc, s)
			}
			b.ZAdd(0, []byte("z"), mem, sc)
			for i := range mem {
				m[string(mem[i])] = sc[i]
			}
			b.ZRem(0, []byte("z"), rem)
			for _, r := range rem {
				delete(m, string(r))
			}
		})
		checkZSet(t, ks, "z", m)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	checkZSet(t, ks, "z", m)

	// Remove everything: the key goes away, also after replay.
	commit(t, ks, func(b *keyspace.Batch) {
		var all []string
		for k := range m {
			all = append(all, k)
		}
		b.ZRemStrings(0, []byte("z"), all)
	})
	checkZSet(t, ks, "z", zmodel{})
}

// checkLexRanks compares LexRanks on the set at key with a walk of the
// model in order (the listpack walk Redis does on a small set).
func checkLexRanks(t *testing.T, ks *keyspace.Keyspace, key string, m zmodel) {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	z, _ := ks.ZSetAt(0, []byte(key))
	want := m.sorted()
	for k := 0; k < 30; k++ {
		r := keyspace.LexRange{
			Min: keyspace.LexBound{Value: fmt.Sprintf("m%03d", rand.IntN(130)), Ex: rand.IntN(2) == 0},
			Max: keyspace.LexBound{Value: fmt.Sprintf("m%03d", rand.IntN(130)), Ex: rand.IntN(2) == 0},
		}
		in := func(s string) (geMin, leMax bool) {
			geMin = s > r.Min.Value || (!r.Min.Ex && s == r.Min.Value)
			leMax = s < r.Max.Value || (!r.Max.Ex && s == r.Max.Value)
			return
		}
		lo, hi := z.LexRanks(r, false)
		if r.Empty() || len(want) == 0 {
			if lo < hi {
				t.Fatalf("lex %+v: [%d,%d), want none", r, lo, hi)
			}
			continue
		}
		if g, _ := in(want[len(want)-1]); !g {
			continue
		}
		if _, l := in(want[0]); !l {
			continue
		}
		wlo := 0
		for wlo < len(want) {
			if g, _ := in(want[wlo]); g {
				break
			}
			wlo++
		}
		whi := wlo
		for whi < len(want) {
			if _, l := in(want[whi]); !l {
				break
			}
			whi++
		}
		if lo != wlo || hi != whi {
			t.Fatalf("lex %+v: [%d,%d), want [%d,%d)", r, lo, hi, wlo, whi)
		}
	}
}

func zsetEncoding(t *testing.T, ks *keyspace.Keyspace, key string) string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	z, err := ks.ZSetAt(0, []byte(key))
	if err != nil || z == nil {
		t.Fatalf("zset %q: %v", key, err)
	}
	return z.Encoding()
}

// TestZSetSmallAgainstModel is TestZSetSkiplistAgainstModel on sets that
// stay within Redis's listpack limits (an ordered array here), with many
// equal scores so that members decide the order, then grown past 128
// members into a skiplist; each state is checked live and after reopening.
func TestZSetSmallAgainstModel(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	m := zmodel{}
	for round := 0; round < 60; round++ {
		commit(t, ks, func(b *keyspace.Batch) {
			var mem [][]byte
			var sc []float64
			var rem [][]byte
			for i := 0; i < 20; i++ {
				name := fmt.Sprintf("m%03d", rand.IntN(120))
				if rand.IntN(4) == 0 {
					rem = append(rem, []byte(name))
					continue
				}
				s := float64(rand.IntN(6))
				if rand.IntN(10) == 0 {
					s = math.Inf(1 - 2*rand.IntN(2))
				}
				mem = append(mem, []byte(name))
				sc = append(sc, s)
			}
			b.ZAdd(0, []byte("z"), mem, sc)
			for i := range mem {
				m[string(mem[i])] = sc[i]
			}
			b.ZRem(0, []byte("z"), rem)
			for _, r := range rem {
				delete(m, string(r))
			}
		})
		checkZSet(t, ks, "z", m)
		if len(m) > 0 {
			checkLexRanks(t, ks, "z", m)
			if e := zsetEncoding(t, ks, "z"); e != "listpack" {
				t.Fatalf("%d members: encoding %s", len(m), e)
			}
		}
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	checkZSet(t, ks, "z", m)

	// All on one score: lex order alone.
	commit(t, ks, func(b *keyspace.Batch) {
		var mem []string
		for i := 0; i < 120; i++ {
			mem = append(mem, fmt.Sprintf("m%03d", i))
		}
		sc := make([]float64, len(mem))
		b.ZAddStrings(0, []byte("z"), mem, sc)
		for _, k := range mem {
			m[k] = 0
		}
	})
	checkZSet(t, ks, "z", m)
	checkLexRanks(t, ks, "z", m)

	// Past 128 members: a skiplist, with the same contents.
	commit(t, ks, func(b *keyspace.Batch) {
		var mem []string
		var sc []float64
		for i := 120; i < 200; i++ {
			mem = append(mem, fmt.Sprintf("m%03d", i))
			sc = append(sc, float64(rand.IntN(6)))
		}
		b.ZAddStrings(0, []byte("z"), mem, sc)
		for i, k := range mem {
			m[k] = sc[i]
		}
	})
	checkZSet(t, ks, "z", m)
	if e := zsetEncoding(t, ks, "z"); e != "skiplist" {
		t.Fatalf("%d members: encoding %s", len(m), e)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	checkZSet(t, ks, "z", m)
	if e := zsetEncoding(t, ks, "z"); e != "skiplist" {
		t.Fatalf("%d members after reopening: encoding %s", len(m), e)
	}
}

// TestZSetScanVisitsEveryMember checks that a ZSCAN walk returns every
// member present throughout, while members are added, removed and moved.
func TestZSetScanVisitsEveryMember(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	var mem [][]byte
	var sc []float64
	for i := 0; i < 1000; i++ {
		mem = append(mem, []byte(fmt.Sprintf("stay%d", i)))
		sc = append(sc, float64(i))
	}
	commit(t, ks, func(b *keyspace.Batch) { b.ZAdd(0, []byte("z"), mem, sc) })
	seen := map[string]bool{}
	var cursor uint64
	for step := 0; ; step++ {
		ks.Lock()
		z, _ := ks.ZSetAt(0, []byte("z"))
		cursor = z.Scan(cursor, 10, func(m []byte, _ float64) { seen[string(m)] = true })
		ks.Unlock()
		if cursor == 0 {
			break
		}
		commit(t, ks, func(b *keyspace.Batch) {
			b.ZAdd(0, []byte("z"), [][]byte{[]byte(fmt.Sprintf("new%d", step)), mem[rand.IntN(len(mem))]}, []float64{float64(step), float64(rand.IntN(5000))})
			b.ZRem(0, []byte("z"), [][]byte{[]byte(fmt.Sprintf("new%d", step-1))})
		})
	}
	for _, m := range mem {
		if !seen[string(m)] {
			t.Fatalf("%s never returned by the scan", m)
		}
	}
}

// TestZSetUpdatedManyTimesStaysCompact increments one member's score
// 200,000 times (as ZINCRBY logs it: the new absolute score): cleaning
// rewrites the set whole, so the arena stays small, and the set survives
// reopening with its last scores and TTL.
func TestZSetUpdatedManyTimesStaysCompact(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	var mem [][]byte
	var sc []float64
	for i := 0; i < 100; i++ {
		mem = append(mem, []byte(fmt.Sprintf("m%d", i)))
		sc = append(sc, float64(i))
	}
	commit(t, ks, func(b *keyspace.Batch) { b.ZAdd(0, []byte("z"), mem, sc) })
	for i := 1; i <= 200000; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.ZAdd(0, []byte("z"), [][]byte{[]byte("hot")}, []float64{float64(i) * 0.5})
		})
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.ZRem(0, []byte("z"), [][]byte{[]byte("m0")})
		b.Expire(0, []byte("z"), ks.NowMs()+3600_000)
	})
	// The updates wrote about 8 MB of records; the live set is a few KB,
	// so cleaning must bring the arena down to its slack (2 MB) plus the
	// active segment.
	ks.Clean()
	if st := ks.Stats(); st.ArenaBytes > 4<<20 {
		t.Fatalf("arena %d bytes after 200,000 updates of one member: not compacted (live %d)", st.ArenaBytes, st.LiveBytes)
	}
	// Members are read from the log: after the segments that first held
	// them were cleaned away, every member must still read back.
	ks.Lock()
	z, _ := ks.ZSetAt(0, []byte("z"))
	seen := 0
	for x := z.At(0); x != 0; x = z.Next(x) {
		if m := string(z.Member(x)); m != "hot" && m != fmt.Sprintf("m%d", int(z.ScoreOf(x))) {
			t.Fatalf("member %q with score %v after cleaning", m, z.ScoreOf(x))
		}
		seen++
	}
	ks.Unlock()
	if seen != 100 {
		t.Fatalf("%d members after cleaning, want 100", seen)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	z, err := ks.ZSetAt(0, []byte("z"))
	if err != nil || z == nil {
		t.Fatalf("zset after reopen: %v %v", z, err)
	}
	if z.Len() != 100 {
		t.Fatalf("ZCARD %d, want 100", z.Len())
	}
	if s, ok := z.Score([]byte("hot")); !ok || s != 100000 {
		t.Fatalf("hot = %v %v", s, ok)
	}
	if r, _ := z.Rank([]byte("hot")); r != 99 {
		t.Fatalf("rank of hot %d", r)
	}
	if _, ok := z.Score([]byte("m0")); ok {
		t.Fatalf("removed member came back")
	}
	if at, _ := ks.ExpireAt(0, []byte("z")); at == 0 {
		t.Fatalf("TTL lost")
	}
	if ks.Type(0, []byte("z")) != keyspace.TypeZSet {
		t.Fatalf("type %s", ks.Type(0, []byte("z")))
	}
}

func TestZSetWrongType(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("s"), []byte("v"), 0)
		b.HSet(0, []byte("h"), []byte("f"), []byte("v"))
		b.ZAdd(0, []byte("z"), [][]byte{[]byte("a")}, []float64{1})
	})
	ks.Lock()
	defer ks.Unlock()
	for _, k := range []string{"s", "h"} {
		if _, err := ks.ZSetAt(0, []byte(k)); err != keyspace.ErrWrongType {
			t.Errorf("ZSetAt(%s): %v", k, err)
		}
	}
	if _, _, err := ks.Get(0, []byte("z")); err != keyspace.ErrWrongType {
		t.Errorf("GET on a zset: %v", err)
	}
	if _, err := ks.HLen(0, []byte("z")); err != keyspace.ErrWrongType {
		t.Errorf("HLEN on a zset: %v", err)
	}
	if z, err := ks.ZSetAt(0, []byte("missing")); z != nil || err != nil {
		t.Errorf("missing key: %v %v", z, err)
	}
}

// TestZSetCopyRenameMove: the framework's generic commands rebuild a zset
// through rebuild (chunked), including one larger than a chunk.
func TestZSetCopyViaRebuild(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 4<<20)
	m := zmodel{}
	var mem [][]byte
	var sc []float64
	for i := 0; i < 3000; i++ {
		k := fmt.Sprintf("e%d", i)
		s := float64(rand.IntN(100))
		mem = append(mem, []byte(k))
		sc = append(sc, s)
		m[k] = s
	}
	commit(t, ks, func(b *keyspace.Batch) { b.ZAdd(0, []byte("src"), mem, sc) })
	commit(t, ks, func(b *keyspace.Batch) { ks.CopyValue(b, 0, []byte("src"), 0, []byte("dst"), 0) })
	checkZSet(t, ks, "dst", m)
	ks.Close()
	ks = openKS(t, dir, 4<<20)
	defer ks.Close()
	checkZSet(t, ks, "dst", m)
	checkZSet(t, ks, "src", m)
}

// BenchmarkZSet measures ZADD (a score update of a random member, logged
// and committed), ZSCORE, ZRANK and access by rank on sets of 1,000 and
// 1,000,000 members: the cost grows like log n (ZSCORE like a map lookup),
// not like n; at 1,000,000 members most of each step is a cache miss. It
// also reports the Go heap bytes per member (the member bytes themselves
// stay in the arena mapping) and the process's CPU time per operation.
func BenchmarkZSet(b *testing.B) {
	for _, size := range []int{1_000, 1_000_000} {
		ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
		if err != nil {
			b.Fatal(err)
		}
		members := make([][]byte, size)
		scores := make([]float64, size)
		for i := range members {
			members[i] = []byte(fmt.Sprintf("member:%d", i))
			scores[i] = float64(rand.IntN(70000))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ks.Lock()
		for i := 0; i < size; i += 10000 {
			bt := ks.NewBatch()
			end := min(i+10000, size)
			bt.ZAdd(0, []byte("z"), members[i:end], scores[i:end])
			if err := ks.Commit(bt); err != nil {
				b.Fatal(err)
			}
		}
		ks.Unlock()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heapPerMember := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(size)
		b.Run(fmt.Sprintf("ZADD/%d", size), func(b *testing.B) {
			ks.Lock()
			defer ks.Unlock()
			m := [][]byte{nil}
			s := []float64{0}
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				bt := ks.NewBatch()
				m[0] = members[i%size]
				s[0] = float64(rand.IntN(70000))
				bt.ZAdd(0, []byte("z"), m, s)
				if err := ks.Commit(bt); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("ZSCORE/%d", size), func(b *testing.B) {
			ks.Lock()
			defer ks.Unlock()
			z, _ := ks.ZSetAt(0, []byte("z"))
			b.ReportMetric(heapPerMember, "heapB/member")
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				if _, ok := z.Score(members[rand.IntN(size)]); !ok {
					b.Fatal("missing")
				}
			}
		})
		b.Run(fmt.Sprintf("ZRANK/%d", size), func(b *testing.B) {
			ks.Lock()
			defer ks.Unlock()
			z, _ := ks.ZSetAt(0, []byte("z"))
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				if _, ok := z.Rank(members[rand.IntN(size)]); !ok {
					b.Fatal("missing")
				}
			}
		})
		b.Run(fmt.Sprintf("ZRANGE-at-rank/%d", size), func(b *testing.B) {
			ks.Lock()
			defer ks.Unlock()
			z, _ := ks.ZSetAt(0, []byte("z"))
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				if z.At(rand.IntN(size)) == 0 {
					b.Fatal("missing")
				}
			}
		})
		ks.Close()
	}
}

// TestZSetHeapPerElement loads sorted sets as bench-restart.sh's target-4
// phase does (200 keys of 1,000 members "f:%014d" with scores 0-999, 100
// members a ZADD) and bounds the Go heap they cost per element: issue 11
// target 4 asks for at most half of redis-server's 129.8 B (anonymous RSS
// per element, 2026-12-02), so the heap, which is most of that RSS, must
// stay well under 65 B.
func TestZSetHeapPerElement(t *testing.T) {
	ks := openKS(t, t.TempDir(), 64<<20)
	defer ks.Close()
	const keys, elems, step = 200, 1000, 100
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mem := make([][]byte, step)
	sc := make([]float64, step)
	for k := 0; k < keys; k++ {
		key := []byte(fmt.Sprintf("c:%014d", k))
		for e := 0; e < elems; e += step {
			for j := range mem {
				mem[j] = []byte(fmt.Sprintf("f:%014d", e+j))
				sc[j] = float64(e + j)
			}
			commit(t, ks, func(b *keyspace.Batch) { b.ZAdd(0, key, mem, sc) })
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := float64(keys * elems)
	alloc := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	inuse := float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / n
	t.Logf("Go heap per element: %.1f B allocated, %.1f B in use", alloc, inuse)
	// The bound is on the live heap after a collection: HeapInuse also
	// counts partly used spans and whatever other goroutines hold, and
	// read 60.9 B under the race detector where the live heap was 51.4 B.
	if alloc > 60 {
		t.Fatalf("sorted sets cost %.1f B of live Go heap per element, want <= 60", alloc)
	}
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per operation (cpu-ns/op, the figure to compare on a
// loaded machine).
func reportCPU(b *testing.B) func() {
	t0 := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-t0)/float64(b.N), "cpu-ns/op") }
}

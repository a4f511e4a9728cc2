package keyspace_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

func setArgs(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// setState is what a test compares across a reopen: every set key with its
// sorted members, encoding and expiry.
func setState(t *testing.T, ks *keyspace.Keyspace, keys ...string) map[string]string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	out := map[string]string{}
	for _, k := range keys {
		mb, err := ks.SMemberBytes(0, []byte(k))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if mb == nil {
			out[k] = "missing"
			continue
		}
		var ms []string
		for _, m := range mb {
			ms = append(ms, string(m))
		}
		slices.Sort(ms)
		enc, _, _ := ks.SetEncoding(0, []byte(k))
		at, _ := ks.ExpireAt(0, []byte(k))
		out[k] = fmt.Sprintf("%q %s ttl=%v type=%s", ms, enc, at != 0, ks.Type(0, []byte(k)))
	}
	return out
}

// TestSetOpsReplay applies every kind of set operation (and the batches
// SMOVE, SPOP and the *STORE commands write) and checks that reopening
// rebuilds exactly the same sets.
func TestSetOpsReplay(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	commit(t, ks, func(b *keyspace.Batch) {
		b.SAdd(0, []byte("ints"), setArgs("3", "1", "2", "-7")...)
		b.SAdd(0, []byte("words"), setArgs("a", "b", "c", "d")...)
		b.SAdd(0, []byte("gone"), setArgs("x")...)
		b.Set(0, []byte("str"), []byte("v"), 0)
	})
	commit(t, ks, func(b *keyspace.Batch) { b.SRem(0, []byte("words"), setArgs("b", "nope")...) })
	// Emptied: deleted.
	commit(t, ks, func(b *keyspace.Batch) { b.SRem(0, []byte("gone"), setArgs("x")...) })
	// SMOVE words -> ints
	commit(t, ks, func(b *keyspace.Batch) {
		b.SRem(0, []byte("words"), setArgs("a")...)
		b.SAdd(0, []byte("ints"), setArgs("a")...)
	})
	// SUNIONSTORE str ints words: overwrites a string
	commit(t, ks, func(b *keyspace.Batch) {
		b.Del(0, []byte("str"))
		b.SAdd(0, []byte("str"), setArgs("1", "2", "c")...)
	})
	commit(t, ks, func(b *keyspace.Batch) { b.Expire(0, []byte("words"), ks.NowMs()+3600_000) })
	big := make([]string, 600)
	for i := range big {
		big[i] = strconv.Itoa(i)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("big"), setArgs(big...)...) })
	commit(t, ks, func(b *keyspace.Batch) { b.SRem(0, []byte("big"), setArgs(big[10:]...)...) })

	keys := []string{"ints", "words", "gone", "str", "big", "never"}
	before := setState(t, ks, keys...)
	want := map[string]string{
		"ints":  `["-7" "1" "2" "3" "a"] hashtable ttl=false type=set`,
		"words": `["c" "d"] hashtable ttl=true type=set`,
		"gone":  "missing",
		"str":   `["1" "2" "c"] hashtable ttl=false type=set`,
		"big":   `["0" "1" "2" "3" "4" "5" "6" "7" "8" "9"] hashtable ttl=false type=set`,
		"never": "missing",
	}
	if !reflect.DeepEqual(before, want) {
		t.Fatalf("state before reopen:\n%v\nwant\n%v", before, want)
	}
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if after := setState(t, ks, keys...); !reflect.DeepEqual(after, before) {
		t.Fatalf("state after reopen:\n%v\nwant\n%v", after, before)
	}
}

// TestSetEncoding follows Redis 7.0's rules: integers only and at most 512
// members is "intset"; a non-integer member or a 513th member makes it
// "hashtable", and removing members never converts back.
func TestSetEncoding(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	enc := func(key string) string {
		ks.Lock()
		defer ks.Unlock()
		e, ok, err := ks.SetEncoding(0, []byte(key))
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", key, ok, err)
		}
		return e
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.SAdd(0, []byte("i"), setArgs("0", "-1", "9223372036854775807", "-9223372036854775808")...)
		for _, m := range []string{"007", "-0", "1.0", "9223372036854775808", " 1", "+1", ""} {
			b.SAdd(0, []byte("h"+m), []byte(m))
		}
	})
	if e := enc("i"); e != "intset" {
		t.Errorf("integers: %s", e)
	}
	for _, m := range []string{"007", "-0", "1.0", "9223372036854775808", " 1", "+1", ""} {
		if e := enc("h" + m); e != "hashtable" {
			t.Errorf("member %q: %s, want hashtable", m, e)
		}
	}
	for i := 0; i < 512-4; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("i"), []byte(strconv.Itoa(i+1))) })
	}
	if e := enc("i"); e != "intset" {
		t.Errorf("512 integers: %s", e)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("i"), []byte("100000")) })
	if e := enc("i"); e != "hashtable" {
		t.Errorf("513 integers: %s", e)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SRem(0, []byte("i"), []byte("100000")) })
	if e := enc("i"); e != "hashtable" {
		t.Errorf("back to 512: %s (Redis does not convert back)", e)
	}
	ks.Lock()
	defer ks.Unlock()
	if _, ok, err := ks.SetEncoding(0, []byte("missing")); ok || err != nil {
		t.Errorf("missing key: %v %v", ok, err)
	}
}

// TestSetUpdatedManyTimesStaysCompact adds and removes one member 200,000
// times: cleaning rewrites the set whole, so the arena stays small, and
// the sets survive reopening with their members, TTL and encoding (a
// hashtable-encoded set whose members alone would be an intset stays
// hashtable through the rewrite).
func TestSetUpdatedManyTimesStaysCompact(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	for i := 0; i < 50; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("s"), []byte(fmt.Sprintf("m%d", i))) })
	}
	big := make([]string, 600)
	for i := range big {
		big[i] = strconv.Itoa(i)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("ht"), setArgs(big...)...) })
	commit(t, ks, func(b *keyspace.Batch) { b.SRem(0, []byte("ht"), setArgs(big[3:]...)...) })
	for i := 0; i < 100000; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("s"), []byte("hot-member-with-some-length")) })
		commit(t, ks, func(b *keyspace.Batch) { b.SRem(0, []byte("s"), []byte("hot-member-with-some-length")) })
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.SAdd(0, []byte("s"), []byte("last"))
		b.SRem(0, []byte("s"), []byte("m0"))
		b.Expire(0, []byte("s"), ks.NowMs()+3600_000)
	})
	ks.Clean()
	st := ks.Stats()
	if st.ArenaBytes > 8<<20 {
		t.Fatalf("arena %d bytes after 200,000 updates of one member: not compacted (live %d)", st.ArenaBytes, st.LiveBytes)
	}
	if st.CleanedBytes == 0 {
		t.Fatalf("nothing was cleaned")
	}
	before := setState(t, ks, "s", "ht")
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	after := setState(t, ks, "s", "ht")
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("after reopen %v, before %v", after, before)
	}
	ks.Lock()
	defer ks.Unlock()
	if n, _ := ks.SCard(0, []byte("s")); n != 50 {
		t.Fatalf("SCARD %d, want 50", n)
	}
	for m, want := range map[string]bool{"last": true, "m0": false, "m1": true, "hot-member-with-some-length": false} {
		if in, _ := ks.SIsMember(0, []byte("s"), []byte(m)); in != want {
			t.Errorf("SISMEMBER %s = %v", m, in)
		}
	}
	if at, _ := ks.ExpireAt(0, []byte("s")); at == 0 {
		t.Errorf("TTL lost")
	}
	if e, _, _ := ks.SetEncoding(0, []byte("ht")); e != "hashtable" {
		t.Errorf("encoding of ht after cleaning and reopen: %s", e)
	}
}

func TestSetWrongType(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("str"), []byte("v"), 0)
		b.SAdd(0, []byte("s"), []byte("a"))
	})
	ks.Lock()
	defer ks.Unlock()
	k := []byte("str")
	checks := map[string]error{}
	_, checks["SIsMember"] = ks.SIsMember(0, k, []byte("a"))
	_, checks["SCard"] = ks.SCard(0, k)
	_, checks["SMembers"] = ks.SMembers(0, k)
	_, checks["SMemberBytes"] = ks.SMemberBytes(0, k)
	_, checks["SFilter"] = ks.SFilter(0, k, setArgs("a"), false)
	_, checks["SScan"] = ks.SScan(0, k, 0, 10, func([]byte) {})
	_, _, checks["SRandomMember"] = ks.SRandomMember(0, k)
	checks["SRandomMembers"] = ks.SRandomMembers(0, k, 3, func([]byte) {})
	_, checks["SSample"] = ks.SSample(0, k, 3)
	_, _, checks["SetEncoding"] = ks.SetEncoding(0, k)
	_, checks["SInter"] = ks.SInter(0, setArgs("missing", "str"), 0)
	_, checks["SInter2"] = ks.SInter(0, setArgs("s", "str"), 0)
	_, checks["SUnion"] = ks.SUnion(0, setArgs("s", "str"))
	_, checks["SDiff"] = ks.SDiff(0, setArgs("missing", "str"))
	for name, err := range checks {
		if err != keyspace.ErrWrongType {
			t.Errorf("%s on a string: %v", name, err)
		}
	}
	if _, _, err := ks.Get(0, []byte("s")); err != keyspace.ErrWrongType {
		t.Errorf("GET on a set: %v", err)
	}
	if ks.Type(0, []byte("s")) != keyspace.TypeSet {
		t.Errorf("TYPE %s", ks.Type(0, []byte("s")))
	}
}

// TestSetScanSurvivesDeletions: every member present for the whole scan
// is returned at least once, while other members are added and removed
// between the steps.
func TestSetScanSurvivesDeletions(t *testing.T) {
	ks := openKS(t, t.TempDir(), 4<<20)
	defer ks.Close()
	var stable, churn []string
	for i := 0; i < 1000; i++ {
		stable = append(stable, fmt.Sprintf("stable-%d", i))
		churn = append(churn, fmt.Sprintf("churn-%d", i))
	}
	commit(t, ks, func(b *keyspace.Batch) {
		b.SAdd(0, []byte("s"), setArgs(stable...)...)
		b.SAdd(0, []byte("s"), setArgs(churn...)...)
	})
	seen := map[string]bool{}
	cursor := uint64(0)
	for step := 0; ; step++ {
		if step > 10000 {
			t.Fatal("SSCAN does not terminate")
		}
		ks.Lock()
		next, err := ks.SScan(0, []byte("s"), cursor, 7, func(m []byte) { seen[string(m)] = true })
		ks.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if next == 0 {
			break
		}
		cursor = next
		commit(t, ks, func(b *keyspace.Batch) {
			if step < len(churn) {
				b.SRem(0, []byte("s"), []byte(churn[rand.IntN(len(churn))]))
			}
			b.SAdd(0, []byte("s"), []byte(fmt.Sprintf("new-%d", step)))
		})
	}
	for _, m := range stable {
		if !seen[m] {
			t.Fatalf("member %s present throughout was not returned", m)
		}
	}
}

func TestSetSampling(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	var all []string
	for i := 0; i < 100; i++ {
		all = append(all, fmt.Sprintf("m%d", i))
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SAdd(0, []byte("s"), setArgs(all...)...) })
	ks.Lock()
	defer ks.Unlock()
	for _, n := range []int{0, 1, 2, 50, 99, 100, 1000} {
		got, err := ks.SSample(0, []byte("s"), n)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != min(n, 100) {
			t.Errorf("SSample %d: %d members", n, len(got))
		}
		distinct := map[string]bool{}
		for _, mb := range got {
			m := string(mb)
			if distinct[m] || !slices.Contains(all, m) {
				t.Fatalf("SSample %d: %q repeated or foreign in %q", n, m, got)
			}
			distinct[m] = true
		}
	}
	// Every member can be drawn: 2,000 samples of 10 out of 100.
	drawn := map[string]bool{}
	for i := 0; i < 2000; i++ {
		got, _ := ks.SSample(0, []byte("s"), 10)
		for _, m := range got {
			drawn[string(m)] = true
		}
	}
	if len(drawn) != 100 {
		t.Errorf("only %d of 100 members ever sampled", len(drawn))
	}
	reps := 0
	_ = ks.SRandomMembers(0, []byte("s"), 500, func(m []byte) {
		if !slices.Contains(all, string(m)) {
			t.Fatalf("SRandomMembers: foreign %q", m)
		}
		reps++
	})
	if reps != 500 {
		t.Errorf("SRandomMembers: %d", reps)
	}
	if got, err := ks.SSample(0, []byte("missing"), 3); got != nil || err != nil {
		t.Errorf("missing key: %q %v", got, err)
	}
}

// TestSetAgainstModel drives random SADD and SREM batches (growing the set
// to thousands of members and shrinking it back, so the index resizes both
// ways) and compares the set with a map after every step, and after
// reopening.
func TestSetAgainstModel(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	model := map[string]bool{}
	universe := make([]string, 5000)
	for i := range universe {
		universe[i] = fmt.Sprintf("u%d", i)
	}
	check := func(step int) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		if n, _ := ks.SCard(0, []byte("s")); n != len(model) {
			t.Fatalf("step %d: SCARD %d, model %d", step, n, len(model))
		}
		for _, m := range universe[:300] {
			if in, _ := ks.SIsMember(0, []byte("s"), []byte(m)); in != model[m] {
				t.Fatalf("step %d: SISMEMBER %s = %v", step, m, in)
			}
		}
		mb, _ := ks.SMemberBytes(0, []byte("s"))
		got := map[string]bool{}
		for _, m := range mb {
			got[string(m)] = true
		}
		if len(got) != len(mb) || !reflect.DeepEqual(got, model) {
			t.Fatalf("step %d: members differ from the model (%d vs %d)", step, len(got), len(model))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 400; step++ {
		grow := (step/100)%2 == 0
		var add, rem [][]byte
		for i := 0; i < 40; i++ {
			m := universe[rng.IntN(len(universe))]
			if grow || rng.IntN(4) == 0 {
				add = append(add, []byte(m))
			} else {
				rem = append(rem, []byte(m))
			}
		}
		// Removals target existing members mostly, so the set shrinks.
		if !grow {
			for m := range model {
				if len(rem) >= 80 {
					break
				}
				rem = append(rem, []byte(m))
			}
		}
		commit(t, ks, func(b *keyspace.Batch) {
			b.SAdd(0, []byte("s"), add...)
			b.SRem(0, []byte("s"), rem...)
		})
		for _, m := range add {
			model[string(m)] = true
		}
		for _, m := range rem {
			delete(model, string(m))
		}
		check(step)
	}
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	check(-1)
}

// BenchmarkSetSIsMember measures SISMEMBER on sets of 10,007 members of 64
// bytes, and reports the Go heap bytes per member the sets cost.
func BenchmarkSetSIsMember(b *testing.B) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	const keys, members = 20, 10007
	member := func(i int) []byte { return []byte(fmt.Sprintf("%064d", i)) }
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for k := 0; k < keys; k++ {
		key := []byte(fmt.Sprintf("set:%d", k))
		for i := 0; i < members; i += 1000 {
			ks.Lock()
			batch := ks.NewBatch()
			var ms [][]byte
			for j := i; j < min(i+1000, members); j++ {
				ms = append(ms, member(j))
			}
			batch.SAdd(0, key, ms...)
			if err := ks.Commit(batch); err != nil {
				b.Fatal(err)
			}
			ks.Unlock()
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heapPerMember := float64(after.HeapAlloc-before.HeapAlloc) / (keys * members)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ks.Lock()
		in, _ := ks.SIsMember(0, []byte(fmt.Sprintf("set:%d", i%keys)), member(i%(2*members)))
		ks.Unlock()
		if in != (i%(2*members) < members) {
			b.Fatal("wrong membership")
		}
	}
	b.ReportMetric(heapPerMember, "heapB/member")
}

// BenchmarkSetSAdd measures committing SADD of one new 64-byte member.
func BenchmarkSetSAdd(b *testing.B) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	for i := 0; i < b.N; i++ {
		key := []byte(fmt.Sprintf("set:%d", i%1000))
		m := []byte(fmt.Sprintf("%064d", i))
		ks.Lock()
		if fresh, _ := ks.SFilter(0, key, [][]byte{m}, false); len(fresh) == 1 {
			batch := ks.NewBatch()
			batch.SAdd(0, key, m)
			if err := ks.Commit(batch); err != nil {
				b.Fatal(err)
			}
		}
		ks.Unlock()
	}
}

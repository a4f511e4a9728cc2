package keyspace_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// listContents reads the list at key (nil when missing).
func listContents(t *testing.T, ks *keyspace.Keyspace, db int, key string) []string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	v, err := ks.List(db, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := 0; i < v.Len(); i++ {
		out = append(out, string(v.At(i)))
	}
	return out
}

// listModel applies the same operations to plain slices.
type listModel map[string][]string

func (m listModel) check(t *testing.T, ks *keyspace.Keyspace, when string) {
	t.Helper()
	for key, want := range m {
		got := listContents(t, ks, 0, key)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: list %s = %q, want %q", when, key, got, want)
		}
		ks.Lock()
		typ := ks.Type(0, []byte(key))
		ks.Unlock()
		if len(want) == 0 && typ != keyspace.TypeNone || len(want) > 0 && typ != keyspace.TypeList {
			t.Fatalf("%s: TYPE %s = %s with %d elements", when, key, typ, len(want))
		}
	}
}

// TestListOpsReplay drives every list operation at random against a model,
// then checks the state after reopening, after cleaning, and after
// reopening the cleaned arena: replay must reproduce exactly the same
// lists (LINSERT, LREM and LTRIM included).
func TestListOpsReplay(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	m := listModel{}
	keys := []string{"a", "b", "c"}
	val := func() string { return fmt.Sprintf("v%d", rng.IntN(8)) }
	for step := 0; step < 20000; step++ {
		key := keys[rng.IntN(len(keys))]
		l := m[key]
		n := len(l)
		k := []byte(key)
		switch op := rng.IntN(9); {
		case op <= 1 || n == 0:
			vals := []string{val(), val(), val()}[:1+rng.IntN(3)]
			bs := make([][]byte, len(vals))
			for i, v := range vals {
				bs[i] = []byte(v)
			}
			if op == 0 {
				commit(t, ks, func(b *keyspace.Batch) { b.LPush(0, k, bs...) })
				for _, v := range vals {
					l = append([]string{v}, l...)
				}
			} else {
				commit(t, ks, func(b *keyspace.Batch) { b.RPush(0, k, bs...) })
				l = append(l, vals...)
			}
		case op == 2:
			c := 1 + rng.IntN(3)
			commit(t, ks, func(b *keyspace.Batch) { b.LPop(0, k, c) })
			l = l[min(c, n):]
		case op == 3:
			c := 1 + rng.IntN(3)
			commit(t, ks, func(b *keyspace.Batch) { b.RPop(0, k, c) })
			l = l[:n-min(c, n)]
		case op == 4:
			i, v := rng.IntN(n), val()
			commit(t, ks, func(b *keyspace.Batch) { b.LSet(0, k, i, []byte(v)) })
			l[i] = v
		case op == 5:
			i, v := rng.IntN(n+1), val()
			commit(t, ks, func(b *keyspace.Batch) { b.LInsert(0, k, i, []byte(v)) })
			l = slices.Insert(l, i, v)
		case op == 6:
			c, v := int64(rng.IntN(5)-2), val()
			commit(t, ks, func(b *keyspace.Batch) { b.LRem(0, k, c, []byte(v)) })
			l = modelLRem(l, c, v)
		case op == 7:
			start := rng.IntN(n)
			cnt := 1 + rng.IntN(n-start)
			commit(t, ks, func(b *keyspace.Batch) { b.LTrim(0, k, start, cnt) })
			l = l[start : start+cnt]
		default:
			// LMOVE-like: pop from one, push to another, one batch.
			dst := keys[rng.IntN(len(keys))]
			v := l[n-1]
			commit(t, ks, func(b *keyspace.Batch) {
				b.RPop(0, k, 1)
				b.LPush(0, []byte(dst), []byte(v))
			})
			m[key] = l[:n-1]
			m[dst] = append([]string{v}, m[dst]...)
			continue
		}
		m[key] = slices.Clone(l)
		if step%1000 == 0 {
			m.check(t, ks, fmt.Sprintf("step %d", step))
		}
	}
	m.check(t, ks, "live")
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	m.check(t, ks, "after reopen")
	ks.Clean()
	m.check(t, ks, "after clean")
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	m.check(t, ks, "after clean and reopen")
}

func modelLRem(l []string, count int64, v string) []string {
	var idx []int
	if count >= 0 {
		for i := 0; i < len(l) && (count == 0 || int64(len(idx)) < count); i++ {
			if l[i] == v {
				idx = append(idx, i)
			}
		}
	} else {
		for i := len(l) - 1; i >= 0 && int64(len(idx)) < -count; i-- {
			if l[i] == v {
				idx = append(idx, i)
			}
		}
	}
	var out []string
	for i, x := range l {
		if !slices.Contains(idx, i) {
			out = append(out, x)
		}
	}
	return out
}

// TestListUpdatedManyTimesStaysCompact: 200,000 LSETs of one element and
// 200,000 push/pop pairs on a small list must not keep the arena growing;
// the lists survive cleaning and reopening, TTL included.
func TestListUpdatedManyTimesStaysCompact(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	// A list longer than one rebuild chunk, written once at the start: the
	// cleaner must carry all of it forward.
	var big []string
	var bigVals [][]byte
	for i := 0; i < 3000; i++ {
		big = append(big, fmt.Sprintf("big%d", i))
		bigVals = append(bigVals, []byte(big[i]))
	}
	commit(t, ks, func(b *keyspace.Batch) { b.RPush(0, []byte("big"), bigVals...) })
	var want []string
	for i := 0; i < 50; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.RPush(0, []byte("l"), []byte(fmt.Sprintf("e%d", i))) })
		want = append(want, fmt.Sprintf("e%d", i))
	}
	for i := 0; i < 200000; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.LSet(0, []byte("l"), 7, []byte(fmt.Sprintf("value-%d", i))) })
	}
	want[7] = "value-199999"
	queue := []string{"q0", "q1", "q2"}
	commit(t, ks, func(b *keyspace.Batch) { b.RPush(0, []byte("q"), []byte("q0"), []byte("q1"), []byte("q2")) })
	for i := 3; i < 200003; i++ {
		v := fmt.Sprintf("q%d", i)
		commit(t, ks, func(b *keyspace.Batch) {
			b.RPush(0, []byte("q"), []byte(v))
			b.LPop(0, []byte("q"), 1)
		})
		queue = append(queue[1:], v)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.Expire(0, []byte("l"), ks.NowMs()+3600_000) })
	ks.Clean()
	st := ks.Stats()
	if st.ArenaBytes > 8<<20 {
		t.Fatalf("arena %d bytes after 400,000 updates of small lists: not compacted (live %d)", st.ArenaBytes, st.LiveBytes)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if got := listContents(t, ks, 0, "l"); !slices.Equal(got, want) {
		t.Fatalf("l = %q", got)
	}
	if got := listContents(t, ks, 0, "big"); !slices.Equal(got, big) {
		t.Fatalf("big has %d elements after cleaning and reopening, want %d", len(got), len(big))
	}
	if got := listContents(t, ks, 0, "q"); !slices.Equal(got, queue) {
		t.Fatalf("q = %q, want %q", got, queue)
	}
	ks.Lock()
	defer ks.Unlock()
	if at, _ := ks.ExpireAt(0, []byte("l")); at == 0 {
		t.Fatalf("TTL lost")
	}
	if _, _, err := ks.Get(0, []byte("l")); err != keyspace.ErrWrongType {
		t.Fatalf("GET on a list: %v", err)
	}
}

func TestListWrongTypeAndHook(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("s"), []byte("x"), 0) })
	var ready []string
	ks.Lock()
	if _, err := ks.List(0, []byte("s")); err != keyspace.ErrWrongType {
		t.Fatalf("List on a string: %v", err)
	}
	if v, err := ks.List(0, []byte("missing")); err != nil || v.Exists() || v.Len() != 0 {
		t.Fatalf("List on a missing key: %v %v", v.Exists(), err)
	}
	ks.OnKeyReady(func(db int, key []byte) { ready = append(ready, fmt.Sprintf("%d/%s", db, key)) })
	ks.Unlock()
	commit(t, ks, func(b *keyspace.Batch) { b.RPush(3, []byte("l"), []byte("a")) })
	commit(t, ks, func(b *keyspace.Batch) { b.LPop(3, []byte("l"), 1) })
	commit(t, ks, func(b *keyspace.Batch) { b.LPush(0, []byte("m"), []byte("a")) })
	commit(t, ks, func(b *keyspace.Batch) { b.LInsert(0, []byte("m"), 0, []byte("b")) })
	commit(t, ks, func(b *keyspace.Batch) { b.LSet(0, []byte("m"), 0, []byte("c")) })
	ks.Lock()
	ok := ks.CopyValue(ks.NewBatch(), 0, []byte("m"), 1, []byte("copy"), 0)
	ks.Unlock()
	if !ok {
		t.Fatal("CopyValue")
	}
	commit(t, ks, func(b *keyspace.Batch) { ks.CopyValue(b, 0, []byte("m"), 1, []byte("copy"), 0) })
	want := []string{"3/l", "0/m", "0/m", "1/copy"}
	if !slices.Equal(ready, want) {
		t.Fatalf("OnKeyReady calls %q, want %q", ready, want)
	}
	if got := listContents(t, ks, 1, "copy"); !slices.Equal(got, []string{"c", "a"}) {
		t.Fatalf("copy = %q", got)
	}
}

// TestListIndexLarge checks O(1) indexing over a ring that wrapped around
// many times, against a model.
func TestListIndexLarge(t *testing.T) {
	ks := openKS(t, t.TempDir(), 8<<20)
	defer ks.Close()
	var model []string
	for round := 0; round < 20; round++ {
		var vals [][]byte
		for i := 0; i < 1000; i++ {
			v := fmt.Sprintf("r%d-%d", round, i)
			vals = append(vals, []byte(v))
			model = append(model, v)
		}
		commit(t, ks, func(b *keyspace.Batch) { b.RPush(0, []byte("big"), vals...) })
		commit(t, ks, func(b *keyspace.Batch) { b.LPop(0, []byte("big"), 700) })
		model = model[700:]
	}
	if got := listContents(t, ks, 0, "big"); !slices.Equal(got, model) {
		t.Fatalf("big differs from the model (%d vs %d elements)", len(got), len(model))
	}
}

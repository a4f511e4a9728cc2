package keyspace_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/persimmon-db/persimmon/hll"
	"github.com/persimmon-db/persimmon/keyspace"
)

// TestHLLAddOp: opHLLAdd operations raise the registers of an HLL string
// exactly as hll.Set does on a copy (sparse insertions, the promotion to
// dense under the logged limit, dense registers in place, the cache
// invalidated), write a few bytes each, and give the same bytes after a
// reopen (replay), after cleaning (the string written whole) and after a
// reopen of the cleaned log, with the TTL kept throughout.
func TestHLLAddOp(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	key := []byte("h")
	want := hll.New()
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, key, want, ks.NowMs()+3600_000) })
	rng := rand.New(rand.NewPCG(1, 2))
	// A small sparse limit on the first half makes the promotion happen at
	// a length the default limit would not; the second half logs another
	// limit, which must not change what the first half's operations replay to.
	limits := []int{300, hll.DefaultSparseMaxBytes}
	arenaBefore := ks.Stats().ArenaBytes
	sawSparse := false
	for i := 0; i < 4000; i++ {
		limit := limits[i*2/4000]
		var regs []keyspace.HLLRegister
		for range 1 + rng.IntN(3) {
			idx, n := hll.PatLen(fmt.Appendf(nil, "e%d", rng.Uint64()))
			var ch bool
			var err error
			if want, ch, err = hll.Set(want, idx, n, limit); err != nil {
				t.Fatal(err)
			}
			if ch {
				regs = append(regs, keyspace.HLLRegister{Index: uint16(idx), Value: n})
			}
		}
		if len(regs) == 0 {
			continue
		}
		hll.Invalidate(want)
		sawSparse = sawSparse || !hll.IsDense(want)
		commit(t, ks, func(b *keyspace.Batch) { b.HLLAdd(0, key, limit, regs) })
	}
	if !sawSparse || !hll.IsDense(want) {
		t.Fatalf("the run did not cover both encodings (dense at the end: %v)", hll.IsDense(want))
	}
	if grown := ks.Stats().ArenaBytes - arenaBefore; grown > 1<<20 {
		t.Fatalf("4,000 register updates grew the arena by %d bytes", grown)
	}
	check := func(ks *keyspace.Keyspace, what string) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		v, ok, err := ks.Get(0, key)
		if err != nil || !ok || !bytes.Equal(v, want) {
			t.Fatalf("%s: value differs (ok=%v err=%v len %d want %d)", what, ok, err, len(v), len(want))
		}
		if _, valid := hll.Cached(v); valid {
			t.Fatalf("%s: the cached cardinality is still marked valid", what)
		}
		if at, _ := ks.ExpireAt(0, key); at == 0 {
			t.Fatalf("%s: TTL lost", what)
		}
	}
	check(ks, "live")
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	check(ks, "reopened")
	for i := 0; i < 20000; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("filler"), bytes.Repeat([]byte("f"), 200), 0) })
	}
	ks.Clean()
	if ks.Stats().CleanedBytes == 0 {
		t.Fatalf("nothing was cleaned")
	}
	check(ks, "cleaned")
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	check(ks, "reopened after cleaning")

	// A missing key (it expired between the command's read and the apply)
	// starts from an empty HLL.
	commit(t, ks, func(b *keyspace.Batch) {
		b.HLLAdd(0, []byte("fresh"), hll.DefaultSparseMaxBytes, []keyspace.HLLRegister{{Index: 7, Value: 3}})
	})
	fresh, _, _ := hll.Set(hll.New(), 7, 3, hll.DefaultSparseMaxBytes)
	hll.Invalidate(fresh)
	ks.Lock()
	v, ok, err := ks.Get(0, []byte("fresh"))
	ks.Unlock()
	if err != nil || !ok || !bytes.Equal(v, fresh) {
		t.Fatalf("HLLAdd on a missing key: %q ok=%v err=%v, want %q", v, ok, err, fresh)
	}
}

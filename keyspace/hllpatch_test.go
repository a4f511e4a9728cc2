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

// TestHLLValueMatchesGet: HLLValue answers what Get and ExpireAt answer
// for every kind of key it meets (an indexed plain string with and without
// a TTL, a patched string in DRAM, a missing key, an expired indexed key,
// a collection), counts the same keyspace hits and misses as Get, touches
// the key's access time as Get does once RecordAccess has its pending
// access (and not before), and removes an expired key.
func TestHLLValueMatchesGet(t *testing.T) {
	ks := openKS(t, t.TempDir(), 1<<20)
	defer ks.Close()
	now := ks.NowMs()
	commit(t, ks, func(b *keyspace.Batch) {
		b.Set(0, []byte("plain"), []byte("v1"), 0)
		b.Set(0, []byte("ttl"), []byte("v2"), now+3600_000)
		b.Set(0, []byte("short"), []byte("v3"), now+1000)
		b.Set(0, []byte("short2"), []byte("v3"), now+1000) // "short" for HLLValue once Get removed "short"
		b.Set(0, []byte("patched"), []byte("abcdef"), 0)
		b.HSet(0, []byte("hash"), []byte("f"), []byte("v"))
	})
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("patched"), 1, []byte("XY")) })
	keys := []string{"plain", "ttl", "short", "patched", "hash", "missing"}
	type answer struct {
		val            string
		expireAt       int64
		ok             bool
		err            error
		hits, misses   int64
		idle           int64
		idleOK, exists bool
	}
	ask := func(key string, hllValue bool) answer {
		ks.Lock()
		defer ks.Unlock()
		was := ks.CountLookups(true)
		defer ks.CountLookups(was)
		st := ks.Stats()
		var a answer
		var v []byte
		if hllValue {
			var acc keyspace.PendingAccess
			v, a.expireAt, acc, a.ok, a.err = ks.HLLValue(0, []byte(key))
			ks.RecordAccess(acc)
		} else {
			v, a.ok, a.err = ks.Get(0, []byte(key))
		}
		a.val = string(v)
		st2 := ks.Stats()
		if !hllValue {
			ks.CountLookups(false)
			a.expireAt, _ = ks.ExpireAt(0, []byte(key))
		}
		a.hits, a.misses = st2.KeyspaceHits-st.KeyspaceHits, st2.KeyspaceMiss-st.KeyspaceMiss
		a.idle, a.idleOK = ks.IdleTime(0, []byte(key))
		ks.CountLookups(false)
		a.exists = ks.Exists(0, []byte(key))
		return a
	}
	for round := 0; round < 2; round++ {
		if round == 1 {
			ks.AdvanceClock(2000) // "short" and "short2" have expired: a read removes them
		}
		for _, key := range keys {
			keyspace.AdvanceLRUClock(10)
			want := ask(key, false)
			keyspace.AdvanceLRUClock(10)
			hkey := key
			if key == "short" && round == 1 {
				hkey = "short2" // Get removed "short"
			}
			got := ask(hkey, true)
			if key != "hash" && key != "missing" && want.expireAt == 0 && got.expireAt != 0 {
				t.Errorf("%s: HLLValue expiry %d, want none", key, got.expireAt)
			}
			if key == "hash" {
				want.expireAt = 0 // ExpireAt answers for any type
			}
			if got != want {
				t.Errorf("round %d, %s: HLLValue %+v, Get %+v", round, key, got, want)
			}
		}
	}
	// The pending access of an indexed key is recorded by RecordAccess
	// only.
	keyspace.AdvanceLRUClock(10)
	ks.Lock()
	_, _, acc, ok, _ := ks.HLLValue(0, []byte("plain"))
	idle, _ := ks.IdleTime(0, []byte("plain"))
	ks.RecordAccess(acc)
	idle2, _ := ks.IdleTime(0, []byte("plain"))
	ks.Unlock()
	switch {
	case !ok:
		t.Error("plain: not found")
	case acc == keyspace.PendingAccess{}: // a DRAM key (no key index): the lookup recorded it
		if idle != 0 {
			t.Errorf("plain, in DRAM: idle %d s after HLLValue", idle)
		}
	case idle < 10 || idle2 != 0:
		t.Errorf("plain: idle %d s after HLLValue, %d s after RecordAccess; want >= 10, then 0", idle, idle2)
	}
}

package keyspace_test

import (
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// OBJECT IDLETIME and FREQ data: a lookup is an access, a peek (TYPE,
// EXISTS, TTL, OBJECT ENCODING, MEMORY USAGE) is not; under an LFU policy
// the counter starts at 5 and grows with accesses.
// Both with DRAM entries and with the key index (whose keys keep theirs in
// a side table: on main they read 0 s idle and frequency 5 whatever
// happened).
func TestIdleTimeAndFrequency(t *testing.T) {
	for _, kix := range []string{"0", "1"} {
		t.Run("key-index="+kix, func(t *testing.T) {
			t.Setenv("PERSIMMON_TEST_KEY_INDEX", kix)
			testIdleTimeAndFrequency(t)
		})
	}
}

func testIdleTimeAndFrequency(t *testing.T) {
	ks := openKS(t, t.TempDir(), 0)
	defer ks.Close()
	foo := []byte("foo")
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, foo, []byte("bar"), 0) })
	ks.Lock()
	idle := func() int64 {
		t.Helper()
		n, ok := ks.IdleTime(0, foo)
		if !ok {
			t.Fatal("foo is gone")
		}
		return n
	}
	if n := idle(); n > 1 {
		t.Fatalf("a new key is %d s idle", n)
	}
	keyspace.AdvanceLRUClock(5)
	if n := idle(); n < 5 {
		t.Fatalf("after 5 s the key is %d s idle", n)
	}
	ks.Type(0, foo)
	ks.Exists(0, foo)
	ks.ExpireAt(0, foo)
	ks.MemoryUsage(0, foo)
	ks.ObjectEncoding(0, foo)
	if n := idle(); n < 5 {
		t.Fatalf("a peek touched the key: %d s idle", n)
	}
	if _, ok, _ := ks.Get(0, foo); !ok {
		t.Fatal("GET foo")
	}
	if n := idle(); n != 0 {
		t.Fatalf("after a GET the key is %d s idle", n)
	}
	if _, ok := ks.IdleTime(0, []byte("nosuch")); ok {
		t.Fatal("IdleTime of a missing key")
	}
	ks.Unlock()

	// lfu-log-factor 0: every access counts.
	keyspace.SetAccessPolicy(true, 0, 1)
	defer keyspace.SetAccessPolicy(false, 10, 1)
	bar := []byte("bar")
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, bar, []byte("x"), 0) })
	ks.Lock()
	defer ks.Unlock()
	if n, ok := ks.AccessFrequency(0, bar); !ok || n != 5 {
		t.Fatalf("a new key's frequency = %d (%v), want 5", n, ok)
	}
	for range 10 {
		ks.Get(0, bar)
	}
	ks.Type(0, bar)
	if n, _ := ks.AccessFrequency(0, bar); n != 15 {
		t.Fatalf("after 10 GETs the frequency is %d, want 15", n)
	}
	// The default factor 10 makes it logarithmic: 1000 accesses stay far
	// below 255.
	keyspace.SetAccessPolicy(true, 10, 1)
	for range 1000 {
		ks.Get(0, bar)
	}
	if n, _ := ks.AccessFrequency(0, bar); n <= 15 || n >= 100 {
		t.Fatalf("after 1000 more GETs at factor 10 the frequency is %d", n)
	}
}

// TOUCH is an access; EXISTS is not (with and without the key index).
func TestTouchIsAnAccess(t *testing.T) {
	for _, kix := range []string{"0", "1"} {
		t.Run("key-index="+kix, func(t *testing.T) {
			t.Setenv("PERSIMMON_TEST_KEY_INDEX", kix)
			testTouchIsAnAccess(t)
		})
	}
}

func testTouchIsAnAccess(t *testing.T) {
	ks := openKS(t, t.TempDir(), 0)
	defer ks.Close()
	foo := []byte("foo")
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, foo, []byte("bar"), 0) })
	ks.Lock()
	defer ks.Unlock()
	keyspace.AdvanceLRUClock(5)
	if n, _ := ks.IdleTime(0, foo); n < 5 {
		t.Fatalf("idle %d s after 5 s", n)
	}
	if !ks.Touch(0, foo) || ks.Touch(0, []byte("nosuch")) {
		t.Fatal("Touch's answer")
	}
	if n, _ := ks.IdleTime(0, foo); n != 0 {
		t.Fatalf("idle %d s after TOUCH", n)
	}
}

// With the key index, access data after a restart counts from the load
// (as Redis's keys loaded from an RDB do), and the side table keeps the
// most recently used keys exact when more keys are touched than it holds:
// the others read as idle since the newest access it evicted, never more
// than their real idle time.
func TestIndexedAccessDataRestartAndEviction(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "1")
	dir := t.TempDir()
	ks := openKS(t, dir, 0)
	// idle reads a key's idle time under the lock and releases it before
	// any t.Fatalf, so a failure reports instead of deadlocking in Close.
	idle := func(key []byte) (int64, bool) {
		ks.Lock()
		defer ks.Unlock()
		return ks.IdleTime(0, key)
	}
	old := []byte("old")
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, old, []byte("v"), 0) })
	keyspace.AdvanceLRUClock(100)
	if n, _ := idle(old); n < 100 {
		t.Fatalf("idle %d s after 100 s", n)
	}
	ks.Close()
	ks = openKS(t, dir, 0)
	defer ks.Close()
	// Counted from the load: a few real seconds at most on a busy
	// machine, far from the 100 s the key had before the restart.
	if n, ok := idle(old); !ok || n > 10 {
		t.Fatalf("after a restart the key is %d s idle (%v), want counted from the load", n, ok)
	}
	keyspace.AdvanceLRUClock(50)
	if n, _ := idle(old); n < 50 {
		t.Fatalf("50 s after the load the key reads %d s idle", n)
	}
	const n = keyspace.AccessTableMax + 1000
	for i := 0; i < n; i += 1000 {
		commit(t, ks, func(b *keyspace.Batch) {
			for j := i; j < i+1000; j++ {
				b.Set(0, []byte(fmt.Sprint("k", j)), []byte("v"), 0)
			}
		})
	}
	ks.Lock()
	defer ks.Unlock()
	keyspace.AdvanceLRUClock(10)
	last := []byte(fmt.Sprint("k", n-1))
	ks.Get(0, last)
	if secs, _ := ks.IdleTime(0, last); secs != 0 {
		t.Fatalf("the key just read is %d s idle", secs)
	}
	// The floor is the newest evicted access: 10 s of the clock ago plus
	// the real seconds the writes took (a busy machine), far from the 60 s
	// since the load.
	if secs, _ := ks.IdleTime(0, []byte("k0")); secs < 9 || secs >= 40 {
		t.Fatalf("an evicted key written 10 s ago reads %d s idle, want the floor's 10", secs)
	}
}

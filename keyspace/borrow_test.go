package keyspace_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestBorrowedValues commits values big enough for Batch.Set to borrow
// them (not copy them into the batch) along every path a batch takes: a
// batch of one SET, a batch of several operations split into a group of
// records, a SET inside a transaction group, and a batch the BeforeWrite
// hook reads, and a copy of a big value (borrowed from the mapping of the
// segment it is appended to); the caller's buffers are overwritten after each commit, and
// every value must still read back as committed, before and after a
// reopen.
func TestBorrowedValues(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 4<<20)
	want := map[string][]byte{}
	big := func(seed byte, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	scribble := func(bufs ...[]byte) {
		for _, b := range bufs {
			for i := range b {
				b[i] = 0xEE
			}
		}
	}
	set := func(b *keyspace.Batch, key string, v []byte) {
		b.Set(0, []byte(key), v, 0)
		want[key] = append([]byte(nil), v...)
	}

	// One operation.
	v1 := big(1, 1<<20+5)
	ks.Lock()
	b := ks.NewBatch()
	set(b, "one", v1)
	if got, min := b.Size(), len(v1); got < min {
		t.Fatalf("batch size %d, less than the %d-byte value it holds", got, min)
	}
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	scribble(v1)

	// Several operations, two big values: a group of records.
	v2, v3 := big(2, 3<<20), big(3, 1<<20)
	ks.Lock()
	b = ks.NewBatch()
	set(b, "two", v2)
	set(b, "small", []byte("x"))
	set(b, "three", v3)
	b.Del(0, []byte("one-not-there"))
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	scribble(v2, v3)

	// Inside a transaction group.
	v4 := big(4, 2<<20+1)
	ks.Lock()
	ks.BeginTxn()
	b = ks.NewBatch()
	set(b, "txn", v4)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	b = ks.NewBatch()
	set(b, "txn-small", []byte("y"))
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := ks.EndTxn(); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	scribble(v4)

	// The BeforeWrite hook sees every key of a batch holding a borrowed
	// value.
	var seen []string
	ks.Lock()
	ks.BeforeWrite(func(db int, key []byte) { seen = append(seen, string(key)) })
	v5 := big(5, 1<<20)
	b = ks.NewBatch()
	set(b, "hooked", v5)
	set(b, "hooked-small", []byte("z"))
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.BeforeWrite(nil)
	ks.Unlock()
	scribble(v5)
	if fmt.Sprint(seen) != "[hooked hooked-small]" {
		t.Fatalf("BeforeWrite saw %v, want [hooked hooked-small]", seen)
	}

	// A copy of a big value borrows it from the mapping (of the segment
	// being appended to) and writes it further on in the same file.
	ks.Lock()
	b = ks.NewBatch()
	if !ks.CopyValue(b, 0, []byte("two"), 0, []byte("two-copy"), 0) {
		t.Fatal("CopyValue: the source is missing")
	}
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	want["two-copy"] = want["two"]

	// Commit lets go of a borrowed value: the buffer (a request buffer
	// in the server) becomes garbage although the batch lives on; and
	// the spent batch is not committed twice.
	freed := make(chan struct{})
	func() {
		v := big(6, 2<<20)
		runtime.SetFinalizer(&v[0], func(*byte) { close(freed) })
		ks.Lock()
		defer ks.Unlock()
		b = ks.NewBatch()
		set(b, "let-go", v)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		if err := ks.Commit(b); err == nil {
			t.Fatal("a second Commit of a batch with borrowed values succeeded")
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for done := false; !done; {
		runtime.GC()
		select {
		case <-freed:
			done = true
		case <-time.After(10 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("the borrowed value is still reachable 10 s after its Commit")
			}
		}
	}

	check := func(ks *keyspace.Keyspace, when string) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		for k, v := range want {
			got, ok, err := ks.Get(0, []byte(k))
			if err != nil || !ok {
				t.Fatalf("%s: GET %s: ok=%v err=%v", when, k, ok, err)
			}
			if !bytes.Equal(got, v) {
				t.Fatalf("%s: GET %s: %d bytes, not the %d committed", when, k, len(got), len(v))
			}
		}
	}
	check(ks, "live")
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks = openKS(t, dir, 4<<20)
	defer ks.Close()
	check(ks, "after reopen")
}

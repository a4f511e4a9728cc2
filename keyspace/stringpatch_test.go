package keyspace_test

import (
	"bytes"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// TestPatchedStringLogsOnlyChanges: patches of a large string write only
// the changed bytes, survive reopen (with the TTL), and survive cleaning,
// which writes the string whole again.
func TestPatchedStringLogsOnlyChanges(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	big := bytes.Repeat([]byte("a"), 256<<10)
	commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("s"), big, ks.NowMs()+3600_000) })
	want := append([]byte(nil), big...)
	before := ks.Stats().LastLSN
	arenaBefore := ks.Stats().ArenaBytes
	for i := 0; i < 2000; i++ {
		off := int64(i * 97 % len(want))
		commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("s"), off, []byte{'x', byte('0' + i%10)}) })
		copy(want[off:], []byte{'x', byte('0' + i%10)})
	}
	commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, []byte("s"), int64(len(want)+10), []byte("tail")) })
	want = append(want, make([]byte, 10)...)
	want = append(want, "tail"...)
	if grown := ks.Stats().ArenaBytes - arenaBefore; grown > 2<<20 {
		t.Fatalf("2,000 small patches of a 256 KiB string grew the arena by %d bytes (%d records)", grown, ks.Stats().LastLSN-before)
	}
	check := func(ks *keyspace.Keyspace, what string) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		v, ok, err := ks.Get(0, []byte("s"))
		if err != nil || !ok || !bytes.Equal(v, want) {
			t.Fatalf("%s: value differs (ok=%v err=%v len %d want %d)", what, ok, err, len(v), len(want))
		}
		if at, _ := ks.ExpireAt(0, []byte("s")); at == 0 {
			t.Fatalf("%s: TTL lost", what)
		}
		if ks.Type(0, []byte("s")) != keyspace.TypeString {
			t.Fatalf("%s: type %s", what, ks.Type(0, []byte("s")))
		}
	}
	check(ks, "live")
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	check(ks, "reopened")
	// Force cleaning over everything: overwrite filler until segments turn over.
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
}

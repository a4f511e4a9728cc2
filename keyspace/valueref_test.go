package keyspace_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// bigValue is a value of n bytes whose content says where each byte is.
func bigValue(n int, tag byte) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(i>>8) ^ byte(i) ^ tag
	}
	return v
}

// appendedBy returns the record bytes fn's commits appended.
func appendedBy(t *testing.T, ks *keyspace.Keyspace, fn func(b *keyspace.Batch)) int64 {
	t.Helper()
	before := ks.Stats().AppendedBytes
	commit(t, ks, fn)
	return ks.Stats().AppendedBytes - before
}

// TestLargeValueByReference: EXPIRE, PERSIST, RENAME and MOVE of a large
// string log a reference to its value, not the value (a few dozen bytes
// each instead of the value's 256 KiB, which main's code wrote each time);
// the value, its expiry and its name survive a restart, the cleaner's
// removal of the segment holding the value (it writes the value whole for
// its holder first) and a restart after that, in both index modes; a
// patched string built on a reference survives the same.
func TestLargeValueByReference(t *testing.T) {
	for _, kix := range []string{"0", "1"} {
		t.Run("key-index="+kix, func(t *testing.T) {
			t.Setenv("PERSIMMON_TEST_KEY_INDEX", kix)
			dir := t.TempDir()
			const segSize = 1 << 20
			ks := openKS(t, dir, segSize)
			val := bigValue(256<<10, 1)
			commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("big"), val, 0) })
			patched := bigValue(200<<10, 2)
			commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte("patched"), patched, 0) })
			at := ks.NowMs() + 3600_000
			small := func(what string, fn func(b *keyspace.Batch)) {
				t.Helper()
				if n := appendedBy(t, ks, fn); n > 256 {
					t.Fatalf("%s appended %d bytes, want a reference (< 256)", what, n)
				}
			}
			live := ks.Stats().LiveBytes
			small("EXPIRE", func(b *keyspace.Batch) { ks.SetExpire(b, 0, []byte("big"), at) })
			small("PERSIST", func(b *keyspace.Batch) { ks.SetExpire(b, 0, []byte("big"), 0) })
			small("PEXPIREAT", func(b *keyspace.Batch) { ks.SetExpire(b, 0, []byte("big"), at+1) })
			small("RENAME", func(b *keyspace.Batch) {
				ks.MoveValue(b, 0, []byte("big"), 0, []byte("big2"), at+1)
				b.Del(0, []byte("big"))
			})
			small("MOVE", func(b *keyspace.Batch) {
				ks.MoveValue(b, 0, []byte("big2"), 3, []byte("big2"), at+1)
				b.Del(0, []byte("big2"))
			})
			small("EXPIRE of patched", func(b *keyspace.Batch) { ks.SetExpire(b, 0, []byte("patched"), at) })
			small("SETRANGE", func(b *keyspace.Batch) { b.SetRange(0, []byte("patched"), 5, []byte("XYZ")) })
			copy(patched[5:], "XYZ")
			if now := ks.Stats().LiveBytes; now > live+4096 {
				t.Errorf("live bytes %d after the references, %d before: the value counted twice", now, live)
			}

			check := func(when string) {
				t.Helper()
				ks.Lock()
				defer ks.Unlock()
				for _, k := range []struct {
					db       int
					key      string
					want     []byte
					expireAt int64
				}{{0, "big", nil, 0}, {0, "big2", nil, 0}, {3, "big2", val, at + 1}, {0, "patched", patched, at}} {
					got, ok, err := ks.Get(k.db, []byte(k.key))
					if err != nil || ok != (k.want != nil) || !bytes.Equal(got, k.want) {
						t.Fatalf("%s: db %d %s: %d bytes (found %v, %v), want %d", when, k.db, k.key, len(got), ok, err, len(k.want))
					}
					if e, _ := ks.ExpireAt(k.db, []byte(k.key)); e != k.expireAt {
						t.Fatalf("%s: db %d %s expires at %d, want %d", when, k.db, k.key, e, k.expireAt)
					}
				}
			}
			check("live")
			ks.Close()
			ks = openKS(t, dir, segSize)
			check("after a restart")

			// Roll the log on until the segments holding the values are
			// cleaned away.
			first := ks.OldestSegment()
			for i := 0; ks.OldestSegment() <= first+1; i++ {
				if i > 200 {
					t.Fatalf("oldest segment still %d after %d rounds", ks.OldestSegment(), i)
				}
				commit(t, ks, func(b *keyspace.Batch) { b.Set(0, []byte(fmt.Sprint("fill", i%4)), bigValue(128<<10, 3), 0) })
				ks.CleanOldest()
			}
			check("after cleaning")
			ks.Close()
			ks = openKS(t, dir, segSize)
			check("after cleaning and a restart")
			ks.Close()
		})
	}
}

// TestLazyPatchedString: SETRANGE and APPEND on a string of at least 64
// KiB keep only the patches in DRAM until a read needs the value; random
// patches (inside, past the end, growing it), interleaved with reads, a
// RENAME through a reference and restarts match a model, in both index
// modes, and the lengths are known without building the value.
func TestLazyPatchedString(t *testing.T) {
	for _, kix := range []string{"0", "1"} {
		t.Run("key-index="+kix, func(t *testing.T) {
			t.Setenv("PERSIMMON_TEST_KEY_INDEX", kix)
			dir := t.TempDir()
			ks := openKS(t, dir, 1<<20)
			defer func() { ks.Close() }()
			model := bigValue(100<<10, 4)
			key := []byte("s")
			commit(t, ks, func(b *keyspace.Batch) { b.Set(0, key, model, 0) })
			rnd := uint64(1)
			next := func(n int) int { rnd = rnd*6364136223846793005 + 1442695040888963407; return int(rnd>>33) % n }
			for i := 0; i < 400; i++ {
				switch next(10) {
				case 0, 1, 2, 3, 4:
					off, p := next(len(model)+100), bigValue(1+next(300), byte(i))
					commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, key, int64(off), p) })
					if end := off + len(p); end > len(model) {
						model = append(model, make([]byte, end-len(model))...)
					}
					copy(model[off:], p)
				case 5, 6:
					p := bigValue(1+next(2000), byte(i))
					commit(t, ks, func(b *keyspace.Batch) { b.SetRange(0, key, int64(len(model)), p) })
					model = append(model, p...)
				case 7:
					ks.Lock()
					v, ok, err := ks.Get(0, key)
					if err != nil || !ok || !bytes.Equal(v, model) {
						t.Fatalf("step %d: GET: %d bytes (%v %v), want %d", i, len(v), ok, err, len(model))
					}
					ks.Unlock()
				case 8:
					commit(t, ks, func(b *keyspace.Batch) {
						ks.MoveValue(b, 0, key, 0, []byte("tmp"), 0)
						b.Del(0, key)
					})
					commit(t, ks, func(b *keyspace.Batch) {
						ks.MoveValue(b, 0, []byte("tmp"), 0, key, 0)
						b.Del(0, []byte("tmp"))
					})
				case 9:
					ks.Close()
					ks = openKS(t, dir, 1<<20)
				}
				ks.Lock()
				n, ok, err := ks.StringLen(0, key)
				ks.Unlock()
				if err != nil || !ok || n != len(model) {
					t.Fatalf("step %d: length %d (%v %v), want %d", i, n, ok, err, len(model))
				}
			}
			ks.Lock()
			v, _, _ := ks.Get(0, key)
			ks.Unlock()
			if !bytes.Equal(v, model) {
				t.Fatalf("final value differs from the model")
			}
		})
	}
}

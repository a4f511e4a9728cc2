package keyspace_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// cleanModel is what the keyspace should hold: per database, a string
// value or a hash (field → value) per key.
type cleanModel struct {
	strs   [3]map[string][]byte
	hashes [3]map[string]map[string]string
	lists  [3]map[string][]string
}

func newCleanModel() *cleanModel {
	m := &cleanModel{}
	for i := range m.strs {
		m.strs[i], m.hashes[i], m.lists[i] = map[string][]byte{}, map[string]map[string]string{}, map[string][]string{}
	}
	return m
}

func (m *cleanModel) check(t *testing.T, ks *keyspace.Keyspace, when string) {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	for db := range m.strs {
		if got, want := ks.DBSize(db), len(m.strs[db])+len(m.hashes[db])+len(m.lists[db]); got != want {
			t.Fatalf("%s: db %d holds %d keys, want %d", when, db, got, want)
		}
		for k, want := range m.strs[db] {
			v, ok, err := ks.Get(db, []byte(k))
			if err != nil || !ok || !bytes.Equal(v, want) {
				t.Fatalf("%s: db %d %s = %q (ok %v, err %v), want %q", when, db, k, v, ok, err, want)
			}
		}
		for k, want := range m.lists[db] {
			l, err := ks.List(db, []byte(k))
			if err != nil || l.Len() != len(want) {
				t.Fatalf("%s: db %d LLEN %s = %d (err %v), want %d", when, db, k, l.Len(), err, len(want))
			}
			for i, w := range want {
				if got := string(l.At(i)); got != w {
					t.Fatalf("%s: db %d LINDEX %s %d = %q, want %q", when, db, k, i, got, w)
				}
			}
		}
		for k, fields := range m.hashes[db] {
			n, err := ks.HLen(db, []byte(k))
			if err != nil || n != len(fields) {
				t.Fatalf("%s: db %d HLEN %s = %d (err %v), want %d", when, db, k, n, err, len(fields))
			}
			for f, want := range fields {
				v, ok, err := ks.HGet(db, []byte(k), []byte(f))
				if err != nil || !ok || string(v) != want {
					t.Fatalf("%s: db %d HGET %s %s = %q (ok %v, err %v), want %q", when, db, k, f, v, ok, err, want)
				}
			}
		}
	}
}

// TestCleaningRandomModel runs random overwrites, deletes, string patches,
// list pushes, pops and index operations, hash updates, SWAPDB and FLUSHDB
// over a few keys in three databases, with
// small segments, cleaning often and reopening now and then, and checks
// the keyspace against a model each time. It covers the cleaner's
// liveness rules: set operations it skips as dead (deadSets), patched
// strings whose base set must stay, objects rewritten whole, and keys
// whose operations name the database they were in before a swap.
func TestCleaningRandomModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testCleaningRandomModel(t, seed) })
	}
}

func testCleaningRandomModel(t *testing.T, seed uint64) {
	const segSize = 256 << 10
	dir := t.TempDir()
	ks := openKS(t, dir, segSize)
	defer func() { ks.Close() }()
	rng := rand.New(rand.NewPCG(seed, 0))
	m := newCleanModel()
	filler := bytes.Repeat([]byte("f"), 8<<10) // turns segments over quickly
	var cleaned int64                          // bytes cleaned over every open
	steps := 12000
	if testing.Short() {
		steps = 3000
	}
	for step := 0; step < steps; step++ {
		db := rng.IntN(3)
		// Popularity falls off exponentially: hot keys are rewritten at
		// once, cold ones keep operations old enough to be cleaned.
		key := fmt.Sprintf("k%d", min(int(rng.ExpFloat64()*8), 60))
		_, isHash := m.hashes[db][key]
		_, isList := m.lists[db][key]
		_, isStr := m.strs[db][key]
		switch r := rng.IntN(100); {
		case r < 25: // SET, over any type
			v := []byte(fmt.Sprintf("v%d-%d", step, rng.IntN(1000)))
			commit(t, ks, func(b *keyspace.Batch) { b.Set(db, []byte(key), v, 0) })
			delete(m.hashes[db], key)
			delete(m.lists[db], key)
			m.strs[db][key] = v
		case r < 32: // DEL
			commit(t, ks, func(b *keyspace.Batch) { b.Del(db, []byte(key)) })
			delete(m.strs[db], key)
			delete(m.hashes[db], key)
			delete(m.lists[db], key)
		case r < 45 && !isHash && !isStr: // RPUSH: lists empty and come back often
			v := fmt.Sprintf("e%d", rng.IntN(4)) // repeats, for LREM
			commit(t, ks, func(b *keyspace.Batch) { b.RPush(db, []byte(key), []byte(v)) })
			m.lists[db][key] = append(m.lists[db][key], v)
		case r < 52 && isList: // LPOP/RPOP of 1-3 elements; an emptied list goes away
			n := min(1+rng.IntN(3), len(m.lists[db][key]))
			l := m.lists[db][key]
			if rng.IntN(2) == 0 {
				commit(t, ks, func(b *keyspace.Batch) { b.LPop(db, []byte(key), n) })
				l = l[n:]
			} else {
				commit(t, ks, func(b *keyspace.Batch) { b.RPop(db, []byte(key), n) })
				l = l[:len(l)-n]
			}
			if len(l) == 0 {
				delete(m.lists[db], key)
			} else {
				m.lists[db][key] = l
			}
		case r < 56 && isList: // LSET, LTRIM or LREM: index and value ops (see errStaleOp)
			l := append([]string(nil), m.lists[db][key]...)
			switch rng.IntN(3) {
			case 0:
				i, v := rng.IntN(len(l)), fmt.Sprintf("s%d", step)
				commit(t, ks, func(b *keyspace.Batch) { b.LSet(db, []byte(key), i, []byte(v)) })
				l[i] = v
			case 1:
				start := rng.IntN(len(l) + 1)
				n := rng.IntN(len(l) - start + 1)
				commit(t, ks, func(b *keyspace.Batch) { b.LTrim(db, []byte(key), start, n) })
				l = l[start : start+n]
			default:
				v := fmt.Sprintf("e%d", rng.IntN(4))
				count := int64(rng.IntN(3) - 1)
				commit(t, ks, func(b *keyspace.Batch) { b.LRem(db, []byte(key), count, []byte(v)) })
				l = modelLRem(l, count, v)
			}
			if len(l) == 0 {
				delete(m.lists[db], key)
			} else {
				m.lists[db][key] = l
			}
		case r < 62 && !isHash && !isList: // SETRANGE: the string becomes a patched object
			off := int64(rng.IntN(8))
			p := []byte{byte('a' + rng.IntN(26))}
			commit(t, ks, func(b *keyspace.Batch) { b.SetRange(db, []byte(key), off, p) })
			v := m.strs[db][key]
			if int(off)+1 > len(v) {
				v = append(v, make([]byte, int(off)+1-len(v))...)
			}
			v = append([]byte(nil), v...)
			v[off] = p[0]
			m.strs[db][key] = v
		case r < 80 && !isStr && !isList: // HSET on a hash or a new key
			f, v := fmt.Sprintf("f%d", rng.IntN(4)), fmt.Sprintf("h%d", step)
			commit(t, ks, func(b *keyspace.Batch) { b.HSet(db, []byte(key), []byte(f), []byte(v)) })
			if m.hashes[db][key] == nil {
				m.hashes[db][key] = map[string]string{}
			}
			m.hashes[db][key][f] = v
		case r < 84:
			a, c := rng.IntN(3), rng.IntN(3)
			commit(t, ks, func(b *keyspace.Batch) { b.SwapDB(a, c) })
			m.strs[a], m.strs[c] = m.strs[c], m.strs[a]
			m.hashes[a], m.hashes[c] = m.hashes[c], m.hashes[a]
			m.lists[a], m.lists[c] = m.lists[c], m.lists[a]
		case r < 85 && rng.IntN(40) == 0: // rare: a flush empties the cold keys too
			commit(t, ks, func(b *keyspace.Batch) { b.FlushDB(db) })
			m.strs[db], m.hashes[db], m.lists[db] = map[string][]byte{}, map[string]map[string]string{}, map[string][]string{}
		default: // filler in database 5 turns segments over
			commit(t, ks, func(b *keyspace.Batch) { b.Set(5, []byte("filler"), filler, 0) })
		}
		if step%500 == 499 {
			ks.Clean()
			m.check(t, ks, fmt.Sprintf("step %d, cleaned", step))
		}
		if step%3000 == 2999 {
			cleaned += ks.Stats().CleanedBytes
			ks.Close()
			ks = openKS(t, dir, segSize)
			m.check(t, ks, fmt.Sprintf("step %d, reopened", step))
		}
	}
	if cleaned += ks.Stats().CleanedBytes; cleaned < 8*segSize {
		t.Fatalf("only %d bytes were cleaned", cleaned)
	}
}

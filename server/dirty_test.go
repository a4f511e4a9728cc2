package server

import (
	"fmt"
	"testing"
)

func TestDirtyKeysWaitLSN(t *testing.T) {
	mk := func(c Command) *Command {
		c.fixedKeys = hasFixedKeys(&c)
		return &c
	}
	set := mk(Command{Name: "set", Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1})
	get := mk(Command{Name: "get", Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1})
	mget := mk(Command{Name: "mget", Flags: FlagReadonly, FirstKey: 1, LastKey: -1, Step: 1})
	sort := mk(Command{Name: "sort", Flags: FlagWrite | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1})
	sortRO := mk(Command{Name: "sort_ro", Flags: FlagReadonly | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1})
	move := mk(Command{Name: "move", Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1})
	dbsize := mk(Command{Name: "dbsize", Flags: FlagReadonly})
	a := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i := range s {
			out[i] = []byte(s[i])
		}
		return out
	}
	// SET's GetKeys only refines its key's flags: still fixed positions.
	setFlags := mk(Command{Name: "set", Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1, GetKeys: SetGetKeys,
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate | KeyVariableFlags, Index: 1, KeyStep: 1}}})
	zunion := mk(Command{Name: "zunionstore", Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1, GetKeys: NumkeysGetKeys(1, 2, 3)})
	if !setFlags.fixedKeys || zunion.fixedKeys || sortRO.fixedKeys || move.fixedKeys {
		t.Fatalf("fixedKeys: SET %v (want true), ZUNIONSTORE %v, SORT_RO %v, MOVE %v (want false)", setFlags.fixedKeys, zunion.fixedKeys, sortRO.fixedKeys, move.fixedKeys)
	}
	d := newDirtyKeys()
	step := func(name string, cmd *Command, db int, args [][]byte, before, after uint64, served bool, want uint64) {
		t.Helper()
		if got := d.waitLSN(cmd, db, args, before, after, served, 0); got != want {
			t.Fatalf("%s: waits for %d, want %d", name, got, want)
		}
	}
	// The recovered log (LSN 10) counts as written outside call: global.
	step("first read", get, 0, a("get", "old"), 10, 10, false, 10)
	step("set k", set, 0, a("set", "k", "v"), 10, 11, false, 11)
	step("get k", get, 0, a("get", "k"), 11, 11, false, 11)
	step("get old", get, 0, a("get", "old"), 11, 11, false, 10)
	step("get k in db 1", get, 1, a("get", "k"), 11, 11, false, 10)
	step("mget old k", mget, 0, a("mget", "old", "k"), 11, 11, false, 11)
	step("dbsize", dbsize, 0, a("dbsize"), 11, 11, false, 11)
	step("sort_ro reads pattern keys", sortRO, 0, a("sort_ro", "old", "by", "w_*"), 11, 11, false, 11)
	// Appends between commands (EXEC, expiry, the cleaner): global.
	step("get old after an outside append", get, 0, a("get", "old"), 14, 14, false, 14)
	// A write that also served a blocked client, a movable-keys write and
	// MOVE (another database) cover everything.
	step("set served", set, 0, a("set", "x", "v"), 14, 16, true, 16)
	step("get old after served", get, 0, a("get", "old"), 16, 16, false, 16)
	step("sort store", sort, 0, a("sort", "l", "store", "dst"), 16, 17, false, 17)
	step("get dst", get, 0, a("get", "dst"), 17, 17, false, 17)
	step("move", move, 0, a("move", "k", "1"), 17, 18, false, 18)
	step("get k in db 1 after move", get, 1, a("get", "k"), 18, 18, false, 18)
	// A read that wrote (lazy expiry) waits for its own append.
	step("get expiring", get, 0, a("get", "gone"), 18, 19, false, 19)
	step("get gone", get, 0, a("get", "gone"), 19, 19, false, 19)
	step("set y", set, 0, a("set", "y", "v"), 19, 20, false, 20)
	step("get old after set y", get, 0, a("get", "old"), 20, 20, false, 18)

	// A key that shares a slot with a key written since waits for that
	// write too (never for less than its own writes).
	k := []byte("\x00y")
	var twin string
	for i := 0; ; i++ {
		c := fmt.Sprintf("twin%d", i)
		if slot(append([]byte{0}, c...)) == slot(k) {
			twin = c
			break
		}
	}
	step("set y again", set, 0, a("set", "y", "v"), 20, 21, false, 21)
	step("get twin of y", get, 0, a("get", twin), 21, 21, false, 21)
	step("set twin", set, 0, a("set", twin, "v"), 21, 22, false, 22)
	step("get y after its twin was set", get, 0, a("get", "y"), 22, 22, false, 22)
	step("get old after the twins", get, 0, a("get", "old"), 22, 22, false, 18)
}

// BenchmarkDirtyKeys is one SET of a new key (as redis-benchmark -r
// 100000 sends) and one GET of another through waitLSN, with a sync
// every 50 writes.
func BenchmarkDirtyKeys(b *testing.B) {
	set := &Command{Name: "set", Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1}
	set.fixedKeys = hasFixedKeys(set)
	get := &Command{Name: "get", Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1}
	get.fixedKeys = hasFixedKeys(get)
	keys := make([][][]byte, 100000)
	for i := range keys {
		keys[i] = [][]byte{[]byte("set"), []byte(fmt.Sprintf("key:%012d", i)), []byte("v")}
	}
	d := newDirtyKeys()
	lsn := uint64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args := keys[(i*7919)%len(keys)]
		d.waitLSN(set, 0, args, lsn, lsn+1, false, lsn-lsn%50)
		lsn++
		d.waitLSN(get, 0, keys[(i*104729)%len(keys)][:2], lsn, lsn, false, lsn-lsn%50)
	}
}

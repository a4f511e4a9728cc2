package keyspace_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// streamModel is the expected content of one stream: its entries in
// order and its counters.
type streamModel struct {
	ents   []modelEnt
	last   keyspace.StreamID
	maxDel keyspace.StreamID
	added  uint64
}

type modelEnt struct {
	id     keyspace.StreamID
	fields []string
}

// dumpStream renders everything observable of a stream: counters, node
// structure and every entry.
func dumpStream(t *testing.T, ks *keyspace.Keyspace, key string) string {
	t.Helper()
	ks.Lock()
	defer ks.Unlock()
	m, ok, err := ks.Stream(0, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "missing"
	}
	nodes, radix := ks.StreamRadix(0, []byte(key))
	var sb strings.Builder
	fmt.Fprintf(&sb, "len=%d last=%s maxdel=%s first=%s added=%d nodes=%d radix=%d [%s]\n", m.Length, m.LastID, m.MaxDeletedID, m.FirstID, m.EntriesAdded, nodes, radix, ks.StreamNodes(0, []byte(key)))
	n := 0
	err = ks.XRange(0, []byte(key), keyspace.StreamID{}, keyspace.MaxStreamID, -1, false, func(id keyspace.StreamID, f [][]byte) {
		n++
		fmt.Fprintf(&sb, "%s %q\n", id, f)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != m.Length {
		t.Fatalf("%s: XRange gave %d entries, length %d", key, n, m.Length)
	}
	for _, g := range ks.StreamGroups(0, []byte(key)) {
		fmt.Fprintf(&sb, "group %+v\n", g)
		for _, c := range ks.StreamConsumers(0, []byte(key), []byte(g.Name)) {
			fmt.Fprintf(&sb, "  consumer %+v\n", c)
		}
		ks.StreamPEL(0, []byte(key), []byte(g.Name), nil, keyspace.StreamID{}, keyspace.MaxStreamID, func(p keyspace.StreamPending) bool {
			fmt.Fprintf(&sb, "  pending %+v\n", p)
			return true
		})
	}
	return sb.String()
}

func modelDump(m *streamModel) (entries string) {
	var sb strings.Builder
	for _, e := range m.ents {
		fmt.Fprintf(&sb, "%s %q\n", e.id, e.fields)
	}
	return sb.String()
}

func idOf(ms, seq uint64) keyspace.StreamID { return keyspace.StreamID{Ms: ms, Seq: seq} }

func TestStreamAddRangeDeleteReplay(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	k := []byte("s")
	for i := uint64(1); i <= 250; i++ {
		commit(t, ks, func(b *keyspace.Batch) {
			b.XAdd(0, k, idOf(i, i%3), [][]byte{[]byte("f"), []byte(fmt.Sprint(i)), []byte("g"), nil})
		})
	}
	commit(t, ks, func(b *keyspace.Batch) { b.XDel(0, k, []keyspace.StreamID{idOf(1, 1), idOf(7, 1), idOf(999, 0)}) })
	ks.Lock()
	if typ := ks.Type(0, k); typ != "stream" {
		t.Fatalf("TYPE %s", typ)
	}
	if enc, _, _ := ks.ObjectEncoding(0, k); enc != "stream" {
		t.Fatalf("OBJECT ENCODING %s", enc)
	}
	var got []string
	ks.XRange(0, k, idOf(5, 0), idOf(9, 0), 3, false, func(id keyspace.StreamID, f [][]byte) { got = append(got, id.String()+":"+string(f[1])) })
	if want := []string{"5-2:5", "6-0:6", "8-2:8"}; !slices.Equal(got, want) {
		t.Fatalf("XRange = %v, want %v", got, want)
	}
	got = got[:0]
	ks.XRange(0, k, idOf(5, 0), idOf(9, 0), -1, true, func(id keyspace.StreamID, f [][]byte) { got = append(got, id.String()) })
	if want := []string{"9-0", "8-2", "6-0", "5-2"}; !slices.Equal(got, want) {
		t.Fatalf("XRange rev = %v, want %v", got, want)
	}
	m, _, _ := ks.Stream(0, k)
	if m.Length != 248 || m.MaxDeletedID != idOf(7, 1) || m.FirstID != idOf(2, 2) || m.EntriesAdded != 250 {
		t.Fatalf("meta %+v", m)
	}
	if nodes, radix := ks.StreamRadix(0, k); nodes != 3 || radix != 8 {
		t.Fatalf("radix-tree-keys %d, radix-tree-nodes %d, want 3 and 8 (redis-server 7.0.15)", nodes, radix)
	}
	ks.Unlock()
	before := dumpStream(t, ks, "s")
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if after := dumpStream(t, ks, "s"); after != before {
		t.Fatalf("after reopen:\n%s\nbefore:\n%s", after, before)
	}
}

// TestStreamEmptyStays: a stream whose entries are all deleted or trimmed
// keeps existing (with its counters), as in Redis; DEL removes it.
func TestStreamEmptyStays(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	k := []byte("s")
	commit(t, ks, func(b *keyspace.Batch) {
		b.XAdd(0, k, idOf(5, 1), [][]byte{[]byte("a"), []byte("b")})
		b.XAdd(0, k, idOf(6, 1), [][]byte{[]byte("a"), []byte("b")})
	})
	commit(t, ks, func(b *keyspace.Batch) { b.XDel(0, k, []keyspace.StreamID{idOf(5, 1), idOf(6, 1)}) })
	want := "len=0 last=6-1 maxdel=6-1 first=0-0 added=2 nodes=0 radix=1 []\n"
	if got := dumpStream(t, ks, "s"); got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	if got := dumpStream(t, ks, "s"); got != want {
		t.Fatalf("after reopen got %q want %q", got, want)
	}
	commit(t, ks, func(b *keyspace.Batch) { b.Del(0, k) })
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	if got := dumpStream(t, ks, "s"); got != "missing" {
		t.Fatalf("after DEL and reopen: %q", got)
	}
}

// TestStreamTrimPlan checks the trim decisions against Redis 7.0's
// (values taken from redis-server 7.0.15 with 100-entry nodes).
func TestStreamTrimPlan(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	defer ks.Close()
	k := []byte("s")
	for i := uint64(1); i <= 250; i++ {
		commit(t, ks, func(b *keyspace.Batch) { b.XAdd(0, k, idOf(i, 0), [][]byte{[]byte("f"), []byte("v")}) })
	}
	ks.Lock()
	defer ks.Unlock()
	cases := []struct {
		t       keyspace.StreamTrim
		adding  bool
		keep    keyspace.StreamID
		all     bool
		removed int64
	}{
		{t: keyspace.StreamTrim{MaxLen: 240}, keep: idOf(11, 0), removed: 10},
		{t: keyspace.StreamTrim{MaxLen: 240, Approx: true}, removed: 0},
		{t: keyspace.StreamTrim{MaxLen: 140, Approx: true}, keep: idOf(101, 0), removed: 100},
		{t: keyspace.StreamTrim{MaxLen: 10, Approx: true}, keep: idOf(201, 0), removed: 200},
		{t: keyspace.StreamTrim{MaxLen: 10, Approx: true, Limit: 150}, keep: idOf(101, 0), removed: 100},
		{t: keyspace.StreamTrim{MaxLen: 0}, all: true, removed: 250},
		{t: keyspace.StreamTrim{MaxLen: 0}, adding: true, all: true, removed: 251},
		{t: keyspace.StreamTrim{MaxLen: 250}, adding: true, keep: idOf(2, 0), removed: 1},
		{t: keyspace.StreamTrim{ByMinID: true, MinID: idOf(150, 0)}, keep: idOf(150, 0), removed: 149},
		{t: keyspace.StreamTrim{ByMinID: true, MinID: idOf(150, 0), Approx: true}, keep: idOf(101, 0), removed: 100},
		{t: keyspace.StreamTrim{ByMinID: true, MinID: idOf(1000, 0)}, adding: true, all: true, removed: 251},
	}
	for _, c := range cases {
		keep, all, n := ks.StreamTrimPlan(0, k, c.adding, idOf(300, 0), c.t)
		if n != c.removed || all != c.all || (n > 0 && !all && keep != c.keep) {
			t.Errorf("%+v adding=%v: keep %s all %v removed %d, want %s %v %d", c.t, c.adding, keep, all, n, c.keep, c.all, c.removed)
		}
	}
}

// TestStreamRandomCleanReopen runs random stream operations against a
// model, with filler writes that make the cleaner rewrite the streams, and
// checks every stream (entries, counters, node structure) after cleaning
// and after each reopen.
func TestStreamRandomCleanReopen(t *testing.T) {
	const segSize = 1 << 20
	dir := t.TempDir()
	ks := openKS(t, dir, segSize)
	defer func() { ks.Close() }()
	rng := rand.New(rand.NewPCG(13, 13))
	models := map[string]*streamModel{}
	filler := make([]byte, 16<<10)
	steps := 6000
	if testing.Short() {
		steps = 2000
	}
	var cleaned int64
	check := func(when string) {
		for key, m := range models {
			got := dumpStream(t, ks, key)
			if m == nil {
				if got != "missing" {
					t.Fatalf("%s: %s exists: %s", when, key, got)
				}
				continue
			}
			_, entries, _ := strings.Cut(got, "\n")
			if i := strings.Index(entries, "group "); i >= 0 && (i == 0 || entries[i-1] == '\n') {
				entries = entries[:i]
			}
			if want := modelDump(m); entries != want {
				t.Fatalf("%s: %s entries:\n%s\nwant:\n%s", when, key, entries, want)
			}
			head := fmt.Sprintf("len=%d last=%s maxdel=%s", len(m.ents), m.last, m.maxDel)
			if !strings.HasPrefix(got, head) || !strings.Contains(got, fmt.Sprintf(" added=%d ", m.added)) {
				t.Fatalf("%s: %s: %s want %s added=%d", when, key, got[:strings.Index(got, "\n")], head, m.added)
			}
		}
	}
	sawPending := false
	snapshot := func() map[string]string {
		out := map[string]string{}
		for key := range models {
			out[key] = dumpStream(t, ks, key)
			sawPending = sawPending || strings.Contains(out[key], "  pending ")
		}
		return out
	}
	for step := 0; step < steps; step++ {
		key := fmt.Sprintf("s%d", rng.IntN(4))
		k := []byte(key)
		m := models[key]
		switch r := rng.IntN(100); {
		case r < 50:
			if m == nil {
				m = &streamModel{}
				models[key] = m
			}
			id := idOf(m.last.Ms+uint64(rng.IntN(3)), uint64(rng.IntN(5)))
			if !m.last.Less(id) {
				id, _ = m.last.Next()
			}
			f := []string{"f", fmt.Sprint(step), "g", strings.Repeat("x", rng.IntN(40))}
			fields := [][]byte{[]byte(f[0]), []byte(f[1]), []byte(f[2]), []byte(f[3])}
			if rng.IntN(2) == 0 {
				// the node decided by the writer (XADD's path), under
				// limits that close nodes by entries and by bytes
				ks.Lock()
				open := ks.XAddOpensNode(0, k, fields, keyspace.StreamNodeLimits{MaxEntries: 7, MaxBytes: 400})
				ks.Unlock()
				commit(t, ks, func(b *keyspace.Batch) { b.XAddNode(0, k, id, fields, open, id, 0) })
			} else {
				commit(t, ks, func(b *keyspace.Batch) { b.XAdd(0, k, id, fields) })
			}
			m.ents = append(m.ents, modelEnt{id, f})
			m.last = id
			m.added++
		case r < 62 && m != nil && len(m.ents) > 0:
			var ids []keyspace.StreamID
			for range 1 + rng.IntN(3) {
				ids = append(ids, m.ents[rng.IntN(len(m.ents))].id)
			}
			commit(t, ks, func(b *keyspace.Batch) { b.XDel(0, k, ids) })
			for _, id := range ids {
				if i := slices.IndexFunc(m.ents, func(e modelEnt) bool { return e.id == id }); i >= 0 {
					m.ents = slices.Delete(m.ents, i, i+1)
					if m.maxDel.Less(id) {
						m.maxDel = id
					}
				}
			}
		case r < 70 && m != nil:
			tr := keyspace.StreamTrim{MaxLen: int64(rng.IntN(120)), Approx: rng.IntN(2) == 0}
			ks.Lock()
			keep, all, n := ks.StreamTrimPlan(0, k, false, keyspace.StreamID{}, tr)
			ks.Unlock()
			if n > 0 {
				commit(t, ks, func(b *keyspace.Batch) { b.XTrim(0, k, keep, all) })
			}
			if !tr.Approx && int64(len(m.ents)) > tr.MaxLen {
				if want := int64(len(m.ents)) - tr.MaxLen; n != want {
					t.Fatalf("exact trim removed %d, want %d", n, want)
				}
			}
			m.ents = m.ents[n:]
		case r < 72 && m != nil:
			meta := keyspace.StreamMeta{LastID: idOf(m.last.Ms+5, 0), EntriesAdded: m.added + 3, MaxDeletedID: m.maxDel}
			ks.Lock()
			cur, _, _ := ks.Stream(0, k)
			ks.Unlock()
			meta.FirstID = cur.FirstID
			commit(t, ks, func(b *keyspace.Batch) { b.XSetID(0, k, meta) })
			m.last, m.added = meta.LastID, meta.EntriesAdded
		case r < 81 && m != nil: // consumer-group state
			g := fmt.Sprintf("g%d", rng.IntN(2))
			c := fmt.Sprintf("c%d", rng.IntN(3))
			var ids []keyspace.StreamID
			var sets []keyspace.PendingSet
			for range rng.IntN(4) {
				if len(m.ents) > 0 {
					id := m.ents[rng.IntN(len(m.ents))].id
					ids = append(ids, id)
					sets = append(sets, keyspace.PendingSet{ID: id, DeliveryTime: int64(step), DeliveryCount: uint64(rng.IntN(5))})
				}
			}
			ks.Lock()
			_, has := ks.StreamGroup(0, k, []byte(g))
			ks.Unlock()
			switch x := rng.IntN(6); {
			case !has:
				commit(t, ks, func(b *keyspace.Batch) { b.XGroupCreate(0, k, g, m.last, int64(rng.IntN(3))-1) })
			case x == 0:
				commit(t, ks, func(b *keyspace.Batch) { b.XGroupSetID(0, k, g, m.last, int64(step)) })
			case x == 1:
				commit(t, ks, func(b *keyspace.Batch) { b.XAck(0, k, g, ids) })
			case x == 2:
				commit(t, ks, func(b *keyspace.Batch) { b.XConsumerCreate(0, k, g, c, int64(step)) })
			case x == 3 && rng.IntN(4) == 0:
				commit(t, ks, func(b *keyspace.Batch) { b.XConsumerDel(0, k, g, c) })
			case x == 4 && rng.IntN(8) == 0:
				commit(t, ks, func(b *keyspace.Batch) { b.XGroupDestroy(0, k, g) })
			default:
				commit(t, ks, func(b *keyspace.Batch) { b.XPelSet(0, k, g, c, int64(step), sets) })
			}
		case r < 82 && m != nil:
			commit(t, ks, func(b *keyspace.Batch) { b.Del(0, k) })
			models[key] = nil
		case r < 85 && m != nil: // RENAME-like rewrite through CopyValue
			dst := fmt.Sprintf("s%d", rng.IntN(4))
			ks.Lock()
			b := ks.NewBatch()
			ks.CopyValue(b, 0, k, 0, []byte(dst), 0)
			if dst != key {
				b.Del(0, k)
			}
			if err := ks.Commit(b); err != nil {
				t.Fatal(err)
			}
			ks.Unlock()
			c := *m
			c.ents = slices.Clone(m.ents)
			if dst != key {
				models[key] = nil
			}
			models[dst] = &c
		default:
			commit(t, ks, func(b *keyspace.Batch) { b.Set(5, []byte("filler"), filler, 0) })
		}
		if step%400 == 399 {
			snap := snapshot()
			ks.Clean()
			for i := 0; i < 4 && ks.CleanOldest(); i++ {
			}
			check(fmt.Sprintf("step %d, cleaned", step))
			if got := snapshot(); !mapsEqual(got, snap) {
				t.Fatalf("step %d: cleaning changed a stream:\n%v\nbefore:\n%v", step, got, snap)
			}
		}
		if step%1500 == 1499 {
			snap := snapshot()
			cleaned += ks.Stats().CleanedBytes
			ks.Close()
			ks = openKS(t, dir, segSize)
			check(fmt.Sprintf("step %d, reopened", step))
			if got := snapshot(); !mapsEqual(got, snap) {
				t.Fatalf("step %d: reopen changed a stream:\n%v\nbefore:\n%v", step, got, snap)
			}
		}
	}
	if !sawPending {
		t.Fatalf("no snapshot had a pending entry: the group operations were not exercised")
	}
	if cleaned += ks.Stats().CleanedBytes; cleaned < 2*segSize {
		t.Fatalf("only %d bytes were cleaned", cleaned)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestStreamNodeLimits: XADD's node decision closes a node at
// stream-node-max-entries entries and at stream-node-max-bytes of the
// listpack estimate, and a reopen (replay) keeps the nodes.
func TestStreamNodeLimits(t *testing.T) {
	dir := t.TempDir()
	ks := openKS(t, dir, 1<<20)
	add := func(key string, n int, val string, lim keyspace.StreamNodeLimits) {
		k := []byte(key)
		for i := range n {
			fields := [][]byte{[]byte("f"), []byte(val)}
			id := idOf(uint64(i+1), 0)
			ks.Lock()
			open := ks.XAddOpensNode(0, k, fields, lim)
			ks.Unlock()
			commit(t, ks, func(b *keyspace.Batch) { b.XAddNode(0, k, id, fields, open, id, 0) })
		}
	}
	add("entries", 10, "v", keyspace.StreamNodeLimits{MaxEntries: 3, MaxBytes: 4096})
	// 60-byte values: the master entry and header take 14 bytes, an
	// entry 70, the count and deleted integers 4: 88 after one entry,
	// 88+61 < 200 joins (158), 158+61 >= 200 opens the next node.
	add("bytes", 5, strings.Repeat("x", 60), keyspace.StreamNodeLimits{MaxEntries: 100, MaxBytes: 200})
	add("unlimited", 250, "v", keyspace.StreamNodeLimits{})
	want := map[string]string{
		"entries":   "3/3 lp=51 3/3 lp=51 3/3 lp=51 1/1 lp=29 ",
		"bytes":     "2/2 lp=158 2/2 lp=158 1/1 lp=88 ",
		"unlimited": "250/250 lp=",
	}
	check := func(when string) {
		ks.Lock()
		defer ks.Unlock()
		for key, w := range want {
			if got := ks.StreamNodes(0, []byte(key)); !strings.HasPrefix(got, w) || key == "unlimited" && strings.Count(got, "/") != 1 {
				t.Fatalf("%s: %s nodes %q, want %q", when, key, got, w)
			}
		}
	}
	check("live")
	ks.Close()
	ks = openKS(t, dir, 1<<20)
	defer ks.Close()
	check("after reopen")
}

package commands

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/persimmon-db/persimmon/hll"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/recovery"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports
// them (the key specs are compared with redis-server in e2e hll.txt).
var hllCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"pfadd", -2, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"pfcount", -2, FlagReadonly, 1, -1, 1},
	{"pfmerge", -2, FlagWrite | FlagDenyOOM, 1, -1, 1},
	{"pfdebug", 3, FlagWrite | FlagDenyOOM | FlagAdmin, 2, 2, 1},
	{"pfselftest", 1, FlagAdmin, 0, 0, 0},
}

func TestHLLCommandInfo(t *testing.T) {
	checkCommandInfo(t, hllCommands(), hllCommandInfo)
	for _, cmd := range hllCommands() {
		if cmd.Group != "hyperloglog" || cmd.Since == "" || cmd.Summary == "" || cmd.Run == nil {
			t.Errorf("incomplete entry %+v", cmd)
		}
	}
}

func TestDiffSpans(t *testing.T) {
	a := []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	b := []byte("aaXaaaaYYaaaaaaaaaaaaaaaaaaaZa")
	got := diffSpans(a, b, 8)
	want := [][2]int{{2, 9}, {28, 29}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("diffSpans = %v, want %v", got, want)
	}
	if s := diffSpans(a, a, 8); len(s) != 0 {
		t.Fatalf("equal slices: %v", s)
	}
}

// TestPFAddLogsRegisters: PFADD on sparse HLLs past patchThreshold logs
// the registers it raises, not the string (4,000 one-element PFADDs on
// ~1.2 KB HLLs logged 5 MB as whole strings), and what it logs replays to
// the bytes hll.Add makes, sparse and, after the promotion, dense.
func TestPFAddLogsRegisters(t *testing.T) {
	dir := t.TempDir()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, SegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{KS: ks}
	pfadd := func(c *Client, key string, elems ...string) string {
		t.Helper()
		args := [][]byte{[]byte("pfadd"), []byte(key)}
		for _, e := range elems {
			args = append(args, []byte(e))
		}
		c.Out = c.Out[:0]
		c.KS.Lock()
		cmdPFAdd(c, args)
		c.KS.Unlock()
		return string(c.Out)
	}
	const keys = 200
	models := make([][]byte, keys)
	for k := range models {
		var elems []string
		v := hll.New()
		for i := 0; len(v) < patchThreshold+100; i++ {
			e := fmt.Sprintf("k%d-e%d", k, i)
			elems = append(elems, e)
			v, _, _ = hll.Add(v, []byte(e), hll.DefaultSparseMaxBytes)
		}
		hll.Invalidate(v)
		models[k] = v
		if got := pfadd(c, fmt.Sprint(k), elems...); got != ":1\r\n" {
			t.Fatalf("PFADD %d: %q", k, got)
		}
	}
	// What the log took: the segments' growth plus what the cleaner
	// reclaimed meanwhile.
	logged := func() int64 { st := ks.Stats(); return st.ArenaBytes + st.CleanedBytes }
	before := logged()
	for i := 0; i < 20; i++ {
		for k := range models {
			e := fmt.Sprintf("more-%d-%d", k, i)
			v, changed, _ := hll.Add(models[k], []byte(e), hll.DefaultSparseMaxBytes)
			want := ":0\r\n"
			if changed {
				hll.Invalidate(v)
				want = ":1\r\n"
			}
			models[k] = v
			if got := pfadd(c, fmt.Sprint(k), e); got != want {
				t.Fatalf("PFADD %d %s: %q, want %q", k, e, got, want)
			}
		}
	}
	if grew := logged() - before; grew > 1<<20 {
		t.Errorf("4,000 one-element PFADDs on sparse HLLs logged %d bytes", grew)
	}
	// One key made dense by adds: the promotion replays too.
	dense := models[0]
	var elems []string
	for i := 0; len(dense) != hll.DenseSize; i++ {
		e := fmt.Sprintf("dense-%d", i)
		elems = append(elems, e)
		dense, _, _ = hll.Add(dense, []byte(e), hll.DefaultSparseMaxBytes)
	}
	hll.Invalidate(dense)
	models[0] = dense
	pfadd(c, "0", elems...)
	check := func(c *Client, when string) {
		t.Helper()
		c.KS.Lock()
		defer c.KS.Unlock()
		for k, m := range models {
			if v, _, _ := c.KS.Get(0, []byte(fmt.Sprint(k))); !bytes.Equal(v, m) {
				t.Fatalf("%s: HLL %d is %d bytes, differs from the model (%d bytes)", when, k, len(v), len(m))
			}
		}
	}
	check(c, "live")
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks2, _, err := recovery.Open(recovery.Options{Dir: dir, SegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer ks2.Close()
	check(&Client{KS: ks2}, "after restart")
}

// TestPFAddNoChangeWritesNothing: a PFADD whose elements raise no
// register replies 0 and appends no record (Redis does not propagate it),
// on a small sparse, a large sparse and a dense HLL; one that repeats an
// element, or names two for one register, replies 1 and replays, after a
// restart, to the bytes hll.Add makes.
func TestPFAddNoChangeWritesNothing(t *testing.T) {
	dir := t.TempDir()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{KS: ks}
	pfadd := func(key string, elems ...string) string {
		t.Helper()
		args := [][]byte{[]byte("pfadd"), []byte(key)}
		for _, e := range elems {
			args = append(args, []byte(e))
		}
		c.Out = c.Out[:0]
		ks.Lock()
		cmdPFAdd(c, args)
		ks.Unlock()
		return string(c.Out)
	}
	sizes := map[string]int{"small": 40, "large": 500, "dense": 3000}
	models := map[string][]byte{}
	for key, n := range sizes {
		v := hll.New()
		var elems []string
		for i := 0; i < n; i++ {
			e := fmt.Sprintf("%s-%d", key, i)
			elems = append(elems, e)
			v, _, _ = hll.Add(v, []byte(e), hll.DefaultSparseMaxBytes)
		}
		hll.Invalidate(v)
		models[key] = v
		if got := pfadd(key, elems...); got != ":1\r\n" {
			t.Fatalf("PFADD %s: %q", key, got)
		}
		if (key == "small") != (len(v) < patchThreshold) || (key == "dense") != hll.IsDense(v) {
			t.Fatalf("%s: %d bytes, dense %v: not the case it names", key, len(v), hll.IsDense(v))
		}
	}
	for key, n := range sizes {
		lsn := ks.Stats().LastLSN
		appended := ks.Stats().AppendedBytes
		if got := pfadd(key, fmt.Sprintf("%s-%d", key, n-1), fmt.Sprintf("%s-0", key)); got != ":0\r\n" {
			t.Fatalf("PFADD %s of elements it holds: %q", key, got)
		}
		if got := pfadd(key); got != ":0\r\n" {
			t.Fatalf("PFADD %s without elements: %q", key, got)
		}
		if st := ks.Stats(); st.LastLSN != lsn || st.AppendedBytes != appended {
			t.Fatalf("PFADD %s that changed nothing wrote: LSN %d -> %d, %d bytes appended", key, lsn, st.LastLSN, st.AppendedBytes-appended)
		}
		// Repeats and a register named twice (found by search).
		elems := []string{"rep", "rep"}
		ri, _ := hll.PatLen([]byte("rep"))
		for i := 0; len(elems) < 3; i++ {
			if j, _ := hll.PatLen([]byte(fmt.Sprint("twin-", i))); j == ri {
				elems = append(elems, fmt.Sprint("twin-", i))
			}
		}
		v := models[key]
		changed := false
		for _, e := range elems {
			var ch bool
			v, ch, _ = hll.Add(v, []byte(e), hll.DefaultSparseMaxBytes)
			changed = changed || ch
		}
		if !changed {
			t.Fatalf("%s: %v change nothing", key, elems)
		}
		hll.Invalidate(v)
		models[key] = v
		if got := pfadd(key, elems...); got != ":1\r\n" {
			t.Fatalf("PFADD %s %v: %q", key, elems, got)
		}
	}
	check := func(ks *keyspace.Keyspace, when string) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		for key, m := range models {
			if v, _, _ := ks.Get(0, []byte(key)); !bytes.Equal(v, m) {
				t.Fatalf("%s: HLL %s is %d bytes, differs from the model (%d bytes)", when, key, len(v), len(m))
			}
		}
	}
	check(ks, "live")
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks2, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ks2.Close()
	check(ks2, "after restart")
}

// TestPFAddSmallSparse: PFADD builds a small sparse HLL's new bytes in
// the batch's scratch buffer, reused by every PFADD: interleaved PFADDs on
// many keys (one, two and five elements, repeats that change nothing)
// leave each key with the bytes hll.Add makes, live and after a restart,
// a key's TTL stays, and a corrupt sparse HLL answers INVALIDOBJ with
// nothing written and its bytes unchanged.
func TestPFAddSmallSparse(t *testing.T) {
	dir := t.TempDir()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{KS: ks}
	pfadd := func(key string, elems ...string) string {
		t.Helper()
		args := [][]byte{[]byte("pfadd"), []byte(key)}
		for _, e := range elems {
			args = append(args, []byte(e))
		}
		c.Out = c.Out[:0]
		ks.Lock()
		cmdPFAdd(c, args)
		ks.Unlock()
		return string(c.Out)
	}
	const keys = 50
	models := map[string][]byte{}
	expireAt := ks.NowMs() + 3600_000
	ks.Lock()
	b := ks.NewBatch()
	b.Set(0, []byte("k0"), hll.New(), expireAt)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	models["k0"] = hll.New()
	for round := 0; round < 12; round++ {
		for k := 0; k < keys; k++ {
			key := fmt.Sprint("k", k)
			var elems []string
			for i := 0; i < 1+(k+round)%5; i++ {
				elems = append(elems, fmt.Sprintf("e%d-%d-%d", k, round, i))
			}
			if round%4 == 3 {
				elems = elems[:1]
				elems[0] = fmt.Sprintf("e%d-%d-0", k, round-1) // already added
			}
			v, ok := models[key]
			changed := !ok
			if !ok {
				v = hll.New()
			}
			v = append([]byte(nil), v...)
			for _, e := range elems {
				var ch bool
				v, ch, _ = hll.Add(v, []byte(e), hll.DefaultSparseMaxBytes)
				changed = changed || ch
			}
			want := ":0\r\n"
			if changed {
				hll.Invalidate(v)
				want = ":1\r\n"
			}
			models[key] = v
			if got := pfadd(key, elems...); got != want {
				t.Fatalf("round %d: PFADD %s %v: %q, want %q", round, key, elems, got, want)
			}
		}
	}
	for key, v := range models {
		if len(v) >= patchThreshold || hll.IsDense(v) {
			t.Fatalf("%s: %d bytes, dense %v: not a small sparse HLL", key, len(v), hll.IsDense(v))
		}
	}
	// A sparse HLL whose opcodes cover 100 registers, and an element for
	// a register past them.
	bad := hll.New()[:hll.HeaderSize]
	bad = append(bad, 0x40, 99) // XZERO of 100
	elem := ""
	for i := 0; elem == ""; i++ {
		if r, _ := hll.PatLen([]byte(fmt.Sprint("x", i))); r >= 100 {
			elem = fmt.Sprint("x", i)
		}
	}
	ks.Lock()
	b = ks.NewBatch()
	b.Set(0, []byte("bad"), bad, 0)
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	models["bad"] = bad
	lsn := ks.Stats().LastLSN
	if got := pfadd("bad", "y", elem); got != "-"+errHLLCorrupt+"\r\n" {
		t.Fatalf("PFADD on a corrupt sparse HLL: %q", got)
	}
	if st := ks.Stats(); st.LastLSN != lsn {
		t.Fatalf("PFADD on a corrupt sparse HLL wrote: LSN %d -> %d", lsn, st.LastLSN)
	}
	check := func(ks *keyspace.Keyspace, when string) {
		t.Helper()
		ks.Lock()
		defer ks.Unlock()
		for key, m := range models {
			if v, _, _ := ks.Get(0, []byte(key)); !bytes.Equal(v, m) {
				t.Fatalf("%s: HLL %s is %x, want %x", when, key, v, m)
			}
		}
		if got, ok := ks.ExpireAt(0, []byte("k0")); !ok || got != expireAt {
			t.Fatalf("%s: k0 expires at %d (%v), want %d", when, got, ok, expireAt)
		}
	}
	check(ks, "live")
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks2, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ks2.Close()
	check(ks2, "after restart")
}

package commands

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/persimmon-db/persimmon/hll"
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

package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSplitCommand(t *testing.T) {
	got, err := splitCommand(`EVAL "return redis.call('SET', KEYS[1], ARGV[1])" 1 {key uniform 10} 'a b'`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", "1", "{key uniform 10}", "a b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
	for _, bad := range []string{"", "   ", `SET "x`, "SET {key uniform 10"} {
		if _, err := splitCommand(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestParseTemplate(t *testing.T) {
	tm, err := parseTemplate("ZADD {key uniform 1000} {rand 70000} {key uniform 10_000}")
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.args) != 4 {
		t.Fatalf("%d args", len(tm.args))
	}
	checks := []struct {
		kind phKind
		n    uint64
	}{{phLiteral, 0}, {phKey, 1000}, {phRand, 70000}, {phKey, 10000}}
	for i, c := range checks {
		p := tm.args[i][0]
		if p.kind != c.kind || (c.kind != phLiteral && p.n != c.n) {
			t.Errorf("arg %d: got %+v want %+v", i, p, c)
		}
	}
	tm, err = parseTemplate("HSET h:{key zipfian 50}:x f{key sequence 7} {value 64}")
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.args[1]) != 3 || tm.args[1][1].dist != "zipfian" || tm.args[2][1].dist != "sequence" {
		t.Fatalf("embedded placeholders: %+v", tm.args)
	}
	tm, err = parseTemplate("GET k:{key uniform 100 %014d} {key sequence 3 %d}")
	if err != nil {
		t.Fatal(err)
	}
	ti := tm.instance()
	args := ti.build(rand.New(rand.NewPCG(1, 1)))
	if len(args[1]) != 16 || !strings.HasPrefix(string(args[1]), "k:000000000000") || string(args[2]) != "0" {
		t.Fatalf("keys with a format: %q", args)
	}
	for _, bad := range []string{"GET {key}", "GET {key normal 10}", "GET {key uniform 0}", "SET k {value}",
		"GET {key uniform 10 %14d}", "GET {key uniform 10 %s}", "GET {key uniform 10 k%d}", "GET {key uniform 10 %00d}",
		"SET k {value x}", "GET {rand -1}", "GET {nope 3}", "GET {key uniform 10"} {
		if _, err := parseTemplate(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestTemplateSubstitution(t *testing.T) {
	tm, err := parseTemplate("SET pre:{key sequence 3} {value 64} {rand 5}")
	if err != nil {
		t.Fatal(err)
	}
	ti := tm.instance()
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 7; i++ {
		args := ti.build(r)
		if len(args) != 4 || string(args[0]) != "SET" {
			t.Fatalf("args %q", args)
		}
		want := "pre:key_000000000" + strconv.Itoa(i%3)
		if string(args[1]) != want {
			t.Errorf("key %d: %q want %q", i, args[1], want)
		}
		if len(args[2]) != 64 {
			t.Errorf("value length %d", len(args[2]))
		}
		n, err := strconv.Atoi(string(args[3]))
		if err != nil || n < 0 || n >= 5 {
			t.Errorf("rand %q", args[3])
		}
	}
}

func TestRandSubstitution(t *testing.T) {
	c, err := parseRandCommand("TR.SETBIT__RAND__ foo-__RAND__ __RAND2__ mid__RAND__dle 1", 10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	seen2 := map[string]bool{}
	for i := 0; i < 2000; i++ {
		args := c.build(r)
		if len(args) != 5 {
			t.Fatalf("args %q", args)
		}
		name, ok := strings.CutPrefix(string(args[0]), "TR.SETBIT")
		if n, err := strconv.Atoi(name); !ok || err != nil || n >= 10 {
			t.Fatalf("command name %q", args[0])
		}
		key, _ := strings.CutPrefix(string(args[1]), "foo-")
		if n, err := strconv.Atoi(key); err != nil || n >= 10 {
			t.Fatalf("key %q", args[1])
		}
		if n, err := strconv.Atoi(string(args[2])); err != nil || n >= 1000 {
			t.Fatalf("__RAND2__ %q", args[2])
		}
		seen2[string(args[2])] = true
		if string(args[3]) != "mid__RAND__dle" || string(args[4]) != "1" {
			t.Fatalf("only a trailing placeholder is replaced: %q", args)
		}
	}
	if len(seen2) < 800 {
		t.Errorf("__RAND2__ covered only %d of 1000 values", len(seen2))
	}
}

func TestUniformCoverage(t *testing.T) {
	const n, draws = 200, 200_000
	g := uniformGen{n}
	r := rand.New(rand.NewPCG(3, 3))
	counts := make([]int, n)
	for i := 0; i < draws; i++ {
		counts[g.next(r)]++
	}
	exp := float64(draws) / n
	chi := 0.0
	for k, c := range counts {
		if c == 0 {
			t.Fatalf("key %d never drawn", k)
		}
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	// 199 degrees of freedom: mean 199, sd ~20; 320 is far in the tail.
	if chi > 320 {
		t.Errorf("chi-square %.1f: not uniform", chi)
	}
	s := &sequenceGen{n: 5}
	for i := 0; i < 12; i++ {
		if v := s.next(nil); v != uint64(i%5) {
			t.Fatalf("sequence %d: %d", i, v)
		}
	}
}

func TestZipfianSkew(t *testing.T) {
	const n, draws = 1000, 400_000
	r := rand.New(rand.NewPCG(4, 4))
	z := newZipfian(n, zipfianConstant)
	counts := make([]int, n)
	for i := 0; i < draws; i++ {
		counts[z.next(r)]++
	}
	zn := zeta(n, zipfianConstant)
	// Ranks 0 and 1 are exact in Gray's method; beyond them it approximates,
	// so the rest is checked as cumulative mass of the top k items.
	for rank := 0; rank < 2; rank++ {
		want := 1 / math.Pow(float64(rank+1), zipfianConstant) / zn
		got := float64(counts[rank]) / draws
		if math.Abs(got-want)/want > 0.05 {
			t.Errorf("rank %d: frequency %.4f, theory %.4f", rank, got, want)
		}
	}
	for _, k := range []int{10, 100, 500} {
		got, want := 0, 0.0
		for i := 0; i < k; i++ {
			got += counts[i]
			want += 1 / math.Pow(float64(i+1), zipfianConstant) / zn
		}
		if g := float64(got) / draws; math.Abs(g-want)/want > 0.06 {
			t.Errorf("top %d: mass %.4f, theory %.4f", k, g, want)
		}
	}
	// Scrambled: the hottest key carries about 1/zeta(10^10, 0.99) of the
	// draws, wherever the hash puts it.
	sz := newScrambledZipfian(0, n-1)
	counts = make([]int, n)
	for i := 0; i < draws; i++ {
		v := sz.next(r)
		if v >= n {
			t.Fatalf("scrambled value %d out of range", v)
		}
		counts[v]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	want := 1 / scrambledZetan
	if got := float64(top) / draws; math.Abs(got-want)/want > 0.15 {
		t.Errorf("scrambled top frequency %.4f, theory %.4f", got, want)
	}
	if counts[0] == top {
		t.Errorf("scrambled zipfian left the hot key at 0")
	}
	// Latest: the last record is the hottest.
	lg := newLatest(n)
	counts = make([]int, n)
	for i := 0; i < draws/4; i++ {
		counts[lg.next(r)]++
	}
	for k := 0; k < n-1; k++ {
		if counts[k] > counts[n-1] {
			t.Fatalf("latest: key %d drawn more often than the newest", k)
		}
	}
}

func TestMultiExecBatching(t *testing.T) {
	f := startFake(t)
	cmd, _ := parseRandCommand("SET k__RAND__ v", 100, 100)
	res, err := runPipelined(runOpts{addr: f.addr(), workers: 3, total: 1000, pipeline: 10, multi: true},
		func() builder { return cmd.clone() })
	if err != nil {
		t.Fatal(err)
	}
	if f.execs != 100 || f.count("MULTI") != 100 || f.count("SET") != 1000 {
		t.Fatalf("EXEC %d, MULTI %d, SET %d; want 100, 100, 1000", f.execs, f.count("MULTI"), f.count("SET"))
	}
	if res.Ops != 1000 || res.Errors != 0 {
		t.Fatalf("ops %d errors %d", res.Ops, res.Errors)
	}
	// The Go-tool interface: -batching N is the same thing.
	f2 := startFake(t)
	var out, errb bytes.Buffer
	if code := run([]string{"-port", f2.port(), "-d", "1", "-c", "1", "-p", "2", "-q", "-batching", "7",
		"-command", "SET k__RAND__ v"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if f2.execs == 0 || f2.count("SET") != 7*f2.execs {
		t.Fatalf("batching 7: %d SET in %d EXEC", f2.count("SET"), f2.execs)
	}
	if !strings.Contains(out.String(), "QPS:") || !strings.Contains(out.String(), "latency histogram") {
		t.Fatalf("output lacks QPS or histogram:\n%s", out.String())
	}
}

func TestAuthOneArgument(t *testing.T) {
	f := startFake(t)
	var out, errb bytes.Buffer
	code := run([]string{"tair", "-port", f.port(), "-a", "user:pass", "-d", "1", "-p", "2", "-q",
		"-command", "GET foo-__RAND__"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if len(f.auths) != 2 {
		t.Fatalf("want one AUTH per worker, got %d", len(f.auths))
	}
	for _, a := range f.auths {
		if len(a) != 1 || a[0] != "user:pass" {
			t.Fatalf("AUTH arguments %q: want the single argument user:pass", a)
		}
	}
	if code := run([]string{"-port", f.port(), "-a", "user:wrong", "-d", "1", "-q"}, &out, &errb); code == 0 {
		t.Fatal("a wrong password must fail the run")
	}
}

func TestErrorCounting(t *testing.T) {
	for _, multi := range []bool{false, true} {
		f := startFake(t)
		cmd, _ := parseRandCommand("MAYBE __RAND__", 2, 2)
		res, err := runPipelined(runOpts{addr: f.addr(), workers: 2, total: 2000, pipeline: 8, multi: multi},
			func() builder { return cmd.clone() })
		if err != nil {
			t.Fatal(err)
		}
		if res.Ops != 2000 || res.Errors != int64(f.failures) || res.Errors == 0 || res.Errors == 2000 {
			t.Fatalf("multi=%v: ops %d, errors %d, server failures %d", multi, res.Ops, res.Errors, f.failures)
		}
		if res.FirstError != "ERR odd one" {
			t.Fatalf("first error %q", res.FirstError)
		}
		var out bytes.Buffer
		printSummary(&out, res)
		if !strings.Contains(out.String(), "errors: "+strconv.FormatInt(res.Errors, 10)) {
			t.Fatalf("errors not shown:\n%s", out.String())
		}
	}
	// An unknown command stops the run early and is reported as not supported.
	f := startFake(t)
	var out, errb bytes.Buffer
	start := time.Now()
	if code := run([]string{"resp", "-p", f.port(), "-s", "20", "-c", "2", "-q", "--json", "NOPE {key uniform 10}"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("an unsupported command did not stop the run")
	}
	var js map[string]any
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if js["not_supported"] != true || !strings.Contains(js["first_error"].(string), "unknown command") {
		t.Fatalf("json %v", js)
	}
}

func TestRespLoadPhase(t *testing.T) {
	f := startFake(t)
	var out, errb bytes.Buffer
	if code := run([]string{"resp", "--load", "-n", "1001", "-P", "16", "-C", "3", "-p", f.port(), "-q",
		"HSET {key sequence 7} {key sequence 11} {value 8}"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if f.count("HSET") != 1001 {
		t.Fatalf("%d HSET, want 1001", f.count("HSET"))
	}
	if len(f.keys) != 7 {
		t.Fatalf("sequence of 7 keys touched %d keys", len(f.keys))
	}
}

func ycsbRun(t *testing.T, f *fakeServer, workload, group string, ops int64) *result {
	t.Helper()
	res, err := runYCSBPhase(ycsbConfig{addr: f.addr(), workload: workload, group: group, recordCount: 300,
		operationCount: ops, fieldCount: 10, fieldLength: 16, threads: 3, distribution: "zipfian", readAllFields: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func opsOf(res *result) map[string]int64 {
	m := map[string]int64{}
	for _, o := range res.PerOp {
		m[o.Name] = o.Ops
	}
	return m
}

func TestYCSBPhases(t *testing.T) {
	f := startFake(t)
	res := ycsbRun(t, f, "load", "string", 0)
	if m := opsOf(res); m["INSERT"] != 300 || len(m) != 1 || res.Ops != 300 {
		t.Fatalf("load: %v, overall %d", m, res.Ops)
	}
	if f.count("SET") != 300 || len(f.keys) != 300 {
		t.Fatalf("load: %d SET on %d keys", f.count("SET"), len(f.keys))
	}
	res = ycsbRun(t, f, "a", "string", 2000)
	m := opsOf(res)
	if m["READ"]+m["UPDATE"] != 2000 || m["READ"] < 800 || m["UPDATE"] < 800 {
		t.Fatalf("workload a: %v", m)
	}
	if f.count("GET") != int(m["READ"]) || f.count("SET") != 300+int(m["UPDATE"]) {
		t.Fatalf("workload a: server saw %d GET, %d SET for %v", f.count("GET"), f.count("SET"), m)
	}
	res = ycsbRun(t, f, "c", "string", 500)
	if m := opsOf(res); m["READ"] != 500 || len(m) != 1 {
		t.Fatalf("workload c: %v", m)
	}
	res = ycsbRun(t, f, "f", "hash", 1000)
	m = opsOf(res)
	if m["READ"] != 1000 || m["UPDATE"] != m["READ-MODIFY-WRITE"] || res.Ops != 1000 {
		t.Fatalf("workload f: %v, overall %d", m, res.Ops)
	}
	if f.count("HGETALL") != 1000 || f.count("HSET") != int(m["UPDATE"]) {
		t.Fatalf("workload f: %d HGETALL, %d HSET", f.count("HGETALL"), f.count("HSET"))
	}
	res = ycsbRun(t, f, "load", "zset", 0)
	if f.count("ZADD") != 300 || f.argc["ZADD"] != 2+2*10 {
		t.Fatalf("zset load: %d ZADD with %d args", f.count("ZADD"), f.argc["ZADD"])
	}
	var out bytes.Buffer
	printYCSB(&out, res)
	for _, want := range []string{"[OVERALL], Throughput(ops/sec)", "[INSERT], Operations, 300", "[INSERT], AverageLatency(us)", "[INSERT], 99thPercentileLatency(us)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("YCSB output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDurabilityReport(t *testing.T) {
	f := startFake(t)
	var out, errb bytes.Buffer
	if code := run([]string{"ycsb", "-p", f.port(), "-workload", "load", "-recordcount", "400", "-threads", "2",
		"-q", "--durability-report", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	d := res.Durability
	if d == nil || !d.Supported || d.SyncedRecords != 400 || d.Flushes != 100 || d.Writes != 400 ||
		d.FlushesPerWrite != 0.25 || d.GroupCommitAvg != 4 {
		t.Fatalf("durability %+v", d)
	}
	f.noWAL = true
	out.Reset()
	if code := run([]string{"resp", "-p", f.port(), "-n", "10", "-q", "--durability-report", "SET a b"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "does not report wal_flushes") {
		t.Fatalf("no note for a server without WAL counters:\n%s", out.String())
	}
}

// TestRangePlaceholders: a range drawn as start and width is never invalid.
// The template the TR.SETRANGE / TR.FLIPRANGE rows used to run drew start
// and end independently (a quarter of its ranges had start > end, which
// the server rightly refuses); __PREV+N__ and __PREV+RAND2__ tie an
// argument to the one before it.
func TestRangePlaceholders(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	parse := func(s string, r1, r2 uint64) *randCommand {
		t.Helper()
		c, err := parseRandCommand(s, r1, r2)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	num := func(b []byte) uint64 {
		t.Helper()
		n, err := strconv.ParseUint(string(b), 10, 64)
		if err != nil {
			t.Fatalf("not a number: %q", b)
		}
		return n
	}
	old := parse("TR.SETRANGE foo __RAND__ __RAND2__", 5_000_000, 10_000_000)
	inverted := 0
	for i := 0; i < 4000; i++ {
		a := old.build(r)
		if num(a[2]) > num(a[3]) {
			inverted++
		}
	}
	if inverted < 700 {
		t.Fatalf("independent draws: %d of 4000 inverted ranges, want about 1000", inverted)
	}

	c := parse("TR.SETRANGE foo __RAND__ __PREV+999__", 10_000_000, 1)
	starts := map[uint64]bool{}
	for i := 0; i < 4000; i++ {
		a := c.build(r)
		s, e := num(a[2]), num(a[3])
		if e-s != 999 || s >= 10_000_000 || string(a[1]) != "foo" {
			t.Fatalf("range %q: want a start below 10,000,000 and width 1,000", a)
		}
		starts[s] = true
	}
	if len(starts) < 3900 {
		t.Fatalf("only %d distinct starts in 4000", len(starts))
	}

	// Ascending offsets with random gaps in [1, r2]; the literal "1" of a
	// BITFIELD SET does not reset the chain; a prefix is kept.
	c = parse("BITFIELD k SET u1 __RAND__ 1 SET u1 o__PREV+RAND2__ 1 SET u1 __PREV+RAND2__ 1", 1000, 50)
	for i := 0; i < 2000; i++ {
		a := c.build(r)
		x0, x2 := num(a[4]), num(a[12])
		rest, ok := strings.CutPrefix(string(a[8]), "o")
		if !ok {
			t.Fatalf("prefix lost: %q", a[8])
		}
		x1 := num([]byte(rest))
		if x1 <= x0 || x1-x0 > 50 || x2 <= x1 || x2-x1 > 50 || string(a[5]) != "1" {
			t.Fatalf("not ascending with gaps in [1, 50]: %q", a)
		}
	}

	for _, bad := range []string{"TR.RANGE k __PREV+5__ __RAND__", "TR.RANGE k __RAND__ __PREV+x__", "TR.RANGE k __RAND__ __PREV+-1__"} {
		if _, err := parseRandCommand(bad, 10, 10); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestCgroupAcksWhatWasDelivered: each consumer acknowledges exactly the
// IDs its XREADGROUP reply delivered (none twice, none it was not given),
// both commands count, and a group with nothing left ends the run with
// the exhaustion counted as an error.
func TestCgroupAcksWhatWasDelivered(t *testing.T) {
	f := startFake(t)
	var out, errb bytes.Buffer
	if code := run([]string{"resp", "--load", "-n", "1000", "-P", "16", "-C", "2", "-p", f.port(), "-q",
		"XADD stream * field {value 8}"}, &out, &errb); code != 0 {
		t.Fatalf("load: exit %d: %s", code, errb.String())
	}
	res, err := runCgroup(cgroupOpts{addr: f.addr(), workers: 3, total: 2 * 30, count: 7, key: "stream", group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	if f.count("XREADGROUP") != 30 || f.count("XACK") != 30 || res.Ops != 60 || res.Errors != 0 {
		t.Fatalf("XREADGROUP %d, XACK %d, ops %d, errors %d (%s); want 30, 30, 60, 0",
			f.count("XREADGROUP"), f.count("XACK"), res.Ops, res.Errors, res.FirstError)
	}
	if len(f.delivered) != 30*7 || len(f.acked) != len(f.delivered) {
		t.Fatalf("%d delivered, %d acknowledged; want %d each", len(f.delivered), len(f.acked), 30*7)
	}
	for id, n := range f.acked {
		if n != 1 || f.delivered[id] != 1 {
			t.Fatalf("ID %s delivered %d times, acknowledged %d times", id, f.delivered[id], n)
		}
	}
	// 1000 - 210 entries left: 790 / 7 = 112 full reads and one of 6;
	// the next read of each consumer finds nothing.
	out.Reset()
	if code := run([]string{"cgroup", "-p", f.port(), "-c", "3", "-count", "7", "-s", "20", "-q", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var js map[string]any
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if len(f.acked) != 1000 || js["errors"] != 3.0 || js["first_error"] != errExhausted {
		t.Fatalf("acknowledged %d of 1000; result %v", len(f.acked), js)
	}
}

package server

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/persimmon-db/persimmon/pmem"
)

// Per-command latency tracking: INFO latencystats and LATENCY HISTOGRAM,
// the cases of Redis's tests/unit/info.tcl (latencystats) and
// tests/unit/latency-monitor.tcl (LATENCY HISTOGRAM).

// The bucket bounds LATENCY HISTOGRAM names are the histogram's own:
// hdrHighestEquivalent agrees with hdrhistogram-go at every power of two
// it reports, and gives Redis's bucket names.
func TestHdrHighestEquivalent(t *testing.T) {
	h := hdrhistogram.New(latencyHistMin, latencyHistMax, latencyHistDigits)
	for v := int64(1024); v <= latencyHistMax; v *= 2 {
		h.Reset()
		h.RecordValue(v)
		var to int64 = -1
		for _, b := range h.Distribution() {
			if b.Count > 0 {
				to = b.To
			}
		}
		if got := hdrHighestEquivalent(v); got != to {
			t.Errorf("hdrHighestEquivalent(%d) = %d, hdrhistogram-go says %d", v, got, to)
		}
	}
	var names []string
	for v := int64(1024); v <= 1<<17; v *= 2 {
		names = append(names, strconv.FormatInt(hdrHighestEquivalent(v)/1000, 10))
	}
	if got, want := strings.Join(names, " "), "1 2 4 8 16 33 66 132"; got != want {
		t.Errorf("bucket names %s, want Redis's %s", got, want)
	}
}

func TestCumulativeLog2(t *testing.T) {
	h := hdrhistogram.New(latencyHistMin, latencyHistMax, latencyHistDigits)
	for _, v := range []int64{500, 500, 500, 1500, 1500, 40_000} {
		h.RecordValue(v)
	}
	got := cumulativeLog2(h.Distribution(), h.TotalCount())
	want := []latencyCDFPoint{{1, 3}, {2, 5}, {66, 6}} // only where the count grows
	if len(got) != len(want) {
		t.Fatalf("cdf %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cdf %v, want %v", got, want)
		}
	}
}

func TestPercentileLabel(t *testing.T) {
	for p, want := range map[float64]string{50: "50", 99.9: "99.9", 0: "0", 100: "100", 99.99: "99.99"} {
		if got := percentileLabel(p); got != want {
			t.Errorf("percentileLabel(%v) = %q, want %q", p, got, want)
		}
	}
}

// latencyLine is the value of INFO latencystats' line for cmd ("" if none).
func latencyLine(t *testing.T, rc *redis.Conn, cmd string) string {
	t.Helper()
	info, err := rc.Info(context.Background(), "latencystats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "latency_percentiles_usec_"+cmd+":"); ok {
			return v
		}
	}
	return ""
}

// histogram is LATENCY HISTOGRAM args... as name -> calls, buckets.
func histogram(t *testing.T, rc *redis.Conn, args ...string) map[string]int64 {
	t.Helper()
	all := []any{"LATENCY", "HISTOGRAM"}
	for _, a := range args {
		all = append(all, a)
	}
	v, err := rc.Do(context.Background(), all...).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	m, ok := v.(map[any]any) // RESP3 (go-redis says HELLO 3)
	if !ok {
		t.Fatalf("LATENCY HISTOGRAM: %T %v, want a map", v, v)
	}
	for name, e := range m {
		em := e.(map[any]any)
		calls := em["calls"].(int64)
		buckets := em["histogram_usec"].(map[any]any)
		var last int64
		for _, n := range buckets {
			last = max(last, n.(int64))
		}
		if last != calls {
			t.Errorf("%s: the last bucket counts %d calls, want all %d", name, last, calls)
		}
		out[name.(string)] = calls
	}
	return out
}

func TestLatencyTrackingAsRedis(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	ctx := context.Background()
	rc := goRedis(t, s.addr).Conn()
	defer rc.Close()
	do := func(args ...any) {
		t.Helper()
		if err := rc.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	want := func(got map[string]int64, w map[string]int64) {
		t.Helper()
		if len(got) != len(w) {
			t.Errorf("LATENCY HISTOGRAM %v, want %v", got, w)
			return
		}
		for k, n := range w {
			if got[k] != n {
				t.Errorf("LATENCY HISTOGRAM %v, want %v", got, w)
			}
		}
	}

	do("CONFIG", "RESETSTAT")
	want(histogram(t, rc), map[string]int64{"config|resetstat": 1})
	do("SET", "a", "b")
	do("SET", "c", "d")
	want(histogram(t, rc), map[string]int64{"config|resetstat": 1, "set": 2, "latency|histogram": 1})

	do("CONFIG", "RESETSTAT")
	do("CLIENT", "ID")
	do("CLIENT", "LIST")
	want(histogram(t, rc, "client"), map[string]int64{"client|id": 1, "client|list": 1})
	want(histogram(t, rc, "client|id"), map[string]int64{"client|id": 1})
	want(histogram(t, rc, "blabla", "blabla2"), map[string]int64{})
	do("GET", "a")
	want(histogram(t, rc, "blabla", "SET", "get", "zadd"), map[string]int64{"get": 1})

	// INFO latencystats, as info.tcl checks it.
	do("CONFIG", "RESETSTAT")
	do("CONFIG", "SET", "latency-tracking", "no")
	do("SET", "a", "b")
	if l := latencyLine(t, rc, "set"); l != "" {
		t.Errorf("latency-tracking no: set has %q", l)
	}
	do("CONFIG", "SET", "latency-tracking", "yes")
	do("SET", "a", "b")
	if l := latencyLine(t, rc, "set"); !regexp.MustCompile(`^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`).MatchString(l) {
		t.Errorf("set: %q", l)
	}
	do("CONFIG", "SET", "latency-tracking-info-percentiles", "0.0 50.0 100.0")
	if v, _ := rc.ConfigGet(ctx, "latency-tracking-info-percentiles").Result(); v["latency-tracking-info-percentiles"] != "0 50 100" {
		t.Errorf("CONFIG GET latency-tracking-info-percentiles = %v", v)
	}
	if l := latencyLine(t, rc, "set"); !strings.HasPrefix(l, "p0=") || !strings.Contains(l, ",p50=") || !strings.Contains(l, ",p100=") {
		t.Errorf("set with percentiles 0 50 100: %q", l)
	}
	if l := latencyLine(t, rc, "config|set"); l == "" {
		t.Errorf("no latencystats for the subcommand config|set")
	}
	do("CONFIG", "RESETSTAT")
	if l := latencyLine(t, rc, "set"); l != "" {
		t.Errorf("after RESETSTAT set has %q", l)
	}

	// The values are the calls' real durations: a script that runs 50 ms
	// is at least 50000 µs at p50, a SET far less.
	do("CONFIG", "SET", "latency-tracking-info-percentiles", "50.0")
	do("EVAL", `local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start >= 50000`, "0")
	do("SET", "k", "v")
	p50 := func(cmd string) float64 {
		t.Helper()
		l := latencyLine(t, rc, cmd)
		f, err := strconv.ParseFloat(strings.TrimPrefix(l, "p50="), 64)
		if err != nil {
			t.Fatalf("%s: %q", cmd, l)
		}
		return f
	}
	if d, st := p50("eval"), p50("set"); d < 50000 || st > d {
		t.Errorf("p50 eval %.3f µs (want >= 50000), set %.3f µs", d, st)
	}

	// A blocked command counts once it is served, for the whole wait.
	do("CONFIG", "RESETSTAT")
	do("DEL", "list1{t}")
	bl := goRedis(t, s.addr)
	got := make(chan error, 1)
	go func() { got <- bl.BLPop(ctx, 0, "list1{t}").Err() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := rc.Info(ctx, "clients").Result()
		if strings.Contains(info, "blocked_clients:1\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("BLPOP never blocked")
		}
		time.Sleep(5 * time.Millisecond) // polling the server's state, as Redis's wait_for_blocked_client
	}
	if l := latencyLine(t, rc, "blpop"); l != "" {
		t.Errorf("blocked BLPOP counted before it was served: %q", l)
	}
	time.Sleep(30 * time.Millisecond) // the wait BLPOP's latency must include
	do("LPUSH", "list1{t}", "a")
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h := histogram(t, rc, "blpop"); h["blpop"] != 1 {
		t.Errorf("LATENCY HISTOGRAM blpop = %v", h)
	}
	if d := p50("blpop"); d < 30000 {
		t.Errorf("blpop p50 %.3f µs, want the 30 ms it waited", d)
	}
}

// RESP2's LATENCY HISTOGRAM is flat arrays, as Redis sends it.
func TestLatencyHistogramRESP2(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	w := dialAddr(t, s.addr)
	w.do("CONFIG", "RESETSTAT")
	w.do("SET", "a", "b")
	got := w.do("LATENCY", "HISTOGRAM", "set")
	if !regexp.MustCompile(`^\*2\r\n\$3\r\nset\r\n\*4\r\n\$5\r\ncalls\r\n:1\r\n\$14\r\nhistogram_usec\r\n\*2\r\n:\d+\r\n:1\r\n$`).MatchString(got) {
		t.Fatalf("LATENCY HISTOGRAM set (RESP2) = %q", got)
	}
}

// BenchmarkRecordLatency is what latency tracking adds to every command:
// one histogram record under the command's mutex (parallel: every
// goroutine records into the same command, the worst case of goroutine
// mode).
func BenchmarkRecordLatency(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		var st cmdStats
		for i := 0; i < b.N; i++ {
			st.recordLatency(time.Duration(1000 + i%5000))
		}
	})
	b.Run("parallel", func(b *testing.B) {
		var st cmdStats
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				st.recordLatency(time.Duration(1000 + i%5000))
				i++
			}
		})
	})
}

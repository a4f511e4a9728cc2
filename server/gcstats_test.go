package server

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestHistPercentile: a percentile is the upper bound of the bucket that
// holds its rank; a last bucket open to +Inf gives its lower bound.
func TestHistPercentile(t *testing.T) {
	buckets := []float64{0, 1e-6, 1e-5, 1e-4, math.Inf(1)}
	counts := []uint64{0, 98, 1, 1}
	for _, c := range []struct {
		q    float64
		want float64
	}{{0.5, 1e-5}, {0.98, 1e-5}, {0.99, 1e-4}, {0.999, 1e-4}, {1, 1e-4}} {
		if got := histPercentile(counts, buckets, 100, c.q); got != c.want {
			t.Errorf("q %v: %v, want %v", c.q, got, c.want)
		}
	}
	if got := histPercentile([]uint64{0, 0, 0, 3}, buckets, 3, 1); got != 1e-4 {
		t.Errorf("open last bucket: %v, want its lower bound 1e-4", got)
	}
	if got := histPercentile(counts, buckets, 0, 0.5); got != 0 {
		t.Errorf("no samples: %v", got)
	}
}

// TestInfoGCStats: INFO stats counts the collections that ran (two
// stop-the-world pauses each) and CONFIG RESETSTAT starts the counts again.
func TestInfoGCStats(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	field := func(info, name string) float64 {
		t.Helper()
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%s: %q", name, v)
				}
				return f
			}
		}
		t.Fatalf("INFO stats lacks %s:\n%s", name, info)
		return 0
	}
	before := w.do("INFO", "stats")
	for i := 0; i < 5; i++ {
		runtime.GC()
	}
	after := w.do("INFO", "stats")
	if d := field(after, "go_gc_cycles") - field(before, "go_gc_cycles"); d < 5 {
		t.Fatalf("go_gc_cycles grew by %v after 5 runtime.GC()", d)
	}
	if d := field(after, "go_gc_pauses") - field(before, "go_gc_pauses"); d < 10 {
		t.Fatalf("go_gc_pauses grew by %v after 5 collections (two stop-the-world pauses each)", d)
	}
	p50, p99, p999, pmax := field(after, "go_gc_pause_p50_us"), field(after, "go_gc_pause_p99_us"),
		field(after, "go_gc_pause_p999_us"), field(after, "go_gc_pause_max_us")
	if !(p50 > 0 && p50 <= p99 && p99 <= p999 && p999 <= pmax) {
		t.Fatalf("pause percentiles p50 %v p99 %v p99.9 %v max %v", p50, p99, p999, pmax)
	}
	if got := w.do("CONFIG", "RESETSTAT"); got != "+OK\r\n" {
		t.Fatalf("CONFIG RESETSTAT: %q", got)
	}
	reset := w.do("INFO", "stats")
	if c, p := field(reset, "go_gc_cycles"), field(reset, "go_gc_pauses"); c >= 5 || p >= 10 {
		t.Fatalf("after CONFIG RESETSTAT go_gc_cycles %v, go_gc_pauses %v (before %v, %v)", c, p,
			field(after, "go_gc_cycles"), field(after, "go_gc_pauses"))
	}
}

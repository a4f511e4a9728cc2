package server

import (
	"math"
	"runtime/metrics"
	"sync"
)

// Go GC figures for INFO stats: collections and stop-the-world pause
// percentiles since the start or the last CONFIG RESETSTAT, from
// runtime/metrics (cheap to read: no stop-the-world, unlike
// runtime.ReadMemStats).

const (
	gcCyclesMetric = "/gc/cycles/total:gc-cycles"
	gcPausesMetric = "/sched/pauses/total/gc:seconds" // the stop-the-world pauses of the collector
)

// gcBaseline is the cumulative GC counts at the last CONFIG RESETSTAT;
// INFO reports the difference.
type gcBaseline struct {
	mu     sync.Mutex
	cycles uint64
	counts []uint64 // per bucket of the pause histogram
}

// gcStats is what INFO stats prints about the Go collector.
type gcStats struct {
	cycles, pauses       uint64
	p50, p99, p999, pmax float64 // seconds: the upper bound of the bucket the percentile falls in
}

func readGC() (cycles uint64, h *metrics.Float64Histogram) {
	s := []metrics.Sample{{Name: gcCyclesMetric}, {Name: gcPausesMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		cycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindFloat64Histogram {
		h = s[1].Value.Float64Histogram()
	}
	return cycles, h
}

// reset makes the current counts the new zero (CONFIG RESETSTAT).
func (b *gcBaseline) reset() {
	cycles, h := readGC()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cycles = cycles
	b.counts = nil
	if h != nil {
		b.counts = append([]uint64(nil), h.Counts...)
	}
}

// read returns the GC figures since the baseline.
func (b *gcBaseline) read() gcStats {
	cycles, h := readGC()
	b.mu.Lock()
	defer b.mu.Unlock()
	st := gcStats{cycles: cycles - min(b.cycles, cycles)}
	if h == nil {
		return st
	}
	counts := make([]uint64, len(h.Counts))
	for i, c := range h.Counts {
		if i < len(b.counts) {
			c -= min(b.counts[i], c)
		}
		counts[i] = c
		st.pauses += c
	}
	st.p50 = histPercentile(counts, h.Buckets, st.pauses, 0.50)
	st.p99 = histPercentile(counts, h.Buckets, st.pauses, 0.99)
	st.p999 = histPercentile(counts, h.Buckets, st.pauses, 0.999)
	st.pmax = histPercentile(counts, h.Buckets, st.pauses, 1)
	return st
}

// histPercentile returns the upper bound of the bucket holding the q-th
// quantile of total samples (counts[i] lies in [buckets[i], buckets[i+1]));
// a last bucket open to +Inf gives its lower bound. 0 when there are none.
func histPercentile(counts []uint64, buckets []float64, total uint64, q float64) float64 {
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	rank = max(rank, 1)
	var cum uint64
	for i, c := range counts {
		cum += c
		if cum >= rank {
			if hi := buckets[i+1]; !math.IsInf(hi, 1) {
				return hi
			}
			return buckets[i]
		}
	}
	return buckets[len(buckets)-1]
}

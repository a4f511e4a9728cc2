package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in nanoseconds, 1 ns .. 60 s, three significant
// digits. A command sent in a pipeline (or a MULTI/EXEC batch) is charged the
// round trip of its whole batch, as resp-benchmark and redis-benchmark do.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60_000_000_000, 3) }

// opRecorder is one worker's statistics for one operation type.
type opRecorder struct {
	hist     *hdrhistogram.Histogram
	errs     int64
	firstErr string
}

// recorder is one worker's statistics, keyed by operation type (READ,
// UPDATE… for YCSB; the command name otherwise). Not shared between workers.
type recorder struct {
	ops   map[string]*opRecorder
	order []string
	live  *liveCounters
}

func newRecorder(live *liveCounters) *recorder {
	return &recorder{ops: map[string]*opRecorder{}, live: live}
}

func (r *recorder) op(name string) *opRecorder {
	o := r.ops[name]
	if o == nil {
		o = &opRecorder{hist: newHist()}
		r.ops[name] = o
		r.order = append(r.order, name)
	}
	return o
}

// record charges n operations of type name the latency d, of which errs
// failed with the first message msg.
func (r *recorder) record(name string, d time.Duration, n int64, errs int64, msg string) {
	o := r.op(name)
	v := int64(d)
	if v < 1 {
		v = 1
	}
	o.hist.RecordValues(v, n)
	if errs > 0 {
		if o.errs == 0 {
			o.firstErr = msg
		}
		o.errs += errs
	}
	if r.live != nil {
		r.live.ops.Add(n)
		if errs > 0 {
			r.live.errs.Add(errs)
		}
	}
}

// liveCounters feed the once-a-second progress line.
type liveCounters struct {
	ops, errs atomic.Int64
}

// progress prints a live line every second until stop is closed.
func progress(w io.Writer, label string, live *liveCounters, start time.Time, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-stop:
			if tty {
				fmt.Fprint(w, "\r\033[K")
			}
			return
		case now := <-t.C:
			ops := live.ops.Load()
			line := fmt.Sprintf("%s [%5.1fs] %10.0f ops/s  total %d  errors %d", label,
				now.Sub(start).Seconds(), float64(ops-last), ops, live.errs.Load())
			last = ops
			if tty {
				fmt.Fprint(w, "\r\033[K"+line)
			} else {
				fmt.Fprintln(w, line)
			}
		}
	}
}

// latencySummary is in microseconds.
type latencySummary struct {
	Avg  float64 `json:"avg_us"`
	Min  float64 `json:"min_us"`
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P95  float64 `json:"p95_us"`
	P99  float64 `json:"p99_us"`
	P999 float64 `json:"p99_9_us"`
	Max  float64 `json:"max_us"`
}

func summarize(h *hdrhistogram.Histogram) latencySummary {
	us := func(v int64) float64 { return float64(v) / 1000 }
	if h.TotalCount() == 0 {
		return latencySummary{}
	}
	return latencySummary{
		Avg: h.Mean() / 1000, Min: us(h.Min()),
		P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)),
		P95: us(h.ValueAtQuantile(95)), P99: us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)), Max: us(h.Max()),
	}
}

type opResult struct {
	Name       string         `json:"name"`
	Ops        int64          `json:"operations"`
	Errors     int64          `json:"errors"`
	FirstError string         `json:"first_error,omitempty"`
	QPS        float64        `json:"throughput_ops_sec"`
	Latency    latencySummary `json:"latency"`
	hist       *hdrhistogram.Histogram
}

// result is one run's outcome; --json prints it as is.
type result struct {
	Tool        string            `json:"tool"`
	Phase       string            `json:"phase,omitempty"`
	Server      string            `json:"server"`
	Command     string            `json:"command,omitempty"`
	Run         int               `json:"run,omitempty"`
	Workers     int               `json:"workers"`
	Pipeline    int               `json:"pipeline,omitempty"`
	Batching    int               `json:"batching,omitempty"`
	Seconds     float64           `json:"seconds"`
	Ops         int64             `json:"operations"`
	Errors      int64             `json:"errors"`
	FirstError  string            `json:"first_error,omitempty"`
	Unsupported bool              `json:"not_supported"`
	QPS         float64           `json:"qps"`
	Latency     latencySummary    `json:"latency"`
	PerOp       []*opResult       `json:"per_op"`
	Durability  *durabilityReport `json:"durability,omitempty"`
	all         *hdrhistogram.Histogram
}

// merge folds the workers' recorders into a result.
func merge(recs []*recorder, elapsed time.Duration) *result {
	res := &result{Seconds: elapsed.Seconds(), all: newHist()}
	by := map[string]*opResult{}
	var names []string
	for _, rc := range recs {
		for _, name := range rc.order {
			o := rc.ops[name]
			or := by[name]
			if or == nil {
				or = &opResult{Name: name, hist: newHist()}
				by[name] = or
				names = append(names, name)
			}
			or.hist.Merge(o.hist)
			if o.errs > 0 && or.Errors == 0 {
				or.FirstError = o.firstErr
			}
			or.Errors += o.errs
			res.all.Merge(o.hist)
		}
	}
	for _, n := range names {
		or := by[n]
		or.Ops = or.hist.TotalCount()
		if elapsed > 0 {
			or.QPS = float64(or.Ops) / elapsed.Seconds()
		}
		or.Latency = summarize(or.hist)
		res.Ops += or.Ops
		res.Errors += or.Errors
		if res.FirstError == "" {
			res.FirstError = or.FirstError
		}
		res.PerOp = append(res.PerOp, or)
	}
	if elapsed > 0 {
		res.QPS = float64(res.Ops) / elapsed.Seconds()
	}
	res.Latency = summarize(res.all)
	return res
}

func ms(us float64) string { return fmt.Sprintf("%.3f ms", us/1000) }

// printSummary prints the Go-tool / resp-benchmark style report.
func printSummary(w io.Writer, res *result) {
	if res.Unsupported {
		fmt.Fprintf(w, "not supported: %s\n", res.FirstError)
		return
	}
	fmt.Fprintf(w, "requests: %d in %.2f s, errors: %d\n", res.Ops, res.Seconds, res.Errors)
	if res.Errors > 0 {
		fmt.Fprintf(w, "first error: %s\n", res.FirstError)
	}
	fmt.Fprintf(w, "QPS: %.0f\n", res.QPS)
	l := res.Latency
	fmt.Fprintf(w, "avg latency: %s\n", ms(l.Avg))
	fmt.Fprintf(w, "latency: min %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		ms(l.Min), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max))
	if len(res.PerOp) > 1 {
		for _, o := range res.PerOp {
			fmt.Fprintf(w, "  %-12s %10d ops %10.0f ops/s  avg %s  p99 %s  errors %d\n",
				o.Name, o.Ops, o.QPS, ms(o.Latency.Avg), ms(o.Latency.P99), o.Errors)
		}
	}
	if res.all != nil && res.all.TotalCount() > 0 {
		printHistogram(w, res.all)
	}
	if res.Durability != nil {
		printDurability(w, res.Durability)
	}
}

// printHistogram draws the latency distribution as log-spaced buckets from
// the minimum to the maximum, each with its share, the cumulative share and
// a bar.
func printHistogram(w io.Writer, h *hdrhistogram.Histogram) {
	const rows, width = 14, 40
	lo, hi := float64(h.Min()), float64(h.Max())
	if lo < 1 {
		lo = 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	edges := make([]float64, rows)
	for i := range edges {
		edges[i] = lo * math.Pow(hi/lo, float64(i+1)/rows)
	}
	counts := make([]int64, rows)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := float64(b.From+b.To) / 2
		i := sort.SearchFloat64s(edges, v)
		if i >= rows {
			i = rows - 1
		}
		counts[i] += b.Count
	}
	total := h.TotalCount()
	var maxc int64
	for _, c := range counts {
		maxc = max(maxc, c)
	}
	fmt.Fprintln(w, "latency histogram (ms):")
	var cum int64
	for i, c := range counts {
		cum += c
		bar := 0
		if maxc > 0 {
			bar = int(float64(c) / float64(maxc) * width)
		}
		fmt.Fprintf(w, "  <= %9.3f  %6.2f%%  %7.2f%%  %s\n", edges[i]/1e6,
			100*float64(c)/float64(total), 100*float64(cum)/float64(total), strings.Repeat("#", bar))
	}
}

// printYCSB prints a result the way YCSB's text exporter does.
func printYCSB(w io.Writer, res *result) {
	fmt.Fprintf(w, "[OVERALL], RunTime(ms), %.0f\n", res.Seconds*1000)
	fmt.Fprintf(w, "[OVERALL], Throughput(ops/sec), %.2f\n", res.QPS)
	for _, o := range res.PerOp {
		t := "[" + o.Name + "]"
		fmt.Fprintf(w, "%s, Operations, %d\n", t, o.Ops)
		fmt.Fprintf(w, "%s, Throughput(ops/sec), %.2f\n", t, o.QPS)
		fmt.Fprintf(w, "%s, AverageLatency(us), %.2f\n", t, o.Latency.Avg)
		fmt.Fprintf(w, "%s, MinLatency(us), %.0f\n", t, o.Latency.Min)
		fmt.Fprintf(w, "%s, MaxLatency(us), %.0f\n", t, o.Latency.Max)
		fmt.Fprintf(w, "%s, 50thPercentileLatency(us), %.0f\n", t, o.Latency.P50)
		fmt.Fprintf(w, "%s, 95thPercentileLatency(us), %.0f\n", t, o.Latency.P95)
		fmt.Fprintf(w, "%s, 99thPercentileLatency(us), %.0f\n", t, o.Latency.P99)
		fmt.Fprintf(w, "%s, 99.9PercentileLatency(us), %.0f\n", t, o.Latency.P999)
		fmt.Fprintf(w, "%s, Return=OK, %d\n", t, o.Ops-o.Errors)
		if o.Errors > 0 {
			fmt.Fprintf(w, "%s, Return=ERROR, %d\n", t, o.Errors)
			fmt.Fprintf(w, "%s, FirstError, %s\n", t, o.FirstError)
		}
	}
	if res.Durability != nil {
		printDurability(w, res.Durability)
	}
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

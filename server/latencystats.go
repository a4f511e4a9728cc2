package server

import (
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Per-command latency tracking (INFO latencystats, LATENCY HISTOGRAM;
// semantics: redis.io INFO "latencystats", LATENCY HISTOGRAM), as Redis 7.0
// keeps it: with latency-tracking yes (the default) every command's call
// time goes into a histogram of its own, an HDR histogram of 1 ns to 1 s
// at 2 significant digits (Redis's hdr_init(1, 1e9, 2); values outside are
// clamped), made on the command's first call and dropped by CONFIG
// RESETSTAT. A blocked command's time is counted once it ends, from its
// first run to its reply.
//
// INFO latencystats prints, per command with a histogram, the
// latency-tracking-info-percentiles (default 50 99 99.9) in microseconds
// with three decimals, each the highest value equivalent to the recorded
// value at that percentile (the lowest one for p0), as hdr_value_at_percentile.
// LATENCY HISTOGRAM gives each histogram's call count and its cumulative
// distribution over power-of-two buckets from 1024 ns (Redis's log
// iterator: 1024 ns, doubling), each named by the highest value
// equivalent to its bound in whole microseconds (1, 2, 4, 8, 16, 33,
// 66...), listing only the buckets where the cumulative count grows.
//
// Cost: one uncontended mutex and one histogram increment per command
// (measured in BenchmarkSetGet, see the commit that added it).

// Histogram geometry, as Redis's LATENCY_HISTOGRAM_* constants.
const (
	latencyHistMin    = 1             // ns
	latencyHistMax    = 1_000_000_000 // ns
	latencyHistDigits = 2
	// hdr's geometry for these: 256 sub-buckets, half-count magnitude 7.
	latencyHistSubBucketMagnitude = 8
)

// latencyHist is one command's latency histogram.
type latencyHist struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

// recordLatency adds one call of d to the command's histogram, making it
// on first use.
func (st *cmdStats) recordLatency(d time.Duration) {
	lh := st.hist.Load()
	if lh == nil {
		nh := &latencyHist{h: hdrhistogram.New(latencyHistMin, latencyHistMax, latencyHistDigits)}
		if st.hist.CompareAndSwap(nil, nh) {
			lh = nh
		} else {
			lh = st.hist.Load()
		}
	}
	v := min(max(int64(d), latencyHistMin), latencyHistMax)
	lh.mu.Lock()
	lh.h.RecordValue(v)
	lh.mu.Unlock()
}

// latencyPercentiles returns the histogram's values at ps (ns), and its
// count; ok is false when the command has no histogram.
func (st *cmdStats) latencyPercentiles(ps []float64) (vals []int64, ok bool) {
	lh := st.hist.Load()
	if lh == nil {
		return nil, false
	}
	lh.mu.Lock()
	defer lh.mu.Unlock()
	vals = make([]int64, len(ps))
	for i, p := range ps {
		vals[i] = lh.h.ValueAtPercentile(p)
	}
	return vals, true
}

// latencyCDFPoint is one bucket of LATENCY HISTOGRAM: its bound in µs
// and the calls at or below it.
type latencyCDFPoint struct {
	usec, count int64
}

// latencyCDF returns the call count and cumulative distribution of the
// command's histogram; ok is false when it has none.
func (st *cmdStats) latencyCDF() (calls int64, cdf []latencyCDFPoint, ok bool) {
	lh := st.hist.Load()
	if lh == nil {
		return 0, nil, false
	}
	lh.mu.Lock()
	total := lh.h.TotalCount()
	bars := lh.h.Distribution()
	lh.mu.Unlock()
	return total, cumulativeLog2(bars, total), true
}

// cumulativeLog2 walks bars (one per histogram index, ascending) as hdr's
// log iterator does from 1024 ns with base 2.
func cumulativeLog2(bars []hdrhistogram.Bar, total int64) []latencyCDFPoint {
	var out []latencyCDFPoint
	var cum, prev int64
	i := 0
	for level := int64(1024); cum < total && level <= 2*latencyHistMax; level *= 2 {
		hi := hdrHighestEquivalent(level)
		for i < len(bars) && bars[i].To <= hi {
			cum += bars[i].Count
			i++
		}
		if cum > prev {
			out = append(out, latencyCDFPoint{usec: hi / 1000, count: cum})
			prev = cum
		}
	}
	return out
}

// hdrHighestEquivalent is the highest value the histogram (1 ns unit, 2
// digits) does not tell from v.
func hdrHighestEquivalent(v int64) int64 {
	const mask = 1<<latencyHistSubBucketMagnitude - 1
	bucket := int64(64-bits.LeadingZeros64(uint64(v|mask))) - latencyHistSubBucketMagnitude
	sub := v >> bucket
	size := int64(1) << bucket
	if sub >= 1<<latencyHistSubBucketMagnitude {
		size <<= 1
	}
	return sub<<bucket + size - 1
}

// resetLatency drops the command's histogram (CONFIG RESETSTAT).
func (st *cmdStats) resetLatency() { st.hist.Store(nil) }

// parsePercentileList reads latency-tracking-info-percentiles' value.
func parsePercentileList(v string) []float64 {
	var ps []float64
	for _, f := range strings.Fields(v) {
		if p, err := strconv.ParseFloat(f, 64); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// percentileLabel is a percentile as INFO names it: %f with the trailing
// zeros (and point) trimmed: 50, 99.9, 0.
func percentileLabel(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// latencyStatLine is one INFO latencystats line's data.
type latencyStatLine struct {
	name string
	vals []int64 // ns, one per percentile
}

// latencyStats lists the commands with a histogram, sorted by name, with
// their values at ps.
func (s *Server) latencyStats(ps []float64) []latencyStatLine {
	var out []latencyStatLine
	add := func(cmd *Command) {
		if cmd.stats == nil {
			return
		}
		if vals, ok := cmd.stats.latencyPercentiles(ps); ok {
			out = append(out, latencyStatLine{name: cmd.Name, vals: vals})
		}
	}
	for _, cmd := range s.cmdList {
		add(cmd)
		for i := range cmd.Subcommands {
			add(&cmd.Subcommands[i])
		}
	}
	return out
}

// appendLatencyStats formats INFO latencystats' lines.
func appendLatencyStats(b []byte, ps []float64, lines []latencyStatLine) []byte {
	for _, l := range lines {
		b = append(b, "latency_percentiles_usec_"...)
		b = appendInfoSafe(b, l.name)
		b = append(b, ':')
		for i, p := range ps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, 'p')
			b = append(b, percentileLabel(p)...)
			b = append(b, '=')
			b = strconv.AppendFloat(b, float64(l.vals[i])/1000, 'f', 3, 64)
		}
		b = append(b, "\r\n"...)
	}
	return b
}

// latencyHistogram: LATENCY HISTOGRAM [command ...]: a map from command
// name to {calls, histogram_usec}; without names every command with a
// histogram; a container's name stands for its subcommands too; unknown
// names are skipped.
func latencyHistogram(c *Client, args [][]byte) {
	s := c.Srv
	var cmds []*Command
	if len(args) == 2 {
		for _, cmd := range s.cmdList {
			cmds = append(cmds, cmd)
			for i := range cmd.Subcommands {
				cmds = append(cmds, &cmd.Subcommands[i])
			}
		}
	} else {
		for _, a := range args[2:] {
			cmd := s.lookupFullName(string(a))
			if cmd == nil {
				continue
			}
			cmds = append(cmds, cmd)
			for i := range cmd.Subcommands {
				cmds = append(cmds, &cmd.Subcommands[i])
			}
		}
	}
	type entry struct {
		name  string
		calls int64
		cdf   []latencyCDFPoint
	}
	var out []entry
	for _, cmd := range cmds {
		if cmd.stats == nil {
			continue
		}
		if calls, cdf, ok := cmd.stats.latencyCDF(); ok {
			out = append(out, entry{cmd.Name, calls, cdf})
		}
	}
	c.WriteMap(len(out))
	for _, e := range out {
		c.WriteBulkString(e.name)
		c.WriteMap(2)
		c.WriteBulkString("calls")
		c.WriteInt(e.calls)
		c.WriteBulkString("histogram_usec")
		c.WriteMap(len(e.cdf))
		for _, p := range e.cdf {
			c.WriteInt(p.usec)
			c.WriteInt(p.count)
		}
	}
}

// lookupFullName finds a command by its full name ("get", "client|id"),
// case-insensitively; nil if there is none.
func (s *Server) lookupFullName(name string) *Command {
	name = strings.ToLower(name)
	parent, sub, isSub := strings.Cut(name, "|")
	cmd := s.table[parent]
	if cmd == nil || !isSub {
		return cmd
	}
	if cmd.subs == nil {
		return nil
	}
	return cmd.subs[sub]
}

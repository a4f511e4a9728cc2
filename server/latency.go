package server

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The latency monitor (LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR;
// semantics: redis.io/docs latency-monitor), as Redis 7.0 keeps it: with
// latency-monitor-threshold N > 0 (milliseconds; 0, the default, turns it
// off), every event that lasted N ms or more is a sample of its event's
// time series: the latest 160 samples, at most one per second (a second
// keeps its largest), and the largest ever. Events:
//
//   - "command": a command that is not flagged fast ran that long (time
//     spent waiting for the keyspace lock is not counted, as commandstats);
//   - "fast-command": a command flagged fast (GET, SET...) did;
//   - "expire-cycle": one active-expiry pass of the keyspace's background
//     loop (removing a large collection is the usual cause);
//   - "aof-fsync-always": one group commit's persist (msync, or flush and
//     fence in pmem mode) took that long: the WAL's sync is Persimmon's
//     "appendfsync always" write. The keyspace's background loop reports
//     the slowest since its previous pass, so several slow syncs within
//     100 ms are one sample (a second keeps its largest anyway).
//
// LATENCY LATEST lists [event, time of its latest sample (Unix seconds),
// latest latency, all-time max]; HISTORY event the [time, latency] pairs,
// oldest first; RESET [event...] drops series and returns how many; GRAPH
// draws an event's samples as an ASCII chart; DOCTOR reports every event's
// statistics with advice.

// latencySeriesLen is how many samples an event keeps (LATENCY_TS_LEN).
const latencySeriesLen = 160

type latencySample struct {
	time int64 // Unix seconds; 0: unused slot
	ms   int64
}

// latencySeries is one event's samples, a ring whose next slot is idx.
type latencySeries struct {
	idx     int
	max     int64
	samples [latencySeriesLen]latencySample
}

// latencyMonitor holds the event series. Samples are rare (only past the
// threshold): one mutex.
type latencyMonitor struct {
	mu     sync.Mutex
	events map[string]*latencySeries
}

// add records a sample of ms milliseconds for event at Unix second now.
func (m *latencyMonitor) add(event string, ms, now int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = make(map[string]*latencySeries)
	}
	ts := m.events[event]
	if ts == nil {
		ts = &latencySeries{}
		m.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	prev := &ts.samples[(ts.idx+latencySeriesLen-1)%latencySeriesLen]
	if prev.time == now {
		prev.ms = max(prev.ms, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{time: now, ms: ms}
	ts.idx = (ts.idx + 1) % latencySeriesLen
}

// reset drops the series of event ("" every series) and returns how many.
func (m *latencyMonitor) reset(event string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for name := range m.events {
		if event == "" || strings.EqualFold(name, event) {
			delete(m.events, name)
			n++
		}
	}
	return n
}

// history returns event's samples, oldest first.
func (m *latencyMonitor) history(event string) (samples []latencySample, max int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[event]
	if ts == nil {
		return nil, 0, false
	}
	for j := range latencySeriesLen {
		sm := ts.samples[(ts.idx+j)%latencySeriesLen]
		if sm.time != 0 {
			samples = append(samples, sm)
		}
	}
	return samples, ts.max, true
}

// latestEvent is one line of LATENCY LATEST.
type latestEvent struct {
	name          string
	time, ms, max int64
}

// latest returns every event's latest sample, by name.
func (m *latencyMonitor) latest() []latestEvent {
	m.mu.Lock()
	out := make([]latestEvent, 0, len(m.events))
	for name, ts := range m.events {
		last := ts.samples[(ts.idx+latencySeriesLen-1)%latencySeriesLen]
		out = append(out, latestEvent{name, last.time, last.ms, ts.max})
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b latestEvent) int { return strings.Compare(a.name, b.name) })
	return out
}

// latencyEvent records that event lasted d, if latency monitoring is on
// and d reaches the threshold. The keyspace's background loop reports
// "expire-cycle" and "aof-fsync-always" through it (SetLatencyObserver).
func (s *Server) latencyEvent(event string, d time.Duration) {
	th := s.live.latencyThreshold.Load()
	if th <= 0 {
		return
	}
	if ms := d.Milliseconds(); ms >= th {
		s.latency.add(event, ms, time.Now().Unix())
	}
}

func latencyCommands() []Command {
	const flags = FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	special := []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}
	return []Command{
		{Name: "latency", Arity: -2, Group: "server", Since: "2.8.13",
			Summary: "A container for latency diagnostics commands.", Subcommands: []Command{
				{Name: "latency|latest", Arity: 2, Flags: flags, Group: "server", Since: "2.8.13",
					Summary: "Returns the latest latency samples for all events.", Run: latencyLatest, NoLock: true, Tips: special},
				{Name: "latency|history", Arity: 3, Flags: flags, Group: "server", Since: "2.8.13",
					Summary: "Returns timestamp-latency samples for an event.", Run: latencyHistory, NoLock: true, Tips: special},
				{Name: "latency|reset", Arity: -2, Flags: flags, Group: "server", Since: "2.8.13",
					Summary: "Resets the latency data for one or more events.", Run: latencyReset, NoLock: true,
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}},
				{Name: "latency|doctor", Arity: 2, Flags: flags, Group: "server", Since: "2.8.13",
					Summary: "Returns a human-readable latency analysis report.", Run: latencyDoctor, NoLock: true, Tips: special},
				{Name: "latency|graph", Arity: 3, Flags: flags, Group: "server", Since: "2.8.13",
					Summary: "Returns a latency graph for an event.", Run: latencyGraph, NoLock: true, Tips: special},
				{Name: "latency|histogram", Arity: -2, Flags: flags, Group: "server", Since: "7.0.0",
					Summary: "Returns the cumulative distribution of latencies of a subset or all commands.", Run: latencyHistogram, NoLock: true, Tips: special},
				{Name: "latency|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "server", Since: "2.8.13",
					Summary: "Returns helpful text about the different subcommands.", Run: latencyHelp, NoLock: true},
			}},
	}
}

func latencyLatest(c *Client, _ [][]byte) {
	ev := c.Srv.latency.latest()
	c.WriteArray(len(ev))
	for _, e := range ev {
		c.WriteArray(4)
		c.WriteBulkString(e.name)
		c.WriteInt(e.time)
		c.WriteInt(e.ms)
		c.WriteInt(e.max)
	}
}

func latencyHistory(c *Client, args [][]byte) {
	samples, _, _ := c.Srv.latency.history(string(args[2]))
	c.WriteArray(len(samples))
	for _, sm := range samples {
		c.WriteArray(2)
		c.WriteInt(sm.time)
		c.WriteInt(sm.ms)
	}
}

// latencyReset: the number of event series dropped.
func latencyReset(c *Client, args [][]byte) {
	if len(args) == 2 {
		c.WriteInt(int64(c.Srv.latency.reset("")))
		return
	}
	n := 0
	for _, a := range args[2:] {
		if len(a) > 0 {
			n += c.Srv.latency.reset(string(a))
		}
	}
	c.WriteInt(int64(n))
}

func latencyGraph(c *Client, args [][]byte) {
	event := string(args[2])
	samples, allMax, ok := c.Srv.latency.history(event)
	if !ok {
		c.WriteError("ERR No samples available for event '" + event + "'")
		return
	}
	c.WriteVerbatimString("txt", latencyGraphText(event, samples, allMax, time.Now().Unix()))
}

// latencyGraphRows is the chart's height in rows.
const latencyGraphRows = 4

// latencyGraphText draws samples (oldest first) as columns of '#' scaled
// between their min and max, over a label per column saying how long ago
// it was (s, m, h, d), written downwards.
func latencyGraphText(event string, samples []latencySample, allMax, now int64) string {
	lo, hi := samples[0].ms, samples[0].ms
	for _, sm := range samples {
		lo, hi = min(lo, sm.ms), max(hi, sm.ms)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, allMax)
	b.WriteString(strings.Repeat("-", 80))
	b.WriteByte('\n')
	heights := make([]int, len(samples))
	labels := make([]string, len(samples))
	longest := 0
	for i, sm := range samples {
		h := latencyGraphRows
		if hi > lo {
			h = 1 + int((sm.ms-lo)*(latencyGraphRows-1)/(hi-lo))
		}
		heights[i] = h
		labels[i] = agoLabel(now - sm.time)
		longest = max(longest, len(labels[i]))
	}
	for row := latencyGraphRows; row >= 1; row-- {
		line := make([]byte, len(samples))
		for i, h := range heights {
			switch {
			case h > row:
				line[i] = '|'
			case h == row:
				line[i] = '#'
			default:
				line[i] = ' '
			}
		}
		b.WriteString(strings.TrimRight(string(line), " "))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	for r := range longest {
		line := make([]byte, len(samples))
		for i, l := range labels {
			line[i] = ' '
			if r < len(l) {
				line[i] = l[r]
			}
		}
		b.WriteString(strings.TrimRight(string(line), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// agoLabel says how long ago, in the largest whole unit: 12s, 3m, 2h, 1d.
func agoLabel(sec int64) string {
	switch {
	case sec < 60:
		return strconv.FormatInt(sec, 10) + "s"
	case sec < 3600:
		return strconv.FormatInt(sec/60, 10) + "m"
	case sec < 86400:
		return strconv.FormatInt(sec/3600, 10) + "h"
	}
	return strconv.FormatInt(sec/86400, 10) + "d"
}

const latencyDoctorDisabled = `I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "CONFIG SET latency-monitor-threshold <milliseconds>." in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.` + "\n"

func latencyDoctor(c *Client, _ [][]byte) {
	c.WriteVerbatimString("txt", c.Srv.latencyReport(time.Now().Unix()))
}

// latencyReport is LATENCY DOCTOR's text: Redis's opening lines, one line
// of statistics per event (samples, average, mean deviation, period, worst
// ever), then advice for the events seen.
func (s *Server) latencyReport(now int64) string {
	latest := s.latency.latest()
	th := s.live.latencyThreshold.Load()
	if len(latest) == 0 && th == 0 {
		return latencyDoctorDisabled
	}
	var b strings.Builder
	advice := map[string]bool{}
	for i, e := range latest {
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		samples, allMax, _ := s.latency.history(e.name)
		var sum, oldest int64
		for _, sm := range samples {
			sum += sm.ms
			if oldest == 0 || sm.time < oldest {
				oldest = sm.time
			}
		}
		n := int64(len(samples))
		avg, mad, period := int64(0), int64(0), int64(0)
		if n > 0 {
			avg = sum / n
			for _, sm := range samples {
				d := avg - sm.ms
				mad += max(d, -d)
			}
			mad /= n
			period = max(now-oldest, 1)
		}
		perSample := 0.0
		if n > 0 {
			perSample = float64(period) / float64(n)
		}
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.\n",
			i+1, e.name, n, avg, mad, perSample, allMax)
		advice[e.name] = true
	}
	if len(latest) == 0 {
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
		return b.String()
	}
	b.WriteString("\nI have a few advices for you:\n\n")
	if advice["command"] {
		slower := s.live.slowlogSlowerThan.Load()
		switch {
		case slower < 0:
			fmt.Fprintf(&b, "- Slow commands caused the spikes and the slow log is off: 'CONFIG SET slowlog-log-slower-than %d' makes it record them.\n", th*1000)
		case slower/1000 > th:
			fmt.Fprintf(&b, "- The slow log only records commands slower than %d ms, more than the latency threshold: 'CONFIG SET slowlog-log-slower-than %d' records every command the monitor saw.\n", slower/1000, th*1000)
		}
		b.WriteString("- SLOWLOG GET names the slow commands. Commands over large collections (SMEMBERS, KEYS, SORT, ZUNIONSTORE, deleting a big key) take time in proportion to their size: split such keys or use the SCAN family.\n")
	}
	if advice["fast-command"] {
		b.WriteString("- Commands that should take microseconds were slow: the process did not get the CPU. Lower the load on this machine (other processes, other servers), and check the host's intrinsic latency with 'redis-cli --intrinsic-latency 100'.\n")
	}
	if advice["expire-cycle"] {
		b.WriteString("- Expiring keys took long: a large collection was removed at once. Split large keys that expire into smaller ones.\n")
	}
	if advice["aof-fsync-always"] {
		fmt.Fprintf(&b, "- Syncing the write-ahead log was slow (durability mode %s): every acknowledged write waits for it. Put the data directory on a local SSD or a DAX filesystem, and keep other disk-heavy processes off it.\n", s.cfg.Durability)
	}
	if thp := anonHugePages(); thp > 0 {
		b.WriteString("- The process uses transparent huge pages, which cause latency spikes when memory is touched for the first time: 'echo never > /sys/kernel/mm/transparent_hugepage/enabled' turns them off (the server must restart to drop those it has).\n")
	}
	return b.String()
}

// anonHugePages is the AnonHugePages bytes of the process (0 if unknown).
func anonHugePages() int64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "AnonHugePages:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

func latencyHelp(c *Client, _ [][]byte) {
	writeHelp(c, "LATENCY", []string{
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	})
}

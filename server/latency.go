package server

// LATENCY (semantics: redis.io LATENCY), as Redis answers with latency
// monitoring off (latency-monitor-threshold 0, its default): Persimmon
// records no latency events. LATEST and HISTORY are empty, RESET resets
// nothing (0), GRAPH has no samples, DOCTOR says monitoring is disabled.
// HISTOGRAM is per-command latency tracking (latencystats.go). Monitoring
// tools (redis_exporter and the like) call these and take the empty
// answers as "no spikes".

const latencyDoctorDisabled = `I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "CONFIG SET latency-monitor-threshold <milliseconds>." in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.` + "\n"

func latencyCommands() []Command {
	const flags = FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	special := []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}
	return []Command{
		{Name: "latency", Arity: -2, Group: "server", Since: "2.8.13",
			Summary: "A container for latency diagnostics commands.", Subcommands: []Command{
				{Name: "latency|latest", Arity: 2, Flags: flags, Group: "server", Since: "2.8.13",
					Summary: "Returns the latest latency samples for all events.", Run: latencyEmptyArray, NoLock: true, Tips: special},
				{Name: "latency|history", Arity: 3, Flags: flags, Group: "server", Since: "2.8.13",
					Summary: "Returns timestamp-latency samples for an event.", Run: latencyEmptyArray, NoLock: true, Tips: special},
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

// latencyEmptyArray: LATEST and HISTORY event: no samples.
func latencyEmptyArray(c *Client, _ [][]byte) { c.WriteArray(0) }

// latencyReset: the number of event time series reset (none exist).
func latencyReset(c *Client, _ [][]byte) { c.WriteInt(0) }

func latencyDoctor(c *Client, _ [][]byte) { c.WriteVerbatimString("txt", latencyDoctorDisabled) }

func latencyGraph(c *Client, args [][]byte) {
	c.WriteError("ERR No samples available for event '" + string(args[2]) + "'")
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

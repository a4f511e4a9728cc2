package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

const usageText = `persimmon-bench: one benchmark tool for Redis-protocol servers.

Usage:
  persimmon-bench [tair] [flags]          the vendors' Go test tool (also the default
                                          when no subcommand is given)
  persimmon-bench resp [flags] COMMAND    resp-benchmark-style templates
  persimmon-bench ycsb [flags]            YCSB core workloads (load, a, b, c, f)
  persimmon-bench cgroup [flags]          stream consumers: XREADGROUP, then XACK of its IDs
  persimmon-bench help [tair|resp|ycsb]

tair flags (Go-tool interface, flag for flag):
  -h host (127.0.0.1)  -port port (6379)  -a password (user:password is sent as ONE
  AUTH argument)  -c runs (1)  -d seconds per run (30)  -p workers (4)  -r / -r2 random
  ranges (100000000)  -command (TR.GETBIT foo-__RAND__; __RAND__ / __RAND2__ at the end
  of the command name or of any argument become a random number below -r / -r2;
  __PREV+N__ is the previous placeholder's number plus N, __PREV+RAND2__ that number
  plus 1 + a random number below -r2: ranges as start and width, ascending offsets)
  -batching N (N commands wrapped in MULTI … EXEC per round trip)
  e.g. persimmon-bench -d 10 -r 100000 -r2 10000000 -command "SETBIT foo-__RAND__ __RAND2__ 1" -p 20 -c 1

resp flags:
  -h host  -p port  -a password  -c / -C connections (32)  -n commands  -s seconds
  -P pipeline depth (1)  --load (a load phase: run -n commands, then stop)
  COMMAND placeholders: {key uniform N} {key sequence N} {key zipfian N}
  (keys are key_ and ten digits; {key zipfian N %014d}: the number alone, 14 digits),
  {value N} (N random bytes), {rand N} (0..N-1)
  e.g. persimmon-bench resp --load -n 100000 -P 16 "SET {key sequence 100000} {value 64}"
       persimmon-bench resp -s 20 -c 50 "ZADD {key uniform 1000} {rand 70000} {key uniform 10000}"

ycsb flags:
  -h host  -p port  -a password  -workload load|a|b|c|f  -group string|hash|list|set|zset
  -recordcount  -operationcount  -fieldcount (1 for string, 10 otherwise)  -fieldlength
  -threads  -requestdistribution uniform|zipfian|latest  -readallfields  -maxexecutiontime s
  -keyprefix (user for string; huser, luser, suser, zuser for the other groups)

cgroup flags:
  -h host  -p port  -a password  -c / -C consumers (32)  -n commands  -s seconds
  -count N (XREADGROUP COUNT, 10)  -key stream (stream)  -group name (group)
  (load the stream and create the group first; XREADGROUP and XACK each count)
  e.g. persimmon-bench resp --load -n 400000 -P 32 "XADD stream * field {value 64}"
       redis-cli XGROUP CREATE stream group 0; persimmon-bench cgroup -n 80000 -c 50

common flags: --json (machine-readable result on stdout)  --durability-report (INFO
  persistence before/after: flushes per write, mean group-commit size)  -q (no live line)
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "tair":
			return runTair(args[1:], stdout, stderr)
		case "resp":
			return runResp(args[1:], stdout, stderr)
		case "ycsb":
			return runYCSB(args[1:], stdout, stderr)
		case "cgroup":
			return runCgroupCmd(args[1:], stdout, stderr)
		case "help", "-help", "--help":
			fmt.Fprint(stdout, usageText)
			return 0
		}
	}
	return runTair(args, stdout, stderr)
}

// common holds the flags every subcommand shares.
type common struct {
	json, durability, quiet bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "print the result as JSON on stdout")
	fs.BoolVar(&c.durability, "durability-report", false, "read INFO persistence before and after the run")
	fs.BoolVar(&c.quiet, "q", false, "no live progress line")
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usageText) }
	return fs
}

// parseInterleaved parses flags that may come before or after positional
// arguments, and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// withDurability wraps a run with INFO persistence snapshots.
func withDurability(on bool, addr, auth string, stderr io.Writer, runFn func() (*result, error), writes func(*result) int64) (*result, error) {
	var before map[string]string
	if on {
		var err error
		if before, err = infoPersistence(addr, auth); err != nil {
			fmt.Fprintf(stderr, "durability report: INFO persistence failed: %v\n", err)
			on = false
		}
	}
	res, err := runFn()
	if err != nil || !on {
		return res, err
	}
	after, err := infoPersistence(addr, auth)
	if err != nil {
		fmt.Fprintf(stderr, "durability report: INFO persistence failed: %v\n", err)
		return res, nil
	}
	res.Durability = durabilityDelta(before, after, writes(res))
	return res, nil
}

func okWrites(res *result) int64 { return res.Ops - res.Errors }

func runTair(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("tair", stderr)
	host := fs.String("h", "127.0.0.1", "host")
	port := fs.Int("port", 6379, "port")
	auth := fs.String("a", "", "password (user:password sent as one AUTH argument)")
	runs := fs.Int("c", 1, "number of test runs")
	secs := fs.Int("d", 30, "test duration in seconds")
	workers := fs.Int("p", 4, "concurrent workers")
	r1 := fs.Uint64("r", 100_000_000, "range of __RAND__")
	r2 := fs.Uint64("r2", 100_000_000, "range of __RAND2__")
	command := fs.String("command", "TR.GETBIT foo-__RAND__", "command")
	batching := fs.Int("batching", 0, "N commands wrapped in MULTI/EXEC per round trip")
	var cm common
	cm.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q (the command goes in -command)\n", fs.Arg(0))
		return 2
	}
	cmd, err := parseRandCommand(*command, *r1, *r2)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *runs < 1 || *secs < 1 {
		fmt.Fprintln(stderr, "-c and -d must be at least 1")
		return 2
	}
	addr := net.JoinHostPort(*host, strconv.Itoa(*port))
	o := runOpts{addr: addr, auth: *auth, workers: *workers, dur: time.Duration(*secs) * time.Second, pipeline: 1}
	if *batching > 0 {
		o.pipeline, o.multi = *batching, true
	}
	if !cm.quiet {
		o.progress = stderr
	}
	var results []*result
	var sumQPS, sumAvg float64
	for i := 1; i <= *runs; i++ {
		o.label = fmt.Sprintf("run %d/%d", i, *runs)
		res, err := withDurability(cm.durability, addr, *auth, stderr, func() (*result, error) {
			return runPipelined(o, func() builder { return cmd.clone() })
		}, okWrites)
		if err != nil {
			fmt.Fprintf(stderr, "run %d: %v\n", i, err)
			return 1
		}
		res.Tool, res.Command, res.Run, res.Batching = "tair", *command, i, *batching
		results = append(results, res)
		if !cm.json {
			fmt.Fprintf(stdout, "=== run %d/%d: %q, %d workers, %d s, batching %d, server %s\n",
				i, *runs, *command, o.workers, *secs, *batching, addr)
			printSummary(stdout, res)
		}
		sumQPS += res.QPS
		sumAvg += res.Latency.Avg
		if res.Unsupported {
			break
		}
	}
	if cm.json {
		if len(results) == 1 {
			printJSON(stdout, results[0])
		} else {
			printJSON(stdout, results)
		}
	} else if len(results) > 1 {
		n := float64(len(results))
		fmt.Fprintf(stdout, "=== %d runs: mean QPS %.0f, mean avg latency %s\n", len(results), sumQPS/n, ms(sumAvg/n))
	}
	return 0
}

func runResp(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("resp", stderr)
	host := fs.String("h", "127.0.0.1", "host")
	port := fs.Int("p", 6379, "port")
	auth := fs.String("a", "", "password (user:password sent as one AUTH argument)")
	conns := fs.Int("c", 32, "connections")
	fs.IntVar(conns, "C", 32, "connections")
	n := fs.Int64("n", 0, "number of commands (0: until -s)")
	secs := fs.Float64("s", 0, "seconds (0: until -n; 10 if neither)")
	pipe := fs.Int("P", 1, "pipeline depth")
	load := fs.Bool("load", false, "load phase: run -n commands and stop")
	var cm common
	cm.register(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "resp: want exactly one COMMAND argument (quote it)")
		return 2
	}
	t, err := parseTemplate(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *load && *n <= 0 {
		fmt.Fprintln(stderr, "resp: --load needs -n")
		return 2
	}
	if *n <= 0 && *secs <= 0 {
		*secs = 10
	}
	addr := net.JoinHostPort(*host, strconv.Itoa(*port))
	o := runOpts{addr: addr, auth: *auth, workers: *conns, total: *n,
		dur: time.Duration(*secs * float64(time.Second)), pipeline: *pipe, label: "resp"}
	if *load {
		o.label = "load"
	}
	if !cm.quiet {
		o.progress = stderr
	}
	res, err := withDurability(cm.durability, addr, *auth, stderr, func() (*result, error) {
		return runPipelined(o, func() builder { return t.instance() })
	}, okWrites)
	if err != nil {
		fmt.Fprintf(stderr, "resp: %v\n", err)
		return 1
	}
	res.Tool, res.Command = "resp", pos[0]
	if *load {
		res.Phase = "load"
	}
	if cm.json {
		printJSON(stdout, res)
		return 0
	}
	fmt.Fprintf(stdout, "=== %s%q: %d connections, pipeline %d, server %s\n", map[bool]string{true: "load ", false: ""}[*load],
		pos[0], o.workers, o.pipeline, addr)
	printSummary(stdout, res)
	return 0
}

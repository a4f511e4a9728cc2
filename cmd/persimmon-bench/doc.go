// Command persimmon-bench runs the three kinds of workload that the published
// benchmarks for Redis-compatible persistent-memory instances were measured
// with, against any Redis-protocol server (Persimmon or redis-server), and
// reports them with HDR-histogram latencies.
//
// # Three interfaces, one tool
//
// The three published tools use clashing flags (-c is "runs" in the vendors'
// Go tool and "connections" in resp-benchmark; -p is "workers" in one and
// "port" in the other), so each keeps its own flags behind a subcommand:
//
//	persimmon-bench [tair] [flags]        the vendors' Go test tool, flag for flag;
//	                                      also what runs when no subcommand is given
//	persimmon-bench resp [flags] COMMAND  resp-benchmark-style templates
//	persimmon-bench ycsb [flags]          YCSB core workloads
//	persimmon-bench cgroup [flags]        stream consumers: XREADGROUP, then XACK
//	persimmon-bench help
//
// Flags may be written -flag or --flag. Every subcommand accepts --json (the
// result as JSON on stdout), --durability-report and -q (no live line).
//
// # tair: the Go tool
//
//	-h 127.0.0.1 -port 6379 -a PASSWORD -c RUNS(1) -d SECONDS(30) -p WORKERS(4)
//	-r 100000000 -r2 100000000 -command "TR.GETBIT foo-__RAND__" -batching N
//
// A run lasts -d seconds; -c repeats it (so -c 1 -d 30 is one 30-second run)
// and prints the mean of the runs. __RAND__ and __RAND2__ are replaced only at
// the end of the command name or of an argument ("foo-__RAND__" becomes
// "foo-4711"; "a__RAND__b" is left alone) by a uniform random number below -r
// or -r2. Two range placeholders are Persimmon's own: an argument ending in
// __PREV+N__ is the number the previous placeholder of the command produced
// plus N, and __PREV+RAND2__ is that number plus 1 plus a random number below
// -r2; so "TR.SETRANGE k __RAND__ __PREV+999__" draws a start and a width of
// 1,000 and no range is ever inverted (with __RAND__ __RAND2__, drawn
// independently, a quarter or more are), and "__RAND__ __PREV+RAND2__ …"
// draws ascending offsets. -a user:password is sent as ONE AUTH argument, as the vendors' tool
// does. -batching N sends MULTI, N commands and EXEC per round trip; QPS
// counts commands, not transactions.
//
// # resp: templates
//
//	-h -p PORT -a -c/-C CONNECTIONS(32) -n COMMANDS -s SECONDS -P PIPELINE --load
//
// Placeholders inside any argument: {key uniform N}, {key sequence N},
// {key zipfian N} (keys are "key_" and ten digits, as resp-benchmark names
// them), {value N} (N random printable bytes), {rand N} (an integer in
// [0, N)). Each placeholder has its own generator: {key sequence N} counters
// are shared by all connections and advance independently, so
// "HSET {key sequence 1000} {key sequence 10007} {value 64}" with -n 10007000
// visits every (key, field) pair because the ranges are coprime. {key zipfian N}
// is YCSB's scrambled zipfian over N keys. A fourth field %0Wd (or %d) writes
// the key number alone, zero-padded to W digits, so "GET k:{key zipfian
// 1000000 %014d}" reads keys loaded as k:%014d. --load runs exactly -n commands
// with -P commands in flight per connection and labels the result a load
// phase; otherwise the run stops at -n commands or -s seconds, whichever
// comes first (10 s when neither is given).
//
// # ycsb: core workloads
//
//	-workload load|a|b|c|f -group string|hash|list|set|zset -recordcount -operationcount
//	-fieldcount -fieldlength -threads -requestdistribution uniform|zipfian|latest
//	-readallfields -maxexecutiontime SECONDS -keyprefix
//
// Workloads follow YCSB's core properties: load is 100% insert of
// recordcount records (threads share one insert sequence); A is 50% read /
// 50% update, B 95/5, C read only, F 50% read / 50% read-modify-write. Keys
// are YCSB's "user"+FNV-1a-64(keynum) (orderedinserts=false), with a prefix
// per group (user, huser, luser, suser, zuser) so that the groups can share a
// server. The zipfian chooser is YCSB's ScrambledZipfianGenerator (a zipfian
// over 10^10 items with constant 0.99 and YCSB's precomputed zeta, hashed onto
// the key range); latest is YCSB's SkewedLatestGenerator with the basis fixed
// at the last loaded record (these workloads insert nothing after the load).
// Threads are synchronous, one connection each, as YCSB's are.
//
// Command groups (fieldcount is forced to 1 for string):
//
//	group   insert                    read (readallfields / one field)   update (one field)
//	string  SET k v                   GET k                               SET k v
//	hash    HSET k f0 v0 … fN vN      HGETALL k / HMGET k fI              HSET k fI v
//	list    RPUSH k v0 … vN           LRANGE k 0 -1 / LINDEX k I          LSET k I v
//	set     SADD k m0 … mN            SMEMBERS k / SISMEMBER k mI         SADD k fresh-member
//	zset    ZADD k s0 m0 … sN mN      ZRANGE k 0 -1 WITHSCORES / ZSCORE   ZADD k s mI (new score)
//
// Set and zset members are "fieldI:" followed by fieldlength bytes chosen
// deterministically from (record, field), so single-field reads hit. A set
// has no fields to overwrite, so a set update adds one fresh member.
// Output is YCSB's text format per operation type ([OVERALL], [READ],
// [UPDATE], [INSERT], [READ-MODIFY-WRITE]: Operations, Throughput,
// AverageLatency(us), Min/Max, 50th/95th/99th/99.9th percentile,
// Return=OK / Return=ERROR). A read-modify-write counts once in [OVERALL]
// and its read and update also appear under [READ] and [UPDATE], as in YCSB.
//
// # cgroup: stream consumers
//
//	-h -p PORT -a -c/-C CONSUMERS(32) -n COMMANDS -s SECONDS -count N(10) -key stream -group group
//
// Each connection is a consumer of one consumer group that loops XREADGROUP
// GROUP group consumer-<n> COUNT N STREAMS key > and XACK key group with
// the IDs that reply delivered (which a resp template cannot express: an
// argument taken from the reply before). Both commands count as
// operations, each with its own latency line. The stream and the group
// must exist beforehand (resp --load -n … "XADD key * field {value 64}",
// then XGROUP CREATE key group 0), with at least N entries per XREADGROUP
// the run will send; a read that delivers nothing is counted as an error
// ("stream exhausted") and ends that consumer.
//
// # Measurement
//
// Latencies go into HDR histograms (1 ns to 60 s, three significant digits),
// one per worker and operation type, merged at the end; reported as average,
// p50, p90, p99, p99.9 and max, plus a terminal histogram of log-spaced
// buckets. A command in a pipeline or MULTI/EXEC batch is charged the round
// trip of its batch, as resp-benchmark and redis-benchmark do. A live line
// (ops/s, elapsed, errors) goes to stderr once a second. Error replies are
// counted per operation type and the first message is shown; an error inside
// an EXEC reply counts for its command, an aborted EXEC for every queued
// command. An "unknown command" reply stops the run at once and marks the
// result "not supported" (exit status 0), so that a table of commands can be
// run against servers that lack some of them. A connection failure ends the
// run with exit status 1.
//
// --durability-report reads INFO persistence before and after the run.
// Persimmon reports wal_flushes and wal_synced_records there; the report gives
// flushes per acknowledged write and the mean group-commit size (records per
// flush). redis-server reports neither, and the report says so in a note.
//
// The client is a small pipelining RESP client written for this tool (reply
// payloads are read and discarded, nothing is allocated per value); values
// are slices of a shared 1 MiB pool of random printable bytes.
//
// scripts/bench-seeds.sh (make bench-seeds) drives this tool to reproduce the
// published tables side by side with redis-server and writes BENCHMARKS.md;
// scripts/bench-roaring.sh (make bench-roaring) writes its TairRoaring
// section.
package main

#!/usr/bin/env bash
# The I/O model benchmark: requests/s and server CPU per request (µs, from
# /proc/PID/stat utime+stime over the run) for redis-server without
# persistence and Persimmon pmem served by one event loop (--io loop) and by
# a goroutine per connection (--io goroutine), interleaved in one run, with
# persimmon-bench resp -c 50 as the client on the same cores.
#
#   scripts/bench-io.sh                # 2 rounds, 4 s per workload
#   ROUNDS=3 SECONDS_PER=6 scripts/bench-io.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${SECONDS_PER:-4}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-16395}
BASE=$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench-io.XXXXXX")
PB=bin/persimmon-bench
[ -x "$PB" ] || go build -o "$PB" ./cmd/persimmon-bench
[ -x bin/persimmon-server ] || go build -o bin/persimmon-server ./cmd/persimmon-server
TCK=$(getconf CLK_TCK)

pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$BASE"; }
trap cleanup EXIT

start() {
  rm -rf "$BASE/d"; mkdir -p "$BASE/d"
  case $1 in
    redis)     redis-server --port "$PORT" --dir "$BASE/d" --save '' --appendonly no >/dev/null 2>&1 & ;;
    loop)      bin/persimmon-server --port "$PORT" --dir "$BASE/d" --durability pmem --io loop >/dev/null 2>&1 & ;;
    goroutine) bin/persimmon-server --port "$PORT" --dir "$BASE/d" --durability pmem --io goroutine >/dev/null 2>&1 & ;;
  esac
  pid=$!
  for _ in $(seq 1 200); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
  return 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
cputicks() { awk '{print $14+$15}' "/proc/$pid/stat"; }

# run TEMPLATE: prints "qps µs-per-request"
run() {
  local c0 c1 q
  c0=$(cputicks)
  q=$("$PB" resp -p "$PORT" -s "$SECS" -c 50 --json "$1" 2>/dev/null | awk -F': ' '/"qps"/ {gsub(",","",$2); printf "%.0f", $2; exit}')
  c1=$(cputicks)
  awk -v q="$q" -v c="$((c1 - c0))" -v t="$TCK" -v s="$SECS" 'BEGIN{ printf "%d %.2f", q, (q>0 ? c/t*1e6/(q*s) : 0) }'
}

workloads=("GET {key uniform 1000}" "SET {key uniform 1000} {value 64}" "SISMEMBER s{key uniform 1000} {key uniform 1000}" "HSET h{key uniform 1000} {key uniform 10000} {value 64}")
names=(GET SET SISMEMBER HSET)
declare -A cell
for round in $(seq 1 "$ROUNDS"); do
  for s in redis loop goroutine; do
    start "$s"
    "$PB" resp -p "$PORT" --load -n 1000000 -P 32 -c 8 "SADD s{key uniform 1000} {key uniform 1000}" >/dev/null 2>&1
    "$PB" resp -p "$PORT" --load -n 100000 -P 32 -c 8 "SET {key uniform 1000} {value 64}" >/dev/null 2>&1
    for i in "${!workloads[@]}"; do
      cell[$s/${names[$i]}]+="$(run "${workloads[$i]}"); "
    done
    stop
  done
done

echo "| command | redis-server (req/s; CPU µs/req) | Persimmon pmem, event loop | Persimmon pmem, goroutine per connection |"
echo "|---|---|---|---|"
for n in "${names[@]}"; do
  echo "| $n | ${cell[redis/$n]} | ${cell[loop/$n]} | ${cell[goroutine/$n]} |"
done
echo
echo "persimmon-bench resp -s $SECS -c 50, $ROUNDS interleaved rounds (one 'req/s µs' pair per round); $(nproc) cpus, $(uname -r)"

#!/usr/bin/env bash
# Issue 3's benchmark: the collection workloads of spec/benchmarks.md table 1,
# scaled to a 2-core machine, run with persimmon-bench's resp templates against
# redis-server (no persistence; appendonly yes + appendfsync always) and
# Persimmon (pmem durability: every write persisted before its reply), all on
# the same filesystem, in one run. Prints a markdown table of requests/s and
# ratios to redis-server without persistence.
#
#   scripts/bench-collections.sh                 # defaults
#   SECONDS_PER=10 CONNS=50 scripts/bench-collections.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${SECONDS_PER:-8}
ROUNDS=${ROUNDS:-2}       # interleaved rounds; the best figure of each cell is kept
CONNS=${CONNS:-50}
KEYS=${KEYS:-1000}        # published: 1,000 keys
ELEMS=${ELEMS:-1000}      # published: 10,000 (10,007) elements per key; scaled down
PORT=${PORT:-16390}
BASE=$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench-coll.XXXXXX")
PB=${PB:-bin/persimmon-bench}
[ -x "$PB" ] || go build -o bin/persimmon-bench ./cmd/persimmon-bench
[ -x bin/persimmon-server ] || go build -o bin/persimmon-server ./cmd/persimmon-server

pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$BASE"; }
trap cleanup EXIT

wait_port() { for _ in $(seq 1 200); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }

start() {
  rm -rf "$BASE/d"; mkdir -p "$BASE/d"
  case $1 in
    redis-nopersist)  redis-server --port "$PORT" --dir "$BASE/d" --save '' --appendonly no >/dev/null 2>&1 & ;;
    redis-aof-always) redis-server --port "$PORT" --dir "$BASE/d" --save '' --appendonly yes --appendfsync always >/dev/null 2>&1 & ;;
    persimmon-pmem)   bin/persimmon-server --port "$PORT" --dir "$BASE/d" --durability pmem >/dev/null 2>&1 & ;;
  esac
  pid=$!
  wait_port
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

best() { # cell value: keep the higher (an empty figure counts as 0)
  local v=${2:-0}
  if [ -z "${r[$1]:-}" ] || [ "$v" -gt "${r[$1]}" ]; then r[$1]=$v; fi
}
qps() { # template... → requests/s
  "$PB" resp -p "$PORT" -s "$SECS" -c "$CONNS" --json "$@" 2>/dev/null | awk -F': ' '/"qps"/ {gsub(",","",$2); printf "%.0f", $2; exit}'
}
load() { "$PB" resp -p "$PORT" --load -n "$1" -P 32 -c 8 "$2" >/dev/null 2>&1; }

N=$((KEYS * ELEMS))
declare -A r mem

info() { redis-cli -p "$PORT" memory purge >/dev/null; redis-cli -p "$PORT" info memory | tr -d '\r' | awk -F: -v f="$1" '$1==f {print $2}'; }
# elements: total elements over the KEYS keys, with the given length command
elements() {
  for i in $(seq 0 $((KEYS - 1))); do printf '%s key_%010d\n' "$1" "$i"; done |
    redis-cli -p "$PORT" | awk '{s+=$1} END {print s}'
}
# measure TYPE LENCMD: bytes of used_memory per element added by the last load
measure() {
  local before=$1 n; n=$(elements "$3")
  mem[$s/$2]=$(awk "BEGIN{ if ($n>0) printf \"%.0f\", ($(info used_memory) - $before)/$n; else print 0 }")
}
servers=(redis-nopersist persimmon-pmem redis-aof-always)
for round in $(seq 1 "$ROUNDS"); do
for s in "${servers[@]}"; do
  start "$s"
  best "$s/HSET" "$(qps "HSET {key uniform $KEYS} {key uniform 10000} {value 64}")"
  best "$s/LPUSH" "$(qps "LPUSH {key uniform $KEYS} {value 64}")"
  best "$s/SADD" "$(qps "SADD {key uniform $KEYS} {value 64}")"
  best "$s/ZADD" "$(qps "ZADD {key uniform $KEYS} {rand 70000} {key uniform 10000}")"
  redis-cli -p "$PORT" flushall >/dev/null
  m0=$(info used_memory)
  load "$N" "HSET {key uniform $KEYS} {key uniform $ELEMS} {value 64}"
  measure "$m0" hash HLEN
  best "$s/HGET" "$(qps "HGET {key uniform $KEYS} {key uniform $ELEMS}")"
  redis-cli -p "$PORT" flushall >/dev/null; m0=$(info used_memory)
  load "$N" "RPUSH {key uniform $KEYS} {value 64}"
  measure "$m0" list LLEN
  best "$s/LINDEX" "$(qps "LINDEX {key uniform $KEYS} {rand $ELEMS}")"
  redis-cli -p "$PORT" flushall >/dev/null; m0=$(info used_memory)
  load "$N" "SADD {key uniform $KEYS} {key uniform $ELEMS}"
  measure "$m0" set SCARD
  best "$s/SISMEMBER" "$(qps "SISMEMBER {key uniform $KEYS} {key uniform $ELEMS}")"
  redis-cli -p "$PORT" flushall >/dev/null; m0=$(info used_memory)
  load "$N" "ZADD {key uniform $KEYS} {rand 70000} {key uniform $ELEMS}"
  measure "$m0" zset ZCARD
  best "$s/ZSCORE" "$(qps "ZSCORE {key uniform $KEYS} {key uniform $ELEMS}")"
  stop
done
done

echo "| command | workload | redis-server, no persistence | Persimmon pmem | redis-server, appendfsync always | pmem / no persistence |"
echo "|---|---|---|---|---|---|"
row() {
  local a=${r[redis-nopersist/$1]:-0} b=${r[persimmon-pmem/$1]:-0} c=${r[redis-aof-always/$1]:-0}
  local ratio; ratio=$(awk "BEGIN{ if ($a>0) printf \"%.2fx\", $b/$a; else print \"-\" }")
  echo "| $1 | $2 | $a | $b | $c | $ratio |"
}
row HSET "$KEYS keys × 10,000 fields, 64 B"
row HGET "$KEYS keys × $ELEMS fields loaded"
row LPUSH "$KEYS keys, 64 B"
row LINDEX "$KEYS keys × ~$ELEMS elements, random index"
row SADD "$KEYS keys, 64 B members"
row SISMEMBER "$KEYS keys × $ELEMS members loaded"
row ZADD "$KEYS keys, scores 0-70,000, 10,000 members"
row ZSCORE "$KEYS keys × $ELEMS members loaded"
echo
echo "| memory per element (used_memory delta / elements) | redis-server | Persimmon (Go heap; element bytes stay in the arena) |"
echo "|---|---|---|"
for t in hash list set zset; do
  echo "| $t | ${mem[redis-nopersist/$t]:-?} B | ${mem[persimmon-pmem/$t]:-?} B |"
done
echo
echo "persimmon-bench resp -s $SECS -c $CONNS, best of $ROUNDS interleaved rounds; loads: --load -n $N -P 32 -c 8; $(nproc) cpus, $(stat -f -c %T "$BASE"), $(uname -r)"

#!/usr/bin/env bash
# Issue 3's benchmark: the collection workloads of spec/benchmarks.md table 1,
# scaled to a 2-core machine, run with persimmon-bench's resp templates against
# redis-server (no persistence; appendonly yes + appendfsync always) and
# Persimmon (pmem durability: every write persisted before its reply), all on
# the same filesystem, in one run. Prints a markdown table of requests/s and
# ratios to redis-server without persistence.
#
#   scripts/bench-collections.sh                 # defaults
#   SECONDS_PER=10 ROUNDS=5 scripts/bench-collections.sh
#   PIN=0 scripts/bench-collections.sh           # no CPU pinning
#
# Method. The three servers run side by side for the whole run, and each
# workload is measured ROUNDS times, the servers taking turns (redis,
# Persimmon, redis AOF, redis, ...): slow drift of a shared machine hits
# every server alike. Each cell is the median of its rounds. With PIN=1 (the
# default on 2 or more CPUs) the servers share the last CPU and the client
# gets the others, so requests/s is one server's CPU cost per request, as in
# the vendors' set-up with clients on other machines; Persimmon gets that one
# CPU too (--threads 2 on it: the event loop and the segment cleaner take
# turns, as redis-server's main thread and its bio threads do). Before each
# measurement the script waits until no server uses CPU, so nothing a server
# does in the background is charged to another one.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${SECONDS_PER:-6}
ROUNDS=${ROUNDS:-3}       # measurements per cell, servers interleaved; the median is kept
CONNS=${CONNS:-50}
KEYS=${KEYS:-1000}        # published: 1,000 keys
ELEMS=${ELEMS:-1000}      # published: 10,000 (10,007) elements per key; scaled down
PORT=${PORT:-16390}       # servers listen on PORT, PORT+1, PORT+2
NCPU=$(nproc)
PIN=${PIN:-$([ "$NCPU" -ge 2 ] && echo 1 || echo 0)}
BASE=$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench-coll.XXXXXX")
PB=${PB:-bin/persimmon-bench}
[ -x "$PB" ] || go build -o bin/persimmon-bench ./cmd/persimmon-bench
[ -x bin/persimmon-server ] || go build -o bin/persimmon-server ./cmd/persimmon-server

if [ "$PIN" = 1 ]; then
  SRV_CPU=$((NCPU - 1)); CLI_CPUS=0-$((NCPU - 2))
  srv=(taskset -c "$SRV_CPU"); cli=(taskset -c "$CLI_CPUS")
  PM_THREADS=2
else
  srv=(); cli=()
  PM_THREADS=auto
fi

servers=(redis-nopersist persimmon-pmem redis-aof-always)
declare -A port pid
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$BASE"; }
trap cleanup EXIT

wait_port() { for _ in $(seq 1 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "no server on port $1" >&2; return 1; }

i=0
for s in "${servers[@]}"; do
  p=$((PORT + i)); i=$((i + 1)); port[$s]=$p
  d="$BASE/$s"; mkdir -p "$d"
  if redis-cli -p "$p" ping >/dev/null 2>&1; then echo "port $p is taken (a server left running?)" >&2; exit 1; fi
  case $s in
    redis-nopersist)  "${srv[@]}" redis-server --port "$p" --dir "$d" --save '' --appendonly no >"$d.log" 2>&1 & ;;
    redis-aof-always) "${srv[@]}" redis-server --port "$p" --dir "$d" --save '' --appendonly yes --appendfsync always >"$d.log" 2>&1 & ;;
    persimmon-pmem)   "${srv[@]}" bin/persimmon-server --port "$p" --dir "$d" --durability pmem --threads "$PM_THREADS" >"$d.log" 2>&1 & ;;
  esac
  pid[$s]=$!; pids+=("$!")
  wait_port "$p"
  kill -0 "${pid[$s]}" 2>/dev/null || { echo "$s exited:" >&2; cat "$d.log" >&2; exit 1; }
done

ticks() { # server → CPU clock ticks used so far (user + system)
  awk '{print $14 + $15}' "/proc/${pid[$1]}/stat"
}
quiesce() { # wait (at most 60 s) until no server used a tick in 0.2 s
  local s busy
  for _ in $(seq 1 300); do
    declare -A before=()
    for s in "${servers[@]}"; do before[$s]=$(ticks "$s"); done
    sleep 0.2
    busy=0
    for s in "${servers[@]}"; do [ "$(ticks "$s")" -gt "$((before[$s] + 1))" ] && busy=1; done
    [ "$busy" = 0 ] && return 0
  done
  echo "servers still busy after 60 s" >&2
}
qps() { # server template → requests/s
  "${cli[@]}" "$PB" resp -p "${port[$1]}" -s "$SECS" -c "$CONNS" --json "$2" 2>/dev/null |
    awk -F': ' '/"qps"/ {gsub(",","",$2); printf "%.0f", $2; exit}'
}
declare -A r mem
measure_cell() { # command template: ROUNDS turns over the servers
  local round s
  for round in $(seq 1 "$ROUNDS"); do
    for s in "${servers[@]}"; do
      quiesce
      r[$s/$1]+="$(qps "$s" "$2") "
    done
  done
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else printf "%.0f", (v[NR/2]+v[NR/2+1])/2}'; }

rcli() { redis-cli -p "${port[$1]}" "${@:2}"; }
info() { rcli "$1" memory purge >/dev/null; rcli "$1" info memory | tr -d '\r' | awk -F: -v f="$2" '$1==f {print $2}'; }
elements() { # server lengthcmd → total elements over the KEYS keys
  for k in $(seq 0 $((KEYS - 1))); do printf '%s key_%010d\n' "$2" "$k"; done |
    rcli "$1" | awk '{s+=$1} END {print s}'
}
N=$((KEYS * ELEMS))
loadall() { # type lengthcmd template: flush, load N elements, record used_memory per element
  local s m0 n f
  for s in "${servers[@]}"; do
    # Persimmon's used_memory counts the arena's live bytes too (maxmemory's
    # measure); the Go heap alone is used_memory_heap.
    f=used_memory; [[ $s == persimmon* ]] && f=used_memory_heap
    rcli "$s" flushall >/dev/null
    m0=$(info "$s" "$f")
    "${cli[@]}" "$PB" resp -p "${port[$s]}" --load -n "$N" -P 32 -c 8 "$3" >/dev/null 2>&1
    n=$(elements "$s" "$2")
    mem[$s/$1]=$(awk "BEGIN{ if ($n>0) printf \"%.0f\", ($(info "$s" "$f") - $m0)/$n; else print 0 }")
  done
}

measure_cell HSET "HSET {key uniform $KEYS} {key uniform 10000} {value 64}"
measure_cell LPUSH "LPUSH {key uniform $KEYS} {value 64}"
measure_cell SADD "SADD {key uniform $KEYS} {value 64}"
measure_cell ZADD "ZADD {key uniform $KEYS} {rand 70000} {key uniform 10000}"
loadall hash HLEN "HSET {key uniform $KEYS} {key uniform $ELEMS} {value 64}"
measure_cell HGET "HGET {key uniform $KEYS} {key uniform $ELEMS}"
loadall list LLEN "RPUSH {key uniform $KEYS} {value 64}"
measure_cell LINDEX "LINDEX {key uniform $KEYS} {rand $ELEMS}"
loadall set SCARD "SADD {key uniform $KEYS} {key uniform $ELEMS}"
measure_cell SISMEMBER "SISMEMBER {key uniform $KEYS} {key uniform $ELEMS}"
loadall zset ZCARD "ZADD {key uniform $KEYS} {rand 70000} {key uniform $ELEMS}"
measure_cell ZSCORE "ZSCORE {key uniform $KEYS} {key uniform $ELEMS}"

echo "| command | workload | redis-server, no persistence | Persimmon pmem | redis-server, appendfsync always | pmem / no persistence |"
echo "|---|---|---|---|---|---|"
row() {
  local a b c ratio
  a=$(median <<<"${r[redis-nopersist/$1]:-}") b=$(median <<<"${r[persimmon-pmem/$1]:-}") c=$(median <<<"${r[redis-aof-always/$1]:-}")
  ratio=$(awk "BEGIN{ if ($a>0) printf \"%.2fx\", $b/$a; else print \"-\" }")
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
if [ "$PIN" = 1 ]; then pinning="servers on CPU $SRV_CPU, client on CPU $CLI_CPUS"; else pinning="no pinning"; fi
echo "persimmon-bench resp -s $SECS -c $CONNS, median of $ROUNDS interleaved rounds ($pinning); loads: --load -n $N -P 32 -c 8; $NCPU cpus, $(stat -f -c %T "$BASE"), $(uname -r)"
echo
echo "all rounds (requests/s):"
for k in $(printf '%s\n' "${!r[@]}" | sort); do echo "  $k: ${r[$k]}"; done

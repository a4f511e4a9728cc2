#!/usr/bin/env bash
# Side-by-side benchmark: redis-benchmark against Persimmon (pmem and msync
# durability) and Debian's redis-server (no persistence; appendonly yes +
# appendfsync always), all on the same filesystem, in one run.
#
#   scripts/bench.sh            # defaults below
#   N=200000 CLIENTS=50 scripts/bench.sh
#
# Prints a table of requests/s and ratios to redis-server without persistence.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-100000}
CLIENTS=${CLIENTS:-50}
SIZE=${SIZE:-64}
KEYS=${KEYS:-100000}
TESTS=${TESTS:-set,get,incr,mset}
ROUNDS=${ROUNDS:-2}
BASE=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench.XXXXXX")}
PORT=${PORT:-16379}

command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found (apt-get install redis-tools)"; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server not found (apt-get install redis-server)"; exit 1; }
[ -x bin/persimmon-server ] || go build -o bin/persimmon-server ./cmd/persimmon-server

pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$BASE"; }
trap cleanup EXIT

wait_port() {
  for _ in $(seq 1 200); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "server on port $1 did not start" >&2; return 1
}

start() { # name → starts a server on $PORT, sets pid
  local name=$1 dir="$BASE/$1"
  rm -rf "$dir"; mkdir -p "$dir"
  case $name in
    persimmon-pmem)  ./bin/persimmon-server --port "$PORT" --dir "$dir" --durability pmem  >"$BASE/$name.log" 2>&1 & ;;
    persimmon-msync) ./bin/persimmon-server --port "$PORT" --dir "$dir" --durability msync >"$BASE/$name.log" 2>&1 & ;;
    redis-nopersist) redis-server --port "$PORT" --dir "$dir" --save '' --appendonly no >"$BASE/$name.log" 2>&1 & ;;
    redis-aof-always) redis-server --port "$PORT" --dir "$dir" --save '' --appendonly yes --appendfsync always >"$BASE/$name.log" 2>&1 & ;;
  esac
  pid=$!; pids+=("$pid")
  wait_port "$PORT"
}

declare -A rps
servers=(redis-nopersist persimmon-pmem redis-aof-always persimmon-msync)
echo "redis-benchmark -p $PORT -c $CLIENTS -d $SIZE -n $N -r $KEYS -t $TESTS -q --csv   ($ROUNDS interleaved rounds, best kept)"
for round in $(seq 1 "$ROUNDS"); do
  for s in "${servers[@]}"; do
    start "$s"
    while IFS=, read -r test value _; do
      test=${test//\"/}; value=${value//\"/}
      [ "$test" = "test" ] && continue
      test=${test%% *}
      key="$s/$test"
      if [ -z "${rps[$key]:-}" ] || awk "BEGIN{exit !($value > ${rps[$key]})}"; then rps[$key]=$value; fi
    done < <(redis-benchmark -p "$PORT" -c "$CLIENTS" -d "$SIZE" -n "$N" -r "$KEYS" -t "$TESTS" -q --csv 2>/dev/null)
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done

printf "\n%-6s | %12s | %12s | %12s | %12s | %9s | %9s\n" test redis-nopers persim-pmem redis-always persim-msync pmem/nop msync/alw
printf -- "-------+--------------+--------------+--------------+--------------+-----------+----------\n"
for t in ${TESTS//,/ }; do
  T=${t^^}; [ "$T" = "MSET" ] && T="MSET"
  a=${rps[redis-nopersist/$T]:-0}; b=${rps[persimmon-pmem/$T]:-0}; c=${rps[redis-aof-always/$T]:-0}; d=${rps[persimmon-msync/$T]:-0}
  r1=$(awk "BEGIN{ if ($a>0) printf \"%.2fx\", $b/$a; else print \"-\" }")
  r2=$(awk "BEGIN{ if ($c>0) printf \"%.2fx\", $d/$c; else print \"-\" }")
  printf "%-6s | %12s | %12s | %12s | %12s | %9s | %9s\n" "$T" "$a" "$b" "$c" "$d" "$r1" "$r2"
done
echo
echo "filesystem: $(stat -f -c %T "$BASE")   cpus: $(nproc)   $(uname -r)"

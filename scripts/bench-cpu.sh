#!/usr/bin/env bash
# Server CPU per request, side by side: one redis-benchmark run per server and
# round, the server's user+system CPU time (all threads, from /proc/PID/stat)
# before and after, divided by the requests. A busy machine changes requests/s
# a lot and CPU per request much less, so this is the figure to compare when
# the machine is shared.
#
#   scripts/bench-cpu.sh                                  # msync vs appendfsync always, SET -c 50
#   ARGS="-c 50 -P 16 -t set" N=400000 scripts/bench-cpu.sh
#   PERSIMMON="old=/tmp/old-server new=bin/persimmon-server" scripts/bench-cpu.sh
#   MODE=none REDIS="redis-nopersist" scripts/bench-cpu.sh
#
# PERSIMMON: space-separated name=binary pairs (default msync=bin/persimmon-server),
# each started with --durability $MODE (msync); REDIS: redis-server
# configurations among redis-always, redis-everysec, redis-nopersist (default
# redis-always); ARGS: redis-benchmark arguments besides -p -n -q (default
# "-c 50 -t set -d 64 -r 100000"); N requests (100000); ROUNDS (3, interleaved).
# After each Persimmon run the group-commit figures of INFO persistence are
# printed (records per sync, its distribution when INFO has it, sync time).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-100000}
ARGS=${ARGS:--c 50 -t set -d 64 -r 100000}
ROUNDS=${ROUNDS:-3}
MODE=${MODE:-msync}
PERSIMMON=${PERSIMMON:-msync=bin/persimmon-server}
REDIS=${REDIS:-redis-always}
PORT=${PORT:-16479}
BASE=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/persimmon-cpu.XXXXXX")}
TICKS=$(getconf CLK_TCK)

command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found" >&2; exit 1; }
[ -x bin/persimmon-server ] || go build -o bin/persimmon-server ./cmd/persimmon-server

pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; [ -z "${BENCH_DIR:-}" ] && rm -rf "$BASE"; }
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# Context switches (voluntary + involuntary) of the server's live threads;
# a thread that exits during the run takes its count with it.
ctx_switches() { cat /proc/"$pid"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}'; }

echo "redis-benchmark -p $PORT $ARGS -n $N -q; $ROUNDS rounds; server CPU (user+system) per request"
for round in $(seq 1 "$ROUNDS"); do
  for s in $PERSIMMON $REDIS; do
    dir=$BASE/data; rm -rf "$dir"; mkdir -p "$dir"
    case $s in
      redis-always)    redis-server --port "$PORT" --dir "$dir" --save '' --appendonly yes --appendfsync always >/dev/null 2>&1 & ;;
      redis-everysec)  redis-server --port "$PORT" --dir "$dir" --save '' --appendonly yes --appendfsync everysec >/dev/null 2>&1 & ;;
      redis-nopersist) redis-server --port "$PORT" --dir "$dir" --save '' --appendonly no >/dev/null 2>&1 & ;;
      *=*)             "${s#*=}" --port "$PORT" --dir "$dir" --durability "$MODE" --pidfile none >"$BASE/server.log" 2>&1 & ;;
      *) echo "unknown server $s" >&2; exit 2 ;;
    esac
    pid=$!
    # PONG, not any reply: Persimmon's port opens before recovery and
    # answers LOADING meanwhile, which made redis-benchmark exit.
    for _ in $(seq 1 200); do redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
    c0=$(cpu_ticks); x0=$(ctx_switches)
    # shellcheck disable=SC2086
    out=$(redis-benchmark -p "$PORT" $ARGS -n "$N" -q 2>/dev/null | tr '\r' '\n' | awk 'NF' | tail -1)
    c1=$(cpu_ticks); x1=$(ctx_switches)
    awk -v d=$((c1 - c0)) -v x=$((x1 - x0)) -v t="$TICKS" -v n="$N" -v name="${s%%=*}" -v o="$out" \
      'BEGIN { printf "round %d  %-16s %6.1f us/request %5.2f cs/request   %s\n", '"$round"', name, d * 1e6 / t / n, x / n, o }'
    case $s in
      *=*) redis-cli -p "$PORT" info persistence | tr -d '\r' |
             grep -E '^(wal_records_per_sync|wal_sync_mean_us|wal_sync_p99_us|committer_syncs|committer_inline_syncs|committer_async_syncs):' | tr '\n' ' ' | sed 's/^/                          /'; echo ;;
    esac
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  done
done

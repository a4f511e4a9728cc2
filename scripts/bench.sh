#!/usr/bin/env bash
# Side-by-side benchmark: redis-benchmark against Persimmon in each
# durability mode and Debian's redis-server with the setting that gives the
# same guarantee, all on the same filesystem, in one run:
#
#   Persimmon pmem (no DAX), none  <->  redis-server appendonly yes, appendfsync everysec
#                                       (both hand a write to the page cache before the
#                                       reply: they survive kill -9, not power loss)
#   Persimmon msync                <->  redis-server appendonly yes, appendfsync always
#                                       (durable on disk before the reply: power loss)
#   redis-server without persistence: the speed reference
#
#   scripts/bench.sh                      # defaults below
#   N=100000 ROUNDS=5 scripts/bench.sh
#   SERVERS="redis-always persimmon-msync" scripts/bench.sh
#
# Workloads (redis-benchmark -d $SIZE -r $KEYS): SET, GET, INCR at -c
# $CLIENTS; SET with one client (-c 1, N/$C1DIV requests); SET, then GET, pipelined
# (-P 16); and GET at -c $CLIENTS/2 while another redis-benchmark runs SET
# at -c $CLIENTS/2 against the same server ("GET+w": reads under a write
# load). Rounds are interleaved (every server once per round, a fresh data
# directory each time) and the median of the rounds is printed: the
# machine may be shared and noisy, so compare ratios within one run only.
# A second table gives the server's CPU time per request (from
# /proc/PID/stat), which a busy machine disturbs less than requests/s.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-50000}
CLIENTS=${CLIENTS:-50}
SIZE=${SIZE:-64}
KEYS=${KEYS:-100000}
ROUNDS=${ROUNDS:-3}
C1DIV=${C1DIV:-10}
BASE=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench.XXXXXX")}
PORT=${PORT:-16379}
SERVERS=${SERVERS:-redis-nopersist redis-everysec persimmon-pmem persimmon-none redis-always persimmon-msync}

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
    persimmon-none)  ./bin/persimmon-server --port "$PORT" --dir "$dir" --durability none  >"$BASE/$name.log" 2>&1 & ;;
    persimmon-msync) ./bin/persimmon-server --port "$PORT" --dir "$dir" --durability msync >"$BASE/$name.log" 2>&1 & ;;
    redis-nopersist) redis-server --port "$PORT" --dir "$dir" --save '' --appendonly no >"$BASE/$name.log" 2>&1 & ;;
    redis-everysec)  redis-server --port "$PORT" --dir "$dir" --save '' --appendonly yes --appendfsync everysec >"$BASE/$name.log" 2>&1 & ;;
    redis-always)    redis-server --port "$PORT" --dir "$dir" --save '' --appendonly yes --appendfsync always >"$BASE/$name.log" 2>&1 & ;;
    *) echo "unknown server $name" >&2; exit 2 ;;
  esac
  pid=$!; pids+=("$pid")
  wait_port "$PORT"
}

declare -A vals # server/row → space-separated requests/s, one per round
declare -A cpus # server/row → space-separated server CPU µs per request, one per round
record() { vals[$1/$2]="${vals[$1/$2]:-} $3"; }
TICKS=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; } # the server's user+system CPU, all threads

bench() { # server row requests redis-benchmark-args... → records requests/s and CPU per request of one test
  local s=$1 row=$2 n=$3 c0 test value; shift 3
  c0=$(cpu_ticks)
  while IFS=, read -r test value _; do
    test=${test//\"/}; value=${value//\"/}
    [ "$test" = "test" ] && continue
    test=${test%% *}
    record "$s" "$row${test}" "$value"
    cpus[$s/$row${test}]="${cpus[$s/$row${test}]:-} $(awk -v d=$(($(cpu_ticks) - c0)) -v t="$TICKS" -v n="$n" 'BEGIN{printf "%.1f", d * 1e6 / t / n}')"
  done < <(redis-benchmark -p "$PORT" -d "$SIZE" -r "$KEYS" -q --csv -n "$n" "$@" 2>/dev/null)
}

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{a[NR]=$1} END{ if (NR==0) print 0; else if (NR%2) print a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2 }'; }

half=$((CLIENTS / 2))
echo "redis-benchmark -p $PORT -d $SIZE -r $KEYS: -c $CLIENTS -n $N -t set,get,incr; -c 1 -n $((N / C1DIV)) -t set; -c $CLIENTS -P 16 -n $((N * 4)) -t set, then -t get;"
echo "  GET+w: -c $half -n $N -t get while -c $half -t set runs; $ROUNDS interleaved rounds, median shown"
for round in $(seq 1 "$ROUNDS"); do
  for s in $SERVERS; do
    start "$s"
    for t in set get incr; do bench "$s" "" "$N" -c "$CLIENTS" -t $t; done
    bench "$s" "c1:" $((N / C1DIV)) -c 1 -t set
    bench "$s" "P16:" $((N * 4)) -c "$CLIENTS" -P 16 -t set
    bench "$s" "P16:" $((N * 4)) -c "$CLIENTS" -P 16 -t get
    redis-benchmark -p "$PORT" -d "$SIZE" -r "$KEYS" -q -c "$half" -n 100000000 -t set >/dev/null 2>&1 &
    load=$!
    sleep 0.5 # the write load is running before the reads start
    bench "$s" "w:" "$N" -c "$half" -t get # (its CPU figure includes the write load's)
    kill "$load" 2>/dev/null || true; wait "$load" 2>/dev/null || true
    if [ "$s" = persimmon-msync ]; then
      redis-cli -p "$PORT" info persistence | tr -d '\r' | grep -E '^(wal_sync_mean_us|wal_sync_p99_us|wal_records_per_sync|committer_batches_per_sync):' | tr '\n' ' ' >"$BASE/msync-syncs.txt" || true
    fi
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done

rows="SET GET INCR c1:SET P16:SET P16:GET w:GET"
label() { case $1 in c1:SET) echo "SET -c 1";; P16:SET) echo "SET -P 16";; P16:GET) echo "GET -P 16";; w:GET) echo "GET+w";; *) echo "$1";; esac; }
get() { echo "${vals[$1/$2]:-}" | median; }
ratio() { awk "BEGIN{ if ($2>0 && $1>0) printf \"%.2fx\", $1/$2; else print \"-\" }"; }

printf "\n%-9s | %10s | %10s | %10s | %10s | %10s | %10s | %8s | %8s | %8s | %8s | %8s\n" test redis-nop redis-evsec pmem none redis-alw msync pmem/nop pmem/evs none/evs msync/alw msync/nop
printf -- "----------+------------+------------+------------+------------+------------+------------+----------+----------+----------+-----------+----------\n"
for r in $rows; do
  a=$(get redis-nopersist "$r"); e=$(get redis-everysec "$r"); p=$(get persimmon-pmem "$r")
  n=$(get persimmon-none "$r"); c=$(get redis-always "$r"); m=$(get persimmon-msync "$r")
  printf "%-9s | %10s | %10s | %10s | %10s | %10s | %10s | %8s | %8s | %8s | %9s | %8s\n" "$(label "$r")" "$a" "$e" "$p" "$n" "$c" "$m" \
    "$(ratio "$p" "$a")" "$(ratio "$p" "$e")" "$(ratio "$n" "$e")" "$(ratio "$m" "$c")" "$(ratio "$m" "$a")"
done

cget() { echo "${cpus[$1/$2]:-}" | median; }
printf "\nserver CPU µs per request (user+system, all threads; median of rounds)\n"
printf "%-9s | %10s | %10s | %10s | %10s | %10s | %10s\n" test redis-nop redis-evsec pmem none redis-alw msync
for r in $rows; do
  printf "%-9s | %10s | %10s | %10s | %10s | %10s | %10s\n" "$(label "$r")" "$(cget redis-nopersist "$r")" "$(cget redis-everysec "$r")" \
    "$(cget persimmon-pmem "$r")" "$(cget persimmon-none "$r")" "$(cget redis-always "$r")" "$(cget persimmon-msync "$r")"
done
echo
[ -s "$BASE/msync-syncs.txt" ] && echo "persimmon msync, last round: $(cat "$BASE/msync-syncs.txt")"
echo "per round (requests/s):"
for r in $rows; do for s in $SERVERS; do echo "  $(label "$r") $s:${vals[$s/$r]:-}"; done; done
echo "filesystem: $(stat -f -c %T "$BASE")   cpus: $(nproc)   $(uname -r)   load: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Replication, side by side: a master with 0, 1 and 2 replicas of its own
# kind (Persimmon pmem master + Persimmon replicas; redis-server with
# appendonly yes, appendfsync everysec, the setting with pmem's guarantee,
# as master and replicas), in one run, rounds interleaved:
#
#   SET/s    redis-benchmark -t set -c $CLIENTS -d $SIZE -r $KEYS -n $N on the master
#   cpu      the master's user+system CPU µs per SET (/proc/PID/stat)
#   lag      master_repl_offset minus a replica's slave_repl_offset (the
#            replica's INFO read just before the master's), sampled every
#            100 ms while the benchmark runs: mean and max in bytes, over
#            the replicas (acknowledged offsets would show the 1 s ACK
#            period of both kinds of replica instead)
#   apply/s  a replica's rate of applying a backlog: the replica is stopped
#            (SIGSTOP) while the master takes $N SETs, then continued
#            (SIGCONT); writes applied per second until it has the master's
#            offset, and its CPU µs per write applied (the 1-replica setup)
#
#   stall    the longest SET (redis-benchmark -c 1, max latency, in runs of
#            20,000 back to back) while a replica of the same kind makes its
#            full resync of a master holding FULLSYNC_KEYS string keys
#            (1,000,000; 0 skips it), after 3 such runs with no replica
#            (their longest SET is the master's own stall after the load);
#            how long that resync took, the master's CPU seconds meanwhile,
#            and Persimmon's own account of the snapshot's lock holds (its
#            log line)
#
#   scripts/bench-repl.sh
#   N=200000 ROUNDS=5 scripts/bench-repl.sh
#   BIN=/tmp/old/persimmon-server FULLSYNC_KEYS=1000000 ROUNDS=0 scripts/bench-repl.sh
#
# The machine may be shared and noisy: compare within one run; the CPU
# columns move less with the load than the rates do. Ports PORT..PORT+2.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-100000}
CLIENTS=${CLIENTS:-50}
SIZE=${SIZE:-64}
KEYS=${KEYS:-100000}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-17110}
FULLSYNC_KEYS=${FULLSYNC_KEYS:-1000000}
BIN=${BIN:-bin/persimmon-server}
BASE=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench-repl.XXXXXX")}
TICKS=$(getconf CLK_TCK)

command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found (apt-get install redis-tools)"; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server not found (apt-get install redis-server)"; exit 1; }
[ -x bin/persimmon-server ] || go build -o bin/persimmon-server ./cmd/persimmon-server

pids=()
cleanup() { for p in "${pids[@]:-}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$BASE"; }
trap cleanup EXIT

wait_port() {
  for _ in $(seq 1 400); do
    redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "server on port $1 did not start" >&2; return 1
}

stop_pid() { # the servers are not this shell's children (started in $(...)): poll until gone
  kill "$1" 2>/dev/null || true
  for _ in $(seq 1 600); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
  kill -9 "$1" 2>/dev/null || true
}

info() { redis-cli -p "$1" info replication | tr -d '\r' | sed -n "s/^$2://p"; }

start_one() { # kind port [master port] → echoes the pid
  local kind=$1 port=$2 mport=${3:-} dir="$BASE/$1-$2"
  rm -rf "$dir"; mkdir -p "$dir"
  local rep=()
  case $kind in
    persimmon)
      [ -n "$mport" ] && rep=(--replicaof 127.0.0.1 "$mport")
      "$BIN" --port "$port" --dir "$dir" --durability pmem --repl-backlog-size 256mb "${rep[@]}" >"$dir.log" 2>&1 & ;;
    redis)
      [ -n "$mport" ] && rep=(--replicaof 127.0.0.1 "$mport")
      redis-server --port "$port" --dir "$dir" --save '' --appendonly yes --appendfsync everysec \
        --repl-backlog-size 256mb --repl-diskless-sync-delay 0 "${rep[@]}" >"$dir.log" 2>&1 & ;;
  esac
  echo $!
}

declare -A vals
record() { vals[$1]="${vals[$1]:-} $2"; }
median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{a[NR]=$1} END{ if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2 }'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

caught_up() { # master port, replica ports... → waits until every replica has the master's offset
  local m=$1; shift
  for _ in $(seq 1 1200); do
    local mo ok=1
    mo=$(info "$m" master_repl_offset)
    for rp in "$@"; do
      [ "$(info "$rp" master_link_status)" = up ] && [ "$(info "$rp" slave_repl_offset)" = "$mo" ] || ok=0
    done
    [ $ok = 1 ] && return 0
    sleep 0.05
  done
  echo "replicas did not catch up" >&2; return 1
}

run() { # kind replicas
  local kind=$1 nrep=$2 mpid rports=() rpids=()
  mpid=$(start_one "$kind" "$PORT"); pids+=("$mpid")
  wait_port "$PORT"
  for i in $(seq 1 "$nrep"); do
    local p; p=$(start_one "$kind" $((PORT + i)) "$PORT"); pids+=("$p"); rpids+=("$p"); rports+=($((PORT + i)))
    wait_port $((PORT + i))
  done
  redis-cli -p "$PORT" set warm 1 >/dev/null
  [ "$nrep" -gt 0 ] && caught_up "$PORT" "${rports[@]}"
  # the lag sampler: master offset minus each replica's acknowledged offset
  local lagf="$BASE/lag"; : >"$lagf"
  ( while :; do
      for rp in "${rports[@]}"; do
        ro=$(info "$rp" slave_repl_offset); mo=$(info "$PORT" master_repl_offset)
        [ -n "$ro" ] && [ -n "$mo" ] && echo $((mo - ro)) >>"$lagf"
      done
      sleep 0.1
    done ) &
  local sampler=$!
  local c0 rps
  c0=$(ticks "$mpid")
  rps=$(redis-benchmark -p "$PORT" -t set -c "$CLIENTS" -d "$SIZE" -r "$KEYS" -n "$N" -q --csv 2>/dev/null | awk -F, 'NR==2{gsub(/"/,"",$2); print $2}')
  local cpu; cpu=$(awk -v d=$(($(ticks "$mpid") - c0)) -v t="$TICKS" -v n="$N" 'BEGIN{printf "%.1f", d*1e6/t/n}')
  kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true
  record "$kind/$nrep/rps" "$rps"
  record "$kind/$nrep/cpu" "$cpu"
  if [ "$nrep" -gt 0 ]; then
    record "$kind/$nrep/lagmean" "$(awk '{s+=$1; n++} END{if (n) printf "%.0f", s/n; else print 0}' "$lagf")"
    record "$kind/$nrep/lagmax" "$(sort -g "$lagf" | tail -1)"
    caught_up "$PORT" "${rports[@]}"
  fi
  if [ "$nrep" = 1 ]; then
    # a replica applying a backlog of N SETs as fast as it can
    local rpid=${rpids[0]} rport=${rports[0]} t0 t1 rc0 rc1
    kill -STOP "$rpid"
    redis-benchmark -p "$PORT" -t set -c "$CLIENTS" -d "$SIZE" -r "$KEYS" -n "$N" -q >/dev/null 2>&1
    rc0=$(ticks "$rpid"); t0=$(date +%s.%N)
    kill -CONT "$rpid"
    caught_up "$PORT" "$rport"
    t1=$(date +%s.%N); rc1=$(ticks "$rpid")
    record "$kind/apply" "$(awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", n/(b-a)}')"
    record "$kind/applycpu" "$(awk -v d=$((rc1 - rc0)) -v t="$TICKS" -v n="$N" 'BEGIN{printf "%.1f", d*1e6/t/n}')"
  fi
  for p in "${rpids[@]}" "$mpid"; do stop_pid "$p"; done
}

stall() { # kind → the longest SET during a replica's full resync of FULLSYNC_KEYS keys
  local kind=$1 mpid rpid t0 t1 worst=0
  mpid=$(start_one "$kind" "$PORT"); pids+=("$mpid")
  wait_port "$PORT"
  awk -v n="$FULLSYNC_KEYS" 'BEGIN{for (i=0;i<n;i++) {k="key:" i; v=sprintf("%064d", i); printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$64\r\n%s\r\n", length(k), k, v}}' |
    redis-cli -p "$PORT" --pipe >/dev/null
  # the same SETs with no replica first: the longest of them is the stall
  # the master has by itself after the load (a checkpoint, the index's
  # growth, the cleaner), and they let that settle before the resync
  local base=0
  for _ in 1 2 3; do
    local b
    b=$(redis-benchmark -p "$PORT" -t set -c 1 -d "$SIZE" -r "$FULLSYNC_KEYS" -n 20000 --csv 2>/dev/null | awk -F, 'NR==2{gsub(/"/,"",$8); print $8}')
    base=$(awk -v a="$base" -v b="${b:-0}" 'BEGIN{print (b+0>a+0) ? b : a}')
  done
  record "$kind/basestall" "$base"
  local c0; c0=$(ticks "$mpid")
  rpid=$(start_one "$kind" $((PORT + 1)) "$PORT"); pids+=("$rpid")
  t0=$(date +%s.%N)
  while :; do
    local m
    m=$(redis-benchmark -p "$PORT" -t set -c 1 -d "$SIZE" -r "$FULLSYNC_KEYS" -n 20000 --csv 2>/dev/null | awk -F, 'NR==2{gsub(/"/,"",$8); print $8}')
    worst=$(awk -v a="$worst" -v b="${m:-0}" 'BEGIN{print (b+0>a+0) ? b : a}')
    [ "$(info $((PORT + 1)) master_link_status)" = up ] && break
  done
  t1=$(date +%s.%N)
  record "$kind/stall" "$worst"
  record "$kind/synctime" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')"
  record "$kind/synccpu" "$(awk -v d=$(($(ticks "$mpid") - c0)) -v t="$TICKS" 'BEGIN{printf "%.1f", d/t}')"
  [ "$kind" = persimmon ] && snaplog=$(grep -o 'replication: snapshot: .*' "$BASE/$kind-$PORT.log" | tail -1)
  stop_pid "$rpid"; stop_pid "$mpid"
}

echo "redis-benchmark -t set -c $CLIENTS -d $SIZE -r $KEYS -n $N against the master; $ROUNDS interleaved rounds, median shown"
for round in $(seq 1 "$ROUNDS"); do
  for nrep in 0 1 2; do
    for kind in persimmon redis; do run "$kind" "$nrep"; done
  done
done

if [ "$FULLSYNC_KEYS" -gt 0 ]; then
  for kind in persimmon redis; do stall "$kind"; done
fi

get() { echo "${vals[$1]:-}" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a+0>0 && b+0>0) printf "%.2fx", a/b; else print "-" }'; }
printf "\n%-10s | %10s | %10s | %7s | %9s | %9s | %13s | %13s\n" replicas "pmem SET/s" "evsec SET/s" ratio "pmem cpu" "evsec cpu" "pmem lag B" "evsec lag B"
printf -- "-----------+------------+-------------+---------+-----------+-----------+---------------+--------------\n"
for nrep in 0 1 2; do
  p=$(get persimmon/$nrep/rps); r=$(get redis/$nrep/rps)
  lp="-"; lr="-"
  [ "$nrep" -gt 0 ] && lp="$(get persimmon/$nrep/lagmean)/$(get persimmon/$nrep/lagmax)" && lr="$(get redis/$nrep/lagmean)/$(get redis/$nrep/lagmax)"
  printf "%-10s | %10s | %11s | %7s | %9s | %9s | %13s | %13s\n" "$nrep" "$p" "$r" "$(ratio "$p" "$r")" \
    "$(get persimmon/$nrep/cpu)" "$(get redis/$nrep/cpu)" "$lp" "$lr"
done
echo "(cpu: master µs per SET; lag: mean/max bytes of master_repl_offset - replica's slave_repl_offset, sampled every 100 ms)"
ap=$(get persimmon/apply); ar=$(get redis/apply)
printf "replica applying a backlog of %d SETs: persimmon %s writes/s (%s µs CPU each), redis %s writes/s (%s µs CPU each), ratio %s\n" \
  "$N" "$ap" "$(get persimmon/applycpu)" "$ar" "$(get redis/applycpu)" "$(ratio "$ap" "$ar")"
if [ "$FULLSYNC_KEYS" -gt 0 ]; then
  printf "full resync of %d keys (64-byte values) while SET -c 1 runs: longest SET persimmon %s ms, redis %s ms; the resync took %s s and %s s\n" \
    "$FULLSYNC_KEYS" "$(get persimmon/stall)" "$(get redis/stall)" "$(get persimmon/synctime)" "$(get redis/synctime)"
  printf "the same SETs before the replica started (3 runs of 20,000 right after the load): longest persimmon %s ms, redis %s ms\n" \
    "$(get persimmon/basestall)" "$(get redis/basestall)"
  printf "master CPU during the resync (user+system, with the SETs): persimmon %s s, redis %s s (its forked child not counted)\n" \
    "$(get persimmon/synccpu)" "$(get redis/synccpu)"
  echo "persimmon master: ${snaplog:-no snapshot line}"
fi
echo "per round:"
for k in $(printf '%s\n' "${!vals[@]}" | sort); do echo "  $k:${vals[$k]}"; done
echo "filesystem: $(stat -f -c %T "$BASE")   cpus: $(nproc)   $(uname -r)   load: $(cut -d' ' -f1-3 /proc/loadavg)"

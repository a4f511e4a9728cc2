#!/usr/bin/env bash
# Issue 13's speed rows: EVALSHA, PFADD, GEOADD, XADD and XREADGROUP+XACK
# (persimmon-bench cgroup), with SET as the reference for the
# cost every request shares, side by side on five servers, all on the same
# filesystem, in one run:
#
#   redis-nopersist     redis-server --save '' --appendonly no (the speed reference)
#   redis-everysec      appendonly yes, appendfsync everysec (persimmon-pmem's guarantee off DAX)
#   redis-always        appendonly yes, appendfsync always (persimmon-msync's guarantee)
#   persimmon-pmem      --durability pmem (every write flushed and fenced before its reply)
#   persimmon-msync     --durability msync (every write msync'ed before its reply)
#
# Two figures per cell: requests/s (persimmon-bench resp -c CONNS) and the
# server's CPU time per request (user + system of all its threads, from
# /proc/PID/stat before and after the run, divided by the requests). On a
# shared 2-core machine requests/s swings with whatever else runs; CPU per
# request moves much less, so it is the figure to compare when the machine is
# busy.
#
#   scripts/bench-commands.sh                          # defaults
#   SECONDS_PER=5 ROUNDS=5 scripts/bench-commands.sh
#   ONLY="PFADD-sparse GEOADD" scripts/bench-commands.sh
#   SERVERS="redis-nopersist persimmon-pmem" scripts/bench-commands.sh
#   PERSIMMON=/tmp/old-server scripts/bench-commands.sh   # another build
#   BASE_PERSIMMON=/tmp/old-server SERVERS="redis-nopersist base-pmem persimmon-pmem" \
#     scripts/bench-commands.sh                         # before/after in one run
#
# Method (as scripts/bench-collections.sh): the servers run side by side for
# the whole run; each row is measured ROUNDS times with the servers taking
# turns, and each cell is the median of its rounds. With PIN=1 (the default
# on 2 or more CPUs) the servers share the last CPU and the client gets the
# others. Before each measurement the script waits until no server uses CPU.
# A write row starts each measurement from FLUSHALL (so every round sees the
# same key states); a row with a load phase loads once per server and then
# measures its rounds on the loaded keys. The XREADGROUP+XACK row consumes
# its stream: every measurement loads a fresh one (untimed) with the entries
# its CGROUP_COMMANDS (60000) requests take, and runs exactly that many.
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${SECONDS_PER:-4}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
PORT=${PORT:-25390}       # servers listen on PORT .. PORT+4
NCPU=$(nproc)
PIN=${PIN:-$([ "$NCPU" -ge 2 ] && echo 1 || echo 0)}
TICKS=$(getconf CLK_TCK)
SERVERS=${SERVERS:-redis-nopersist redis-everysec redis-always persimmon-pmem persimmon-msync}
PB=${PB:-bin/persimmon-bench}
PERSIMMON=${PERSIMMON:-bin/persimmon-server}
BASE=$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench-cmds.XXXXXX")
[ -x "$PB" ] || go build -o bin/persimmon-bench ./cmd/persimmon-bench
[ -x "$PERSIMMON" ] || go build -o bin/persimmon-server ./cmd/persimmon-server
command -v jq >/dev/null || { echo "jq not found" >&2; exit 1; }

if [ "$PIN" = 1 ]; then
  SRV_CPU=$((NCPU - 1)); CLI_CPUS=0-$((NCPU - 2))
  srv=(taskset -c "$SRV_CPU"); cli=(taskset -c "$CLI_CPUS")
  PM_THREADS=2
else
  srv=(); cli=()
  PM_THREADS=auto
fi

read -r -a servers <<<"$SERVERS"
declare -A port pid
pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$BASE"; }
trap cleanup EXIT

# PONG, not any reply: Persimmon's port opens before recovery (LOADING).
wait_port() { for _ in $(seq 1 200); do redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.05; done; echo "no server on port $1" >&2; return 1; }

i=0
for s in "${servers[@]}"; do
  p=$((PORT + i)); i=$((i + 1)); port[$s]=$p
  d="$BASE/$s"; mkdir -p "$d"
  if redis-cli -p "$p" ping >/dev/null 2>&1; then echo "port $p is taken (a server left running?)" >&2; exit 1; fi
  case $s in
    redis-nopersist) "${srv[@]}" redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --save '' --appendonly no >"$d.log" 2>&1 & ;;
    redis-everysec)  "${srv[@]}" redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --save '' --appendonly yes --appendfsync everysec >"$d.log" 2>&1 & ;;
    redis-always)    "${srv[@]}" redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --save '' --appendonly yes --appendfsync always >"$d.log" 2>&1 & ;;
    persimmon-pmem)  "${srv[@]}" "$PERSIMMON" --port "$p" --dir "$d" --durability pmem --threads "$PM_THREADS" --pidfile none >"$d.log" 2>&1 & ;;
    base-pmem)       "${srv[@]}" "${BASE_PERSIMMON:?base-pmem needs BASE_PERSIMMON}" --port "$p" --dir "$d" --durability pmem --threads "$PM_THREADS" --pidfile none >"$d.log" 2>&1 & ;;
    persimmon-msync) "${srv[@]}" "$PERSIMMON" --port "$p" --dir "$d" --durability msync --threads "$PM_THREADS" --pidfile none >"$d.log" 2>&1 & ;;
    *) echo "unknown server $s" >&2; exit 2 ;;
  esac
  pid[$s]=$!; pids+=("$!")
  wait_port "$p"
  kill -0 "${pid[$s]}" 2>/dev/null || { echo "$s exited:" >&2; cat "$d.log" >&2; exit 1; }
done

ticks() { awk '{print $14 + $15}' "/proc/${pid[$1]}/stat"; }
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
rcli() { redis-cli -p "${port[$1]}" "${@:2}"; }

declare -A qps cpu errs
# run_one server template: one measurement; appends requests/s and CPU µs/request.
# run_one server -- persimmon-bench arguments: the same with another workload.
run_one() {
  local s=$1 t0 t1 out ops q e
  local -a pbargs=(resp -s "$SECS" -c "$CONNS" "$2")
  [ "$2" = -- ] && pbargs=("${@:3}")
  t0=$(ticks "$s")
  out=$("${cli[@]}" "$PB" "${pbargs[@]}" -p "${port[$s]}" --json -q 2>/dev/null || echo '{}')
  t1=$(ticks "$s")
  ops=$(jq -r '.operations // 0' <<<"$out"); q=$(jq -r '.qps // 0' <<<"$out"); e=$(jq -r '.errors // 0' <<<"$out")
  qps[$s/$ROW]+="$(printf '%.0f' "$q") "
  cpu[$s/$ROW]+="$(awk -v d=$((t1 - t0)) -v t="$TICKS" -v n="$ops" 'BEGIN { if (n > 0) printf "%.2f", d * 1e6 / t / n; else print 0 }') "
  [ "$e" != 0 ] && errs[$s/$ROW]="$e errors: $(jq -r '.first_error // ""' <<<"$out")"
  return 0
}
# row NAME SETUP LOAD TEMPLATE: SETUP is a redis-cli command line run once per
# server (may be empty); LOAD a "N:template" load phase (empty: flush before
# every measurement instead).
ROWS=()
declare -A desc
row() {
  local name=$1 setup=$2 load=$3 tmpl=$4 round s
  if [ -n "${ONLY:-}" ] && ! grep -qw -- "$name" <<<"$ONLY"; then return 0; fi
  ROW=$name; ROWS+=("$name")
  desc[$name]="\`$tmpl\`"; [ -n "$load" ] && desc[$name]="load ${load%%:*} × \`${load#*:}\`; then \`$tmpl\`"
  for s in "${servers[@]}"; do
    rcli "$s" flushall >/dev/null
    # shellcheck disable=SC2086
    [ -n "$setup" ] && eval "rcli $s $setup" >/dev/null
    [ -n "$load" ] && "${cli[@]}" "$PB" resp -p "${port[$s]}" --load -n "${load%%:*}" -P 32 -c 8 "${load#*:}" >/dev/null 2>&1
  done
  for round in $(seq 1 "$ROUNDS"); do
    for s in "${servers[@]}"; do
      [ -z "$load" ] && rcli "$s" flushall >/dev/null
      quiesce
      run_one "$s" "$tmpl"
    done
  done
  echo "[$(date +%T)] $name done" >&2
}
# cgroup_row NAME COUNT COMMANDS: XREADGROUP COUNT n + XACK of the IDs it
# delivered (persimmon-bench cgroup, one consumer per connection, one
# stream and group); each measurement starts from a stream loaded with the
# entries its COMMANDS requests need (COMMANDS / 2 reads of COUNT), not
# timed. Requests are commands: XREADGROUP and XACK count one each.
cgroup_row() {
  local name=$1 count=$2 cmds=$3 round s entries
  if [ -n "${ONLY:-}" ] && ! grep -qw -- "$name" <<<"$ONLY"; then return 0; fi
  ROW=$name; ROWS+=("$name")
  entries=$((cmds / 2 * count + count * CONNS))
  desc[$name]="load $entries × \`XADD stream * field {value 64}\`, XGROUP CREATE stream group 0; then $cmds × (\`XREADGROUP GROUP group consumer-N COUNT $count STREAMS stream >\`, \`XACK stream group\` its IDs)"
  for round in $(seq 1 "$ROUNDS"); do
    for s in "${servers[@]}"; do
      rcli "$s" flushall >/dev/null
      "${cli[@]}" "$PB" resp -p "${port[$s]}" --load -n "$entries" -P 32 -c 8 "XADD stream * field {value 64}" >/dev/null 2>&1
      rcli "$s" xgroup create stream group 0 >/dev/null
      quiesce
      run_one "$s" -- cgroup -n "$cmds" -c "$CONNS" -count "$count" -key stream -group group
    done
  done
  echo "[$(date +%T)] $name done" >&2
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else printf "%.2f", (v[NR/2]+v[NR/2+1])/2}'; }

SCRIPT="return redis.call('SET', KEYS[1], ARGV[1])"
SHA=$(printf '%s' "$SCRIPT" | sha1sum | cut -d' ' -f1)
row SET "" "" "SET {key uniform 10000000} {value 64}" # the per-request floor every row shares
row EVALSHA "script load \"$SCRIPT\"" "" "EVALSHA $SHA 1 {key uniform 10000000} {value 64}"
row PFADD-sparse "" "" "PFADD {key uniform 10000} {value 16}"
row PFADD-dense "" "200000:PFADD {key uniform 100} {value 16}" "PFADD {key uniform 100} {value 16}"
row GEOADD "" "" "GEOADD {key uniform 1000} {rand 179}.{rand 1000000} {rand 84}.{rand 1000000} {key uniform 10000}"
row XADD "" "" "XADD {key uniform 1000} * field {value 64}"
cgroup_row XREADGROUP+XACK 10 "${CGROUP_COMMANDS:-60000}"

ref=${servers[0]}
printf '| command | workload |'; for s in "${servers[@]}"; do printf ' %s |' "$s"; done
for s in "${servers[@]:1}"; do printf ' %s ÷ %s |' "$s" "$ref"; done; echo
printf '|---|---|'; for _ in "${servers[@]}" "${servers[@]:1}"; do printf -- '---|'; done; echo
for name in "${ROWS[@]}"; do
  w=${desc[$name]//|/\\|}
  printf '| %s | %s |' "$name" "$w"
  for s in "${servers[@]}"; do
    printf ' %s (%s µs)%s |' "$(median <<<"${qps[$s/$name]:-}")" "$(median <<<"${cpu[$s/$name]:-}")" "${errs[$s/$name]:+, ${errs[$s/$name]}}"
  done
  a=$(median <<<"${qps[$ref/$name]:-}"); ac=$(median <<<"${cpu[$ref/$name]:-}")
  for s in "${servers[@]:1}"; do
    b=$(median <<<"${qps[$s/$name]:-}"); bc=$(median <<<"${cpu[$s/$name]:-}")
    printf ' %s |' "$(awk -v a="$a" -v b="$b" -v ac="$ac" -v bc="$bc" 'BEGIN { if (a > 0 && bc > 0) printf "%.2f× (CPU %.2f×)", b / a, ac / bc; else print "-" }')"
  done
  echo
done
echo
if [ "$PIN" = 1 ]; then pinning="servers on CPU $SRV_CPU, client on CPU $CLI_CPUS"; else pinning="no pinning"; fi
echo "Cells: requests/s (server CPU per request). Ratios: requests/s over $ref's, and (CPU) $ref's CPU per request over the server's (above 1 = cheaper than $ref)."
echo "persimmon-bench resp -s $SECS -c $CONNS, median of $ROUNDS interleaved rounds ($pinning); $NCPU cpus, $(stat -f -c %T "$BASE"), $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "all rounds (requests/s; CPU µs/request):"
for k in $(printf '%s\n' "${!qps[@]}" | sort); do echo "  $k: ${qps[$k]}; ${cpu[$k]}"; done

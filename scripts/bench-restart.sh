#!/usr/bin/env bash
# The restart and memory-per-key benchmark (issue 11): loads N string keys
# (16-byte names "k:%014d", 16-byte values "v:%014d", pipelined through
# redis-cli --pipe) into each server, then reports side by side
#
#   - RSS, anonymous and file-backed RSS (/proc/PID/status RssAnon, RssFile),
#     the Go heap (INFO memory go_heap_bytes; Persimmon only) and bytes of
#     RSS and of anonymous RSS per key;
#   - disk use of the data directory;
#   - time from exec to the first reply that is not -LOADING (PING) and to
#     every key served (DBSIZE = N and GET of the last key written returns
#     its value), after kill -9 and after a clean SHUTDOWN.
#
# Servers: redis-server with RDB (SHUTDOWN SAVE, then start; its kill -9
# row restarts from the RDB of a BGSAVE taken after the load), redis-server
# with AOF everysec (kill -9, then start; the clean row is SHUTDOWN, which
# fsyncs the AOF), Persimmon pmem (kill -9 / SHUTDOWN, then start), and
# Persimmon pmem without the key index (--key-index no) and with it (--key-index
# yes, the default).
#
#   scripts/bench-restart.sh             # N=2000000
#   N=10000000 scripts/bench-restart.sh
#   SERVERS="rdb kix" N=10000000 scripts/bench-restart.sh   # some rows only
#   TTL=half scripts/bench-restart.sh    # every other key SET with EX 86400
#   COLLS=1000 CFIELDS=1000 SERVERS="rdb kix" PHASES=restart scripts/bench-restart.sh
#                                        # also 1,000 hashes of 1,000 fields,
#                                        # loaded before the strings (their
#                                        # anchors the oldest: the key index's
#                                        # restart scans the whole log for them)
#   BIN=/path/to/persimmon-server ...    # another build of the server
#   BASEBIN=/path/to/persimmon-server SERVERS="rdb kixbase kix" ...
#                                        # row "kixbase": that build with the
#                                        # key index, beside this one (before
#                                        # and after a change, in one run)
#
# After that table (phase "restart": targets 1 and 2 of issue 11) come the
# phases of targets 3, 5 and 4 (scripts/bench-restart-phases.sh; PHASES
# picks some, in this order):
#
#   cgroup       target 3: Persimmon fully in memory and a second one inside
#                a memory cgroup (v1 memory.limit_in_bytes, a child of this
#                shell's memory cgroup) that holds 1/CG_DIV (4) of the data
#                set (its disk use): the N keys are loaded once outside it,
#                and a copy, dropped from the page cache, is re-attached by
#                the server in the cgroup; uniform
#                and zipfian-0.99 GETs (persimmon-bench resp, -c 50, CG_SECS
#                s, CG_ROUNDS interleaved rounds): requests/s, server CPU per
#                request, major page faults per request, OOM kills, answers
#                of CG_CHECK sampled keys compared with their values; then
#                a fresh server in the cgroup loads the N keys for at most
#                CG_LOAD_SECS (30) s. CG_IO=goroutine|loop: both servers'
#                --io.
#   latency      target 5: redis-benchmark -c 50 -t set,get -d 16 -r KEYS at
#                LAT_SMALL (100000) and N preloaded keys, Persimmon (and
#                redis-server: LAT_SERVERS), LAT_ROUNDS interleaved rounds of
#                LAT_REQ requests: p99.9 per size and their ratio, Go GC
#                pause percentiles (INFO stats go_gc_*, after CONFIG
#                RESETSTAT).
#   collections  target 4: DRAM per element of hashes, sets, sorted sets,
#                lists and streams of CELEMS (1000) elements in each of CKEYS
#                (200) keys, redis-server against Persimmon (a fresh server
#                per type): anonymous RSS growth per element, and used_memory
#                / Go heap growth, after MEMORY PURGE; with HEAPPROFILE=1 the
#                top of Persimmon's Go heap profile per type.
#
#   PHASES="restart cgroup latency collections" (the default) N=2000000
#   PHASES="cgroup" N=10000000 CG_SECS=20 scripts/bench-restart.sh
#
# A benchmark, not a test: timings are wall clock, polled every ~5 ms with
# redis-cli, so they carry a few ms of polling error each.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-2000000}
TTL=${TTL:-none}
COLLS=${COLLS:-0}     # hashes "h:%014d" of CFIELDS fields "f:%014d" -> "v:%014d", loaded first
CFIELDS=${CFIELDS:-1000}
CLAST=${CLAST:-0}     # 1: the hashes are loaded after the strings instead
BIN=${BIN:-bin/persimmon-server}
PORT=${PORT:-16397}
PHASES=${PHASES:-restart cgroup latency collections}
BASE=$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bench-restart.XXXXXX")
[ -x bin/persimmon-server ] || go build -o bin/persimmon-server ./cmd/persimmon-server
[ -x bin/persimmon-bench ] || go build -o bin/persimmon-bench ./cmd/persimmon-bench
LASTKEY=$(printf 'k:%014d' $((N - 1)))
LASTVAL=$(printf 'v:%014d' $((N - 1)))
LASTHASH=$(printf 'h:%014d' $((COLLS - 1)))
KEYS=$((N + COLLS))

pid=
pids=() # the phases' servers (bench-restart-phases.sh)
CG=     # the cgroup phase's memory cgroup
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$CG" ] && rmdir "$CG" 2>/dev/null
  rm -rf "$BASE"
}
trap cleanup EXIT

now() { date +%s.%N; }
cli() { redis-cli -p "$PORT" "$@" 2>/dev/null; }

# start KIND: starts the server on $BASE/KIND (kept between starts).
start() {
  local d="$BASE/$1"
  mkdir -p "$d"
  case $1 in
    rdb) redis-server --port "$PORT" --dir "$d" --save '' --appendonly no --dbfilename dump.rdb >"$d.log" 2>&1 & ;;
    aof) redis-server --port "$PORT" --dir "$d" --save '' --appendonly yes --appendfsync everysec \
      --aof-use-rdb-preamble no >"$d.log" 2>&1 & ;;
    pmem) "$BIN" --port "$PORT" --dir "$d" --durability pmem --key-index no >>"$d.log" 2>&1 & ;;
    kix) "$BIN" --port "$PORT" --dir "$d" --durability pmem --key-index yes >>"$d.log" 2>&1 & ;;
    kixbase) "$BASEBIN" --port "$PORT" --dir "$d" --durability pmem --key-index yes >>"$d.log" 2>&1 & ;;
  esac
  pid=$!
}

# wait_first: seconds from $T0 to the first reply that is not an error.
wait_first() {
  local r
  while :; do
    r=$(cli ping || true)
    [ "$r" = PONG ] && break
    kill -0 "$pid" 2>/dev/null || { echo "server died" >&2; exit 1; }
    sleep 0.005
  done
  awk -v a="$T0" -v b="$(now)" 'BEGIN{printf "%.3f", b-a}'
}

# wait_all: seconds from $T0 until DBSIZE is N (+ COLLS) and the last key
# (and the last hash's field count) reads back.
wait_all() {
  while :; do
    if [ "$(cli dbsize || true)" = "$KEYS" ] && [ "$(cli get "$LASTKEY" || true)" = "$LASTVAL" ] &&
      { [ "$COLLS" = 0 ] || [ "$(cli hlen "$LASTHASH" || true)" = "$CFIELDS" ]; }; then break; fi
    kill -0 "$pid" 2>/dev/null || { echo "server died" >&2; exit 1; }
    sleep 0.005
  done
  awk -v a="$T0" -v b="$(now)" 'BEGIN{printf "%.3f", b-a}'
}

load_hashes() {
  [ "$COLLS" = 0 ] || awk -v n="$COLLS" -v m="$CFIELDS" 'BEGIN{ for (h = 0; h < n; h++) {
    printf "*%d\r\n$4\r\nHSET\r\n$16\r\n%s\r\n", 2 + 2 * m, sprintf("h:%014d", h)
    for (i = 0; i < m; i++) printf "$16\r\n%s\r\n$16\r\n%s\r\n", sprintf("f:%014d", i), sprintf("v:%014d", i) } }' |
    redis-cli -p "$PORT" --pipe >/dev/null
}

load() {
  [ "$CLAST" = 1 ] || load_hashes
  load_strings
  [ "$CLAST" != 1 ] || load_hashes
}

load_strings() {
  awk -v n="$N" -v ttl="$TTL" 'BEGIN{ for (i = 0; i < n; i++) { k = sprintf("k:%014d", i); v = sprintf("v:%014d", i);
    if (ttl == "half" && i % 2 == 1) printf "*5\r\n$3\r\nSET\r\n$16\r\n%s\r\n$16\r\n%s\r\n$2\r\nEX\r\n$5\r\n86400\r\n", k, v
    else printf "*3\r\n$3\r\nSET\r\n$16\r\n%s\r\n$16\r\n%s\r\n", k, v } }' | redis-cli -p "$PORT" --pipe >/dev/null
}

field() { awk -v f="$1" '$1 == f":" {print $2}' "/proc/$pid/status"; }
info() { cli info memory | tr -d '\r' | awk -F: -v f="$1" '$1 == f {print $2}'; }

declare -A row rsspk anonpk t_first9 t_all9 t_firstc t_allc
# measure KIND: load, report memory, restart after kill -9 and after SHUTDOWN.
measure() {
  local k=$1 rss anon file heap disk
  rm -rf "${BASE:?}/$k" "$BASE/$k.log"
  start "$k"; T0=$(now); wait_first >/dev/null
  load
  [ "$(cli dbsize)" = "$KEYS" ] || { echo "$k: load gave $(cli dbsize) keys, want $KEYS" >&2; exit 1; }
  sleep 1 # let the server settle (AOF everysec, background work) before reading memory
  rss=$(field VmRSS) anon=$(field RssAnon) file=$(field RssFile)
  heap=$(info go_heap_bytes); heap=${heap:-n/a}
  [ "$heap" = n/a ] || heap=$(awk -v h="$heap" 'BEGIN{printf "%.0f MB", h/1e6}')
  if [ "$k" = rdb ]; then cli bgsave >/dev/null; while [ "$(cli info persistence | tr -d '\r' | awk -F: '$1=="rdb_bgsave_in_progress"{print $2}')" != 0 ]; do sleep 0.05; done; fi
  disk=$(du -sk "$BASE/$k" | awk '{printf "%.0f", $1/1024}')
  row[$k]="$(awk -v r="$rss" -v a="$anon" -v f="$file" -v n="$N" 'BEGIN{printf "%.0f MB | %.0f MB | %.0f MB | %.0f | %.0f", r/1024, a/1024, f/1024, r*1024/n, a*1024/n}') | $heap | ${disk} MB"
  # kill -9, start: first reply, every key.
  kill -9 "$pid"; wait "$pid" 2>/dev/null || true
  start "$k"; T0=$(now)
  local f9 a9 fc ac
  f9=$(wait_first); a9=$(wait_all)
  # clean SHUTDOWN (SAVE for the RDB server), start.
  if [ "$k" = rdb ]; then cli shutdown save >/dev/null || true; else cli shutdown >/dev/null || true; fi
  wait "$pid" 2>/dev/null || true
  start "$k"; T0=$(now)
  fc=$(wait_first); ac=$(wait_all)
  row[$k]+=" | ${f9} s | ${a9} s | ${fc} s | ${ac} s"
  rsspk[$k]=$(awk -v r="$rss" -v n="$N" 'BEGIN{printf "%.1f", r*1024/n}')
  anonpk[$k]=$(awk -v a="$anon" -v n="$N" 'BEGIN{printf "%.1f", a*1024/n}')
  t_first9[$k]=$f9 t_all9[$k]=$a9 t_firstc[$k]=$fc t_allc[$k]=$ac
  cli shutdown >/dev/null || true; wait "$pid" 2>/dev/null || true; pid=
  case $k in pmem | kix | kixbase) row[$k]+=" | $(grep -o 'recovery: [0-9]* segments.*' "$BASE/$k.log" | tail -1 || true)" ;; esac
  [ "$k" = kix ] && kixline=$(grep -o 'recovery: key index.*' "$BASE/$k.log" | tail -2 | tr '\n' ' ' || true)
  [ "$k" = kixbase ] && kixbaseline=$(grep -o 'recovery: key index.*' "$BASE/$k.log" | tail -2 | tr '\n' ' ' || true)
  rm -rf "${BASE:?}/$k"
}

kixline= kixbaseline=
BASEBIN=${BASEBIN:-}
SERVERS=${SERVERS:-rdb aof pmem kix}
# shellcheck source=scripts/bench-restart-phases.sh
. scripts/bench-restart-phases.sh
case " $PHASES " in *" restart "*) ;; *) run_phases; exit 0 ;; esac
for k in $SERVERS; do measure "$k"; done

ttlnote=
[ "$TTL" = half ] && ttlnote=", half with EX 86400"
[ "$COLLS" = 0 ] || ttlnote+=", and $COLLS hashes of $CFIELDS fields (loaded $([ "$CLAST" = 1 ] && echo last || echo first))"
echo "| $N keys, 16 B names, 16 B values$ttlnote | RSS | anon RSS | file RSS | B/key (RSS) | B/key (anon) | Go heap | disk | kill -9: first reply | kill -9: all keys | SHUTDOWN: first reply | SHUTDOWN: all keys |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
[ -n "${row[rdb]:-}" ] && echo "| redis-server $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-), RDB (kill -9 row: restart from a BGSAVE after the load) | ${row[rdb]} |"
[ -n "${row[aof]:-}" ] && echo "| redis-server, AOF everysec | ${row[aof]} |"
[ -n "${row[pmem]:-}" ] && echo "| Persimmon pmem, --key-index no | ${row[pmem]%% | recovery:*} |"
[ -n "${row[kixbase]:-}" ] && echo "| Persimmon pmem, --key-index yes, $BASEBIN | ${row[kixbase]%% | recovery:*} |"
[ -n "${row[kix]:-}" ] && echo "| Persimmon pmem, --key-index yes | ${row[kix]%% | recovery:*} |"
echo
[ -n "${row[pmem]:-}" ] && echo "Persimmon's last start-up line: recovery:${row[pmem]#* | recovery:}"
[ -n "${row[kixbase]:-}" ] && echo "$BASEBIN: recovery:${row[kixbase]#* | recovery:}" && echo "Its key index lines (after kill -9, after SHUTDOWN): $kixbaseline"
[ -n "${row[kix]:-}" ] && echo "With the key index: recovery:${row[kix]#* | recovery:}" && echo "Its key index lines (after kill -9, after SHUTDOWN): $kixline"
echo "loaded with redis-cli --pipe; $(nproc) cpus, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
restart_targets
run_phases

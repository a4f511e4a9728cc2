#!/usr/bin/env bash
# make bench-seeds: the workloads of every table in ../shared/spec/benchmarks.md,
# scaled down for a 2-core machine, run with bin/persimmon-bench (and
# redis-benchmark for table 4) against five servers started side by side on
# spare ports, all on one filesystem:
#
#   redis-nopersist     redis-server --save '' --appendonly no
#   redis-aof-everysec  redis-server --save '' --appendonly yes --appendfsync everysec
#                       (the same guarantee as persimmon-pmem off DAX: the write is in
#                       the page cache before the reply; survives kill -9, not power loss)
#   redis-aof-always    redis-server --save '' --appendonly yes --appendfsync always
#                       (the same guarantee as persimmon-msync: on disk before the reply)
#   persimmon-pmem      bin/persimmon-server --durability pmem
#   persimmon-msync     bin/persimmon-server --durability msync
#
# Workloads run one at a time, the servers in turn for each workload, and
# BENCHMARKS.md is written with the figures, the ratios to redis-server, the
# machine and every exact command. A command a server does not know shows as
# "not supported". Knobs (environment): SECS (resp runs, 3), YSECS (YCSB
# transaction phases, 2), CONNS (50), THREADS (16),
# BASEPORT (16500), BENCH_DIR (server data, default a temp dir), OUT (BENCHMARKS.md),
# RB_N (redis-benchmark requests per test in table 4, 100000).
set -uo pipefail
cd "$(dirname "$0")/.."

SECS=${SECS:-3}
YSECS=${YSECS:-2}
CONNS=${CONNS:-50}
THREADS=${THREADS:-16}
BASEPORT=${BASEPORT:-16500}
OUT=${OUT:-BENCHMARKS.md}
RB_N=${RB_N:-100000}
STR_SIZES=${STR_SIZES:-128 256 1024 2048 4096}
COLL_SIZES=${COLL_SIZES:-128 4096}
STR_RECORDS=${STR_RECORDS:-5000}
COLL_RECORDS=${COLL_RECORDS:-2000}
BASE=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/persimmon-seeds.XXXXXX")}
RES=$BASE/results
mkdir -p "$RES"

command -v redis-server >/dev/null || { echo "redis-server not found" >&2; exit 1; }
command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq not found" >&2; exit 1; }
go build -o bin/persimmon-server ./cmd/persimmon-server || exit 1
go build -o bin/persimmon-bench ./cmd/persimmon-bench || exit 1
BENCH=bin/persimmon-bench

SERVERS=(redis-nopersist redis-aof-everysec redis-aof-always persimmon-pmem persimmon-msync)
declare -A PORT PID
i=0
for s in "${SERVERS[@]}"; do PORT[$s]=$((BASEPORT + i)); i=$((i + 1)); done

cleanup() {
  for s in "${SERVERS[@]}"; do
    [ -n "${PID[$s]:-}" ] && kill "${PID[$s]}" 2>/dev/null
  done
  wait 2>/dev/null
  [ -z "${BENCH_DIR:-}" ] && rm -rf "$BASE"
}
trap cleanup EXIT

log() { echo "[$(date +%T)] $*" >&2; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_server() {
  local s=$1 port=${PORT[$1]} dir=$BASE/$1
  port_free "$port" || { echo "port $port is in use; set BASEPORT" >&2; exit 1; }
  mkdir -p "$dir"
  case $s in
    redis-nopersist)  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no >"$BASE/$s.log" 2>&1 & ;;
    redis-aof-everysec) redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly yes --appendfsync everysec >"$BASE/$s.log" 2>&1 & ;;
    redis-aof-always) redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly yes --appendfsync always >"$BASE/$s.log" 2>&1 & ;;
    persimmon-pmem)   ./bin/persimmon-server --port "$port" --dir "$dir" --durability pmem >"$BASE/$s.log" 2>&1 & ;;
    persimmon-msync)  ./bin/persimmon-server --port "$port" --dir "$dir" --durability msync >"$BASE/$s.log" 2>&1 & ;;
  esac
  PID[$s]=$!
  for _ in $(seq 1 200); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$s did not start on port $port; log:" >&2; cat "$BASE/$s.log" >&2; exit 1
}

alive() { kill -0 "${PID[$1]}" 2>/dev/null && redis-cli -p "${PORT[$1]}" ping >/dev/null 2>&1; }

flush() { redis-cli -p "${PORT[$1]}" flushall >/dev/null 2>&1; }

# quote ARGS: a shell-pasteable rendering of a command line.
quote() {
  local out="" a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,+-]+$ ]]; then out+="$a "; else out+="'${a//\'/\'\\\'\'}' "; fi
  done
  printf '%s' "${out% }"
}

# bench ID SERVER ARGS...: run persimmon-bench with --json -q, keep the result
# in $RES/ID.SERVER.json and the exact command in $RES/commands.
bench() {
  local id=$1 s=$2; shift 2
  local f=$RES/$id.$s.json
  echo "$(quote "$BENCH" "$@" --json -q)" >>"$RES/commands.$SECTION"
  if ! alive "$s"; then
    echo '{"error":"server down"}' >"$f"; return 1
  fi
  if ! timeout 300 "$BENCH" "$@" --json -q >"$f" 2>>"$BASE/bench.log"; then
    local msg; msg=$(tail -1 "$BASE/bench.log" | tr '"' "'")
    echo "{\"error\":\"${msg:-failed}\"}" >"$f"
    return 1
  fi
  return 0
}

unsupported() { [ "$(jq -r 'if type=="array" then .[0] else . end | .not_supported // false' "$1" 2>/dev/null)" = true ]; }

# cell FILE: "QPS (avg / p99 ms)", "not supported", or the error.
cell() {
  local f=$1
  [ -f "$f" ] || { echo "—"; return; }
  jq -r '
    def r: if type=="array" then .[0] else . end;
    r | if .error then "error: " + .error
        elif .not_supported then "not supported"
        else ((.qps | floor | tostring) + " (" + ((.latency.avg_us/1000*100|round/100)|tostring) + " / "
              + ((.latency.p99_us/1000*100|round/100)|tostring) + ")"
              + (if .errors > 0 then ", " + (.errors|tostring) + " errors: " + .first_error else "" end))
        end' "$f" 2>/dev/null || echo "error"
}

# ycell FILE: "QPS (avg / p99 µs)" for YCSB.
ycell() {
  local f=$1
  [ -f "$f" ] || { echo "—"; return; }
  jq -r '
    if .error then "error: " + .error
    elif .not_supported then "not supported"
    else ((.qps | floor | tostring) + " (" + (.latency.avg_us|round|tostring) + " / " + (.latency.p99_us|round|tostring) + ")"
          + (if .errors > 0 then ", " + (.errors|tostring) + " errors: " + .first_error else "" end))
    end' "$f" 2>/dev/null || echo "error"
}

qps() { jq -r 'if type=="array" then .[0] else . end | if .error or .not_supported or (.errors > 0) then "" else .qps end' "$1" 2>/dev/null; }

ratio() { # ratio FILE_A FILE_B → A/B
  local a b
  a=$(qps "$1"); b=$(qps "$2")
  if [ -n "$a" ] && [ -n "$b" ]; then awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "—" }'; else echo "—"; fi
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for s in "${SERVERS[@]}"; do start_server "$s"; done
log "servers up: $(for s in "${SERVERS[@]}"; do printf '%s:%s ' "$s" "${PORT[$s]}"; done)"
T0=$(date +%s)

# ---- 1. eleven commands (resp-benchmark style) -------------------------------------------
SECTION=1
SCRIPT="return redis.call('SET', KEYS[1], ARGV[1])"
SHA=$(printf '%s' "$SCRIPT" | sha1sum | cut -d' ' -f1)
# name | load phase (resp --load, -n) | measured command
T1=(
  "SET||SET {key uniform 10000000} {value 64}"
  "GET|100000:SET {key sequence 100000} {value 64}|GET {key uniform 100000}"
  "ZADD||ZADD {key uniform 1000} {rand 70000} {key uniform 10000}"
  "ZSCORE|100900:ZADD {key sequence 100} {rand 70000} {key sequence 1009}|ZSCORE {key uniform 100} {key uniform 1009}"
  "HSET||HSET {key uniform 1000} {key uniform 10000} {value 64}"
  "HGET|100900:HSET {key sequence 100} {key sequence 1009} {value 64}|HGET {key uniform 100} {key uniform 1009}"
  "LPUSH||LPUSH {key uniform 1000} {value 64}"
  "LINDEX|100000:RPUSH {key sequence 100} {value 64}|LINDEX {key uniform 100} {rand 1000}"
  "SADD||SADD {key uniform 1000} {value 64}"
  "SISMEMBER|100900:SADD {key sequence 100} {key sequence 1009}|SISMEMBER {key uniform 100} {key uniform 1009}"
  "EVALSHA|1:SCRIPT LOAD \"$SCRIPT\"|EVALSHA $SHA 1 {key uniform 10000000} {value 64}"
)
log "table 1: eleven commands, ${SECS}s each, $CONNS connections"
for row in "${T1[@]}"; do
  IFS='|' read -r name load cmd <<<"$row"
  for s in "${SERVERS[@]}"; do
    flush "$s"
    if [ -n "$load" ]; then
      n=${load%%:*}; lcmd=${load#*:}
      bench "t1-$name-load" "$s" resp -p "${PORT[$s]}" --load -n "$n" -P 32 -c 8 "$lcmd"
      if unsupported "$RES/t1-$name-load.$s.json"; then
        cp "$RES/t1-$name-load.$s.json" "$RES/t1-$name.$s.json"; continue
      fi
    fi
    bench "t1-$name" "$s" resp -p "${PORT[$s]}" -s "$SECS" -c "$CONNS" "$cmd" --durability-report
  done
  log "  $name done"
done

# ---- 2. YCSB, persistent-memory edition tables ----------------------------------------------
SECTION=2
ycsb_case() { # id group size records workload dist server
  local id=$1 g=$2 size=$3 recs=$4 wl=$5 dist=$6 s=$7
  local fc=10; [ "$g" = string ] && fc=1
  if [ "$wl" = load ]; then
    bench "$id" "$s" ycsb -p "${PORT[$s]}" -workload load -group "$g" -recordcount "$recs" -fieldcount "$fc" \
      -fieldlength "$size" -threads "$THREADS" -requestdistribution "$dist"
  else
    bench "$id" "$s" ycsb -p "${PORT[$s]}" -workload "$wl" -group "$g" -recordcount "$recs" -fieldcount "$fc" \
      -fieldlength "$size" -threads "$THREADS" -requestdistribution "$dist" -operationcount 100000000 -maxexecutiontime "$YSECS"
  fi
}
log "table 2: YCSB load / C / A, zipfian, ${YSECS}s transaction phases, $THREADS threads"
for g in string hash list set zset; do
  sizes=$COLL_SIZES; recs=$COLL_RECORDS
  [ "$g" = string ] && { sizes=$STR_SIZES; recs=$STR_RECORDS; }
  for size in $sizes; do
    for s in "${SERVERS[@]}"; do
      flush "$s"
      ycsb_case "t2-$g-$size-load" "$g" "$size" "$recs" load zipfian "$s"
      if unsupported "$RES/t2-$g-$size-load.$s.json"; then
        for wl in c a; do cp "$RES/t2-$g-$size-load.$s.json" "$RES/t2-$g-$size-$wl.$s.json"; done
        continue
      fi
      ycsb_case "t2-$g-$size-c" "$g" "$size" "$recs" c zipfian "$s"
      ycsb_case "t2-$g-$size-a" "$g" "$size" "$recs" a zipfian "$s"
    done
    log "  $g $size done"
  done
done

# ---- 3. ESSD edition: string workloads, 100 B values (in memory only) ----------------------
SECTION=3
log "table 3: YCSB string, 100 B"
for s in "${SERVERS[@]}"; do
  flush "$s"
  ycsb_case "t3-load" string 100 20000 load uniform "$s"
  ycsb_case "t3-read-uniform" string 100 20000 c uniform "$s"
  ycsb_case "t3-read-zipfian" string 100 20000 c zipfian "$s"
  ycsb_case "t3-update-uniform" string 100 20000 a uniform "$s"
done

# ---- 4. redis-benchmark ------------------------------------------------------------------
SECTION=4
log "table 4: redis-benchmark"
for size in 64 128 256 1024; do
  for s in "${SERVERS[@]}"; do
    flush "$s"
    cmd=(redis-benchmark -p "${PORT[$s]}" -n "$RB_N" -r 100000 -c 50 -t set,get -d "$size" -q --csv)
    quote "${cmd[@]}" >>"$RES/commands.4"; echo >>"$RES/commands.4"
    if alive "$s"; then
      timeout 120 "${cmd[@]}" >"$RES/t4-$size.$s.csv" 2>/dev/null
    fi
  done
done

# ---- 5. TairRoaring: make bench-roaring (scripts/bench-roaring.sh) measures
# and writes section 5; this script keeps the section it finds in $OUT.
SEC5=$(awk '/^## 5\. /{ p = 1 } p' "$OUT" 2>/dev/null)
ELAPSED=$(( $(date +%s) - T0 ))
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
log "all runs done in ${ELAPSED}s; writing $OUT"

# ---- BENCHMARKS.md -------------------------------------------------------------------------
fs_type=$(df -T "$BASE" | awk 'NR==2 { print $2 " (" $1 ", mounted on " $7 ")" }')
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
pmode=$(grep -m1 -o 'durability=.*' "$BASE/persimmon-pmem.log" || true)
mmode=$(grep -m1 -o 'durability=.*' "$BASE/persimmon-msync.log" || true)

commands_block() {
  echo
  echo "<details><summary>exact commands (ports: $(for s in "${SERVERS[@]}"; do printf '%s %s, ' "$s" "${PORT[$s]}"; done | sed 's/, $//'))</summary>"
  echo
  echo '```'
  cat "$RES/commands.$1" 2>/dev/null
  echo '```'
  echo
  echo '</details>'
}

durability_note() { # id: group-commit figures of the two Persimmon modes
  local f out=""
  for s in persimmon-pmem persimmon-msync; do
    f=$RES/$1.$s.json
    [ -f "$f" ] || continue
    out+=$(jq -r --arg s "${s#persimmon-}" 'if .durability.supported and .durability.synced_records > 0 then "\($s): \(.durability.flushes_per_write*1000|round/1000) flushes/write, \(.durability.group_commit_avg_records*100|round/100) records/flush; " else empty end' "$f" 2>/dev/null)
  done
  out=${out%; }
  printf '%s' "${out:-—}"
}

{
  echo "# Benchmarks"
  echo
  echo "Produced by \`make bench-seeds\` (scripts/bench-seeds.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'), Persimmon $rev,"
  echo "in one run of ${ELAPSED} s. Every figure below was measured on this machine in this run; the five"
  echo "servers ran side by side on spare ports and the workloads ran one at a time, each against the five"
  echo "servers in turn (client and server share the two cores). Compare ratios, never the vendors' absolute"
  echo "numbers: the workloads are scaled down (fewer keys and members, seconds instead of minutes, tens of"
  echo "connections instead of hundreds) and say so in each table."
  echo
  echo "## Machine and servers"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| CPU | $(nproc) cores, $cpu |"
  echo "| memory | $mem |"
  echo "| kernel | $(uname -sr) |"
  echo "| filesystem (all data directories) | $fs_type |"
  echo "| redis-server | $(redis-server --version | awk '{print $3}' | sed 's/v=//') (Debian); \`redis-nopersist\`: \`--save '' --appendonly no\`; \`redis-aof-everysec\`: \`--save '' --appendonly yes --appendfsync everysec\`; \`redis-aof-always\`: \`--save '' --appendonly yes --appendfsync always\` |"
  echo "| persimmon-pmem | \`bin/persimmon-server --durability pmem\`: $pmode |"
  echo "| persimmon-msync | \`bin/persimmon-server --durability msync\`: $mmode |"
  echo "| load average (1/5/15 min) | before the run: $LOAD_BEFORE; after: $LOAD_AFTER (other work on the machine shares the cores) |"
  echo "| client | \`bin/persimmon-bench\` (cmd/persimmon-bench), redis-benchmark $(redis-benchmark --version 2>/dev/null | awk '{print $2}') for table 4 |"
  echo
  echo "Cells read \`QPS (average / p99 latency)\`; \"not supported\" means the server answered"
  echo "\`ERR unknown command\` (the run stops at the first such reply); error replies are counted and shown."
  echo "Ratios: pmem ÷ redis = persimmon-pmem over redis-nopersist; pmem ÷ everysec = persimmon-pmem over"
  echo "redis-aof-everysec (the same guarantee off DAX: the write reaches the page cache before the reply,"
  echo "so both survive kill -9 and neither survives power loss); msync ÷ AOF = persimmon-msync over"
  echo "redis-aof-always (both durable on disk before the reply); msync ÷ redis = persimmon-msync over"
  echo "redis-nopersist."
  echo
  echo "Each cell is a single short run. On a shared 2-core machine the run-to-run spread is large: the"
  echo "read-only rows, where redis-nopersist and redis-aof-always do identical work, show it (often ±20%)."
  echo "Read a ratio between about 0.8× and 1.2× as parity; only larger gaps say something."
  echo
  echo "## 1. Eleven common commands (resp-benchmark style)"
  echo
  echo "Scaled: ${SECS} s per command instead of 20 s, $CONNS connections, pipeline 1; loaded collections are"
  echo "100 keys × 1,009 members (prime, so two \`{key sequence}\` counters visit every pair) instead of"
  echo "1,000 × 10,007; GET reads 100,000 loaded keys instead of 10 M; LINDEX reads 100 lists × 1,000"
  echo "elements. The server is flushed (FLUSHALL) before every command. Latencies in ms."
  echo
  echo "| command | workload | redis-nopersist | redis-aof-everysec | redis-aof-always | persimmon-pmem | persimmon-msync | pmem ÷ redis | pmem ÷ everysec | msync ÷ AOF | msync ÷ redis | group commit (pmem; msync) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for row in "${T1[@]}"; do
    IFS='|' read -r name load cmd <<<"$row"
    wl="\`$cmd\`"; [ -n "$load" ] && wl="load ${load%%:*} × \`${load#*:}\`; then \`$cmd\`"
    wl=${wl//|/\\|}
    echo "| $name | $wl | $(cell "$RES/t1-$name.redis-nopersist.json") | $(cell "$RES/t1-$name.redis-aof-everysec.json") | $(cell "$RES/t1-$name.redis-aof-always.json") | $(cell "$RES/t1-$name.persimmon-pmem.json") | $(cell "$RES/t1-$name.persimmon-msync.json") | $(ratio "$RES/t1-$name.persimmon-pmem.json" "$RES/t1-$name.redis-nopersist.json") | $(ratio "$RES/t1-$name.persimmon-pmem.json" "$RES/t1-$name.redis-aof-everysec.json") | $(ratio "$RES/t1-$name.persimmon-msync.json" "$RES/t1-$name.redis-aof-always.json") | $(ratio "$RES/t1-$name.persimmon-msync.json" "$RES/t1-$name.redis-nopersist.json") | $(durability_note "t1-$name") |"
  done
  commands_block 1
  echo
  echo "## 2. YCSB, persistent-memory edition tables (zipfian)"
  echo
  echo "Scaled: string $STR_RECORDS records, other groups $COLL_RECORDS records (fieldcount 10; fieldlength is"
  echo "the value length per field) instead of 8 GB of data; load = 100% insert, C = 100% read, A = 50% read /"
  echo "50% update, zipfian (scrambled, constant 0.99), $THREADS client threads, transaction phases of ${YSECS} s."
  echo "Groups: string SET/GET; hash HSET/HGETALL/HSET one field; list RPUSH/LRANGE 0 -1/LSET; set SADD/SMEMBERS/"
  echo "SADD; zset ZADD/ZRANGE 0 -1 WITHSCORES/ZADD. Each (group, size) starts from FLUSHALL. Latencies in µs."
  for g in string hash list set zset; do
    sizes=$COLL_SIZES; [ "$g" = string ] && sizes=$STR_SIZES
    echo
    echo "### $g"
    echo
    echo "| phase | value | redis-nopersist | redis-aof-everysec | redis-aof-always | persimmon-pmem | persimmon-msync | pmem ÷ redis | pmem ÷ everysec | msync ÷ AOF | msync ÷ redis |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for wl in load c a; do
      for size in $sizes; do
        id=t2-$g-$size-$wl
        echo "| $(tr a-z A-Z <<<"${wl:0:1}")${wl:1} | $size B | $(ycell "$RES/$id.redis-nopersist.json") | $(ycell "$RES/$id.redis-aof-everysec.json") | $(ycell "$RES/$id.redis-aof-always.json") | $(ycell "$RES/$id.persimmon-pmem.json") | $(ycell "$RES/$id.persimmon-msync.json") | $(ratio "$RES/$id.persimmon-pmem.json" "$RES/$id.redis-nopersist.json") | $(ratio "$RES/$id.persimmon-pmem.json" "$RES/$id.redis-aof-everysec.json") | $(ratio "$RES/$id.persimmon-msync.json" "$RES/$id.redis-aof-always.json") | $(ratio "$RES/$id.persimmon-msync.json" "$RES/$id.redis-nopersist.json") |"
      done
    done
  done
  commands_block 2
  echo
  echo "## 3. Disk (ESSD) edition string workloads, 100 B values"
  echo
  echo "Scaled: 20,000 records, $THREADS threads, ${YSECS} s phases. Only the in-memory case is run: every"
  echo "server here keeps the whole data set in memory, so the data-larger-than-memory half of the table has"
  echo "no counterpart on this machine. Latencies in µs."
  echo
  echo "| workload | redis-nopersist | redis-aof-everysec | redis-aof-always | persimmon-pmem | persimmon-msync | pmem ÷ redis | pmem ÷ everysec | msync ÷ AOF | msync ÷ redis |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for id in load read-uniform read-zipfian update-uniform; do
    f=$RES/t3-$id
    echo "| $id | $(ycell "$f.redis-nopersist.json") | $(ycell "$f.redis-aof-everysec.json") | $(ycell "$f.redis-aof-always.json") | $(ycell "$f.persimmon-pmem.json") | $(ycell "$f.persimmon-msync.json") | $(ratio "$f.persimmon-pmem.json" "$f.redis-nopersist.json") | $(ratio "$f.persimmon-pmem.json" "$f.redis-aof-everysec.json") | $(ratio "$f.persimmon-msync.json" "$f.redis-aof-always.json") | $(ratio "$f.persimmon-msync.json" "$f.redis-nopersist.json") |"
  done
  commands_block 3
  echo
  echo "## 4. redis-benchmark (DRAM edition table)"
  echo
  echo "Scaled: \`-n $RB_N -c 50\` instead of \`-n 3000000 -c 256 --threads 16\`; \`--threads\` is left out"
  echo "because on two cores its client threads compete with the server and its rps figures come out"
  echo "quantised (a 2-thread run reported 66,622 rps for both SET and GET). Requests/s (p50 / p99 ms) as"
  echo "redis-benchmark reports them."
  echo
  echo "| test | value | redis-nopersist | redis-aof-everysec | redis-aof-always | persimmon-pmem | persimmon-msync | pmem ÷ redis | pmem ÷ everysec | msync ÷ AOF |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  rb() { # file test → "rps (p50 / p99)" or ""
    [ -f "$1" ] && awk -F, -v t="\"$2\"" '$1 == t { gsub(/"/, ""); printf "%d (%s / %s)", $2, $5, $7 }' "$1"
  }
  rbq() { [ -f "$1" ] && awk -F, -v t="\"$2\"" '$1 == t { gsub(/"/, ""); print $2 }' "$1"; }
  rbr() { local a b; a=$(rbq "$1" "$3"); b=$(rbq "$2" "$3"); if [ -n "$a" ] && [ -n "$b" ]; then awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f×", a / b }'; else echo "—"; fi; }
  for t in SET GET; do
    for size in 64 128 256 1024; do
      f=$RES/t4-$size
      c1=$(rb "$f.redis-nopersist.csv" $t); c2=$(rb "$f.redis-aof-always.csv" $t)
      c3=$(rb "$f.persimmon-pmem.csv" $t); c4=$(rb "$f.persimmon-msync.csv" $t)
      c5=$(rb "$f.redis-aof-everysec.csv" $t)
      echo "| $t | $size B | ${c1:-error} | ${c5:-error} | ${c2:-error} | ${c3:-error} | ${c4:-error} | $(rbr "$f.persimmon-pmem.csv" "$f.redis-nopersist.csv" $t) | $(rbr "$f.persimmon-pmem.csv" "$f.redis-aof-everysec.csv" $t) | $(rbr "$f.persimmon-msync.csv" "$f.redis-aof-always.csv" $t) |"
    done
  done
  commands_block 4
  echo
  if [ -n "$SEC5" ]; then
    printf '%s\n' "$SEC5"
  else
    echo "## 5. TairRoaring bitmaps (the vendors' Go-tool interface)"
    echo
    echo "Run \`make bench-roaring\` (scripts/bench-roaring.sh) to measure and write this section."
  fi
} >"$OUT"
log "wrote $OUT"

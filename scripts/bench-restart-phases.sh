# shellcheck shell=bash
# The phases of scripts/bench-restart.sh after its restart table (issue 11's
# targets 3, 5 and 4; see the comment at the top of bench-restart.sh for
# what each measures and its knobs). Sourced by bench-restart.sh: it uses
# its N, PORT, BASE, PHASES, pids, CG and cleanup.

CG_DIV=${CG_DIV:-4}
CG_SECS=${CG_SECS:-10}
CG_ROUNDS=${CG_ROUNDS:-2}
CG_CHECK=${CG_CHECK:-20000}
LAT_SMALL=${LAT_SMALL:-100000}
LAT_REQ=${LAT_REQ:-200000}
LAT_ROUNDS=${LAT_ROUNDS:-3}
LAT_SERVERS=${LAT_SERVERS:-kix redis}
CKEYS=${CKEYS:-200}
CELEMS=${CELEMS:-1000}
HEAPPROFILE=${HEAPPROFILE:-0}
TICKS=$(getconf CLK_TCK)

declare -A spid sport

# srv_start NAME KIND PORT [CGROUP]: starts a server (kix: Persimmon pmem
# with the key index; redis: redis-server without persistence) on
# $BASE/NAME, inside the memory cgroup CGROUP if given, and waits for PONG.
srv_start() {
  local name=$1 kind=$2 port=$3 cg=${4:-} d="$BASE/$1" cmd
  mkdir -p "$d"
  case $kind in
    kix) cmd=(bin/persimmon-server --port "$port" --dir "$d" --durability pmem --key-index yes --pidfile none) ;;
    redis) cmd=(redis-server --port "$port" --dir "$d" --save '' --appendonly no) ;;
  esac
  [ -n "${io_mode:-}" ] && [ "$kind" = kix ] && cmd+=(--io "$io_mode")
  # The record cache is off by default; the cgroup phase measures it on
  # (RECORD_CACHE=0 measures without it).
  [ "$kind" = kix ] && cmd+=(--record-cache-bytes "${RECORD_CACHE:-auto}")
  [ -n "${pprof_addr:-}" ] && [ "$kind" = kix ] && cmd=(env "PERSIMMON_PPROF=$pprof_addr" "${cmd[@]}")
  if [ -n "$cg" ]; then
    # The shell joins the cgroup, then becomes the server (same pid).
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "${cmd[@]}" >>"$d.log" 2>&1 &
  else
    "${cmd[@]}" >>"$d.log" 2>&1 &
  fi
  spid[$name]=$! sport[$name]=$port
  pids+=("$!")
  local deadline=$((SECONDS + 600))
  until [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ]; do
    kill -0 "${spid[$name]}" 2>/dev/null || { echo "$name: server died:" >&2; tail -5 "$d.log" >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { echo "$name: no PONG in 600 s" >&2; exit 1; }
    sleep 0.02
  done
}

# srv_stop NAME: SHUTDOWN (NOSAVE for redis-server) and wait for the exit.
srv_stop() {
  redis-cli -p "${sport[$1]}" shutdown nosave >/dev/null 2>&1 || true
  wait "${spid[$1]}" 2>/dev/null || true
  rm -rf "${BASE:?}/$1"
}

pcli() { redis-cli -p "${sport[$1]}" "${@:2}" 2>/dev/null | tr -d '\r'; }
infof() { pcli "$1" info "$2" | awk -F: -v f="$3" '$1 == f {print $2}'; }
statusf() { awk -v f="$2" '$1 == f":" {print $2}' "/proc/${spid[$1]}/status"; } # kB
cpu_ticks() { awk '{print $14 + $15}' "/proc/${spid[$1]}/stat"; }
majflt() { awk '{print $12}' "/proc/${spid[$1]}/stat"; }

# load_kv NAME COUNT KEYFMT VALFMT: COUNT SETs of KEYFMT/VALFMT (printf of
# the key number) through redis-cli --pipe.
load_kv() {
  awk -v n="$2" -v kf="$3" -v vf="$4" 'BEGIN{ for (i = 0; i < n; i++) { k = sprintf(kf, i); v = sprintf(vf, i);
    printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v } }' |
    redis-cli -p "${sport[$1]}" --pipe >/dev/null
  [ "$(pcli "$1" dbsize)" = "$2" ] || { echo "$1: load gave $(pcli "$1" dbsize) keys, want $2" >&2; exit 1; }
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {if (NR==0) print 0; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# restart_targets: issue 11's targets 1 and 2 from the restart table.
restart_targets() {
  [ -n "${anonpk[kix]:-}" ] || return 0
  echo
  echo "Targets 1 and 2 (key-index row):"
  local ref=${rsspk[rdb]:-}
  awk -v a="${anonpk[kix]}" -v r="$ref" 'BEGIN{
    printf "  1. anonymous RSS %.1f B/key (target <= 40: %s)", a, (a <= 40 ? "met" : "NOT met")
    if (r != "") printf "; %.3fx redis-server RDB RSS per key %.1f B (target <= 0.5x: %s)", a/r, r, (a/r <= 0.5 ? "met" : "NOT met")
    printf "\n" }'
  awk -v f="${t_first9[kix]}" -v a="${t_all9[kix]}" -v fc="${t_firstc[kix]}" -v ac="${t_allc[kix]}" \
    -v r9="${t_all9[rdb]:-}" -v rc="${t_allc[rdb]:-}" 'BEGIN{
    printf "  2. kill -9: first reply %.3f s (<= 0.5: %s), all keys %.3f s (<= 2: %s)", f, (f <= 0.5 ? "met" : "NOT met"), a, (a <= 2 ? "met" : "NOT met")
    if (r9 != "") printf ", %.1fx faster than redis-server loading its RDB (%.3f s; >= 10x: %s)", r9/a, r9, (r9/a >= 10 ? "met" : "NOT met")
    printf "\n     SHUTDOWN: first reply %.3f s, all keys %.3f s", fc, ac
    if (rc != "") printf ", %.1fx faster than redis-server after SHUTDOWN SAVE (%.3f s)", rc/ac, rc
    printf "\n" }'
}

run_phases() {
  case " $PHASES " in *" cgroup "*) cgroup_phase ;; esac
  case " $PHASES " in *" latency "*) latency_phase ;; esac
  case " $PHASES " in *" collections "*) colls_phase ;; esac
}

# check_answers NAME: GETs (MGET, 100 keys a command) of CG_CHECK keys drawn
# uniformly plus the 1000 first keys, compared with the values loaded;
# prints the number of wrong answers.
check_answers() {
  awk -v n="$N" -v c="$CG_CHECK" 'BEGIN{ srand(11); line = "";
    for (i = 0; i < c + 1000; i++) { k = (i < 1000) ? i : int(rand() * n); line = line sprintf(" k:%014d", k); want[i] = sprintf("v:%014d", k)
      if (i % 100 == 99) { print "MGET" line; line = "" } }
    if (line != "") print "MGET" line }' >"$BASE/check.cmds"
  awk -v n="$N" -v c="$CG_CHECK" 'BEGIN{ srand(11);
    for (i = 0; i < c + 1000; i++) { k = (i < 1000) ? i : int(rand() * n); printf "v:%014d\n", k } }' >"$BASE/check.want"
  redis-cli -p "${sport[$1]}" <"$BASE/check.cmds" 2>&1 | tr -d '\r' >"$BASE/check.got"
  # Lines that differ, plus any length difference.
  awk 'NR == FNR { w[FNR] = $0; nw = FNR; next } { if (w[FNR] != $0) bad++; ng = FNR } END { d = nw - ng; print bad + (d < 0 ? -d : d) }' \
    "$BASE/check.want" "$BASE/check.got"
}

# drop_cache DIR: writes DIR's files back and drops their pages from the
# page cache (fsync, then POSIX_FADV_DONTNEED), so that a server started on
# them faults them in and is charged for them in its own cgroup.
drop_cache() {
  find "$1" -type f -print0 | python3 -c '
import os, sys
for p in sys.stdin.buffer.read().split(b"\0"):
    if p:
        fd = os.open(p, os.O_RDWR)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)'
}

# cgroup_phase: target 3. The data set is loaded once outside the cgroup
# (server "mem"), copied, dropped from the page cache and served by a
# second server started inside the cgroup on the copy (a re-attach);
# loading inside the cgroup is measured after that, with a time limit.
cgroup_phase() {
  echo
  echo "== Target 3: data set ${CG_DIV}x the memory cgroup, $N keys =="
  local rel root
  rel=$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
  root=/sys/fs/cgroup/memory${rel%/}
  if [ ! -w "$root" ] || [ ! -e "$root/memory.limit_in_bytes" ]; then
    echo "skipped: no writable cgroup v1 memory controller at $root"
    return 0
  fi
  local t0 t1 loadrate io_mode=${CG_IO:-}
  [ -n "$io_mode" ] && echo "both Persimmon servers with --io $io_mode"
  srv_start mem kix $((PORT + 1))
  t0=$(date +%s.%N)
  load_kv mem "$N" 'k:%014d' 'v:%014d'
  t1=$(date +%s.%N)
  loadrate=$(awk -v a="$t0" -v b="$t1" -v n="$N" 'BEGIN{printf "%.0f", n/(b-a)}')
  redis-cli -p "${sport[mem]}" shutdown >/dev/null 2>&1 || true
  wait "${spid[mem]}" 2>/dev/null || true
  cp -a "$BASE/mem" "$BASE/cg"
  drop_cache "$BASE/cg"
  srv_start mem kix $((PORT + 1))
  local data limit
  data=$(du -sb "$BASE/cg" | awk '{print $1}')
  limit=$((data / CG_DIV))
  CG=$root/persimmon-bench-restart.$$
  mkdir "$CG"
  echo "$limit" >"$CG/memory.limit_in_bytes"
  srv_start cg kix $((PORT + 2)) "$CG"
  [ "$(pcli cg dbsize)" = "$N" ] || { echo "cg: $(pcli cg dbsize) keys after the restart, want $N" >&2; exit 1; }
  echo "data set (du of the data directory, index included): $((data / 1000000)) MB; cgroup limit $((limit / 1000000)) MB ($CG)"
  echo "the server in the cgroup: $(grep -o 'key index re-attached[^,]*' "$BASE/cg.log" | tail -1); usage $(($(cat "$CG/memory.usage_in_bytes") / 1000000)) MB, RSS anon $(($(statusf cg RssAnon) / 1000)) MB file $(($(statusf cg RssFile) / 1000)) MB"
  declare -A qps us flt
  local round dist s out c0 c1 f0 f1 ops
  for round in $(seq 1 "$CG_ROUNDS"); do
    for dist in uniform zipfian; do
      for s in mem cg; do
        c0=$(cpu_ticks $s) f0=$(majflt $s)
        out=$(bin/persimmon-bench resp -p "${sport[$s]}" -c 50 -s "$CG_SECS" -q --json "GET k:{key $dist $N %014d}")
        c1=$(cpu_ticks $s) f1=$(majflt $s)
        ops=$(echo "$out" | awk -F'[:,]' '/"operations"/ {print $2+0; exit}')
        local q errs
        q=$(echo "$out" | awk -F'[:,]' '/"qps"/ {printf "%.0f", $2; exit}')
        errs=$(echo "$out" | awk -F'[:,]' '/"errors"/ {print $2+0; exit}')
        [ "$errs" = 0 ] || { echo "$s $dist: $errs error replies" >&2; exit 1; }
        qps[$s/$dist]+="$q "
        us[$s/$dist]+="$(awk -v d=$((c1 - c0)) -v t="$TICKS" -v n="$ops" 'BEGIN{printf "%.2f", d*1e6/t/n}') "
        flt[$s/$dist]+="$(awk -v d=$((f1 - f0)) -v n="$ops" 'BEGIN{printf "%.3f", d/n}') "
        echo "  round $round $dist $s: $q GET/s, $(echo "${us[$s/$dist]}" | awk '{print $NF}') us CPU/GET, $(echo "${flt[$s/$dist]}" | awk '{print $NF}') major faults/GET"
      done
    done
  done
  local wrong_mem wrong_cg oom
  wrong_mem=$(check_answers mem)
  wrong_cg=$(check_answers cg)
  oom=$(awk '$1 == "oom_kill" {print $2}' "$CG/memory.oom_control")
  kill -0 "${spid[cg]}" 2>/dev/null || { echo "the server in the cgroup died" >&2; exit 1; }
  echo
  echo "| $N keys, GET -c 50 | fully in memory: GET/s | in the cgroup (1/$CG_DIV): GET/s | ratio | target | CPU us/GET in memory / in cgroup | major faults/GET in cgroup |"
  echo "|---|---|---|---|---|---|---|"
  for dist in uniform zipfian; do
    local qm qc tgt
    qm=$(echo "${qps[mem/$dist]}" | median) qc=$(echo "${qps[cg/$dist]}" | median)
    tgt=0.2; [ $dist = zipfian ] && tgt=0.6
    awk -v d="$dist" -v m="$qm" -v c="$qc" -v t="$tgt" -v um="$(echo "${us[mem/$dist]}" | median)" -v uc="$(echo "${us[cg/$dist]}" | median)" \
      -v fc="$(echo "${flt[cg/$dist]}" | median)" 'BEGIN{
      printf "| %s%s | %.0f | %.0f | %.2fx | >= %.1fx: %s | %.1f / %.1f | %.3f |\n", d, (d == "zipfian" ? " 0.99" : ""), m, c, c/m, t, (c/m >= t ? "met" : "NOT met"), um, uc, fc }'
  done
  echo
  echo "medians of $CG_ROUNDS interleaved rounds of $CG_SECS s (persimmon-bench resp -c 50 \"GET k:{key DIST $N %014d}\");"
  echo "OOM kills in the cgroup: ${oom:-n/a} (memory.oom_control), failcnt $(cat "$CG/memory.failcnt"), max usage $(($(cat "$CG/memory.max_usage_in_bytes") / 1000000)) MB of $((limit / 1000000)) MB;"
  echo "wrong answers of $((CG_CHECK + 1000)) sampled GETs: $wrong_mem in memory, $wrong_cg in the cgroup; server RSS in the cgroup now: anon $(($(statusf cg RssAnon) / 1000)) MB, file $(($(statusf cg RssFile) / 1000)) MB"
  srv_stop mem
  srv_stop cg
  # Loading inside the cgroup: a fresh server, the same N SETs, at most
  # CG_LOAD_SECS seconds.
  local loaded rate
  srv_start cgload kix $((PORT + 2)) "$CG"
  t0=$(date +%s.%N)
  awk -v n="$N" 'BEGIN{ for (i = 0; i < n; i++) { k = sprintf("k:%014d", i); v = sprintf("v:%014d", i);
    printf "*3\r\n$3\r\nSET\r\n$16\r\n%s\r\n$16\r\n%s\r\n", k, v } }' |
    timeout "${CG_LOAD_SECS:-30}" redis-cli -p "${sport[cgload]}" --pipe >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  loaded=$(timeout 20 redis-cli -p "${sport[cgload]}" dbsize 2>/dev/null | tr -d '\r' || echo "no reply")
  case $loaded in
    '' | *[!0-9]*) loaded="? (DBSIZE had no reply within 20 s)" rate="?" ;;
    *) rate=$(awk -v a="$t0" -v b="$t1" -v n="$loaded" 'BEGIN{printf "%.0f", n/(b-a)}') ;;
  esac
  echo "loading the $N keys inside the cgroup: $loaded keys in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s (limit ${CG_LOAD_SECS:-30} s), $rate SET/s against $loadrate SET/s outside it; failcnt $(cat "$CG/memory.failcnt"), OOM kills $(awk '$1 == "oom_kill" {print $2}' "$CG/memory.oom_control"), server alive: $(kill -0 "${spid[cgload]}" 2>/dev/null && echo yes || echo NO)"
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
  kill -9 "${spid[cgload]}" 2>/dev/null || true
  wait "${spid[cgload]}" 2>/dev/null || true
  rm -rf "${BASE:?}/cgload"
  rmdir "$CG" && CG=
}

# bench_pct OUTPUT TEST: redis-benchmark's p99.9 (ms) of TEST, the first
# row of its percentile distribution at or above 99.9%, and its requests/s.
bench_p999() {
  echo "$1" | tr '\r' '\n' | awk -v t="====== $2 ======" '
    $0 == t {on = 1; next} /^====== / {on = 0}
    on && /^[0-9.]+% <=/ && !done { p = $1; sub("%", "", p); if (p + 0 >= 99.9) { v = $3; done = 1 } }
    on && /throughput summary/ { r = $3 }
    END { printf "%s %s", v, r }'
}

# latency_phase: target 5.
latency_phase() {
  echo
  echo "== Target 5: redis-benchmark -c 50 SET/GET at $LAT_SMALL and $N keys =="
  local names=() srv size port=$((PORT + 3)) name
  for srv in $LAT_SERVERS; do
    for size in "$LAT_SMALL" "$N"; do
      name=lat-$srv-$size
      srv_start "$name" "$srv" "$port"
      port=$((port + 1))
      load_kv "$name" "$size" 'key:%012d' 'v:%014d' # redis-benchmark's key names (-r), 16 B values
      names+=("$name")
    done
  done
  for name in "${names[@]}"; do
    case $name in lat-kix-*) pcli "$name" config resetstat >/dev/null ;; esac
  done
  declare -A p9s p9g rs rg
  local round out r
  for round in $(seq 1 "$LAT_ROUNDS"); do
    for name in "${names[@]}"; do
      size=${name##*-}
      out=$(redis-benchmark -p "${sport[$name]}" -c 50 -n "$LAT_REQ" -r "$size" -d 16 -t set,get --precision 3 2>/dev/null)
      r=$(bench_p999 "$out" SET)
      p9s[$name]+="${r% *} " rs[$name]+="${r#* } "
      r=$(bench_p999 "$out" GET)
      p9g[$name]+="${r% *} " rg[$name]+="${r#* } "
      echo "  round $round $name: SET p99.9 $(echo "${p9s[$name]}" | awk '{print $NF}') ms, GET p99.9 $(echo "${p9g[$name]}" | awk '{print $NF}') ms"
    done
  done
  echo
  echo "| server | keys | SET/s | SET p99.9 | GET/s | GET p99.9 | Go GC cycles | GC pauses p50 / p99 / p99.9 / max | Go heap | key-index checkpoint: longest lock hold, last staged |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  local gc
  for name in "${names[@]}"; do
    gc="n/a | n/a"
    case $name in lat-kix-*)
      gc="$(infof "$name" stats go_gc_cycles) | $(infof "$name" stats go_gc_pause_p50_us) / $(infof "$name" stats go_gc_pause_p99_us) / $(infof "$name" stats go_gc_pause_p999_us) / $(infof "$name" stats go_gc_pause_max_us) µs | $(($(infof "$name" memory go_heap_bytes) / 1000000)) MB | $(infof "$name" memory key_index_checkpoint_hold_max_us) µs, $(infof "$name" memory key_index_last_checkpoint_staged)" ;;
    *) gc="$gc | n/a | n/a" ;;
    esac
    srv=${name#lat-}; srv=${srv%-*}
    [ "$srv" = kix ] && srv="Persimmon pmem, key index" || srv="redis-server $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-), no persistence"
    echo "| $srv | ${name##*-} | $(echo "${rs[$name]}" | median) | $(echo "${p9s[$name]}" | median) ms | $(echo "${rg[$name]}" | median) | $(echo "${p9g[$name]}" | median) ms | $gc |"
  done
  echo
  for srv in $LAT_SERVERS; do
    awk -v s="$srv" -v ss="$(echo "${p9s[lat-$srv-$LAT_SMALL]}" | median)" -v sb="$(echo "${p9s[lat-$srv-$N]}" | median)" \
      -v gs="$(echo "${p9g[lat-$srv-$LAT_SMALL]}" | median)" -v gb="$(echo "${p9g[lat-$srv-$N]}" | median)" -v big="$N" -v small="$LAT_SMALL" 'BEGIN{
      printf "%s: p99.9 at %d keys / at %d keys: SET %.2fx, GET %.2fx", s, big, small, sb/ss, gb/gs
      if (s == "kix") printf " (target <= 2x: %s)", (sb/ss <= 2 && gb/gs <= 2 ? "met" : "NOT met")
      printf "\n" }'
  done
  echo "medians of $LAT_ROUNDS interleaved rounds of redis-benchmark -c 50 -n $LAT_REQ -r KEYS -d 16 -t set,get --precision 3; GC figures and the longest checkpoint hold (INFO key_index_checkpoint_hold_max_us) since CONFIG RESETSTAT after the preload (all rounds); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for name in "${names[@]}"; do srv_stop "$name"; done
}

# coll_load NAME TYPE: CKEYS keys of CELEMS elements each (16-byte fields
# and members, 64-byte values), 100 elements a command.
coll_load() {
  awk -v t="$2" -v nk="$CKEYS" -v ne="$CELEMS" 'function arg(s) { return sprintf("$%d\r\n%s\r\n", length(s), s) }
    BEGIN{ for (k = 0; k < nk; k++) { key = sprintf("c:%014d", k)
      for (e = 0; e < ne; e += step) {
        step = (t == "stream") ? 1 : 100; if (e + step > ne) step = ne - e
        cmd = ""; n = 0
        for (j = e; j < e + step; j++) {
          f = sprintf("f:%014d", j); v = sprintf("v%063d", k * ne + j)
          if (t == "hash") { cmd = cmd arg(f) arg(v); n += 2 }
          else if (t == "set") { cmd = cmd arg(f); n++ }
          else if (t == "zset") { cmd = cmd arg(j) arg(f); n += 2 }
          else if (t == "list") { cmd = cmd arg(v); n++ }
          else { cmd = cmd arg("*") arg("f") arg(v); n += 3 }
        }
        name = (t == "hash") ? "HSET" : (t == "set") ? "SADD" : (t == "zset") ? "ZADD" : (t == "list") ? "RPUSH" : "XADD"
        printf "*%d\r\n%s%s%s", n + 2, arg(name), arg(key), cmd } } }' |
    redis-cli -p "${sport[$1]}" --pipe >/dev/null
}

# colls_phase: target 4.
colls_phase() {
  echo
  echo "== Target 4: DRAM per element, $CKEYS keys x $CELEMS elements per type =="
  declare -A anon used
  local t s name a0 u0 a1 u1 n len pprof_addr=
  [ "$HEAPPROFILE" = 1 ] && pprof_addr=127.0.0.1:$((PORT + 8))
  for t in hash set zset list stream; do
    for s in redis kix; do
      name=coll-$s-$t
      srv_start "$name" "$s" $((PORT + 7))
      pcli "$name" memory purge >/dev/null
      a0=$(statusf "$name" RssAnon)
      u0=$(infof "$name" memory used_memory)
      [ "$s" = kix ] && u0=$(infof "$name" memory go_heap_bytes)
      coll_load "$name" "$t"
      case $t in hash) len=HLEN ;; set) len=SCARD ;; zset) len=ZCARD ;; list) len=LLEN ;; stream) len=XLEN ;; esac
      n=$(for k in $(seq 0 $((CKEYS - 1))); do printf '%s c:%014d\n' "$len" "$k"; done | redis-cli -p "${sport[$name]}" | awk '{s += $1} END {print s}')
      [ "$n" = $((CKEYS * CELEMS)) ] || { echo "$name: $n elements, want $((CKEYS * CELEMS))" >&2; exit 1; }
      sleep 1 # a checkpoint interval: the server's background work settles
      pcli "$name" memory purge >/dev/null
      a1=$(statusf "$name" RssAnon)
      u1=$(infof "$name" memory used_memory)
      [ "$s" = kix ] && u1=$(infof "$name" memory go_heap_bytes)
      anon[$s/$t]=$(awk -v a="$a0" -v b="$a1" -v n="$n" 'BEGIN{printf "%.1f", (b-a)*1024/n}')
      used[$s/$t]=$(awk -v a="$u0" -v b="$u1" -v n="$n" 'BEGIN{printf "%.1f", (b-a)/n}')
      if [ "$s" = kix ] && [ -n "${pprof_addr:-}" ]; then
        echo "  Persimmon's Go heap after loading the $t keys (go tool pprof -top -sample_index=inuse_space):"
        ${GO:-go} tool pprof -top -sample_index=inuse_space "http://$pprof_addr/debug/pprof/heap" 2>/dev/null |
          awk '/^ *flat/ {on = 1; next} on && $1 != "0" && n++ < 6' | sed 's/^/    /'
      fi
      srv_stop "$name"
    done
  done
  echo
  echo "| $CELEMS elements per key, $CKEYS keys | redis-server: anon RSS / element | redis-server: used_memory / element | Persimmon: anon RSS / element | Persimmon: Go heap / element | DRAM ratio (anon RSS) | target <= 0.5x |"
  echo "|---|---|---|---|---|---|---|"
  for t in hash set zset list stream; do
    awk -v t="$t" -v ra="${anon[redis/$t]}" -v ru="${used[redis/$t]}" -v pa="${anon[kix/$t]}" -v pu="${used[kix/$t]}" 'BEGIN{
      r = (ra > 0) ? pa/ra : 0
      printf "| %s | %.1f B | %.1f B | %.1f B | %.1f B | %.2fx | %s |\n", t, ra, ru, pa, pu, r, (r <= 0.5 ? "met" : "NOT met") }'
  done
  echo
  echo "fields and members 16 B (f:%014d), values 64 B, 100 elements a command (streams: one XADD * f VALUE per entry) through redis-cli --pipe;"
  echo "growth from an empty server after MEMORY PURGE; load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

#!/usr/bin/env bash
# A/B of server builds against each other and redis-server, side by side:
# every server runs at once on PORT, PORT+1, ...; each round runs every test
# against every server back to back (the order rotates per round), so each
# pair of numbers saw the same machine load. Prints the medians of requests/s
# and server CPU us per request (user+system, all threads, /proc/PID/stat),
# and per-round ratios to the first server named.
#
#   BINS="redis=redis main=/tmp/main-server new=bin/persimmon-server" PORT=23040 ROUNDS=8 scripts/bench-ab.sh
#
# BINS: name=path, or name=redis for redis-server without persistence;
# TESTS among set50 get50 setP16 getP16 set1 (default: all but set1); N
# requests (x4 for -P 16); EXTRA: more flags for the Persimmon servers
# (pmem mode); KEEP: a file to copy the raw per-round results to.
set -u
PORT=${PORT:-23040}; ROUNDS=${ROUNDS:-8}; N=${N:-100000}
TESTS=${TESTS:-"set50 get50 setP16 getP16"}
TICKS=$(getconf CLK_TCK)
BASE=$(mktemp -d "${TMPDIR:-/tmp}/persimmon-ab.XXXXXX")
declare -A pids ports
i=0; names=()
for sb in $BINS; do
  s=${sb%%=*}; b=${sb#*=}; p=$((PORT+i)); i=$((i+1)); names+=($s); ports[$s]=$p
  mkdir -p $BASE/$s
  if [ "$b" = redis ]; then redis-server --port $p --dir $BASE/$s --save '' --appendonly no >$BASE/$s.log 2>&1 &
  else $b --port $p --dir $BASE/$s --durability pmem ${EXTRA:-} >$BASE/$s.log 2>&1 & fi
  pids[$s]=$!
done
for s in ${names[@]}; do for k in $(seq 200); do redis-cli -p ${ports[$s]} ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis-benchmark -p ${ports[$s]} -d 64 -r 100000 -q -n 200000 -c 50 -t set >/dev/null 2>&1; done
ticks() { awk '{print $14+$15}' /proc/$1/stat; }
out=$BASE/res; : > $out
for r in $(seq $ROUNDS); do
  for t in $TESTS; do
    case $t in
      set50) a="-c 50 -t set"; n=$N;; get50) a="-c 50 -t get"; n=$N;;
      setP16) a="-c 50 -P 16 -t set"; n=$((N*4));; getP16) a="-c 50 -P 16 -t get"; n=$((N*4));;
      set1) a="-c 1 -t set"; n=$((N/10));;
    esac
    k=${#names[@]}; off=$(( (r-1) % k ))
    for j in $(seq 0 $((k-1))); do
      s=${names[$(( (j+off) % k ))]}; pid=${pids[$s]}
      c0=$(ticks $pid)
      rps=$(redis-benchmark -p ${ports[$s]} -d 64 -r 100000 -q --csv -n $n $a 2>/dev/null | grep -v '"test"' | cut -d, -f2 | tr -d '"')
      c1=$(ticks $pid)
      echo "$r $t $s $rps $(awk -v d=$((c1-c0)) -v tk=$TICKS -v n=$n 'BEGIN{printf "%.3f", d*1e6/tk/n}')" >> $out
    done
  done
done
for s in ${names[@]}; do kill ${pids[$s]}; done; wait 2>/dev/null
python3 - $out "${names[@]}" <<'PY'
import sys, statistics as st, collections
rows=[l.split() for l in open(sys.argv[1])]; names=sys.argv[2:]
d=collections.defaultdict(dict)
for r,t,s,rps,cpu in rows: d[(t,int(r))][s]=(float(rps),float(cpu))
tests=[]
for r,t,s,rps,cpu in rows:
    if t not in tests: tests.append(t)
ref=names[0]
for t in tests:
    rs=[k[1] for k in d if k[0]==t]
    line=f"{t:7s}"
    for s in names:
        rp=[d[(t,r)][s][0] for r in rs]; cp=[d[(t,r)][s][1] for r in rs]
        line+=f" | {s}: {st.median(rp):9.0f} rps {st.median(cp):5.2f} us"
    print(line)
    for s in names[1:]:
        rr=[d[(t,r)][s][0]/d[(t,r)][ref][0] for r in rs]; cr=[d[(t,r)][s][1]/d[(t,r)][ref][1] for r in rs]
        print(f"        {s}/{ref}: rps ratio median {st.median(rr):.3f} (per round {' '.join('%.2f'%x for x in rr)}); cpu ratio median {st.median(cr):.3f} (per round {' '.join('%.2f'%x for x in cr)})")
PY
[ -n "${KEEP:-}" ] && cp $out "$KEEP"; rm -rf $BASE

#!/usr/bin/env bash
# SET and GET of one big value, side by side: redis-server (no persistence,
# and AOF everysec: pmem mode's guarantee on a non-DAX filesystem) and
# Persimmon in both I/O modes (io=loop, io=goroutine), each started once on a
# fresh directory and timed in interleaved rounds. Each operation is timed
# from the client (a raw-socket RESP client in Python: the whole command sent,
# to the last byte of the reply read), on a fresh key per round; the server's
# CPU (user+system, all threads, /proc/PID/stat) is read around it. The table
# gives the median of the rounds and the ratio to redis-server without
# persistence measured in the same rounds, and round 1's SET alone: a
# server's first big SET reads into newly allocated memory, later ones
# (within 10 s) into the buffer the one before gave back (Persimmon's spare
# query buffer, server/querybuf.go; in Redis, jemalloc keeps a freed big
# extent's pages for a while too).
#
#   scripts/bench-bigvalue.sh                     # 100 MB, 3 rounds
#   SIZE=$((512<<20)) ROUNDS=5 scripts/bench-bigvalue.sh
#   SERVERS="redis-nopersist loop" scripts/bench-bigvalue.sh
#
# SIZE bytes (100000000); ROUNDS (3); MODE Persimmon's --durability (pmem);
# SERVERS among redis-nopersist redis-everysec loop goroutine (all);
# PORT the first of four ports (17210).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-100000000}
ROUNDS=${ROUNDS:-3}
MODE=${MODE:-pmem}
SERVERS=${SERVERS:-redis-nopersist redis-everysec loop goroutine}
PORT=${PORT:-17210}
BASE=$(mktemp -d "${TMPDIR:-/tmp}/persimmon-bigvalue.XXXXXX")
BIN=${PERSIMMON_BIN:-$BASE/persimmon-server}

command -v redis-server >/dev/null || { echo "redis-server not found" >&2; exit 1; }
[ -n "${PERSIMMON_BIN:-}" ] || go build -o "$BIN" ./cmd/persimmon-server

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$BASE"; }
trap cleanup EXIT

ports=()
i=0
for s in $SERVERS; do
  port=$((PORT + i)); i=$((i + 1))
  dir=$BASE/$s; mkdir -p "$dir"
  case $s in
    redis-nopersist) redis-server --port "$port" --dir "$dir" --save '' --appendonly no --proto-max-bulk-len 2gb >"$dir.log" 2>&1 & ;;
    redis-everysec)  redis-server --port "$port" --dir "$dir" --save '' --appendonly yes --appendfsync everysec --proto-max-bulk-len 2gb >"$dir.log" 2>&1 & ;;
    loop|goroutine)  "$BIN" --port "$port" --dir "$dir" --durability "$MODE" --io "$s" --pidfile none >"$dir.log" 2>&1 & ;;
    *) echo "unknown server $s" >&2; exit 2 ;;
  esac
  pids+=($!)
  ports+=("$s=$port=$!")
  for _ in $(seq 1 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
# Persimmon's proto-max-bulk-len default is Redis's 512 MB; a bigger SIZE
# needs it raised like redis-server's above.
for sp in "${ports[@]}"; do
  s=${sp%%=*}; rest=${sp#*=}; port=${rest%%=*}
  case $s in loop|goroutine) redis-cli -p "$port" config set proto-max-bulk-len 2gb >/dev/null 2>&1 || true ;; esac
done

echo "SET/GET of one ${SIZE}-byte value; $ROUNDS interleaved rounds; Persimmon --durability $MODE; load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$SIZE" "$ROUNDS" "$(getconf CLK_TCK)" "${ports[@]}" <<'EOF'
import os, socket, statistics, sys, time

size, rounds, ticks = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
servers = [a.split("=") for a in sys.argv[4:]]
value = os.urandom(size)

def cpu(pid):
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / ticks  # utime, stime (fields 14, 15)

def line(s):
    b = b""
    while not b.endswith(b"\r\n"):
        c = s.recv(1)
        if not c:
            raise EOFError
        b += c
    return b

def set_cmd(key):
    return b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n" % (len(key), key, size)

buf = bytearray(size + 2)
def get(s, key):
    s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(key), key))
    h = line(s)
    assert h == b"$%d\r\n" % size, h[:80]
    mv, got = memoryview(buf), 0
    while got < size + 2:
        n = s.recv_into(mv[got:])
        if n == 0:
            raise EOFError
        got += n

res = {name: {"set": [], "get": [], "setcpu": [], "getcpu": []} for name, _, _ in servers}
for r in range(rounds):
    for name, port, pid in servers:
        s = socket.create_connection(("127.0.0.1", int(port)))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = b"big:%d" % r
        c0, t0 = cpu(pid), time.perf_counter()
        s.sendall(set_cmd(key)); s.sendall(value); s.sendall(b"\r\n")
        rep = line(s)
        t1, c1 = time.perf_counter(), cpu(pid)
        assert rep == b"+OK\r\n", rep
        get(s, key)
        t2, c2 = time.perf_counter(), cpu(pid)
        assert bytes(buf[:64]) == value[:64] and bytes(buf[size - 64:size]) == value[-64:]
        s.sendall(b"*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n" % (len(key), key)); line(s)
        s.close()
        for k, v in (("set", t1 - t0), ("get", t2 - t1), ("setcpu", c1 - c0), ("getcpu", c2 - c1)):
            res[name][k].append(v)
        print("round %d  %-16s SET %7.1f ms (server CPU %6.1f ms)   GET %7.1f ms (server CPU %6.1f ms)" % (
            r + 1, name, (t1 - t0) * 1e3, (c1 - c0) * 1e3, (t2 - t1) * 1e3, (c2 - c1) * 1e3), flush=True)

ref = res.get("redis-nopersist")
print()
print("| server | SET ms (median) | × redis | SET server CPU ms | SET ms round 1 | GET ms (median) | × redis | GET server CPU ms |")
print("|---|---|---|---|---|---|---|---|")
for name, _, _ in servers:
    m = {k: statistics.median(v) for k, v in res[name].items()}
    rs = "%.2f" % (m["set"] / statistics.median(ref["set"])) if ref else "-"
    rg = "%.2f" % (m["get"] / statistics.median(ref["get"])) if ref else "-"
    print("| %s | %.1f | %s | %.1f | %.1f | %.1f | %s | %.1f |" % (name, m["set"] * 1e3, rs, m["setcpu"] * 1e3, res[name]["set"][0] * 1e3, m["get"] * 1e3, rg, m["getcpu"] * 1e3))
EOF

#!/usr/bin/env bash
# readme-check: run the README's quick start as a newcomer would, on a fresh
# clone in a temporary directory, and check what it prints.
#
# The commands are read from README.md itself: every line of the ```sh
# blocks of the "## Quick start" section, in order, with the README's port
# (6380) replaced by a free one. So the README cannot show a command this
# script does not run.
#
#   make run ...    started in the background; the check waits for "Ready to
#                   accept connections" (the first one must also print what
#                   the build is doing) and for the pidfile to name the server
#   make test       skipped (.ci/run runs it)
#   kill -9 ...     must kill the server by its PID; the check waits for
#                   `make run` to end
#   ... shutdown    the server must exit cleanly and remove its pidfile
#   anything else   run with bash in the clone; a comment "# → WORD" says
#                   the output must be exactly WORD
#
# A line that kills by name (pkill, killall) or a make run / redis-cli line
# without the README's port fails the check without being run: it would
# reach servers this check did not start.
#
# It clones the committed HEAD (uncommitted edits are not checked). Usage:
# scripts/readme-check.sh (make readme-check). Needs git, go, redis-cli.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
for tool in git go redis-cli make; do
  command -v "$tool" >/dev/null 2>&1 || { echo "readme-check: $tool is not installed" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/persimmon-readme.XXXXXX)
bg_pids=()
cleanup() {
  # Stop only what this script started: the `make run` processes and the
  # server whose PID the clone's pidfile holds.
  local pidfile="$tmp/persimmon/data/persimmon.pid"
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(cat "$pidfile")
    if [ -n "$pid" ] && grep -qa persimmon-server "/proc/$pid/cmdline" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  for pid in "${bg_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "readme-check: FAIL: $*" >&2
  for log in "$tmp"/run*.log; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -20 "$log" >&2; }
  done
  exit 1
}

# A free loopback port: nothing accepts on it.
port=""
for _ in $(seq 1 100); do
  p=$((20000 + RANDOM % 40000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    port=$p
    break
  fi
done
[ -n "$port" ] || fail "no free port found"

git clone -q "$root" "$tmp/persimmon"
cd "$tmp/persimmon"
echo "readme-check: $(git log -1 --format='%h %s' | cut -c1-72) in $tmp/persimmon, port $port"

# The quick start's sh blocks, one command a line.
mapfile -t lines < <(awk '
  /^## / { inside = ($0 == "## Quick start") ; next }
  inside && /^```sh$/ { code = 1; next }
  inside && /^```/ { code = 0; next }
  inside && code && NF { print }
' README.md)
[ ${#lines[@]} -gt 0 ] || fail "README.md has no sh block under \"## Quick start\""

pidfile=data/persimmon.pid
make_pid=""
runs=0 checked=0 kills=0 shutdowns=0

wait_make_end() { # $1: what, $2: want status ("zero" or "nonzero")
  local status=0
  for _ in $(seq 1 300); do
    kill -0 "$make_pid" 2>/dev/null || break
    sleep 0.1 # polling the make process, bounded (30 s)
  done
  kill -0 "$make_pid" 2>/dev/null && fail "$1: make run still running 30 s later"
  wait "$make_pid" || status=$?
  if [ "$2" = zero ] && [ "$status" -ne 0 ]; then fail "$1: make run exited $status, want 0"; fi
  if [ "$2" = nonzero ] && [ "$status" -eq 0 ]; then fail "$1: make run exited 0 after a kill -9"; fi
  make_pid=""
}

for line in "${lines[@]}"; do
  cmd=$(sed -E 's/[[:space:]]+#.*$//' <<<"$line")
  cmd=${cmd//6380/$port}
  want=""
  if [[ $line =~ \#\ →\ ([^[:space:]]+) ]]; then
    want=${BASH_REMATCH[1]}
  fi
  echo "readme-check: \$ $cmd"
  # Never run what would reach other people's servers: a kill by name
  # (pkill, killall: every Persimmon on the machine) or a command on the
  # default port instead of the README's 6380 (replaced by the free port).
  case "$cmd" in
  *pkill* | *killall*) fail "the README kills by name ('$cmd'): show the pidfile way" ;;
  "make run"* | redis-cli*) [[ $line == *6380* ]] || fail "'$line' does not use the README's port 6380" ;;
  esac
  case "$cmd" in
  "make test"*)
    echo "readme-check:   (skipped: .ci/run runs the tests)"
    ;;
  "make run"*)
    [ -z "$make_pid" ] || fail "'$cmd' while the previous make run still runs"
    runs=$((runs + 1))
    log="$tmp/run$runs.log"
    bash -c "$cmd" >"$log" 2>&1 &
    make_pid=$!
    bg_pids+=("$make_pid")
    ready=""
    for _ in $(seq 1 6000); do # up to 10 minutes: a cold first build on a busy machine
      if grep -q "Ready to accept connections" "$log"; then ready=1; break; fi
      kill -0 "$make_pid" 2>/dev/null || break
      sleep 0.1 # polling the log, bounded
    done
    [ -n "$ready" ] || fail "'$cmd' did not get ready"
    if [ "$runs" -eq 1 ]; then
      grep -q "^building bin/persimmon-server" "$log" || fail "the first make run did not say what it builds"
    fi
    [ -f "$pidfile" ] || fail "no $pidfile after '$cmd'"
    spid=$(cat "$pidfile")
    grep -qa persimmon-server "/proc/$spid/cmdline" 2>/dev/null || fail "$pidfile holds $spid, not a persimmon-server"
    echo "readme-check:   ready, server PID $spid"
    ;;
  *)
    [[ $cmd == *"kill -9"* ]] && { [ -n "$make_pid" ] || fail "kill -9 with no server"; killed=$(cat "$pidfile"); }
    out=$(bash -c "$cmd" 2>&1) || fail "'$cmd' failed: $out"
    echo "readme-check:   $out"
    if [ -n "$want" ]; then
      [ "$out" = "$want" ] || fail "'$cmd' printed '$out', the README says '$want'"
      checked=$((checked + 1))
    fi
    if [[ $cmd == *"kill -9"* ]]; then
      wait_make_end "$cmd" nonzero
      kill -0 "$killed" 2>/dev/null && fail "server $killed survived '$cmd'"
      kills=$((kills + 1))
    elif [[ $cmd == *shutdown* ]]; then
      wait_make_end "$cmd" zero
      [ ! -f "$pidfile" ] || fail "$pidfile left after a clean shutdown"
      shutdowns=$((shutdowns + 1))
    fi
    ;;
  esac
done

# The README must keep showing the whole story: a write, a crash by PID,
# a restart that still has the write, a clean stop.
[ "$runs" -ge 2 ] || fail "the quick start starts the server $runs time(s), want a restart"
[ "$kills" -ge 1 ] || fail "the quick start shows no kill -9"
[ "$shutdowns" -ge 1 ] || fail "the quick start shows no clean stop"
[ "$checked" -ge 3 ] || fail "only $checked outputs checked"
[ -z "$make_pid" ] || fail "the quick start leaves the server running"
echo "readme-check: ok ($runs starts, $kills kill -9, $checked outputs checked)"

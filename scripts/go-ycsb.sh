#!/usr/bin/env bash
# go-ycsb: build go-ycsb (module github.com/pingcap/go-ycsb, from the Go
# module proxy) into bin/tools for e2e TestGoYCSB, with its workload files
# beside it in bin/tools/go-ycsb-workloads. .ci/run calls it.
#
# `go install github.com/pingcap/go-ycsb/cmd/go-ycsb@VERSION` refuses the
# module (its go.mod has a replace directive), so the module is downloaded
# with `go mod download` and built in a writable copy of its own directory,
# with its own go.mod and go.sum: nothing of it is edited.
#
# Idempotent: a bin/tools/go-ycsb already built at this version is kept.
# A failed build is not fatal: bin/tools/go-ycsb.unavailable then says why,
# and TestGoYCSB skips with that text.
set -uo pipefail

version=v1.0.3
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/bin/tools"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
mkdir -p "$tools"

if [ -x "$tools/go-ycsb" ] && [ "$(cat "$tools/go-ycsb.version" 2>/dev/null)" = "$version" ] &&
  [ -f "$tools/go-ycsb-workloads/workloada" ]; then
  echo "go-ycsb $version: already in bin/tools"
  exit 0
fi
rm -f "$tools/go-ycsb" "$tools/go-ycsb.version" "$tools/go-ycsb.unavailable"
rm -rf "$tools/go-ycsb-workloads"

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
log="$work/log"

fail() {
  {
    echo "go-ycsb $version could not be built ($1): scripts/go-ycsb.sh; its output ends:"
    tail -n 20 "$log"
  } >"$tools/go-ycsb.unavailable"
  cat "$tools/go-ycsb.unavailable" >&2
  exit 0
}

echo "go-ycsb $version: downloading the module and building it (a first build fetches its dependencies: minutes)"
# Outside any module, so the project's go.mod is not touched.
mkdir "$work/dl"
dir=$(cd "$work/dl" && go mod download -json "github.com/pingcap/go-ycsb@$version" 2>"$log" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir" ] || fail "go mod download"
cp -R "$dir" "$work/src" && chmod -R u+w "$work/src" || fail "copy"
(cd "$work/src" && GOFLAGS=-mod=mod go build -o "$tools/go-ycsb" ./cmd/go-ycsb) >>"$log" 2>&1 || fail "go build"
cp -R "$work/src/workloads" "$tools/go-ycsb-workloads" || fail "workloads"
echo "$version" >"$tools/go-ycsb.version"
echo "go-ycsb $version: built bin/tools/go-ycsb"

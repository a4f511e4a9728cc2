#!/usr/bin/env bash
# Mutation check of the crash-image test: delete each Flush / Drain (fence) /
# Persist / Msync call site of the non-test code of pmem, arena and wal (and
# recovery's), one
# at a time, run the crash-image tests (default samples) on the mutant and
# report whether they fail. Restores every file afterwards.
#
#   crashimage/mutations.sh            # all sites
#   crashimage/mutations.sh 3 5        # sites 3 and 5 only
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}

# site|file|exact text|replacement (python string escapes allowed)
sites=(
  "wal.persistPending: seg.Persist of the group commit|wal/wal.go|if err := seg.Persist(from, tail-from); err != nil {|if err := error(nil); err != nil {"
  "arena.seal: Persist of the records before the seal word|arena/arena.go|if err := s.region.Persist(from, end-from); err != nil {|if err := error(nil); err != nil {"
  "arena.seal: Persist of the seal word|arena/arena.go|if err := s.region.Persist(sealWordOffset, 8); err != nil {\n\t\treturn err\n\t}\n\ts.sealedEnd.Store(end)|if err := error(nil); err != nil {\n\t\treturn err\n\t}\n\ts.sealedEnd.Store(end)"
  "arena.Unseal: Persist of the cleared seal word|arena/arena.go|if err := s.region.Persist(sealWordOffset, 8); err != nil {\n\t\treturn err\n\t}\n\ts.sealedEnd.Store(0)|if err := error(nil); err != nil {\n\t\treturn err\n\t}\n\ts.sealedEnd.Store(0)"
  "arena.create: Persist of a new segment's header|arena/arena.go|if err := r.Persist(0, HeaderSize); err != nil {|if err := error(nil); err != nil {"
  "arena.Segment.Persist: region.Persist|arena/arena.go|{ return s.region.Persist(off, n) }|{ return nil }"
  "arena.Segment.Flush: region.Flush|arena/arena.go|{ s.region.Flush(off, n) }|{}"
  "arena.Segment.Msync: region.Msync|arena/arena.go|{ return s.region.Msync(off, n) }|{ return nil }"
  "pmem.Region.Flush: flushRange|pmem/region.go|func (r *Region) Flush(off, n int64) {\n\tr.flushRange(off, n)\n}|func (r *Region) Flush(off, n int64) {\n}"
  "pmem.flushRange: flushLines (the write-back loop)|pmem/region.go|return flushLines(r.data[lo:hi])|_, _ = lo, hi\n\treturn 0"
  "pmem.Region.Persist (pmem mode): flushRange|pmem/region.go|\t\tr.flushRange(off, n)\n\t\tDrain()|\t\tDrain()"
  "pmem.Region.Persist (pmem mode): Drain|pmem/region.go|\t\tr.flushRange(off, n)\n\t\tDrain()|\t\tr.flushRange(off, n)"
  "pmem.Region.Persist (pmem mode, no write-back instruction): Msync|pmem/region.go|if flushLines == nil {\n\t\t\treturn r.Msync(off, n)|if flushLines == nil {\n\t\t\treturn nil"
  "pmem.Region.Persist (msync mode): Msync|pmem/region.go|case ModeMsync:\n\t\treturn r.Msync(off, n)|case ModeMsync:\n\t\treturn nil"
  "pmem.Region.Msync: msync(2)|pmem/region.go|if err := msyncPages(r.data[lo:hi], unix.MS_SYNC); err != nil {|if err := error(nil); err != nil {"
  "pmem.Drain (amd64): SFENCE|pmem/flush_amd64.go|\tsfence()\n\ttraceFence()|\ttraceFence()"
  "recovery.cutTail: Persist of the zeroed tail|recovery/recovery.go|if err := seg.Persist(end, last-end); err != nil {|if err := error(nil); err != nil {"
  "arena.Segment.MarkShutdown: Persist of the clean-shutdown word|arena/arena.go|checkedWord(s.id, tagShutdown, uint64(end)))\n\treturn s.region.Persist(shutdownWordOffset, 8)|checkedWord(s.id, tagShutdown, uint64(end)))\n\treturn nil"
  "arena.Segment.ClearShutdown: Persist of the cleared word|arena/arena.go|PutUint64(s.buf[shutdownWordOffset:], 0)\n\treturn s.region.Persist(shutdownWordOffset, 8)|PutUint64(s.buf[shutdownWordOffset:], 0)\n\treturn nil"
  "arena.markPredecessorCleaned: Persist of the cleaned word|arena/arena.go|return s.region.Persist(cleanedWordOffset, 8)|return nil"
)

want=("$@")
for i in "${!sites[@]}"; do
  n=$((i + 1))
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " =~ " $n " ]]; then continue; fi
  IFS='|' read -r name file from to <<<"${sites[$i]}"
  cp "$file" "$file.orig"
  if ! python3 - "$file" "$from" "$to" <<'EOF'
import sys
path, old, new = sys.argv[1], sys.argv[2].encode().decode('unicode_escape'), sys.argv[3].encode().decode('unicode_escape')
s = open(path).read()
if s.count(old) != 1:
    sys.exit("site text found %d times in %s" % (s.count(old), path))
open(path, 'w').write(s.replace(old, new))
EOF
  then
    mv "$file.orig" "$file"
    echo "$n. $name ($file): SITE NOT FOUND"
    continue
  fi
  out=$($GO test -count=1 -tags pmemtrace -run 'TestCrashImages' ./crashimage/ 2>&1)
  rc=$?
  mv "$file.orig" "$file"
  if [ $rc -eq 0 ]; then
    echo "$n. $name ($file): tests PASS (mutant survives)"
  else
    first=$(grep -m1 -E 'crashimage_test.go:[0-9]+: .*(crash point|acknowledged without|differs)|panic:' <<<"$out" | sed 's/^ *//' | cut -c1-300)
    echo "$n. $name ($file): tests FAIL: $first"
  fi
done

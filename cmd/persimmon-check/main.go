// Command persimmon-check inspects and repairs a Persimmon data directory
// offline (the server must not be running on it).
//
//	persimmon-check verify DIR   check every segment header and record, and the key index
//	                             (DIR/keyindex, --key-index yes) against the log; exit 1 on
//	                             corruption or disagreement
//	persimmon-check dump DIR     print every record and its operations
//	persimmon-check repair DIR   keep the longest valid prefix of the log: the segment
//	                             holding the first bad record is cut there and becomes the
//	                             newest; later segments move to DIR/lost+found
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyindex"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
	"github.com/persimmon-db/persimmon/wal"
)

func usage() {
	fmt.Fprintf(os.Stderr, "usage: persimmon-check verify|dump|repair DIR\n")
	os.Exit(2)
}

func main() {
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() != 2 {
		usage()
	}
	cmd, dir := flag.Arg(0), flag.Arg(1)
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(os.Stderr, "persimmon-check: %v\n", err)
		os.Exit(2)
	}
	var err error
	switch cmd {
	case "verify":
		err = verify(dir, false)
	case "dump":
		err = verify(dir, true)
	case "repair":
		err = repair(dir)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "persimmon-check: %v\n", err)
		os.Exit(1)
	}
}

func openArena(dir string, inspect bool) (*arena.Arena, error) {
	logf := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	return arena.Open(arena.Options{Dir: dir, Mode: pmem.ModeMsync, Inspect: inspect, Logf: logf})
}

// verify scans every segment; with dump it prints each record.
func verify(dir string, dump bool) error {
	a, err := openArena(dir, true)
	if err != nil {
		return err
	}
	defer a.Close()
	segs := a.Segments()
	var records, bytes int64
	var firstErr error
	fail := func(err error) {
		fmt.Printf("  CORRUPT: %v\n", err)
		if firstErr == nil {
			firstErr = err
		}
	}
	if err := a.CheckOldest(); err != nil {
		fail(err)
	}
	var prevLast uint64
	orphan := false
	for i, seg := range segs {
		end, sealed := seg.Sealed()
		state := "active"
		if sealed {
			state = fmt.Sprintf("sealed at %d", end)
		} else if end, ok := seg.ShutdownEnd(); ok {
			state = fmt.Sprintf("active, clean shutdown at %d", end)
		} else if seg.ShutdownWordDamaged() {
			state = "active, clean-shutdown word damaged (scanned with no torn tail)"
		}
		fmt.Printf("segment %d %s: %d bytes, %d allocated, base LSN %d, %s\n", seg.ID(), seg.Path(), seg.Size(), seg.AllocatedBytes(), seg.BaseLSN(), state)
		if i > 0 && seg.ID() != segs[i-1].ID()+1 {
			fail(fmt.Errorf("%w: segment files %d to %d between %s and %s are missing", arena.ErrMissingSegment, segs[i-1].ID()+1, seg.ID()-1, segs[i-1].Path(), seg.Path()))
		} else if err := recovery.ChainLSN(segs, i, prevLast, orphan); err != nil {
			fail(err)
		}
		scanEnd, last, err := wal.ScanSegment(seg, func(r wal.Record) error {
			records++
			bytes += r.Size
			if dump {
				fmt.Printf("  offset %d LSN %d %s flags=%s gap=%d payload=%d\n", r.Offset, r.LSN, typeName(r.Type), flagNames(r.Flags), r.Gap, len(r.Payload))
				if r.Type == wal.TypeBatch {
					ops, err := keyspace.DescribePayload(r.Payload)
					for _, o := range ops {
						fmt.Printf("    %s\n", o)
					}
					if err != nil {
						fmt.Printf("    bad operation: %v\n", err)
					}
				}
			}
			return nil
		})
		fmt.Printf("  records end at %d, last LSN %d\n", scanEnd, last)
		prevLast = last
		orphan = !sealed && i < len(segs)-1 && recovery.EmptyFrom(segs, i+1)
		switch {
		case err == nil:
		case wal.IsTornTail(err) && (i == len(segs)-1 || orphan):
			fmt.Printf("  torn tail (the server cuts it at start-up): %v\n", err)
		default:
			fail(err)
		}
	}
	fmt.Printf("%d segments, %d records, %d bytes of records\n", len(segs), records, bytes)
	if firstErr != nil {
		return fmt.Errorf("corruption found (run repair to keep the valid prefix): %w", firstErr)
	}
	if _, err := os.Stat(filepath.Join(dir, recovery.IndexFile)); err == nil && !dump {
		return verifyIndex(a, dir)
	}
	return nil
}

// verifyIndex checks the key index against the log: the records up to its
// checkpoint, replayed into a keyspace without the index, must give
// exactly the plain string keys the table holds, at the same locations,
// and the checkpoint's per-database counts; and exactly its anchor slots:
// every other key the replay holds (a collection, a string patched from
// nothing) under its anchor key, naming the operation it began at
// (keyspace/kixanchor.go), and none left over.
func verifyIndex(a *arena.Arena, dir string) error {
	path := filepath.Join(dir, recovery.IndexFile)
	model := keyspace.NewRecovering(a)
	segs := a.Segments()
	newest := uint64(1)
	if len(segs) > 0 {
		newest = segs[len(segs)-1].ID()
	}
	ix, cp, ok, err := keyindex.Open(path, keyindex.Options{Mode: pmem.ModeMsync, Newest: newest, KeyAt: model.IndexKeyAt})
	if err != nil {
		return fmt.Errorf("key index %s: %w (remove it: the server rebuilds it from the log)", path, err)
	}
	defer ix.Close()
	dram, counts, ttlCounts, ours := keyspace.IndexCheckpointUser(cp)
	switch {
	case !ok:
		fmt.Printf("key index %s: no valid checkpoint (the server rebuilds it from the log at start)\n", path)
		return nil
	case !ours:
		return fmt.Errorf("key index %s: checkpoint at LSN %d was not written by this keyspace", path, cp.LSN)
	case cp.Applying:
		fmt.Printf("key index %s: a checkpoint to LSN %d was being applied over the one at LSN %d (the server repairs it from there at start); not compared\n", path, cp.LSN, cp.BaseLSN)
		return nil
	case dram != 0:
		fmt.Printf("key index %s: checkpoint at LSN %d with %d keys in DRAM entries (the server rebuilds it from the log at start); not compared\n", path, cp.LSN, dram)
		return nil
	}
	// The model replays with its clock stopped before the epoch, so a key
	// with an expiry stays in it whatever its time: the index may have
	// dropped it (expired, no record) or still hold it.
	model.FreezeClockForReplay()
	now := time.Now().UnixMilli()
	var replayed int64
	var lastLSN uint64
	for _, seg := range segs {
		if seg.BaseLSN() >= cp.LSN {
			break
		}
		_, _, err := wal.ScanSegment(seg, func(r wal.Record) error {
			if r.LSN > cp.LSN {
				return errStop
			}
			replayed++
			lastLSN = r.LSN
			return model.ReplayRecord(seg, r)
		})
		if err != nil && !errors.Is(err, errStop) && !wal.IsTornTail(err) {
			return err
		}
	}
	if lastLSN < cp.LSN {
		fmt.Printf("key index %s: checkpoint at LSN %d is past the end of the log (LSN %d; a repair cut it, or a power cut lost it): the server rebuilds the index at start; not compared\n", path, cp.LSN, lastLSN)
		return nil
	}
	var bad int
	var want, wantTTL [keyspace.NumDBs]uint64
	report := func(format string, args ...any) {
		if bad++; bad <= 10 {
			fmt.Printf("  INDEX: "+format+"\n", args...)
		}
	}
	var nStrings, gone int
	model.PlainStrings(func(db int, key string, loc uint64, expireAt int64) {
		nStrings++
		got, expiring, found := ix.Lookup(append([]byte{byte(db)}, key...))
		switch {
		case !found && expireAt != 0 && expireAt <= now:
			gone++ // removed by expiry (no record says so)
			return
		case !found || got != loc:
			report("db %d key %q: the log says location %#x, the index %#x (found %v)", db, key, loc, got, found)
		case expiring != (expireAt != 0):
			report("db %d key %q: the slot's expiring bit is %v, the operation's expiry %d", db, key, expiring, expireAt)
		}
		want[db]++
		if expireAt != 0 {
			wantTTL[db]++
		}
	})
	var total uint64
	for db := range want {
		total += want[db]
		if want[db] != counts[db] {
			report("db %d: %d string keys of the log in the index, the checkpoint counts %d", db, want[db], counts[db])
		}
		if wantTTL[db] != ttlCounts[db] {
			report("db %d: %d of them with an expiry, the checkpoint counts %d", db, wantTTL[db], ttlCounts[db])
		}
	}
	// The anchors. The model's clock is stopped: a collection whose time
	// has passed may have expired in the server (its slot removed, no
	// record says so) and come back later as a new incarnation, which the
	// model applied over the old one; such a key is not compared.
	var nAnchors, inTable, anchorsGone int
	model.Anchors(func(db int, key string, anchor uint64, expireAt int64) {
		nAnchors++
		got, _, found := ix.Lookup(append([]byte{byte(db) | keyspace.AnchorNS}, key...))
		if found {
			inTable++
		}
		switch {
		case expireAt != 0 && expireAt <= now && (!found || got != anchor):
			anchorsGone++
		case !found || got != anchor:
			report("db %d key %q: the log says its %s began at location %#x, the index's anchor slot %#x (found %v)", db, key, model.Type(db, []byte(key)), anchor, got, found)
		}
	})
	if live := uint64(ix.Stats().Live); live != total+uint64(inTable) {
		report("%d live slots, %d string keys and %d anchors of the log in the index", live, total, inTable)
	}
	if n := model.DRAMKeys() - nStrings - nAnchors; n != 0 {
		report("%d keys the log holds in DRAM entries without an anchor at LSN %d, the checkpoint says none", n, cp.LSN)
	}
	fmt.Printf("key index %s: checkpoint at LSN %d, %d records replayed, %d keys and %d anchors compared, %d keys and %d anchors removed by expiry, %d disagreements\n", path, cp.LSN, replayed, total, nAnchors-anchorsGone, gone, anchorsGone, bad)
	if bad > 0 {
		return fmt.Errorf("the key index disagrees with the log in %d places (remove %s: the server rebuilds it)", bad, path)
	}
	return nil
}

var errStop = errors.New("stop")

func typeName(t uint8) string {
	switch t {
	case wal.TypeBatch:
		return "batch"
	case wal.TypeCommit:
		return "commit"
	}
	return fmt.Sprintf("type%d", t)
}

func flagNames(f uint8) string {
	s := ""
	if f&wal.FlagTxn != 0 {
		s += "txn"
	}
	if f&wal.FlagTxnBegin != 0 {
		s += ",begin"
	}
	if s == "" {
		s = "-"
	}
	return s
}

// repair keeps the longest valid prefix of the log. First, a segment
// file shorter than its header says (truncated) is extended back to its
// size with zeros, so its records up to the truncation point are kept and
// the cut falls there; a file whose header cannot be read ends the log
// before it. Then the log is cut at the first of: an invalid record, a gap
// in the segment ids, a base LSN that does not continue the segment
// before. The segment holding the cut becomes the newest (unsealed, zeroed
// past the cut); every later segment moves to DIR/lost+found, under a name
// no earlier repair used (nothing there is ever overwritten).
// The key index file is removed first (the server rebuilds it).
func repair(dir string) error {
	// The key index may name records a repair cuts or moves away: the
	// server rebuilds it from the log kept (one whole replay).
	switch err := os.Remove(filepath.Join(dir, recovery.IndexFile)); {
	case err == nil:
		fmt.Printf("removed the key index %s: the server rebuilds it from the log at start\n", filepath.Join(dir, recovery.IndexFile))
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	lost := &lostFound{dir: filepath.Join(dir, "lost+found")}
	paths, err := arena.SegmentFiles(dir)
	if err != nil {
		return err
	}
	for i, p := range paths {
		want, have, err := arena.HeaderFileSize(p)
		switch {
		case err != nil:
			fmt.Printf("unreadable segment header: %v\n", err)
			for _, later := range paths[i:] {
				if err := lost.move(later); err != nil {
					return err
				}
			}
		case have < want:
			if err := os.Truncate(p, want); err != nil {
				return fmt.Errorf("extending short %s: %w", p, err)
			}
			fmt.Printf("%s was %d bytes, its header says %d: extended with zeros to keep its records before the truncation\n", p, have, want)
			continue
		case have > want:
			return fmt.Errorf("%s is %d bytes, its header says %d: not a file this tool can repair", p, have, want)
		default:
			continue
		}
		break
	}
	if err := pmem.SyncDir(dir); err != nil {
		return err
	}

	a, err := arena.Open(arena.Options{Dir: dir, Mode: pmem.ModeMsync, Logf: func(f string, args ...any) { fmt.Printf(f+"\n", args...) }})
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.CheckOldest(); err != nil {
		// The oldest segments are gone and nothing can bring them back:
		// accept that the log starts here.
		fmt.Printf("%v\naccepting the loss: the log now starts at %s\n", err, a.Segments()[0].Path())
		if err := a.AcceptOldest(); err != nil {
			return err
		}
	}
	segs := a.Segments()
	var prevLast uint64
	for i, seg := range segs {
		// A gap before seg, or a base LSN that does not continue the
		// segment before: the log ends with the previous segment.
		var gap error
		if i > 0 && seg.ID() != segs[i-1].ID()+1 {
			gap = fmt.Errorf("%s is followed by %s: the segments between them are missing", segs[i-1].Path(), seg.Path())
		} else if err := recovery.ChainLSN(segs, i, prevLast, false); err != nil {
			gap = err
		}
		if gap != nil {
			fmt.Printf("log breaks: %v\n", gap)
			prev := segs[i-1]
			if _, sealed := prev.Sealed(); sealed {
				if err := prev.Unseal(); err != nil {
					return err
				}
			}
			fmt.Printf("%s is now the newest segment\n", prev.Path())
			return moveLater(lost, segs[i:], dir)
		}
		end, last, err := wal.ScanSegment(seg, func(wal.Record) error { return nil })
		prevLast = last
		if err == nil {
			continue
		}
		if !wal.IsTornTail(err) && !errors.Is(err, wal.ErrCorruption) {
			return err
		}
		fmt.Printf("first bad record: %v\n", err)
		if _, sealed := seg.Sealed(); sealed {
			if err := seg.Unseal(); err != nil {
				return err
			}
		}
		if err := seg.ClearShutdown(); err != nil {
			return err
		}
		// Clear only what is allocated: storing zeros into holes would
		// allocate them.
		limit := min(int64(len(seg.Bytes())), seg.AllocatedBytes())
		if limit > end {
			clear(seg.Bytes()[end:limit])
			if err := seg.Persist(end, limit-end); err != nil {
				return err
			}
		}
		fmt.Printf("cut %s at offset %d\n", seg.Path(), end)
		return moveLater(lost, segs[i+1:], dir)
	}
	fmt.Println("no bad record: nothing to repair")
	return nil
}

// moveLater moves segs to lost+found and makes the moves durable.
func moveLater(lost *lostFound, segs []*arena.Segment, dir string) error {
	for _, later := range segs {
		if err := lost.move(later.Path()); err != nil {
			return err
		}
	}
	return pmem.SyncDir(dir)
}

// lostFound is DIR/lost+found, where repair moves the segment files it
// takes out of the log.
type lostFound struct {
	dir string
}

// move renames path into lost+found under its own name or, if an earlier
// repair saved a file of that name, with the first free suffix .1, .2, ...
// It never replaces an existing file: the rename is a link (which fails
// if the name exists) followed by an unlink of the original.
func (l *lostFound) move(path string) error {
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return err
	}
	base := filepath.Base(path)
	for n := 0; ; n++ {
		dst := filepath.Join(l.dir, base)
		if n > 0 {
			dst = fmt.Sprintf("%s.%d", dst, n)
		}
		err := os.Link(path, dst)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("saving %s in %s: %w", path, l.dir, err)
		}
		if err := os.Remove(path); err != nil {
			return err
		}
		fmt.Printf("moved %s to %s\n", path, dst)
		return pmem.SyncDir(l.dir)
	}
}

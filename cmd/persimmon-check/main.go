// Command persimmon-check inspects and repairs a Persimmon data directory
// offline (the server must not be running on it).
//
//	persimmon-check verify DIR   check every segment header and record; exit 1 on corruption
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

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
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
	return arena.Open(arena.Options{Dir: dir, Mode: pmem.ModeMsync, Inspect: inspect})
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
	for i, seg := range segs {
		end, sealed := seg.Sealed()
		state := "active"
		if sealed {
			state = fmt.Sprintf("sealed at %d", end)
		}
		fmt.Printf("segment %d %s: %d bytes, %d allocated, base LSN %d, %s\n", seg.ID(), seg.Path(), seg.Size(), seg.AllocatedBytes(), seg.BaseLSN(), state)
		scanEnd, last, err := wal.ScanSegment(seg, func(r wal.Record) error {
			records++
			bytes += r.Size
			if dump {
				fmt.Printf("  offset %d LSN %d %s flags=%s payload=%d\n", r.Offset, r.LSN, typeName(r.Type), flagNames(r.Flags), len(r.Payload))
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
		switch {
		case err == nil:
		case wal.IsTornTail(err) && i == len(segs)-1:
			fmt.Printf("  torn tail (the server cuts it at start-up): %v\n", err)
		default:
			fmt.Printf("  CORRUPT: %v\n", err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	fmt.Printf("%d segments, %d records, %d bytes of records\n", len(segs), records, bytes)
	if firstErr != nil {
		return fmt.Errorf("corruption found (run repair to keep the valid prefix): %w", firstErr)
	}
	return nil
}

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

// repair cuts the log at its first invalid record.
func repair(dir string) error {
	a, err := openArena(dir, false)
	if err != nil {
		return err
	}
	defer a.Close()
	segs := a.Segments()
	for i, seg := range segs {
		end, _, err := wal.ScanSegment(seg, func(wal.Record) error { return nil })
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
		lost := filepath.Join(dir, "lost+found")
		for _, later := range segs[i+1:] {
			if err := os.MkdirAll(lost, 0o755); err != nil {
				return err
			}
			dst := filepath.Join(lost, filepath.Base(later.Path()))
			if err := os.Rename(later.Path(), dst); err != nil {
				return err
			}
			fmt.Printf("moved %s to %s\n", later.Path(), dst)
		}
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	}
	fmt.Println("no bad record: nothing to repair")
	return nil
}

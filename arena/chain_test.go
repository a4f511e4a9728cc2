package arena

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"golang.org/x/sys/unix"
)

// threeSegments makes segments 1-3 (1 and 2 sealed) and closes the arena.
func threeSegments(t *testing.T, dir string) {
	t.Helper()
	a := open(t, dir)
	for lsn := uint64(0); lsn < 3; lsn++ {
		if _, _, err := a.Alloc(64, 0, HeaderSize, lsn); err != nil {
			t.Fatal(err)
		}
		if lsn < 2 {
			if err := a.Rotate(HeaderSize, lsn+1); err != nil {
				t.Fatal(err)
			}
		}
	}
	a.Close()
}

func TestCheckChain(t *testing.T) {
	t.Run("gap", func(t *testing.T) {
		dir := t.TempDir()
		threeSegments(t, dir)
		os.Remove(filepath.Join(dir, "seg-0000000000000002.arena"))
		a := open(t, dir)
		defer a.Close()
		if err := a.CheckChain(); !errors.Is(err, ErrMissingSegment) {
			t.Fatalf("CheckChain with segment 2 gone: %v, want ErrMissingSegment", err)
		}
	})
	t.Run("oldest removed by hand", func(t *testing.T) {
		dir := t.TempDir()
		threeSegments(t, dir)
		os.Remove(filepath.Join(dir, "seg-0000000000000001.arena"))
		a := open(t, dir)
		defer a.Close()
		if err := a.CheckChain(); !errors.Is(err, ErrMissingSegment) {
			t.Fatalf("CheckChain with segment 1 removed by hand: %v, want ErrMissingSegment", err)
		}
		if err := a.AcceptOldest(); err != nil {
			t.Fatal(err)
		}
		if err := a.CheckChain(); err != nil {
			t.Fatalf("CheckChain after AcceptOldest: %v", err)
		}
	})
	t.Run("oldest removed by Remove", func(t *testing.T) {
		dir := t.TempDir()
		threeSegments(t, dir)
		a := open(t, dir)
		if err := a.Remove(1); err != nil {
			t.Fatal(err)
		}
		if err := a.Remove(2); err != nil {
			t.Fatal(err)
		}
		a.Close()
		a = open(t, dir)
		defer a.Close()
		if err := a.CheckChain(); err != nil {
			t.Fatalf("CheckChain after the cleaner's removals: %v", err)
		}
	})
	t.Run("version-1 segments", func(t *testing.T) {
		// Written before the chain word existed: a missing oldest segment
		// cannot be told from a cleaned one, and must still open.
		dir := t.TempDir()
		threeSegments(t, dir)
		os.Remove(filepath.Join(dir, "seg-0000000000000001.arena"))
		for _, n := range []string{"seg-0000000000000002.arena", "seg-0000000000000003.arena"} {
			p := filepath.Join(dir, n)
			img, _ := os.ReadFile(p)
			clear(img[chainWordOffset : chainWordOffset+8])
			binary.LittleEndian.PutUint32(img[8:], FormatVersion1)
			binary.LittleEndian.PutUint64(img[headerSumOffset:], headerSum(img))
			os.WriteFile(p, img, 0o644)
		}
		a := open(t, dir)
		defer a.Close()
		if err := a.CheckChain(); err != nil {
			t.Fatalf("CheckChain on version-1 segments: %v", err)
		}
	})
}

// TestShutdownWord: the mark survives a reopen, reads back the end it was
// given, and is rejected when it belongs to another segment.
func TestShutdownWord(t *testing.T) {
	dir := t.TempDir()
	threeSegments(t, dir)
	a := open(t, dir)
	seg := a.Segment(3)
	if _, ok := seg.ShutdownEnd(); ok {
		t.Fatal("fresh segment has a shutdown mark")
	}
	if err := seg.MarkShutdown(HeaderSize + 64); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a = open(t, dir)
	if end, ok := a.Segment(3).ShutdownEnd(); !ok || end != HeaderSize+64 {
		t.Fatalf("after reopen: shutdown end %d, %v", end, ok)
	}
	// The same word copied into segment 2 is not valid there.
	w := binary.LittleEndian.Uint64(a.Segment(3).Bytes()[ShutdownWordOffset:])
	binary.LittleEndian.PutUint64(a.Segment(2).Bytes()[ShutdownWordOffset:], w)
	if _, ok := a.Segment(2).ShutdownEnd(); ok {
		t.Fatal("segment 3's shutdown word accepted in segment 2")
	}
	if err := a.Segment(3).ClearShutdown(); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a = open(t, dir)
	defer a.Close()
	if _, ok := a.Segment(3).ShutdownEnd(); ok {
		t.Fatal("shutdown mark still there after ClearShutdown")
	}
}

// TestAllocOnTinyFilesystem: a filesystem smaller than the allocation
// look-ahead takes appends until it is really full, then Writable and
// Alloc both report ErrNoSpace.
func TestAllocOnTinyFilesystem(t *testing.T) {
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root): %v", err)
	}
	defer unix.Unmount(mnt, unix.MNT_DETACH)
	a, err := Open(Options{Dir: mnt, Mode: pmem.ModeNone, SegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var n int
	for ; ; n++ {
		if err := a.Writable(4096, 0); err != nil {
			if !errors.Is(err, ErrNoSpace) {
				t.Fatal(err)
			}
			break
		}
		if _, _, err := a.Alloc(4096, 0, HeaderSize, uint64(n)); err != nil {
			t.Fatalf("Alloc after Writable said yes: %v", err)
		}
	}
	if n < 40 { // 40 x 4 KiB = 160 KiB of 256
		t.Fatalf("only %d 4 KiB appends on a 256 KiB filesystem", n)
	}
	if _, _, err := a.Alloc(4096, 0, HeaderSize, uint64(n)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("Alloc on a full filesystem: %v, want ErrNoSpace", err)
	}
	t.Logf("%d 4 KiB appends", n)
}

// TestHeaderByteFlips: a flipped bit anywhere in a segment header is
// noticed: the header checksum covers every byte but the commit-point
// words at [64, 88) (version 2), and each of those checks itself: a bad
// seal word fails Open, a bad cleaned word fails CheckChain in the oldest
// segment and is logged by Open in the others, a bad clean-shutdown word
// is reported as damaged (package wal then scans without a torn tail). Segment 2 is sealed and the oldest
// (the cleaner removed 1), segment 3 active; each byte is flipped in a
// copy of the directory.
func TestHeaderByteFlips(t *testing.T) {
	base := t.TempDir()
	threeSegments(t, base)
	a := open(t, base)
	if err := a.Remove(1); err != nil {
		t.Fatal(err)
	}
	a.Close()
	names := []string{"seg-0000000000000002.arena", "seg-0000000000000003.arena"}
	var imgs [2][]byte
	for i, n := range names {
		imgs[i], _ = os.ReadFile(filepath.Join(base, n))
	}
	check := func(seg int, off int, bit byte) {
		t.Helper()
		dir := t.TempDir()
		for i, n := range names {
			img := append([]byte(nil), imgs[i]...)
			if i == seg {
				img[off] ^= bit
			}
			if err := os.WriteFile(filepath.Join(dir, n), img, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		logged := false
		logf := func(format string, args ...any) {
			logged = logged || strings.Contains(fmt.Sprintf(format, args...), "does not verify")
		}
		a, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: MinSegmentSize, Logf: logf})
		if err != nil || logged {
			return // refused or reported, naming the file
		}
		defer a.Close()
		if a.CheckChain() != nil {
			return
		}
		if s := a.Segment(3); s != nil && seg == 1 && s.ShutdownWordDamaged() {
			return
		}
		t.Errorf("%s: byte %d ^ %#x went unnoticed", names[seg], off, bit)
	}
	offsets := []int{88, 95, 100, 1000, 4000, HeaderSize - 1}
	for off := 0; off < 88; off++ {
		offsets = append(offsets, off)
	}
	for _, off := range offsets {
		for _, bit := range []byte{1, 0x80} {
			if off < shutdownWordOffset || off >= shutdownWordOffset+8 {
				check(0, off, bit) // the sealed segment's shutdown word means nothing
			}
			check(1, off, bit)
		}
	}
}

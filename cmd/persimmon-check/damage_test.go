package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

func segFile(dir string, id int) string {
	return filepath.Join(dir, fmt.Sprintf("seg-%016x.arena", id))
}

// keys opens dir and returns how many keys it holds and whether k<i> for
// every i below that count is there (a prefix of fill's writes).
func prefixKeys(t *testing.T, dir string) int {
	t.Helper()
	ks, rep, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatalf("recovery: %v", err)
	}
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	for i := 0; i < rep.Keys; i++ {
		if _, ok, _ := ks.Get(0, []byte(fmt.Sprintf("k%d", i))); !ok {
			t.Fatalf("%d keys but k%d is missing: not a prefix", rep.Keys, i)
		}
	}
	return rep.Keys
}

// TestVerifyChainAndShutdownMark: verify exits 1 on a missing middle
// segment, and on a flipped byte near the end of a cleanly shut down log
// (which, without the clean-shutdown mark, would pass as a torn tail).
func TestVerifyChainAndShutdownMark(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 400)
	if err := os.Rename(segFile(dir, 2), filepath.Join(t.TempDir(), "x")); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "verify", dir)
	if code != 1 || !strings.Contains(out, "CORRUPT") || !strings.Contains(out, "missing") {
		t.Fatalf("verify with segment 2 missing: exit %d\n%s", code, out)
	}

	dir = t.TempDir()
	fill(t, dir, 100) // one segment
	p := segFile(dir, 1)
	img, _ := os.ReadFile(p)
	end := len(img)
	for end > 0 && img[end-1] == 0 {
		end--
	}
	img[end-3000] ^= 1
	os.WriteFile(p, img, 0o644)
	out, code = run(t, "verify", dir)
	if code != 1 || !strings.Contains(out, "clean shutdown") {
		t.Fatalf("verify of damage before the clean-shutdown mark: exit %d\n%s", code, out)
	}
}

// TestRepairShortFile: a segment truncated in the middle of its records
// (here a sealed one, so later segments exist) is extended back and cut at
// the truncation: repair keeps every record before it.
func TestRepairShortFile(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 400)
	p := segFile(dir, 2)
	if err := os.Truncate(p, 40_000); err != nil {
		t.Fatal(err)
	}
	if _, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone}); err == nil || !strings.Contains(err.Error(), "40000 bytes") {
		t.Fatalf("recovery on a truncated segment: %v, want a short-file error", err)
	}
	out, code := run(t, "verify", dir)
	if code != 1 || !strings.Contains(out, "40000") {
		t.Fatalf("verify of a truncated segment: exit %d\n%s", code, out)
	}
	out, code = run(t, "repair", dir)
	if code != 0 {
		t.Fatalf("repair: exit %d\n%s", code, out)
	}
	t.Log(out)
	if out, code := run(t, "verify", dir); code != 0 {
		t.Fatalf("verify after repair: exit %d\n%s", code, out)
	}
	// Segment 1 holds about 120 records of ~530 bytes, segment 2's first
	// 36 KiB another ~68: all of them are kept.
	n := prefixKeys(t, dir)
	if n < 150 || n >= 400 {
		t.Fatalf("after repair %d keys, want the records before the truncation (about 190)", n)
	}
	t.Logf("%d keys kept", n)
}

// TestRepairTwiceKeepsLostAndFound: a second repair that moves files of
// the same names never overwrites what the first saved.
func TestRepairTwiceKeepsLostAndFound(t *testing.T) {
	dir := t.TempDir()
	corrupt := func(off int) {
		p := segFile(dir, 1)
		img, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		img[off] ^= 0xff
		os.WriteFile(p, img, 0o644)
	}
	lost := filepath.Join(dir, "lost+found")
	snapshot := func() map[string][]byte {
		m := map[string][]byte{}
		ents, _ := os.ReadDir(lost)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(lost, e.Name()))
			m[e.Name()] = b
		}
		return m
	}
	fill(t, dir, 400)
	corrupt(arena.HeaderSize + 20_000)
	if out, code := run(t, "repair", dir); code != 0 {
		t.Fatalf("first repair: exit %d\n%s", code, out)
	}
	first := snapshot()
	if len(first) == 0 {
		t.Fatalf("first repair saved nothing")
	}
	// Write again (new segments 2, 3, ... with the same names) and damage
	// segment 1 earlier.
	fill(t, dir, 400)
	corrupt(arena.HeaderSize + 5_000)
	out, code := run(t, "repair", dir)
	if code != 0 {
		t.Fatalf("second repair: exit %d\n%s", code, out)
	}
	second := snapshot()
	for name, b := range first {
		if !bytes.Equal(second[name], b) {
			t.Fatalf("second repair changed %s saved by the first", name)
		}
	}
	var names []string
	for n := range second {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(second) <= len(first) {
		t.Fatalf("second repair saved nothing new: %q", names)
	}
	t.Logf("lost+found: %q", names)
}

// TestRepairMissingSegments: with a middle segment gone, repair keeps the
// log up to the gap (later segments to lost+found); with the oldest gone,
// it accepts the loss and the server can start on what is left.
func TestRepairMissingSegments(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 400)
	if err := os.Rename(segFile(dir, 2), filepath.Join(t.TempDir(), "seg2")); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "repair", dir)
	if code != 0 || !strings.Contains(out, "lost+found") {
		t.Fatalf("repair with segment 2 missing: exit %d\n%s", code, out)
	}
	if out, code := run(t, "verify", dir); code != 0 {
		t.Fatalf("verify after repair: exit %d\n%s", code, out)
	}
	if n := prefixKeys(t, dir); n == 0 || n > 130 {
		t.Fatalf("after repair %d keys, want those of segment 1 alone", n)
	}

	dir = t.TempDir()
	fill(t, dir, 400)
	if err := os.Rename(segFile(dir, 1), filepath.Join(t.TempDir(), "seg1")); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "verify", dir); code != 1 || !strings.Contains(out, "missing") {
		t.Fatalf("verify with segment 1 missing: exit %d\n%s", code, out)
	}
	out, code = run(t, "repair", dir)
	if code != 0 || !strings.Contains(out, "accepting the loss") {
		t.Fatalf("repair with segment 1 missing: exit %d\n%s", code, out)
	}
	if out, code := run(t, "verify", dir); code != 0 {
		t.Fatalf("verify after accepting the loss: exit %d\n%s", code, out)
	}
	ks, rep, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatalf("recovery after accepting the loss: %v", err)
	}
	defer ks.Close()
	if rep.Keys == 0 || rep.Keys >= 400 {
		t.Fatalf("%d keys after losing segment 1", rep.Keys)
	}
}

// TestVerifyHalfCreatedSegment: a kill -9 between creating the newest
// segment file and persisting its header leaves a file of zeros, which the
// server removes at start-up. verify (which changes nothing) skips it,
// says so and exits 0; the file is left in place.
func TestVerifyHalfCreatedSegment(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 150)
	ids, err := arena.SegmentFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	next := segFile(dir, len(ids)+1)
	if err := os.WriteFile(next, make([]byte, arena.HeaderSize+4096), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "verify", dir)
	if code != 0 || !strings.Contains(out, "half-created") || !strings.Contains(out, "150 records") {
		t.Fatalf("verify with a half-created newest segment: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(next); err != nil {
		t.Fatalf("verify removed the half-created segment: %v", err)
	}
	// A zero-filled file where a segment with records should be is not
	// half-created: verify reports it.
	os.Remove(next)
	if err := os.WriteFile(segFile(dir, 1), make([]byte, arena.HeaderSize+4096), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "verify", dir); code != 1 {
		t.Fatalf("verify with a zeroed first segment: exit %d\n%s", code, out)
	}
}

// TestDurableDamage: a flipped byte in a record that later records' durable
// gaps prove durable (each write waited for before the next, then a crash:
// no clean-shutdown mark) is corruption for verify, which names repair;
// repair cuts the log there and the server starts on what is left.
func TestDurableDamage(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "0")
	dir := t.TempDir()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeMsync, SegmentSize: arena.MinSegmentSize, NoKeyIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	for i := 0; i < n; i++ {
		ks.Lock()
		b := ks.NewBatch()
		b.Set(0, []byte(fmt.Sprintf("k%d", i)), []byte("v"), 0)
		err := ks.Commit(b)
		if err == nil {
			err = ks.WaitDurable(ks.LastLSN())
		}
		ks.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	ks.Close()
	p := segFile(dir, 1)
	img, _ := os.ReadFile(p)
	clear(img[arena.ShutdownWordOffset : arena.ShutdownWordOffset+8])
	end := len(img)
	for end > 0 && img[end-1] == 0 {
		end--
	}
	img[end-100] ^= 1 // a record some way before the last
	os.WriteFile(p, img, 0o644)
	out, code := run(t, "verify", dir)
	if code != 1 || !strings.Contains(out, "CORRUPT") || !strings.Contains(out, "durable gaps") || !strings.Contains(out, "persimmon-check repair") {
		t.Fatalf("verify of a damaged durable record: exit %d\n%s", code, out)
	}
	if out, code := run(t, "repair", dir); code != 0 || !strings.Contains(out, "cut ") {
		t.Fatalf("repair: exit %d\n%s", code, out)
	}
	if k := prefixKeys(t, dir); k == 0 || k >= n {
		t.Fatalf("%d keys after the repair, want the prefix before the damaged record", k)
	}
}

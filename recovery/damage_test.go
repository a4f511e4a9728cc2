package recovery

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/wal"
)

func segPath(dir string, id int) string {
	return filepath.Join(dir, fmt.Sprintf("seg-%016x.arena", id))
}

func openErr(dir string) error {
	ks, _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if err == nil {
		ks.Close()
	}
	return err
}

// TestMissingMiddleSegmentRefusesStart: a key set in segment 1 and deleted
// in segment 2; with segment 2 gone, replaying 1 and 3 would bring the
// deleted value back. Start-up must stop naming the files around the gap.
func TestMissingMiddleSegmentRefusesStart(t *testing.T) {
	dir := t.TempDir()
	ks := open(t, dir, arena.MinSegmentSize)
	set(t, ks, 0, "victim", "x")
	pad := strings.Repeat("p", 900)
	for i := 0; i < 80; i++ { // ~72 KiB: the next records go to segment 2
		set(t, ks, 0, fmt.Sprintf("a%d", i), pad)
	}
	ks.Lock()
	b := ks.NewBatch()
	b.Del(0, []byte("victim"))
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	ks.Unlock()
	for i := 0; i < 80; i++ {
		set(t, ks, 0, fmt.Sprintf("b%d", i), pad)
	}
	ks.Close()
	if _, err := os.Stat(segPath(dir, 3)); err != nil {
		t.Fatalf("want at least 3 segments: %v", err)
	}
	if err := os.Rename(segPath(dir, 2), filepath.Join(t.TempDir(), "moved")); err != nil {
		t.Fatal(err)
	}
	err := openErr(dir)
	if !errors.Is(err, arena.ErrMissingSegment) || !errors.Is(err, wal.ErrCorruption) {
		t.Fatalf("start-up with segment 2 missing: %v, want a missing-segment corruption error", err)
	}
	for _, name := range []string{"seg-0000000000000001.arena", "seg-0000000000000003.arena", "seg-0000000000000002.arena"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	t.Log(err)
}

// TestOldestSegmentMissing: removing segment 1 by hand is detected; the
// cleaner removing it (after copying its live records forward) is not an
// error, and neither is a later removal of the new oldest by the cleaner.
func TestOldestSegmentMissing(t *testing.T) {
	dir := t.TempDir()
	ks := open(t, dir, arena.MinSegmentSize)
	pad := strings.Repeat("p", 900)
	// Distinct keys, all live: the arena stays within the cleaner's bound,
	// so its background tick cannot remove segment 1 before the test does
	// (overwrites here let it, under -race, before the rename below).
	for i := 0; i < 300; i++ {
		set(t, ks, 0, fmt.Sprintf("k%d", i), pad)
	}
	ks.Close()
	hidden := filepath.Join(t.TempDir(), "seg1")
	if err := os.Rename(segPath(dir, 1), hidden); err != nil {
		t.Fatal(err)
	}
	err := openErr(dir)
	if !errors.Is(err, arena.ErrMissingSegment) || !strings.Contains(err.Error(), "seg-0000000000000001.arena") {
		t.Fatalf("start-up with segment 1 removed by hand: %v, want a missing-segment error naming it", err)
	}
	t.Log(err)
	if err := os.Rename(hidden, segPath(dir, 1)); err != nil {
		t.Fatal(err)
	}
	// Now garbage: every key but k0..k9 (in segment 1) deleted, so the
	// cleaner copies those ten forward and removes segment 1.
	ks = open(t, dir, arena.MinSegmentSize)
	for i := 10; i < 300; i++ {
		del(t, ks, 0, fmt.Sprintf("k%d", i))
	}
	ks.Clean()
	ks.Close()
	if _, err := os.Stat(segPath(dir, 1)); !os.IsNotExist(err) {
		t.Fatalf("the cleaner did not remove segment 1 (%v): the test needs it to", err)
	}
	ks = open(t, dir, arena.MinSegmentSize)
	defer ks.Close()
	for i := 0; i < 10; i++ {
		if v, ok := get(ks, 0, fmt.Sprintf("k%d", i)); !ok || v != pad {
			t.Fatalf("k%d lost after cleaning", i)
		}
	}
	if _, ok := get(ks, 0, "k10"); ok {
		t.Fatal("k10, deleted, is back after cleaning")
	}
}

// TestBaseLSNMustContinue: two data directories' segments are not one log
// even when their ids follow each other: the base LSN of the second does
// not continue the first.
func TestBaseLSNMustContinue(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	pad := strings.Repeat("p", 900)
	for _, d := range []string{dirA, dirB} {
		ks := open(t, d, arena.MinSegmentSize)
		n, v := 100, pad
		if d == dirB { // smaller records: more of them in segment 1
			n, v = 300, pad[:300]
		}
		for i := 0; i < n; i++ {
			set(t, ks, 0, fmt.Sprintf("k%d", i), v)
		}
		ks.Close()
	}
	// dirA's segment 2 replaced by dirB's: ids consecutive, LSNs not.
	img, err := os.ReadFile(segPath(dirB, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(segPath(dirA, 2), img, 0o644); err != nil {
		t.Fatal(err)
	}
	err = openErr(dirA)
	if !errors.Is(err, wal.ErrCorruption) || !strings.Contains(err.Error(), "LSN") {
		t.Fatalf("start-up on segments of two logs: %v, want an LSN chain corruption error", err)
	}
	t.Log(err)
}

// TestCleanShutdownDamageIsCorruption: after a clean shutdown a flipped
// byte near the end of the log is corruption (start-up stops), where after
// a crash (no mark) the same damage is a torn tail that is cut. The mark is
// cleared durably by the first write after the restart. (Without the key
// index: with it, the records before its checkpoint are not read after a
// crash, and the same damage is the scrub's to report:
// TestNewestPrefixScrubbed.)
func TestCleanShutdownDamageIsCorruption(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "0")
	dir := t.TempDir()
	ks := open(t, dir, 0)
	for i := 0; i < 2000; i++ { // ~100 KiB
		set(t, ks, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%040d", i, i))
	}
	ks.Close()
	p := segPath(dir, 1)
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(len(img))
	for end > 0 && img[end-1] == 0 {
		end--
	}
	damaged := append([]byte(nil), img...)
	damaged[end-10_000] ^= 0x10 // within the last 64 KiB: a torn tail's reach
	if err := os.WriteFile(p, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	err = openErr(dir)
	if !errors.Is(err, wal.ErrCorruption) || !strings.Contains(err.Error(), "clean shutdown") {
		t.Fatalf("start-up on a cleanly shut down log with a flipped byte: %v, want corruption", err)
	}
	t.Log(err)

	// The same damage without the mark (what a kill -9 leaves) is a torn
	// tail: the server starts without the records from the damage on.
	clear(damaged[arena.ShutdownWordOffset : arena.ShutdownWordOffset+8])
	if err := os.WriteFile(p, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	ks, rep, err := Open(Options{Dir: dir, Mode: pmem.ModeNone})
	if err != nil || rep.TornBytes == 0 {
		t.Fatalf("without the mark: %v, torn bytes %d; want a torn tail cut", err, rep.TornBytes)
	}
	ks.Close()

	// Intact log: the mark is there after Close, survives a restart that
	// does not write, and is gone (on disk) once the server writes.
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	mark := func() bool {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[arena.ShutdownWordOffset:arena.ShutdownWordOffset+8]) != "\x00\x00\x00\x00\x00\x00\x00\x00"
	}
	ks = open(t, dir, 0)
	if !mark() {
		t.Fatalf("the clean-shutdown mark is gone before any write")
	}
	set(t, ks, 0, "after", "x")
	if mark() {
		t.Fatalf("the clean-shutdown mark is still on disk after a write")
	}
	ks.Close()
	if !mark() {
		t.Fatalf("no clean-shutdown mark after Close")
	}
}

// TestShortSegmentFile: a newest segment truncated to a header or less,
// or to the middle of its records, is reported with its name and both
// sizes and left in place; a half-created one (all zero) is removed.
func TestShortSegmentFile(t *testing.T) {
	const segSize = 1 << 20
	for _, size := range []int64{0, 100, 4096, 500_000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			dir := t.TempDir()
			ks := open(t, dir, segSize)
			pad := strings.Repeat("p", 900)
			for i := 0; i < 1700; i++ { // ~1.6 MiB: segment 2 holds records
				set(t, ks, 0, fmt.Sprintf("k%d", i), pad)
			}
			ks.Close()
			p := segPath(dir, 2)
			if err := os.Truncate(p, size); err != nil {
				t.Fatal(err)
			}
			_, _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: segSize})
			if !errors.Is(err, arena.ErrShortFile) || !strings.Contains(err.Error(), p) {
				t.Fatalf("start-up with %s truncated to %d bytes: %v, want a short-file error naming it", p, size, err)
			}
			if size >= 48 && !strings.Contains(err.Error(), fmt.Sprintf("%d bytes, its header says %d", size, segSize)) {
				t.Errorf("error does not give both sizes: %v", err)
			}
			if size < 48 && !strings.Contains(err.Error(), fmt.Sprintf("%d bytes", size)) {
				t.Errorf("error does not give the size: %v", err)
			}
			if fi, serr := os.Stat(p); serr != nil || fi.Size() != size {
				t.Fatalf("the short file was changed or removed: %v", serr)
			}
			t.Log(err)
		})
	}
	t.Run("half-created", func(t *testing.T) {
		// 8192: create allocates the header and one page before it sets
		// the full size; a crash between the two leaves that much.
		for _, size := range []int64{0, 4096, 8192} {
			dir := t.TempDir()
			ks := open(t, dir, segSize)
			set(t, ks, 0, "k", "v")
			ks.Close()
			if err := os.WriteFile(segPath(dir, 2), make([]byte, size), 0o644); err != nil {
				t.Fatal(err)
			}
			var logged []string
			ks, _, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: segSize, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
			if err != nil {
				t.Fatalf("zero-filled newest segment of %d bytes: %v", size, err)
			}
			ks.Close()
			if _, err := os.Stat(segPath(dir, 2)); !os.IsNotExist(err) {
				t.Fatalf("half-created segment kept: %v", err)
			}
			if !strings.Contains(strings.Join(logged, "\n"), "removed "+segPath(dir, 2)) {
				t.Fatalf("removal not logged: %q", logged)
			}
		}
	})
}

// TestDurableRecordDamageRefusesStart: ten writes, each durable before the
// next (a client waiting for each reply), then a crash (no clean-shutdown
// mark) and a flipped byte in the eighth. That record was durable when
// the two after it were appended, so no crash tore it: start-up must
// refuse and name the damage rather than cut the log there and lose the
// last three acknowledged writes.
func TestDurableRecordDamageRefusesStart(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "0")
	const n = 10
	dir := t.TempDir()
	ks, _, err := Open(Options{Dir: dir, Mode: pmem.ModeMsync, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		set(t, ks, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d", i))
		ks.Lock()
		err := ks.WaitDurable(ks.LastLSN())
		ks.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	ks.Close()
	p := segPath(dir, 1)
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	clear(img[arena.ShutdownWordOffset : arena.ShutdownWordOffset+8]) // a crash, not a clean shutdown
	var offs []int64
	for off := int64(arena.HeaderSize); ; {
		rec, err := wal.DecodeRecord(img, off)
		if err != nil {
			break
		}
		offs = append(offs, off)
		off += rec.Size
	}
	if len(offs) != n {
		t.Fatalf("%d records, want one a write (%d)", len(offs), n)
	}
	img[offs[n-3]+wal.HeaderSize+2] ^= 1
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	ks, _, err = Open(Options{Dir: dir, Mode: pmem.ModeMsync, SegmentSize: arena.MinSegmentSize})
	if err == nil {
		var lost []string
		for i := 0; i < n; i++ {
			if _, ok := get(ks, 0, fmt.Sprintf("k%d", i)); !ok {
				lost = append(lost, fmt.Sprintf("k%d", i))
			}
		}
		ks.Close()
		t.Fatalf("start-up accepted a damaged durable record; acknowledged writes lost: %v", lost)
	}
	if !errors.Is(err, wal.ErrCorruption) || !strings.Contains(err.Error(), "persimmon-check repair") {
		t.Fatalf("err = %v, want corruption naming persimmon-check repair", err)
	}
	t.Log(err)
}

// scrubLog opens dir with the key index and a log that reports the
// scrub's lines on a channel, so that a test can wait for its last line.
func scrubLog(t *testing.T, dir string) (*keyspace.Keyspace, Report, <-chan string, *strings.Builder) {
	t.Helper()
	lines := make(chan string, 100)
	var all strings.Builder
	var mu sync.Mutex
	logf := func(format string, args ...any) {
		l := fmt.Sprintf(format, args...)
		mu.Lock()
		all.WriteString(l + "\n")
		mu.Unlock()
		if strings.HasPrefix(l, "scrub:") || strings.HasPrefix(l, "DAMAGE") {
			lines <- l
		}
	}
	ks, rep, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	return ks, rep, lines, &all
}

// fillNewest writes n keys into one segment and shuts down cleanly (the
// key index checkpoints all of them), then turns the directory into what
// a crash leaves (no clean-shutdown mark). It returns the segment image
// and where its records end.
func fillNewest(t *testing.T, dir string, n int) ([]byte, int) {
	t.Helper()
	ks := open(t, dir, 0)
	for i := 0; i < n; i++ {
		set(t, ks, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%080d", i, i))
	}
	ks.Close()
	img, err := os.ReadFile(segPath(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	clear(img[arena.ShutdownWordOffset : arena.ShutdownWordOffset+8])
	end := len(img)
	for end > 0 && img[end-1] == 0 {
		end--
	}
	return img, end
}

// TestNewestPrefixScrubbed: the newest segment's records up to the key
// index's checkpoint are not read at start-up (only the last of them, to
// see that the log reaches the checkpoint), and damage among them is
// found by the background scrub, which names the file and offset.
func TestNewestPrefixScrubbed(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "1")
	dir := t.TempDir()
	img, _ := fillNewest(t, dir, 3000)
	clear(img[98_304 : 98_304+4096]) // a page in the middle of the records
	if err := os.WriteFile(segPath(dir, 1), img, 0o644); err != nil {
		t.Fatal(err)
	}
	ks, rep, lines, all := scrubLog(t, dir)
	defer ks.Close()
	if rep.Index.FromLSN == 0 || rep.Records != 0 {
		t.Fatalf("restart: checkpoint LSN %d, %d records validated; want the index re-attached and nothing after it to read\n%s", rep.Index.FromLSN, rep.Records, all)
	}
	var damage string
	for l := range lines {
		if strings.HasPrefix(l, "DAMAGE") {
			damage = l
		}
		if strings.HasPrefix(l, "scrub:") {
			break
		}
	}
	if !strings.Contains(damage, segPath(dir, 1)) || !strings.Contains(damage, "offset 98") {
		t.Fatalf("the scrub did not report the zeroed page (want the file and an offset in it): %q\n%s", damage, all)
	}
	if st := ks.Stats(); st.ScrubDamaged != 1 {
		t.Fatalf("ScrubDamaged %d, want 1", st.ScrubDamaged)
	}
}

// TestNewestCutBeforeCheckpoint: a log that lost its last records (the
// page holding them zeroed, as a power cut can leave it) ends before the
// key index's checkpoint: start-up sees that the record before the
// checkpoint is gone, validates the segment whole and rebuilds the index
// from the records left.
func TestNewestCutBeforeCheckpoint(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "1")
	dir := t.TempDir()
	const n = 3000
	img, end := fillNewest(t, dir, n)
	page := end &^ 4095
	clear(img[page:end])
	if err := os.WriteFile(segPath(dir, 1), img, 0o644); err != nil {
		t.Fatal(err)
	}
	ks, rep, _, all := scrubLog(t, dir)
	defer ks.Close()
	if !strings.Contains(all.String(), "past the end of the log") || rep.Index.FromLSN != 0 {
		t.Fatalf("the index was not rebuilt (checkpoint LSN %d):\n%s", rep.Index.FromLSN, all)
	}
	keys := 0
	for i := 0; i < n; i++ {
		if _, ok := get(ks, 0, fmt.Sprintf("k%d", i)); ok {
			if keys != i {
				t.Fatalf("k%d present after k%d missing: not a prefix", i, keys)
			}
			keys++
		}
	}
	if keys == 0 || keys == n {
		t.Fatalf("%d of %d keys after the cut, want the prefix before the zeroed page", keys, n)
	}
}

// TestCleanShutdownReadsNewestWhole: with the key index, a clean restart
// still reads the newest segment whole, so damage before the
// clean-shutdown mark is refused at start-up, as without the index.
func TestCleanShutdownReadsNewestWhole(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "1")
	dir := t.TempDir()
	ks := open(t, dir, 0)
	for i := 0; i < 2000; i++ {
		set(t, ks, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%040d", i, i))
	}
	ks.Close()
	img, err := os.ReadFile(segPath(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	end := len(img)
	for end > 0 && img[end-1] == 0 {
		end--
	}
	img[end-10_000] ^= 0x10
	if err := os.WriteFile(segPath(dir, 1), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := openErr(dir); !errors.Is(err, wal.ErrCorruption) || !strings.Contains(err.Error(), "clean shutdown") {
		t.Fatalf("clean restart with the key index on a damaged newest segment: %v, want corruption before the mark", err)
	}
}

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

var bin string

func TestMain(m *testing.M) {
	dir, _ := os.MkdirTemp("", "persimmon-check")
	bin = filepath.Join(dir, "persimmon-check")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// fill writes keys into a data directory with small segments.
func fill(t *testing.T, dir string, n int) {
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		ks.Lock()
		b := ks.NewBatch()
		b.Set(0, []byte(fmt.Sprintf("k%d", i)), bytes.Repeat([]byte("x"), 500), 0)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		ks.Unlock()
	}
	ks.Close()
}

func TestVerifyDumpRepair(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 400) // ~200 KiB: several 64 KiB segments
	out, code := run(t, "verify", dir)
	if code != 0 || !strings.Contains(out, "400 records") {
		t.Fatalf("verify of a good directory: exit %d\n%s", code, out)
	}
	out, code = run(t, "dump", dir)
	if code != 0 || !strings.Contains(out, `set db=0 key="k399"`) {
		t.Fatalf("dump: exit %d\n%s", code, out[:min(len(out), 2000)])
	}
	// Corrupt a record in the first (sealed) segment.
	p := filepath.Join(dir, "seg-0000000000000001.arena")
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	img[arena.HeaderSize+2000] ^= 0xff
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = run(t, "verify", dir)
	if code != 1 || !strings.Contains(out, "CORRUPT") {
		t.Fatalf("verify of a corrupt directory: exit %d\n%s", code, out)
	}
	// Without the key index (whose checkpoint lets start-up skip the
	// sealed segments it covers: see package recovery), also when
	// PERSIMMON_TEST_KEY_INDEX=1 would turn it on for every Open: the
	// subtest pins the variable to 0 while it runs.
	t.Run("recovery without the key index refuses", func(t *testing.T) {
		t.Setenv("PERSIMMON_TEST_KEY_INDEX", "0")
		if _, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, NoKeyIndex: true}); err == nil {
			t.Fatalf("recovery started on a corrupt directory")
		}
	})
	out, code = run(t, "repair", dir)
	if code != 0 || !strings.Contains(out, "lost+found") {
		t.Fatalf("repair: exit %d\n%s", code, out)
	}
	if out, code = run(t, "verify", dir); code != 0 {
		t.Fatalf("verify after repair: exit %d\n%s", code, out)
	}
	ks, rep, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone})
	if err != nil {
		t.Fatalf("recovery after repair: %v", err)
	}
	defer ks.Close()
	if rep.Keys == 0 || rep.Keys >= 400 {
		t.Fatalf("after repair %d keys, want the valid prefix (0 < n < 400)", rep.Keys)
	}
}

// TestVerifyKeyIndex: verify compares the key index with the log and
// fails when a slot no longer names its key's operation.
func TestVerifyKeyIndex(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PERSIMMON_TEST_KEY_INDEX", "1") // whatever the run's setting
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 600; i++ {
		ks.Lock()
		b := ks.NewBatch()
		b.Set(i%3, []byte(fmt.Sprintf("k%d", i%400)), bytes.Repeat([]byte("x"), 200), 0)
		if i%7 == 0 {
			b.Del(0, []byte(fmt.Sprintf("k%d", i/2)))
		}
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
		ks.Unlock()
	}
	ks.Close() // checkpoints the index
	out, code := run(t, "verify", dir)
	if code != 0 || !strings.Contains(out, " 0 disagreements") {
		t.Fatalf("verify of a good directory with a key index: exit %d\n%s", code, out)
	}
	// Point one live slot at another offset.
	p := filepath.Join(dir, recovery.IndexFile)
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for off := 4096; off < len(img); off += 8 {
		if w := binary.LittleEndian.Uint64(img[off:]); w != 0 && w&(1<<32-1) != 0 {
			binary.LittleEndian.PutUint64(img[off:], w+1)
			break
		}
	}
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = run(t, "verify", dir)
	if code != 1 || !strings.Contains(out, "disagrees with the log") {
		t.Fatalf("verify of a damaged key index: exit %d\n%s", code, out)
	}
}

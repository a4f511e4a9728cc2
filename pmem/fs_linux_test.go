package pmem

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestFilesystem(t *testing.T) {
	name, err := Filesystem(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if name == "" {
		t.Fatal("Filesystem(TempDir) returned an empty name")
	}
	t.Logf("TempDir is on %s", name)

	// procfs is deliberately not in the table: it must come back as unknown
	// with its magic number.
	if got, err := Filesystem("/proc"); err != nil || got != "unknown(0x9fa0)" {
		t.Errorf(`Filesystem("/proc") = %q, %v; want "unknown(0x9fa0)"`, got, err)
	}
	if _, err := os.Stat("/dev/shm"); err == nil {
		if got, err := Filesystem("/dev/shm"); err != nil || (got != "tmpfs" && !strings.HasPrefix(got, "unknown(")) {
			t.Errorf(`Filesystem("/dev/shm") = %q, %v`, got, err)
		}
	}
	_, err = Filesystem(t.TempDir() + "/missing")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Filesystem(missing dir) error = %v, want one wrapping os.ErrNotExist", err)
	}
}

func TestProbeSync(t *testing.T) {
	dir := t.TempDir()
	mean, worst, err := ProbeSync(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	if mean <= 0 || worst < mean {
		t.Fatalf("ProbeSync = mean %v, worst %v: want 0 < mean <= worst", mean, worst)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("the probe left %v behind", left)
	}
	if _, _, err := ProbeSync(dir+"/missing", 1); err == nil {
		t.Fatal("ProbeSync on a missing directory: no error")
	}
}

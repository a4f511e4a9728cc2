package pmem

import (
	"strings"
	"testing"
)

func TestDescribeTable(t *testing.T) {
	tests := []struct {
		mode  Mode
		fs    string
		instr string
		dax   bool
		want  string
	}{
		{ModePmem, "ext4", "clwb", false,
			"durability=pmem (clwb+sfence) on ext4, no DAX: survives process crash (kill -9); not power loss (as redis-server appendfsync everysec); --durability msync is the mode for power safety"},
		{ModePmem, "xfs", "clflushopt", true,
			"durability=pmem (clflushopt+sfence) on xfs, DAX+MAP_SYNC: survives process crash (kill -9) and power loss"},
		{ModePmem, "tmpfs", "clwb", false,
			"durability=pmem (clwb+sfence) on tmpfs, no DAX: survives process crash (kill -9); not power loss (tmpfs is in RAM)"},
		{ModePmem, "ext4", "none", false,
			"durability=pmem (no cache-line flush instruction, msync instead) on ext4, no DAX: survives process crash (kill -9) and power loss"},
		{ModeMsync, "ext4", "clwb", false,
			"durability=msync (msync MS_SYNC) on ext4, no DAX: survives process crash (kill -9) and power loss"},
		{ModeMsync, "tmpfs", "clwb", false,
			"durability=msync (msync MS_SYNC) on tmpfs, no DAX: survives process crash (kill -9); not power loss (tmpfs is in RAM)"},
		{ModeNone, "ext4", "clwb", true,
			"durability=none (no flush) on ext4, DAX+MAP_SYNC: survives process crash (kill -9); not power loss (as redis-server appendfsync no); --durability msync is the mode for power safety"},
	}
	for _, tc := range tests {
		if got := describe(tc.mode, tc.fs, tc.instr, tc.dax); got != tc.want {
			t.Errorf("describe(%v, %q, %q, %v)\n got %q\nwant %q", tc.mode, tc.fs, tc.instr, tc.dax, got, tc.want)
		}
	}
}

// TestDescribeNeverOverclaims checks the rule behind the table: "and power
// loss" only for msync on storage, or pmem with DAX (or msync fallback).
func TestDescribeNeverOverclaims(t *testing.T) {
	for _, mode := range []Mode{ModePmem, ModeMsync, ModeNone} {
		for _, fs := range []string{"ext4", "xfs", "tmpfs", "ramfs", "unknown(0x1234)", ""} {
			for _, instr := range []string{"clwb", "clflush", "none"} {
				for _, dax := range []bool{false, true} {
					got := describe(mode, fs, instr, dax)
					if !strings.HasPrefix(got, "durability="+mode.String()+" ") {
						t.Errorf("%q does not start with the mode", got)
					}
					if strings.Count(got, "\n") != 0 {
						t.Errorf("%q is not one line", got)
					}
					if !strings.Contains(got, "survives process crash (kill -9)") {
						t.Errorf("%q does not say it survives a process crash", got)
					}
					claims := strings.Contains(got, "and power loss")
					inRAM := fs == "tmpfs" || fs == "ramfs"
					// MAP_SYNC proves DAX even where statfs failed; msync's
					// promise needs a filesystem known to be on storage.
					viaMsync := fs != "" && (mode == ModeMsync || (mode == ModePmem && instr == "none"))
					viaDAX := mode == ModePmem && instr != "none" && dax
					may := !inRAM && (viaMsync || viaDAX)
					if claims != may {
						t.Errorf("describe(%v, %q, %q, %v) = %q: claims power loss %v, want %v",
							mode, fs, instr, dax, got, claims, may)
					}
					if !claims && !strings.Contains(got, "power loss") {
						t.Errorf("%q says nothing about power loss", got)
					}
				}
			}
		}
	}
}

func TestDescribeUsesFilesystem(t *testing.T) {
	dir := t.TempDir()
	fs, err := Filesystem(dir)
	if err != nil {
		t.Skipf("Filesystem unsupported here: %v", err)
	}
	for _, mode := range []Mode{ModePmem, ModeMsync, ModeNone} {
		got := Describe(mode, dir, false)
		if !strings.HasPrefix(got, "durability="+mode.String()+" (") {
			t.Errorf("Describe(%v) = %q: mode missing", mode, got)
		}
		if !strings.Contains(got, " on "+fs+", no DAX: ") {
			t.Errorf("Describe(%v) = %q: filesystem %q or DAX missing", mode, got, fs)
		}
		if mode == ModePmem && FlushInstruction() != "none" &&
			!strings.Contains(got, "("+FlushInstruction()+"+sfence)") {
			t.Errorf("Describe(pmem) = %q: instruction %q missing", got, FlushInstruction())
		}
	}
	if got := Describe(ModeMsync, dir+"/does-not-exist", false); !strings.Contains(got, "unknown filesystem") ||
		strings.Contains(got, "and power loss") {
		t.Errorf("Describe on a missing dir = %q", got)
	}
}

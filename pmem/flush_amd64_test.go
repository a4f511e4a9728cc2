package pmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCPUID answers leaf 0 with maxLeaf, leaf 7 with ebx7, leaf 1 with edx1.
func fakeCPUID(maxLeaf, ebx7, edx1 uint32) func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32) {
	return func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32) {
		switch leaf {
		case 0:
			return maxLeaf, 0, 0, 0
		case 1:
			return 0, 0, 0, edx1
		case 7:
			if subleaf == 0 {
				return 0, ebx7, 0, 0
			}
		}
		return 0, 0, 0, 0
	}
}

func TestChooseFlush(t *testing.T) {
	const clwb, opt, clf = 1 << 24, 1 << 23, 1 << 19
	for _, tc := range []struct {
		maxLeaf, ebx7, edx1 uint32
		want                string
	}{
		{7, clwb | opt, clf, "clwb"},
		{0xd, clwb, clf, "clwb"},
		{7, opt, clf, "clflushopt"},
		{7, 0, clf, "clflush"},
		{7, ^uint32(clwb | opt), clf, "clflush"}, // neighbouring bits do not count
		{6, clwb | opt, clf, "clflush"},          // leaf 7 absent: its bits are garbage
		{7, 0, ^uint32(clf), "none"},
		{0, clwb | opt, clf, "none"},
	} {
		fn, name := chooseFlush(fakeCPUID(tc.maxLeaf, tc.ebx7, tc.edx1))
		if name != tc.want || (fn == nil) != (tc.want == "none") {
			t.Errorf("chooseFlush(max=%d, ebx7=%#x, edx1=%#x) = %q (fn nil %v), want %q",
				tc.maxLeaf, tc.ebx7, tc.edx1, name, fn == nil, tc.want)
		}
	}
}

// cpuFlags returns the flags line of /proc/cpuinfo as a set, or nil.
func cpuFlags() map[string]bool {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			set := map[string]bool{}
			for _, f := range strings.Fields(value) {
				set[f] = true
			}
			return set
		}
	}
	return nil
}

func TestCPUIDAgreesWithKernel(t *testing.T) {
	_, ebx, ecx, edx := cpuid(0, 0)
	vendor := string([]byte{
		byte(ebx), byte(ebx >> 8), byte(ebx >> 16), byte(ebx >> 24),
		byte(edx), byte(edx >> 8), byte(edx >> 16), byte(edx >> 24),
		byte(ecx), byte(ecx >> 8), byte(ecx >> 16), byte(ecx >> 24),
	})
	t.Logf("CPU vendor %q, flush instruction %q", vendor, FlushInstruction())

	flags := cpuFlags()
	if flags == nil {
		t.Skip("no flags line in /proc/cpuinfo")
	}
	want := "none"
	switch {
	case flags["clwb"]:
		want = "clwb"
	case flags["clflushopt"]:
		want = "clflushopt"
	case flags["clflush"]:
		want = "clflush"
	}
	if got := FlushInstruction(); got != want {
		t.Errorf("FlushInstruction() = %q, but /proc/cpuinfo says %q", got, want)
	}
}

// TestEveryFlushLoop runs each assembly loop the CPU supports (not just the
// chosen one) over unaligned slices of a mapping and checks the line count.
func TestEveryFlushLoop(t *testing.T) {
	flags := cpuFlags()
	loops := map[string]func([]byte) int{
		"clwb": flushCLWB, "clflushopt": flushCLFLUSHOPT, "clflush": flushCLFLUSH,
	}
	r := mustMap(t, filepath.Join(t.TempDir(), "seg"), 2*pageSize, ModePmem)
	defer mustClose(t, r)
	b := r.Bytes()
	for name, loop := range loops {
		if !flags[name] {
			t.Logf("CPU lacks %s; not run", name)
			continue
		}
		for _, tc := range []struct{ lo, hi, lines int }{
			{0, 0, 0}, {10, 10, 0}, {0, 1, 1}, {0, 64, 1}, {63, 65, 2},
			{1, 64, 1}, {1, 65, 2}, {64, 192, 2}, {len(b) - 1, len(b), 1}, {0, len(b), len(b) / 64},
		} {
			if got := loop(b[tc.lo:tc.hi]); got != tc.lines {
				t.Errorf("%s(b[%d:%d]) wrote back %d lines, want %d", name, tc.lo, tc.hi, got, tc.lines)
			}
		}
		Drain()
	}
}

package keyindex

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vmLocked is this process's VmLck (bytes locked in memory), from
// /proc/self/status; ok is false where it cannot be read.
func vmLocked(t *testing.T) (n int64, ok bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmLck:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// TestLockBudget: the budget's part of the mapping is locked (the
// process's VmLck grows by it), follows the table when it grows (the new
// mapping locked within the same budget, the old one's lock gone), shrinks
// and goes with SetLockBudget, and Close releases it; the table answers
// as its model throughout.
func TestLockBudget(t *testing.T) {
	base, ok := vmLocked(t)
	if !ok {
		t.Skip("no VmLck in /proc/self/status")
	}
	l := newMemLog()
	ix, _, _, err := Open(filepath.Join(t.TempDir(), "idx"), l.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var logged []string
	ix.opts.Logf = func(f string, a ...any) { logged = append(logged, f) }
	const budget = 16 << 10
	n, err := ix.SetLockBudget(budget)
	if err != nil {
		t.Skipf("mlock2 not permitted here: %v", err)
	}
	size := ix.Stats().FileBytes
	if want := min(int64(budget), size) &^ (pageSize - 1); n != want || ix.LockedBytes() != want {
		t.Fatalf("locked %d (LockedBytes %d) of a %d-byte file, want %d", n, ix.LockedBytes(), size, want)
	}
	if v, _ := vmLocked(t); v-base != n {
		t.Fatalf("VmLck grew by %d, want %d", v-base, n)
	}
	r := rand.New(rand.NewPCG(5, 6))
	grows := ix.Grows
	for round := 0; ix.Grows < grows+2 || ix.Stats().FileBytes < 4*budget; round++ {
		if round > 200 {
			t.Fatalf("the table did not grow to 4 times the budget: %+v", ix.Stats())
		}
		if err := randomOps(r, l, ix, 2000, 1<<20, 0); err != nil {
			t.Fatal(err)
		}
		if err := ix.Checkpoint(Checkpoint{LSN: uint64(len(l.recs))}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			driveGrowth(t, ix, 4096)
		}
	}
	check(t, ix, l, l.model(len(l.recs)))
	size = ix.Stats().FileBytes
	if size <= budget {
		t.Fatalf("the table is %d bytes, no larger than the budget: the test proves nothing", size)
	}
	if ix.LockedBytes() != budget {
		t.Fatalf("after growth to %d bytes, %d locked, want the budget %d", size, ix.LockedBytes(), budget)
	}
	if v, _ := vmLocked(t); v-base != budget {
		t.Fatalf("after growth VmLck grew by %d, want %d (the old mapping's lock must go with it)", v-base, budget)
	}
	if len(logged) == 0 {
		t.Fatal("growth locked the new table without a log line")
	}
	if n, err := ix.SetLockBudget(budget / 2); err != nil || n != budget/2 {
		t.Fatalf("shrinking the budget: %d, %v", n, err)
	}
	if v, _ := vmLocked(t); v-base != budget/2 {
		t.Fatalf("after shrinking VmLck grew by %d, want %d", v-base, budget/2)
	}
	if n, err := ix.SetLockBudget(0); err != nil || n != 0 || ix.LockedBytes() != 0 {
		t.Fatalf("budget 0: %d, %v", n, err)
	}
	if v, _ := vmLocked(t); v != base {
		t.Fatalf("budget 0 left VmLck at %d, want %d", v, base)
	}
	if _, err := ix.SetLockBudget(budget); err != nil {
		t.Fatal(err)
	}
	check(t, ix, l, l.model(len(l.recs)))
	ix.Close()
	if v, _ := vmLocked(t); v != base {
		t.Fatalf("Close left VmLck at %d, want %d", v, base)
	}
}

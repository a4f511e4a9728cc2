package commands

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkPFAddCommand runs PFADD key element through its handler with
// fresh 16-byte elements on 10,000 keys, as the PFADD-sparse row
// does: small sparse HLLs, each PFADD a read of the key and a rewrite of
// its value. For profiles of the sparse path.
func BenchmarkPFAddCommand(b *testing.B) {
	benchHandler(b, cmdPFAdd, "PFADD", 10000, 3, 0, 16)
}

// BenchmarkSetOverwriteRef is the reference for BenchmarkPFAddCommand's
// generic part: SET key value on the same 10,000 keys with 100-byte
// values (a small sparse HLL's size after a few dozen PFADDs), each a
// lookup of an existing key and a rewrite of its value, with no HLL work.
func BenchmarkSetOverwriteRef(b *testing.B) {
	benchHandler(b, cmdSet, "SET", 10000, 3, 0, 100)
}

// BenchmarkPFAddDense runs PFADD key element on 100 dense HLLs (200,000
// elements loaded first), as the PFADD-dense row does: each PFADD
// reads one register in place and, when it raises it, logs the register.
func BenchmarkPFAddDense(b *testing.B) {
	benchHandler(b, cmdPFAdd, "PFADD", 100, 5, 200000, 16)
}

// BenchmarkPFAddSparseLarge runs PFADD key element on 100 sparse HLLs of
// 1.2-2 KB (past patchThreshold: each change logs the registers it
// raises), fresh elements: the command reads the registers in place.
// Run it with -benchtime 20000x or less: more elements make them dense.
func BenchmarkPFAddSparseLarge(b *testing.B) {
	if b.N > 20000 {
		b.Skip("more than 20,000 PFADDs make the HLLs dense: use -benchtime 20000x")
	}
	benchHandler(b, cmdPFAdd, "PFADD", 100, 7, 100*450, 16) // about 1.2 KB each
}

// benchHandler times handler(NAME key value) on nkeys keys named
// hll:%010d, picked at random (PCG seed, seed+1), each value a fresh
// random uint64 in 16 hex digits padded with '0' to size bytes, after
// load untimed calls.
func benchHandler(b *testing.B, handler func(*Client, [][]byte), name string, nkeys int, seed uint64, load, size int) {
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	c := &Client{KS: ks}
	r := rand.New(rand.NewPCG(seed, seed+1))
	keys := make([][]byte, nkeys)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "hll:%010d", i)
	}
	args := [][]byte{[]byte(name), nil, nil}
	run := func() {
		args[1] = keys[r.IntN(len(keys))]
		args[2] = fmt.Appendf(args[2][:0], "%016x", r.Uint64())
		for len(args[2]) < size {
			args[2] = append(args[2], '0')
		}
		c.Out = c.Out[:0]
		ks.Lock()
		handler(c, args)
		ks.Unlock()
		if len(c.Out) == 0 || c.Out[0] == '-' {
			b.Fatalf("%s: %q", name, c.Out)
		}
	}
	for i := 0; i < load; i++ {
		run()
	}
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		run()
	}
}

// reportCPU reports the process's CPU time (user + system, every thread:
// the GC's too) per operation as cpu-ns/op, the figure to compare on a
// busy machine where ns/op follows the load. Call it as defer
// reportCPU(b)() after the set-up.
func reportCPU(b *testing.B) func() {
	t0 := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-t0)/float64(b.N), "cpu-ns/op") }
}

func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

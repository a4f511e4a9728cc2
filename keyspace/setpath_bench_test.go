package keyspace_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkKixSet is the durable SET path of an indexed string as the SET
// handler drives it (EXISTS, then a batch of one set committed: log
// append, apply, index staging), with the key index checkpointed every
// 4096 writes as the background tick does, over 100,000 keys of 64-byte
// values (redis-benchmark -d 64 -r 100000). Durability off: the flush is
// not the keyspace's cost.
func BenchmarkKixSet(b *testing.B) {
	b.Setenv("PERSIMMON_TEST_KEY_INDEX", "1")
	ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModeNone, SegmentSize: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	const keys = 100000
	names := make([][]byte, keys)
	for i := range names {
		names[i] = []byte(fmt.Sprintf("key:%012d", i))
	}
	val := make([]byte, 64)
	set := func(k []byte) {
		ks.Lock()
		ks.Exists(0, k)
		batch := ks.NewBatch()
		batch.Set(0, k, val, 0)
		if err := ks.Commit(batch); err != nil {
			b.Fatal(err)
		}
		ks.Unlock()
	}
	for _, k := range names {
		set(k)
	}
	if err := ks.KixCheckpoint(); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int32, 1<<16)
	for i := range order {
		order[i] = int32(r.IntN(keys))
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		set(names[order[i&(len(order)-1)]])
		if i%4096 == 4095 {
			if err := ks.KixCheckpoint(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the process's user+system CPU time in ns (all threads: the
// garbage collector's and the background tick's work count too), which a
// loaded machine disturbs less than the wall time ns/op measures.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

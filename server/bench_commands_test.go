package server

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// BenchmarkCommands is the server's whole path (request reader, dispatch,
// the command, the keyspace, the log and its flushes in pmem mode, the
// reply writer) for the commands issue 13 measures against redis-server:
// one op is one request, pipelined 32 to a batch over prepared batches of
// random arguments: as many as b.N requests take, up to 8192 batches
// (262,144 requests), then repeated. Up to that count every request is a
// fresh one, as in scripts/bench-commands.sh (a fresh element or member
// per request: with 64 batches a PFADD-sparse or GEOADD run was mostly
// no-op repeats of 2,048 requests). Profile one with e.g.
//
//	go test -run '^$' -bench 'Commands/PFADD-sparse' -benchtime 200000x -cpuprofile /tmp/cpu.out ./server/
func BenchmarkCommands(b *testing.B) {
	const sha = "d8f2fad9f8e86a53d2a6ebd960b33c4972cacc37" // return redis.call('SET', KEYS[1], ARGV[1])
	// {value 64}: a fresh 64-byte value per request
	val := func(r *rand.Rand) string {
		return fmt.Sprintf("%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
	}
	cases := []struct {
		name  string
		setup func() []string // commands run once before the timer
		cmd   func(r *rand.Rand) []string
	}{
		{name: "SET", cmd: func(r *rand.Rand) []string {
			return []string{"SET", fmt.Sprintf("key_%010d", r.IntN(10000000)), val(r)}
		}},
		{name: "EVALSHA", setup: func() []string {
			return []string{multibulk("SCRIPT", "LOAD", "return redis.call('SET', KEYS[1], ARGV[1])")}
		},
			cmd: func(r *rand.Rand) []string {
				return []string{"EVALSHA", sha, "1", fmt.Sprintf("key_%010d", r.IntN(10000000)), val(r)}
			}},
		{name: "PFADD-sparse", cmd: func(r *rand.Rand) []string {
			return []string{"PFADD", fmt.Sprintf("key_%010d", r.IntN(10000)), fmt.Sprintf("%016x", r.Uint64())}
		}},
		{name: "PFADD-dense", setup: func() []string { return denseHLLs(100) }, cmd: func(r *rand.Rand) []string {
			return []string{"PFADD", fmt.Sprintf("key_%010d", r.IntN(100)), fmt.Sprintf("%016x", r.Uint64())}
		}},
		{name: "GEOADD", cmd: func(r *rand.Rand) []string {
			return []string{"GEOADD", fmt.Sprintf("key_%010d", r.IntN(1000)),
				fmt.Sprintf("%d.%d", r.IntN(179), r.IntN(1000000)), fmt.Sprintf("%d.%d", r.IntN(84), r.IntN(1000000)),
				fmt.Sprintf("key_%010d", r.IntN(10000))}
		}},
		{name: "XADD", cmd: func(r *rand.Rand) []string {
			return []string{"XADD", fmt.Sprintf("key_%010d", r.IntN(1000)), "*", "field", val(r)}
		}},
		{name: "ZADD", cmd: func(r *rand.Rand) []string {
			return []string{"ZADD", fmt.Sprintf("key_%010d", r.IntN(1000)), fmt.Sprint(r.IntN(70000)), fmt.Sprintf("key_%010d", r.IntN(10000))}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			ks, _, err := recovery.Open(recovery.Options{Dir: b.TempDir(), Mode: pmem.ModePmem})
			if err != nil {
				b.Fatal(err)
			}
			s := NewServer(Config{}, ks, nil, testFamilies)
			defer s.Close()
			c := newConn(s, discardConn{}, 1)
			var setup []string
			if tc.setup != nil {
				setup = tc.setup()
			}
			for _, in := range setup {
				c.rbuf = append(c.rbuf[:0], in...)
				if !c.processInput() {
					b.Fatal("connection closed")
				}
			}
			r := rand.New(rand.NewPCG(1, 1))
			const perBatch = 32
			batches := min(max(b.N/perBatch+1, 64), 8192)
			ins := make([][]byte, batches)
			for i := range ins {
				var sb strings.Builder
				for range perBatch {
					sb.WriteString(multibulk(tc.cmd(r)...))
				}
				ins[i] = []byte(sb.String())
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU(b)
			for i := 0; i < b.N; i += perBatch {
				c.rbuf = append(c.rbuf[:0], ins[i/perBatch%batches]...)
				if !c.processInput() {
					b.Fatal("connection closed")
				}
			}
			// The process's CPU time (the keyspace's background work
			// too): a loaded machine disturbs it less than ns/op.
			b.ReportMetric((processCPU(b)-cpu0)*1e9/float64(b.N), "cpu-ns/op")
		})
	}
}

// denseHLLs returns PFADD requests that make keys key_0000000000 ..
// key_{n-1} dense HLLs (5,000 elements each).
func denseHLLs(n int) []string {
	var out []string
	for k := range n {
		var sb strings.Builder
		args := []string{"PFADD", fmt.Sprintf("key_%010d", k)}
		for e := range 5000 {
			args = append(args, fmt.Sprintf("init-%d-%d", k, e))
		}
		sb.WriteString(multibulk(args...))
		out = append(out, sb.String())
	}
	return out
}

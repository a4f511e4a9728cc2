package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/persimmon-db/persimmon/hll"
	"github.com/redis/go-redis/v9"
)

// hllCmd is one command of a crash-test writer: PFADD of elems, or (elems
// nil) PFCOUNT, which writes the cached cardinality back.
type hllCmd struct{ elems []string }

// applyHLL returns the HLL bytes after cmd (cur nil: no key) and the reply.
func applyHLL(cur []byte, cmd hllCmd) ([]byte, int64) {
	if cmd.elems == nil {
		if cur == nil {
			return nil, 0
		}
		if c, ok := hll.Cached(cur); ok {
			return cur, int64(c)
		}
		v := bytes.Clone(cur)
		c, _ := hll.Estimate(v)
		hll.SetCached(v, c)
		return v, int64(c)
	}
	updated := cur == nil
	v := hll.New()
	if cur != nil {
		v = bytes.Clone(cur)
	}
	for _, e := range cmd.elems {
		var ch bool
		v, ch, _ = hll.Add(v, []byte(e), hll.DefaultSparseMaxBytes)
		updated = updated || ch
	}
	if !updated {
		return cur, 0
	}
	hll.Invalidate(v)
	return v, 1
}

// TestCrashHLL kills the server (SIGKILL) while writers run PFADD (sparse
// rewrites, the promotion to dense, patched dense registers) and PFCOUNT
// (the cache written back), restarts it on the same directory and checks
// that each writer's HLL string is, byte for byte, what its acknowledged
// commands made, or that plus the one command in flight.
func TestCrashHLL(t *testing.T) {
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 3))
	const writers = 2
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			models := make([][]byte, writers)
			s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
			for round := 0; round < rounds; round++ {
				target := int64(30 + rng.IntN(200))
				pending := runHLLUntilKilled(t, s, models, target, rng.Uint64())
				s = startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
				c := s.client()
				for w := range models {
					got, err := c.Get(ctx, fmt.Sprintf("hll:%d", w)).Bytes()
					if err == redis.Nil {
						got, err = nil, nil
					}
					if err != nil {
						t.Fatalf("round %d: GET hll:%d: %v", round, w, err)
					}
					if bytes.Equal(got, models[w]) && (got == nil) == (models[w] == nil) {
						continue
					}
					if p := pending[w]; p != nil {
						if next, _ := applyHLL(models[w], *p); bytes.Equal(got, next) {
							models[w] = next
							continue
						}
					}
					t.Fatalf("round %d: hll:%d is %d bytes (dense %v), not the acknowledged state (%d bytes) nor that plus the pending command",
						round, w, len(got), len(got) == hll.DenseSize, len(models[w]))
				}
				c.Close()
			}
			s.stop()
			dense := 0
			for _, m := range models {
				if len(m) == hll.DenseSize {
					dense++
				}
			}
			t.Logf("%s: %d of %d writers' HLLs reached the dense encoding", mode, dense, writers)
		})
	}
}

// runHLLUntilKilled runs the writers until target commands are
// acknowledged in all, then kills the server; it returns each writer's
// unacknowledged command, if any.
func runHLLUntilKilled(t *testing.T, s *server, models [][]byte, target int64, seed uint64) []*hllCmd {
	var acked atomic.Int64
	var once sync.Once
	killed := make(chan struct{})
	pending := make([]*hllCmd, len(models))
	var wg sync.WaitGroup
	for w := range models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
			defer c.Close()
			key := fmt.Sprintf("hll:%d", w)
			for {
				select {
				case <-killed:
					return
				default:
				}
				var cmd hllCmd
				if rng.IntN(4) != 0 {
					for range 1 + rng.IntN(60) {
						cmd.elems = append(cmd.elems, fmt.Sprintf("e%d", rng.IntN(1<<20)))
					}
				}
				pending[w] = &cmd
				next, want := applyHLL(models[w], cmd)
				var reply int64
				var err error
				if cmd.elems == nil {
					reply, err = c.PFCount(ctx, key).Result()
				} else {
					args := make([]any, len(cmd.elems))
					for i, e := range cmd.elems {
						args[i] = e
					}
					reply, err = c.PFAdd(ctx, key, args...).Result()
				}
				if err != nil {
					if !isConnErr(err) {
						t.Errorf("writer %d: %v", w, err)
					}
					return
				}
				if reply != want {
					t.Errorf("writer %d: %v replied %d, want %d", w, cmd.elems == nil, reply, want)
				}
				models[w], pending[w] = next, nil
				if acked.Add(1) == target {
					once.Do(func() { s.kill(); close(killed) })
				}
			}
		}()
	}
	wg.Wait()
	once.Do(func() { s.kill(); close(killed) })
	return pending
}

package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// bitopsModel is one writer's keys as its acknowledged commands left
// them: a 4 KiB bitmap of u32 counters changed by two-field BITFIELD
// INCRBYs (patched writes, sometimes growing the string), and a BITOP
// accumulator (XOR with a fixed pattern, or NOT).
type bitopsModel struct {
	bf  []byte // bf:<w>
	acc []byte // acc:<w>; nil when the key does not exist
	pat []byte // pat:<w>, written once before the writers start
}

// bitopsCmd is one command a writer sends: two counters to bump, or a
// BITOP (xor true: XOR with the pattern, else NOT).
type bitopsCmd struct {
	bitfield bool
	f1, f2   int // counter indexes (u32 at #f)
	xor      bool
}

// apply changes m as cmd does when it is executed and returns its reply
// (BITFIELD: the counters after each INCRBY, in order; BITOP: the length).
func (m *bitopsModel) apply(cmd bitopsCmd) any {
	if cmd.bitfield {
		var reply []any
		for _, f := range []int{cmd.f1, cmd.f2} {
			if end := 4 * (f + 1); end > len(m.bf) {
				m.bf = append(m.bf, make([]byte, end-len(m.bf))...)
			}
			n := binary.BigEndian.Uint32(m.bf[4*f:]) + 1
			binary.BigEndian.PutUint32(m.bf[4*f:], n)
			reply = append(reply, int64(n))
		}
		return reply
	}
	switch {
	case cmd.xor && m.acc == nil:
		m.acc = bytes.Clone(m.pat)
	case cmd.xor:
		acc := bytes.Clone(m.acc)
		for i := range acc {
			acc[i] ^= m.pat[i]
		}
		m.acc = acc
	case m.acc != nil:
		acc := bytes.Clone(m.acc)
		for i := range acc {
			acc[i] = ^acc[i]
		}
		m.acc = acc
	}
	return int64(len(m.acc))
}

func (m *bitopsModel) clone() *bitopsModel {
	return &bitopsModel{bf: bytes.Clone(m.bf), acc: bytes.Clone(m.acc), pat: m.pat}
}

// TestCrashBitops kills the server (SIGKILL) while writers run BITFIELD
// INCRBY and BITOP, restarts it on the same directory and checks that each
// writer's keys hold exactly its acknowledged commands, plus at most the
// one command it had in flight, applied whole (both fields of an INCRBY or
// neither).
func TestCrashBitops(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	const writers = 3
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			models := make([]*bitopsModel, writers)
			s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
			c := s.client()
			for w := range models {
				pat := make([]byte, 2000)
				for i := range pat {
					pat[i] = byte(rng.Uint32())
				}
				models[w] = &bitopsModel{bf: make([]byte, 4096), pat: pat}
				if err := c.SetRange(ctx, fmt.Sprintf("bf:%d", w), 4095, "\x00").Err(); err != nil {
					t.Fatal(err)
				}
				if err := c.Set(ctx, fmt.Sprintf("pat:%d", w), pat, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for round := 0; round < rounds; round++ {
				target := int64(20 + rng.IntN(400))
				pending := runBitopsUntilKilled(t, s, models, target, rng.Uint64())
				s = startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
				verifyBitops(t, s, models, pending, round)
			}
		})
	}
}

// runBitopsUntilKilled runs the writers until target commands have been
// acknowledged in total, then kills the server. It returns, per writer,
// the command that was sent but not acknowledged, if any.
func runBitopsUntilKilled(t *testing.T, s *server, models []*bitopsModel, target int64, seed uint64) []*bitopsCmd {
	var acked atomic.Int64
	var once sync.Once
	killed := make(chan struct{})
	pending := make([]*bitopsCmd, len(models))
	var wg sync.WaitGroup
	for w := range models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
			defer c.Close()
			m := models[w]
			for {
				select {
				case <-killed:
					return
				default:
				}
				cmd := bitopsCmd{bitfield: rng.IntN(3) != 0, f1: rng.IntN(600), f2: 500 + rng.IntN(600), xor: rng.IntN(3) != 0}
				pending[w] = &cmd
				next := m.clone()
				want := next.apply(cmd)
				var reply any
				var err error
				if cmd.bitfield {
					reply, err = c.Do(ctx, "BITFIELD", fmt.Sprintf("bf:%d", w),
						"INCRBY", "u32", fmt.Sprintf("#%d", cmd.f1), 1, "INCRBY", "u32", fmt.Sprintf("#%d", cmd.f2), 1).Result()
				} else if cmd.xor {
					reply, err = c.Do(ctx, "BITOP", "XOR", fmt.Sprintf("acc:%d", w), fmt.Sprintf("acc:%d", w), fmt.Sprintf("pat:%d", w)).Result()
				} else {
					reply, err = c.Do(ctx, "BITOP", "NOT", fmt.Sprintf("acc:%d", w), fmt.Sprintf("acc:%d", w)).Result()
				}
				if err != nil {
					if !isConnErr(err) {
						t.Errorf("writer %d: %v", w, err)
					}
					return // the server is gone; cmd stays pending
				}
				if fmt.Sprint(reply) != fmt.Sprint(want) {
					t.Errorf("writer %d: %+v replied %v, want %v", w, cmd, reply, want)
				}
				models[w], m, pending[w] = next, next, nil
				if acked.Add(1) == target {
					once.Do(func() { s.kill(); close(killed) })
				}
			}
		}()
	}
	wg.Wait()
	once.Do(func() { s.kill(); close(killed) }) // a writer failed before the target
	return pending
}

// verifyBitops checks each writer's keys against its model, or the model
// with its pending command applied; models take the state found.
func verifyBitops(t *testing.T, s *server, models []*bitopsModel, pending []*bitopsCmd, round int) {
	t.Helper()
	c := s.client()
	for w, m := range models {
		bf, err := c.Get(ctx, fmt.Sprintf("bf:%d", w)).Bytes()
		if err != nil {
			t.Fatalf("round %d: GET bf:%d: %v", round, w, err)
		}
		acc, err := c.Get(ctx, fmt.Sprintf("acc:%d", w)).Bytes()
		if err == redis.Nil {
			acc, err = nil, nil
		}
		if err != nil {
			t.Fatalf("round %d: GET acc:%d: %v", round, w, err)
		}
		matches := func(m *bitopsModel) bool {
			return bytes.Equal(bf, m.bf) && bytes.Equal(acc, m.acc) && (acc == nil) == (m.acc == nil)
		}
		if matches(m) {
			continue
		}
		if p := pending[w]; p != nil {
			next := m.clone()
			next.apply(*p)
			if matches(next) {
				models[w] = next // the unacknowledged command made it, whole
				continue
			}
		}
		t.Fatalf("round %d: writer %d's keys hold neither its acknowledged commands nor those plus the one in flight (%+v): bf %d bytes (model %d), acc %d bytes (model %d)\n%s",
			round, w, pending[w], len(bf), len(m.bf), len(acc), len(m.acc), s.log.String())
	}
}

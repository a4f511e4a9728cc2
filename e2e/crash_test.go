package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// crashModel is what the writers had acknowledged when the server died.
type crashModel struct {
	mu      sync.Mutex
	sets    map[string]string // SET key → value, acknowledged
	counter map[string]int64  // INCR key → last acknowledged value
	mset    map[string]int64  // MSET group → last acknowledged value
	txn     map[string]int64  // MULTI/EXEC pair → last acknowledged value
}

// TestCrashKill9 runs concurrent writers (SET, INCR, MSET, MULTI/EXEC),
// kills the server with SIGKILL at a random moment, restarts it on the
// same directory and checks that every acknowledged write is there,
// counters never go back, and no MSET or EXEC block is half-applied.
func TestCrashKill9(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	seed := rand.Uint64()
	if s := os.Getenv("PERSIMMON_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set PERSIMMON_CRASH_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			m := &crashModel{sets: map[string]string{}, counter: map[string]int64{}, mset: map[string]int64{}, txn: map[string]int64{}}
			for round := 0; round < rounds; round++ {
				s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
				verifyCrashModel(t, s, m, round)
				target := int64(50 + rng.IntN(1500))
				runUntilKilled(t, s, m, round, target)
			}
			s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
			verifyCrashModel(t, s, m, rounds)
		})
	}
}

const crashWriters = 4

// runUntilKilled starts the writers and kills the server once they have
// had target operations acknowledged in total.
func runUntilKilled(t *testing.T, s *server, m *crashModel, round int, target int64) {
	var acked atomic.Int64
	var wg sync.WaitGroup
	killed := make(chan struct{})
	var once sync.Once
	ack := func() {
		if acked.Add(1) == target {
			once.Do(func() { s.kill(); close(killed) })
		}
	}
	for w := 0; w < crashWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
			defer c.Close()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				var err error
				switch i % 4 {
				case 0:
					k, v := fmt.Sprintf("set:%d:%d:%d", round, w, i), fmt.Sprintf("v%d-%d", round, i)
					if err = c.Set(ctx, k, v, 0).Err(); err == nil {
						m.mu.Lock()
						m.sets[k] = v
						m.mu.Unlock()
					}
				case 1:
					k := fmt.Sprintf("counter:%d", w)
					var n int64
					if n, err = c.Incr(ctx, k).Result(); err == nil {
						m.mu.Lock()
						if n < m.counter[k] {
							t.Errorf("INCR %s returned %d after %d was acknowledged", k, n, m.counter[k])
						}
						m.counter[k] = n
						m.mu.Unlock()
					}
				case 2:
					g := fmt.Sprintf("mset:%d", w)
					v := int64(round*1_000_000 + i)
					if err = c.MSet(ctx, g+":a", v, g+":b", v, g+":c", v).Err(); err == nil {
						m.mu.Lock()
						m.mset[g] = v
						m.mu.Unlock()
					}
				case 3:
					g := fmt.Sprintf("txn:%d", w)
					var cmds []redis.Cmder
					cmds, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Incr(ctx, g+":a")
						p.Incr(ctx, g+":b")
						return nil
					})
					if err == nil {
						m.mu.Lock()
						m.txn[g] = cmds[0].(*redis.IntCmd).Val()
						m.mu.Unlock()
					}
				}
				if err == nil {
					ack()
				} else {
					select {
					case <-killed:
						return
					default:
					}
					if !isConnErr(err) {
						t.Errorf("writer %d: %v", w, err)
						return
					}
				}
			}
		}()
	}
	// A writer may not reach the target if all fail first; kill regardless
	// once every writer has stopped.
	go func() { wg.Wait(); once.Do(func() { s.kill(); close(killed) }) }()
	<-killed
	wg.Wait()
}

func isConnErr(err error) bool {
	var re redis.Error
	return !errors.As(err, &re)
}

func verifyCrashModel(t *testing.T, s *server, m *crashModel, round int) {
	t.Helper()
	c := s.client()
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.sets {
		got, err := c.Get(ctx, k).Result()
		if err != nil || got != v {
			t.Fatalf("round %d: acknowledged SET %s=%s lost: got %q, %v\n%s", round, k, v, got, err, s.log.String())
		}
	}
	for k, n := range m.counter {
		got, err := c.Get(ctx, k).Int64()
		if err != nil || got < n || got > n+1 {
			t.Fatalf("round %d: counter %s = %d (%v), acknowledged %d", round, k, got, err, n)
		}
		m.counter[k] = got // an unacknowledged INCR that landed counts from now on
	}
	for g, v := range m.mset {
		vals, err := c.MGet(ctx, g+":a", g+":b", g+":c").Result()
		if err != nil {
			t.Fatal(err)
		}
		a, b, cc := fmt.Sprint(vals[0]), fmt.Sprint(vals[1]), fmt.Sprint(vals[2])
		if a != b || b != cc {
			t.Fatalf("round %d: MSET %s half-applied: %s %s %s", round, g, a, b, cc)
		}
		got, _ := strconv.ParseInt(a, 10, 64)
		if got < v {
			t.Fatalf("round %d: MSET %s went back: %d < acknowledged %d", round, g, got, v)
		}
		m.mset[g] = got
	}
	for g, v := range m.txn {
		a, err1 := c.Get(ctx, g+":a").Int64()
		b, err2 := c.Get(ctx, g+":b").Int64()
		if err1 != nil || err2 != nil || a != b {
			t.Fatalf("round %d: EXEC %s half-applied: a=%d b=%d (%v %v)", round, g, a, b, err1, err2)
		}
		if a < v {
			t.Fatalf("round %d: EXEC %s went back: %d < acknowledged %d", round, g, a, v)
		}
		m.txn[g] = a
	}
}

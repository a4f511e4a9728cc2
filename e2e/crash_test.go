package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
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

	hcounter map[string]int64    // HINCRBY hash → last acknowledged value of field n
	listLen  map[string]int64    // RPUSH list → last acknowledged length
	members  map[string][]string // SADD set → acknowledged members
	zscore   map[string]float64  // ZINCRBY zset → last acknowledged score of member m
	smove    map[string]bool     // SMOVE member → true when last acknowledged in set a
}

func newCrashModel() *crashModel {
	return &crashModel{
		sets: map[string]string{}, counter: map[string]int64{}, mset: map[string]int64{}, txn: map[string]int64{},
		hcounter: map[string]int64{}, listLen: map[string]int64{}, members: map[string][]string{},
		zscore: map[string]float64{}, smove: map[string]bool{},
	}
}

// TestCrashKill9 runs concurrent writers (SET, INCR, MSET, MULTI/EXEC,
// HINCRBY, RPUSH, SADD, ZINCRBY, SMOVE), kills the server with SIGKILL at
// a random moment, restarts it on the same directory and checks that every
// acknowledged write is there, counters, list lengths and scores never go
// back, and no MSET, EXEC block or SMOVE is half-applied.
func TestCrashKill9(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, mode := range []string{"pmem", "msync"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			m := newCrashModel()
			for round := 0; round < rounds; round++ {
				s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
				verifyCrashModel(t, s, m, round)
				target := int64(50 + rng.IntN(1500))
				runUntilKilled(t, s, m, round, target)
			}
			s := startServer(t, dir, "--durability", mode, "--segment-size", "1mb")
			verifyCrashModel(t, s, m, rounds)
			// Every kind of write was acknowledged at least once, so every
			// check above had something to check.
			if len(m.sets) == 0 || len(m.counter) == 0 || len(m.mset) == 0 || len(m.txn) == 0 ||
				len(m.hcounter) == 0 || len(m.listLen) == 0 || len(m.members) == 0 || len(m.zscore) == 0 || len(m.smove) == 0 {
				t.Fatalf("some write kinds were never acknowledged: %d sets %d counters %d mset %d txn %d hash %d list %d set %d zset %d smove",
					len(m.sets), len(m.counter), len(m.mset), len(m.txn), len(m.hcounter), len(m.listLen), len(m.members), len(m.zscore), len(m.smove))
			}
		})
	}
}

const (
	crashWriters = 4
	crashOps     = 9 // kinds of write each writer cycles through
)

// runUntilKilled starts the writers and kills the server once they have
// had target operations acknowledged in total.
func runUntilKilled(t *testing.T, s *server, m *crashModel, round int, target int64) {
	runUntilStopped(t, s, m, round, target, s.kill)
}

// runUntilStopped is runUntilKilled with stop in place of the kill: stop
// must leave the server dead (the power-cut test turns the power off,
// then kills). From the moment the stop starts, writers take an error
// reply (a server whose syncs fail with EIO answers with errors until it
// dies) as the end, not as a failure; every reply that arrived with
// success, before or during stop, is in the model. It returns how many
// writes were acknowledged.
func runUntilStopped(t *testing.T, s *server, m *crashModel, round int, target int64, stop func()) int64 {
	var acked atomic.Int64
	var wg sync.WaitGroup
	stopping := make(chan struct{}) // the stop has started
	killed := make(chan struct{})   // stop has returned: the server is dead
	var once sync.Once
	end := func() {
		once.Do(func() { close(stopping); stop(); close(killed) })
	}
	ack := func() {
		if acked.Add(1) == target {
			end()
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
				switch i % crashOps {
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
				case 4:
					k := fmt.Sprintf("hash:%d", w)
					var n int64
					if n, err = c.HIncrBy(ctx, k, "n", 1).Result(); err == nil {
						m.mu.Lock()
						m.hcounter[k] = n
						m.mu.Unlock()
					}
				case 5:
					k := fmt.Sprintf("list:%d", w)
					var n int64
					if n, err = c.RPush(ctx, k, fmt.Sprintf("e%d-%d", round, i)).Result(); err == nil {
						m.mu.Lock()
						m.listLen[k] = n
						m.mu.Unlock()
					}
				case 6:
					k, member := fmt.Sprintf("set:%d", w), fmt.Sprintf("m%d-%d", round, i)
					if err = c.SAdd(ctx, k, member).Err(); err == nil {
						m.mu.Lock()
						m.members[k] = append(m.members[k], member)
						m.mu.Unlock()
					}
				case 7:
					k := fmt.Sprintf("zset:%d", w)
					var f float64
					if f, err = c.ZIncrBy(ctx, k, 1, "m").Result(); err == nil {
						m.mu.Lock()
						m.zscore[k] = f
						m.mu.Unlock()
					}
				case 8:
					// One member moves between two sets: after any crash it
					// is in exactly one of them (SMOVE is atomic).
					member := fmt.Sprintf("mover:%d", w)
					a, b := fmt.Sprintf("smove:%d:a", w), fmt.Sprintf("smove:%d:b", w)
					m.mu.Lock()
					inA, seen := m.smove[member]
					m.mu.Unlock()
					if !seen {
						if err = c.SAdd(ctx, a, member).Err(); err == nil {
							m.mu.Lock()
							m.smove[member] = true
							m.mu.Unlock()
						}
						break
					}
					from, to := a, b
					if !inA {
						from, to = b, a
					}
					if err = c.SMove(ctx, from, to, member).Err(); err == nil {
						m.mu.Lock()
						m.smove[member] = !inA
						m.mu.Unlock()
					}
				}
				if err == nil {
					ack()
				} else {
					select {
					case <-stopping:
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
	go func() { wg.Wait(); end() }()
	<-killed
	wg.Wait()
	return acked.Load()
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
	for k, n := range m.hcounter {
		got, err := c.HGet(ctx, k, "n").Int64()
		if err != nil || got < n || got > n+1 {
			t.Fatalf("round %d: HINCRBY %s = %d (%v), acknowledged %d", round, k, got, err, n)
		}
		m.hcounter[k] = got
	}
	for k, n := range m.listLen {
		got, err := c.LLen(ctx, k).Result()
		if err != nil || got < n || got > n+1 {
			t.Fatalf("round %d: RPUSH %s length %d (%v), acknowledged %d", round, k, got, err, n)
		}
		m.listLen[k] = got
	}
	for k, ms := range m.members {
		for _, member := range ms {
			if ok, err := c.SIsMember(ctx, k, member).Result(); err != nil || !ok {
				t.Fatalf("round %d: acknowledged SADD %s %s lost (%v)", round, k, member, err)
			}
		}
	}
	for k, f := range m.zscore {
		got, err := c.ZScore(ctx, k, "m").Result()
		if err != nil || got < f || got > f+1 {
			t.Fatalf("round %d: ZINCRBY %s score %v (%v), acknowledged %v", round, k, got, err, f)
		}
		m.zscore[k] = got
	}
	for member := range m.smove {
		w := strings.TrimPrefix(member, "mover:")
		inA, _ := c.SIsMember(ctx, "smove:"+w+":a", member).Result()
		inB, _ := c.SIsMember(ctx, "smove:"+w+":b", member).Result()
		if inA == inB {
			t.Fatalf("round %d: SMOVE %s half-applied or lost: in a=%v, in b=%v", round, member, inA, inB)
		}
		m.smove[member] = inA // an unacknowledged SMOVE that landed counts from now on
	}
}

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The persistent key index (--key-index yes) under kill -9: restarts in a
// row with writers running, and kills that land inside an index growth
// and inside a checkpoint (PERSIMMON_KEYINDEX_PAUSE stops the server
// there; see package keyindex).

// kixModel is what the writers know: per key the acknowledged value ("" =
// absent) and the value of a write in flight when the server died (either
// may be found).
type kixModel struct {
	mu      sync.Mutex
	acked   map[string]string
	pending map[string]string
	short   map[string]shortKey // keys of their own ("w%d:e%d"), not in acked
}

func (m *kixModel) set(k, v string) { m.mu.Lock(); m.pending[k] = v; m.mu.Unlock() }
func (m *kixModel) ack(k string) {
	m.mu.Lock()
	m.acked[k] = m.pending[k]
	delete(m.pending, k)
	m.mu.Unlock()
}

// check compares the server's whole keyspace with the model and adopts
// what it finds for keys whose write was in flight.
func (m *kixModel) check(t *testing.T, c *redis.Client, round int) {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatalf("round %d: KEYS: %v", round, err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Fatalf("round %d: KEYS returned %s twice", round, k)
		}
		seen[k] = true
	}
	got := map[string]string{}
	shortFound := 0
	for _, k := range keys {
		if strings.Contains(k, ":e") {
			shortFound++ // checked below
			continue
		}
		var v string
		if collKind(k) != 0 {
			v, err = readColl(ctx, c, k)
		} else {
			v, err = c.Get(ctx, k).Result()
		}
		if err != nil {
			t.Fatalf("round %d: reading %s: %v", round, k, err)
		}
		got[k] = v
	}
	n, err := c.DBSize(ctx).Result()
	m.mu.Lock()
	defer m.mu.Unlock()
	// DBSIZE counts keys expired but not yet removed, as Redis's does;
	// keys with a short expiry KEYS listed may have expired since.
	if err != nil || int(n) < len(keys)-shortFound || int(n) > len(keys)+len(m.short)-shortFound {
		t.Fatalf("round %d: DBSIZE %d (%v), KEYS found %d, %d keys with a short expiry", round, n, err, len(keys), len(m.short))
	}
	all := map[string]bool{}
	for k := range got {
		all[k] = true
	}
	for k, v := range m.acked {
		if v != "" {
			all[k] = true
		}
	}
	for k := range m.pending {
		all[k] = true
	}
	for k := range all {
		g := got[k]
		p, inFlight := m.pending[k]
		if g != m.acked[k] && !(inFlight && g == p) {
			t.Fatalf("round %d: key %s = %q; acknowledged %q, in flight %q (%v)", round, k, g, m.acked[k], p, inFlight)
		}
		m.acked[k] = g
		// A value written with an expiry says so ("-ttl"): the key must
		// still have one, and the others none (INCR keeps none).
		if g != "" {
			ttl, err := c.PTTL(ctx, k).Result()
			if err != nil || strings.Contains(g, "-ttl") != (ttl > 0) {
				t.Fatalf("round %d: key %s = %q has PTTL %v (%v)", round, k, g, ttl, err)
			}
		}
	}
	clear(m.pending)
	// Keys written with a short expiry: absent once it has passed, their
	// value until then.
	for k, e := range m.short {
		if e.inFlight {
			// Sent before the kill, which came before this check: if it
			// was applied, its expiry is at most ttl from now. The value
			// is either.
			e.deadline = time.Now().Add(e.ttl)
			e.inFlight, e.anyVal = false, true
			m.short[k] = e
		}
		v, err := c.Get(ctx, k).Result()
		switch {
		case err == redis.Nil:
		case err != nil:
			t.Fatalf("round %d: GET %s: %v", round, k, err)
		case time.Now().After(e.deadline.Add(50 * time.Millisecond)):
			t.Fatalf("round %d: key %s = %q served %v after its expiry", round, k, v, time.Since(e.deadline))
		case v != e.val && !e.anyVal:
			t.Fatalf("round %d: key %s = %q, want %q", round, k, v, e.val)
		}
	}
}

// shortKey is a key written with a short expiry: its value, and the
// client's clock when the expiry passes at the latest.
type shortKey struct {
	val      string
	deadline time.Time
	ttl      time.Duration
	inFlight bool // the write was in flight when the server died
	anyVal   bool // so the value may be either
}

// kixWriter writes to its own keys until stop: SET, DEL, MSET of two keys,
// INCR, with a value naming the writer and step; with colls also writes to
// its hashes, sets, sorted sets, lists and streams.
func kixWriter(c *redis.Client, m *kixModel, w int, stop <-chan struct{}, r *rand.Rand, colls bool) {
	ops := 100
	if colls {
		ops = 130
	}
	ctx := context.Background()
	for step := 0; ; step++ {
		select {
		case <-stop:
			return
		default:
		}
		k := fmt.Sprintf("w%d:k%d", w, r.IntN(300))
		v := fmt.Sprintf("w%d-s%d-%s", w, step, strings.Repeat("x", r.IntN(40)))
		var err error
		switch x := r.IntN(ops); {
		case x >= 100: // a hash, set, sorted set, list or stream (keyindex_colls_test.go)
			var cmd []any
			var after string
			k, cmd, after = collOp(w, r, func(k string) string { m.mu.Lock(); defer m.mu.Unlock(); return m.acked[k] }, v)
			m.set(k, after)
			err = c.Do(ctx, cmd...).Err()
			if err == redis.Nil {
				// LPOP found no list, which the model said had elements: a
				// reply all the same; the check after the restart (or the
				// next LPOP's) finds the disagreement.
				err = nil
			}
			if err == nil {
				m.ack(k)
			}
		case x < 45:
			m.set(k, v)
			err = c.Set(ctx, k, v, 0).Err()
			if err == nil {
				m.ack(k)
			}
		case x < 55: // an expiry far away: it must survive the restarts
			v += "-ttl"
			m.set(k, v)
			err = c.Set(ctx, k, v, time.Hour).Err()
			if err == nil {
				m.ack(k)
			}
		case x < 60: // a short expiry, on keys of their own
			k = fmt.Sprintf("w%d:e%d", w, r.IntN(50))
			d := time.Duration(1+r.IntN(300)) * time.Millisecond
			m.mu.Lock()
			ttl := d
			if prev, ok := m.short[k]; ok {
				ttl = max(ttl, time.Until(prev.deadline)) // the older value may stay until its own expiry
			}
			m.short[k] = shortKey{val: v, ttl: ttl, inFlight: true}
			m.mu.Unlock()
			err = c.Set(ctx, k, v, d).Err()
			if err == nil {
				m.mu.Lock()
				m.short[k] = shortKey{val: v, deadline: time.Now().Add(d), ttl: d} // the server's clock started before the reply
				m.mu.Unlock()
			}
		case x < 75:
			m.set(k, "")
			err = c.Del(ctx, k).Err()
			if err == nil {
				m.ack(k)
			}
		case x < 90:
			k2 := fmt.Sprintf("w%d:k%d", w, r.IntN(300))
			if k2 == k {
				continue
			}
			m.set(k, v)
			m.set(k2, v+"'")
			err = c.MSet(ctx, k, v, k2, v+"'").Err()
			if err == nil {
				m.ack(k)
				m.ack(k2)
			}
		default:
			k = fmt.Sprintf("w%d:n%d", w, r.IntN(20))
			m.mu.Lock()
			cur := m.acked[k]
			m.mu.Unlock()
			n, _ := strconv.Atoi(cur)
			m.set(k, strconv.Itoa(n+1))
			err = c.Incr(ctx, k).Err()
			if err == nil {
				m.ack(k)
			}
		}
		if err != nil {
			return // the server was killed: the write stays in flight
		}
	}
}

func kixRounds(t *testing.T) int {
	if v, err := strconv.Atoi(os.Getenv("PERSIMMON_KIX_ROUNDS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 4
	}
	return 10 // make test-long runs 100
}

// TestKillKeyIndexRestarts: the server with the key index is killed
// (SIGKILL) again and again while writers run; after each restart the
// whole keyspace must be what the acknowledged writes say (a write in
// flight may be either way). Small segments make the cleaner remove
// segments under the checkpoint.
func TestKillKeyIndexRestarts(t *testing.T) { killKeyIndexRestarts(t, false) }

// TestKillKeyIndexRestartsCollections: the same with a quarter of the
// writes going to hashes, sets, sorted sets, lists and streams, whose
// whole content the model holds. Collections live in DRAM entries whose
// anchors the checkpoint holds (keyspace/kixanchor.go), so the restarts
// re-attach the index and rebuild the collections from their anchors: at
// least 9 of 10 must (a kill inside a checkpoint's apply rebuilds from
// the log), each with the whole keyspace as the model says.
func TestKillKeyIndexRestartsCollections(t *testing.T) { killKeyIndexRestarts(t, true) }

func killKeyIndexRestarts(t *testing.T, colls bool) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(crashSeed(t), 11))
	m := &kixModel{acked: map[string]string{}, pending: map[string]string{}, short: map[string]shortKey{}}
	args := []string{"--key-index", "yes", "--segment-size", "256kb"}
	rounds := kixRounds(t)
	attached, compared := 0, 0
	for round := 0; round < rounds; round++ {
		s := startServer(t, dir, args...)
		c := s.client()
		t.Logf("round %d: %s", round, lastLine(s.log.String(), "recovery: key index"))
		m.check(t, c, round)
		if strings.Contains(s.log.String(), "key index re-attached") {
			attached++
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wc := s.client()
			wr := rand.New(rand.NewPCG(r.Uint64(), uint64(w)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer wc.Close()
				kixWriter(wc, m, w, stop, wr, colls)
			}()
		}
		time.Sleep(time.Duration(150+r.IntN(1200)) * time.Millisecond) // the kill lands anywhere: not a synchronisation
		s.kill()
		close(stop)
		wg.Wait()
		c.Close()
		// persimmon-check verify replays the log to the index's
		// checkpoint and compares (a torn tail is not corruption).
		out, code := persimmonCheck(t, "verify", dir)
		if code != 0 || !strings.Contains(out, "key index") {
			t.Fatalf("round %d: persimmon-check verify exited %d:\n%s", round, code, out)
		}
		if strings.Contains(out, " 0 disagreements") {
			compared++
		}
	}
	s := startServer(t, dir, args...)
	c := s.client()
	t.Logf("round %d: %s", rounds, lastLine(s.log.String(), "recovery: key index"))
	m.check(t, c, rounds)
	if strings.Contains(s.log.String(), "key index re-attached") {
		attached++
	}
	c.Close()
	s.kill()
	if attached == 0 || compared == 0 {
		t.Fatalf("of %d restarts %d re-attached the index and persimmon-check compared it %d times: the fast path was not tested", rounds, attached, compared)
	}
	// With collections too (their anchors in the checkpoint): only a kill
	// inside a checkpoint's apply leaves one that is rebuilt from the log.
	if colls && attached*10 < rounds*9 {
		t.Fatalf("of %d restarts only %d re-attached the key index's checkpoint", rounds, attached)
	}
	t.Logf("%d restarts, %d re-attached the key index's checkpoint, persimmon-check compared it with the log %d times", rounds, attached, compared)
}

// TestKillKeyIndexGrowthCheckpoint: a kill -9 lands while the index is
// growing (its side file built, or just renamed over the table) or
// checkpointing (pages persisted, block not yet; block written); every
// acknowledged write must be there after the restart.
func TestKillKeyIndexGrowthCheckpoint(t *testing.T) {
	for _, stage := range []string{"grow:step:5", "grow:persisted:2", "grow:built:3", "grow:renamed:3", "ckpt:applying:3", "ckpt:pages:3", "ckpt:block:3"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("PERSIMMON_KEYINDEX_PAUSE", stage)
			s := startServer(t, dir, "--key-index", "yes", "--segment-size", "256kb")
			c := s.client()
			ctx := context.Background()
			acked := 0
			want := map[int]string{}    // keys changed after their first write
			uncertain := map[int]bool{} // changed by the batch in flight
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(s.log.String(), "keyindex: paused at") {
				if time.Now().After(deadline) {
					t.Fatalf("the server never reached %s", stage)
				}
				// Pipelined batches of SETs with a delete and an
				// overwrite of older keys now and then; a batch blocked
				// by the pause is in flight.
				pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				p := c.Pipeline()
				for i := 0; i < 200; i++ {
					k := acked + i
					p.Set(pctx, fmt.Sprintf("key:%d", k), fmt.Sprintf("val:%d", k), 0)
				}
				del, over := -1, -1
				if acked >= 2000 && acked%2000 == 0 {
					del, over = acked-1999, acked-1998
					p.Del(pctx, fmt.Sprintf("key:%d", del))
					p.Set(pctx, fmt.Sprintf("key:%d", over), "over", 0)
				}
				_, err := p.Exec(pctx)
				cancel()
				if err != nil {
					if del >= 0 {
						uncertain[del], uncertain[over] = true, true
					}
					break // paused: the batch is in flight
				}
				acked += 200
				if del >= 0 {
					want[del], want[over] = "", "over"
				}
			}
			for !strings.Contains(s.log.String(), "keyindex: paused at") {
				if time.Now().After(deadline) {
					t.Fatalf("the server never reached %s", stage)
				}
				time.Sleep(10 * time.Millisecond) // waiting for a log line, not ordering writes
			}
			s.kill()
			c.Close()
			os.Unsetenv("PERSIMMON_KEYINDEX_PAUSE")
			s = startServer(t, dir, "--key-index", "yes", "--segment-size", "256kb")
			defer s.kill()
			c = s.client()
			defer c.Close()
			for base := 0; base < acked; base += 1000 {
				p := c.Pipeline()
				var gets []*redis.StringCmd
				for k := base; k < min(base+1000, acked); k++ {
					gets = append(gets, p.Get(ctx, fmt.Sprintf("key:%d", k)))
				}
				p.Exec(ctx) // redis.Nil for deleted keys: checked per command below
				for i, g := range gets {
					k := base + i
					if uncertain[k] {
						continue
					}
					w, changed := want[k]
					if !changed {
						w = fmt.Sprintf("val:%d", k)
					}
					got, err := g.Result()
					if err == redis.Nil {
						got, err = "", nil
					}
					if err != nil || got != w {
						t.Fatalf("%s: key:%d = %q, %v; want %q (%d acknowledged)", stage, k, got, err, w, acked)
					}
				}
			}
			if n := c.DBSize(ctx).Val(); n < int64(acked-len(want)/2-1) || n > int64(acked+200) {
				t.Fatalf("%s: DBSIZE %d for %d acknowledged keys", stage, n, acked)
			}
			t.Logf("%s: %d acknowledged keys checked; %s", stage, acked, lastLine(s.log.String(), "key index"))
		})
	}
}

func lastLine(log, sub string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return ""
}

// TestKillKeyIndexCheckpointInFlight: the checkpointer's job (its dirty
// pages and final block, persisted without the keyspace lock) is held
// before its pages are persisted, or before its block is, while clients
// go on writing: the server must keep acknowledging writes (new keys,
// overwrites and deletions staged after the checkpoint began), and after
// a kill -9 every acknowledged write must be there.
func TestKillKeyIndexCheckpointInFlight(t *testing.T) {
	for _, stage := range []string{"ckpt:pages:3", "ckpt:block:3"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("PERSIMMON_KEYINDEX_PAUSE", stage)
			// The default segment size: no cleaning (whose checkpoint
			// would wait for the held job) in these few writes.
			s := startServer(t, dir, "--key-index", "yes")
			c := s.client()
			ctx := context.Background()
			want := map[string]string{} // acknowledged: "" is deleted
			n, batches, after := 0, 0, 0
			deadline := time.Now().Add(60 * time.Second)
			for after < 20 {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %d batches acknowledged, %d after the pause", stage, batches, after)
				}
				paused := strings.Contains(s.log.String(), "keyindex: paused at")
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				p := c.Pipeline()
				batch := map[string]string{}
				for i := 0; i < 200; i++ {
					k := fmt.Sprintf("key:%d", n)
					n++
					batch[k] = fmt.Sprintf("val:%d", n)
					p.Set(pctx, k, batch[k], 0)
				}
				if n > 1000 { // an overwrite and a deletion of older keys
					o, d := fmt.Sprintf("key:%d", n-1000), fmt.Sprintf("key:%d", n-999)
					batch[o], batch[d] = "over", ""
					p.Set(pctx, o, "over", 0)
					p.Del(pctx, d)
				}
				_, err := p.Exec(pctx)
				cancel()
				if err != nil {
					t.Fatalf("%s: batch %d (%d after the pause): %v", stage, batches, after, err)
				}
				for k, v := range batch {
					want[k] = v
				}
				batches++
				if paused {
					after++
				}
			}
			if !strings.Contains(s.log.String(), "keyindex: paused at") {
				t.Fatalf("%s: no pause", stage)
			}
			s.kill()
			c.Close()
			os.Unsetenv("PERSIMMON_KEYINDEX_PAUSE")
			s = startServer(t, dir, "--key-index", "yes")
			defer s.kill()
			c = s.client()
			defer c.Close()
			live := 0
			for k, w := range want {
				got, err := c.Get(ctx, k).Result()
				if err == redis.Nil {
					got, err = "", nil
				}
				if err != nil || got != w {
					t.Fatalf("%s: %s = %q, %v; want %q", stage, k, got, err, w)
				}
				if w != "" {
					live++
				}
			}
			if got := c.DBSize(ctx).Val(); got != int64(live) {
				t.Fatalf("%s: DBSIZE %d, want %d", stage, got, live)
			}
			t.Logf("%s: %d writes acknowledged, %d batches after the pause; %s", stage, n, after, lastLine(s.log.String(), "key index"))
		})
	}
}

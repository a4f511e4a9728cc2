package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Collections under the key index (keyspace/kixanchor.go): a checkpoint
// with collections is re-attached, and the collections are rebuilt from
// their anchors. Kills that land inside the cleaner's rewrite of a
// collection (PERSIMMON_KEYSPACE_PAUSE stops the server there), and
// kills with writers that expire, delete and re-create keys as other
// types between checkpoints.

// TestKillKeyIndexCleanerRewrite: a hash big enough that the cleaner
// rewrites it as a group of records, small collections beside it, and
// a kill -9 while the cleaner's rewrite is half written (clean:group),
// written but not yet under a checkpoint (clean:copied), or after the
// segment went (clean:removed). The restart re-attaches the index and
// every collection is there whole; persimmon-check verify agrees.
func TestKillKeyIndexCleanerRewrite(t *testing.T) {
	for _, stage := range []string{"clean:group:1", "clean:copied:1", "clean:removed:2"} {
		t.Run(stage, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			args := []string{"--key-index", "yes", "--segment-size", "4mb"}
			t.Setenv("PERSIMMON_KEYSPACE_PAUSE", stage)
			s := startServer(t, dir, args...)
			c := s.client()
			const fields = 30000 // ~2 MB: a rewrite of three records of at most 1 MiB
			for base := 0; base < fields; base += 1000 {
				var kv []any
				for i := base; i < base+1000; i++ {
					kv = append(kv, fmt.Sprintf("f%05d", i), fmt.Sprintf("value-%05d-%s", i, strings.Repeat("x", 40)))
				}
				if err := c.HSet(ctx, "big", kv...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			small := smallCollections(t, c, 40)
			// A checkpoint holding them all (one that ended with nothing
			// staged after the last write), so that the restart has one
			// with collections to re-attach.
			index := func(name string) int64 {
				n, _ := strconv.ParseInt(infoField(c.Info(ctx, "memory").Val(), name), 10, 64)
				return n
			}
			cpDeadline := time.Now().Add(time.Minute)
			for n0 := index("key_index_checkpoints"); index("key_index_checkpoints") <= n0 || index("key_index_staged") != 0; {
				if time.Now().After(cpDeadline) {
					t.Fatal("no key-index checkpoint within a minute")
				}
				time.Sleep(50 * time.Millisecond) // polling INFO for the checkpoint, not ordering writes
			}
			filler := strings.Repeat("f", 60<<10)
			deadline := time.Now().Add(90 * time.Second)
			for !strings.Contains(s.log.String(), "keyspace: paused at") {
				if time.Now().After(deadline) {
					t.Fatalf("the server never reached %s", stage)
				}
				// Overwrites of one key: dead bytes, so the cleaner runs.
				pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				p := c.Pipeline()
				for i := 0; i < 8; i++ {
					p.Set(pctx, "filler", filler, 0)
				}
				_, err := p.Exec(pctx)
				cancel()
				if err != nil && !strings.Contains(s.log.String(), "keyspace: paused at") {
					time.Sleep(10 * time.Millisecond) // waiting for the log line of the pause, not ordering writes
				}
			}
			s.kill()
			c.Close()
			os.Unsetenv("PERSIMMON_KEYSPACE_PAUSE")
			out, code := persimmonCheck(t, "verify", dir)
			if code != 0 || !strings.Contains(out, " 0 disagreements") {
				t.Fatalf("persimmon-check verify exited %d:\n%s", code, out)
			}
			t.Logf("%s", lastLine(out, "key index"))
			s = startServer(t, dir, args...)
			defer s.kill()
			c = s.client()
			defer c.Close()
			line := lastLine(s.log.String(), "recovery: key index")
			t.Logf("%s", line)
			if !strings.Contains(line, "re-attached") || strings.Contains(line, " 0 anchored keys") {
				t.Fatalf("the restart did not re-attach the index with its collections: %s", line)
			}
			if n := c.HLen(ctx, "big").Val(); n != fields {
				t.Fatalf("HLEN big = %d after the restart, want %d", n, fields)
			}
			got := c.HGetAll(ctx, "big").Val()
			for i := 0; i < fields; i++ {
				if want := fmt.Sprintf("value-%05d-%s", i, strings.Repeat("x", 40)); got[fmt.Sprintf("f%05d", i)] != want {
					t.Fatalf("HGET big f%05d = %q, want %q", i, got[fmt.Sprintf("f%05d", i)], want)
				}
			}
			small.check(t, c, "after the restart")
		})
	}
}

// collModel is what a test wrote: per key its type, its value in a
// canonical form (collDump) and its expiry (Unix ms, 0: none).
type collModel struct {
	typ  map[string]string
	val  map[string]string
	exp  map[string]int64
	skip map[string]bool // a write in flight when the server died
}

func newCollModel() *collModel {
	return &collModel{typ: map[string]string{}, val: map[string]string{}, exp: map[string]int64{}, skip: map[string]bool{}}
}

// smallCollections writes n small collections of each kind.
func smallCollections(t *testing.T, c *redis.Client, n int) *collModel {
	ctx := context.Background()
	m := newCollModel()
	for i := 0; i < n; i++ {
		for _, typ := range []string{"hash", "set", "zset", "list"} {
			k := fmt.Sprintf("%s:%d", typ, i)
			for j := 0; j <= i%7; j++ {
				var err error
				switch typ {
				case "hash":
					err = c.HSet(ctx, k, fmt.Sprint("f", j), fmt.Sprint("v", i, j)).Err()
				case "set":
					err = c.SAdd(ctx, k, fmt.Sprint("m", j)).Err()
				case "zset":
					err = c.ZAdd(ctx, k, redis.Z{Score: float64(j), Member: fmt.Sprint("m", j)}).Err()
				case "list":
					err = c.RPush(ctx, k, fmt.Sprint("e", j)).Err()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			m.typ[k] = typ
			m.val[k] = collDump(c, k, typ)
		}
	}
	return m
}

// collDump is the value of k (of type typ) in a canonical form.
func collDump(c *redis.Client, k, typ string) string {
	ctx := context.Background()
	switch typ {
	case "string":
		return c.Get(ctx, k).Val()
	case "hash":
		var out []string
		for f, v := range c.HGetAll(ctx, k).Val() {
			out = append(out, f+"="+v)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	case "set":
		out := c.SMembers(ctx, k).Val()
		slices.Sort(out)
		return strings.Join(out, ",")
	case "zset":
		var out []string
		for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
			out = append(out, fmt.Sprint(z.Member, "=", z.Score))
		}
		return strings.Join(out, ",")
	case "list":
		return strings.Join(c.LRange(ctx, k, 0, -1).Val(), ",")
	}
	return "?"
}

// check compares the server with the model: every key's type, value and
// expiry, and no key the model does not have. A key whose expiry is
// within a second of now either way is not looked at.
func (m *collModel) check(t *testing.T, c *redis.Client, when string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UnixMilli()
	near := func(k string) bool { return m.exp[k] != 0 && m.exp[k] > now-1000 && m.exp[k] < now+1000 }
	for k, typ := range m.typ {
		if m.skip[k] || near(k) {
			continue
		}
		gone := m.exp[k] != 0 && m.exp[k] <= now
		got := c.Type(ctx, k).Val()
		switch {
		case gone && got != "none":
			t.Fatalf("%s: %s is a %s, but it expired %d ms ago", when, k, got, now-m.exp[k])
		case gone:
		case got != typ:
			t.Fatalf("%s: %s is a %s, want a %s", when, k, got, typ)
		case collDump(c, k, typ) != m.val[k]:
			t.Fatalf("%s: %s = %q, want %q", when, k, collDump(c, k, typ), m.val[k])
		case (c.PTTL(ctx, k).Val() > 0) != (m.exp[k] != 0):
			t.Fatalf("%s: %s has PTTL %v, the model's expiry is %d", when, k, c.PTTL(ctx, k).Val(), m.exp[k])
		}
	}
	for _, k := range c.Keys(ctx, "*").Val() {
		if _, ok := m.typ[k]; !ok && !m.skip[k] && k != "filler" && k != "big" {
			t.Fatalf("%s: %s (a %s) is there, the model does not have it", when, k, c.Type(ctx, k).Val())
		}
	}
}

// TestKillKeyIndexExpireRecreate: a writer turns keys over between
// checkpoints (kill -9 at a random moment, ten times): collections of
// every kind that are emptied, deleted, given expiries that pass without
// a record, and re-created as another type or as a string, and strings
// patched by APPEND and SETRANGE. Every
// restart re-attaches the index (but a kill inside a checkpoint's apply)
// and holds exactly what was acknowledged.
func TestKillKeyIndexExpireRecreate(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(crashSeed(t), 23))
	args := []string{"--key-index", "yes", "--segment-size", "256kb"}
	m := newCollModel()
	rounds := kixRounds(t)
	attached := 0
	for round := 0; round <= rounds; round++ {
		s := startServer(t, dir, args...)
		c := s.client()
		line := lastLine(s.log.String(), "recovery: key index")
		t.Logf("round %d: %s", round, line)
		if round > 0 && strings.Contains(line, "re-attached") {
			attached++
		}
		m.check(t, c, fmt.Sprintf("round %d", round))
		if round == rounds {
			c.Close()
			s.kill()
			break
		}
		clear(m.skip)
		stop := time.Now().Add(time.Duration(300+r.IntN(1500)) * time.Millisecond)
		wr := rand.New(rand.NewPCG(r.Uint64(), 1))
		done := make(chan struct{})
		go func() {
			defer close(done)
			collWriter(c, m, wr, stop)
		}()
		<-done // the writer stops at its deadline and leaves its last write unacknowledged or not: the kill is next
		s.kill()
		c.Close()
		if out, code := persimmonCheck(t, "verify", dir); code != 0 {
			t.Fatalf("round %d: persimmon-check verify exited %d:\n%s", round, code, out)
		}
	}
	if attached*10 < rounds*9 {
		t.Fatalf("%d of %d restarts re-attached the key index", attached, rounds)
	}
	t.Logf("%d of %d restarts re-attached the key index", attached, rounds)
}

// collWriter writes random operations until stop, keeping m: each is
// acknowledged before the next; the key of one that fails (the server
// died) is marked skip.
func collWriter(c *redis.Client, m *collModel, r *rand.Rand, stop time.Time) {
	ctx := context.Background()
	types := []string{"hash", "set", "zset", "list", "string"}
	for time.Now().Before(stop) {
		k := fmt.Sprintf("x:%d", r.IntN(60))
		now := time.Now().UnixMilli()
		if e := m.exp[k]; e != 0 && e <= now-20 {
			delete(m.typ, k) // expired (no record says so)
			delete(m.val, k)
			delete(m.exp, k)
		} else if e != 0 && e < now+600_000 {
			// A short expiry pending: the key is left alone until it has
			// passed. (A replay of the log after the checkpoint drops a
			// collection at an expiry command whose time has passed, so
			// writes made to it before that time would come back as a
			// partial collection of their own: a flaw of replaying the
			// log, with or without the index, not what this test is
			// about. Up to the checkpoint the anchors avoid it:
			// TestKeyIndexAnchorsKeepExpiredIncarnation.)
			continue
		}
		typ, exists := m.typ[k]
		var err error
		switch op := r.IntN(10); {
		case op == 0:
			err = c.Del(ctx, k).Err()
			if err == nil {
				delete(m.typ, k)
				delete(m.val, k)
				delete(m.exp, k)
			}
		case op == 1 && exists:
			at := now + 100 + int64(r.IntN(300)) // passes within the round, or soon after the restart
			if r.IntN(3) == 0 {
				at = now + 3600_000
			}
			err = c.PExpireAt(ctx, k, time.UnixMilli(at)).Err()
			if err == nil {
				m.exp[k] = at
			}
		case op == 2 && exists && typ != "string":
			// Re-created as another type: DEL, then the new one.
			nt := types[r.IntN(len(types))]
			if err = c.Del(ctx, k).Err(); err == nil {
				delete(m.typ, k)
				delete(m.val, k)
				delete(m.exp, k)
				err = collAdd(c, k, nt, r)
				if err == nil {
					m.typ[k] = nt
				}
			}
		case op == 3 && exists && typ == "list":
			err = c.LPop(ctx, k).Err() // may empty it
			if err == nil && c.Exists(ctx, k).Val() == 0 {
				delete(m.typ, k)
				delete(m.val, k)
				delete(m.exp, k)
			}
		default:
			nt := typ
			if !exists {
				nt = types[r.IntN(len(types))]
			}
			switch {
			case nt == "string" && exists && r.IntN(2) == 0:
				// A patched string, anchored at its base (keyspace/patchbase.go).
				if r.IntN(2) == 0 {
					err = c.Append(ctx, k, "a").Err()
				} else {
					err = c.SetRange(ctx, k, int64(r.IntN(6)), "r").Err()
				}
			case nt == "string":
				err = c.Set(ctx, k, fmt.Sprint("s", r.IntN(1000)), redis.KeepTTL).Err()
			default:
				err = collAdd(c, k, nt, r)
			}
			if err == nil {
				m.typ[k] = nt
			}
		}
		if err != nil && err != redis.Nil {
			m.skip[k] = true
			return
		}
		if t, ok := m.typ[k]; ok {
			m.val[k] = collDump(c, k, t)
		}
	}
}

// collAdd adds a random element to the collection k of type typ.
func collAdd(c *redis.Client, k, typ string, r *rand.Rand) error {
	ctx := context.Background()
	switch typ {
	case "hash":
		return c.HSet(ctx, k, fmt.Sprint("f", r.IntN(20)), fmt.Sprint("v", r.IntN(1000))).Err()
	case "set":
		return c.SAdd(ctx, k, fmt.Sprint("m", r.IntN(20))).Err()
	case "zset":
		return c.ZAdd(ctx, k, redis.Z{Score: float64(r.IntN(100)), Member: fmt.Sprint("m", r.IntN(20))}).Err()
	case "list":
		return c.RPush(ctx, k, fmt.Sprint("e", r.IntN(1000))).Err()
	}
	return c.Set(ctx, k, fmt.Sprint("s", r.IntN(1000)), 0).Err()
}

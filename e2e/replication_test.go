package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// replInfo returns field of INFO replication (or stats: sync_* fields).
func replInfo(c *redis.Client, section, field string) string {
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		return ""
	}
	return infoField(info, field)
}

// pollFor polls cond until it holds or the deadline passes.
func pollFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond) // polling INFO
	}
}

// caughtUp reports whether replica r is linked and at master m's offset.
func caughtUp(m, r *redis.Client) bool {
	mo := replInfo(m, "replication", "master_repl_offset")
	return replInfo(r, "replication", "master_link_status") == "up" && mo != "" &&
		replInfo(r, "replication", "slave_repl_offset") == mo
}

// sameData compares every key of db 0 on two servers: type and value
// (lists in order, set and hash members sorted, sorted sets with scores).
func sameData(t *testing.T, a, b *redis.Client) int {
	t.Helper()
	ka, _ := a.Keys(ctx, "*").Result()
	kb, _ := b.Keys(ctx, "*").Result()
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		t.Fatalf("keys differ: %d on one, %d on the other", len(ka), len(kb))
	}
	render := func(c *redis.Client, k string) string {
		typ, _ := c.Type(ctx, k).Result()
		var v any
		switch typ {
		case "string":
			v, _ = c.Get(ctx, k).Result()
		case "list":
			v, _ = c.LRange(ctx, k, 0, -1).Result()
		case "set":
			m, _ := c.SMembers(ctx, k).Result()
			slices.Sort(m)
			v = m
		case "hash":
			v, _ = c.HGetAll(ctx, k).Result()
		case "zset":
			v, _ = c.ZRangeWithScores(ctx, k, 0, -1).Result()
		}
		return fmt.Sprintf("%s %v", typ, v)
	}
	for _, k := range ka {
		if va, vb := render(a, k), render(b, k); va != vb {
			t.Fatalf("key %q differs:\n%s\n%s", k, va, vb)
		}
	}
	return len(ka)
}

// TestReplicaKill9ResumesPartially: a Persimmon replica of a Persimmon
// master is killed with SIGKILL while the master takes writes (INCR and
// RPUSH: a unit applied twice or lost would show), then restarted on its
// data directory with the same --replicaof: it resumes from the position
// recovered with its data (+CONTINUE, a partial resync: the master counts
// no second full sync), and ends with exactly the master's data. Then
// the same after a clean restart.
func TestReplicaKill9ResumesPartially(t *testing.T) {
	m := startServer(t, t.TempDir())
	mc := m.client()
	_, mport, _ := strings.Cut(m.Addr, ":")
	for i := range 200 {
		mc.Set(ctx, "k"+strconv.Itoa(i), "v", 0)
	}
	rdir := t.TempDir()
	r := startServer(t, rdir, "--replicaof", "127.0.0.1", mport)
	rc := r.client()
	pollFor(t, "the first sync", 30*time.Second, func() bool { return caughtUp(mc, rc) })

	for round := range 3 {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var writes [4]int
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: m.Addr, MaxRetries: -1})
				defer c.Close()
				for {
					select {
					case <-stop:
						return
					default:
					}
					n := writes[w]
					pipe := c.TxPipeline()
					pipe.Incr(ctx, "n"+strconv.Itoa(w))
					pipe.RPush(ctx, "l"+strconv.Itoa(w), n)
					if _, err := pipe.Exec(ctx); err != nil {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					c.Incr(ctx, "single"+strconv.Itoa(w))
					writes[w]++
				}
			}()
		}
		// Kill the replica once it has applied some of this round's
		// writes (mid-stream), then let the master go on alone a little.
		base, _ := strconv.ParseInt(replInfo(rc, "replication", "slave_repl_offset"), 10, 64)
		pollFor(t, "the replica to apply writes", 30*time.Second, func() bool {
			o, _ := strconv.ParseInt(replInfo(rc, "replication", "slave_repl_offset"), 10, 64)
			return o > base+20000
		})
		clean := round == 2
		if clean {
			if err := r.stop(); err != nil {
				t.Fatal(err)
			}
		} else {
			r.kill()
		}
		moff, _ := strconv.ParseInt(replInfo(mc, "replication", "master_repl_offset"), 10, 64)
		pollFor(t, "more writes on the master", 30*time.Second, func() bool {
			o, _ := strconv.ParseInt(replInfo(mc, "replication", "master_repl_offset"), 10, 64)
			return o > moff+20000
		})
		r = startServer(t, rdir, "--replicaof", "127.0.0.1", mport)
		rc = r.client()
		close(stop)
		wg.Wait()
		pollFor(t, "the restarted replica to catch up", 30*time.Second, func() bool { return caughtUp(mc, rc) })
		n := sameData(t, mc, rc)
		full := replInfo(mc, "stats", "sync_full")
		partial := replInfo(mc, "stats", "sync_partial_ok")
		if full != "1" || partial != strconv.Itoa(round+1) {
			t.Fatalf("round %d: master counts %s full and %s partial resyncs; replica log:\n%s", round, full, partial, r.log.String())
		}
		if !strings.Contains(r.log.String(), "stored position") {
			t.Fatalf("the restarted replica does not log its stored position:\n%s", r.log.String())
		}
		t.Logf("round %d (clean %v): %d keys equal, writes %v, partial resyncs %s", round, clean, n, writes, partial)
	}
}

// TestMasterRestartResumesReplicas: a Persimmon master with a Persimmon
// replica and a redis-server 7.0 replica is shut down cleanly (SIGTERM)
// and restarted on its port: it stored its replication ID and offset, so
// both replicas resume with a partial resync (the restarted master counts
// two and no full one; its replid2 is the old ID), including the writes
// it took before they came back, and hold its data. After kill -9 it has
// no stored position (as Redis 7.0 with AOF, which keeps none after any
// restart): a new history, and both replicas resync fully.
func TestMasterRestartResumesReplicas(t *testing.T) {
	mp := sentinelPorts(t, 1)[0]
	mdir := t.TempDir()
	m := startServerOn(t, mdir, mp)
	mc := m.client()
	r := startServer(t, t.TempDir(), "--replicaof", "127.0.0.1", strconv.Itoa(mp))
	rc := r.client()
	raddr := startRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(mp))
	rr := redis.NewClient(&redis.Options{Addr: raddr, MaxRetries: -1})
	defer rr.Close()
	write := func(tag string, n int) {
		t.Helper()
		for i := range n {
			k := tag + ":" + strconv.Itoa(i)
			if err := mc.Set(ctx, k, i, 0).Err(); err != nil {
				t.Fatal(err)
			}
			mc.Incr(ctx, "n")
			mc.RPush(ctx, "l", k)
		}
	}
	write("first", 300)
	for _, c := range []*redis.Client{rc, rr} {
		pollFor(t, "the replicas' first sync", 30*time.Second, func() bool { return caughtUp(mc, c) })
	}
	for _, clean := range []bool{true, false} {
		oldID := replInfo(mc, "replication", "master_replid")
		var stored int64 // the offset stored: the stream's, with the shutdown's GETACK
		if clean {
			if err := m.stop(); err != nil {
				t.Fatal(err)
			}
			_, after, ok := strings.Cut(m.log.String(), "stored replid "+oldID+" offset ")
			if f := strings.Fields(after); ok && len(f) > 0 {
				stored, _ = strconv.ParseInt(f[0], 10, 64)
			}
			if stored == 0 {
				t.Fatalf("the master did not log its stored position (replid %s):\n%s", oldID, m.log.String())
			}
		} else {
			m.kill()
		}
		m = startServerOn(t, mdir, mp)
		mc = m.client()
		write(fmt.Sprintf("after-%v", clean), 200) // before the replicas are back, most likely
		for _, c := range []*redis.Client{rc, rr} {
			pollFor(t, "the replicas to catch up after the restart", 30*time.Second, func() bool { return caughtUp(mc, c) })
		}
		full, partial := replInfo(mc, "stats", "sync_full"), replInfo(mc, "stats", "sync_partial_ok")
		id2, off2 := replInfo(mc, "replication", "master_replid2"), replInfo(mc, "replication", "second_repl_offset")
		if clean {
			want2 := stored
			if full != "0" || partial != "2" || id2 != oldID || off2 != strconv.FormatInt(want2+1, 10) {
				t.Fatalf("after a clean restart: %s full and %s partial resyncs, replid2 %s offset %s; want 0, 2, %s, %d\n%s",
					full, partial, id2, off2, oldID, want2+1, m.log.String())
			}
		} else if full != "2" || partial != "0" {
			t.Fatalf("after kill -9: %s full and %s partial resyncs, want 2 and 0", full, partial)
		}
		n := sameData(t, mc, rc)
		sameData(t, mc, rr)
		t.Logf("clean %v: %s full and %s partial resyncs, replid2 %s; %d keys equal on the master and both replicas", clean, full, partial, id2, n)
	}
}

package server

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestWaitAndMinReplicas, in both I/O modes, with a redis-server replica:
// WAIT 1 counts it once it acknowledged the client's last write; WAIT 2
// waits its timeout and answers 1, and meanwhile another client is served
// at once (on the event loop the waiting connection is set aside, the
// loop goes on); commands pipelined behind a WAIT answer after it, in
// order; WAITAOF answers [1, replicas]; min-replicas-to-write refuses
// writes with NOREPLICAS while fewer replicas than it acknowledged within
// min-replicas-max-lag (the replica paused by DEBUG SLEEP), and accepts
// them again once it acknowledges.
func TestWaitAndMinReplicas(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) { testWaitAndMinReplicas(t, io) })
	}
}

func testWaitAndMinReplicas(t *testing.T, io string) {
	ctx := context.Background()
	s, addr := startReplServer(t, io)
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	defer p.Close()
	p.Set(ctx, "seed", "x", 0)
	r := startRedisReplica(t, addr)
	deadline := time.Now().Add(20 * time.Second)
	for replInfo(r, "master_link_status") != "up" || replInfo(r, "master_repl_offset") != strconv.FormatInt(s.master.Offset(), 10) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the replica")
		}
		time.Sleep(10 * time.Millisecond) // polling INFO
	}

	p.Set(ctx, "k", "v", 0)
	if n, err := p.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000: %d %v", n, err)
	}
	p.Set(ctx, "k2", "v", 0)
	type res struct {
		n   int64
		err error
		d   time.Duration
	}
	waited := make(chan res, 1)
	go func() {
		start := time.Now()
		n, err := p.Wait(ctx, 2, 800*time.Millisecond).Result()
		waited <- res{n, err, time.Since(start)}
	}()
	other := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer other.Close()
	for range 20 {
		start := time.Now()
		if err := other.Set(ctx, "other", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 400*time.Millisecond {
			t.Fatalf("another client's SET took %v while a WAIT waited", d)
		}
	}
	w := <-waited
	if w.err != nil || w.n != 1 || w.d < 700*time.Millisecond {
		t.Fatalf("WAIT 2 800: %d %v after %v", w.n, w.err, w.d)
	}

	// A pipeline: the replies after a WAIT that waits come after its own.
	cmds, err := p.Pipelined(ctx, func(pp redis.Pipeliner) error {
		pp.Incr(ctx, "ctr")
		pp.Do(ctx, "WAIT", 2, 200)
		pp.Incr(ctx, "ctr")
		pp.Get(ctx, "ctr")
		return nil
	})
	if err != nil || len(cmds) != 4 || cmds[1].(*redis.Cmd).Val() != int64(1) || cmds[3].(*redis.StringCmd).Val() != "2" {
		t.Fatalf("pipeline around WAIT: %v %v", cmds, err)
	}

	if v, err := p.Do(ctx, "WAITAOF", "1", "1", "5000").Slice(); err != nil || len(v) != 2 || v[0] != int64(1) || v[1] != int64(1) {
		t.Fatalf("WAITAOF 1 1 5000: %v %v", v, err)
	}
	if err := p.Do(ctx, "WAITAOF", "0", "1", "-1").Err(); err == nil || !strings.Contains(err.Error(), "timeout is negative") {
		t.Fatalf("WAITAOF with a negative timeout: %v", err)
	}

	p.ConfigSet(ctx, "min-replicas-max-lag", "1")
	p.ConfigSet(ctx, "min-replicas-to-write", "2")
	if err := p.Set(ctx, "k", "refused", 0).Err(); err == nil || err.Error() != "NOREPLICAS Not enough good replicas to write." {
		t.Fatalf("SET with 1 of 2 replicas: %v", err)
	}
	if err := p.Get(ctx, "k").Err(); err != nil {
		t.Fatalf("a read with too few replicas: %v", err)
	}
	p.ConfigSet(ctx, "min-replicas-to-write", "1")
	if err := p.Set(ctx, "k", "accepted", 0).Err(); err != nil {
		t.Fatalf("SET with 1 of 1 replica: %v", err)
	}
	// The replica stops acknowledging for 4 s: past the 1 s lag, writes
	// are refused, then accepted again when it is back. The sleeper's
	// connection is made first, so a slow dial on a loaded machine does
	// not eat the window.
	sleeper := redis.NewClient(&redis.Options{Addr: r.Options().Addr, MaxRetries: -1, ReadTimeout: 15 * time.Second})
	defer sleeper.Close()
	if err := sleeper.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING the replica: %v", err)
	}
	go sleeper.Do(ctx, "DEBUG", "SLEEP", "4")
	refused := false
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !refused; {
		refused = p.Set(ctx, "k", "lagging", 0).Err() != nil
		time.Sleep(20 * time.Millisecond) // polling the write path
	}
	if !refused {
		t.Fatal("writes were not refused while the only replica did not acknowledge")
	}
	accepted := false
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !accepted; {
		accepted = p.Set(ctx, "k", "back", 0).Err() == nil
		time.Sleep(20 * time.Millisecond) // polling the write path
	}
	if !accepted {
		t.Fatal("writes still refused after the replica came back")
	}
	p.ConfigSet(ctx, "min-replicas-to-write", "0")
}

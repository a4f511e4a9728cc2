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
	slept := make(chan error, 1)
	go func() { slept <- sleeper.Do(ctx, "DEBUG", "SLEEP", "4").Err() }()
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
	if err := <-slept; err != nil {
		t.Fatalf("DEBUG SLEEP on the replica: %v", err)
	}
	p.ConfigSet(ctx, "min-replicas-to-write", "0")
}

// TestWaitIsBlocked, in both I/O modes and with no replica: a WAIT (and a
// WAITAOF) that waits is a blocked client as redis-server 7.0.15 shows it:
// flag b in CLIENT LIST, counted in INFO blocked_clients, and CLIENT
// UNBLOCK ends it with the count so far (1 from CLIENT UNBLOCK), or with
// ERROR the UNBLOCKED error; a command pipelined behind it runs after;
// the server closes with a client in WAIT 1 0. Before, CLIENT UNBLOCK
// answered 0 and the WAIT went on waiting, and in goroutine mode Close
// (SHUTDOWN) waited for it forever.
func TestWaitIsBlocked(t *testing.T) {
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) {
			s, addr := startReplServer(t, io)
			ks := &ksServer{Server: s, addr: addr}
			a, b := dialListKS(t, ks), dialListKS(t, ks)
			if got := a.do("CLIENT", "SETNAME", "waiter"); got != "+OK\r\n" {
				t.Fatal(got)
			}
			id := strings.TrimSuffix(strings.TrimPrefix(a.do("CLIENT", "ID"), ":"), "\r\n")
			admin := adminClient(t, ks)
			waitFlags := func(want string) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for clientField(t, admin, "waiter", "flags") != want {
					if time.Now().After(deadline) {
						t.Fatalf("waiter's flags %q, want %q", clientField(t, admin, "waiter", "flags"), want)
					}
					time.Sleep(time.Millisecond) // polling CLIENT LIST
				}
			}
			blockedClients := func() string {
				info := b.do("INFO", "clients")
				i := strings.Index(info, "blocked_clients:")
				return strings.Fields(info[i+len("blocked_clients:"):])[0]
			}
			for _, tc := range []struct {
				cmd    []string
				reason string
				want   string
			}{
				{[]string{"WAIT", "1", "0"}, "", ":0\r\n"},
				{[]string{"WAIT", "1", "100000"}, "TIMEOUT", ":0\r\n"},
				{[]string{"WAIT", "1", "0"}, "ERROR", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"},
				{[]string{"WAITAOF", "0", "1", "0"}, "", "*2\r\n:1\r\n:0\r\n"},
				{[]string{"WAITAOF", "0", "1", "0"}, "ERROR", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"},
			} {
				a.send(multibulk(tc.cmd...) + multibulk("PING"))
				waitFlags("b")
				if got := blockedClients(); got != "1" {
					t.Fatalf("%v: blocked_clients %s, want 1", tc.cmd, got)
				}
				unblock := []string{"CLIENT", "UNBLOCK", id}
				if tc.reason != "" {
					unblock = append(unblock, tc.reason)
				}
				if got := b.do(unblock...); got != ":1\r\n" {
					t.Fatalf("%v: %v = %q, want :1", tc.cmd, unblock, got)
				}
				if got := a.reply(); got != tc.want {
					t.Fatalf("%v unblocked by %v = %q, want %q", tc.cmd, unblock, got, tc.want)
				}
				if got := a.reply(); got != "+PONG\r\n" {
					t.Fatalf("PING pipelined after %v = %q", tc.cmd, got)
				}
				waitFlags("N")
				if got := blockedClients(); got != "0" {
					t.Fatalf("after %v: blocked_clients %s, want 0", tc.cmd, got)
				}
				if got := b.do("CLIENT", "UNBLOCK", id); got != ":0\r\n" {
					t.Fatalf("CLIENT UNBLOCK of a client no longer waiting = %q", got)
				}
			}
			// A WAIT that needs no replica does not block.
			if got := a.do("WAIT", "0", "0"); got != ":0\r\n" {
				t.Fatalf("WAIT 0 0 = %q", got)
			}
			// A WAIT without a limit does not keep the server from
			// closing (in goroutine mode it did: SHUTDOWN hung).
			a.send(multibulk("WAIT", "1", "0"))
			waitFlags("b")
			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("Close did not return with a client in WAIT 1 0")
			}
		})
	}
}

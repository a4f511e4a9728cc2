package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestFailoverCommand: FAILOVER's errors as Redis 7.0 orders them (syntax,
// no replicas, on a replica, FORCE without TO and TIMEOUT, a target that
// is not a replica, ABORT with none in progress); then FAILOVER TO its replica: the master waits
// for the replica to hold its whole stream, the replica promotes itself
// on "PSYNC ... FAILOVER", the old master becomes its replica with a
// partial resync (no full one), both hold the same data, and a write on
// the new master reaches the old one.
func TestFailoverCommand(t *testing.T) {
	ctx := context.Background()
	a, aAddr := startReplServer(t, IOLoop)
	b, bAddr := startReplServer(t, IOGoroutine)
	ca := redis.NewClient(&redis.Options{Addr: aAddr, MaxRetries: -1})
	cb := redis.NewClient(&redis.Options{Addr: bAddr, MaxRetries: -1})
	defer ca.Close()
	defer cb.Close()
	_, aPort, _ := net.SplitHostPort(aAddr)
	_, bPort, _ := net.SplitHostPort(bAddr)
	errIs := func(err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %q", err, want)
		}
	}
	errIs(ca.Do(ctx, "FAILOVER").Err(), "FAILOVER requires connected replicas")
	errIs(ca.Do(ctx, "FAILOVER", "ABORT").Err(), "No failover in progress")
	errIs(ca.Do(ctx, "FAILOVER", "FORCE", "FORCE").Err(), "syntax error")
	errIs(ca.Do(ctx, "FAILOVER", "TIMEOUT", "0").Err(), "FAILOVER timeout must be greater than 0")
	for i := range 50 {
		ca.Set(ctx, "k"+strconv.Itoa(i), i, 0)
		ca.RPush(ctx, "list", i)
	}
	if err := cb.Do(ctx, "REPLICAOF", "127.0.0.1", aPort).Err(); err != nil {
		t.Fatal(err)
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond) // polling INFO
		}
	}
	poll("B to replicate A", func() bool { return len(a.master.Replicas()) == 1 && a.master.Replicas()[0].State == "online" })
	errIs(cb.Do(ctx, "FAILOVER").Err(), "FAILOVER is not valid when server is a replica")
	errIs(ca.Do(ctx, "FAILOVER", "TO", "127.0.0.1", "1").Err(), "FAILOVER target HOST and PORT is not a replica")
	errIs(ca.Do(ctx, "FAILOVER", "FORCE").Err(), "requires both a timeout and target")
	ca.Incr(ctx, "last")

	if err := ca.Do(ctx, "FAILOVER", "TO", "127.0.0.1", bPort, "TIMEOUT", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	poll("A to follow B", func() bool {
		return replInfo(ca, "role") == "slave" && replInfo(ca, "master_port") == bPort && replInfo(ca, "master_link_status") == "up" &&
			replInfo(cb, "role") == "master"
	})
	if st := b.master.Stats(); st.FullSyncs != 0 || st.PartialOK != 1 {
		t.Fatalf("B served %+v, want one partial resync and no full one", st)
	}
	if v := replInfo(ca, "master_failover_state"); v != "no-failover" {
		t.Fatalf("master_failover_state after the failover: %q", v)
	}
	cb.Set(ctx, "after", "x", 0)
	poll("B's write on A", func() bool { v, _ := ca.Get(ctx, "after").Result(); return v == "x" })
	if err := ca.Set(ctx, "w", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("a write on the old master: %v", err)
	}
	ac, bc := ca.Conn(), cb.Conn()
	defer ac.Close()
	defer bc.Close()
	ka, _ := ca.Keys(ctx, "*").Result()
	kb, _ := cb.Keys(ctx, "*").Result()
	if len(ka) != 53 || len(kb) != len(ka) {
		t.Fatalf("%d keys on A, %d on B", len(ka), len(kb))
	}
	for _, k := range ka {
		if x, y := valueOf(ctx, ac, k), valueOf(ctx, bc, k); x != y {
			t.Fatalf("key %q: %s on A, %s on B", k, x, y)
		}
	}
}

// stalledReplica is a hand-made replica link: it syncs (PSYNC ? -1, the
// whole snapshot read), acknowledges offset 0 and nothing after, so a
// FAILOVER to it waits for it forever.
func stalledReplica(t *testing.T, masterAddr string, port int) {
	t.Helper()
	nc, err := net.Dial("tcp", masterAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	line := func() string {
		t.Helper()
		nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("stalled replica: %v", err)
			}
			if l = strings.TrimRight(l, "\r\n"); l != "" { // newlines keep a loading link alive
				return l
			}
		}
	}
	fmt.Fprintf(nc, "REPLCONF listening-port %d\r\n", port)
	if l := line(); l != "+OK" {
		t.Fatalf("REPLCONF: %s", l)
	}
	fmt.Fprintf(nc, "PSYNC ? -1\r\n")
	if l := line(); !strings.HasPrefix(l, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %s", l)
	}
	l := line()
	n, err := strconv.Atoi(strings.TrimPrefix(l, "$"))
	if err != nil {
		t.Fatalf("payload header %q", l)
	}
	if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Time{})
	fmt.Fprintf(nc, "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n")
	go io.Copy(io.Discard, nc) // the stream, never acknowledged
}

// TestFailoverPausesWrites: while FAILOVER waits for its target to catch
// up, a client's write is held (not refused: it is counted in
// blocked_clients and gets no reply), reads are served, and when the
// failover gives up (TIMEOUT without FORCE) the held write applies and
// writes go on; CLIENT UNPAUSE does not release them (it ends only CLIENT
// PAUSE's pause), FAILOVER ABORT does, the same way. Run side by
// side against redis-server 7.0 and Persimmon (both I/O modes), with a
// stalled hand-made replica as the target.
func TestFailoverPausesWrites(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	type target struct {
		name string
		addr string
	}
	rc, _ := startRedisMaster(t, "--repl-diskless-sync", "no")
	targets := []target{{"redis-server", rc.Options().Addr}}
	for _, mode := range []string{IOLoop, IOGoroutine} {
		_, addr := startReplServer(t, mode)
		targets = append(targets, target{"persimmon " + mode, addr})
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: tg.addr, MaxRetries: -1})
			defer c.Close()
			w := redis.NewClient(&redis.Options{Addr: tg.addr, MaxRetries: -1, ReadTimeout: 30 * time.Second})
			defer w.Close()
			c.Set(ctx, "k", "before", 0)
			fake := 17190 // announced only: nothing listens there
			stalledReplica(t, tg.addr, fake)
			pollFor := func(what string, cond func() bool) {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for !cond() {
					if time.Now().After(deadline) {
						t.Fatalf("timed out waiting for %s", what)
					}
					time.Sleep(10 * time.Millisecond) // polling INFO
				}
			}
			pollFor("the replica online", func() bool {
				info, _ := c.Info(ctx, "replication").Result()
				return strings.Contains(info, "state=online")
			})
			c.Set(ctx, "k", "after-sync", 0) // the stream goes past what the replica acknowledged
			for round, end := range []string{"timeout", "abort"} {
				args := []any{"FAILOVER", "TO", "127.0.0.1", fake}
				if end == "timeout" {
					args = append(args, "TIMEOUT", 1500)
				}
				if err := c.Do(ctx, args...).Err(); err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				if v := replInfo(c, "master_failover_state"); v != "waiting-for-sync" {
					t.Fatalf("master_failover_state %q", v)
				}
				done := make(chan error, 1)
				val := "during-" + end
				go func() { done <- w.Set(ctx, "k", val, 0).Err() }()
				pollFor("the write to be held", func() bool {
					info, _ := c.Info(ctx, "clients").Result()
					return strings.Contains(info, "blocked_clients:1\r\n")
				})
				select {
				case err := <-done:
					t.Fatalf("round %d: the write during the failover returned %v, want it held", round, err)
				default:
				}
				if v, err := c.Get(ctx, "k").Result(); err != nil || v == val {
					t.Fatalf("a read during the failover: %q %v", v, err)
				}
				var done2 chan error
				if end == "abort" {
					// CLIENT UNPAUSE ends CLIENT PAUSE's pause only: the
					// failover's holds the write, and a new one.
					if err := c.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
						t.Fatal(err)
					}
					w2 := redis.NewClient(&redis.Options{Addr: tg.addr, MaxRetries: -1, ReadTimeout: 30 * time.Second})
					defer w2.Close()
					done2 = make(chan error, 1)
					go func() { done2 <- w2.Set(ctx, "k2", "held", 0).Err() }()
					pollFor("both writes held after CLIENT UNPAUSE", func() bool {
						info, _ := c.Info(ctx, "clients").Result()
						return strings.Contains(info, "blocked_clients:2\r\n")
					})
					select {
					case err := <-done:
						t.Fatalf("the write held by the failover returned %v after CLIENT UNPAUSE", err)
					default:
					}
					if err := c.Do(ctx, "FAILOVER", "ABORT").Err(); err != nil {
						t.Fatal(err)
					}
				}
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("the held write after the failover's %s: %v", end, err)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("the held write is still held 20 s after the failover's %s", end)
				}
				if done2 != nil {
					if err := <-done2; err != nil {
						t.Fatalf("the second held write: %v", err)
					}
				}
				if v, _ := c.Get(ctx, "k").Result(); v != val {
					t.Fatalf("after the %s: k=%q, want %q", end, v, val)
				}
				pollFor("no-failover", func() bool { return replInfo(c, "master_failover_state") == "no-failover" })
			}
		})
	}
}

// TestShutdownNowSkipsReplicas: SHUTDOWN waits up to shutdown-timeout for
// a replica that does not acknowledge the stream (writes paused), and
// SHUTDOWN NOW does not wait at all, as in Redis 7.0. A stalled hand-made
// replica is the lagging one.
func TestShutdownNowSkipsReplicas(t *testing.T) {
	ctx := context.Background()
	shutdown := func(t *testing.T, timeout int, args ...any) time.Duration {
		s, addr := startReplServer(t, IOLoop)
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer c.Close()
		if err := c.ConfigSet(ctx, "shutdown-timeout", strconv.Itoa(timeout)).Err(); err != nil {
			t.Fatal(err)
		}
		stalledReplica(t, addr, 17191)
		for deadline := time.Now().Add(20 * time.Second); ; {
			if r := s.master.Replicas(); len(r) == 1 && r[0].State == "online" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the stalled replica never came online")
			}
			time.Sleep(10 * time.Millisecond) // polling the master's replica list
		}
		c.Set(ctx, "k", "v", 0) // the stream goes past what the replica acknowledged
		start := time.Now()
		c.Do(ctx, args...) // no reply: the connection closes
		s.Close()          // returns once the shutdown SHUTDOWN started is done
		return time.Since(start)
	}
	if d := shutdown(t, 3, "SHUTDOWN"); d < 3*time.Second {
		t.Fatalf("SHUTDOWN with a lagging replica took %v, want it to wait shutdown-timeout (3 s)", d)
	}
	if d := shutdown(t, 60, "SHUTDOWN", "NOW"); d > 20*time.Second {
		t.Fatalf("SHUTDOWN NOW with a lagging replica took %v: it waited for the replica", d)
	} else {
		t.Logf("SHUTDOWN NOW took %v (shutdown-timeout 60 s)", d)
	}
}

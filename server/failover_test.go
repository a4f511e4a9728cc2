package server

import (
	"context"
	"net"
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

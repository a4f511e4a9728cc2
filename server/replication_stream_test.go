package server

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisReplicaOfPersimmonStreams: a redis-server replica's full sync
// from Persimmon carries streams whole (nodes, counters, groups, the PEL
// with its delivery times, consumers): XINFO STREAM FULL is the same on
// both sides.
func TestRedisReplicaOfPersimmonStreams(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	s, addr := startReplServer(t, IOGoroutine)
	ctx := context.Background()
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2})
	defer p.Close()
	for i := range 250 {
		p.Do(ctx, "XADD", "st", fmt.Sprintf("%d-1", i+1), "f", i, "g", "v")
	}
	p.Do(ctx, "XDEL", "st", "5-1", "200-1")
	p.Do(ctx, "XGROUP", "CREATE", "st", "g1", "0")
	p.Do(ctx, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "st", ">")
	p.Do(ctx, "XGROUP", "CREATECONSUMER", "st", "g1", "bob")
	p.Do(ctx, "XADD", "empty", "1-1", "f", "v")
	p.Do(ctx, "XDEL", "empty", "1-1")
	r := startRedisReplica(t, addr)
	deadline := time.Now().Add(20 * time.Second)
	for replInfo(r, "master_link_status") != "up" || replInfo(r, "master_repl_offset") != strconv.FormatInt(s.master.Offset(), 10) {
		if time.Now().After(deadline) {
			t.Fatal("the replica did not catch up")
		}
		time.Sleep(10 * time.Millisecond) // polling the replica's INFO
	}
	rr := redis.NewClient(&redis.Options{Addr: r.Options().Addr, MaxRetries: -1, Protocol: 2})
	defer rr.Close()
	for _, k := range []string{"st", "empty"} {
		want, err := p.Do(ctx, "XINFO", "STREAM", k, "FULL").Result()
		if err != nil {
			t.Fatal(err)
		}
		got, err := rr.Do(ctx, "XINFO", "STREAM", k, "FULL").Result()
		if err != nil {
			t.Fatalf("%s on the replica: %v", k, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: replica\n%v\nmaster\n%v", k, got, want)
		}
	}
}

// TestMigratePropagatesDel: a MIGRATE reaches the replica as the DEL of
// the keys it moved (a key refused by the target stays on both sides), and
// MIGRATE COPY as nothing: the target runs each RESTORE once.
func TestMigratePropagatesDel(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	s, addr := startReplServer(t, IOGoroutine)
	ctx := context.Background()
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: 2})
	defer p.Close()
	for _, k := range []string{"moved", "copied", "busy", "kept"} {
		p.Set(ctx, k, "v:"+k, 0)
	}
	r := startRedisReplica(t, addr)
	// The target: another redis-server, which already holds "busy".
	target := startRedisReplica(t, "127.0.0.1:1") // replicaof nothing reachable: a plain server
	target.Do(ctx, "REPLICAOF", "NO", "ONE")
	target.Set(ctx, "busy", "already", 0)
	host, port, _ := netSplit(target.Options().Addr)
	if err := p.Do(ctx, "MIGRATE", host, port, "moved", 0, 5000).Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.Do(ctx, "MIGRATE", host, port, "copied", 0, 5000, "COPY").Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.Do(ctx, "MIGRATE", host, port, "", 0, 5000, "KEYS", "busy").Err(); err == nil {
		t.Fatal("MIGRATE of a key the target holds succeeded")
	}
	p.Set(ctx, "last", "x", 0)
	deadline := time.Now().Add(20 * time.Second)
	for replInfo(r, "master_link_status") != "up" || replInfo(r, "master_repl_offset") != strconv.FormatInt(s.master.Offset(), 10) {
		if time.Now().After(deadline) {
			t.Fatal("the replica did not catch up")
		}
		time.Sleep(10 * time.Millisecond) // polling the replica's INFO
	}
	for k, want := range map[string]int64{"moved": 0, "copied": 1, "busy": 1, "kept": 1, "last": 1} {
		if n, _ := r.Exists(ctx, k).Result(); n != want {
			t.Errorf("replica: EXISTS %s = %d, want %d", k, n, want)
		}
	}
	stats, _ := target.Info(ctx, "commandstats").Result()
	if !strings.Contains(stats, "cmdstat_restore:calls=3,") {
		t.Fatalf("the target ran RESTORE other than 3 times (moved, copied, busy):\n%s", stats)
	}
}

func netSplit(addr string) (string, string, error) { return net.SplitHostPort(addr) }

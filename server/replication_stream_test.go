package server

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
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

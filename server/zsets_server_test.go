package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/redis/go-redis/v9"
)

// Sorted sets over a real server (blocking pops, go-redis), moved here
// from package commands because they need the server's internals.

// waitBlocked waits (without sleeping on a guess) until n clients are
// blocked on key.
func waitBlocked(t *testing.T, s *ksServer, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.ks.Lock()
		got := registryOf(s.ks).waiting(0, key)
		s.ks.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d clients blocked on %s, want %d", got, key, n)
		}
		runtime.Gosched()
	}
}

// TestBZPopWakesInArrivalOrder: BZPOPMIN/BZPOPMAX on empty keys block; a
// ZADD from another client wakes the first waiter, which pops what was
// added; the second waiter gets the next ZADD; a timeout answers nil.
func TestBZPopWakesInArrivalOrder(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	ctx := context.Background()
	first, second, writer := goRedis(t, s.addr), goRedis(t, s.addr), goRedis(t, s.addr)
	type result struct {
		v   *redis.ZWithKey
		err error
	}
	r1, r2 := make(chan result, 1), make(chan result, 1)
	go func() {
		v, err := first.BZPopMin(ctx, 0, "empty", "bz").Result()
		r1 <- result{v, err}
	}()
	waitBlocked(t, s, "bz", 1)
	go func() {
		v, err := second.BZPopMax(ctx, 0, "bz").Result()
		r2 <- result{v, err}
	}()
	waitBlocked(t, s, "bz", 2)
	if err := writer.ZAdd(ctx, "bz", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Err(); err != nil {
		t.Fatal(err)
	}
	got := <-r1
	if got.err != nil || got.v.Key != "bz" || got.v.Member != "a" || got.v.Score != 1 {
		t.Fatalf("first waiter: %+v %v", got.v, got.err)
	}
	got = <-r2
	if got.err != nil || got.v.Key != "bz" || got.v.Member != "b" || got.v.Score != 2 {
		t.Fatalf("second waiter: %+v %v", got.v, got.err)
	}
	if n, err := writer.Exists(ctx, "bz").Result(); err != nil || n != 0 {
		t.Fatalf("bz still exists after both pops: %d %v", n, err)
	}
	if _, err := first.Do(ctx, "BZPOPMIN", "bz", "0.05").Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("timeout: %v", err)
	}

	// BZMPOP: woken the same way, pops up to COUNT from the top.
	r3 := make(chan string, 1)
	go func() {
		v, err := first.Do(ctx, "BZMPOP", "0", "2", "none", "bz2", "MAX", "COUNT", "2").Result()
		r3 <- fmt.Sprint(v, err)
	}()
	waitBlocked(t, s, "bz2", 1)
	if err := writer.ZAdd(ctx, "bz2", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := <-r3; got != "[bz2 [[c 3] [b 2]]] <nil>" {
		t.Fatalf("BZMPOP: %s", got)
	}
	if n, _ := writer.ZCard(ctx, "bz2").Result(); n != 1 {
		t.Fatalf("ZCARD after BZMPOP: %d", n)
	}
}

// TestZSetGoRedis drives every sorted-set command through go-redis's typed
// API against a server over a real keyspace: the replies must parse as a
// real client expects them (scores as floats, "inf", nested ZMPOP
// replies...), and the data must survive a restart.
func TestZSetGoRedis(t *testing.T) {
	dir := t.TempDir()
	s := startKeyspaceServer(t, dir, pmem.ModePmem)
	ctx := context.Background()
	rc := goRedis(t, s.addr)
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", what, got, want)
		}
	}
	val := func(v any, err error) any {
		t.Helper()
		if err != nil {
			return "error: " + err.Error()
		}
		return v
	}
	check("ZADD", val(rc.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"}).Result()), 3)
	check("ZADD GT CH", val(rc.ZAddArgs(ctx, "z", redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{{Score: 0, Member: "a"}, {Score: 5, Member: "b"}}}).Result()), 1)
	check("ZADD NX", val(rc.ZAddNX(ctx, "z", redis.Z{Score: 9, Member: "a"}, redis.Z{Score: 4, Member: "d"}).Result()), 1)
	check("ZADD INCR", val(rc.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{XX: true, Members: []redis.Z{{Score: 0.5, Member: "a"}}}).Result()), 1.5)
	check("ZINCRBY", val(rc.ZIncrBy(ctx, "z", 0.25, "a").Result()), 1.75)
	check("ZSCORE", val(rc.ZScore(ctx, "z", "b").Result()), 5)
	check("ZMSCORE", val(rc.ZMScore(ctx, "z", "a", "c").Result()), []float64{1.75, 3})
	check("ZCARD", val(rc.ZCard(ctx, "z").Result()), 4)
	check("ZCOUNT", val(rc.ZCount(ctx, "z", "(1.75", "+inf").Result()), 3)
	check("ZRANGE", val(rc.ZRange(ctx, "z", 0, -1).Result()), []string{"a", "c", "d", "b"})
	check("ZRANGE WITHSCORES", val(rc.ZRangeWithScores(ctx, "z", 0, 1).Result()), []redis.Z{{Score: 1.75, Member: "a"}, {Score: 3, Member: "c"}})
	check("ZRANGE BYSCORE REV LIMIT", val(rc.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "+inf", Stop: "(1.75", ByScore: true, Rev: true, Offset: 1, Count: 5}).Result()), []string{"d", "c"})
	check("ZRANGEBYSCORE", val(rc.ZRangeByScore(ctx, "z", &redis.ZRangeBy{Min: "2", Max: "4"}).Result()), []string{"c", "d"})
	check("ZREVRANGEBYSCORE WITHSCORES", val(rc.ZRevRangeByScoreWithScores(ctx, "z", &redis.ZRangeBy{Min: "-inf", Max: "+inf", Count: 1}).Result()), []redis.Z{{Score: 5, Member: "b"}})
	check("ZREVRANGE", val(rc.ZRevRange(ctx, "z", 0, 0).Result()), []string{"b"})
	check("ZRANK", val(rc.ZRank(ctx, "z", "d").Result()), 2)
	check("ZREVRANK", val(rc.ZRevRank(ctx, "z", "d").Result()), 1)
	check("ZRANK missing", val(rc.ZRank(ctx, "z", "nope").Result()), "error: redis: nil")
	check("ZRANGESTORE", val(rc.ZRangeStore(ctx, "copy", redis.ZRangeArgs{Key: "z", Start: 0, Stop: 1}).Result()), 2)
	check("ZADD lex", val(rc.ZAdd(ctx, "l", redis.Z{Member: "a"}, redis.Z{Member: "b"}, redis.Z{Member: "c"}).Result()), 3)
	check("ZRANGEBYLEX", val(rc.ZRangeByLex(ctx, "l", &redis.ZRangeBy{Min: "(a", Max: "+"}).Result()), []string{"b", "c"})
	check("ZREVRANGEBYLEX", val(rc.ZRevRangeByLex(ctx, "l", &redis.ZRangeBy{Min: "-", Max: "[b"}).Result()), []string{"b", "a"})
	check("ZLEXCOUNT", val(rc.ZLexCount(ctx, "l", "[b", "+").Result()), 2)
	check("ZREMRANGEBYLEX", val(rc.ZRemRangeByLex(ctx, "l", "-", "(b").Result()), 1)
	check("ZREM", val(rc.ZRem(ctx, "l", "b", "zz").Result()), 1)
	check("ZREMRANGEBYRANK", val(rc.ZRemRangeByRank(ctx, "copy", 0, 0).Result()), 1)
	check("ZREMRANGEBYSCORE", val(rc.ZRemRangeByScore(ctx, "copy", "-inf", "+inf").Result()), 1)
	check("copy gone", val(rc.Exists(ctx, "copy").Result()), 0)
	check("ZADD inf", val(rc.ZAdd(ctx, "u", redis.Z{Score: math.Inf(1), Member: "c"}, redis.Z{Score: 1, Member: "x"}).Result()), 2)
	check("ZUNION", val(rc.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"z", "u"}, Weights: []float64{2, 1}}).Result()),
		[]redis.Z{{Score: 1, Member: "x"}, {Score: 3.5, Member: "a"}, {Score: 8, Member: "d"}, {Score: 10, Member: "b"}, {Score: math.Inf(1), Member: "c"}})
	check("ZINTER", val(rc.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"z", "u"}, Aggregate: "MIN"}).Result()), []redis.Z{{Score: 3, Member: "c"}})
	check("ZDIFF", val(rc.ZDiff(ctx, "z", "u").Result()), []string{"a", "d", "b"})
	check("ZUNIONSTORE", val(rc.ZUnionStore(ctx, "us", &redis.ZStore{Keys: []string{"z", "u"}}).Result()), 5)
	check("ZINTERSTORE", val(rc.ZInterStore(ctx, "is", &redis.ZStore{Keys: []string{"z", "u"}}).Result()), 1)
	check("ZDIFFSTORE", val(rc.ZDiffStore(ctx, "ds", "z", "u").Result()), 3)
	check("ZINTERCARD", val(rc.ZInterCard(ctx, 0, "z", "us").Result()), 4)
	check("ZRANDMEMBER all", val(rc.ZRandMemberWithScores(ctx, "u", 5).Result()), []redis.Z{{Score: math.Inf(1), Member: "c"}, {Score: 1, Member: "x"}})
	keys, cursor, err := rc.ZScan(ctx, "ds", 0, "*", 10).Result()
	check("ZSCAN", val(fmt.Sprint(keys, " ", cursor), err), "[a 1.75 d 4 b 5] 0")
	check("ZPOPMIN", val(rc.ZPopMin(ctx, "ds").Result()), []redis.Z{{Score: 1.75, Member: "a"}})
	check("ZPOPMAX", val(rc.ZPopMax(ctx, "ds", 5).Result()), []redis.Z{{Score: 5, Member: "b"}, {Score: 4, Member: "d"}})
	key, zs, err := rc.ZMPop(ctx, "max", 2, "nothing", "us").Result()
	check("ZMPOP", val(fmt.Sprint(key, " ", zs), err), "us [{+Inf c} {5 b}]")
	bz, err := rc.BZPopMin(ctx, time.Second, "us").Result()
	check("BZPOPMIN", val(fmt.Sprint(bz.Key, " ", bz.Member, " ", bz.Score), err), "us x 1")
	key, zs, err = rc.BZMPop(ctx, time.Second, "min", 1, "us").Result()
	check("BZMPOP", val(fmt.Sprint(key, " ", zs), err), "us [{1.75 a}]")
	check("WRONGTYPE", val(rc.Set(ctx, "str", "v", 0).Result()), "OK")
	check("ZADD on a string", val(rc.ZAdd(ctx, "str", redis.Z{Score: 1, Member: "a"}).Result()), "error: WRONGTYPE Operation against a key holding the wrong kind of value")

	// Everything acknowledged survives a restart.
	want := val(rc.ZRangeWithScores(ctx, "z", 0, -1).Result())
	rc.Shutdown(ctx)
	<-s.Done()
	s = startKeyspaceServer(t, dir, pmem.ModePmem)
	rc = goRedis(t, s.addr)
	check("after restart", val(rc.ZRangeWithScores(ctx, "z", 0, -1).Result()), want)
	check("after restart", val(rc.ZRange(ctx, "us", 0, -1).Result()), []string{"d"})
}

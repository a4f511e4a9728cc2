package server

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/proto"
)

// RESP3 over a raw socket against the real keyspace and command families:
// every reply type (map, set, double, null, verbatim, push, pairs, the
// array-map of XREAD) byte for byte as redis-server 7.0.15 answered the
// same script after HELLO 3 (recorded with a raw socket; CLIENT ids, TIME
// and timings left out). RESET goes back to RESP2.
var resp3Script = []struct{ cmd, want string }{
	{`hset h a 1`, ":1\r\n"},
	{`hgetall h`, "%1\r\n$1\r\na\r\n$1\r\n1\r\n"},
	{`hgetall nokey`, "%0\r\n"},
	{`config get maxmemory`, "%1\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n"},
	{`sadd s x`, ":1\r\n"},
	{`smembers s`, "~1\r\n$1\r\nx\r\n"},
	{`smembers nokey`, "~0\r\n"},
	{`sinter s`, "~1\r\n$1\r\nx\r\n"},
	{`sunion s nokey`, "~1\r\n$1\r\nx\r\n"},
	{`sdiff s nokey`, "~1\r\n$1\r\nx\r\n"},
	{`spop nokey 2`, "~0\r\n"},
	{`srandmember s 2`, "*1\r\n$1\r\nx\r\n"},
	{`zadd z 1.5 a 2 b`, ":2\r\n"},
	{`zscore z a`, ",1.5\r\n"},
	{`zscore z nope`, "_\r\n"},
	{`zincrby z 1 a`, ",2.5\r\n"},
	{`zadd z incr 0.25 b`, ",2.25\r\n"},
	{`zmscore z a nope`, "*2\r\n,2.5\r\n_\r\n"},
	{`zrange z 0 -1 withscores`, "*2\r\n*2\r\n$1\r\nb\r\n,2.25\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
	{`zrange z 0 -1`, "*2\r\n$1\r\nb\r\n$1\r\na\r\n"},
	{`zrevrange z 0 0 withscores`, "*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
	{`zrangebyscore z 0 10 withscores limit 0 1`, "*1\r\n*2\r\n$1\r\nb\r\n,2.25\r\n"},
	{`zpopmin z`, "*2\r\n$1\r\nb\r\n,2.25\r\n"},
	{`zadd z 3 c 4 d`, ":2\r\n"},
	{`zpopmax z 2`, "*2\r\n*2\r\n$1\r\nd\r\n,4\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
	{`zrandmember z 1 withscores`, "*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
	{`zunion 1 z withscores`, "*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
	{`zinter 1 z withscores`, "*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
	{`zdiff 1 z withscores`, "*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
	{`zmpop 1 z max`, "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
	{`get nokey`, "_\r\n"},
	{`lpop nokey`, "_\r\n"},
	{`lpop nokey 2`, "_\r\n"},
	{`lrange nokey 0 -1`, "*0\r\n"},
	{`blpop nokey 0.01`, "_\r\n"},
	{`hrandfield h 1 withvalues`, "*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
	{`hincrbyfloat h f 1.5`, "$3\r\n1.5\r\n"},
	{`incrbyfloat n 2.5`, "$3\r\n2.5\r\n"},
	{`geoadd g 13.361389 38.115556 p`, ":1\r\n"},
	{`geopos g p nope`, "*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n"},
	{`geodist g p p`, "$6\r\n0.0000\r\n"},
	{`geosearch g fromlonlat 13 38 byradius 100 km withcoord withdist asc`, "*1\r\n*3\r\n$1\r\np\r\n$7\r\n34.1601\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n"},
	{`xadd st 1-1 f v`, "$3\r\n1-1\r\n"},
	{`xread streams st 0`, "%1\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
	{`xread count 1 streams st nokey 0 0`, "%1\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
	{`xinfo stream st`, "%10\r\n$6\r\nlength\r\n:1\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n1-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:1\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
	{`xgroup create st g 0`, "+OK\r\n"},
	{`xinfo groups st`, "*1\r\n%6\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n_\r\n$3\r\nlag\r\n:1\r\n"},
	{`xreadgroup group g c streams st >`, "%1\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
	{`xpending st g`, "*4\r\n:1\r\n$3\r\n1-1\r\n$3\r\n1-1\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n"},
	{`lcs a b`, "$0\r\n\r\n"},
	{`set a ohmytext`, "+OK\r\n"},
	{`set b mynewtext`, "+OK\r\n"},
	{`lcs a b idx minmatchlen 4 withmatchlen`, "%2\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n"},
	{`exists h`, ":1\r\n"},
	{`type h`, "+hash\r\n"},
	{`object encoding h`, "$8\r\nlistpack\r\n"},
	{`ping`, "+PONG\r\n"},
	{`echo x`, "$1\r\nx\r\n"},
	{`exec`, "-ERR EXEC without MULTI\r\n"},
	{`multi`, "+OK\r\n"},
	{`sadd s y`, "+QUEUED\r\n"},
	{`smembers s`, "+QUEUED\r\n"},
	{`exec`, "*2\r\n:1\r\n~2\r\n$1\r\nx\r\n$1\r\ny\r\n"},
	{`latency doctor`, "=292\r\ntxt:I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n\r\n"},
	{`client getname`, "_\r\n"},
	{`pubsub numsub c`, "*2\r\n$1\r\nc\r\n:0\r\n"},
	{`zscan z 0`, "*2\r\n$1\r\n0\r\n*0\r\n"},
	{`lpos nokey x`, "_\r\n"},
	{`zrank z nope`, "_\r\n"},
	{`hget h nope`, "_\r\n"},
	{`mget a nokey`, "*2\r\n$8\r\nohmytext\r\n_\r\n"},
	{`bzpopmin nokey 0.01`, "_\r\n"},
	{`bzmpop 0.01 1 nokey min`, "_\r\n"},
	{`xread block 10 streams st $`, "_\r\n"},
	{`reset`, "+RESET\r\n"},
	{`hgetall h`, "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nf\r\n$3\r\n1.5\r\n"},
}

func TestRESP3Replies(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	w := dialListKS(t, s)
	hello := w.do("HELLO", "3")
	if !strings.HasPrefix(hello, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:") ||
		!strings.HasSuffix(hello, "$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n") {
		t.Fatalf("HELLO 3 = %q", hello)
	}
	if got := w.do("CLIENT", "INFO"); !strings.HasPrefix(got, "=") || !strings.HasSuffix(got, " resp=3\n\r\n") || !strings.Contains(got, "\r\ntxt:id=") {
		t.Errorf("CLIENT INFO in RESP3 = %q, want a verbatim string ending resp=3", got)
	}
	if got := w.do("INFO", "server"); !strings.HasPrefix(got, "=") || !strings.Contains(got, "\r\ntxt:# Server\r\n") {
		t.Errorf("INFO in RESP3 = %.40q, want a verbatim string", got)
	}
	for _, st := range resp3Script {
		args, _, ok := proto.SplitInline([]byte(st.cmd), nil, nil)
		if !ok {
			t.Fatalf("bad script line %q", st.cmd)
		}
		strs := make([]string, len(args))
		for i, a := range args {
			strs[i] = string(a)
		}
		if got := w.do(strs...); got != st.want {
			t.Errorf("%s:\n got %q\nwant %q", st.cmd, got, st.want)
		}
	}
}

// In RESP3 pub/sub confirmations and messages are push frames, and a
// subscribed connection may run any command; HELLO 2 brings back RESP2's
// subscribed state and RESET RESP2 itself (Redis 7.0 recorded).
func TestRESP3PubSub(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	sub, pub := dialListKS(t, s), dialListKS(t, s)
	sub.do("HELLO", "3")
	for _, st := range [][2]string{
		{"SUBSCRIBE ch", ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"},
		{"PSUBSCRIBE c*", ">3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n"},
		{"PING", "+PONG\r\n"},
		{"SET k v", "+OK\r\n"},
		{"GET k", "$1\r\nv\r\n"},
	} {
		if got := sub.do(strings.Fields(st[0])...); got != st[1] {
			t.Fatalf("%s = %q, want %q", st[0], got, st[1])
		}
	}
	if got := pub.do("PUBLISH", "ch", "hi"); got != ":2\r\n" {
		t.Fatalf("PUBLISH = %q", got)
	}
	if got := sub.reply(); got != ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n" {
		t.Fatalf("message = %q", got)
	}
	if got := sub.reply(); got != ">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nhi\r\n" {
		t.Fatalf("pmessage = %q", got)
	}
	sub.do("PUNSUBSCRIBE")
	if got := sub.do("HELLO", "2"); !strings.HasPrefix(got, "*14\r\n") {
		t.Fatalf("HELLO 2 = %q", got)
	}
	if got := sub.do("GET", "k"); !strings.HasPrefix(got, "-ERR Can't execute 'get'") {
		t.Fatalf("GET subscribed in RESP2 = %q", got)
	}
	if got := sub.do("PING"); got != "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
		t.Fatalf("PING subscribed in RESP2 = %q", got)
	}
	pub.do("PUBLISH", "ch", "two")
	if got := sub.reply(); got != "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\ntwo\r\n" {
		t.Fatalf("RESP2 message = %q", got)
	}
	sub.do("RESET")
	sub.do("HELLO", "3")
	if got := sub.do("HGETALL", "nokey"); got != "%0\r\n" {
		t.Fatalf("HGETALL after HELLO 3 = %q", got)
	}
	sub.do("RESET")
	if got := sub.do("HGETALL", "nokey"); got != "*0\r\n" {
		t.Fatalf("HGETALL after RESET = %q, want RESP2", got)
	}
}

// go-redis v9 with Protocol: 3 handshakes with HELLO 3 and parses the
// RESP3 shapes into its typed results.
func TestRESP3GoRedis(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	rc := redis.NewClient(&redis.Options{Addr: s.addr, Protocol: 3, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	ctx := context.Background()
	if err := rc.HSet(ctx, "h", "a", "1", "b", "2").Err(); err != nil {
		t.Fatal(err)
	}
	if m, err := rc.HGetAll(ctx, "h").Result(); err != nil || len(m) != 2 || m["a"] != "1" {
		t.Fatalf("HGETALL = %v, %v", m, err)
	}
	rc.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	if f, err := rc.ZScore(ctx, "z", "a").Result(); err != nil || f != 1.5 {
		t.Fatalf("ZSCORE = %v, %v", f, err)
	}
	if zs, err := rc.ZRangeWithScores(ctx, "z", 0, -1).Result(); err != nil || len(zs) != 2 || zs[1].Score != 2 || zs[1].Member != "b" {
		t.Fatalf("ZRANGE WITHSCORES = %v, %v", zs, err)
	}
	rc.SAdd(ctx, "s", "x", "y")
	if ms, err := rc.SMembers(ctx, "s").Result(); err != nil || len(ms) != 2 {
		t.Fatalf("SMEMBERS = %v, %v", ms, err)
	}
	if err := rc.Get(ctx, "nokey").Err(); err != redis.Nil {
		t.Fatalf("GET missing = %v, want redis.Nil", err)
	}
	if cfg, err := rc.ConfigGet(ctx, "maxclients").Result(); err != nil || cfg["maxclients"] == "" {
		t.Fatalf("CONFIG GET = %v, %v", cfg, err)
	}
	if info, err := rc.Info(ctx, "server").Result(); err != nil || !strings.Contains(info, "redis_version:") || strings.HasPrefix(info, "txt:") {
		t.Fatalf("INFO = %.60q, %v", info, err)
	}
	rc.XAdd(ctx, &redis.XAddArgs{Stream: "st", ID: "1-1", Values: []string{"f", "v"}})
	if xs, err := rc.XRead(ctx, &redis.XReadArgs{Streams: []string{"st", "0"}}).Result(); err != nil || len(xs) != 1 || xs[0].Stream != "st" || len(xs[0].Messages) != 1 {
		t.Fatalf("XREAD = %v, %v", xs, err)
	}
	ps := rc.Subscribe(ctx, "ch")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rc.Publish(ctx, "ch", "hello").Err(); err != nil {
		t.Fatal(err)
	}
	msg, err := ps.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "hello" || msg.Channel != "ch" {
		t.Fatalf("message = %v, %v", msg, err)
	}
}

// Replies served to a blocked RESP3 client after another client's push,
// as redis-server 7.0.15 sent them (raw socket recording): XREAD's and
// XREADGROUP's map of streams, BZPOPMIN's and BZMPOP's doubles.
func TestRESP3BlockedReplies(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	a, b := dialListKS(t, s), dialListKS(t, s)
	a.do("HELLO", "3")
	for _, tt := range []struct {
		key         string
		block, push []string
		want        string
	}{
		{"st", []string{"XREAD", "BLOCK", "0", "STREAMS", "st", "$"}, []string{"XADD", "st", "1-1", "f", "v"},
			"%1\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{"l", []string{"BLPOP", "l", "0"}, []string{"RPUSH", "l", "x"}, "*2\r\n$1\r\nl\r\n$1\r\nx\r\n"},
		{"z", []string{"BZPOPMIN", "z", "0"}, []string{"ZADD", "z", "1.5", "m"}, "*3\r\n$1\r\nz\r\n$1\r\nm\r\n,1.5\r\n"},
		{"z", []string{"BZMPOP", "0", "1", "z", "MIN"}, []string{"ZADD", "z", "2.5", "n"}, "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nn\r\n,2.5\r\n"},
		{"l", []string{"BLMPOP", "0", "1", "l", "LEFT"}, []string{"RPUSH", "l", "y"}, "*2\r\n$1\r\nl\r\n*1\r\n$1\r\ny\r\n"},
		{"st", []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "st", ">"}, []string{"XADD", "st", "2-1", "f", "w"},
			"%1\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nw\r\n"},
	} {
		if tt.block[0] == "XREADGROUP" {
			b.do("XGROUP", "CREATE", "st", "g", "$")
		}
		a.send(multibulk(tt.block...))
		waitListBlocked(t, s, tt.key, 1)
		b.do(tt.push...)
		if got := a.reply(); got != tt.want {
			t.Errorf("%s served: %q, want %q", tt.block[0], got, tt.want)
		}
	}
}

package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Sharded pub/sub side by side with redis-server: a shard subscriber's
// confirmations and messages and the publisher's replies, compared
// exactly in RESP2 and RESP3.

// TestPubSubShardDiffRedis runs shardTranscript against both servers.
func TestPubSubShardDiffRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: nothing to compare with")
	}
	redisAddr := startRedis(t)
	loop := startServer(t, t.TempDir(), "--io", "loop")
	s := startServer(t, t.TempDir(), "--io", "goroutine")
	for _, resp3 := range []bool{false, true} {
		want := shardTranscript(t, redisAddr, resp3)
		if got := shardTranscript(t, loop.Addr, resp3); strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("loop, resp3=%v: transcripts differ\nredis-server:\n%s\npersimmon:\n%s", resp3,
				strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
		got := shardTranscript(t, s.Addr, resp3)
		if !strings.Contains(strings.Join(want, "\n"), `"smessage", "s1", "hello"`) {
			t.Fatalf("redis-server's transcript has no smessage: the script tests nothing\n%s", strings.Join(want, "\n"))
		}
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("resp3=%v: transcripts differ\nredis-server:\n%s\npersimmon:\n%s", resp3,
				strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
}

// shardTranscript records every reply the subscriber and the publisher
// get while they use sharded channels next to plain ones.
func shardTranscript(t *testing.T, addr string, resp3 bool) []string {
	t.Helper()
	sub, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.close()
	pub, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.close()
	if resp3 {
		mustOK(t, sub, "HELLO", "3")
	}
	var out []string
	send := func(c *respConn, n int, args ...string) {
		t.Helper()
		if _, err := c.nc.Write(encodeCommand(bytesArgs(args...))); err != nil {
			t.Fatal(err)
		}
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		for i := 0; i < n; i++ {
			r, err := readReply(c.r)
			if err != nil {
				t.Fatalf("%v: reply %d: %v\n%s", args, i, err, strings.Join(out, "\n"))
			}
			if len(args) > 1 && strings.HasSuffix(args[1], "CHANNELS") {
				r = r.sorted() // Redis lists them in hash table order
			}
			out = append(out, strings.Join(args, " ")+" -> "+r.String())
		}
	}
	send(sub, 1, "SUNSUBSCRIBE")
	send(sub, 2, "SSUBSCRIBE", "s1", "s2")
	send(sub, 1, "SSUBSCRIBE", "s1")
	send(sub, 1, "SUBSCRIBE", "c1")
	send(sub, 1, "PSUBSCRIBE", "s*")
	send(pub, 1, "SPUBLISH", "s1", "hello")
	send(sub, 1) // the smessage (no pmessage: patterns do not see shard channels)
	send(pub, 1, "PUBLISH", "s1", "plain")
	send(sub, 1) // the pmessage of the plain channel s1
	send(pub, 1, "SPUBLISH", "nobody", "x")
	send(pub, 1, "PUBSUB", "SHARDCHANNELS")
	send(pub, 1, "PUBSUB", "SHARDCHANNELS", "*2")
	send(pub, 1, "PUBSUB", "SHARDNUMSUB", "s1", "s2", "s3")
	send(pub, 1, "PUBSUB", "CHANNELS")
	send(pub, 1, "PUBSUB", "NUMSUB", "s1")
	if !resp3 {
		send(sub, 1, "GET", "x") // refused in the subscribed state
		send(sub, 1, "PING")
	}
	send(sub, 1, "SUNSUBSCRIBE", "s2")
	send(sub, 1, "UNSUBSCRIBE")
	send(sub, 1, "PUNSUBSCRIBE")
	send(sub, 1, "SUNSUBSCRIBE")
	send(sub, 1, "SUNSUBSCRIBE")
	send(sub, 1, "GET", "x") // out of the subscribed state
	send(pub, 1, "SPUBLISH", "s1", "gone")
	send(pub, 1, "MULTI")
	send(pub, 1, "SSUBSCRIBE", "m")
	send(pub, 1, "EXEC")
	send(pub, 1, "EVAL", "return redis.call('spublish', 's1', 'x')", "0")
	send(pub, 1, "EVAL", "return redis.call('ssubscribe', 's1')", "0")
	if resp3 { // (RESP2's subscribed state refuses CLIENT REPLY ON, silently once OFF)
		// CLIENT REPLY OFF silences replies, not the confirmations (pushes).
		send(sub, 0, "CLIENT", "REPLY", "OFF")
		send(sub, 1, "SSUBSCRIBE", "r1")
		send(sub, 1, "SUBSCRIBE", "r2")
		send(sub, 0, "CLIENT", "REPLY", "SKIP")
		send(sub, 1, "SUNSUBSCRIBE", "r1")
		send(sub, 1, "CLIENT", "REPLY", "ON")
		send(sub, 1, "UNSUBSCRIBE", "r2")
	}
	return out
}

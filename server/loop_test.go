package server

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/persimmon-db/persimmon/pmem"
)

// adminClient is a client for CLIENT LIST and CLIENT KILL with a long read
// timeout: the loop may take seconds (race detector, a loaded machine) over
// the batch that buffers a slow client's 50 MB of replies.
func adminClient(t *testing.T, s *ksServer) *redis.Client {
	rc := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, ReadTimeout: 60 * time.Second})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// clientField returns CLIENT LIST's field for the client named name ("" if
// it is not connected).
func clientField(t *testing.T, rc *redis.Client, name, field string) string {
	t.Helper()
	list, err := rc.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		m := regexp.MustCompile(`\b` + field + `=(\S*)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("no %s in %q", field, line)
		}
		return m[1]
	}
	return ""
}

// pollClient polls CLIENT LIST until cond holds for the client's field,
// or fails after a deadline.
func pollClient(t *testing.T, rc *redis.Client, name, field, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond(clientField(t, rc, name, field)) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%s=%q)", what, field, clientField(t, rc, name, field))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func omemAbove(n int) func(string) bool {
	return func(v string) bool {
		m, err := strconv.Atoi(v)
		return err == nil && m > n
	}
}

// On the event loop, a client that stops reading gets its replies later,
// whole and in order: what the socket does not take waits in the loop
// (CLIENT LIST omem), the loop goes on serving the others meanwhile, and
// the pending output drains to nothing once the client reads.
func TestLoopSlowReaderGetsRepliesInOrder(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_IO", IOLoop)
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	if s.loop == nil {
		t.Fatal("not on the event loop")
	}
	admin := adminClient(t, s)
	val := strings.Repeat("v", 256<<10)
	w := dialListKS(t, s)
	w.nc.SetDeadline(time.Now().Add(120 * time.Second))
	w.send(multibulk("CLIENT", "SETNAME", "slow") + multibulk("SET", "big", val))
	for _, want := range []string{"+OK\r\n", "+OK\r\n"} {
		if got := w.reply(); got != want {
			t.Fatalf("setup: %q", got)
		}
	}
	// 200 x 256 KB of replies, far more than loopback's socket buffers,
	// with a counter between them to check the order.
	const n = 200
	var req strings.Builder
	for range n {
		req.WriteString(multibulk("GET", "big"))
		req.WriteString(multibulk("INCR", "ctr"))
	}
	go w.nc.Write([]byte(req.String())) // the server stops reading while its replies wait
	pollClient(t, admin, "slow", "omem", "replies pending in the loop", omemAbove(0))
	// The loop is not stuck behind the slow client.
	other := dialListKS(t, s)
	if got := other.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("another client while replies wait: %q", got)
	}
	for i := range n {
		if got := w.reply(); got != bulk(val) {
			t.Fatalf("reply %d: %d bytes, not the value", 2*i, len(got))
		}
		if got, want := w.reply(), fmt.Sprintf(":%d\r\n", i+1); got != want {
			t.Fatalf("reply %d = %q, want %q", 2*i+1, got, want)
		}
	}
	pollClient(t, admin, "slow", "omem", "the pending output to drain", func(v string) bool { return v == "0" })
	if got := w.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("after the drain: %q", got)
	}
}

// A client killed while its replies wait in the loop is closed at once:
// the pending output is dropped, the connection leaves CLIENT LIST, and
// the client reads a prefix of its replies and then EOF.
func TestLoopKillWithRepliesPending(t *testing.T) {
	t.Setenv("PERSIMMON_TEST_IO", IOLoop)
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	admin := adminClient(t, s)
	val := strings.Repeat("v", 256<<10)
	w := dialListKS(t, s)
	w.nc.SetDeadline(time.Now().Add(120 * time.Second))
	w.send(multibulk("CLIENT", "SETNAME", "victim") + multibulk("SET", "big", val))
	w.reply()
	w.reply()
	go w.nc.Write([]byte(strings.Repeat(multibulk("GET", "big"), 200)))
	pollClient(t, admin, "victim", "omem", "replies pending in the loop", omemAbove(1<<20))
	id := clientField(t, admin, "victim", "id")
	if n, err := admin.Do(context.Background(), "CLIENT", "KILL", "ID", id).Int(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL: %d %v", n, err)
	}
	pollClient(t, admin, "victim", "id", "the killed client to leave", func(v string) bool { return v == "" })
	got := 0
	for {
		r, err := readRaw(w.r)
		if err != nil {
			break // EOF (or a reset, with the output dropped)
		}
		if r != bulk(val) {
			t.Fatalf("reply %d before the close: %d bytes", got, len(r))
		}
		got++
	}
	if got >= 200 {
		t.Fatalf("all %d replies arrived: the kill did not drop pending output", got)
	}
}

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSlowlog logs every command (slowlog-log-slower-than 0) and checks
// SLOWLOG GET's entries: newest first with rising ids, the arguments as
// sent (capped at 32 arguments and 128 bytes each), the client's address
// and name, passwords redacted, the max-len cap, LEN and RESET.
func TestSlowlog(t *testing.T) {
	s := startServer(t, t.TempDir(), "--requirepass", "sekret")
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: "sekret", ClientName: "slowpoke"})
	defer c.Close()
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.SlowLogReset(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 200)
	c.Set(ctx, "k", long, 0)
	many := []any{"RPUSH", "l"}
	for i := 0; i < 40; i++ {
		many = append(many, i)
	}
	c.Do(ctx, many...)
	c.Do(ctx, "AUTH", "default", "sekret")
	c.Do(ctx, "CONFIG", "SET", "requirepass", "sekret", "timeout", "0")
	c.Get(ctx, "k")

	entries, err := c.SlowLogGet(ctx, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 6 {
		t.Fatalf("%d entries, want at least 6: %+v", len(entries), entries)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].ID >= entries[i-1].ID {
			t.Fatalf("ids not newest first: %d then %d", entries[i-1].ID, entries[i].ID)
		}
	}
	args := func(i int) string { return strings.Join(entries[i].Args, " ") }
	if got := args(0); got != "get k" && got != "GET k" {
		t.Errorf("newest entry %q, want the GET", got)
	}
	if got, want := args(1), "CONFIG SET requirepass (redacted) timeout 0"; !strings.EqualFold(got, want) {
		t.Errorf("CONFIG SET logged as %q, want %q", got, want)
	}
	if got := args(2); !strings.EqualFold(got, "AUTH (redacted) (redacted)") {
		t.Errorf("AUTH logged as %q", got)
	}
	rpush := entries[3].Args
	if len(rpush) != 32 || rpush[31] != "... (11 more arguments)" || rpush[30] != "28" {
		t.Errorf("RPUSH of 42 arguments logged as %q", rpush)
	}
	set := entries[4].Args
	if len(set) != 3 || set[2] != strings.Repeat("x", 128)+"... (72 more bytes)" {
		t.Errorf("SET of a 200-byte value logged as %q", set)
	}
	for _, e := range entries[:5] {
		if e.ClientName != "slowpoke" || !strings.HasPrefix(e.ClientAddr, "127.0.0.1:") {
			t.Errorf("entry %d: client %q %q", e.ID, e.ClientAddr, e.ClientName)
		}
	}
	for _, e := range entries {
		if strings.Contains(fmt.Sprint(e.Args), "sekret") {
			t.Errorf("a password reached the slow log: %q", e.Args)
		}
	}
	if got, err := c.SlowLogGet(ctx, 2).Result(); err != nil || len(got) != 2 || got[0].ID != entries[0].ID+1 {
		// the SLOWLOG GET -1 above is logged too, after it ran
		t.Errorf("SLOWLOG GET 2 = %+v, %v", got, err)
	}
	if err := c.Do(ctx, "SLOWLOG", "GET", "-2").Err(); err == nil || err.Error() != "ERR count should be greater than or equal to -1" {
		t.Errorf("SLOWLOG GET -2: %v", err)
	}

	// The cap.
	c.ConfigSet(ctx, "slowlog-max-len", "3")
	for i := 0; i < 5; i++ {
		c.Incr(ctx, "n")
	}
	if n, err := c.Do(ctx, "SLOWLOG", "LEN").Int64(); err != nil || n != 3 {
		t.Errorf("SLOWLOG LEN with max-len 3 = %d, %v", n, err)
	}
	// Off, then reset.
	c.ConfigSet(ctx, "slowlog-log-slower-than", "-1")
	c.SlowLogReset(ctx)
	c.Incr(ctx, "n")
	if n, err := c.Do(ctx, "SLOWLOG", "LEN").Int64(); err != nil || n != 0 {
		t.Errorf("SLOWLOG LEN after RESET with logging off = %d, %v", n, err)
	}
	if v, err := c.ConfigGet(ctx, "slowlog-*").Result(); err != nil || v["slowlog-log-slower-than"] != "-1" || v["slowlog-max-len"] != "3" {
		t.Errorf("CONFIG GET slowlog-* = %v, %v", v, err)
	}
}

// TestSlowlogBlockedCommand: a blocked command is logged when it is
// served, with its own arguments, not when it blocks (Redis 7.0's
// updateStatsOnUnblock; TCL slowlog "Rewritten commands are logged as
// their original command"): the BLPOP served after an EXEC that reset
// the log is its newest entry, and one that times out is logged too.
func TestSlowlogBlockedCommand(t *testing.T) {
	for _, io := range []string{"loop", "goroutine"} {
		t.Run(io, func(t *testing.T) {
			s := startServer(t, t.TempDir(), "--io", io)
			c := redis.NewClient(&redis.Options{Addr: s.Addr})
			defer c.Close()
			w := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 1})
			defer w.Close()
			if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- w.BLPop(ctx, 0, "l").Err() }()
			waitBlocked(t, s.Addr, 1)
			_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.LPush(ctx, "l", "foo")
				p.SlowLogReset(ctx)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			entries, err := c.SlowLogGet(ctx, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) == 0 || !strings.EqualFold(strings.Join(entries[0].Args, " "), "blpop l 0") {
				t.Fatalf("newest entries %+v, want the served BLPOP l 0 first", entries)
			}
			c.SlowLogReset(ctx)
			if err := w.Do(ctx, "BLPOP", "none", "0.01").Err(); err != redis.Nil {
				t.Fatalf("BLPOP none timed out with %v, want nil", err)
			}
			if entries, _ = c.SlowLogGet(ctx, -1).Result(); len(entries) == 0 || !strings.EqualFold(strings.Join(entries[0].Args, " "), "blpop none 0.01") {
				t.Fatalf("after a timeout: %+v, want BLPOP none 0.01 first", entries)
			}
		})
	}
}

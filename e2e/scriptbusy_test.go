package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestBusyScript runs a script that never ends, on the event loop and with
// a goroutine per connection: once it has run past busy-reply-threshold,
// other clients get BUSY, SCRIPT KILL stops it (its caller gets the
// "Script killed" error) and the server serves again. A script that wrote
// first is UNKILLABLE; SHUTDOWN without NOSAVE is refused with BUSY and
// SHUTDOWN NOSAVE stops it and the server, which then restarts with the
// data acknowledged before.
func TestBusyScript(t *testing.T) {
	// loop-msync: the committer's held replies while the watchdog serves.
	for _, io := range []string{"loop", "goroutine", "loop-msync"} {
		t.Run(io, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--io", io}
			if io == "loop-msync" {
				args = []string{"--io", "loop", "--durability", "msync"}
			}
			s := startServer(t, dir, args...)
			admin := s.client()
			if err := admin.ConfigSet(ctx, "busy-reply-threshold", "50").Err(); err != nil {
				t.Fatal(err)
			}
			if err := admin.Set(ctx, "before", "kept", 0).Err(); err != nil {
				t.Fatal(err)
			}
			runner := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, ReadTimeout: -1})
			defer runner.Close()

			evalErr := make(chan error, 1)
			go func() { evalErr <- runner.Eval(ctx, "while true do end", nil).Err() }()
			waitBusy(t, admin)
			if err := admin.Get(ctx, "before").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY ") {
				t.Fatalf("GET while busy: %v, want BUSY", err)
			}
			// A connection opened while busy (as redis-cli SCRIPT KILL does).
			late := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true})
			defer late.Close()
			if err := late.Get(ctx, "before").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY ") {
				t.Fatalf("GET on a new connection while busy: %v, want BUSY", err)
			}
			if err := late.Do(ctx, "SCRIPT", "KILL").Err(); err != nil {
				t.Fatalf("SCRIPT KILL: %v", err)
			}
			if err := <-evalErr; err == nil || !strings.HasPrefix(err.Error(), "ERR Script killed by user with SCRIPT KILL...") {
				t.Fatalf("the killed script's caller got %v", err)
			}
			for _, c := range []*redis.Client{admin, late} {
				if v, err := c.Get(ctx, "before").Result(); err != nil || v != "kept" {
					t.Fatalf("GET after the kill: %q, %v", v, err)
				}
			}
			if err := admin.Do(ctx, "SCRIPT", "KILL").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOTBUSY") {
				t.Fatalf("SCRIPT KILL with no script: %v", err)
			}

			go func() {
				evalErr <- runner.Eval(ctx, "redis.call('SET', KEYS[1], 'x') while true do end", []string{"wrote"}).Err()
			}()
			waitBusy(t, admin)
			if err := admin.Do(ctx, "SCRIPT", "KILL").Err(); err == nil || !strings.HasPrefix(err.Error(), "UNKILLABLE") {
				t.Fatalf("SCRIPT KILL of a script that wrote: %v", err)
			}
			if err := admin.Do(ctx, "SHUTDOWN").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY ") {
				t.Fatalf("SHUTDOWN without NOSAVE while busy: %v", err)
			}
			admin.Do(ctx, "SHUTDOWN", "NOSAVE") // no reply: the connection closes
			select {
			case err := <-s.done:
				s.cmd.ProcessState = &os.ProcessState{} // gone: Cleanup must not wait for it
				if err != nil {
					t.Fatalf("server exit after SHUTDOWN NOSAVE: %v\n%s", err, s.log.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("server still running 30 s after SHUTDOWN NOSAVE\n%s", s.log.String())
			}
			<-evalErr

			s2 := startServer(t, dir, args...)
			if v, err := s2.client().Get(ctx, "before").Result(); err != nil || v != "kept" {
				t.Fatalf("after restart: %q, %v", v, err)
			}
		})
	}
}

// waitBusy sends PING until the server answers BUSY (each PING waits for
// the server; the number of tries bounds the test).
func waitBusy(t *testing.T, c *redis.Client) {
	t.Helper()
	for i := 0; i < 100000; i++ {
		err := c.Ping(ctx).Err()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			return
		}
		if err != nil {
			t.Fatalf("PING while waiting for BUSY: %v", err)
		}
	}
	t.Fatal("the server never answered BUSY")
}

// TestSigtermStopsScript: SIGTERM while a script loops forever stops the
// script and the server exits cleanly (it used to wait for the script).
func TestSigtermStopsScript(t *testing.T) {
	for _, io := range []string{"loop", "goroutine"} {
		t.Run(io, func(t *testing.T) {
			s := startServer(t, t.TempDir(), "--io", io)
			admin := s.client()
			admin.ConfigSet(ctx, "busy-reply-threshold", "10")
			runner := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, ReadTimeout: -1})
			defer runner.Close()
			go runner.Eval(ctx, "while true do end", nil)
			waitBusy(t, admin)
			if err := s.stop(); err != nil {
				t.Fatalf("SIGTERM during a script: %v\n%s", err, s.log.String())
			}
		})
	}
}

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestBusyThresholdAfterShortScripts: the busy-reply-threshold timer is
// not re-armed for every script (it stays armed while scripts come and
// go). A looping script must still make the server busy once it has run
// past the threshold in force when it started: right after short scripts
// left the timer armed, and after the threshold was lowered from 5000 ms
// (a timer due 5 s later must not delay it).
func TestBusyThresholdAfterShortScripts(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.client()
	runner := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, ReadTimeout: -1})
	defer runner.Close()
	loop := func(threshold string) {
		t.Helper()
		for i := 0; i < 100; i++ { // short scripts: the timer is armed for the threshold before
			if err := admin.Eval(ctx, "return redis.call('set', KEYS[1], ARGV[1])", []string{"k"}, i).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := admin.ConfigSet(ctx, "busy-reply-threshold", threshold).Err(); err != nil {
			t.Fatal(err)
		}
		evalErr := make(chan error, 1)
		start := time.Now()
		go func() { evalErr <- runner.Eval(ctx, "while true do end", nil).Err() }()
		waitBusy(t, admin)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("threshold %s ms: busy after %v (the timer armed for 5000 ms decided)", threshold, d)
		}
		if err := admin.Do(ctx, "SCRIPT", "KILL").Err(); err != nil {
			t.Fatalf("SCRIPT KILL: %v", err)
		}
		if err := <-evalErr; err == nil || !strings.HasPrefix(err.Error(), "ERR Script killed") {
			t.Fatalf("the killed script's caller got %v", err)
		}
	}
	loop("100") // lowered from the default 5000
	loop("200") // raised: the timer armed for 100 ms fires early and waits for this script's turn
}

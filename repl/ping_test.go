package repl

import (
	"net"
	"testing"
	"time"
)

// TestCronPingPeriod: Cron puts a PING into the stream every PingPeriod
// while a replica is attached, and SetPingPeriod changes the period of a
// running master (repl-ping-replica-period set by CONFIG SET).
func TestCronPingPeriod(t *testing.T) {
	m := NewMaster(MasterConfig{PingPeriod: 10 * time.Second}, NewReplIDs(), 0, nil)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	l := &replicaLink{conn: a, acked: make(chan struct{})}
	l.state.Store("wait_bgsave")
	m.mu.Lock()
	m.links[l] = struct{}{}
	m.active = true
	m.mu.Unlock()

	t0 := time.Unix(1_000_000, 0)
	pings := func(times ...time.Duration) (n int) {
		for _, d := range times {
			before := m.Offset()
			m.Cron(t0.Add(d))
			if m.Offset() != before {
				n++
			}
		}
		return n
	}
	if n := pings(0, 1*time.Second, 9*time.Second, 10*time.Second); n != 2 {
		t.Fatalf("period 10 s, crons at 0, 1, 9, 10 s: %d PINGs, want 2 (at 0 and 10 s)", n)
	}
	m.SetPingPeriod(time.Second)
	if n := pings(11*time.Second, 12*time.Second, 13*time.Second); n != 3 {
		t.Fatalf("period 1 s, crons at 11, 12, 13 s: %d PINGs, want 3", n)
	}
	m.SetPingPeriod(0) // ignored
	m.SetPingPeriod(3600 * time.Second)
	if n := pings(14*time.Second, 100*time.Second); n != 0 {
		t.Fatalf("period 3600 s: %d PINGs within 90 s, want 0", n)
	}
}

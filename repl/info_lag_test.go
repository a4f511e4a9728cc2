package repl

import (
	"testing"
	"time"
)

// TestAckLagWholeSeconds: the lag min-replicas-max-lag compares is whole
// unix seconds, as Redis's server.unixtime - repl_ack_time, so an
// acknowledgement 1.9 s ago within the previous second is lag 1, not
// "more than 1 s", and one in the second before that is lag 2.
func TestAckLagWholeSeconds(t *testing.T) {
	now := time.Unix(1000, 900e6)
	for _, c := range []struct {
		ack  time.Time
		want int64
	}{
		{time.Unix(1000, 0), 0},
		{time.Unix(999, 0), 1}, // 1.9 s ago
		{time.Unix(999, 999e6), 1},
		{time.Unix(998, 950e6), 2}, // 1.95 s ago, two clock seconds
	} {
		if got := ackLag(c.ack, now); got != c.want {
			t.Errorf("ack %v, now %v: lag %d, want %d", c.ack, now, got, c.want)
		}
	}
}

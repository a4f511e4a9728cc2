package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestScanRemovesExpiredMatchRedis: with active expiry off, keys whose
// time has passed (an indexed string, a hash) are still counted by DBSIZE
// until a SCAN meets them; SCAN removes them, as Redis's expireIfNeeded
// does, so DBSIZE and INFO expired_keys then agree with redis-server's.
func TestScanRemovesExpiredMatchRedis(t *testing.T) {
	s := startServer(t, t.TempDir(), "--enable-debug-command", "yes")
	ours, err := dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ours.close()
	theirs, err := dialRESP(startRedis(t, "--enable-debug-command", "yes"))
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.close()
	expired := func(c *respConn) string {
		r, err := c.do("INFO", "stats")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(r.str, "\r\n") {
			if strings.HasPrefix(line, "expired_keys:") {
				return line
			}
		}
		t.Fatalf("no expired_keys in %q", r.str)
		return ""
	}
	both := func(step ...any) {
		t.Helper()
		a, err1 := ours.do(step...)
		b, err2 := theirs.do(step...)
		if err1 != nil || err2 != nil || a.String() != b.String() {
			t.Fatalf("%v: persimmon %s (%v), redis %s (%v)", step, a, err1, b, err2)
		}
		if got, want := expired(ours), expired(theirs); got != want {
			t.Fatalf("after %v: persimmon %s, redis %s", step, got, want)
		}
	}
	both("CONFIG", "RESETSTAT")
	both("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	both("SET", "s", "v", "PX", "20")
	both("HSET", "h", "f", "v")
	both("PEXPIRE", "h", "20")
	both("SET", "keep", "v")
	time.Sleep(40 * time.Millisecond) // the two expiries pass (wall clock of both servers)
	both("DBSIZE")
	both("SCAN", "0", "COUNT", "100")
	both("DBSIZE")
	both("DEBUG", "SET-ACTIVE-EXPIRE", "1")
}

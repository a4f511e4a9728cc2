package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplyBufferSizingMatchRedis: on both servers, with DEBUG REPLYBUFFER
// PEAK-RESET-TIME 100, an idle client's reply buffer (CLIENT LIST rbs)
// shrinks from 16 KiB to 1 KiB; with the peak never reset, GETs of a
// 32 KiB value grow it back to 16 KiB and no further; INFO
// reply_buffer_shrinks and _expands count the steps. Polls end at a
// deadline: the resizing runs on each server's own 100 ms clock.
func TestReplyBufferSizingMatchRedis(t *testing.T) {
	s := startServer(t, t.TempDir(), "--enable-debug-command", "yes")
	for _, srv := range []struct{ name, addr string }{
		{"persimmon", s.Addr},
		{"redis", startRedis(t, "--enable-debug-command", "yes")},
	} {
		admin, err := dialRESP(srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		tc, err := dialRESP(srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		do := func(c *respConn, args ...any) reply {
			t.Helper()
			r, err := c.do(args...)
			if err != nil || r.kind == '-' {
				t.Fatalf("%s: %v: %v %v", srv.name, args, r, err)
			}
			return r
		}
		rbs := func() int {
			t.Helper()
			for _, line := range strings.Split(do(admin, "CLIENT", "LIST").str, "\n") {
				if strings.Contains(line, "name=test_client ") {
					m := regexp.MustCompile(` rbs=(\d+) `).FindStringSubmatch(line)
					if m == nil {
						t.Fatalf("%s: no rbs in %q", srv.name, line)
					}
					n, _ := strconv.Atoi(m[1])
					return n
				}
			}
			t.Fatalf("%s: test_client not listed", srv.name)
			return 0
		}
		stat := func(name string) int {
			for _, line := range strings.Split(do(admin, "INFO", "stats").str, "\r\n") {
				if v, ok := strings.CutPrefix(line, name+":"); ok {
					n, _ := strconv.Atoi(v)
					return n
				}
			}
			t.Fatalf("%s: INFO stats lacks %s", srv.name, name)
			return 0
		}
		waitFor := func(what string, cond func() bool) {
			t.Helper()
			for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %s: rbs=%d", srv.name, what, rbs())
				}
			}
		}
		do(admin, "CONFIG", "RESETSTAT")
		do(admin, "DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100")
		do(tc, "CLIENT", "SETNAME", "test_client")
		waitFor("the idle client's buffer shrinks to 1 KiB", func() bool { n := rbs(); return n >= 1024 && n < 2046 })
		if n := stat("reply_buffer_shrinks"); n < 1 {
			t.Fatalf("%s: reply_buffer_shrinks %d", srv.name, n)
		}
		do(admin, "SET", "bigval", strings.Repeat("x", 32768))
		do(admin, "DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never")
		waitFor("GETs of 32 KiB grow it to 16 KiB", func() bool {
			do(tc, "GET", "bigval")
			n := rbs()
			if n > 16384 {
				t.Fatalf("%s: rbs=%d above 16 KiB", srv.name, n)
			}
			return n == 16384
		})
		if n := stat("reply_buffer_expands"); n < 4 {
			t.Fatalf("%s: reply_buffer_expands %d, want at least 4 (1 KiB to 16 KiB)", srv.name, n)
		}
		for _, bad := range [][]any{
			{"DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "abc"},
			{"DEBUG", "REPLYBUFFER", "nosuch", "1"},
			{"DEBUG", "REPLYBUFFER", "RESIZING"},
		} {
			if r, err := admin.do(bad...); err != nil || r.kind != '-' {
				t.Fatalf("%s: %v: %v %v, want an error", srv.name, bad, r, err)
			}
		}
		do(admin, "DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset")
		tc.close()
		admin.close()
	}
}

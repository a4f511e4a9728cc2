package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDiffDebug runs the scripts of testdata/diff-debug as TestDiff runs
// those of testdata/diff (same format, RESP2 then RESP3), against a
// redis-server and a persimmon-server that both allow DEBUG
// (enable-debug-command yes), for the DEBUG subcommands Redis's test
// suite relies on.
func TestDiffDebug(t *testing.T) {
	files, err := filepath.Glob("testdata/diff-debug/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/diff-debug (%v)", err)
	}
	redisSide := &diffTarget{name: "redis", addr: startRedis(t, "--enable-debug-command", "yes"), conns: map[int]*respConn{}}
	s := startServer(t, t.TempDir(), "--enable-debug-command", "yes")
	persimmonSide := &diffTarget{name: "persimmon", addr: s.Addr, conns: map[int]*respConn{}}
	t.Cleanup(func() { redisSide.closeAll(); persimmonSide.closeAll() })
	for _, resp3 := range []bool{false, true} {
		redisSide.resp3, persimmonSide.resp3 = resp3, resp3
		prefix := ""
		if resp3 {
			prefix = "resp3/"
		}
		for _, path := range files {
			lines, err := parseScript(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(prefix+strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
				resetTargets(t, redisSide, persimmonSide)
				for _, m := range runDiffScript(redisSide, persimmonSide, lines) {
					t.Error(m)
				}
			})
		}
	}
}

// TestDebugLoadAOF: DEBUG LOADAOF, Redis's reload of its append-only
// file, is DEBUG RELOAD's check here (the log is the append-only file):
// it answers OK and the keys keep their values and TTLs, as unit/other's
// and unit/expire's "after AOF reload" tests expect. (redis-server with
// appendonly no exits on it, so there is no side-by-side run.)
func TestDebugLoadAOF(t *testing.T) {
	s := startServer(t, t.TempDir(), "--enable-debug-command", "yes")
	c, err := dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, cmd := range [][]any{
		{"SET", "x", "somevalue"}, {"EXPIRE", "x", 1000}, {"SETEX", "y", 2000, "v"},
		{"SET", "k", "v", "KEEPTTL"}, {"PSETEX", "py", 2000000, "v"}, {"RPUSH", "l", "a", "b"},
	} {
		if r, err := c.do(cmd...); err != nil || r.kind == '-' {
			t.Fatalf("%v: %s %v", cmd, r, err)
		}
	}
	for _, sub := range []string{"LOADAOF", "loadaof"} {
		if r, err := c.do("DEBUG", sub); err != nil || r.String() != "+OK" {
			t.Fatalf("DEBUG %s: %s %v", sub, r, err)
		}
	}
	for key, want := range map[string][2]int64{"x": {900, 1000}, "y": {1900, 2000}, "py": {1900, 2000}, "k": {-1, -1}, "l": {-1, -1}} {
		r, err := c.do("TTL", key)
		n, _ := strconv.ParseInt(r.str, 10, 64)
		if err != nil || r.kind != ':' || n < want[0] || n > want[1] {
			t.Errorf("TTL %s after DEBUG LOADAOF = %s %v, want %d..%d", key, r, err, want[0], want[1])
		}
	}
	if r, _ := c.do("LRANGE", "l", 0, -1); r.String() != `*2["a", "b"]` {
		t.Errorf("LRANGE l = %s", r)
	}
}

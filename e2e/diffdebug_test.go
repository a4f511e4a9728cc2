package e2e

import (
	"path/filepath"
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

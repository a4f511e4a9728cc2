package server

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/persimmon-db/persimmon/rdb"
)

// redis-cli --functions-rdb (REPLCONF rdb-filter-only functions) gets the
// function libraries and no keys, as from redis-server 7.0.15; --rdb
// still gets both. Before, the filter was ignored and --functions-rdb
// wrote every key too. An unknown filter is Redis's error.
func TestFunctionsRDBFilter(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed")
	}
	_, addr := startReplServer(t, testIO())
	w := dialAddr(t, addr)
	lib := "#!lua name=mylib\nredis.register_function('f', function() return 1 end)"
	if got := w.do("FUNCTION", "LOAD", lib); got != "$5\r\nmylib\r\n" {
		t.Fatalf("FUNCTION LOAD = %q", got)
	}
	if got := w.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := w.do("REPLCONF", "rdb-filter-only", "functions keys"); got != "-ERR Unsupported rdb-filter-only option: keys\r\n" {
		t.Fatalf("REPLCONF rdb-filter-only 'functions keys' = %q", got)
	}
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		flag            string
		functions, keys int
	}{
		{"--rdb", 1, 1},
		{"--functions-rdb", 1, 0},
	} {
		file := filepath.Join(t.TempDir(), "out.rdb")
		if out, err := exec.Command("redis-cli", "-p", port, tc.flag, file).CombinedOutput(); err != nil {
			t.Fatalf("redis-cli %s: %v\n%s", tc.flag, err, out)
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := rdb.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		functions, keys := 0, 0
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.flag, err)
			}
			if it.Function != nil {
				functions++
			}
			if it.Entry != nil {
				keys++
			}
		}
		f.Close()
		if functions != tc.functions || keys != tc.keys {
			t.Fatalf("redis-cli %s: %d functions and %d keys, want %d and %d", tc.flag, functions, keys, tc.functions, tc.keys)
		}
	}
}

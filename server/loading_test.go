package server

import (
	"net"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
)

// A server made before its keyspace answers -LOADING where Redis 7.0 does,
// runs the commands flagged loading, shows the progress in INFO, and
// serves everything on the same connections once the keyspace is attached.
func TestLoadingStateThenAttach(t *testing.T) {
	dir := t.TempDir()
	mode := testMode(t, pmem.ModePmem)
	s := NewLoadingServer(Config{ProtectedMode: true, Dir: dir, Durability: mode.String(), IO: testIO()}, t.Logf, testFamilies,
		func() (int64, int64) { return 250, 1000 })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		<-served
	})
	w := dialAddr(t, ln.Addr().String())
	const loading = "-LOADING Redis is loading the dataset in memory\r\n"
	for _, cmd := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"PING"}, {"DBSIZE"}, {"EVAL", "return 1", "0"}} {
		if r := w.do(cmd...); r != loading {
			t.Errorf("%v while loading: %q", cmd, r)
		}
	}
	info := w.do("INFO", "persistence")
	for _, want := range []string{"loading:1\r\n", "loading_total_bytes:1000\r\n", "loading_loaded_bytes:250\r\n",
		"loading_loaded_perc:25.00\r\n", "loading_rdb_used_mem:0\r\n", "loading_start_time:", "loading_eta_seconds:"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO persistence while loading lacks %q:\n%s", want, info)
		}
	}
	if r := w.do("CONFIG", "GET", "maxclients"); !strings.Contains(r, "maxclients") {
		t.Errorf("CONFIG GET while loading: %q", r)
	}
	if r := w.do("ECHO", "hi"); r != "$2\r\nhi\r\n" {
		t.Errorf("ECHO while loading: %q", r)
	}
	if r := w.do("DEBUG", "RELOAD"); r != loading && !strings.HasPrefix(r, "-ERR DEBUG command not allowed") {
		t.Errorf("DEBUG RELOAD (needs the keyspace) while loading: %q", r)
	}
	// MULTI: a refused command dooms the transaction, as in Redis.
	w.do("MULTI")
	if r := w.do("GET", "k"); r != loading {
		t.Errorf("GET queued while loading: %q", r)
	}
	if r := w.do("EXEC"); !strings.HasPrefix(r, "-EXECABORT") {
		t.Errorf("EXEC: %q", r)
	}

	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: mode, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	s.Attach(ks)
	if r := w.do("SET", "k", "v"); r != "+OK\r\n" {
		t.Fatalf("SET after Attach: %q", r)
	}
	if r := w.do("GET", "k"); r != "$1\r\nv\r\n" {
		t.Fatalf("GET after Attach: %q", r)
	}
	if info := w.do("INFO", "persistence"); !strings.Contains(info, "loading:0\r\n") || strings.Contains(info, "loading_total_bytes") {
		t.Errorf("INFO after Attach:\n%s", info)
	}
	w2 := dialAddr(t, ln.Addr().String())
	if r := w2.do("GET", "k"); r != "$1\r\nv\r\n" {
		t.Fatalf("GET on a new connection: %q", r)
	}
}

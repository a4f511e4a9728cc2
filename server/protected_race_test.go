package server

import (
	"strings"
	"sync"
	"testing"
)

// TestProtectedActionWhileConfigSet: DEBUG's enable-debug-command check
// reads the config store while another client's CONFIG SET writes it
// (under -race this was a data race on the store's map).
func TestProtectedActionWhileConfigSet(t *testing.T) {
	_, addr := startReplServer(t, IOGoroutine)
	setter, debugger := dialAddr(t, addr), dialAddr(t, addr)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			policy := []string{"allkeys-lru", "noeviction"}[i%2]
			if r := setter.do("CONFIG", "SET", "maxmemory-policy", policy); r != "+OK\r\n" {
				t.Errorf("CONFIG SET: %q", r)
				return
			}
		}
	}()
	for range 200 {
		if r := debugger.do("DEBUG", "SLEEP", "0"); !strings.HasPrefix(r, "-ERR DEBUG command not allowed") {
			t.Fatalf("DEBUG with enable-debug-command no: %q", r)
		}
	}
	wg.Wait()
}

package server

import (
	"net"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConfigDifferential runs CONFIG SET / GET of every parameter Redis
// 7.0 lists, with a spread of good and bad values per kind, against a
// Debian redis-server started for the test and against the server, and
// requires the same replies, except where Persimmon differs on purpose
// (configDiffers). Skipped when redis-server is not installed.
func TestConfigDifferential(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--logfile", "")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var rc net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		if rc, err = net.Dial("tcp", addr); err == nil {
			rc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process's start-up, not synchronisation between our goroutines
	}
	red := dialWire(t, &wireServer{addr: addr})
	ps := dialWire(t, startWire(t, Config{Bind: "127.0.0.1", Dir: dir, Durability: "pmem", SegmentSize: 64 << 20}, &fakeKS{}))

	// Every name Redis answers to CONFIG GET * is known here.
	redisNames := getNames(t, red)
	psNames := map[string]bool{}
	for _, n := range getNames(t, ps) {
		psNames[n] = true
	}
	for _, n := range redisNames {
		if !psNames[n] {
			t.Errorf("CONFIG GET * lacks %q", n)
		}
	}
	if len(redisNames) < 190 {
		t.Fatalf("redis-server lists only %d parameters", len(redisNames))
	}

	values := []string{"yes", "no", "YES", "maybe", "", "0", "1", "-1", "7", "100", "2147483648", "-2147483649",
		"99999999999999999999", "abc", "1k", "1kb", "2mb", "1gb", "1.5", "10%", "200%", "0777", "8",
		"a/b", "x.rdb", "KEA", "Ex", "Q", "3600 1 300 10", "1 2 3", "0 0 0", "-2001 0 0",
		"normal 1mb 2mb 3", "pubsub 1 2", "replica 0 0 0", "master 0 0 0",
		"50 99", "101", "host 6380", "no one", "{title}", "{nope}", "default", "save nosave", "now force"}
	checked, same := 0, 0
	for _, name := range redisNames {
		if configDiffers(name, "") {
			continue
		}
		orig := getOne(t, red, name)
		fails := 0
		for _, v := range values {
			if fails == 3 {
				break // enough to show what is wrong with this one
			}
			if configDiffers(name, v) {
				continue
			}
			checked++
			rr := red.do("CONFIG", "SET", name, v)
			pr := ps.do("CONFIG", "SET", name, v)
			if rr != pr {
				t.Errorf("CONFIG SET %s %q: redis %q, persimmon %q", name, v, rr, pr)
				fails++
				continue
			}
			if rg, pg := getOne(t, red, name), getOne(t, ps, name); rg != pg {
				t.Errorf("after CONFIG SET %s %q: CONFIG GET redis %q, persimmon %q", name, v, rg, pg)
				fails++
				continue
			}
			same++
		}
		red.do("CONFIG", "SET", name, orig)
		ps.do("CONFIG", "SET", name, orig)
	}
	// Several patterns and several parameters at once.
	for _, args := range [][]string{
		{"CONFIG", "SET", "hz", "20", "list-compress-depth", "-1"},
		{"CONFIG", "SET", "hz", "20", "nosuch", "1"},
		{"CONFIG", "SET", "daemonize", "no", "nosuch", "1"},
		{"CONFIG", "SET", "hz", "20", "hz", "30"},
		{"CONFIG", "SET", "hz", "20", "HZ", "30"},
		{"CONFIG", "SET", "hz", "20", "list-compress-depth", "2"},
		{"CONFIG", "SET", "hz"},
		{"CONFIG", "SET", "hz", "1", "timeout"},
		{"CONFIG", "GET", "hz", "list-compress-depth"},
		{"CONFIG", "SET", "hash-max-ziplist-entries", "100", "hash-max-listpack-entries", "200"},
		{"CONFIG", "GET", "hash-max-ziplist-entries"},
		{"CONFIG", "GET", "HZ"},
		{"CONFIG", "GET", "nosuch"},
		{"CONFIG", "GET", "rdb-key-save-delay"},
		{"CONFIG", "GET", "rdb-key-save-*"},
	} {
		checked++
		rr, pr := red.do(args...), ps.do(args...)
		if args[1] == "GET" {
			// The order of a map reply is not part of the contract.
			rr, pr = sortedPairs(rr), sortedPairs(pr)
		}
		if rr != pr {
			t.Errorf("%q: redis %q, persimmon %q", args, rr, pr)
			continue
		}
		same++
	}
	t.Logf("%d parameters, %d CONFIG SET/GET cases, %d identical", len(redisNames), checked, same)
}

// configDiffers says where Persimmon answers differently on purpose
// (v == "": the whole parameter): the listening address and the data
// directory belong to the test servers; requirepass would lock the test
// connection out; TLS files and active defragmentation are checked by Redis
// against things Persimmon does not have; maxclients is checked by Redis
// against its file descriptor limit.
func configDiffers(name, v string) bool {
	switch name {
	case "port", "bind", "dir", "requirepass", "masterauth", "masteruser", "maxclients", "daemonize", "pidfile",
		"logfile", "appendonly", "save", "oom-score-adj", "oom-score-adj-values":
		return true
	case "tls-port":
		return v != "" && v != "0" && !strings.HasPrefix(v, "-") && v != "abc" && v != "maybe" && v != "1.5" && v != "10%"
	case "tls-cluster", "tls-replication":
		// Redis refuses them without certificates; here they are stored only.
		return v != "" && strings.EqualFold(v, "yes")
	case "activedefrag":
		return v != "" && strings.EqualFold(v, "yes")
	}
	return strings.HasPrefix(name, "tls-") && strings.HasSuffix(name, "-file") || strings.HasPrefix(name, "tls-ca-cert") ||
		name == "tls-protocols" || name == "tls-ciphers" || name == "tls-ciphersuites" || name == "tls-key-file-pass" ||
		name == "tls-client-key-file-pass"
}

// getNames returns the names CONFIG GET * answers, sorted.
func getNames(t *testing.T, w *wire) []string {
	t.Helper()
	raw := w.do("CONFIG", "GET", "*")
	elems := bulkElems(raw)
	var names []string
	for i := 0; i < len(elems); i += 2 {
		names = append(names, elems[i])
	}
	sort.Strings(names)
	return names
}

// getOne returns one parameter's value.
func getOne(t *testing.T, w *wire, name string) string {
	t.Helper()
	elems := bulkElems(w.do("CONFIG", "GET", name))
	if len(elems) != 2 {
		return "<missing>"
	}
	return elems[1]
}

// bulkElems splits a RESP2 array of bulk strings.
func bulkElems(raw string) []string {
	var out []string
	lines := strings.Split(raw, "\r\n")
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "$") && i+1 < len(lines) {
			out = append(out, lines[i+1])
			i++
		}
	}
	return out
}

// sortedPairs returns a CONFIG GET reply's name-value pairs, sorted.
func sortedPairs(raw string) string {
	e := bulkElems(raw)
	var pairs []string
	for i := 0; i+1 < len(e); i += 2 {
		pairs = append(pairs, e[i]+"="+e[i+1])
	}
	sort.Strings(pairs)
	return strings.Join(pairs, " ")
}

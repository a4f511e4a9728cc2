package server

import (
	"net"
	"strings"
	"testing"
)

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "123": 123, "1k": 1000, "1kb": 1024, "1KB": 1024, "64mb": 64 << 20,
		"1m": 1_000_000, "1g": 1_000_000_000, "1gb": 1 << 30, "512MB": 512 << 20, "10b": 10,
	} {
		if got, err := ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mb", "-1", "1.5mb", "1tb", "x", "99999999999gb"} {
		if got, err := ParseMemory(in); err == nil {
			t.Errorf("ParseMemory(%q) = %d, want an error", in, got)
		}
	}
}

func TestConfigMatches(t *testing.T) {
	names := func(ps []*configParam) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.name)
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct {
		patterns []string
		want     string
	}{
		{[]string{"port"}, "port"},
		{[]string{"PORT"}, "port"},
		{[]string{"*max*"}, "proto-max-bulk-len maxclients slowlog-max-len maxmemory maxmemory-policy hash-max-listpack-entries hash-max-listpack-value set-max-intset-entries zset-max-listpack-entries zset-max-listpack-value list-max-listpack-size hll-sparse-max-bytes"},
		{[]string{"port", "p*", "save"}, "port protected-mode proto-max-bulk-len save"},
		{[]string{"nosuch"}, ""},
		{[]string{"d[iu]*"}, "dir durability"},
	} {
		pats := make([][]byte, len(tt.patterns))
		for i, p := range tt.patterns {
			pats[i] = []byte(p)
		}
		if got := names(configMatches(pats)); got != tt.want {
			t.Errorf("configMatches(%q) = %q, want %q", tt.patterns, got, tt.want)
		}
	}
}

func TestConfigGetSet(t *testing.T) {
	s := startWire(t, Config{Dir: "/data", Durability: "pmem", SegmentSize: 64 << 20}, &fakeKS{})
	w := dialWire(t, s)
	script(t, w, [][2]string{
		{"config get save appendonly", "*4\r\n" + bulk("save") + bulk("") + bulk("appendonly") + bulk("no")},
		{"config get dir durability segment-size", "*6\r\n" + bulk("dir") + bulk("/data") + bulk("durability") + bulk("pmem") + bulk("segment-size") + bulk("67108864")},
		{"config get nosuch", "*0\r\n"},
		{"config set nosuch 1", "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n"},
		{"config set port", "-ERR wrong number of arguments for 'config|set' command\r\n"},
		{"config set timeout 1 maxclients", "-ERR wrong number of arguments for 'config|set' command\r\n"},
		{"config set maxclients abc", "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n"},
		{"config set timeout -1", "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{"config set dir /x", "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set immutable config\r\n"},
		{"config set durability none", "-ERR CONFIG SET failed (possibly related to argument 'durability') - can't set immutable config\r\n"},
		{"config set timeout 1 timeout 2", "-ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter\r\n"},
		{"config set appendonly yes", "-ERR CONFIG SET failed (possibly related to argument 'appendonly') - every write is durable before its reply; there is no AOF\r\n"},
		{`config set save ""`, "+OK\r\n"},
		{"config get maxmemory maxmemory-policy", "*4\r\n" + bulk("maxmemory") + bulk("0") + bulk("maxmemory-policy") + bulk("noeviction")},
		{"config set maxmemory 0", "+OK\r\n"},
		{"config set maxmemory 1gb", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - there is no eviction: the keyspace is limited by its disk, not by maxmemory\r\n"},
		{"config set maxmemory-policy allkeys-lru", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - there is no eviction\r\n"},
		{"config get appendfsync", "*2\r\n" + bulk("appendfsync") + bulk("always")},
		{"config get hash-max-listpack-entries", "*2\r\n" + bulk("hash-max-listpack-entries") + bulk("512")},
		{"config set hash-max-listpack-entries 10", "-ERR CONFIG SET failed (possibly related to argument 'hash-max-listpack-entries') - can't set immutable config\r\n"},
		// Nothing is set when one value is bad.
		{"config set timeout 5 maxclients abc", "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n"},
		{"config get timeout", "*2\r\n" + bulk("timeout") + bulk("0")},
		{"config set maxclients 50 protected-mode no", "+OK\r\n"},
		{"config get maxclients protected-mode", "*4\r\n" + bulk("protected-mode") + bulk("no") + bulk("maxclients") + bulk("50")},
		{"config set proto-max-bulk-len 1000", "-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive\r\n"},
		{"config set proto-max-bulk-len 1mb", "+OK\r\n"},
		{"config set requirepass pw", "+OK\r\n"},
		{"ping", "+PONG\r\n"}, // a connection authenticated before stays so
		{"config foo", "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n"},
	})
	if got := dialWire(t, s).do("PING"); got != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("new connection after CONFIG SET requirepass: %q", got)
	}
	// proto-max-bulk-len applies to the next request.
	w.send("*2\r\n$4\r\nECHO\r\n$2097152\r\n") // refused before its bytes arrive
	if got := w.reply(); got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("2 MB argument with a 1 MB limit: %q", got)
	}
}

func TestConfigSetPortRebinds(t *testing.T) {
	s := startWire(t, Config{Bind: "127.0.0.1"}, &fakeKS{})
	w := dialWire(t, s)
	if got := w.do("CONFIG", "SET", "port", "0"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET port 0 = %q", got)
	}
	got := w.do("CONFIG", "GET", "port")
	port := got[strings.LastIndex(got[:len(got)-2], "\n")+1 : len(got)-2]
	if port == "0" || port == s.addr[strings.LastIndex(s.addr, ":")+1:] {
		t.Fatalf("CONFIG GET port = %q after rebinding to a free port", got)
	}
	moved := dialWire(t, &wireServer{Server: s.Server, addr: net.JoinHostPort("127.0.0.1", port)})
	if got := moved.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING on the new port = %q", got)
	}
	if got := w.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("connections made before the rebind are kept: %q", got)
	}
	if nc, err := net.Dial("tcp", s.addr); err == nil {
		nc.Close()
		t.Fatalf("the old port still accepts")
	}
}

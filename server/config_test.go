package server

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	cs := newConfigStore()
	for _, tt := range []struct {
		patterns []string
		want     string
	}{
		{[]string{"port"}, "port"},
		{[]string{"PORT"}, "PORT"}, // answered under the name asked
		{[]string{"hash-max-ziplist-entries"}, "hash-max-ziplist-entries"},
		{[]string{"*max-*-entries"}, "hash-max-listpack-entries hash-max-ziplist-entries set-max-intset-entries zset-max-listpack-entries zset-max-ziplist-entries"},
		{[]string{"port", "p*", "save"}, "port protected-mode pidfile proc-title-template propagation-error-behavior proto-max-bulk-len save"},
		{[]string{"nosuch"}, ""},
		{[]string{"d[iu]*"}, "disable-thp dir"},
		{[]string{"durability", "segment-size"}, "durability segment-size"}, // hidden: exact names only,
		{[]string{"rdb-key-save-delay"}, "rdb-key-save-delay"},              // hidden: exact name only
		{[]string{"rdb-key-*"}, ""},
	} {
		pats := make([][]byte, len(tt.patterns))
		for i, p := range tt.patterns {
			pats[i] = []byte(p)
		}
		names, _ := cs.configMatches(pats)
		if got := strings.Join(names, " "); got != tt.want {
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
		{"config set timeout 1 maxclients", "-ERR syntax error\r\n"},
		{"config set maxclients abc", "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n"},
		{"config set timeout -1", "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{"config set dir /x", "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\r\n"},
		{"config set durability none", "-ERR CONFIG SET failed (possibly related to argument 'durability') - can't set immutable config\r\n"},
		{"config set timeout 1 timeout 2", "-ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter\r\n"},
		{"config set appendonly yes", "+OK\r\n"}, // stored, with a log line
		{"config get appendonly", "*2\r\n" + bulk("appendonly") + bulk("yes")},
		{"config set appendonly maybe", "-ERR CONFIG SET failed (possibly related to argument 'appendonly') - argument must be 'yes' or 'no'\r\n"},
		{`config set save ""`, "+OK\r\n"},
		{"config get maxmemory maxmemory-policy", "*4\r\n" + bulk("maxmemory") + bulk("0") + bulk("maxmemory-policy") + bulk("noeviction")},
		{"config set maxmemory 0", "+OK\r\n"},
		{"config set maxmemory 1gb", "+OK\r\n"}, // stored, with a log line: not enforced
		{"config get maxmemory", "*2\r\n" + bulk("maxmemory") + bulk("1073741824")},
		{"config set maxmemory 0", "+OK\r\n"},
		{"config set maxmemory-policy allkeys-lru", "+OK\r\n"},
		{"config set maxmemory-policy lru", "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction\r\n"},
		{"config get appendfsync", "*2\r\n" + bulk("appendfsync") + bulk("everysec")},
		{"config get hash-max-listpack-entries", "*2\r\n" + bulk("hash-max-listpack-entries") + bulk("512")},
		{"config set hash-max-ziplist-entries 10", "+OK\r\n"},
		{"config get hash-max-listpack-entries", "*2\r\n" + bulk("hash-max-listpack-entries") + bulk("10")},
		{"config set daemonize yes", "-ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config\r\n"},
		{"config set dbfilename x.rdb", "-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\r\n"},
		{"config set notify-keyspace-events KEA", "+OK\r\n"},
		{"config get notify-keyspace-events", "*2\r\n" + bulk("notify-keyspace-events") + bulk("AKE")},
		{"config set notify-keyspace-events Q", "-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n"},
		// Nothing is set when one value is bad.
		{"config set timeout 5 maxclients abc", "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n"},
		{"config get timeout", "*2\r\n" + bulk("timeout") + bulk("0")},
		{"config set maxclients 50 protected-mode no", "+OK\r\n"},
		{"config get maxclients protected-mode", "*4\r\n" + bulk("maxclients") + bulk("50") + bulk("protected-mode") + bulk("no")},
		// Atomic: the second value is bad, the first is not set either.
		{"config set list-compress-depth 3 hz -1", "-ERR CONFIG SET failed (possibly related to argument 'hz') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{"config get list-compress-depth", "*2\r\n" + bulk("list-compress-depth") + bulk("0")},
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

// CONFIG SET bind may name an address the server is already bound to, as
// redis-server's changeBindAddr closes the old listeners before binding
// the new list; a list that cannot be bound brings the old one back.
func TestConfigSetBindOverlapping(t *testing.T) {
	if ln, err := net.Listen("tcp4", "127.0.0.2:0"); err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	} else {
		ln.Close()
	}
	s := startWire(t, Config{Bind: "127.0.0.1"}, &fakeKS{})
	w := dialWire(t, s)
	_, port, _ := net.SplitHostPort(s.addr)
	if got := w.do("CONFIG", "GET", "port"); !strings.HasSuffix(got, "\r\n"+port+"\r\n") {
		t.Fatalf("CONFIG GET port = %q, want %s", got, port)
	}
	ping := func(host string) string {
		nc, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), time.Second)
		if err != nil {
			return "dial: " + err.Error()
		}
		other := &wire{t: t, nc: nc, r: bufio.NewReader(nc)}
		defer nc.Close()
		return other.do("PING")
	}
	for _, tc := range []struct {
		bind, reply string
		serving     []string // addresses that answer PING afterwards
		refusing    []string
	}{
		{"127.0.0.1 127.0.0.2", "+OK\r\n", []string{"127.0.0.1", "127.0.0.2"}, nil},
		{"127.0.0.2", "+OK\r\n", []string{"127.0.0.2"}, []string{"127.0.0.1"}},
		{"127.0.0.2 127.0.0.1", "+OK\r\n", []string{"127.0.0.1", "127.0.0.2"}, nil},
		// 192.0.2.1 (TEST-NET-1) is no address of this host: the bind fails
		// and the previous list serves again.
		{"127.0.0.1 192.0.2.1", "-ERR CONFIG SET failed (possibly related to argument 'bind') - Unable to listen on this port. Check server logs.\r\n",
			[]string{"127.0.0.1", "127.0.0.2"}, nil},
	} {
		if got := w.do("CONFIG", "SET", "bind", tc.bind); got != tc.reply {
			t.Fatalf("CONFIG SET bind %q = %q, want %q", tc.bind, got, tc.reply)
		}
		for _, h := range tc.serving {
			if got := ping(h); got != "+PONG\r\n" {
				t.Errorf("after CONFIG SET bind %q: PING on %s = %q", tc.bind, h, got)
			}
		}
		for _, h := range tc.refusing {
			if got := ping(h); got == "+PONG\r\n" {
				t.Errorf("after CONFIG SET bind %q: %s still accepts", tc.bind, h)
			}
		}
		if got := w.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("the connection made before the rebinds: %q", got)
		}
	}
	if got := w.do("CONFIG", "GET", "bind"); got != "*2\r\n"+bulk("bind")+bulk("127.0.0.2 127.0.0.1") {
		t.Errorf("CONFIG GET bind after the failed set = %q", got)
	}
}

func TestConfigRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.conf")
	orig := "# a comment\nio loop\nhash-max-ziplist-entries 100\n\nsave 900 1\nsave 300 10\nrequirepass \"a b\"\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startWire(t, Config{Bind: "127.0.0.1", ConfigFile: path, Requirepass: "a b"}, &fakeKS{})
	w := dialWire(t, s)
	script(t, w, [][2]string{
		{`auth "a b"`, "+OK\r\n"},
		{"config set hash-max-listpack-entries 7 hz 20 client-output-buffer-limit \"pubsub 64mb 16mb 90\"", "+OK\r\n"},
		{`config set save ""`, "+OK\r\n"},
		{"config rewrite", "+OK\r\n"},
	})
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	port := s.addr[strings.LastIndex(s.addr, ":")+1:]
	want := "# a comment\nio loop\nhash-max-listpack-entries 7\n\nsave \"\"\nrequirepass \"a b\"\n" +
		"# Generated by CONFIG REWRITE\nprotected-mode no\nport " + port + "\nhz 20\n" +
		"client-output-buffer-limit normal 0 0 0\nclient-output-buffer-limit slave 256mb 64mb 60\nclient-output-buffer-limit pubsub 64mb 16mb 90\n" +
		"bind 127.0.0.1\n" +
		// Redis writes the users whether or not the file had user lines.
		"user default on #c8687a08aa5d6ed2044328fa6a697ab8e96dc34291e8c2034ae8c38e6fcc6d65 ~* &* +@all\n"
	if string(got) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode after rewrite: %v, %v", st.Mode(), err)
	}
	// Without a config file, Redis's error.
	w2 := dialWire(t, startWire(t, Config{}, &fakeKS{}))
	if got := w2.do("CONFIG", "REWRITE"); got != "-ERR The server is running without a config file\r\n" {
		t.Errorf("CONFIG REWRITE without a file: %q", got)
	}
}

// TestConfigRewriteUsers: CONFIG REWRITE writes the users as Redis 7.0's
// rewriteConfigUserOption does (checked against redis-server 7.0.15 with
// the same file and commands): ACL LIST's lines, in name order, in place
// of the file's user lines, the rest appended; with an aclfile, the file
// keeps no user line.
func TestConfigRewriteUsers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.conf")
	orig := "port 1\nuser alice on >secret ~app:* +@read\nuser default on nopass ~* &* +@all -flushall\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	users := [][]string{{"alice", "on", ">secret", "~app:*", "+@read"}, {"default", "on", "nopass", "~*", "&*", "+@all", "-flushall"}}
	s := startWire(t, Config{Bind: "127.0.0.1", ConfigFile: path, ACLUsers: users}, &fakeKS{})
	if err := s.LoadACL(); err != nil {
		t.Fatal(err)
	}
	w := dialWire(t, s)
	script(t, w, [][2]string{
		{"acl setuser carol on >pw ~c:* +get", "+OK\r\n"},
		{"acl setuser alice +set", "+OK\r\n"},
		{"config rewrite", "+OK\r\n"},
	})
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secret := "#2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
	port := s.addr[strings.LastIndex(s.addr, ":")+1:]
	want := "port " + port + "\n" +
		"user alice on " + secret + " ~app:* resetchannels -@all +@read +set\n" +
		"user carol on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~c:* resetchannels -@all +get\n" +
		"# Generated by CONFIG REWRITE\nprotected-mode no\nbind 127.0.0.1\n" +
		"user default on nopass sanitize-payload ~* &* +@all -flushall\n"
	if string(got) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}

	// With an aclfile the users are its, and the config keeps none.
	aclPath := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(aclPath, []byte("user default on nopass ~* &* +@all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := startWire(t, Config{Bind: "127.0.0.1", ConfigFile: path, ACLFile: aclPath}, &fakeKS{})
	if err := s2.LoadACL(); err != nil {
		t.Fatal(err)
	}
	if got := dialWire(t, s2).do("config", "rewrite"); got != "+OK\r\n" {
		t.Fatalf("CONFIG REWRITE = %q", got)
	}
	if got, err := os.ReadFile(path); err != nil || strings.Contains(string(got), "user ") {
		t.Errorf("rewritten with an aclfile: %q, %v; want no user line", got, err)
	}
}

// TestConfigUsersAtStart: the config file's users are created at start-up
// (a new user from nothing, the default user reset first); a user named
// twice, a rule that fails, or users beside an aclfile stop the start, as
// they stop redis-server's.
func TestConfigUsersAtStart(t *testing.T) {
	s := startWire(t, Config{Requirepass: "old", ACLUsers: [][]string{{"default", "on", "nopass", "~*", "+@all"}, {"bob", "on", ">b", "(~x* +get)", "&news"}}}, &fakeKS{})
	if err := s.LoadACL(); err != nil {
		t.Fatal(err)
	}
	w := dialWire(t, s)
	want := "*2\r\n" + bulk("user bob on #3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d resetchannels &news -@all (~x* resetchannels -@all +get)") +
		bulk("user default on nopass sanitize-payload ~* resetchannels +@all")
	if got := w.do("acl", "list"); got != want {
		t.Errorf("ACL LIST = %q, want %q", got, want)
	}
	for _, c := range []struct {
		cfg Config
		err string
	}{
		{Config{ACLUsers: [][]string{{"a", "on"}, {"a", "off"}}}, "user a: Duplicate user found. A user can only be defined once in config files"},
		{Config{ACLUsers: [][]string{{"a", "+nosuch"}}}, "Unknown command or category name in ACL"},
		{Config{ACLUsers: [][]string{{"a", "on"}}, ACLFile: "/nonexistent.acl"}, "users defined in redis.conf and at the same setting an ACL file path is invalid"},
	} {
		s := startWire(t, c.cfg, &fakeKS{})
		dialWire(t, s).do("ping") // serving before the cleanup closes it
		if err := s.LoadACL(); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: LoadACL = %v, want %q", c.cfg.ACLUsers, err, c.err)
		}
	}
}

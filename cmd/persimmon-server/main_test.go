package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/server"
)

func TestParseConfigFile(t *testing.T) {
	in := `# a comment
port 6380

   requirepass "a b\x21"
bind 127.0.0.1 -::1
dir '/data dir'
save ""
appendonly no
SEGMENT-SIZE 1gb
`
	got, _, err := parseConfigFile(strings.NewReader(in), "test.conf")
	if err != nil {
		t.Fatal(err)
	}
	want := settings{"port": "6380", "requirepass": "a b!", "bind": "127.0.0.1 -::1", "dir": "/data dir", "segment-size": "1gb"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, bad := range []string{
		"daemonize maybe\n",
		"nosuch-directive 1\n",
		"save 900\n",
		"hz abc\n",
		"port\n",
		"port 1 2\n",
		`requirepass "open` + "\n",
	} {
		if _, _, err := parseConfigFile(strings.NewReader(bad), "bad.conf"); err == nil || !strings.Contains(err.Error(), "bad.conf:1") {
			t.Errorf("%q: err = %v, want an error naming bad.conf:1", bad, err)
		}
	}
}

func TestFlagsOverrideConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.conf")
	if err := os.WriteFile(path, []byte("port 7000\ndir /from/file\ndurability msync\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, file, _, err := loadSettings([]string{"--config", path, "--port", "7001"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if file != path || set["port"] != "7001" || set["dir"] != "/from/file" || set["durability"] != "msync" || set["bind"] != "127.0.0.1" {
		t.Fatalf("settings %q from %q", set, file)
	}
	// Redis parameters as redis-server takes them on its command line: a
	// value is every argument up to the next "--"; they win over the file.
	if err := os.WriteFile(path, []byte("port 7000\nhz 15\nsave 900 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, _, fc, err := loadSettings([]string{"--save", "", "--config", path, "--appendonly", "no", "--hz", "20",
		"--list-max-ziplist-size", "-1", "--port", "7001", "--client-output-buffer-limit", "pubsub", "1mb", "2mb", "3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range fc.params {
		got[l.Name] = l.Value
	}
	if set["port"] != "7001" || got["save"] != "" || got["hz"] != "20" || got["appendonly"] != "no" || got["list-max-listpack-size"] != "-1" ||
		got["client-output-buffer-limit"] != "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2097152 3" {
		t.Fatalf("settings %q, parameters %q", set, got)
	}
	if _, _, _, err := loadSettings([]string{"--hz", "x"}, io.Discard); err == nil || !strings.Contains(err.Error(), "hz") {
		t.Fatalf("--hz x: %v", err)
	}
	if _, _, _, err := loadSettings([]string{"--nosuch", "1"}, io.Discard); err == nil {
		t.Fatal("--nosuch 1 accepted")
	}
	// A lone positional argument is the config file, as with redis-server.
	set, _, _, err = loadSettings([]string{path}, io.Discard)
	if err != nil || set["port"] != "7000" {
		t.Fatalf("positional config: %q, %v", set, err)
	}
}

func TestBuildConfig(t *testing.T) {
	set, _, _, err := loadSettings(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, opts, err := buildConfig(set)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 6379 || cfg.Bind != "127.0.0.1" || !cfg.ProtectedMode || cfg.ProtoMaxBulkLen != 512<<20 ||
		cfg.Durability != "pmem" || opts.Mode != pmem.ModePmem || opts.SegmentSize != 64<<20 || opts.Dir != "./data" {
		t.Fatalf("defaults: %+v %+v", cfg, opts)
	}
	for k, v := range map[string]string{
		"port": "70000", "durability": "fast", "segment-size": "lots", "protected-mode": "maybe",
		"proto-max-bulk-len": "10", "maxclients": "0", "timeout": "-1",
	} {
		bad := settings{}
		for kk, vv := range set {
			bad[kk] = vv
		}
		bad[k] = v
		if _, _, err := buildConfig(bad); err == nil {
			t.Errorf("%s %s accepted", k, v)
		}
	}
}

func TestIOModel(t *testing.T) {
	for _, tt := range []struct {
		v       string
		mode    pmem.Mode
		want    string
		wantErr bool
	}{
		{"auto", pmem.ModePmem, server.IOLoop, false},
		{"", pmem.ModeNone, server.IOLoop, false},
		{"auto", pmem.ModeMsync, server.IOLoop, false}, // the committer holds replies (resp/commit.go)
		{"goroutine", pmem.ModePmem, server.IOGoroutine, false},
		{"goroutine", pmem.ModeMsync, server.IOGoroutine, false},
		{"loop", pmem.ModeNone, server.IOLoop, false},
		{"loop", pmem.ModeMsync, server.IOLoop, false},
		{"threads", pmem.ModePmem, "", true},
	} {
		got, err := ioModel(tt.v, tt.mode)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ioModel(%q, %v) = %q, %v; want %q, error %v", tt.v, tt.mode, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestSchedulerThreads(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	cpus := runtime.NumCPU()
	for _, tt := range []struct {
		v       string
		mode    pmem.Mode
		io      string
		want    int
		wantErr bool
	}{
		{"auto", pmem.ModePmem, server.IOLoop, cpus, false},
		{"", pmem.ModeNone, server.IOLoop, cpus, false},
		{"auto", pmem.ModePmem, server.IOGoroutine, 1, false},
		{"auto", pmem.ModeNone, server.IOGoroutine, 1, false},
		{"auto", pmem.ModeMsync, server.IOGoroutine, cpus, false},
		{"auto", pmem.ModeMsync, server.IOLoop, cpus + 1, false}, // the committer's P
		{"3", pmem.ModePmem, server.IOLoop, 3, false},
		{"0", pmem.ModePmem, server.IOLoop, 0, true},
		{"many", pmem.ModePmem, server.IOLoop, 0, true},
	} {
		got, err := schedulerThreads(tt.v, tt.mode, tt.io)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("schedulerThreads(%q, %v, %q) = %d, %v; want %d, error %v", tt.v, tt.mode, tt.io, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestWithDirectives: a directive's resolved value (a flag over the file)
// is the value the server's CONFIG sees.
func TestWithDirectives(t *testing.T) {
	params := []server.ConfigLine{{Name: "maxclients", Value: "100"}, {Name: "hz", Value: "20"}}
	got := map[string]string{}
	for _, l := range withDirectives(params, settings{"maxclients": "50", "bind": "127.0.0.1 -::1", "io": "loop"}) {
		got[l.Name] = l.Value
	}
	if got["maxclients"] != "50" || got["hz"] != "20" || got["bind"] != "127.0.0.1 -::1" || len(got) != 3 {
		t.Fatalf("%q", got)
	}
	if params[0].Value != "100" {
		t.Fatal("withDirectives changed its argument")
	}
}

// TestConfigInclude: "include" reads another file in place, as Redis 7.0's
// loadServerConfig does: a later line wins whichever file it is in, a
// pattern with wildcards includes every file it matches (none is no
// error), a file that cannot be opened stops the start.
func TestConfigInclude(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("conf.d/a.conf", "requirepass froma\nhz 20\n")
	write("conf.d/b.conf", "maxclients 50\n")
	base := write("base.conf", "port 7000\nrequirepass frombase\n")
	main := "port 6390\ninclude " + base + "\nrequirepass mine\ninclude " + filepath.Join(dir, "conf.d", "*.conf") +
		"\ninclude " + filepath.Join(dir, "empty.d", "*.conf") + "\n"
	got, fc, err := parseConfigFile(strings.NewReader(main), "main.conf")
	if err != nil {
		t.Fatal(err)
	}
	// base.conf's port comes after main's own line 1, so it wins; main's
	// requirepass comes after base's and is then overridden by a.conf's.
	for k, v := range map[string]string{"port": "7000", "requirepass": "froma", "maxclients": "50"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if v := paramValue(fc.params, "hz"); v != "20" {
		t.Errorf("hz from the included a.conf = %q, want 20", v)
	}

	_, _, err = parseConfigFile(strings.NewReader("include "+filepath.Join(dir, "missing.conf")+"\n"), "main.conf")
	if err == nil || !strings.Contains(err.Error(), "can't open config file") {
		t.Errorf("include of a missing file: err = %v, want can't open config file", err)
	}
	bad := write("bad.conf", "port 1\nnosuch 1\n")
	_, _, err = parseConfigFile(strings.NewReader("include "+bad+"\n"), "main.conf")
	if err == nil || !strings.Contains(err.Error(), bad+":2") {
		t.Errorf("a bad line in an included file: err = %v, want it named %s:2", err, bad)
	}
	loop := write("loop.conf", "include "+filepath.Join(dir, "loop.conf")+"\n")
	if _, _, err = parseConfigFile(strings.NewReader("include "+loop+"\n"), "main.conf"); err == nil {
		t.Error("a file that includes itself: no error")
	}
}

// TestConfigRenameCommand: rename-command lines of the config file and of
// the command line reach the server's configuration in order; one that
// redis-server refuses stops the start, naming its line.
func TestConfigRenameCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.conf")
	if err := os.WriteFile(path, []byte("port 7000\nrename-command FLUSHDB wipe\nrename-command config \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, fc, err := loadSettings([]string{"--config", path, "--rename-command", "flushall", "wipeall"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []server.CommandRename{{From: "FLUSHDB", To: "wipe"}, {From: "config", To: ""}, {From: "flushall", To: "wipeall"}}
	if len(fc.renames) != len(want) {
		t.Fatalf("renames = %q, want %q", fc.renames, want)
	}
	for i := range want {
		if fc.renames[i] != want[i] {
			t.Errorf("rename %d = %q, want %q", i, fc.renames[i], want[i])
		}
	}
	for _, c := range []struct{ conf, err string }{
		{"rename-command nosuch x\n", "p.conf:1: No such command in rename-command"},
		{"port 1\nrename-command get x\nrename-command set x\n", "p.conf:3: Target command name already exists"},
		{"rename-command get\n", "p.conf:1: Bad directive or wrong number of arguments"},
	} {
		if err := os.WriteFile(path, []byte(c.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := loadSettings([]string{"--config", path}, io.Discard); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: err = %v, want %q", c.conf, err, c.err)
		}
	}
}

// TestConfigUsers: user lines of the file and the command line reach the
// server's configuration in order, quoted rules as one word; one that
// cannot apply stops the start, naming its line, as redis-server's
// "Error in user declaration" does.
func TestConfigUsers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.conf")
	if err := os.WriteFile(path, []byte("port 7000\nuser alice on \">a b\" ~app:* +@read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, _, fc, err := loadSettings([]string{"--config", path, "--user", "bob", "on", "nopass"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(fc.users); got != "[[alice on >a b ~app:* +@read] [bob on nopass]]" {
		t.Errorf("users = %s", got)
	}
	if cfg, _, err := buildConfig(set); err != nil || cfg.Port != 7000 {
		t.Fatalf("buildConfig: %v %v", cfg.Port, err)
	}
	for _, c := range []struct{ conf, err string }{
		{"port 1\nuser a on +nosuch\n", "p.conf:2: Error in user declaration: user a: Error in ACL SETUSER modifier '+nosuch'"},
		{"user a on\nuser a off\n", "p.conf:2: Error in user declaration: user a: Duplicate user found"},
		{"user\n", "p.conf:1: Bad directive or wrong number of arguments"},
	} {
		if err := os.WriteFile(path, []byte(c.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := loadSettings([]string{"--config", path}, io.Discard); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: err = %v, want %q", c.conf, err, c.err)
		}
	}
}

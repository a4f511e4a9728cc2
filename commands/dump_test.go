package commands

import (
	"strconv"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
)

// COMMAND INFO dump / restore as Redis 7.0.15 replies (the entry, without
// the outer *1).
func TestParseRestoreArgs(t *testing.T) {
	tests := []struct {
		args    string
		replace bool
		abs     bool
		err     string
	}{
		{"", false, false, ""},
		{"replace absttl", true, true, ""},
		{"REPLACE REPLACE", true, false, ""},
		{"idletime 10 freq 1", false, false, ErrSyntax},
		{"freq 1 idletime 10", false, false, ErrSyntax},
		{"idletime 10 idletime 20", false, false, ""},
		{"idletime -1", false, false, "ERR Invalid IDLETIME value, must be >= 0"},
		{"freq 256", false, false, "ERR Invalid FREQ value, must be >= 0 and <= 255"},
		{"freq -1", false, false, "ERR Invalid FREQ value, must be >= 0 and <= 255"},
		{"freq x", false, false, ErrNotInteger},
		{"idletime", false, false, ErrSyntax},
		{"absttl bogus", false, false, ErrSyntax},
	}
	for _, tc := range tests {
		var args [][]byte
		for _, a := range strings.Fields(tc.args) {
			args = append(args, []byte(a))
		}
		o, err := parseRestoreArgs(args)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%q: err %v, want %s", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.err == "" && (o.replace != tc.replace || o.absTTL != tc.abs):
			t.Errorf("%q: %+v", tc.args, o)
		}
	}
}

// TestDumpRestoreInProcess round-trips every type through DUMP and RESTORE
// in one keyspace, and checks the object type byte follows the key's
// encoding, including one that converted and shrank (Redis keeps it
// converted, and so does its DUMP).
func TestDumpRestoreInProcess(t *testing.T) {
	c := newKeyspaceClient(t)
	run := func(args ...string) string { t.Helper(); return cmdReply(t, c, args...) }
	ints := []string{"SADD", "shrunk"}
	for i := range 600 {
		ints = append(ints, strconv.Itoa(i))
	}
	run(ints...)
	rem := append([]string{"SREM", "shrunk"}, ints[7:]...)
	run(rem...)
	run("RPUSH", "list", "a", "1", "b")
	run("SADD", "intset", "3", "1", "2")
	run("HSET", "hash", "f", "v", "g", "12")
	run("ZADD", "zset", "1.5", "a", "2", "b")
	run("SET", "str", "12345")
	run("TR.SETBITS", "bm", "3", "99999")
	for _, p := range []struct {
		key  string
		typ  byte
		read []string
	}{
		{"list", 18, []string{"LRANGE", "", "0", "-1"}},
		{"intset", 11, []string{"SMEMBERS", ""}},
		{"shrunk", 2, []string{"SMEMBERS", ""}},
		{"hash", 16, []string{"HGETALL", ""}},
		{"zset", 17, []string{"ZRANGE", "", "0", "-1", "WITHSCORES"}},
		{"str", 0, []string{"GET", ""}},
		{"bm", 80, []string{"TR.RANGE", "", "0", "100000"}},
	} {
		reply := run("DUMP", p.key)
		head, payload, ok := strings.Cut(reply, "\r\n")
		if !ok || head[0] != '$' || len(payload) < 3 {
			t.Fatalf("DUMP %s: %q", p.key, reply)
		}
		payload = payload[:len(payload)-2]
		if payload[0] != p.typ {
			t.Errorf("DUMP %s: type %d, want %d", p.key, payload[0], p.typ)
		}
		if got := run("RESTORE", p.key, "0", payload); !strings.HasPrefix(got, "-BUSYKEY") {
			t.Errorf("RESTORE over %s: %q", p.key, got)
		}
		if got := run("RESTORE", "copy", "0", payload, "REPLACE"); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s: %q", p.key, got)
		}
		p.read[1] = p.key
		want := run(p.read...)
		p.read[1] = "copy"
		if got := run(p.read...); got != want {
			t.Errorf("%s restored as %q, want %q", p.key, got, want)
		}
	}
	// The shrunk set restores as an intset, as Redis loads it.
	run("RESTORE", "s2", "0", strings.TrimSuffix(strings.SplitN(run("DUMP", "shrunk"), "\r\n", 2)[1], "\r\n"))
	if got := run("OBJECT", "ENCODING", "s2"); got != "$6\r\nintset\r\n" {
		t.Errorf("restored shrunk set: encoding %q", got)
	}
	if got := run("DUMP", "missing"); got != "$-1\r\n" {
		t.Errorf("DUMP missing: %q", got)
	}
	// One lookup per DUMP in keyspace_hits/misses, as Redis counts.
	for _, key := range []string{"hash", "shrunk", "zset", "str", "missing"} {
		before := c.KS.Stats()
		c.KS.CountLookups(true) // as the server does around a read-only command
		run("DUMP", key)
		c.KS.CountLookups(false)
		after := c.KS.Stats()
		if hits, misses := after.KeyspaceHits-before.KeyspaceHits, after.KeyspaceMiss-before.KeyspaceMiss; hits+misses != 1 {
			t.Errorf("DUMP %s counted %d hits and %d misses", key, hits, misses)
		}
	}
}

// RESTORE's IDLETIME and FREQ set the restored key's access data for the
// policy in force, as redis-server 7.0.15 does (dump.tcl "RESTORE can set
// LRU" and "RESTORE can set LFU"): IDLETIME under an LRU policy, FREQ
// under an LFU one; the other is ignored.
func TestRestoreSetsAccess(t *testing.T) {
	c := newKeyspaceClient(t)
	run := func(args ...string) string { t.Helper(); return cmdReply(t, c, args...) }
	run("SET", "foo", "bar")
	reply := run("DUMP", "foo")
	_, payload, _ := strings.Cut(reply, "\r\n")
	payload = payload[:len(payload)-2]
	run("DEL", "foo")
	if got := run("RESTORE", "foo", "0", payload, "IDLETIME", "1000"); got != "+OK\r\n" {
		t.Fatalf("RESTORE IDLETIME: %q", got)
	}
	if got := run("OBJECT", "IDLETIME", "foo"); got != ":1000\r\n" && got != ":1001\r\n" {
		t.Fatalf("OBJECT IDLETIME after RESTORE IDLETIME 1000: %q", got)
	}
	keyspace.SetAccessPolicy(true, 10, 1)
	defer keyspace.SetAccessPolicy(false, 10, 1)
	for _, tc := range []struct {
		opt, val string
		want     int64
	}{
		{"FREQ", "100", 100},
		{"IDLETIME", "1000", 5}, // ignored under LFU: a new key's counter
	} {
		run("DEL", "foo")
		if got := run("RESTORE", "foo", "0", payload, tc.opt, tc.val); got != "+OK\r\n" {
			t.Fatalf("RESTORE %s: %q", tc.opt, got)
		}
		// OBJECT FREQ asks the server for the policy (this client has
		// none): the keyspace's counter is what it would answer.
		if got, ok := c.KS.AccessFrequency(c.DB, []byte("foo")); !ok || got != tc.want {
			t.Fatalf("access frequency after RESTORE %s %s: %d, want %d", tc.opt, tc.val, got, tc.want)
		}
	}
}

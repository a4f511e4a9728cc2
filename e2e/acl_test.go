package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/faultfs"
)

// mustDo sends one command and returns its reply rendered.
func mustDo(t *testing.T, c *respConn, args ...any) string {
	t.Helper()
	r, err := c.do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return r.String()
}

func dialOrFail(t *testing.T, addr string) *respConn {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

// aclLogFields renders ACL LOG's entries without age-seconds and with
// only the user= and cmd= fields of client-info, which differ between
// servers (ids, addresses, buffer sizes).
func aclLogFields(r reply) string {
	var b strings.Builder
	for _, e := range r.elems {
		for i := 0; i+1 < len(e.elems); i += 2 {
			k, v := e.elems[i].str, e.elems[i+1]
			switch k {
			case "age-seconds":
				continue
			case "client-info":
				for _, f := range strings.Fields(v.str) {
					if strings.HasPrefix(f, "user=") || strings.HasPrefix(f, "cmd=") {
						b.WriteString(f + " ")
					}
				}
				continue
			}
			b.WriteString(k + "=" + v.String() + " ")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestACLLogMatchesRedis makes the same denials on redis-server and on
// Persimmon and compares the ACL LOG entries: count (merging), reason,
// context, object, username, and the user and command of client-info.
func TestACLLogMatchesRedis(t *testing.T) {
	s := startServer(t, t.TempDir())
	var logs []string
	for _, addr := range []string{startRedis(t), s.Addr} {
		admin := dialOrFail(t, addr)
		mustDo(t, admin, "ACL", "SETUSER", "antirez", ">foo", "on", "+set", "~object:1234", "+eval", "+multi", "+exec", "resetchannels", "+publish")
		c := dialOrFail(t, addr)
		mustDo(t, c, "AUTH", "antirez", "foo")
		mustDo(t, c, "GET", "foo")
		mustDo(t, c, "GET", "foo")
		mustDo(t, c, "GET", "foo")
		mustDo(t, c, "SET", "somekeynotallowed", "1")
		mustDo(t, c, "PUBLISH", "somechannel", "m")
		mustDo(t, c, "MULTI")
		mustDo(t, c, "INCR", "foo")
		mustDo(t, c, "EXEC")
		mustDo(t, c, "EVAL", "redis.call('incr','foo')", "0")
		mustDo(t, c, "EVAL", "redis.call('set','zz','1')", "0")
		mustDo(t, c, "AUTH", "antirez", "wrong")
		mustDo(t, c, "AUTH", "nosuch", "wrong")
		mustDo(t, c, "HELLO", "2", "AUTH", "antirez", "bad")
		r, err := admin.do("ACL", "LOG")
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, aclLogFields(r))
		if got := mustDo(t, admin, "ACL", "LOG", "2"); strings.Count(got, "count") != 2 {
			t.Errorf("ACL LOG 2: %s", got)
		}
		mustDo(t, admin, "CONFIG", "SET", "acllog-max-len", "3")
		mustDo(t, c, "SET", "other", "1") // a new entry trims the log to 3
		if r, _ := admin.do("ACL", "LOG"); len(r.elems) != 3 {
			t.Errorf("acllog-max-len 3: %d entries", len(r.elems))
		}
		mustDo(t, admin, "ACL", "LOG", "RESET")
		mustDo(t, admin, "CONFIG", "SET", "acllog-max-len", "128")
		mustDo(t, admin, "ACL", "DELUSER", "antirez")
	}
	t.Logf("persimmon ACL LOG:\n%s", logs[1])
	if logs[0] != logs[1] {
		t.Errorf("ACL LOG\nredis:\n%s\npersimmon:\n%s", logs[0], logs[1])
	}
	if !strings.Contains(logs[1], "reason=\"auth\"") || !strings.Contains(logs[1], "count=:3") {
		t.Errorf("the log lacks the expected entries:\n%s", logs[1])
	}
}

// TestACLSurvivesKill: ACL changes acknowledged before a kill -9 of the
// server are all there after the restart, whatever was configured at start.
func TestACLSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	aclfile := filepath.Join(t.TempDir(), "users.acl")
	if err := os.WriteFile(aclfile, []byte("user bob on >bobpw ~* +@all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--aclfile", aclfile)
	c := dialOrFail(t, s.Addr)
	for _, cmd := range [][]any{
		{"ACL", "SETUSER", "alice", "on", ">pw", "~k*", "&ch", "+@read", "(+set ~w*)"},
		{"ACL", "SETUSER", "carol", "on", "nopass", "+get"},
		{"ACL", "DELUSER", "carol"},
		{"ACL", "SETUSER", "default", "resetpass", ">defpw"},
	} {
		if got := mustDo(t, c, cmd...); got != "+OK" && got != ":1" {
			t.Fatalf("%v: %s", cmd, got)
		}
	}
	want := mustDo(t, c, "ACL", "LIST")
	s.kill()

	s = startServer(t, dir, "--aclfile", aclfile)
	c = dialOrFail(t, s.Addr)
	if got := mustDo(t, c, "PING"); !strings.HasPrefix(got, "-NOAUTH") {
		t.Fatalf("the default user's password did not survive: PING = %s", got)
	}
	if got := mustDo(t, c, "AUTH", "defpw"); got != "+OK" {
		t.Fatalf("AUTH defpw: %s", got)
	}
	if got := mustDo(t, c, "ACL", "LIST"); got != want {
		t.Fatalf("after kill -9:\n got %s\nwant %s", got, want)
	}
	a := dialOrFail(t, s.Addr)
	if got := mustDo(t, a, "AUTH", "alice", "pw"); got != "+OK" {
		t.Fatalf("AUTH alice: %s", got)
	}
	if got := mustDo(t, a, "SET", "k1", "v"); !strings.HasPrefix(got, "-NOPERM") {
		t.Fatalf("alice's rules after restart: SET k1 = %s", got)
	}
	if got := mustDo(t, a, "SET", "w1", "v"); got != "+OK" {
		t.Fatalf("alice's selector after restart: SET w1 = %s", got)
	}
	// CONFIG SET requirepass is an ACL change too.
	mustDo(t, c, "CONFIG", "SET", "requirepass", "newpw")
	s.kill()
	s = startServer(t, dir, "--aclfile", aclfile)
	c = dialOrFail(t, s.Addr)
	if got := mustDo(t, c, "AUTH", "newpw"); got != "+OK" {
		t.Fatalf("requirepass after kill -9: %s", got)
	}
}

// TestACLFileStartup: a bad aclfile stops the start with Redis's text; ACL
// LOAD and ACL SAVE use the file; LOAD disconnects the replaced users.
func TestACLFileStartup(t *testing.T) {
	aclfile := filepath.Join(t.TempDir(), "users.acl")
	os.WriteFile(aclfile, []byte("user alice on +nosuch\n"), 0o644)
	if _, err := launchServer(t, t.TempDir(), "--aclfile", aclfile); err == nil ||
		!strings.Contains(err.Error(), "Aborting Redis startup because of ACL errors: "+aclfile+":1: Error in applying operation '+nosuch': Unknown command or category name in ACL.") {
		t.Fatalf("bad aclfile: %v", err)
	}
	os.WriteFile(aclfile, []byte("user alice on >a ~* +@all\n"), 0o644)
	s := startServer(t, t.TempDir(), "--aclfile", aclfile)
	c := dialOrFail(t, s.Addr)
	if got := mustDo(t, c, "CONFIG", "GET", "aclfile"); got != `*2["aclfile", "`+aclfile+`"]` {
		t.Fatalf("CONFIG GET aclfile: %s", got)
	}
	a := dialOrFail(t, s.Addr)
	mustDo(t, a, "AUTH", "alice", "a")
	mustDo(t, c, "ACL", "SETUSER", "eve", "on", ">e", "+get", "allkeys")
	if got := mustDo(t, c, "ACL", "SAVE"); got != "+OK" {
		t.Fatalf("ACL SAVE: %s", got)
	}
	b, _ := os.ReadFile(aclfile)
	if !strings.Contains(string(b), "user eve on #") || !strings.Contains(string(b), "user alice on #") {
		t.Fatalf("saved file:\n%s", b)
	}
	if got := mustDo(t, c, "ACL", "LOAD"); got != "+OK" {
		t.Fatalf("ACL LOAD: %s", got)
	}
	// alice was replaced by the load: her connection is closed.
	if _, err := a.do("PING"); err == nil {
		t.Fatal("a client of a replaced user survived ACL LOAD")
	}
	os.WriteFile(aclfile, []byte("user x on\nbad\n"), 0o644)
	if got := mustDo(t, c, "ACL", "LOAD"); got != `-ERR `+aclfile+`:2 should start with user keyword followed by the username. WARNING: ACL errors detected, no change to the previously active ACL rules was performed` {
		t.Fatalf("bad ACL LOAD: %s", got)
	}
}

// TestACLDisconnects: DELUSER closes the user's connections (its own after
// the reply); narrowing a user's channels closes its subscribers that lost
// a channel, and keeps the others; CLIENT LIST names the user.
func TestACLDisconnects(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := dialOrFail(t, s.Addr)
	mustDo(t, admin, "ACL", "SETUSER", "u", "on", "nopass", "+@all", "~*", "resetchannels", "&a", "&b:*", "&s1")
	c := dialOrFail(t, s.Addr)
	mustDo(t, c, "AUTH", "u", "x")
	if got := mustDo(t, admin, "CLIENT", "LIST"); !strings.Contains(got, " user=u ") || !strings.Contains(got, " user=default ") {
		t.Fatalf("CLIENT LIST: %s", got)
	}
	sub := dialOrFail(t, s.Addr)
	mustDo(t, sub, "AUTH", "u", "x")
	mustDo(t, sub, "SUBSCRIBE", "a")
	psub := dialOrFail(t, s.Addr)
	mustDo(t, psub, "AUTH", "u", "x")
	mustDo(t, psub, "PSUBSCRIBE", "b:*")
	// Shard channels count as channels (Redis 7.0's
	// ACLKillPubsubClientsIfNeeded checks pubsubshard_channels too).
	ssub := dialOrFail(t, s.Addr)
	mustDo(t, ssub, "AUTH", "u", "x")
	mustDo(t, ssub, "SSUBSCRIBE", "s1")
	skeep := dialOrFail(t, s.Addr)
	mustDo(t, skeep, "AUTH", "u", "x")
	mustDo(t, skeep, "SSUBSCRIBE", "a")
	mustDo(t, admin, "ACL", "SETUSER", "u", "resetchannels", "&a", "&c") // b:* and s1 are gone
	if _, err := psub.do("PING"); err == nil {
		t.Fatal("a subscriber to a revoked pattern survived")
	}
	if _, err := ssub.do("PING"); err == nil {
		t.Fatal("a shard subscriber to a revoked channel survived")
	}
	if got := mustDo(t, admin, "SPUBLISH", "a", "m"); got != ":1" {
		t.Fatalf("a shard subscriber that kept its channel: SPUBLISH = %s", got)
	}
	if got := mustDo(t, sub, "PING"); got != `*2["pong", ""]` {
		t.Fatalf("a subscriber that kept its channel: PING = %s", got)
	}
	if got := mustDo(t, c, "ACL", "DELUSER", "u"); got != ":1" {
		t.Fatalf("DELUSER: %s", got)
	}
	if _, err := c.do("PING"); err == nil {
		t.Fatal("the deleting client of its own user survived")
	}
	if _, err := sub.do("PING"); err == nil {
		t.Fatal("a client of a deleted user survived")
	}
	if got := mustDo(t, admin, "PING"); got != "+PONG" {
		t.Fatalf("admin: %s", got)
	}
}

// TestACLSurvivesPowerCut cuts the power (faultfs: what was not fsynced is
// dropped, or a random part of it kept, or its sectors torn) after ACL
// changes were acknowledged, in durability mode none, where the keyspace
// itself promises nothing across a power cut: the ACL state file does
// (fsync, rename, fsync of the directory), so every acknowledged change is
// there after the restart.
func TestACLSurvivesPowerCut(t *testing.T) {
	rig := newPowerCutRig(t, crashSeed(t))
	for round, mode := range []faultfs.CutMode{faultfs.DropAll, faultfs.KeepRandom, faultfs.TearSectors} {
		s := startServer(t, rig.dir, "--durability", "none")
		c := dialOrFail(t, s.Addr)
		for i := 0; i < 5; i++ {
			name := fmt.Sprintf("u%d-%d", round, i)
			if got := mustDo(t, c, "ACL", "SETUSER", name, "on", ">pw"+name, fmt.Sprintf("~k%d*", i), "+@read"); got != "+OK" {
				t.Fatalf("SETUSER: %s", got)
			}
		}
		if got := mustDo(t, c, "ACL", "DELUSER", fmt.Sprintf("u%d-0", round)); got != ":1" {
			t.Fatalf("DELUSER: %s", got)
		}
		want := mustDo(t, c, "ACL", "LIST")
		s.kill()
		if _, err := rig.fs.Cut(mode); err != nil {
			t.Fatal(err)
		}
		s = startServer(t, rig.dir, "--durability", "none")
		c = dialOrFail(t, s.Addr)
		if got := mustDo(t, c, "ACL", "LIST"); got != want {
			t.Fatalf("cut %d (%v): ACL LIST\n got %s\nwant %s", round, mode, got, want)
		}
		name := fmt.Sprintf("u%d-4", round)
		if got := mustDo(t, c, "AUTH", name, "pw"+name); got != "+OK" {
			t.Fatalf("cut %d: AUTH %s: %s", round, name, got)
		}
		s.kill()
	}
}

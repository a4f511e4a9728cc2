package server

import (
	"strings"
	"sync"
	"testing"

	"github.com/persimmon-db/persimmon/acl"
)

// Expected texts are redis-server 7.0.15's (e2e/testdata/diff/acl.txt
// compares many more side by side).
func TestACLWire(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	admin := dialWire(t, s)
	script(t, admin, [][2]string{
		{"acl setuser u on >p +ping +wrt +multi +exec", "+OK\r\n"},
		{"acl whoami", bulk("default")},
	})
	u := dialWire(t, s)
	script(t, u, [][2]string{
		{"auth u nope", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"auth u p", "+OK\r\n"},
		{"ping", "+PONG\r\n"},
		{"rd", "-NOPERM this user has no permissions to run the 'rd' command\r\n"},
		{"acl whoami", "-NOPERM this user has no permissions to run the 'acl|whoami' command\r\n"},
		{"wrt", ":1\r\n"},
		{"multi", "+OK\r\n"},
		{"rd", "-NOPERM this user has no permissions to run the 'rd' command\r\n"},
		{"exec", "-EXECABORT Transaction discarded because of previous errors.\r\n"},
	})
	if got := admin.do("client", "list"); !strings.Contains(got, " user=u ") || !strings.Contains(got, " user=default ") {
		t.Fatalf("CLIENT LIST: %q", got)
	}
	got := admin.do("acl", "log", "1")
	if !strings.Contains(got, "$7\r\ncontext\r\n$5\r\nmulti\r\n$6\r\nobject\r\n$2\r\nrd\r\n$8\r\nusername\r\n$1\r\nu\r\n") {
		t.Fatalf("ACL LOG 1: %q", got)
	}
	// Rules changed between MULTI and EXEC.
	script(t, u, [][2]string{{"multi", "+OK\r\n"}, {"wrt", "+QUEUED\r\n"}})
	script(t, admin, [][2]string{{"acl setuser u -wrt", "+OK\r\n"}})
	script(t, u, [][2]string{{"exec", "*1\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n"}})
	script(t, admin, [][2]string{{"acl deluser u", ":1\r\n"}})
	if _, err := u.r.ReadByte(); err == nil {
		t.Fatal("the connection of a deleted user is still open")
	}
}

// TestACLRulesChangeUnderLoad runs a user's commands while another client
// keeps changing the user's rules (with -race in make test): every reply is
// the command's or NOPERM, never anything torn.
func TestACLRulesChangeUnderLoad(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	admin := dialWire(t, s)
	script(t, admin, [][2]string{{"acl setuser u on nopass +ping", "+OK\r\n"}})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			op := "+ping"
			if i%2 == 0 {
				op = "-ping"
			}
			if got := admin.do("acl", "setuser", "u", op); got != "+OK\r\n" {
				t.Errorf("SETUSER: %q", got)
				return
			}
		}
	}()
	u := dialWire(t, s)
	script(t, u, [][2]string{{"auth u x", "+OK\r\n"}})
	for i := 0; i < 200; i++ {
		if got := u.do("ping"); got != "+PONG\r\n" && got != "-NOPERM this user has no permissions to run the 'ping' command\r\n" {
			t.Fatalf("PING under changing rules: %q", got)
		}
	}
	wg.Wait()
}

// BenchmarkCheckACL is the per-command cost of the ACL check for the
// default user (the unrestricted fast path), a user restricted in commands
// only (no keys to find) and a user with key patterns (the keys found from
// the key specs, then matched).
func BenchmarkCheckACL(b *testing.B) {
	table := newCommandTable(testFamilies)
	a := newACL(Config{}, table)
	set := table["set"]
	args := [][]byte{[]byte("SET"), []byte("session:12345"), []byte("v")}
	keys, _, err := a.store.SetUser("keys", []string{"on", "nopass", "+@all", "-@dangerous", "~user:*", "~session:*"})
	if err != nil {
		b.Fatal(err)
	}
	cmds, _, err := a.store.SetUser("cmds", []string{"on", "nopass", "+@all", "-@dangerous", "~*", "&*"})
	if err != nil {
		b.Fatal(err)
	}
	for _, u := range []struct {
		name string
		user *acl.User
	}{{"default", a.store.Default()}, {"commands-only", cmds}, {"key-patterns", keys}} {
		b.Run(u.name, func(b *testing.B) {
			c := &Client{Srv: &Server{acl: a}}
			c.setUser(u.user)
			b.ReportAllocs()
			for b.Loop() {
				if d, _ := c.checkACL(set, args, acl.ContextToplevel); !d.OK() {
					b.Fatal("denied")
				}
			}
		})
	}
}

package server

import (
	"errors"
	"github.com/persimmon-db/persimmon/proto"
	"slices"
	"strings"
	"testing"
	"time"
)

// script runs requests on one connection and checks each raw reply.
// Expected replies were recorded from Redis 7.0.15 unless noted.
func script(t *testing.T, w *wire, steps [][2]string) {
	t.Helper()
	for _, st := range steps {
		args, _, ok := proto.SplitInline([]byte(st[0]), nil, nil)
		if !ok {
			t.Fatalf("bad step %q", st[0])
		}
		strs := make([]string, len(args))
		for i, a := range args {
			strs[i] = string(a)
		}
		if got := w.do(strs...); got != st[1] {
			t.Errorf("%s: got %q, want %q", st[0], got, st[1])
		}
	}
}

func TestUnknownCommandError(t *testing.T) {
	a := func(s string) []byte { return []byte(s) }
	for _, tt := range []struct {
		args [][]byte
		want string
	}{
		{[][]byte{a("foo")}, "ERR unknown command 'foo', with args beginning with: "},
		{[][]byte{a("foo"), a("a"), a("b")}, "ERR unknown command 'foo', with args beginning with: 'a' 'b' "},
		{[][]byte{a("foo"), a(strings.Repeat("a", 200)), a("b")},
			"ERR unknown command 'foo', with args beginning with: '" + strings.Repeat("a", 128) + "' "},
		{[][]byte{a("foo"), a(strings.Repeat("a", 100)), a(strings.Repeat("b", 100)), a("c")},
			"ERR unknown command 'foo', with args beginning with: '" + strings.Repeat("a", 100) + "' '" + strings.Repeat("b", 25) + "' "},
		{[][]byte{a(strings.Repeat("x", 200))},
			"ERR unknown command '" + strings.Repeat("x", 128) + "', with args beginning with: "},
	} {
		if got := unknownCommandError(tt.args); got != tt.want {
			t.Errorf("unknownCommandError(%q)\n got %q\nwant %q", tt.args, got, tt.want)
		}
	}
}

func TestArityOK(t *testing.T) {
	for _, tt := range []struct {
		arity, n int
		want     bool
	}{
		{2, 2, true}, {2, 1, false}, {2, 3, false},
		{-2, 1, false}, {-2, 2, true}, {-2, 9, true},
		{-1, 1, true},
	} {
		if got := arityOK(tt.arity, tt.n); got != tt.want {
			t.Errorf("arityOK(%d, %d) = %v", tt.arity, tt.n, got)
		}
	}
}

func TestLookupIsCaseInsensitive(t *testing.T) {
	table := newCommandTable(testFamilies)
	for _, name := range []string{"ping", "PING", "PiNg"} {
		if cmd := lookupCommand(table, []byte(name)); cmd == nil || cmd.Name != "ping" {
			t.Errorf("lookup %q = %v", name, cmd)
		}
	}
	if cmd := lookupCommand(table, []byte(strings.Repeat("p", 40))); cmd != nil {
		t.Errorf("found a 40-byte name")
	}
}

func TestDispatchErrors(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	script(t, dialWire(t, s), [][2]string{
		{"nosuch a b", "-ERR unknown command 'nosuch', with args beginning with: 'a' 'b' \r\n"},
		{"echo", "-ERR wrong number of arguments for 'echo' command\r\n"},
		{"ECHO a b", "-ERR wrong number of arguments for 'echo' command\r\n"},
		{"ping a b", "-ERR wrong number of arguments for 'ping' command\r\n"},
		{"ping a", bulk("a")},
		{"client", "-ERR wrong number of arguments for 'client' command\r\n"},
		{"client foo", "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n"},
		{"Client Foo", "-ERR unknown subcommand 'Foo'. Try CLIENT HELP.\r\n"},
		{"client setname", "-ERR wrong number of arguments for 'client|setname' command\r\n"},
		{"config get", "-ERR wrong number of arguments for 'config|get' command\r\n"},
		{"select 100", "-ERR DB index is out of range\r\n"},
		{"select -1", "-ERR DB index is out of range\r\n"},
		{"select x", "-ERR value is not an integer or out of range\r\n"},
		{"select 15", "+OK\r\n"},
		{"boom", "-ERR boom\r\n"},
	})
}

func TestAuthFlow(t *testing.T) {
	s := startWire(t, Config{Requirepass: "s3cret"}, &fakeKS{})
	script(t, dialWire(t, s), [][2]string{
		// Lookup and arity come before authentication, as in Redis.
		{"foo a", "-ERR unknown command 'foo', with args beginning with: 'a' \r\n"},
		{"echo", "-ERR wrong number of arguments for 'echo' command\r\n"},
		{"ping", "-NOAUTH Authentication required.\r\n"},
		{"wrt", "-NOAUTH Authentication required.\r\n"},
		{"auth", "-ERR wrong number of arguments for 'auth' command\r\n"},
		{"auth x", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"auth default x", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"auth nobody s3cret", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"auth a b c", "-ERR syntax error\r\n"},
		{"hello 2", "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"},
		{"hello 2 auth default nope", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"auth s3cret", "+OK\r\n"},
		{"ping", "+PONG\r\n"},
	})
	// user:password in one argument (Persimmon extension), and HELLO AUTH.
	script(t, dialWire(t, s), [][2]string{
		{"auth default:s3cret", "+OK\r\n"},
		{"ping", "+PONG\r\n"},
	})
	script(t, dialWire(t, s), [][2]string{
		{"auth default s3cret", "+OK\r\n"},
		{"reset", "+RESET\r\n"},
		{"ping", "-NOAUTH Authentication required.\r\n"},
	})
	w := dialWire(t, s)
	got := w.do("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "app")
	if !strings.HasPrefix(got, "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:") ||
		!strings.HasSuffix(got, "$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n") {
		t.Fatalf("HELLO = %q", got)
	}
	script(t, w, [][2]string{{"client getname", bulk("app")}})
}

func TestAuthWithoutPassword(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	script(t, dialWire(t, s), [][2]string{
		{"auth x", "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"},
		{"auth default anything", "+OK\r\n"},
		{"auth someone x", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"hello 4", "-NOPROTO unsupported protocol version\r\n"},
		{"hello 0", "-NOPROTO unsupported protocol version\r\n"},
		{"hello 1", "-NOPROTO unsupported protocol version\r\n"},
		{"hello x", "-ERR Protocol version is not an integer or out of range\r\n"},
		{"hello 2 foo", "-ERR Syntax error in HELLO option 'foo'\r\n"},
		{"hello 2 auth a", "-ERR Syntax error in HELLO option 'auth'\r\n"},
		{`hello 2 setname "a b"`, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		// options act in order (Redis 7.0): the password before a later
		// syntax error, a name set before one stays
		{"hello 2 auth a b foo", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"hello 2 auth a b setname", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{`hello 2 setname "a b" auth a b`, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{"hello 2 setname abc foo", "-ERR Syntax error in HELLO option 'foo'\r\n"},
		{"client getname", bulk("abc")},
		// a refused HELLO 3 leaves the protocol alone; a HELLO without a
		// version keeps the one in use
		{"hello 3 auth someone x", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"hello 3 foo", "-ERR Syntax error in HELLO option 'foo'\r\n"},
		{"client getname", bulk("abc")},
		{"echo x", bulk("x")},
		{"hello 3 setname n3", "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"},
		{"client getname", bulk("n3")},
		{"hello", "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"},
		{"client getname", bulk("n3")},
		{"hello 2", "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"},
	})
}

func TestAuthUser(t *testing.T) {
	for _, tt := range []struct {
		requirepass, user, pass string
		want                    bool
	}{
		{"pw", "", "pw", true},
		{"pw", "", "nope", false},
		{"pw", "", "default:pw", true},
		{"pw", "", "other:pw", false},
		{"pw", "", "default:nope", false},
		{"a:b", "", "a:b", true}, // the whole string is the password
		{"b:c", "", "default:b:c", true},
		{"pw", "default", "pw", true},
		{"pw", "default", "nope", false},
		{"pw", "other", "pw", false},
		{"", "default", "anything", true},
		{"", "other", "anything", false},
	} {
		a := newACL(Config{Requirepass: tt.requirepass}, newCommandTable(testFamilies))
		if got := authUser(a.store, tt.user != "", tt.user, tt.pass) != nil; got != tt.want {
			t.Errorf("authUser(%q, %q, %q) = %v", tt.requirepass, tt.user, tt.pass, got)
		}
	}
	// AUTH "" x (and HELLO 3 AUTH "" x) names the user "", which does not
	// exist: WRONGPASS on redis-server 7.0.15 even while the default user
	// needs no password.
	for _, requirepass := range []string{"", "pw"} {
		a := newACL(Config{Requirepass: requirepass}, newCommandTable(testFamilies))
		for _, pass := range []string{"x", "", "pw"} {
			if authUser(a.store, true, "", pass) != nil {
				t.Errorf("requirepass %q: the user \"\" authenticated with %q", requirepass, pass)
			}
		}
	}
}

func TestMultiQueueingErrors(t *testing.T) {
	f := &fakeKS{}
	s := startWire(t, Config{}, f)
	script(t, dialWire(t, s), [][2]string{
		{"exec", "-ERR EXEC without MULTI\r\n"},
		{"discard", "-ERR DISCARD without MULTI\r\n"},
		{"multi", "+OK\r\n"},
		{"multi", "-ERR MULTI calls can not be nested\r\n"},
		{"watch a", "-ERR WATCH inside MULTI is not allowed\r\n"},
		{"wrt", "+QUEUED\r\n"},
		{"foo", "-ERR unknown command 'foo', with args beginning with: \r\n"},
		{"exec", "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{"multi", "+OK\r\n"},
		{"echo", "-ERR wrong number of arguments for 'echo' command\r\n"},
		{"exec", "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{"multi", "+OK\r\n"},
		{"shutdown", "-ERR Command not allowed inside a transaction\r\n"},
		{"ping", "+QUEUED\r\n"},
		{"exec", "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{"multi", "+OK\r\n"},
		{"wrt", "+QUEUED\r\n"},
		{"discard", "+OK\r\n"},
		{"exec", "-ERR EXEC without MULTI\r\n"},
	})
	if ev := f.events(); slices.Contains(ev, "begin") {
		t.Fatalf("an aborted transaction ran: %q", ev)
	}
}

func TestMultiExec(t *testing.T) {
	f := &fakeKS{waits: make(chan uint64, 16)}
	s := startWire(t, Config{}, f)
	w := dialWire(t, s)
	script(t, w, [][2]string{
		{"watch k1 k2", "+OK\r\n"},
		{"multi", "+OK\r\n"},
		{"wrt", "+QUEUED\r\n"},
		{"boom", "+QUEUED\r\n"},
		{"select 3", "+QUEUED\r\n"},
		{"rd", "+QUEUED\r\n"},
		{"wrt", "+QUEUED\r\n"},
		// A command's own error is one element; the rest still run, under
		// the lock EXEC holds (wrt and rd check it).
		{"exec", "*5\r\n:1\r\n-ERR boom\r\n+OK\r\n+READ\r\n:2\r\n"},
		{"rd", "+READ\r\n"},
	})
	want := []string{"watch 0 k1", "watch 0 k2", "begin", "end", "unwatch"}
	if got := f.events(); !slices.Equal(got, want) {
		t.Fatalf("keyspace events %q, want %q", got, want)
	}
	// The EXEC batch waited for the block's last write.
	var waited []uint64
	for len(f.waits) > 0 {
		waited = append(waited, <-f.waits)
	}
	if !slices.Contains(waited, 2) {
		t.Fatalf("waits %v: EXEC's replies did not wait for LSN 2", waited)
	}
	if got := w.do("CLIENT", "INFO"); !strings.Contains(got, " db=3 ") || !strings.Contains(got, " multi=-1 ") {
		t.Fatalf("CLIENT INFO after EXEC = %q", got)
	}
}

func TestExecCommitFailureIsAnError(t *testing.T) {
	f := &fakeKS{endErr: errors.New("MISCONF the arena is full")}
	s := startWire(t, Config{}, f)
	script(t, dialWire(t, s), [][2]string{
		{"multi", "+OK\r\n"},
		{"wrt", "+QUEUED\r\n"},
		{"exec", "-MISCONF the arena is full\r\n"},
		{"ping", "+PONG\r\n"},
	})
}

func TestDuplicateCommandPanics(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(error).Error(), `"dup" is registered twice`) {
			t.Fatalf("recover() = %v", r)
		}
	}()
	run := func(*Client, [][]byte) {}
	buildTable([]Command{{Name: "dup", Arity: 1, Run: run}, {Name: "dup", Arity: 1, Run: run}})
}

func TestMalformedEntryPanics(t *testing.T) {
	run := func(*Client, [][]byte) {}
	for _, cmd := range []Command{
		{Name: "Upper", Arity: 1, Run: run},
		{Name: "norun", Arity: 1},
		{Name: "a|b", Arity: 1, Run: run},
		{Name: "zero", Arity: 0, Run: run},
		{Name: "box", Arity: -2, Subcommands: []Command{{Name: "other|x", Arity: 2, Run: run}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("entry %q was accepted", cmd.Name)
				}
			}()
			buildTable([]Command{cmd})
		}()
	}
}

func TestCommandStats(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	script(t, w, [][2]string{
		{"config resetstat", "+OK\r\n"},
		{"ping", "+PONG\r\n"},
		{"ping", "+PONG\r\n"},
		{"boom", "-ERR boom\r\n"},
		{"echo", "-ERR wrong number of arguments for 'echo' command\r\n"},
		{"nosuch", "-ERR unknown command 'nosuch', with args beginning with: \r\n"},
	})
	w.do("client", "id")
	w.do("CLIENT", "ID")
	stats := w.do("INFO", "commandstats")
	for _, want := range []string{
		"cmdstat_ping:calls=2,usec=",
		"cmdstat_boom:calls=1,usec=",
		",rejected_calls=0,failed_calls=1\r\n",
		"cmdstat_echo:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0\r\n",
		"cmdstat_client|id:calls=2,",
	} {
		if !strings.Contains(stats, want) {
			t.Errorf("INFO commandstats lacks %q:\n%s", want, stats)
		}
	}
	if strings.Contains(stats, "nosuch") {
		t.Errorf("unknown command in commandstats:\n%s", stats)
	}
	info := w.do("INFO", "stats")
	if !strings.Contains(info, "total_error_replies:3\r\n") {
		t.Errorf("INFO stats: want total_error_replies:3:\n%s", info)
	}
}

// TestCommandTimeExcludesLockWait checks callNow's timing around the
// keyspace lock: a pipelined command that finds the lock taken (tryLock
// fails) starts its time once it holds the lock, so the wait is not
// charged to it, though the command before it in the batch ended just
// before (the chained start is only for a free lock). The wait is a real
// one of lockWait in env.lock: four commands would be charged 4×lockWait.
func TestCommandTimeExcludesLockWait(t *testing.T) {
	const lockWait = 25 * time.Millisecond
	for _, contended := range []bool{true, false} {
		f := &fakeKS{}
		env := f.env()
		lock := env.lock
		env.lock = func() { time.Sleep(lockWait); lock() } // a lock another goroutine held
		env.tryLock = func() bool {
			if contended {
				return false
			}
			lock()
			return true
		}
		table := newCommandTable(testFamilies)
		for name, cmd := range buildTable(testCmds(f)) {
			table[name] = cmd
		}
		s := newServer(Config{}, env, nil, table)
		c := newConn(s, discardConn{}, 1)
		c.rbuf = append(c.rbuf[:0], strings.Repeat(multibulk("rd"), 4)...)
		start := time.Now()
		if !c.processInput() {
			t.Fatal("connection closed")
		}
		elapsed := time.Since(start)
		st := table["rd"].stats
		calls, nanos := st.calls.Load(), time.Duration(st.nanos.Load())
		s.Close()
		if calls != 4 {
			t.Fatalf("contended=%v: rd counted %d calls, want 4", contended, calls)
		}
		// Contended, every command waits (lock); free, none does (each
		// takes it with tryLock, the batch's first too): either way the
		// commands' time is a small part of the batch's.
		waits := 4
		if !contended {
			waits = 0
		}
		if elapsed < time.Duration(waits)*lockWait {
			t.Fatalf("contended=%v: the batch took %v, less than its %d lock waits", contended, elapsed, waits)
		}
		if nanos >= lockWait {
			t.Errorf("contended=%v: rd charged %v for 4 calls, a lock wait (%v) or more", contended, nanos, lockWait)
		}
	}
}

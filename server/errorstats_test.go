package server

import (
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/pmem"
)

// Error statistics as Redis 7.0 counts them (the cases of Redis's
// tests/unit/info.tcl and the "Consistent eval error reporting" test of
// tests/unit/scripting.tcl), over a real keyspace and TCP.

// dialAddr is a raw client on addr.

// infoLine returns the value of field in INFO section ("" if absent).
func infoLine(w *wire, section, field string) string {
	w.t.Helper()
	raw := w.do("INFO", section)
	for _, l := range strings.Split(raw, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

func errorstat(w *wire, prefix string) string { return infoLine(w, "errorstats", "errorstat_"+prefix) }
func cmdstat(w *wire, name string) string     { return infoLine(w, "commandstats", "cmdstat_"+name) }

// wantCmdstat checks the calls, rejected_calls and failed_calls of name.
func wantCmdstat(t *testing.T, w *wire, name, calls, rejected, failed string) {
	t.Helper()
	got := cmdstat(w, name)
	if !strings.HasPrefix(got, "calls="+calls+",") || !strings.HasSuffix(got, ",rejected_calls="+rejected+",failed_calls="+failed) {
		t.Errorf("cmdstat_%s = %q, want calls=%s rejected_calls=%s failed_calls=%s", name, got, calls, rejected, failed)
	}
}

func wantInfo(t *testing.T, got, want, what string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func TestErrorstatsAsRedis(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	w := dialAddr(t, s.addr)
	reset := func() {
		t.Helper()
		if r := w.do("CONFIG", "RESETSTAT"); r != "+OK\r\n" {
			t.Fatalf("CONFIG RESETSTAT: %q", r)
		}
		wantInfo(t, infoLine(w, "stats", "total_error_replies"), "0", "total_error_replies after RESETSTAT")
		wantInfo(t, errorstat(w, "ERR"), "", "errorstat_ERR after RESETSTAT")
	}
	total := func(want string) {
		t.Helper()
		wantInfo(t, infoLine(w, "stats", "total_error_replies"), want, "total_error_replies")
	}

	t.Run("failed AUTH", func(t *testing.T) {
		reset()
		if r := w.do("AUTH", "k"); !strings.HasPrefix(r, "-ERR AUTH") {
			t.Fatalf("AUTH k: %q", r)
		}
		wantInfo(t, errorstat(w, "ERR"), "count=1", "errorstat_ERR")
		wantCmdstat(t, w, "auth", "1", "0", "1")
		total("1")
	})

	// A container without its subcommand is looked up before the arity
	// check refuses it (Redis's lookupCommand returns the container), so
	// it is a rejected call of the container and CLIENT LIST names it;
	// an unknown subcommand resolves to no command and counts nowhere.
	t.Run("container without subcommand", func(t *testing.T) {
		reset()
		if r := w.do("CLIENT"); r != "-ERR wrong number of arguments for 'client' command\r\n" {
			t.Fatalf("CLIENT: %q", r)
		}
		w.do("CLIENT", "NOSUCH")
		w.do("XGROUP")
		wantCmdstat(t, w, "client", "0", "1", "0")
		wantCmdstat(t, w, "xgroup", "0", "1", "0")
		wantInfo(t, errorstat(w, "ERR"), "count=3", "errorstat_ERR")
		other := dialAddr(t, s.addr)
		other.do("CONFIG")
		if l := w.do("CLIENT", "LIST"); !strings.Contains(l, " cmd=config ") {
			t.Errorf("CLIENT LIST after a bare CONFIG on the other connection: %q", l)
		}
	})

	t.Run("failed call inside MULTI/EXEC", func(t *testing.T) {
		reset()
		w.do("MULTI")
		w.do("SET", "a", "b")
		w.do("AUTH", "a")
		if r := w.do("EXEC"); !strings.Contains(r, "-ERR AUTH") {
			t.Fatalf("EXEC: %q", r)
		}
		wantInfo(t, errorstat(w, "ERR"), "count=1", "errorstat_ERR")
		wantCmdstat(t, w, "set", "1", "0", "0")
		wantCmdstat(t, w, "auth", "1", "0", "1")
		wantCmdstat(t, w, "exec", "1", "0", "0") // the error was AUTH's
		total("1")
		if r := w.do("EXEC"); r != "-ERR EXEC without MULTI\r\n" {
			t.Fatalf("EXEC: %q", r)
		}
		wantCmdstat(t, w, "exec", "2", "0", "1")
		wantInfo(t, errorstat(w, "ERR"), "count=2", "errorstat_ERR")
		total("2")
	})

	t.Run("rejected inside MULTI, EXECABORT", func(t *testing.T) {
		reset()
		w.do("MULTI")
		if r := w.do("SET"); r != "-ERR wrong number of arguments for 'set' command\r\n" {
			t.Fatalf("SET: %q", r)
		}
		if r := w.do("EXEC"); !strings.HasPrefix(r, "-EXECABORT") {
			t.Fatalf("EXEC: %q", r)
		}
		wantInfo(t, errorstat(w, "ERR"), "count=1", "errorstat_ERR")
		wantInfo(t, errorstat(w, "EXECABORT"), "count=1", "errorstat_EXECABORT")
		wantCmdstat(t, w, "set", "0", "1", "0")
		wantCmdstat(t, w, "multi", "1", "0", "0")
		wantCmdstat(t, w, "exec", "1", "0", "1")
		total("2")
	})

	t.Run("unknown command and wrong arity", func(t *testing.T) {
		reset()
		w.do("ASDF")
		wantInfo(t, errorstat(w, "ERR"), "count=1", "errorstat_ERR")
		w.do("SET", "k")
		w.do("SET", "k1", "v1")
		w.do("SET", "k2", "v2")
		wantCmdstat(t, w, "set", "2", "1", "0")
		wantInfo(t, errorstat(w, "ERR"), "count=2", "errorstat_ERR")
		total("2")
	})

	t.Run("NOSCRIPT and NOGROUP", func(t *testing.T) {
		reset()
		if r := w.do("EVALSHA", "NotValidShaSUM", "0"); !strings.HasPrefix(r, "-NOSCRIPT") {
			t.Fatalf("EVALSHA: %q", r)
		}
		wantInfo(t, errorstat(w, "NOSCRIPT"), "count=1", "errorstat_NOSCRIPT")
		wantCmdstat(t, w, "evalsha", "1", "0", "1")
		w.do("DEL", "mystream")
		w.do("XADD", "mystream", "*", "f", "v")
		if r := w.do("XGROUP", "CREATECONSUMER", "mystream", "mygroup", "consumer"); !strings.HasPrefix(r, "-NOGROUP") {
			t.Fatalf("XGROUP CREATECONSUMER: %q", r)
		}
		wantInfo(t, errorstat(w, "NOGROUP"), "count=1", "errorstat_NOGROUP")
		wantCmdstat(t, w, "xgroup|createconsumer", "1", "0", "1")
		total("2")
	})

	t.Run("NOPERM", func(t *testing.T) {
		reset()
		w.do("ACL", "SETUSER", "alice", "on", ">p1pp0", "~cached:*", "+get", "+info", "+config")
		w.do("AUTH", "alice", "p1pp0")
		if r := w.do("SET", "a", "b"); !strings.HasPrefix(r, "-NOPERM") {
			t.Fatalf("SET as alice: %q", r)
		}
		wantInfo(t, errorstat(w, "NOPERM"), "count=1", "errorstat_NOPERM")
		wantCmdstat(t, w, "set", "0", "1", "0")
		total("1")
		w.do("AUTH", "default", "")
	})

	t.Run("scripts", func(t *testing.T) {
		reset()
		// redis.pcall's error counts once, in the command it called; the
		// script that caught it did not fail.
		w.do("EVAL", "redis.pcall('XGROUP', 'CREATECONSUMER', 's1', 'mygroup', 'consumer') return", "0")
		wantInfo(t, errorstat(w, "ERR"), "count=1", "errorstat_ERR")
		wantCmdstat(t, w, "xgroup|createconsumer", "1", "0", "1")
		wantCmdstat(t, w, "eval", "1", "0", "0")
		w.do("EVAL", "a")
		wantCmdstat(t, w, "eval", "1", "1", "0")
		wantInfo(t, errorstat(w, "ERR"), "count=2", "errorstat_ERR")
		total("2")

		// redis.call raising: counted once, both failed.
		reset()
		if r := w.do("EVAL", "return redis.call('select',99)", "0"); !strings.HasPrefix(r, "-ERR DB index is out of range") {
			t.Fatalf("EVAL select 99: %q", r)
		}
		wantInfo(t, errorstat(w, "ERR"), "count=1", "errorstat_ERR")
		wantCmdstat(t, w, "select", "1", "0", "1")
		wantCmdstat(t, w, "eval", "1", "0", "1")
		total("1")

		// Returning redis.pcall's error table: the same.
		reset()
		if r := w.do("EVAL", "return redis.pcall('select',99)", "0"); !strings.HasPrefix(r, "-ERR DB index is out of range") {
			t.Fatalf("EVAL return pcall: %q", r)
		}
		wantCmdstat(t, w, "eval", "1", "0", "1")
		total("1")

		// A write in a read-only script is a rejected call of the write.
		reset()
		if r := w.do("EVAL_RO", "return redis.call('set','x','y')", "1", "x"); !strings.HasPrefix(r, "-ERR Write commands are not allowed from read-only scripts") {
			t.Fatalf("EVAL_RO set: %q", r)
		}
		wantInfo(t, errorstat(w, "ERR"), "count=1", "errorstat_ERR")
		wantCmdstat(t, w, "set", "0", "1", "0")
		wantCmdstat(t, w, "eval_ro", "1", "0", "1")
		total("1")

		reset()
		w.do("SET", "Sicily", "1")
		if r := w.do("EVAL", "return redis.call('GEOADD', 'Sicily', '13.361389', '38.115556', 'Palermo')", "1", "x"); !strings.HasPrefix(r, "-WRONGTYPE") {
			t.Fatalf("EVAL geoadd: %q", r)
		}
		wantInfo(t, errorstat(w, "WRONGTYPE"), "count=1", "errorstat_WRONGTYPE")
		wantCmdstat(t, w, "geoadd", "1", "0", "1")
		wantCmdstat(t, w, "eval", "1", "0", "1")
		total("1")

		// redis.error_reply is the script's own error: counted as it is
		// sent, under its own prefix.
		reset()
		if r := w.do("EVAL", "return redis.error_reply('MY:CODE went wrong')", "0"); r != "-MY:CODE went wrong\r\n" {
			t.Fatalf("EVAL error_reply: %q", r)
		}
		wantInfo(t, errorstat(w, "MY_CODE"), "count=1", "errorstat_MY_CODE (':' made safe)")
		wantCmdstat(t, w, "eval", "1", "0", "1")
		total("1")
	})

	t.Run("blocked command unblocked with an error", func(t *testing.T) {
		reset()
		b := dialAddr(t, s.addr)
		id := strings.TrimSuffix(strings.TrimPrefix(b.do("CLIENT", "ID"), ":"), "\r\n")
		b.send(multibulk("BLPOP", "list1{t}", "0"))
		deadline := time.Now().Add(10 * time.Second)
		for infoLine(w, "clients", "blocked_clients") != "1" {
			if time.Now().After(deadline) {
				t.Fatal("BLPOP never blocked")
			}
			time.Sleep(5 * time.Millisecond) // polling the server's state, as Redis's wait_for_blocked_client
		}
		if r := w.do("CLIENT", "UNBLOCK", id, "ERROR"); r != ":1\r\n" {
			t.Fatalf("CLIENT UNBLOCK: %q", r)
		}
		if r := b.reply(); !strings.HasPrefix(r, "-UNBLOCKED") {
			t.Fatalf("BLPOP: %q", r)
		}
		b.do("PING") // the blocked connection's statistics are in
		wantInfo(t, errorstat(w, "UNBLOCKED"), "count=1", "errorstat_UNBLOCKED")
		wantCmdstat(t, w, "blpop", "1", "0", "1")
		total("1")
	})

	t.Run("RESETSTAT and the default sections", func(t *testing.T) {
		w.do("ASDF")
		if all := w.do("INFO"); !strings.Contains(all, "# Errorstats\r\nerrorstat_") {
			t.Errorf("INFO (default) lacks errorstats:\n%s", all)
		}
		reset()
		if all := w.do("INFO", "everything"); !strings.Contains(all, "# Errorstats\r\n\r\n") {
			t.Errorf("errorstats not empty after RESETSTAT:\n%s", all)
		}
	})
}

func TestErrorPrefix(t *testing.T) {
	for _, tt := range []struct{ msg, want string }{
		{"ERR syntax error", "ERR"},
		{"WRONGTYPE Operation against a key", "WRONGTYPE"},
		{"NOSCRIPT No matching script.", "NOSCRIPT"},
		{"nospace", "ERR"},
		{strings.Repeat("A", 31) + " x", "ERR"}, // the space is past Redis's 32 bytes of "-msg"
		{strings.Repeat("A", 30) + " x", strings.Repeat("A", 30)},
		{"", "ERR"},
	} {
		if got := errorPrefix(tt.msg); got != tt.want {
			t.Errorf("errorPrefix(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
	var e errorStats
	for i := range maxErrorPrefixes + 10 {
		e.add(strings.Repeat("X", i%30+1) + string(rune('a'+i/30)) + " m")
	}
	if n := len(e.snapshot()); n != maxErrorPrefixes {
		t.Fatalf("%d prefixes kept, want the bound %d", n, maxErrorPrefixes)
	}
}

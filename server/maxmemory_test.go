package server

import (
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// Over maxmemory with nothing it may evict the server answers as Redis
// 7.0.15 does (every reply recorded from redis-server with maxmemory 1 and
// a volatile policy but no key with an expiry, which is noeviction's
// behaviour).
func TestMaxmemoryRefusesWrites(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	w, w2 := dialAddr(t, s.addr), dialAddr(t, s.addr)
	const oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
	lib := "#!lua name=lib\nredis.register_function('f', function(k) return redis.call('set', k[1], 1) end)\n" +
		"redis.register_function{function_name='g', callback=function(k) return redis.call('set', k[1], 1) end, flags={'allow-oom'}}\n" +
		"redis.register_function{function_name='h', callback=function(k) return 2 end, flags={'no-writes'}}"
	steps := []struct {
		args []string
		want string // a leading '~' matches a prefix
	}{
		{[]string{"SET", "x", "123"}, "+OK\r\n"},
		{[]string{"FUNCTION", "LOAD", lib}, "$3\r\nlib\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory-policy", "volatile-lru"}, "+OK\r\n"}, // no key has an expiry: nothing to evict
		{[]string{"CONFIG", "SET", "maxmemory", "1"}, "+OK\r\n"},
		{[]string{"SET", "y", "1"}, oom},
		{[]string{"INCR", "x"}, oom},
		{[]string{"LPUSH", "l", "a"}, oom},
		{[]string{"GET", "x"}, "$3\r\n123\r\n"},
		{[]string{"EXISTS", "x"}, ":1\r\n"},
		// no shebang: the script runs, its first denyoom call fails
		{[]string{"EVAL", "redis.call('set','x',1) return 1", "1", "x"}, "~-OOM command not allowed when used memory > 'maxmemory'. script: "},
		{[]string{"EVAL", "local t = redis.pcall('set','x','y') return t['err']", "1", "x"}, "$55\r\nOOM command not allowed when used memory > 'maxmemory'.\r\n"},
		{[]string{"EVAL", "return redis.call('get','x')", "1", "x"}, "$3\r\n123\r\n"},
		{[]string{"EVAL_RO", "return redis.call('get','x')", "1", "x"}, "$3\r\n123\r\n"},
		// a shebang: refused unless allow-oom or no-writes
		{[]string{"EVAL", "#!lua flags=\nreturn 1", "0"}, oom},
		{[]string{"EVAL", "#!lua flags=allow-oom\nredis.call('set','x',1) return 1", "1", "x"}, ":1\r\n"},
		{[]string{"EVAL", "#!lua flags=no-writes\nredis.call('get','x') return 1", "0"}, ":1\r\n"},
		{[]string{"FCALL", "f", "1", "x"}, oom},
		{[]string{"FCALL", "g", "1", "x"}, "+OK\r\n"},
		{[]string{"FCALL", "h", "1", "x"}, ":2\r\n"},
		// MULTI: every queued command is refused, which dooms EXEC
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"GET", "x"}, oom},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{[]string{"DEL", "x"}, ":1\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "0"}, "+OK\r\n"},
		{[]string{"SET", "y", "1"}, "+OK\r\n"},
		// EXEC of a queued denyoom command, after memory ran over
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"SET", "a", "1"}, "+QUEUED\r\n"},
		{[]string{"EVAL", "#!lua\nreturn 1", "0"}, "+QUEUED\r\n"},
		{[]string{"2", "CONFIG", "SET", "maxmemory", "1"}, "+OK\r\n"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n"},
		{[]string{"EXISTS", "a"}, ":0\r\n"},
		{[]string{"2", "CONFIG", "SET", "maxmemory", "0"}, "+OK\r\n"},
		// reads only: EXEC runs
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"EXISTS", "y"}, "+QUEUED\r\n"},
		{[]string{"2", "CONFIG", "SET", "maxmemory", "1"}, "+OK\r\n"},
		{[]string{"EXEC"}, "*1\r\n:1\r\n"},
		{[]string{"2", "CONFIG", "SET", "maxmemory", "0"}, "+OK\r\n"},
	}
	for _, st := range steps {
		c, args := w, st.args
		if args[0] == "2" {
			c, args = w2, args[1:]
		}
		got := c.do(args...)
		if p, ok := strings.CutPrefix(st.want, "~"); ok && strings.HasPrefix(got, p) || got == st.want {
			continue
		}
		t.Fatalf("%q:\n got %q\nwant %q", args, got, st.want)
	}
	// A refused script counts as a rejected call, as Redis's processCommand
	// refuses it; the script whose call failed as a failed one.
	w.do("CONFIG", "RESETSTAT")
	w.do("CONFIG", "SET", "maxmemory", "1")
	w.do("EVAL", "#!lua\nreturn 1", "0")
	w.do("EVAL", "return redis.call('set','x','y')", "1", "x")
	w.do("CONFIG", "SET", "maxmemory", "0")
	stats := w.do("INFO", "commandstats")
	for _, want := range []string{"cmdstat_eval:calls=1,", "rejected_calls=1,failed_calls=1", "cmdstat_set:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0"} {
		if !strings.Contains(stats, want) {
			t.Errorf("INFO commandstats lacks %q:\n%s", want, stats)
		}
	}
}

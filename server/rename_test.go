package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestRenameCommand: rename-command serves a command under its new name
// only, or not at all for "", as redis-server 7.0.15 does with
// --rename-command echo say --rename-command config "" (replies checked
// side by side): the old name is an unknown command, COMMAND INFO of the
// new name describes the command under its own name, COMMAND COUNT drops
// the removed one, ACL rules still name the command as it is, and INFO
// commandstats counts the calls under its own name.
func TestRenameCommand(t *testing.T) {
	plain := dialWire(t, startWire(t, Config{}, &fakeKS{}))
	s := startWire(t, Config{RenameCommands: []CommandRename{{"ECHO", "say"}, {"config", ""}}}, &fakeKS{})
	w := dialWire(t, s)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"echo", "x"}, "-ERR unknown command 'echo', with args beginning with: 'x' \r\n"},
		{[]string{"SAY", "x"}, "$1\r\nx\r\n"},
		{[]string{"config", "get", "port"}, "-ERR unknown command 'config', with args beginning with: 'get' 'port' \r\n"},
		{[]string{"command", "info", "echo"}, "*1\r\n$-1\r\n"},
		{[]string{"acl", "setuser", "u", "+say"}, "-ERR Error in ACL SETUSER modifier '+say': Unknown command or category name in ACL\r\n"},
		{[]string{"acl", "setuser", "u", "+echo"}, "+OK\r\n"},
		{[]string{"acl", "dryrun", "u", "say", "x"}, "+OK\r\n"},
		// A script calls by the new name; the old one is unknown even
		// right after the new one was called (a one-entry lookup cache
		// once answered it).
		{[]string{"eval", "return redis.call('say', 'x')", "0"}, "$1\r\nx\r\n"},
		{[]string{"eval", "return redis.call('echo', 'x')", "0"}, "-ERR Unknown Redis command called from script script: c7848912f5b8aa62347b829c6173cfffa5f76531, on @user_script:1.\r\n"},
	} {
		if got := w.do(c.args...); got != c.want {
			t.Errorf("%q = %q, want %q", c.args, got, c.want)
		}
	}
	info := w.do("command", "info", "say")
	if want := plain.do("command", "info", "echo"); info != want {
		t.Errorf("COMMAND INFO say = %q, want ECHO's entry %q", info, want)
	}
	count, plainCount := w.do("command", "count"), plain.do("command", "count")
	var n, pn int
	if _, err := fmtSscan(count, &n); err != nil {
		t.Fatal(err)
	}
	if _, err := fmtSscan(plainCount, &pn); err != nil {
		t.Fatal(err)
	}
	if n != pn-1 {
		t.Errorf("COMMAND COUNT = %d, want %d (one removed, one renamed)", n, pn-1)
	}
	stats := w.do("info", "commandstats")
	if !strings.Contains(stats, "cmdstat_echo:calls=2,") || strings.Contains(stats, "cmdstat_say") {
		t.Errorf("INFO commandstats after a SAY and a script's: %q, want the call under cmdstat_echo", stats)
	}
}

// TestCheckCommandRenames: the renames redis-server refuses at start-up,
// with its error texts.
func TestCheckCommandRenames(t *testing.T) {
	for _, c := range []struct {
		renames []CommandRename
		at      int
		err     string
	}{
		{[]CommandRename{{"flushdb", "wipe"}, {"config", ""}}, -1, ""},
		{[]CommandRename{{"nosuch", "x"}}, 0, "No such command in rename-command"},
		{[]CommandRename{{"echo", "x"}, {"echo", "y"}}, 1, "No such command in rename-command"},
		{[]CommandRename{{"echo", "PING"}}, 0, "Target command name already exists"},
		{[]CommandRename{{"config|get", "x"}}, 0, "No such command in rename-command"},
	} {
		at, err := CheckCommandRenames(testFamilies, c.renames)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if at != c.at || msg != c.err {
			t.Errorf("%v: %d, %q; want %d, %q", c.renames, at, msg, c.at, c.err)
		}
	}
}

// fmtSscan reads the integer of a ":n\r\n" reply.
func fmtSscan(reply string, n *int) (int, error) {
	return fmt.Sscanf(reply, ":%d\r\n", n)
}

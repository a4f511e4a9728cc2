package resp

import (
	"strconv"
	"strings"
	"testing"
)

func TestCommandInfoShape(t *testing.T) {
	table := newCommandTable()
	// Recorded from Redis 7.0.15: COMMAND INFO echo.
	want := "*10\r\n$4\r\necho\r\n:2\r\n*3\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n" +
		"*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n"
	if got := string(appendCommandInfo(nil, table["echo"])); got != want {
		t.Errorf("COMMAND INFO echo:\n got %q\nwant %q", got, want)
	}
	// A keyed command: one key spec built from first/last/step (MSET-like).
	run := func(*Client, [][]byte) {}
	mset := &Command{Name: "mset", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Run: run}
	want = "*10\r\n$4\r\nmset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:-1\r\n:2\r\n" +
		"*3\r\n+@write\r\n+@string\r\n+@slow\r\n*0\r\n" +
		"*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+update\r\n" +
		"$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:2\r\n$5\r\nlimit\r\n:0\r\n" +
		"*0\r\n"
	if got := string(appendCommandInfo(nil, mset)); got != want {
		t.Errorf("COMMAND INFO mset:\n got %q\nwant %q", got, want)
	}
	// A container lists its subcommands as full entries.
	got := string(appendCommandInfo(nil, table["config"]))
	if !strings.HasPrefix(got, "*10\r\n$6\r\nconfig\r\n:-2\r\n*0\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*0\r\n*0\r\n*4\r\n*10\r\n$10\r\nconfig|get\r\n:-3\r\n") {
		t.Errorf("COMMAND INFO config = %q", got)
	}
}

func TestCommandCommands(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	script(t, w, [][2]string{
		{"command count", ":" + strconv.Itoa(len(s.table)) + "\r\n"},
		{"command info nosuch", "*1\r\n$-1\r\n"},
		{"command getkeys wrt", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"command getkeys nosuch a", "-ERR Invalid command specified\r\n"},
		{"command getkeys ping x", "-ERR The command has no key arguments\r\n"},
		{"command getkeys watch a b c", "*3\r\n" + bulk("a") + bulk("b") + bulk("c")},
		{"command foo", "-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n"},
		{"command list filterby pattern client|s*", "*2\r\n" + bulk("client|setname") + bulk("client|setinfo")},
		{"command docs nosuch", "*0\r\n"},
		{"command docs ping", "*2\r\n" + bulk("ping") + "*6\r\n" + bulk("summary") + bulk("Returns the server's liveliness response.") +
			bulk("since") + bulk("1.0.0") + bulk("group") + bulk("connection")},
	})
	all := w.do("COMMAND")
	if !strings.HasPrefix(all, "*"+strconv.Itoa(len(s.table))+"\r\n") {
		t.Fatalf("COMMAND has the wrong count: %.40q", all)
	}
	info := w.do("COMMAND", "INFO", "CLIENT|LIST", "get")
	if !strings.HasPrefix(info, "*2\r\n*10\r\n$11\r\nclient|list\r\n") {
		t.Fatalf("COMMAND INFO client|list = %.60q", info)
	}
}

package server

import (
	"fmt"
	"github.com/persimmon-db/persimmon/proto"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCommandInfoShape(t *testing.T) {
	table := newCommandTable(testFamilies)
	// Recorded from Redis 7.0.15: COMMAND INFO echo.
	want := "*10\r\n$4\r\necho\r\n:2\r\n*3\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n" +
		"*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n"
	if got := string(commandInfoRESP2(table["echo"])); got != want {
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
	if got := string(commandInfoRESP2(mset)); got != want {
		t.Errorf("COMMAND INFO mset:\n got %q\nwant %q", got, want)
	}
	// A container lists its subcommands as full entries.
	got := string(commandInfoRESP2(table["config"]))
	if !strings.HasPrefix(got, "*10\r\n$6\r\nconfig\r\n:-2\r\n*0\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*0\r\n*0\r\n*5\r\n*10\r\n$10\r\nconfig|get\r\n:-3\r\n") {
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
		// Redis 7.0.15's bytes: its docs come from server/commanddocs.json
		{"command docs ping", "*2\r\n$4\r\nping\r\n*10\r\n$7\r\nsummary\r\n$15\r\nPing the server\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n" +
			"$5\r\ngroup\r\n$10\r\nconnection\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$7\r\nmessage\r\n" +
			"$4\r\ntype\r\n$6\r\nstring\r\n$5\r\nflags\r\n*1\r\n+optional\r\n"},
		{"command docs getset", "*2\r\n$6\r\ngetset\r\n*16\r\n$7\r\nsummary\r\n$54\r\nSet the string value of a key and return its old value\r\n" +
			"$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\ndoc_flags\r\n*1\r\n+deprecated\r\n" +
			"$16\r\ndeprecated_since\r\n$5\r\n6.2.0\r\n$11\r\nreplaced_by\r\n$30\r\n`SET` with the `!GET` argument\r\n$9\r\narguments\r\n*2\r\n" +
			"*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n*4\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n"},
		// a command Redis 7.0 does not have: the table's summary, since, group
		{"command docs waitaof", "*2\r\n" + bulk("waitaof") + "*6\r\n" + bulk("summary") + bulk("Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas.") +
			bulk("since") + bulk("7.2.0") + bulk("group") + bulk("generic")},
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

// recordedCommandInfo is COMMAND INFO <name> of Redis 7.0.15 (the one
// entry, without the outer *1), for commands whose key specs are not a
// single plain range: numkeys, two specs, notes, variable flags, tips.
var recordedCommandInfo = map[string]string{
	"zunionstore":             "*10\r\n$11\r\nzunionstore\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@sortedset\r\n+@slow\r\n*0\r\n*2\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"zinterstore":             "*10\r\n$11\r\nzinterstore\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@sortedset\r\n+@slow\r\n*0\r\n*2\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"zdiffstore":              "*10\r\n$10\r\nzdiffstore\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@sortedset\r\n+@slow\r\n*0\r\n*2\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"zunion":                  "*10\r\n$6\r\nzunion\r\n:-3\r\n*2\r\n+readonly\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@read\r\n+@sortedset\r\n+@slow\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"zinter":                  "*10\r\n$6\r\nzinter\r\n:-3\r\n*2\r\n+readonly\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@read\r\n+@sortedset\r\n+@slow\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"zdiff":                   "*10\r\n$5\r\nzdiff\r\n:-3\r\n*2\r\n+readonly\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@read\r\n+@sortedset\r\n+@slow\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"zintercard":              "*10\r\n$10\r\nzintercard\r\n:-3\r\n*2\r\n+readonly\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@read\r\n+@sortedset\r\n+@slow\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"zmpop":                   "*10\r\n$5\r\nzmpop\r\n:-4\r\n*2\r\n+write\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@write\r\n+@sortedset\r\n+@slow\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"bzmpop":                  "*10\r\n$6\r\nbzmpop\r\n:-5\r\n*3\r\n+write\r\n+blocking\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@write\r\n+@sortedset\r\n+@slow\r\n+@blocking\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"lmpop":                   "*10\r\n$5\r\nlmpop\r\n:-4\r\n*2\r\n+write\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@write\r\n+@list\r\n+@slow\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"blmpop":                  "*10\r\n$6\r\nblmpop\r\n:-5\r\n*3\r\n+write\r\n+blocking\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@write\r\n+@list\r\n+@slow\r\n+@blocking\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"sintercard":              "*10\r\n$10\r\nsintercard\r\n:-3\r\n*2\r\n+readonly\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@read\r\n+@set\r\n+@slow\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n",
	"set":                     "*10\r\n$3\r\nset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@string\r\n+@slow\r\n*0\r\n*1\r\n*8\r\n$5\r\nnotes\r\n$48\r\nRW and ACCESS due to the optional `GET` argument\r\n$5\r\nflags\r\n*4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"getex":                   "*10\r\n$5\r\ngetex\r\n:-2\r\n*2\r\n+write\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*8\r\n$5\r\nnotes\r\n$40\r\nRW and UPDATE because it changes the TTL\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"smove":                   "*10\r\n$5\r\nsmove\r\n:4\r\n*2\r\n+write\r\n+fast\r\n:1\r\n:2\r\n:1\r\n*3\r\n+@write\r\n+@set\r\n+@fast\r\n*0\r\n*2\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+insert\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"sunionstore":             "*10\r\n$11\r\nsunionstore\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:-1\r\n:1\r\n*3\r\n+@write\r\n+@set\r\n+@slow\r\n*0\r\n*2\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"mset":                    "*10\r\n$4\r\nmset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:-1\r\n:2\r\n*3\r\n+@write\r\n+@string\r\n+@slow\r\n*2\r\n$26\r\nrequest_policy:multi_shard\r\n$29\r\nresponse_policy:all_succeeded\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:2\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"blpop":                   "*10\r\n$5\r\nblpop\r\n:-3\r\n*3\r\n+write\r\n+noscript\r\n+blocking\r\n:1\r\n:-2\r\n:1\r\n*4\r\n+@write\r\n+@list\r\n+@slow\r\n+@blocking\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-2\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"del":                     "*10\r\n$3\r\ndel\r\n:-2\r\n*1\r\n+write\r\n:1\r\n:-1\r\n:1\r\n*3\r\n+@keyspace\r\n+@write\r\n+@slow\r\n*2\r\n$26\r\nrequest_policy:multi_shard\r\n$23\r\nresponse_policy:agg_sum\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RM\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"exists":                  "*10\r\n$6\r\nexists\r\n:-2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:-1\r\n:1\r\n*3\r\n+@keyspace\r\n+@read\r\n+@fast\r\n*2\r\n$26\r\nrequest_policy:multi_shard\r\n$23\r\nresponse_policy:agg_sum\r\n*1\r\n*6\r\n$5\r\nflags\r\n*1\r\n+RO\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"watch":                   "*10\r\n$5\r\nwatch\r\n:-2\r\n*5\r\n+noscript\r\n+loading\r\n+stale\r\n+fast\r\n+allow_busy\r\n:1\r\n:-1\r\n:1\r\n*2\r\n+@fast\r\n+@transaction\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*1\r\n+RO\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"smembers":                "*10\r\n$8\r\nsmembers\r\n:2\r\n*1\r\n+readonly\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@set\r\n+@slow\r\n*1\r\n$29\r\nnondeterministic_output_order\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"object|encoding":         "*10\r\n$15\r\nobject|encoding\r\n:3\r\n*1\r\n+readonly\r\n:2\r\n:2\r\n:1\r\n*3\r\n+@keyspace\r\n+@read\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*1\r\n*6\r\n$5\r\nflags\r\n*1\r\n+RO\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"restore-asking":          "*10\r\n$14\r\nrestore-asking\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+asking\r\n:1\r\n:1\r\n:1\r\n*4\r\n+@keyspace\r\n+@write\r\n+@slow\r\n+@dangerous\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"command|getkeysandflags": "*10\r\n$23\r\ncommand|getkeysandflags\r\n:-4\r\n*2\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@slow\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n",
}

// checkRecordedInfo compares the table's COMMAND INFO (RESP2) of every
// command in recorded with the reply redis-server 7.0.15 gave.
func checkRecordedInfo(t *testing.T, s *Server, recorded map[string]string) {
	t.Helper()
	for name, want := range recorded {
		cmd := s.commandByName([]byte(name))
		if cmd == nil {
			t.Errorf("%s: not in the table", name)
			continue
		}
		if got := string(commandInfoRESP2(cmd)); got != want {
			t.Errorf("COMMAND INFO %s:\n got %q\nwant %q", name, got, want)
		}
	}
}

func TestCommandInfoRecorded(t *testing.T) {
	s := &Server{table: newCommandTable(testFamilies)}
	checkRecordedInfo(t, s, recordedCommandInfo)
}

// recordedKeySpecs is every command of the table as Redis 7.0.15 reports
// it in COMMAND INFO: first, last and step, "movable" for the movablekeys
// flag, then each key spec as flags@begin_search:find_keys{notes}.
const recordedKeySpecs = `
append 1 1 1 RW+insert@1:range(0,1,0)
asking 0 0 0
auth 0 0 0
bitcount 1 1 1 RO+access@1:range(0,1,0)
bitfield 1 1 1 RW+access+update+variable_flags@1:range(0,1,0){This command allows both access and modification of the key}
bitfield_ro 1 1 1 RO+access@1:range(0,1,0)
bitop 2 -1 1 OW+update@2:range(0,1,0) RO+access@3:range(-1,1,0)
bitpos 1 1 1 RO+access@1:range(0,1,0)
blmove 1 2 1 RW+access+delete@1:range(0,1,0) RW+insert@2:range(0,1,0)
blmpop 0 0 0 movable RW+access+delete@2:keynum(0,1,1)
blpop 1 -2 1 RW+access+delete@1:range(-2,1,0)
brpop 1 -2 1 RW+access+delete@1:range(-2,1,0)
brpoplpush 1 2 1 RW+access+delete@1:range(0,1,0) RW+insert@2:range(0,1,0)
bzmpop 0 0 0 movable RW+access+delete@2:keynum(0,1,1)
bzpopmax 1 -2 1 RW+access+delete@1:range(-2,1,0)
bzpopmin 1 -2 1 RW+access+delete@1:range(-2,1,0)
client 0 0 0
client|getname 0 0 0
client|help 0 0 0
client|id 0 0 0
client|info 0 0 0
client|kill 0 0 0
client|list 0 0 0
client|no-evict 0 0 0
client|setname 0 0 0
cluster 0 0 0
cluster|addslots 0 0 0
cluster|addslotsrange 0 0 0
cluster|bumpepoch 0 0 0
cluster|count-failure-reports 0 0 0
cluster|countkeysinslot 0 0 0
cluster|delslots 0 0 0
cluster|delslotsrange 0 0 0
cluster|failover 0 0 0
cluster|flushslots 0 0 0
cluster|forget 0 0 0
cluster|getkeysinslot 0 0 0
cluster|help 0 0 0
cluster|info 0 0 0
cluster|keyslot 0 0 0
cluster|links 0 0 0
cluster|meet 0 0 0
cluster|myid 0 0 0
cluster|nodes 0 0 0
cluster|replicas 0 0 0
cluster|replicate 0 0 0
cluster|reset 0 0 0
cluster|saveconfig 0 0 0
cluster|set-config-epoch 0 0 0
cluster|setslot 0 0 0
cluster|shards 0 0 0
cluster|slaves 0 0 0
cluster|slots 0 0 0
command 0 0 0
command|count 0 0 0
command|docs 0 0 0
command|getkeys 0 0 0
command|help 0 0 0
command|info 0 0 0
command|list 0 0 0
config 0 0 0
config|get 0 0 0
config|help 0 0 0
config|resetstat 0 0 0
config|set 0 0 0
copy 1 2 1 RO+access@1:range(0,1,0) OW+update@2:range(0,1,0)
dbsize 0 0 0
decr 1 1 1 RW+access+update@1:range(0,1,0)
decrby 1 1 1 RW+access+update@1:range(0,1,0)
del 1 -1 1 RM+delete@1:range(-1,1,0)
discard 0 0 0
dump 1 1 1 RO+access@1:range(0,1,0)
echo 0 0 0
eval 0 0 0 movable RW+access+update@2:keynum(0,1,1){We cannot tell how the keys will be used so we assume the worst, RW and UPDATE}
eval_ro 0 0 0 movable RO+access@2:keynum(0,1,1){We cannot tell how the keys will be used so we assume the worst, RO and ACCESS}
evalsha 0 0 0 movable RW+access+update@2:keynum(0,1,1)
evalsha_ro 0 0 0 movable RO+access@2:keynum(0,1,1)
exec 0 0 0
exists 1 -1 1 RO@1:range(-1,1,0)
expire 1 1 1 RW+update@1:range(0,1,0)
expireat 1 1 1 RW+update@1:range(0,1,0)
expiretime 1 1 1 RO+access@1:range(0,1,0)
fcall 0 0 0 movable RW+access+update@2:keynum(0,1,1){We cannot tell how the keys will be used so we assume the worst, RW and UPDATE}
fcall_ro 0 0 0 movable RO+access@2:keynum(0,1,1){We cannot tell how the keys will be used so we assume the worst, RO and ACCESS}
flushall 0 0 0
flushdb 0 0 0
get 1 1 1 RO+access@1:range(0,1,0)
getbit 1 1 1 RO+access@1:range(0,1,0)
getdel 1 1 1 RW+access+delete@1:range(0,1,0)
getex 1 1 1 RW+access+update@1:range(0,1,0){RW and UPDATE because it changes the TTL}
getrange 1 1 1 RO+access@1:range(0,1,0)
getset 1 1 1 RW+access+update@1:range(0,1,0)
hdel 1 1 1 RW+delete@1:range(0,1,0)
hello 0 0 0
hexists 1 1 1 RO@1:range(0,1,0)
hget 1 1 1 RO+access@1:range(0,1,0)
hgetall 1 1 1 RO+access@1:range(0,1,0)
hincrby 1 1 1 RW+access+update@1:range(0,1,0)
hincrbyfloat 1 1 1 RW+access+update@1:range(0,1,0)
hkeys 1 1 1 RO+access@1:range(0,1,0)
hlen 1 1 1 RO@1:range(0,1,0)
hmget 1 1 1 RO+access@1:range(0,1,0)
hmset 1 1 1 RW+update@1:range(0,1,0)
hrandfield 1 1 1 RO+access@1:range(0,1,0)
hscan 1 1 1 RO+access@1:range(0,1,0)
hset 1 1 1 RW+update@1:range(0,1,0)
hsetnx 1 1 1 RW+insert@1:range(0,1,0)
hstrlen 1 1 1 RO@1:range(0,1,0)
hvals 1 1 1 RO+access@1:range(0,1,0)
incr 1 1 1 RW+access+update@1:range(0,1,0)
incrby 1 1 1 RW+access+update@1:range(0,1,0)
incrbyfloat 1 1 1 RW+access+update@1:range(0,1,0)
info 0 0 0
keys 0 0 0
lcs 1 2 1 RO+access@1:range(1,1,0)
lindex 1 1 1 RO+access@1:range(0,1,0)
linsert 1 1 1 RW+insert@1:range(0,1,0)
llen 1 1 1 RO@1:range(0,1,0)
lmove 1 2 1 RW+access+delete@1:range(0,1,0) RW+insert@2:range(0,1,0)
lmpop 0 0 0 movable RW+access+delete@1:keynum(0,1,1)
lpop 1 1 1 RW+access+delete@1:range(0,1,0)
lpos 1 1 1 RO+access@1:range(0,1,0)
lpush 1 1 1 RW+insert@1:range(0,1,0)
lpushx 1 1 1 RW+insert@1:range(0,1,0)
lrange 1 1 1 RO+access@1:range(0,1,0)
lrem 1 1 1 RW+delete@1:range(0,1,0)
lset 1 1 1 RW+update@1:range(0,1,0)
ltrim 1 1 1 RW+delete@1:range(0,1,0)
memory 0 0 0
memory|purge 0 0 0
mget 1 -1 1 RO+access@1:range(-1,1,0)
move 1 1 1 RW+access+update@1:range(0,1,0)
mset 1 -1 2 OW+update@1:range(-1,2,0)
msetnx 1 -1 2 OW+insert@1:range(-1,2,0)
multi 0 0 0
object 0 0 0
object|encoding 2 2 1 RO@2:range(0,1,0)
memory|usage 2 2 1 RO@2:range(0,1,0)
sort 1 1 1 movable RO+access@1:range(0,1,0) RO+access@unknown:unknown{For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort} OW+update@unknown:unknown{For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array}
sort_ro 1 1 1 movable RO+access@1:range(0,1,0) RO+access@unknown:unknown{For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort}
object|freq 2 2 1 RO@2:range(0,1,0)
object|help 0 0 0
object|idletime 2 2 1 RO@2:range(0,1,0)
object|refcount 2 2 1 RO@2:range(0,1,0)
persist 1 1 1 RW+update@1:range(0,1,0)
pexpire 1 1 1 RW+update@1:range(0,1,0)
pexpireat 1 1 1 RW+update@1:range(0,1,0)
pexpiretime 1 1 1 RO+access@1:range(0,1,0)
ping 0 0 0
psetex 1 1 1 OW+update@1:range(0,1,0)
pttl 1 1 1 RO+access@1:range(0,1,0)
quit 0 0 0
randomkey 0 0 0
readonly 0 0 0
readwrite 0 0 0
rename 1 2 1 RW+access+delete@1:range(0,1,0) OW+update@2:range(0,1,0)
renamenx 1 2 1 RW+access+delete@1:range(0,1,0) OW+insert@2:range(0,1,0)
reset 0 0 0
restore 1 1 1 OW+update@1:range(0,1,0)
restore-asking 1 1 1 OW+update@1:range(0,1,0)
rpop 1 1 1 RW+access+delete@1:range(0,1,0)
rpoplpush 1 2 1 RW+access+delete@1:range(0,1,0) RW+insert@2:range(0,1,0)
rpush 1 1 1 RW+insert@1:range(0,1,0)
rpushx 1 1 1 RW+insert@1:range(0,1,0)
sadd 1 1 1 RW+insert@1:range(0,1,0)
scan 0 0 0
scard 1 1 1 RO@1:range(0,1,0)
sdiff 1 -1 1 RO+access@1:range(-1,1,0)
sdiffstore 1 -1 1 OW+update@1:range(0,1,0) RO+access@2:range(-1,1,0)
select 0 0 0
set 1 1 1 RW+access+update+variable_flags@1:range(0,1,0){RW and ACCESS due to the optional ` + "`" + `GET` + "`" + ` argument}
setbit 1 1 1 RW+access+update@1:range(0,1,0)
setex 1 1 1 OW+update@1:range(0,1,0)
setnx 1 1 1 OW+insert@1:range(0,1,0)
setrange 1 1 1 RW+update@1:range(0,1,0)
shutdown 0 0 0
sinter 1 -1 1 RO+access@1:range(-1,1,0)
sintercard 0 0 0 movable RO+access@1:keynum(0,1,1)
sinterstore 1 -1 1 RW+update@1:range(0,1,0) RO+access@2:range(-1,1,0)
sismember 1 1 1 RO@1:range(0,1,0)
smembers 1 1 1 RO+access@1:range(0,1,0)
smismember 1 1 1 RO+access@1:range(0,1,0)
smove 1 2 1 RW+access+delete@1:range(0,1,0) RW+insert@2:range(0,1,0)
spop 1 1 1 RW+access+delete@1:range(0,1,0)
spublish 1 1 1 not_key@1:range(0,1,0)
srandmember 1 1 1 RO+access@1:range(0,1,0)
ssubscribe 1 -1 1 not_key@1:range(-1,1,0)
srem 1 1 1 RW+delete@1:range(0,1,0)
sscan 1 1 1 RO+access@1:range(0,1,0)
strlen 1 1 1 RO@1:range(0,1,0)
substr 1 1 1 RO+access@1:range(0,1,0)
sunion 1 -1 1 RO+access@1:range(-1,1,0)
sunionstore 1 -1 1 OW+update@1:range(0,1,0) RO+access@2:range(-1,1,0)
sunsubscribe 1 -1 1 not_key@1:range(-1,1,0)
swapdb 0 0 0
time 0 0 0
touch 1 -1 1 RO@1:range(-1,1,0)
ttl 1 1 1 RO+access@1:range(0,1,0)
type 1 1 1 RO@1:range(0,1,0)
unlink 1 -1 1 RM+delete@1:range(-1,1,0)
unwatch 0 0 0
watch 1 -1 1 RO@1:range(-1,1,0)
xack 1 1 1 RW+update@1:range(0,1,0)
xautoclaim 1 1 1 RW+delete@1:range(0,1,0)
xclaim 1 1 1 RW+update@1:range(0,1,0)
xgroup|create 2 2 1 RW+insert@2:range(0,1,0)
xgroup|createconsumer 2 2 1 RW+insert@2:range(0,1,0)
xgroup|delconsumer 2 2 1 RW+delete@2:range(0,1,0)
xgroup|destroy 2 2 1 RW+delete@2:range(0,1,0)
xgroup|setid 2 2 1 RW+update@2:range(0,1,0)
xinfo|consumers 2 2 1 RO+access@2:range(0,1,0)
xinfo|groups 2 2 1 RO+access@2:range(0,1,0)
xpending 1 1 1 RO+access@1:range(0,1,0)
xreadgroup 0 0 0 movable RO+access@kw(STREAMS,4):range(-1,1,2)
xadd 1 1 1 RW+update@1:range(0,1,0){UPDATE instead of INSERT because of the optional trimming feature}
xdel 1 1 1 RW+delete@1:range(0,1,0)
xinfo|stream 2 2 1 RO+access@2:range(0,1,0)
xlen 1 1 1 RO@1:range(0,1,0)
xrange 1 1 1 RO+access@1:range(0,1,0)
xread 0 0 0 movable RO+access@kw(STREAMS,1):range(-1,1,2)
xrevrange 1 1 1 RO+access@1:range(0,1,0)
xsetid 1 1 1 RW+update@1:range(0,1,0)
xtrim 1 1 1 RW+delete@1:range(0,1,0)
zadd 1 1 1 RW+update@1:range(0,1,0)
zcard 1 1 1 RO@1:range(0,1,0)
zcount 1 1 1 RO+access@1:range(0,1,0)
zdiff 0 0 0 movable RO+access@1:keynum(0,1,1)
zdiffstore 1 1 1 movable OW+update@1:range(0,1,0) RO+access@2:keynum(0,1,1)
zincrby 1 1 1 RW+access+update@1:range(0,1,0)
zinter 0 0 0 movable RO+access@1:keynum(0,1,1)
zintercard 0 0 0 movable RO+access@1:keynum(0,1,1)
zinterstore 1 1 1 movable OW+update@1:range(0,1,0) RO+access@2:keynum(0,1,1)
zlexcount 1 1 1 RO+access@1:range(0,1,0)
zmpop 0 0 0 movable RW+access+delete@1:keynum(0,1,1)
zmscore 1 1 1 RO+access@1:range(0,1,0)
zpopmax 1 1 1 RW+access+delete@1:range(0,1,0)
zpopmin 1 1 1 RW+access+delete@1:range(0,1,0)
zrandmember 1 1 1 RO+access@1:range(0,1,0)
zrange 1 1 1 RO+access@1:range(0,1,0)
zrangebylex 1 1 1 RO+access@1:range(0,1,0)
zrangebyscore 1 1 1 RO+access@1:range(0,1,0)
zrangestore 1 2 1 OW+update@1:range(0,1,0) RO+access@2:range(0,1,0)
zrank 1 1 1 RO+access@1:range(0,1,0)
zrem 1 1 1 RW+delete@1:range(0,1,0)
zremrangebylex 1 1 1 RW+delete@1:range(0,1,0)
zremrangebyrank 1 1 1 RW+delete@1:range(0,1,0)
zremrangebyscore 1 1 1 RW+delete@1:range(0,1,0)
zrevrange 1 1 1 RO+access@1:range(0,1,0)
zrevrangebylex 1 1 1 RO+access@1:range(0,1,0)
zrevrangebyscore 1 1 1 RO+access@1:range(0,1,0)
zrevrank 1 1 1 RO+access@1:range(0,1,0)
zscan 1 1 1 RO+access@1:range(0,1,0)
zscore 1 1 1 RO+access@1:range(0,1,0)
zunion 0 0 0 movable RO+access@1:keynum(0,1,1)
zunionstore 1 1 1 movable OW+update@1:range(0,1,0) RO+access@2:keynum(0,1,1)
geoadd 1 1 1 RW+update@1:range(0,1,0)
geodist 1 1 1 RO+access@1:range(0,1,0)
geohash 1 1 1 RO+access@1:range(0,1,0)
geopos 1 1 1 RO+access@1:range(0,1,0)
georadius 1 1 1 movable RO+access@1:range(0,1,0) OW+update@kw(STORE,6):range(0,1,0) OW+update@kw(STOREDIST,6):range(0,1,0)
georadius_ro 1 1 1 RO+access@1:range(0,1,0)
georadiusbymember 1 1 1 movable RO+access@1:range(0,1,0) OW+update@kw(STORE,5):range(0,1,0) OW+update@kw(STOREDIST,5):range(0,1,0)
georadiusbymember_ro 1 1 1 RO+access@1:range(0,1,0)
geosearch 1 1 1 RO+access@1:range(0,1,0)
geosearchstore 1 2 1 OW+update@1:range(0,1,0) RO+access@2:range(0,1,0)
pfadd 1 1 1 RW+insert@1:range(0,1,0)
pfcount 1 -1 1 RW+access@1:range(-1,1,0){RW because it may change the internal representation of the key, and propagate to replicas}
pfdebug 2 2 1 RW+access@2:range(0,1,0)
pfmerge 1 -1 1 RW+access+insert@1:range(0,1,0) RO+access@2:range(-1,1,0)
migrate 3 3 1 movable RW+access+delete@3:range(0,1,0) RW+access+delete+incomplete@kw(KEYS,-2):range(-1,1,0)
`

// compactKeySpecs renders cmd the way recordedKeySpecs lists it.
func compactKeySpecs(cmd *Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d %d %d", cmd.Name, cmd.FirstKey, cmd.LastKey, cmd.Step)
	if cmd.Flags&FlagMovableKeys != 0 {
		b.WriteString(" movable")
	}
	for _, sp := range keySpecsOf(cmd) {
		var flags []string
		for _, f := range keySpecFlagNames {
			if sp.Flags&f.bit != 0 {
				flags = append(flags, f.name)
			}
		}
		begin := strconv.Itoa(sp.Index)
		if sp.Unknown {
			fmt.Fprintf(&b, " %s@unknown:unknown{%s}", strings.Join(flags, "+"), sp.Notes)
			continue
		}
		if sp.Keyword != "" {
			begin = fmt.Sprintf("kw(%s,%d)", sp.Keyword, sp.StartFrom)
		}
		find := fmt.Sprintf("range(%d,%d,%d)", sp.LastKey, sp.KeyStep, sp.Limit)
		if sp.KeyNum {
			find = fmt.Sprintf("keynum(%d,%d,%d)", sp.KeyNumIdx, sp.FirstKey, sp.KeyStep)
		}
		fmt.Fprintf(&b, " %s@%s:%s", strings.Join(flags, "+"), begin, find)
		if sp.Notes != "" {
			b.WriteString("{" + sp.Notes + "}")
		}
	}
	return b.String()
}

func TestKeySpecsRecorded(t *testing.T) {
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(recordedKeySpecs), "\n") {
		name, _, _ := strings.Cut(line, " ")
		want[name] = line
	}
	s := &Server{table: newCommandTable(testFamilies)}
	var names []string
	for _, cmd := range sortedCommands(s.table) {
		names = append(names, cmd.Name)
		for i := range cmd.Subcommands {
			names = append(names, cmd.Subcommands[i].Name)
		}
	}
	for _, name := range names {
		cmd := s.commandByName([]byte(name))
		got := compactKeySpecs(cmd)
		w, ok := want[name]
		if !ok && strings.HasPrefix(name, "tr.") {
			continue // TairRoaring: TestRoaringCommandInfo checks these
		}
		if !ok {
			// Not in Redis 7.0 (CLIENT SETINFO is 7.2): it must have no keys.
			if w = name + " 0 0 0"; got != w {
				t.Errorf("%s (not in Redis 7.0): got %q, want %q", name, got, w)
			}
			continue
		}
		delete(want, name)
		if got != w {
			t.Errorf("key specs of %s:\n got %s\nwant %s", name, got, w)
		}
	}
	for name := range want {
		t.Errorf("%s: recorded but not in the table", name)
	}
}

// legacyKeyRange derives first/last/step and the movablekeys flag from key
// specs the way Redis 7.0's populateCommandLegacyRangeSpec does.
func legacyKeyRange(specs []KeySpec) (first, last, step int, movable bool) {
	if len(specs) == 0 {
		return 0, 0, 0, false
	}
	plain := func(sp *KeySpec) bool { return sp.Keyword == "" && !sp.KeyNum }
	if len(specs) == 1 && plain(&specs[0]) {
		sp := &specs[0]
		last = sp.LastKey
		if last >= 0 {
			last += sp.Index
		}
		return sp.Index, last, sp.KeyStep, sp.Flags&KeyIncomplete != 0
	}
	first, lastAbs, prev := math.MaxInt, 0, 0
	for i := range specs {
		sp := &specs[i]
		if !plain(sp) || sp.KeyStep != 1 || (prev != 0 && prev != sp.Index-1) {
			movable = true
			continue
		}
		if sp.Flags&KeyIncomplete != 0 {
			movable = true
		}
		first = min(first, sp.Index)
		abs := sp.LastKey
		if abs >= 0 {
			abs += sp.Index
		}
		if uint(abs) > uint(lastAbs) { // unsigned: a negative last wins
			lastAbs = abs
		}
		prev = lastAbs
	}
	if first == math.MaxInt {
		return 0, 0, 0, true
	}
	return first, lastAbs, 1, movable
}

// TestLegacyKeyRange: first/last/step and FlagMovableKeys of every entry
// are what Redis derives from its key specs, and every command with keys
// declares its specs.
func TestLegacyKeyRange(t *testing.T) {
	check := func(cmd *Command) {
		if (cmd.FirstKey > 0 || cmd.Flags&FlagMovableKeys != 0) && len(cmd.KeySpecs) == 0 {
			t.Errorf("%s has keys but no KeySpecs", cmd.Name)
		}
		first, last, step, movable := legacyKeyRange(cmd.KeySpecs)
		if first != cmd.FirstKey || last != cmd.LastKey || step != cmd.Step || movable != (cmd.Flags&FlagMovableKeys != 0) {
			t.Errorf("%s: table has %d %d %d movable=%v, its key specs give %d %d %d movable=%v", cmd.Name,
				cmd.FirstKey, cmd.LastKey, cmd.Step, cmd.Flags&FlagMovableKeys != 0, first, last, step, movable)
		}
		if movable && cmd.GetKeys == nil {
			t.Errorf("%s: movable keys but no GetKeys fallback", cmd.Name)
		}
	}
	for _, cmd := range newCommandTable(testFamilies) {
		check(cmd)
		for i := range cmd.Subcommands {
			check(&cmd.Subcommands[i])
		}
	}
}

func TestCommandGetkeys(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	// Recorded from Redis 7.0.15. Bad numkeys (not an integer, leading
	// zeros, a sign) make the key specs fail; Redis then falls back to its
	// getkeys_proc, which reads numkeys with atoi and lists the
	// destination key last, without flags.
	script(t, w, [][2]string{
		{"COMMAND GETKEYS ZUNIONSTORE dst 2 a b WEIGHTS 1 2", "*3\r\n$3\r\ndst\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYSANDFLAGS ZUNIONSTORE dst 2 a b WEIGHTS 1 2", "*3\r\n*2\r\n$3\r\ndst\r\n*2\r\n+OW\r\n+update\r\n*2\r\n$1\r\na\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nb\r\n*2\r\n+RO\r\n+access\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 2abc a b", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$3\r\ndst\r\n"},
		{"COMMAND GETKEYSANDFLAGS ZUNIONSTORE dst 2abc a b", "*3\r\n*2\r\n$1\r\na\r\n*0\r\n*2\r\n$1\r\nb\r\n*0\r\n*2\r\n$3\r\ndst\r\n*0\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 0 a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 3 a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst -1 a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst x a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst \" 2\" a b", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$3\r\ndst\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst \"+2\" a b", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$3\r\ndst\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst \"02\" a b", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$3\r\ndst\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst \"\\t1x\" a b", "*2\r\n$1\r\na\r\n$3\r\ndst\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 4294967298 a b", "*3\r\n$3\r\ndst\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 4294967297 a b", "*2\r\n$3\r\ndst\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 99999999999999999999 a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst -9223372036854775808 a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 9223372036854775807 a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZUNIONSTORE dst 2.0 a b", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$3\r\ndst\r\n"},
		{"COMMAND GETKEYS LMPOP 2 a b LEFT", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYSANDFLAGS LMPOP 2 a b LEFT", "*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n$1\r\nb\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n"},
		{"COMMAND GETKEYS LMPOP 3 a b LEFT", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$4\r\nLEFT\r\n"},
		{"COMMAND GETKEYS LMPOP 4 a b LEFT", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS LMPOP 4294967298 a b LEFT", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS BLMPOP 0 2 a b LEFT", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS BLMPOP 0 4 a b LEFT", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS BLMPOP 0 1 a b LEFT", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS BLMPOP 0 x a b LEFT", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS SINTERCARD 2 a b LIMIT 1", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS SINTERCARD 1 a", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS SINTERCARD 2 a", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS SINTERCARD 02 a b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS SET k v", "*1\r\n$1\r\nk\r\n"},
		{"COMMAND GETKEYSANDFLAGS SET k v", "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS SET k v GET", "*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS SET k v get", "*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS SET k get", "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS SET k v EX 10 gett", "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS GET k", "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+RO\r\n+access\r\n"},
		{"COMMAND GETKEYSANDFLAGS MSET a 1 b 2", "*2\r\n*2\r\n$1\r\na\r\n*2\r\n+OW\r\n+update\r\n*2\r\n$1\r\nb\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS ZRANGESTORE d s 0 1", "*2\r\n*2\r\n$1\r\nd\r\n*2\r\n+OW\r\n+update\r\n*2\r\n$1\r\ns\r\n*2\r\n+RO\r\n+access\r\n"},
		{"COMMAND GETKEYSANDFLAGS GETEX k", "*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS RENAME a b", "*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n$1\r\nb\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS SMOVE a b m", "*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n$1\r\nb\r\n*2\r\n+RW\r\n+insert\r\n"},
		{"COMMAND GETKEYSANDFLAGS SUNIONSTORE d a b c", "*4\r\n*2\r\n$1\r\nd\r\n*2\r\n+OW\r\n+update\r\n*2\r\n$1\r\na\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nb\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nc\r\n*2\r\n+RO\r\n+access\r\n"},
		{"COMMAND GETKEYSANDFLAGS DEL a b c", "*3\r\n*2\r\n$1\r\na\r\n*2\r\n+RM\r\n+delete\r\n*2\r\n$1\r\nb\r\n*2\r\n+RM\r\n+delete\r\n*2\r\n$1\r\nc\r\n*2\r\n+RM\r\n+delete\r\n"},
		{"COMMAND GETKEYSANDFLAGS COPY a b", "*2\r\n*2\r\n$1\r\na\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nb\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYSANDFLAGS OBJECT ENCODING k", "*1\r\n*2\r\n$1\r\nk\r\n*1\r\n+RO\r\n"},
		{"COMMAND GETKEYSANDFLAGS BZMPOP 1 2 a b MIN COUNT 3", "*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n$1\r\nb\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n"},
		{"COMMAND GETKEYSANDFLAGS ZDIFFSTORE d 1 a", "*2\r\n*2\r\n$1\r\nd\r\n*2\r\n+OW\r\n+update\r\n*2\r\n$1\r\na\r\n*2\r\n+RO\r\n+access\r\n"},
		{"COMMAND GETKEYS BLPOP a b 0", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS BZPOPMIN a b c 0", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{"COMMAND GETKEYS OBJECT ENCODING k", "*1\r\n$1\r\nk\r\n"},
		{"COMMAND GETKEYS OBJECT HELP", "-ERR The command has no key arguments\r\n"},
		{"COMMAND GETKEYS OBJECT NOSUCH k", "-ERR Invalid command specified\r\n"},
		{"COMMAND GETKEYS OBJECT", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"COMMAND GETKEYS PING", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"COMMAND GETKEYS GET", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"COMMAND GETKEYS GET a b", "-ERR Invalid number of arguments specified for command\r\n"},
		{"COMMAND GETKEYSANDFLAGS", "-ERR wrong number of arguments for 'command|getkeysandflags' command\r\n"},
		{"COMMAND GETKEYSANDFLAGS GET", "-ERR wrong number of arguments for 'command|getkeysandflags' command\r\n"},
		{"COMMAND GETKEYSANDFLAGS PING x", "-ERR The command has no key arguments\r\n"},
		{"COMMAND GETKEYSANDFLAGS NOSUCH x", "-ERR Invalid command specified\r\n"},
		{"COMMAND GETKEYS ZINTER 2 a b WITHSCORES", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS ZDIFF 1 a", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS ZINTERCARD 2 a b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS ZMPOP 1 a MIN", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS BZMPOP 1 1 a MIN", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS ZDIFFSTORE d 1 a", "*2\r\n$1\r\nd\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS ZINTERSTORE d 2 a", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS ZINTERSTORE d 1 a", "*2\r\n$1\r\nd\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS SINTERSTORE d a b", "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS RENAME a b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS MSET a 1 b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS MSET a 1 b 2 c", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{"COMMAND GETKEYS CLIENT LIST", "-ERR The command has no key arguments\r\n"},
		{"COMMAND GETKEYS CLIENT", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"COMMAND GETKEYS WATCH a b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS MEMORY PURGE", "-ERR The command has no key arguments\r\n"},
		{"COMMAND GETKEYS command getkeys get k", "-ERR The command has no key arguments\r\n"},
		{"COMMAND GETKEYS EXISTS a a", "*2\r\n$1\r\na\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS exists", "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{"COMMAND GETKEYSANDFLAGS TOUCH a", "*1\r\n*2\r\n$1\r\na\r\n*1\r\n+RO\r\n"},
		{"COMMAND GETKEYSANDFLAGS UNLINK a", "*1\r\n*2\r\n$1\r\na\r\n*2\r\n+RM\r\n+delete\r\n"},
		{"COMMAND GETKEYS zunion 2 a b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS zunion 1 a b", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS zunion 3 a b", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS HSCAN h 0", "*1\r\n$1\r\nh\r\n"},
	})
}

// keywordCommands have key specs that begin at a keyword: none of the
// table's commands do, so these are Redis's GEORADIUS, XREAD, XREADGROUP
// and MIGRATE (specs recorded from COMMAND INFO of Redis 7.0.15).
func keywordCommands() map[string]*Command {
	run := func(*Client, [][]byte) {}
	cmds := []Command{
		{Name: "georadius", Arity: -6, Flags: FlagWrite | FlagDenyOOM | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1, Group: "geo", Run: run,
			KeySpecs: []KeySpec{KeyAt(KeyRO|KeyAccess, 1),
				{Flags: KeyOW | KeyUpdate, Keyword: "STORE", StartFrom: 6, KeyStep: 1},
				{Flags: KeyOW | KeyUpdate, Keyword: "STOREDIST", StartFrom: 6, KeyStep: 1}}},
		{Name: "xread", Arity: -4, Flags: FlagReadonly | FlagBlocking | FlagMovableKeys, Group: "stream", Run: run,
			KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Keyword: "STREAMS", StartFrom: 1, LastKey: -1, KeyStep: 1, Limit: 2}}},
		{Name: "xreadgroup", Arity: -7, Flags: FlagWrite | FlagBlocking | FlagMovableKeys, Group: "stream", Run: run,
			KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Keyword: "STREAMS", StartFrom: 4, LastKey: -1, KeyStep: 1, Limit: 2}}},
		{Name: "migrate", Arity: -6, Flags: FlagWrite | FlagMovableKeys, FirstKey: 3, LastKey: 3, Step: 1, Group: "generic", Run: run,
			KeySpecs: []KeySpec{KeyAt(KeyRW|KeyAccess|KeyDelete, 3),
				{Flags: KeyRW | KeyAccess | KeyDelete | KeyIncomplete, Keyword: "KEYS", StartFrom: -2, LastKey: -1, KeyStep: 1}}},
	}
	return buildTable(cmds)
}

// recordedKeywordInfo is COMMAND INFO of the keyword commands in Redis 7.0.15.
var recordedKeywordInfo = map[string]string{
	"georadius": "*10\r\n$9\r\ngeoradius\r\n:-6\r\n*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@geo\r\n+@slow\r\n*0\r\n*3\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$7\r\nkeyword\r\n$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$5\r\nSTORE\r\n$9\r\nstartfrom\r\n:6\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$7\r\nkeyword\r\n$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$9\r\nSTOREDIST\r\n$9\r\nstartfrom\r\n:6\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"xread":     "*10\r\n$5\r\nxread\r\n:-4\r\n*3\r\n+readonly\r\n+blocking\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@read\r\n+@stream\r\n+@slow\r\n+@blocking\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$7\r\nkeyword\r\n$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$7\r\nSTREAMS\r\n$9\r\nstartfrom\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:2\r\n*0\r\n",
	"migrate":   "*10\r\n$7\r\nmigrate\r\n:-6\r\n*2\r\n+write\r\n+movablekeys\r\n:3\r\n:3\r\n:1\r\n*4\r\n+@keyspace\r\n+@write\r\n+@slow\r\n+@dangerous\r\n*1\r\n$23\r\nnondeterministic_output\r\n*2\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:3\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*6\r\n$5\r\nflags\r\n*4\r\n+RW\r\n+access\r\n+delete\r\n+incomplete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$7\r\nkeyword\r\n$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$4\r\nKEYS\r\n$9\r\nstartfrom\r\n:-2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
}

const recordedKeywordSpecs = `
georadius 1 1 1 movable RO+access@1:range(0,1,0) OW+update@kw(STORE,6):range(0,1,0) OW+update@kw(STOREDIST,6):range(0,1,0)
xread 0 0 0 movable RO+access@kw(STREAMS,1):range(-1,1,2)
xreadgroup 0 0 0 movable RO+access@kw(STREAMS,4):range(-1,1,2)
migrate 3 3 1 movable RW+access+delete@3:range(0,1,0) RW+access+delete+incomplete@kw(KEYS,-2):range(-1,1,0)
`

func TestKeywordKeySpecs(t *testing.T) {
	table := keywordCommands()
	// The key specs (and the subcommands' empty array) end each recorded
	// reply; the rest depends on categories Persimmon does not have.
	for name, want := range recordedKeywordInfo {
		cmd := table[name]
		w := proto.Writer{Out: redconArray(len(cmd.KeySpecs))}
		for i := range cmd.KeySpecs {
			appendKeySpec(&w, &cmd.KeySpecs[i])
		}
		specs := w.Out
		if !strings.HasSuffix(want, string(specs)+"*0\r\n") {
			t.Errorf("key specs of %s: %q is not the end of the recorded %q", name, specs, want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(recordedKeywordSpecs), "\n") {
		name, _, _ := strings.Cut(line, " ")
		if got := compactKeySpecs(table[name]); got != line {
			t.Errorf("%s: got %s, want %s", name, got, line)
		}
		first, last, step, movable := legacyKeyRange(table[name].KeySpecs)
		if got := fmt.Sprintf("%s %d %d %d", name, first, last, step); !strings.HasPrefix(line, got) || movable != strings.Contains(line, "movable") {
			t.Errorf("%s: legacy range %s movable=%v, recorded %s", name, got, movable, line)
		}
	}
	// COMMAND GETKEYS through the keyword specs, recorded from Redis 7.0.15.
	c := &Client{Srv: &Server{table: table}}
	for _, tt := range [][2]string{
		{"COMMAND GETKEYS GEORADIUS src 0 0 1 km STORE dst", "*2\r\n$3\r\nsrc\r\n$3\r\ndst\r\n"},
		{"COMMAND GETKEYS GEORADIUS src 0 0 1 km STORE dst STOREDIST d2", "*3\r\n$3\r\nsrc\r\n$3\r\ndst\r\n$2\r\nd2\r\n"},
		{"COMMAND GETKEYS GEORADIUS src 0 0 1 km store", "*1\r\n$3\r\nsrc\r\n"},
		{"COMMAND GETKEYS GEORADIUS src 0 0 1 km STORE", "*1\r\n$3\r\nsrc\r\n"},
		{"COMMAND GETKEYS GEORADIUS src 0 0 1 STORE dst", "*1\r\n$3\r\nsrc\r\n"},
		{"COMMAND GETKEYSANDFLAGS GEORADIUS src 0 0 1 km storedist x", "*2\r\n*2\r\n$3\r\nsrc\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nx\r\n*2\r\n+OW\r\n+update\r\n"},
		{"COMMAND GETKEYS XREAD COUNT 2 STREAMS a b 0 0", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS XREAD COUNT 2 STREAMS a b 0", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS XREAD STREAMS a b streams 0 0 1", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$7\r\nstreams\r\n"},
		{"COMMAND GETKEYS XREAD COUNT 1 STREAMS", "-ERR Invalid arguments specified for command\r\n"},
		{"COMMAND GETKEYS XREAD STREAMS a 0", "*1\r\n$1\r\na\r\n"},
		{"COMMAND GETKEYS XREADGROUP GROUP g c STREAMS a b 0 0", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"COMMAND GETKEYS XREADGROUP GROUP g c STREAMS", "-ERR Invalid number of arguments specified for command\r\n"},
	} {
		args, _, ok := proto.SplitInline([]byte(tt[0]), nil, nil)
		if !ok {
			t.Fatalf("bad request %q", tt[0])
		}
		c.Out = c.Out[:0]
		if ArgIs(args[1], "getkeys") && arityOK(-4, len(args)) {
			commandGetkeysCommand(c, args)
		} else if arityOK(-4, len(args)) {
			commandGetkeysandflagsCommand(c, args)
		} else {
			c.WriteError(WrongArgs("command|getkeys"))
		}
		if got := string(c.Out); got != tt[1] {
			t.Errorf("%s: got %q, want %q", tt[0], got, tt[1])
		}
	}
	// MIGRATE's KEYS spec is incomplete: the specs alone give no keys.
	if refs, ok := keysFromSpecs(table["migrate"].KeySpecs, strs("migrate", "h", "1", "", "0", "5", "KEYS", "a", "b")); ok {
		t.Errorf("MIGRATE ... KEYS a b: specs gave %v, want a failure (incomplete spec)", refs)
	}
}

func redconArray(n int) []byte { return []byte("*" + strconv.Itoa(n) + "\r\n") }

func strs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestCAtoi(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"2", 2}, {"02", 2}, {"+2", 2}, {" \t\n2", 2}, {"2abc", 2}, {"2.9", 2}, {"-3", -3},
		{"", 0}, {"x", 0}, {"-", 0}, {"+-2", 0}, {"2\x003", 2},
		{"2147483647", math.MaxInt32}, {"2147483648", math.MinInt32}, {"4294967298", 2},
		{"9223372036854775807", -1}, {"99999999999999999999", -1}, // LONG_MAX, truncated
		{"-9223372036854775808", 0}, {"-99999999999999999999", 0}, // LONG_MIN, truncated
	} {
		if got := cAtoi([]byte(tt.in)); got != tt.want {
			t.Errorf("cAtoi(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestGetKeysFallbackOrder(t *testing.T) {
	// genericGetKeys lists the destination last, and rejects a count below
	// 1 or past the arguments.
	f := NumkeysGetKeys(1, 2, 3)
	got := f(strs("zunionstore", "d", "2", "a", "b", "weights"))
	if want := []KeyRef{{Pos: 3}, {Pos: 4}, {Pos: 1}}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, n := range []string{"0", "-1", "4", "x"} {
		if got := f(strs("zunionstore", "d", n, "a", "b", "c")); got != nil {
			t.Errorf("numkeys %s: got %v, want none", n, got)
		}
	}
}

// commandInfoRESP2 is cmd's COMMAND INFO entry as a RESP2 client gets it.
func commandInfoRESP2(cmd *Command) []byte {
	var w proto.Writer
	appendCommandInfo(&w, cmd)
	return w.Out
}

// COMMAND INFO of DUMP and RESTORE as Redis 7.0.15 answers it (the key specs and
// the outer *1 left out).
var recordedDumpInfo = map[string]string{
	"dump":    "*10\r\n$4\r\ndump\r\n:2\r\n*1\r\n+readonly\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@keyspace\r\n+@read\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
	"restore": "*10\r\n$7\r\nrestore\r\n:-4\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n*4\r\n+@keyspace\r\n+@write\r\n+@slow\r\n+@dangerous\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
}

func TestDumpCommandInfo(t *testing.T) {
	s := &Server{table: newCommandTable(testFamilies)}
	for name, want := range recordedDumpInfo {
		cmd := s.commandByName([]byte(name))
		if cmd == nil {
			t.Fatalf("%s: not in the table", name)
		}
		if got := string(commandInfoRESP2(cmd)); got != want {
			t.Errorf("COMMAND INFO %s:\n got %q\nwant %q", name, got, want)
		}
	}
}

// The key specs of the TairRoaring family (package commands) and COMMAND
// GETKEYS on them.
func TestRoaringKeySpecs(t *testing.T) {
	var roaring []Command
	for _, cmd := range testFamilies {
		if strings.HasPrefix(cmd.Name, "tr.") {
			roaring = append(roaring, cmd)
		}
	}
	want := map[string]string{
		"tr.bitop":     "tr.bitop 1 1 1 movable OW+update@1:range(0,1,0) RO+access@3:range(-1,1,0)",
		"tr.bitopcard": "tr.bitopcard 2 -1 1 RO+access@2:range(-1,1,0)",
		"tr.jaccard":   "tr.jaccard 1 2 1 RO+access@1:range(1,1,0)",
		"tr.diff":      "tr.diff 1 3 1 OW+update@1:range(0,1,0) RO+access@2:range(1,1,0)",
	}
	for _, cmd := range roaring {
		if cmd.Summary == "" || cmd.Run == nil || len(cmd.KeySpecs) == 0 {
			t.Errorf("incomplete entry %s", cmd.Name)
		}
		if w, ok := want[cmd.Name]; ok {
			if got := compactKeySpecs(&cmd); got != w {
				t.Errorf("key specs of %s:\n got %s\nwant %s", cmd.Name, got, w)
			}
		}
	}
	// COMMAND GETKEYS for TR.BITOP skips the operation.
	var bitop Command
	for _, cmd := range roaring {
		if cmd.Name == "tr.bitop" {
			bitop = cmd
		}
	}
	args := [][]byte{[]byte("tr.bitop"), []byte("d"), []byte("OR"), []byte("a"), []byte("b")}
	refs := CommandKeys(&bitop, args)
	var pos []int
	for _, r := range refs {
		pos = append(pos, r.Pos)
	}
	if fmt.Sprint(pos) != "[1 3 4]" {
		t.Errorf("TR.BITOP keys at %v, want [1 3 4]", pos)
	}
	if fmt.Sprint(bitop.GetKeys(args)) != fmt.Sprint(refs) {
		t.Errorf("GetKeys %v, key specs %v", bitop.GetKeys(args), refs)
	}
}

package commands

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/recovery"
)

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ---- handler test harness ----
//
// Handler tests run commands against a real keyspace opened in t.TempDir(),
// through the command table (arity checks included), and compare the RESP
// bytes of each reply with what Redis 7.0.15 answered to the same script.

// scriptStep is one command of a script and Redis's reply to it, as raw RESP.
type scriptStep struct {
	args []string
	want string
}

func newKeyspaceClient(t *testing.T) *Client {
	t.Helper()
	ks, _, err := recovery.Open(recovery.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ks.Close(); err != nil {
			t.Error(err)
		}
	})
	return &Client{KS: ks}
}

// ownCommandTable maps a lower-case command name (or "container|sub") to
// its table entry: every data command (strings, keys, hashes, lists, sets,
// sorted sets); the server's own commands need a connection.
func ownCommandTable() map[string]Command {
	m := make(map[string]Command)
	var all []Command
	for _, group := range [][]Command{stringCommands(), bitopCommands(), keyCommands(), dumpCommands(), hashCommands(), listCommands(), setCommands(), zsetCommands(), roaringCommands()} {
		all = append(all, group...)
	}
	for _, cmd := range all {
		m[cmd.Name] = cmd
		for _, sub := range cmd.Subcommands {
			m[sub.Name] = sub
		}
	}
	return m
}

var ownCommands = ownCommandTable()

// cmdReply runs one command the way the server dispatches it (lookup, container,
// arity, lock) and returns its reply. SELECT is handled here, since the
// server owns it. There is no connection, so blocking commands answer as
// inside MULTI.
func cmdReply(t *testing.T, c *Client, args ...string) string {
	t.Helper()
	name := strings.ToLower(args[0])
	if name == "select" {
		db, err := strconv.Atoi(args[1])
		if err != nil {
			t.Fatalf("SELECT %q", args[1])
		}
		c.DB = db
		return "+OK\r\n"
	}
	cmd, ok := ownCommands[name]
	if !ok {
		var b strings.Builder
		for _, a := range args[1:] {
			fmt.Fprintf(&b, "'%s' ", a)
		}
		return "-ERR unknown command '" + args[0] + "', with args beginning with: " + b.String() + "\r\n"
	}
	if len(cmd.Subcommands) > 0 && len(args) >= 2 {
		sub, ok := ownCommands[name+"|"+strings.ToLower(args[1])]
		if !ok {
			return "-ERR unknown subcommand '" + args[1] + "'. Try " + strings.ToUpper(name) + " HELP.\r\n"
		}
		cmd = sub
	}
	if (cmd.Arity > 0 && len(args) != cmd.Arity) || (cmd.Arity < 0 && len(args) < -cmd.Arity) {
		return "-" + WrongArgs(cmd.Name) + "\r\n"
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	c.Out = c.Out[:0]
	if !cmd.NoLock {
		c.KS.Lock()
		defer c.KS.Unlock()
	}
	cmd.Run(c, argv)
	return string(c.Out)
}

// runRecordedScripts runs each script on a fresh keyspace. A command name
// written "~NAME" has a reply whose order Redis does not define: it is
// compared as a set of elements.
func runRecordedScripts(t *testing.T, scripts []struct {
	name  string
	steps []scriptStep
}) {
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			c := newKeyspaceClient(t)
			for i, st := range sc.steps {
				args := append([]string(nil), st.args...)
				unordered := strings.HasPrefix(args[0], "~")
				args[0] = strings.TrimPrefix(args[0], "~")
				got, want := cmdReply(t, c, args...), st.want
				if unordered {
					got, want = setUnorderedRESP(got), setUnorderedRESP(want)
				}
				if got != want {
					t.Errorf("step %d %q:\n got %q\nwant %q", i, st.args, got, want)
				}
			}
		})
	}
}

// sortedBulks splits a flat RESP array of bulk strings into its elements
// (sorted), for replies whose order is not defined.
func sortedBulks(t *testing.T, resp string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(resp, "\r\n"), "\r\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "*") {
		t.Fatalf("not an array: %q", resp)
	}
	var out []string
	for i := 2; i < len(lines); i += 2 {
		out = append(out, lines[i])
	}
	sort.Strings(out)
	return out
}

func TestCommandTableMetadata(t *testing.T) {
	seen := map[string]bool{}
	for _, cmd := range append(stringCommands(), keyCommands()...) {
		if seen[cmd.Name] {
			t.Errorf("duplicate command %q", cmd.Name)
		}
		seen[cmd.Name] = true
		if cmd.Name != strings.ToLower(cmd.Name) || cmd.Arity == 0 || cmd.Group == "" || cmd.Since == "" || cmd.Summary == "" {
			t.Errorf("incomplete entry %+v", cmd)
		}
		if (cmd.Run == nil) == (len(cmd.Subcommands) == 0) {
			t.Errorf("%s: want a Run or subcommands, not both", cmd.Name)
		}
		if cmd.FirstKey == 0 && (cmd.LastKey != 0 || cmd.Step != 0) {
			t.Errorf("%s: key positions without a first key", cmd.Name)
		}
	}
}

func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

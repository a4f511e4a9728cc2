package server

import (
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/recovery"
)

// testFamilies is the command families' table (commands.Table()), which
// this package cannot import: families_ext_test.go sets it from the
// external test package before any test runs.
var testFamilies []Command

// SetTestFamilies is for families_ext_test.go.
func SetTestFamilies(f []Command) { testFamilies = f }

// familyReply runs one family command (from testFamilies, no subcommands)
// on c under the keyspace lock, as dispatch does, and returns its reply.
func familyReply(t *testing.T, c *Client, args ...string) string {
	t.Helper()
	c.KS.Lock()
	defer c.KS.Unlock()
	return familyRun(t, c, args...)
}

// familyRun is familyReply with the keyspace lock held by the caller.
func familyRun(t *testing.T, c *Client, args ...string) string {
	t.Helper()
	var cmd *Command
	for i := range testFamilies {
		if strings.EqualFold(testFamilies[i].Name, args[0]) {
			cmd = &testFamilies[i]
		}
	}
	if cmd == nil {
		t.Fatalf("no family command %q", args[0])
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	c.Out = c.Out[:0]
	cmd.Run(c, argv)
	return string(c.Out)
}

// newKeyspaceClient is a connectionless client over a fresh keyspace.
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

// The families reached the tests (a nil table would make every test that
// runs SET or LPUSH answer "unknown command" instead of testing it).
func TestFamiliesLinked(t *testing.T) {
	table := newCommandTable(testFamilies)
	for _, name := range []string{"set", "lpush", "zadd", "xadd", "tr.setbit"} {
		if table[name] == nil {
			t.Errorf("%s is not in the table", name)
		}
	}
}

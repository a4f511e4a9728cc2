package server

import (
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
)

// MODULE answers as redis-server 7.0.15 without modules and with its
// default enable-module-command no (replies taken from it): LIST is empty
// (a tool probing for modules no longer gets ERR unknown command), LOAD,
// LOADEX and UNLOAD are refused as protected, arity and unknown
// subcommands are Redis's errors.
func TestModuleCommand(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	w := dialAddr(t, s.addr)
	const notAllowed = `-ERR MODULE command not allowed. If the enable-module-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.` + "\r\n"
	script(t, w, [][2]string{
		{"module list", "*0\r\n"},
		{"module list x", "-ERR wrong number of arguments for 'module|list' command\r\n"},
		{"module load /nonexistent.so", notAllowed},
		{"module loadex /nonexistent.so CONFIG a b ARGS x", notAllowed},
		{"module unload foo", notAllowed},
		{"module unload", "-ERR wrong number of arguments for 'module|unload' command\r\n"},
		{"module foo", "-ERR unknown subcommand 'foo'. Try MODULE HELP.\r\n"},
		{"module", "-ERR wrong number of arguments for 'module' command\r\n"},
	})
	if got := w.do("MODULE", "HELP"); got[:5] != "*11\r\n" {
		t.Fatalf("MODULE HELP = %q", got)
	}
	w.do("HELLO", "3")
	if got := w.do("MODULE", "LIST"); got != "*0\r\n" {
		t.Fatalf("MODULE LIST in RESP3 = %q", got)
	}
}

package server

import (
	"strconv"
	"strings"
	"time"
)

// DEBUG, allowed as in Redis 7.0 only when enable-debug-command is yes
// (or local, from a loopback client): the subcommands Redis's test suite uses where they are harmless
// here. SLEEP stops the connection (and, in loop mode, the loop) as long
// as Redis stops its server; LOG writes a line to the server log; JMAP,
// QUICKLIST-PACKED-THRESHOLD and CHANGE-REPL-ID tune or report mechanisms
// Persimmon does not have, and answer OK as Redis does after checking
// their arguments. Not here yet: OBJECT, RELOAD, DIGEST, SET-ACTIVE-EXPIRE
// (an OK that did not stop active expiry would mislead a test).

func debugCommands() []Command {
	return []Command{{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
		Group: "server", Since: "1.0.0", Summary: "A container for debugging commands.", Run: debugCommand, NoLock: true,
		ACL: []string{"@dangerous"}}}
}

func debugCommand(c *Client, args [][]byte) {
	if !c.Srv.protectedActionAllowed(c, "enable-debug-command") {
		c.WriteError(`ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`)
		return
	}
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub == "help":
		writeHelp(c, "DEBUG", []string{
			"SLEEP <seconds>",
			"    Stop the server for <seconds>. Decimals allowed.",
			"LOG <message>",
			"    Write <message> to the server log.",
			"JMAP",
			"    Answers OK (Persimmon has no jemalloc map to print).",
			"QUICKLIST-PACKED-THRESHOLD <size>",
			"    Answers OK after checking <size> (Persimmon's lists have no quicklist).",
			"CHANGE-REPL-ID",
			"    Answers OK.",
		})
	case sub == "sleep" && len(args) == 3:
		secs, err := strconv.ParseFloat(string(args[2]), 64)
		if err != nil || secs < 0 {
			c.WriteError("ERR value is not a valid float")
			return
		}
		time.Sleep(time.Duration(secs * float64(time.Second)))
		c.WriteOK()
	case sub == "log" && len(args) == 3:
		c.Srv.logf("DEBUG LOG: %s", args[2])
		c.WriteOK()
	case sub == "jmap" && len(args) == 2, sub == "change-repl-id" && len(args) == 2:
		c.WriteOK()
	case sub == "quicklist-packed-threshold" && len(args) == 3:
		if _, err := memToBytes(string(args[2])); err != nil {
			c.WriteError("ERR argument must be a memory value")
			return
		}
		c.WriteOK()
	default:
		c.WriteError("ERR unknown subcommand '" + string(args[1]) + "'. Try DEBUG HELP.")
	}
}

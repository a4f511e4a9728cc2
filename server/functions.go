package server

// The FUNCTION family (Redis 7.0 functions). Persimmon has no function
// libraries yet (FUNCTION LOAD and FCALL are not implemented), so the only
// subcommand is FLUSH: deleting every library of a server that holds none
// is what Redis does too, and Redis's test harness runs it before every
// unit. The other subcommands answer Redis's unknown-subcommand error until
// libraries exist.

func functionCommands() []Command {
	return []Command{
		{Name: "function", Arity: -2, Group: "scripting", Since: "7.0.0",
			Summary: "A container for function commands", Subcommands: []Command{
				{Name: "function|flush", Arity: -2, Flags: FlagWrite | FlagNoScript, Group: "scripting", Since: "7.0.0",
					Summary: "Deleting all functions", Run: functionFlushCommand,
					Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}},
			}},
	}
}

// functionFlushCommand: FUNCTION FLUSH [ASYNC|SYNC]. There are no libraries
// to delete; the arguments are checked as Redis checks them.
func functionFlushCommand(c *Client, args [][]byte) {
	switch {
	case len(args) > 3:
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try FUNCTION HELP.")
	case len(args) == 3 && !ArgIs(args[2], "async") && !ArgIs(args[2], "sync"):
		c.WriteError("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
	default:
		c.WriteOK()
	}
}

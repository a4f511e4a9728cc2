package server

// lolwutCommands is LOLWUT (semantics: redis.io LOLWUT). Redis 7.0 draws
// computer art only for VERSION 5 and 6 and otherwise answers its version
// line; Persimmon answers the version line for every version (the art is
// random in Redis too, so no client can depend on its pixels).
func lolwutCommands() []Command {
	return []Command{
		{Name: "lolwut", Arity: -1, Flags: FlagReadonly | FlagFast, Group: "server", Since: "5.0.0",
			Summary: "Display some computer art and the Redis version", Run: cmdLolwut, NoLock: true},
	}
}

// cmdLolwut: LOLWUT [VERSION version] [...]: a verbatim "Redis ver. X\n";
// a VERSION that is not an integer is an error, as in Redis.
func cmdLolwut(c *Client, args [][]byte) {
	if len(args) >= 3 && ArgIs(args[1], "version") {
		if _, ok := ParseInt64(args[2]); !ok {
			c.WriteError(ErrNotInteger)
			return
		}
	}
	c.WriteVerbatimString("txt", "Redis ver. "+Version+"\n")
}

package server

// MODULE: Persimmon loads no modules (it is not a C host for Redis's
// module API), but tools and client libraries ask MODULE LIST to find
// out which modules a server has, so the container answers as a Redis
// 7.0 without modules: LIST is an empty array; LOAD, LOADEX and UNLOAD
// are protected by enable-module-command (immutable, default no) with
// Redis's refusal (dispatch.go), and where it allows them they fail as
// Redis's do when the library cannot be loaded or no module has the name.

const (
	errModuleNotAllowed = `ERR MODULE command not allowed. If the enable-module-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`
	errModuleLoad       = "ERR Error loading the extension. Please check the server logs."
	errModuleUnload     = "ERR Error unloading module: no such module with that name"
)

func moduleSubcommands() []Command {
	const loadFlags = FlagAdmin | FlagNoScript | FlagNoAsyncLoading
	return []Command{
		{Name: "module|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "server", Since: "5.0.0",
			Summary: "Show helpful text about the different subcommands", Run: moduleHelpCommand, NoLock: true},
		{Name: "module|list", Arity: 2, Flags: FlagAdmin | FlagNoScript, Group: "server", Since: "4.0.0",
			Summary: "List all modules loaded by the server", Run: moduleListCommand, NoLock: true,
			Tips: []string{"nondeterministic_output_order"}},
		{Name: "module|load", Arity: -3, Flags: loadFlags, Group: "server", Since: "4.0.0",
			Summary: "Load a module", Run: moduleLoadCommand, NoLock: true},
		{Name: "module|loadex", Arity: -3, Flags: loadFlags, Group: "server", Since: "7.0.0",
			Summary: "Load a module with extended parameters", Run: moduleLoadCommand, NoLock: true},
		{Name: "module|unload", Arity: 3, Flags: loadFlags, Group: "server", Since: "4.0.0",
			Summary: "Unload a module", Run: moduleUnloadCommand, NoLock: true},
	}
}

// moduleProtected reports whether cmd is one of the MODULE subcommands
// that enable-module-command guards (Redis's CMD_PROTECTED ones).
func moduleProtected(cmd *Command) bool {
	switch cmd.Name {
	case "module|load", "module|loadex", "module|unload":
		return true
	}
	return false
}

func moduleHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "MODULE", []string{ // Redis 7.0's lines
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.",
	})
}

// MODULE LIST: no module is ever loaded.
func moduleListCommand(c *Client, _ [][]byte) { c.WriteArray(0) }

// MODULE LOAD path [arg ...], MODULE LOADEX path ...: allowed by
// enable-module-command, they fail as a library Redis cannot load does.
func moduleLoadCommand(c *Client, _ [][]byte) {
	c.Srv.logf("MODULE LOAD: Persimmon does not load Redis modules")
	c.WriteError(errModuleLoad)
}

// MODULE UNLOAD name: there is no module of any name.
func moduleUnloadCommand(c *Client, _ [][]byte) { c.WriteError(errModuleUnload) }

package server

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/persimmon-db/persimmon/proto"
)

// newCommandTable builds the one command table from the server's own
// commands and the families: dispatch, arity checks, locking, MULTI
// queueing and COMMAND's replies all read it. A name registered twice
// panics at start-up.
func newCommandTable(families []Command) map[string]*Command {
	const (
		connFlags  = FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy
		txnFlags   = FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy
		adminFlags = FlagAdmin | FlagNoScript | FlagLoading | FlagStale
		clientSub  = FlagNoScript | FlagLoading | FlagStale
	)
	var (
		connCat   = []string{"@connection"}                   // COMMAND is in @connection too
		unordered = []string{"nondeterministic_output_order"} // tip
	)
	cmds := []Command{
		// connection
		{Name: "ping", Arity: -1, Flags: FlagFast, Group: "connection", Since: "1.0.0",
			Summary: "Returns the server's liveliness response.", Run: pingCommand, NoLock: true,
			Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}},
		{Name: "echo", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, Group: "connection", Since: "1.0.0",
			Summary: "Returns the given string.", Run: echoCommand, NoLock: true},
		{Name: "select", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, Group: "connection", Since: "1.0.0",
			Summary: "Changes the selected database.", Run: selectCommand, NoLock: true},
		{Name: "auth", Arity: -2, Flags: connFlags, Group: "connection", Since: "1.0.0",
			Summary: "Authenticates the connection.", Run: authCommand, NoLock: true},
		{Name: "hello", Arity: -1, Flags: connFlags, Group: "connection", Since: "6.0.0",
			Summary: "Handshakes with the Redis server.", Run: helloCommand, NoLock: true},
		{Name: "quit", Arity: -1, Flags: connFlags, Group: "connection", Since: "1.0.0",
			Summary: "Closes the connection.", Run: quitCommand, NoLock: true, Immediate: true},
		{Name: "reset", Arity: 1, Flags: connFlags, Group: "connection", Since: "6.2.0",
			Summary: "Resets the connection.", Run: resetCommand, Immediate: true},
		{Name: "client", Arity: -2, Group: "connection", Since: "2.4.0",
			Summary: "A container for client connection commands.", Subcommands: []Command{
				{Name: "client|id", Arity: 2, Flags: clientSub, Group: "connection", Since: "5.0.0",
					Summary: "Returns the unique client ID of the connection.", Run: clientIDCommand, NoLock: true},
				{Name: "client|getname", Arity: 2, Flags: clientSub, Group: "connection", Since: "2.6.9",
					Summary: "Returns the name of the connection.", Run: clientGetnameCommand, NoLock: true},
				{Name: "client|setname", Arity: 3, Flags: clientSub, Group: "connection", Since: "2.6.9",
					Summary: "Sets the connection name.", Run: clientSetnameCommand, NoLock: true},
				{Name: "client|setinfo", Arity: 4, Flags: clientSub, Group: "connection", Since: "7.2.0",
					Summary: "Sets information specific to the client or connection.", Run: clientSetinfoCommand, NoLock: true},
				{Name: "client|info", Arity: 2, Flags: clientSub, Group: "connection", Since: "6.2.0",
					Summary: "Returns information about the connection.", Run: clientInfoCommand, NoLock: true,
					Tips: []string{"nondeterministic_output"}},
				{Name: "client|list", Arity: -2, Flags: adminFlags, Group: "connection", Since: "2.4.0",
					Summary: "Lists open connections.", Run: clientListCommand, NoLock: true,
					Tips: []string{"nondeterministic_output"}},
				{Name: "client|kill", Arity: -3, Flags: adminFlags, Group: "connection", Since: "2.4.0",
					Summary: "Terminates open connections.", Run: clientKillCommand, NoLock: true},
				{Name: "client|unblock", Arity: -3, Flags: adminFlags, Group: "connection", Since: "5.0.0",
					Summary: "Unblock a client blocked in a blocking command from a different connection", Run: clientUnblockCommand, NoLock: true},
				{Name: "client|reply", Arity: 3, Flags: clientSub, Group: "connection", Since: "3.2.0",
					Summary: "Instructs the server whether to reply to commands.", Run: clientReplyCommand, NoLock: true},
				{Name: "client|no-evict", Arity: 3, Flags: adminFlags, Group: "connection", Since: "7.0.0",
					Summary: "Sets the client eviction mode of the connection.", Run: clientNoEvictCommand, NoLock: true},
				{Name: "client|pause", Arity: -3, Flags: adminFlags, Group: "connection", Since: "2.9.50",
					Summary: "Suspends commands processing.", Run: clientPauseCommand, NoLock: true},
				{Name: "client|unpause", Arity: 2, Flags: adminFlags, Group: "connection", Since: "6.2.0",
					Summary: "Resumes processing commands from paused clients.", Run: clientUnpauseCommand, NoLock: true},
				{Name: "client|tracking", Arity: -3, Flags: clientSub, Group: "connection", Since: "6.0.0",
					Summary: "Controls server-assisted client-side caching for the connection.", Run: clientTrackingCommand, NoLock: true},
				{Name: "client|caching", Arity: 3, Flags: clientSub, Group: "connection", Since: "6.0.0",
					Summary: "Instructs the server whether to track the keys in the next request.", Run: clientCachingCommand, NoLock: true},
				{Name: "client|getredir", Arity: 2, Flags: clientSub, Group: "connection", Since: "6.0.0",
					Summary: "Returns the client ID to which the connection's tracking notifications are redirected.", Run: clientGetredirCommand, NoLock: true},
				{Name: "client|trackinginfo", Arity: 2, Flags: clientSub, Group: "connection", Since: "6.2.0",
					Summary: "Returns information about server-assisted client-side caching for the connection.", Run: clientTrackinginfoCommand, NoLock: true},
				{Name: "client|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "connection", Since: "5.0.0",
					Summary: "Returns helpful text about the different subcommands.", Run: clientHelpCommand, NoLock: true},
			}},

		// server
		{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Group: "server", Since: "2.6.0",
			Summary: "Returns the server time.", Run: timeCommand, NoLock: true,
			Tips: []string{"nondeterministic_output"}},
		{Name: "info", Arity: -1, Flags: FlagLoading | FlagStale, Group: "server", Since: "1.0.0",
			Summary: "Returns information and statistics about the server.", Run: infoCommand, NoLock: true,
			ACL: []string{"@dangerous"}, Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}},
		{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagNoMulti, Group: "server", Since: "1.0.0",
			Summary: "Synchronously saves the database(s) to disk.", Run: saveCommand, NoLock: true},
		{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading, Group: "server", Since: "1.0.0",
			Summary: "Asynchronously saves the database(s) to disk.", Run: bgsaveCommand, NoLock: true},
		{Name: "bgrewriteaof", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading, Group: "server", Since: "1.0.0",
			Summary: "Asynchronously rewrite the append-only file", Run: bgrewriteaofCommand, NoLock: true},
		{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Group: "server", Since: "1.0.0",
			Summary: "Returns the Unix timestamp of the last successful save to disk.", Run: lastsaveCommand, NoLock: true,
			ACL: []string{"@admin", "@dangerous"}, Tips: []string{"nondeterministic_output"}},
		{Name: "role", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast, Group: "server", Since: "2.8.12",
			Summary: "Returns the replication role.", Run: roleCommand, NoLock: true, ACL: []string{"@admin", "@dangerous"}},
		{Name: "replconf", Arity: -1, Flags: adminFlags | FlagAllowBusy, Group: "server", Since: "3.0.0",
			Summary: "An internal command for configuring the replication stream.", Run: replconfCommand, NoLock: true},
		{Name: "psync", Arity: -3, Flags: adminFlags | FlagNoMulti | FlagNoAsyncLoading, Group: "server", Since: "2.8.0",
			Summary: "An internal command used in replication.", Run: psyncCommand, NoLock: true},
		{Name: "sync", Arity: 1, Flags: adminFlags | FlagNoMulti | FlagNoAsyncLoading, Group: "server", Since: "1.0.0",
			Summary: "An internal command used in replication.", Run: syncCommand, NoLock: true},
		{Name: "replicaof", Arity: 3, Flags: adminFlags | FlagNoAsyncLoading, Group: "server", Since: "5.0.0",
			Summary: "Configures a server as replica of another, or promotes it to a master.", Run: replicaofCommand, NoLock: true},
		{Name: "slaveof", Arity: 3, Flags: adminFlags | FlagNoAsyncLoading, Group: "server", Since: "1.0.0",
			Summary: "Sets a Redis server as a replica of another, or promotes it to being a master.", Run: replicaofCommand, NoLock: true},
		{Name: "wait", Arity: 3, Flags: FlagNoScript, Group: "generic", Since: "3.0.0",
			Summary: "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.",
			Run:     waitCommand, NoLock: true, ACL: []string{"@connection", "-@keyspace"},
			Tips: []string{"request_policy:all_shards", "response_policy:agg_min"}},
		{Name: "failover", Arity: -1, Flags: adminFlags | FlagNoScript | FlagStale, Group: "server", Since: "6.2.0",
			Summary: "Start a coordinated failover between this server and one of its replicas.", Run: failoverCommand, NoLock: true},
		{Name: "waitaof", Arity: 4, Flags: FlagNoScript, Group: "generic", Since: "7.2.0",
			Summary: "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas.",
			Run:     waitaofCommand, NoLock: true, ACL: []string{"@connection", "-@keyspace"},
			Tips: []string{"request_policy:all_shards", "response_policy:agg_min"}},
		{Name: "module", Arity: -2, Group: "server", Since: "4.0.0",
			Summary: "A container for module commands", Subcommands: moduleSubcommands()},
		{Name: "shutdown", Arity: -1, Flags: adminFlags | FlagNoMulti | FlagAllowBusy, Group: "server", Since: "1.0.0",
			Summary: "Makes every write durable, then shuts down the server.", Run: shutdownCommand, NoLock: true},
		{Name: "config", Arity: -2, Group: "server", Since: "2.0.0",
			Summary: "A container for server configuration commands.", Subcommands: []Command{
				{Name: "config|get", Arity: -3, Flags: adminFlags, Group: "server", Since: "2.0.0",
					Summary: "Returns the effective values of configuration parameters.", Run: configGetCommand, NoLock: true},
				{Name: "config|set", Arity: -4, Flags: adminFlags, Group: "server", Since: "2.0.0",
					Summary: "Sets configuration parameters in-flight.", Run: configSetCommand, NoLock: true,
					Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}},
				{Name: "config|rewrite", Arity: 2, Flags: adminFlags, Group: "server", Since: "2.8.0",
					Summary: "Persists the effective configuration to file.", Run: configRewriteCommand, NoLock: true},
				{Name: "config|resetstat", Arity: 2, Flags: adminFlags, Group: "server", Since: "2.0.0",
					Summary: "Resets the server's statistics.", Run: configResetstatCommand, NoLock: true},
				{Name: "config|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "server", Since: "5.0.0",
					Summary: "Returns helpful text about the different subcommands.", Run: configHelpCommand, NoLock: true},
			}},
		{Name: "command", Arity: -1, Flags: FlagLoading | FlagStale, Group: "server", Since: "2.8.13",
			Summary: "Returns detailed information about all commands.", Run: commandCommand, NoLock: true,
			ACL: connCat, Tips: unordered, Subcommands: []Command{
				{Name: "command|count", Arity: 2, Flags: FlagLoading | FlagStale, Group: "server", Since: "2.8.13",
					Summary: "Returns a count of commands.", Run: commandCountCommand, NoLock: true, ACL: connCat},
				{Name: "command|info", Arity: -2, Flags: FlagLoading | FlagStale, Group: "server", Since: "2.8.13",
					Summary: "Returns information about one, multiple or all commands.", Run: commandInfoCommand, NoLock: true,
					ACL: connCat, Tips: unordered},
				{Name: "command|docs", Arity: -2, Flags: FlagLoading | FlagStale, Group: "server", Since: "7.0.0",
					Summary: "Returns documentary information about one, multiple or all commands.", Run: commandDocsCommand, NoLock: true,
					ACL: connCat, Tips: unordered},
				{Name: "command|list", Arity: -2, Flags: FlagLoading | FlagStale, Group: "server", Since: "7.0.0",
					Summary: "Returns a list of command names.", Run: commandListCommand, NoLock: true,
					ACL: connCat, Tips: unordered},
				{Name: "command|getkeys", Arity: -4, Flags: FlagLoading | FlagStale, Group: "server", Since: "2.8.13",
					Summary: "Extracts the key names from an arbitrary command.", Run: commandGetkeysCommand, NoLock: true, ACL: connCat},
				{Name: "command|getkeysandflags", Arity: -4, Flags: FlagLoading | FlagStale, Group: "server", Since: "7.0.0",
					Summary: "Extract keys and access flags given a full Redis command", Run: commandGetkeysandflagsCommand, NoLock: true, ACL: connCat},
				{Name: "command|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "server", Since: "5.0.0",
					Summary: "Returns helpful text about the different subcommands.", Run: commandHelpCommand, NoLock: true, ACL: connCat},
			}},

		// transactions
		{Name: "multi", Arity: 1, Flags: txnFlags, Group: "transactions", Since: "1.2.0",
			Summary: "Starts a transaction.", Run: multiCommand, NoLock: true, Immediate: true},
		{Name: "exec", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagSkipSlowlog, Group: "transactions", Since: "1.2.0",
			Summary: "Executes all commands in a transaction.", Run: execCommand, NoLock: true, Immediate: true},
		{Name: "discard", Arity: 1, Flags: txnFlags, Group: "transactions", Since: "2.0.0",
			Summary: "Discards a transaction.", Run: discardCommand, Immediate: true},
		{Name: "watch", Arity: -2, Flags: txnFlags, FirstKey: 1, LastKey: -1, Step: 1, Group: "transactions", Since: "2.2.0",
			Summary: "Monitors changes to keys to determine the execution of a transaction.", Run: watchCommand, Immediate: true,
			KeySpecs: []KeySpec{KeyRange(KeyRO, 1, -1, 1)}},
		{Name: "unwatch", Arity: 1, Flags: txnFlags, Group: "transactions", Since: "2.2.0",
			Summary: "Forgets about watched keys of a transaction.", Run: unwatchCommand},
	}
	cmds = append(cmds, slowlogCommands()...)
	cmds = append(cmds, latencyCommands()...)
	cmds = append(cmds, pubsubCommands()...)
	cmds = append(cmds, monitorCommands()...)
	cmds = append(cmds, memoryCommands()...)
	cmds = append(cmds, lolwutCommands()...)
	cmds = append(cmds, clusterCommands()...)
	cmds = append(cmds, scriptingCommands()...)
	cmds = append(cmds, functionCommands()...)
	cmds = append(cmds, families...)
	cmds = append(cmds, aclCommands()...)
	return buildTable(cmds)
}

// buildTable indexes cmds by name, checking each entry. It panics on a
// duplicate or malformed entry: the table is fixed at build time.
func buildTable(cmds []Command) map[string]*Command {
	table := make(map[string]*Command, len(cmds))
	for i := range cmds {
		cmd := new(Command)
		*cmd = cmds[i]
		checkEntry(cmd, "")
		if _, dup := table[cmd.Name]; dup {
			panic(fmt.Errorf("server: command %q is registered twice in the command table", cmd.Name))
		}
		cmd.stats = new(cmdStats)
		cmd.fixedKeys = hasFixedKeys(cmd)
		if len(cmd.Subcommands) > 0 {
			cmd.subs = make(map[string]*Command, len(cmd.Subcommands))
			for j := range cmd.Subcommands {
				sub := &cmd.Subcommands[j]
				checkEntry(sub, cmd.Name)
				short := strings.TrimPrefix(sub.Name, cmd.Name+"|")
				if _, dup := cmd.subs[short]; dup {
					panic(fmt.Errorf("server: command %q is registered twice in the command table", sub.Name))
				}
				sub.stats = new(cmdStats)
				sub.fixedKeys = hasFixedKeys(sub)
				cmd.subs[short] = sub
			}
		}
		table[cmd.Name] = cmd
	}
	return table
}

func checkEntry(cmd *Command, container string) {
	switch {
	case cmd.Name == "" || cmd.Name != strings.ToLower(cmd.Name):
		panic(fmt.Errorf("server: command table entry %q: the name must be lower case and not empty", cmd.Name))
	case container == "" && strings.Contains(cmd.Name, "|"):
		panic(fmt.Errorf("server: command table entry %q: only subcommands have a '|' in their name", cmd.Name))
	case container != "" && !strings.HasPrefix(cmd.Name, container+"|"):
		panic(fmt.Errorf("server: subcommand %q of %q must be named %q", cmd.Name, container, container+"|<sub>"))
	case container != "" && len(cmd.Subcommands) > 0:
		panic(fmt.Errorf("server: subcommand %q cannot have subcommands", cmd.Name))
	case cmd.Run == nil && len(cmd.Subcommands) == 0:
		panic(fmt.Errorf("server: command %q has no handler", cmd.Name))
	case cmd.Arity == 0:
		panic(fmt.Errorf("server: command %q has arity 0", cmd.Name))
	}
	for _, cat := range cmd.ACL {
		if !slices.Contains(aclCategoryOrder, strings.TrimPrefix(cat, "-")) {
			panic(fmt.Errorf("server: command %q: unknown ACL category %q", cmd.Name, cat))
		}
	}
	for i, sp := range cmd.KeySpecs {
		if sp.Unknown {
			if sp.Index != 0 || sp.Keyword != "" {
				panic(fmt.Errorf("server: command %q: key spec %d is unknown but has an index or a keyword", cmd.Name, i))
			}
			continue
		}
		if (sp.Index > 0) == (sp.Keyword != "") || sp.KeyStep < 1 || sp.Limit < 0 {
			panic(fmt.Errorf("server: command %q: key spec %d needs an index or a keyword (not both) and a key step", cmd.Name, i))
		}
	}
}

func sortedCommands(table map[string]*Command) []*Command {
	out := make([]*Command, 0, len(table))
	for _, cmd := range table {
		out = append(out, cmd)
	}
	slices.SortFunc(out, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ---- COMMAND: the table as clients see it (semantics: redis.io/commands/command) ----

// flagNames maps each flag bit to its COMMAND INFO name, in Redis's order.
var flagNames = []struct {
	bit  int
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"}, {FlagBlocking, "blocking"},
	{FlagLoading, "loading"}, {FlagStale, "stale"}, {FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"},
	{FlagAsking, "asking"}, {FlagFast, "fast"},
	{FlagNoAuth, "no_auth"}, {FlagNoMandatoryKeys, "no_mandatory_keys"},
	{FlagNoAsyncLoading, "no_async_loading"}, {FlagNoMulti, "no_multi"}, {FlagMovableKeys, "movablekeys"},
	{FlagAllowBusy, "allow_busy"},
}

// groupCategory is the ACL category of each redis.io command group.
var groupCategory = map[string]string{
	"generic":      "@keyspace",
	"string":       "@string",
	"bitmap":       "@bitmap",
	"hash":         "@hash",
	"list":         "@list",
	"set":          "@set",
	"sorted-set":   "@sortedset",
	"stream":       "@stream",
	"connection":   "@connection",
	"transactions": "@transaction",
	"scripting":    "@scripting",
	"hyperloglog":  "@hyperloglog",
	"geo":          "@geo",
}

// aclCategoryOrder is the order Redis lists categories in (its bit order).
var aclCategoryOrder = []string{
	"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash",
	"@string", "@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub",
	"@admin", "@fast", "@slow", "@blocking", "@dangerous", "@connection",
	"@transaction", "@scripting",
}

// aclCategories derives a command's ACL categories from its flags and
// group, in Redis's order.
func aclCategories(cmd *Command) []string {
	has := map[string]bool{}
	if cmd.Flags&FlagWrite != 0 {
		has["@write"] = true
	}
	if cmd.Flags&FlagReadonly != 0 && cmd.Group != "scripting" { // Redis leaves EVAL_RO out of @read
		has["@read"] = true
	}
	// Redis gives a container (CLIENT, OBJECT) no category of its group.
	if g, ok := groupCategory[cmd.Group]; ok && len(cmd.Subcommands) == 0 {
		has[g] = true
	}
	for _, c := range cmd.ACL {
		if strings.HasPrefix(c, "-") {
			delete(has, c[1:])
		} else {
			has[c] = true
		}
	}
	if cmd.Flags&FlagAdmin != 0 {
		has["@admin"] = true
		has["@dangerous"] = true
	}
	if cmd.Flags&FlagFast != 0 {
		has["@fast"] = true
	} else {
		has["@slow"] = true
	}
	if cmd.Flags&FlagBlocking != 0 {
		has["@blocking"] = true
	}
	var cats []string
	for _, c := range aclCategoryOrder {
		if has[c] {
			cats = append(cats, c)
		}
	}
	return cats
}

// lastKeyIndex resolves LastKey for a request of n arguments.
func lastKeyIndex(cmd *Command, n int) int {
	if cmd.LastKey < 0 {
		return n + cmd.LastKey
	}
	return cmd.LastKey
}

// appendCommandInfo appends one COMMAND INFO entry, Redis 7's shape:
// [name, arity, [flags], first, last, step, [acl categories], [tips],
// [key specs], [subcommands]].
func appendCommandInfo(w *proto.Writer, cmd *Command) {
	w.WriteArray(10)
	w.WriteBulkString(cmd.Name)
	w.WriteInt(int64(cmd.Arity))
	n := 0
	for _, f := range flagNames {
		if cmd.Flags&f.bit != 0 {
			n++
		}
	}
	w.WriteSet(n)
	for _, f := range flagNames {
		if cmd.Flags&f.bit != 0 {
			w.WriteString(f.name)
		}
	}
	w.WriteInt(int64(cmd.FirstKey))
	w.WriteInt(int64(cmd.LastKey))
	w.WriteInt(int64(cmd.Step))
	cats := aclCategories(cmd)
	w.WriteSet(len(cats))
	for _, cat := range cats {
		w.WriteString(cat)
	}
	w.WriteSet(len(cmd.Tips))
	for _, tip := range cmd.Tips {
		w.WriteBulkString(tip)
	}
	specs := keySpecsOf(cmd)
	w.WriteSet(len(specs))
	for i := range specs {
		appendKeySpec(w, &specs[i])
	}
	if len(cmd.Subcommands) == 0 {
		w.WriteSet(0) // as Redis 7.0 (addReplyCommandSubCommands)
	} else {
		w.WriteArray(len(cmd.Subcommands))
	}
	for i := range cmd.Subcommands {
		appendCommandInfo(w, &cmd.Subcommands[i])
	}
}

// keySpecFlagNames maps each key spec flag to its COMMAND INFO name, in
// Redis's order.
var keySpecFlagNames = []struct {
	bit  int
	name string
}{
	{KeyRO, "RO"}, {KeyRW, "RW"}, {KeyOW, "OW"}, {KeyRM, "RM"},
	{KeyAccess, "access"}, {KeyUpdate, "update"}, {KeyInsert, "insert"}, {KeyDelete, "delete"},
	{KeyNotKey, "not_key"}, {KeyIncomplete, "incomplete"}, {KeyVariableFlags, "variable_flags"},
}

// appendKeySpecFlags appends key spec flags as an array of simple strings.
func appendKeySpecFlags(w *proto.Writer, flags int) {
	n := 0
	for _, f := range keySpecFlagNames {
		if flags&f.bit != 0 {
			n++
		}
	}
	w.WriteSet(n)
	for _, f := range keySpecFlagNames {
		if flags&f.bit != 0 {
			w.WriteString(f.name)
		}
	}
}

// keySpecsOf returns cmd's key specs; a command with keys but no specs
// (not one of the table's, which all have them) gets the one spec its
// first/last/step triple describes, "RO access" or, for a write, "RW update".
func keySpecsOf(cmd *Command) []KeySpec {
	if len(cmd.KeySpecs) > 0 || cmd.FirstKey <= 0 {
		return cmd.KeySpecs
	}
	flags := KeyRO | KeyAccess
	if cmd.Flags&FlagWrite != 0 {
		flags = KeyRW | KeyUpdate
	}
	last := cmd.LastKey
	if last >= 0 {
		last -= cmd.FirstKey
	}
	return []KeySpec{{Flags: flags, Index: cmd.FirstKey, LastKey: last, KeyStep: max(cmd.Step, 1)}}
}

// appendKeySpec appends one key spec, Redis 7.0's shape: a map of
// [notes,] flags, begin_search and find_keys.
func appendKeySpec(w *proto.Writer, sp *KeySpec) {
	if sp.Notes != "" {
		w.WriteMap(4)
		w.WriteBulkString("notes")
		w.WriteBulkString(sp.Notes)
	} else {
		w.WriteMap(3)
	}
	w.WriteBulkString("flags")
	appendKeySpecFlags(w, sp.Flags)
	w.WriteBulkString("begin_search")
	w.WriteMap(2)
	w.WriteBulkString("type")
	if sp.Unknown {
		w.WriteBulkString("unknown")
		w.WriteBulkString("spec")
		w.WriteMap(0)
		w.WriteBulkString("find_keys")
		w.WriteMap(2)
		w.WriteBulkString("type")
		w.WriteBulkString("unknown")
		w.WriteBulkString("spec")
		w.WriteMap(0)
		return
	}
	if sp.Keyword == "" {
		w.WriteBulkString("index")
		w.WriteBulkString("spec")
		w.WriteMap(1)
		w.WriteBulkString("index")
		w.WriteInt(int64(sp.Index))
	} else {
		w.WriteBulkString("keyword")
		w.WriteBulkString("spec")
		w.WriteMap(2)
		w.WriteBulkString("keyword")
		w.WriteBulkString(sp.Keyword)
		w.WriteBulkString("startfrom")
		w.WriteInt(int64(sp.StartFrom))
	}
	w.WriteBulkString("find_keys")
	w.WriteMap(2)
	w.WriteBulkString("type")
	if !sp.KeyNum {
		w.WriteBulkString("range")
		w.WriteBulkString("spec")
		w.WriteMap(3)
		w.WriteBulkString("lastkey")
		w.WriteInt(int64(sp.LastKey))
		w.WriteBulkString("keystep")
		w.WriteInt(int64(sp.KeyStep))
		w.WriteBulkString("limit")
		w.WriteInt(int64(sp.Limit))
	} else {
		w.WriteBulkString("keynum")
		w.WriteBulkString("spec")
		w.WriteMap(3)
		w.WriteBulkString("keynumidx")
		w.WriteInt(int64(sp.KeyNumIdx))
		w.WriteBulkString("firstkey")
		w.WriteInt(int64(sp.FirstKey))
		w.WriteBulkString("keystep")
		w.WriteInt(int64(sp.KeyStep))
	}
}

// ---- key spec constructors for the table entries ----

// Key1 is the specs of a command whose one key is argument 1.
func Key1(flags int) []KeySpec { return []KeySpec{KeyAt(flags, 1)} }

// KeyAt is one key at argument index i.
func KeyAt(flags, i int) KeySpec { return KeySpec{Flags: flags, Index: i, KeyStep: 1} }

// KeyRange is keys from argument index i to last (relative to i; negative
// counts from the end: -1 is the last argument) every step.
func KeyRange(flags, i, last, step int) KeySpec {
	return KeySpec{Flags: flags, Index: i, LastKey: last, KeyStep: step}
}

// KeyNumkeys is a numkeys argument at index i followed by that many keys.
func KeyNumkeys(flags, i int) KeySpec {
	return KeySpec{Flags: flags, Index: i, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, KeyStep: 1}
}

// ---- COMMAND GETKEYS: which arguments are keys (semantics: Redis 7.0 db.c) ----

// CommandKeys returns the keys args (the command name first) name, Redis
// 7.0's way: by the key specs when they fit the arguments and have no
// variable flags, else by the command's GetKeys. No keys means the
// arguments are invalid.
func CommandKeys(cmd *Command, args [][]byte) []KeyRef {
	specs := keySpecsOf(cmd)
	hasKey, varFlags := false, false
	for i := range specs {
		hasKey = hasKey || specs[i].Flags&KeyNotKey == 0
		varFlags = varFlags || specs[i].Flags&KeyVariableFlags != 0
	}
	if hasKey && !varFlags {
		if refs, ok := keysFromSpecs(specs, args); ok {
			return refs
		}
	}
	if cmd.GetKeys != nil {
		return cmd.GetKeys(args)
	}
	return nil
}

// keysFromSpecs follows specs over args (getKeysUsingKeySpecs). ok is
// false when a spec does not fit the arguments (a numkeys that is not an
// integer or points past the end, a range out of bounds) or is incomplete.
func keysFromSpecs(specs []KeySpec, args [][]byte) (refs []KeyRef, ok bool) {
	argc := len(args)
	for i := range specs {
		sp := &specs[i]
		if sp.Flags&KeyNotKey != 0 {
			continue
		}
		if sp.Unknown {
			return nil, false // Redis: an invalid spec, so GETKEYS uses getkeys_proc
		}
		first := sp.Index
		if sp.Keyword != "" {
			first = 0
			start, end := sp.StartFrom, 1
			if start > 0 {
				end = argc - 1
			} else {
				start = argc + sp.StartFrom
			}
			for j := start; j != end; {
				if j >= argc || j < 1 {
					break
				}
				if ArgIs(args[j], sp.Keyword) {
					first = j + 1
					break
				}
				if start <= end {
					j++
				} else {
					j--
				}
			}
			if first == 0 {
				continue // keyword not found: no keys from this spec
			}
		}
		var last int
		switch {
		case sp.KeyNum:
			at := first + sp.KeyNumIdx
			if at >= argc {
				return nil, false
			}
			n, ok := ParseInt64(args[at])
			if !ok || n < 0 {
				return nil, false
			}
			first += sp.FirstKey
			last = first + int(int32(n)) - 1 // Redis casts numkeys to int
		case sp.LastKey >= 0:
			last = first + sp.LastKey
		case sp.Limit == 0:
			last = argc + sp.LastKey
		default:
			last = first + ((argc-first)/sp.Limit + sp.LastKey)
		}
		if last >= argc || last < first || first >= argc {
			return nil, false
		}
		for j := first; j <= last; j += max(sp.KeyStep, 1) {
			refs = append(refs, KeyRef{Pos: j, Flags: sp.Flags})
		}
		if sp.Flags&KeyIncomplete != 0 {
			return nil, false
		}
	}
	return refs, true
}

// NumkeysGetKeys is Redis's genericGetKeys for a numkeys argument at index
// count followed by the keys from index first, plus (store > 0) the
// destination key at index store, listed last. numkeys is read the way C's
// atoi does, and a count below 1 or past the arguments gives no keys.
// These keys carry no flags.
func NumkeysGetKeys(store, count, first int) func(args [][]byte) []KeyRef {
	return func(args [][]byte) []KeyRef {
		num := cAtoi(args[count])
		if num < 1 || num > len(args)-first {
			return nil
		}
		refs := make([]KeyRef, 0, num+1)
		for i := range num {
			refs = append(refs, KeyRef{Pos: first + i})
		}
		if store > 0 {
			refs = append(refs, KeyRef{Pos: store})
		}
		return refs
	}
}

// SetGetKeys is Redis's setGetKeys: SET's key is read too ("RW access
// update") when a GET argument follows the value, else overwritten.
func SetGetKeys(args [][]byte) []KeyRef {
	for _, a := range args[min(3, len(args)):] {
		if ArgIs(a, "get") {
			return []KeyRef{{Pos: 1, Flags: KeyRW | KeyAccess | KeyUpdate}}
		}
	}
	return []KeyRef{{Pos: 1, Flags: KeyOW | KeyUpdate}}
}

// cAtoi is C's atoi as glibc implements it, (int)strtol(s, NULL, 10):
// leading white space, an optional sign, digits up to the first other byte
// (or NUL); out-of-range values clamp to the long range, then truncate to
// 32 bits.
func cAtoi(b []byte) int {
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	const limit = uint64(1) << 63
	var v uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if v > limit/10 {
			v = limit
		} else {
			v = min(v*10+uint64(b[i]-'0'), limit)
		}
	}
	var l int64
	switch {
	case neg:
		l = int64(-v) // -2^63 stays -2^63
	case v == limit:
		l = math.MaxInt64
	default:
		l = int64(v)
	}
	return int(int32(l))
}

// commandByName finds "name" or "container|sub", case-insensitively.
func (s *Server) commandByName(name []byte) *Command {
	top, sub, found := strings.Cut(strings.ToLower(string(name)), "|")
	cmd := s.table[top]
	if cmd == nil || !found {
		return cmd
	}
	return cmd.subs[sub]
}

// commandCommand: COMMAND (every entry).
func commandCommand(c *Client, _ [][]byte) {
	c.WriteArray(len(c.Srv.cmdList))
	for _, cmd := range c.Srv.cmdList {
		appendCommandInfo(&c.Writer, cmd)
	}
}

func commandCountCommand(c *Client, _ [][]byte) { c.WriteInt(int64(len(c.Srv.table))) }

// commandInfoCommand: COMMAND INFO [name ...]; an unknown name is a null.
func commandInfoCommand(c *Client, args [][]byte) {
	if len(args) == 2 {
		commandCommand(c, args)
		return
	}
	c.WriteArray(len(args) - 2)
	for _, name := range args[2:] {
		if cmd := c.Srv.commandByName(name); cmd != nil {
			appendCommandInfo(&c.Writer, cmd)
		} else {
			c.WriteNull()
		}
	}
}

// commandDocsCommand: COMMAND DOCS [name ...]; unknown names are left out.
func commandDocsCommand(c *Client, args [][]byte) {
	var cmds []*Command
	if len(args) == 2 {
		cmds = c.Srv.cmdList
	} else {
		for _, name := range args[2:] {
			if cmd := c.Srv.commandByName(name); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
	}
	c.WriteMap(len(cmds))
	for _, cmd := range cmds {
		c.WriteBulkString(cmd.Name)
		appendCommandDocs(&c.Writer, cmd)
	}
}

// commandListCommand: COMMAND LIST [FILTERBY MODULE name|ACLCAT cat|PATTERN pattern].
func commandListCommand(c *Client, args [][]byte) {
	match := func(*Command) bool { return true }
	switch {
	case len(args) == 2:
	case len(args) == 5 && ArgIs(args[2], "filterby"):
		val := args[4]
		switch {
		case ArgIs(args[3], "module"):
			match = func(*Command) bool { return false }
		case ArgIs(args[3], "aclcat"):
			want := "@" + strings.ToLower(string(val))
			match = func(cmd *Command) bool { return slices.Contains(aclCategories(cmd), want) }
		case ArgIs(args[3], "pattern"):
			match = func(cmd *Command) bool { return globMatchFold(val, []byte(cmd.Name)) }
		default:
			c.WriteError(ErrSyntax)
			return
		}
	default:
		c.WriteError(ErrSyntax)
		return
	}
	var names []string
	for _, cmd := range c.Srv.cmdList {
		if match(cmd) {
			names = append(names, cmd.Name)
		}
		for i := range cmd.Subcommands {
			if match(&cmd.Subcommands[i]) {
				names = append(names, cmd.Subcommands[i].Name)
			}
		}
	}
	c.WriteArray(len(names))
	for _, n := range names {
		c.WriteBulkString(n)
	}
}

// commandGetkeysCommand: COMMAND GETKEYS command [arg ...].
func commandGetkeysCommand(c *Client, args [][]byte) { getkeys(c, args, false) }

// commandGetkeysandflagsCommand: COMMAND GETKEYSANDFLAGS command [arg ...];
// each key comes with the flags of the key spec that found it.
func commandGetkeysandflagsCommand(c *Client, args [][]byte) { getkeys(c, args, true) }

// hasKeyArgs reports whether one of specs names keys (doesCommandHaveKeys:
// SPUBLISH's only spec is of a channel, a not-key argument).
func hasKeyArgs(specs []KeySpec) bool {
	for i := range specs {
		if specs[i].Flags&KeyNotKey == 0 {
			return true
		}
	}
	return false
}

func getkeys(c *Client, args [][]byte, withFlags bool) {
	target := args[2:]
	cmd := lookupCommand(c.Srv.table, target[0])
	if cmd != nil && cmd.subs != nil && len(target) >= 2 {
		cmd = lookupCommand(cmd.subs, target[1])
	}
	switch {
	case cmd == nil:
		c.WriteError("ERR Invalid command specified")
		return
	case cmd.GetKeys == nil && !hasKeyArgs(keySpecsOf(cmd)):
		c.WriteError("ERR The command has no key arguments")
		return
	case !arityOK(cmd.Arity, len(target)):
		c.WriteError("ERR Invalid number of arguments specified for command")
		return
	}
	refs := CommandKeys(cmd, target)
	if len(refs) == 0 && cmd.Flags&FlagNoMandatoryKeys == 0 {
		c.WriteError("ERR Invalid arguments specified for command")
		return
	}
	c.WriteArray(len(refs))
	for _, r := range refs {
		if withFlags {
			c.WriteArray(2)
			c.WriteBulk(target[r.Pos])
			appendKeySpecFlags(&c.Writer, r.Flags)
		} else {
			c.WriteBulk(target[r.Pos])
		}
	}
}

func commandHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "COMMAND", []string{
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
	})
}

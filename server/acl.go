package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/persimmon-db/persimmon/acl"
)

// ACL wiring. The acl package owns users, rules, the check and their
// texts; this file connects it to the server: the command table handed to
// acl.NewTable, the check run before every command (dispatch.go, EXEC,
// redis.call), the ACL command family, and the durable ACL state (an ACL
// change is acknowledged only once the state file holds it, see acl's
// state.go).

// aclServer is the server's ACL state.
type aclServer struct {
	store *acl.Store
	log   *acl.Log
	file  string // aclfile; "" when none is configured
	dir   string // the data directory holding the state file; "" = not kept (tests)
	// mu orders a change with its write of the state file, so the file
	// always ends with the newest state.
	mu sync.Mutex
}

// newACL indexes table for the acl package (every command, in name order,
// its subcommands after it) and links each entry to its acl.Command.
func newACL(cfg Config, table map[string]*Command) *aclServer {
	var specs []acl.CommandSpec
	spec := func(cmd *Command) acl.CommandSpec {
		sp := acl.CommandSpec{Name: cmd.Name, NoAuth: cmd.Flags&FlagNoAuth != 0}
		for _, c := range aclCategories(cmd) {
			sp.Categories = append(sp.Categories, strings.TrimPrefix(c, "@"))
		}
		return sp
	}
	for _, cmd := range sortedCommands(table) {
		sp := spec(cmd)
		subs := make([]*Command, 0, len(cmd.subs))
		for _, sub := range cmd.subs {
			subs = append(subs, sub)
		}
		slices.SortFunc(subs, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
		for _, sub := range subs {
			sp.Subcommands = append(sp.Subcommands, spec(sub))
		}
		specs = append(specs, sp)
	}
	t := acl.NewTable(specs)
	for _, cmd := range table {
		cmd.aclCmd = t.Lookup(cmd.Name)
		for _, sub := range cmd.subs {
			sub.aclCmd = t.Lookup(sub.Name)
		}
	}
	a := &aclServer{store: acl.NewStore(t), log: acl.NewLog(acl.DefaultLogMaxLen), file: cfg.ACLFile}
	a.store.SetDefaultPassword(cfg.Requirepass)
	return a
}

// LoadACL loads the users at start-up: the aclfile if one is configured,
// then the state file of the data directory if there is one (it holds
// every ACL change acknowledged since; see the acl package). An error
// means the server must not start.
func (s *Server) LoadACL() error {
	a := s.acl
	if a.file != "" && len(s.cfg.ACLUsers) > 0 {
		return errors.New(errACLFileAndUsers)
	}
	if _, err := applyACLUsers(a.store, s.cfg.ACLUsers); err != nil {
		return fmt.Errorf("Critical error while loading ACLs: %v", err)
	}
	if a.file != "" {
		if _, err := a.store.LoadFile(a.file); err != nil {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %s", err)
		}
	}
	if a.dir != "" {
		found, err := a.store.LoadState(a.dir)
		if err != nil {
			return err
		}
		if found {
			s.logf("ACL users loaded from %s/%s", a.dir, acl.StateFileName)
		}
	}
	return nil
}

// errACLFileAndUsers is redis-server's refusal to start with both.
const errACLFileAndUsers = "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both."

// applyACLUsers creates the config file's users in order, as Redis's
// ACLLoadConfiguredUsers does: a new user from nothing, the default user
// from "reset", then the line's rules. A user named twice is an error, as
// in Redis's ACLAppendUserForLoading. The first that fails is returned
// with its index.
func applyACLUsers(store *acl.Store, users [][]string) (int, error) {
	seen := make(map[string]bool, len(users))
	for i, u := range users {
		if seen[u[0]] {
			return i, fmt.Errorf("user %s: Duplicate user found. A user can only be defined once in config files", u[0])
		}
		seen[u[0]] = true
		ops := u[1:]
		if u[0] == acl.DefaultUser {
			ops = append([]string{"reset"}, ops...)
		}
		if _, _, err := store.SetUser(u[0], ops); err != nil {
			return i, fmt.Errorf("user %s: %v", u[0], err)
		}
	}
	return -1, nil
}

// CheckACLUsers applies the config file's user lines to a fresh ACL state
// of the server's commands and families, as the start-up will, and
// reports the first one that fails (its index and the error); -1 and nil
// when they all apply.
func CheckACLUsers(families []Command, users [][]string) (int, error) {
	return applyACLUsers(newACL(Config{}, newCommandTable(families)).store, users)
}

// persist writes the ACL state durably (with a.mu held). Without a
// data directory (protocol tests) there is nothing to keep it in.
func (a *aclServer) persist() error {
	if a.dir == "" {
		return nil
	}
	return a.store.SaveState(a.dir)
}

// errACLNotDurable answers an ACL change whose state could not be written:
// it holds in memory, but was not acknowledged as durable.
const errACLNotDurable = "ERR The ACL change could not be made durable; check the server log"

// changeACL runs change and persists the new state before the caller
// replies; it returns the reply error for a failed write ("" when durable).
func (c *Client) changeACL(change func()) string {
	a := c.Srv.acl
	a.mu.Lock()
	defer a.mu.Unlock()
	change()
	if err := a.persist(); err != nil {
		c.Srv.logf("ACL state not saved: %v", err)
		return errACLNotDurable
	}
	return ""
}

// aclKeyRefs are the request's keys as the acl check sees them.
func aclKeyRefs(cmd *Command, args [][]byte) []acl.KeyRef {
	refs := CommandKeys(cmd, args)
	if len(refs) == 0 {
		return nil
	}
	out := make([]acl.KeyRef, len(refs))
	for i, r := range refs {
		out[i] = acl.KeyRef{Pos: r.Pos, Read: r.Flags&KeyAccess != 0, Write: r.Flags&(KeyInsert|KeyDelete|KeyUpdate) != 0}
	}
	return out
}

// aclRequest builds the check's view of a request.
func aclRequest(cmd *Command, args [][]byte) *acl.Request {
	return &acl.Request{Cmd: cmd.aclCmd, Args: args, Keys: aclKeyRefs(cmd, args), Channels: acl.Channels(cmd.Name, args)}
}

// checkACL checks cmd for the client's user; a denial is logged with ctx
// and returned with its request (for the error texts).
func (c *Client) checkACL(cmd *Command, args [][]byte, ctx acl.Context) (acl.Denial, *acl.Request) {
	if c.User().Unrestricted() || cmd.aclCmd == nil {
		return acl.Denial{}, nil // the default user as created: nothing to check
	}
	u := c.User()
	q := &acl.Request{Cmd: cmd.aclCmd, Args: args, Channels: acl.Channels(cmd.Name, args)}
	d := u.CheckFindingKeys(q, func() []acl.KeyRef { return aclKeyRefs(cmd, args) })
	if !d.OK() {
		c.Srv.acl.log.Add(d.LogEntry(q, ctx, u.Name(), c.clientInfoLine()), time.Now())
	}
	return d, q
}

// ReadsAllKeys reports whether the client's user may run the request
// args with read access to every key (Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess): SORT's BY and GET patterns
// name keys no key position shows.
func (c *Client) ReadsAllKeys(args [][]byte) bool {
	u := c.User()
	if u.Unrestricted() {
		return true
	}
	cmd, msg := c.Srv.resolve(args)
	if msg != "" || cmd.aclCmd == nil {
		return false
	}
	return u.CheckUnrestrictedKeys(aclRequest(cmd, args), true, false)
}

// clientInfoLine is the client's CLIENT LIST line without its newline,
// the ACL LOG's client-info (a script's commands log their caller).
func (c *Client) clientInfoLine() string {
	if c.conn == nil {
		return ""
	}
	b := appendClientLine(nil, c.conn, c.conn.snapshot(c.conn), time.Now())
	return strings.TrimSuffix(string(b), "\n")
}

// logAuthFailure adds a failed AUTH or HELLO AUTH to the ACL LOG (object:
// the command name as sent).
func (c *Client) logAuthFailure(argv0 []byte, user string) {
	ctx := acl.ContextToplevel
	if c.InMulti {
		ctx = acl.ContextMulti
	}
	c.Srv.acl.log.Add(acl.AuthFailure(string(argv0), user, ctx, c.clientInfoLine()), time.Now())
}

// disconnectUsers closes the clients authenticated as one of users
// (deleted by ACL DELUSER or replaced by ACL LOAD); the calling client gets
// its reply first.
func (s *Server) disconnectUsers(self *conn, users []*acl.User) {
	if len(users) == 0 {
		return
	}
	for _, other := range s.clientsSnapshot() {
		if slices.Contains(users, other.User()) {
			killClient(self, other)
		}
	}
}

// killPubsubViolators closes u's subscribed clients that hold a channel
// or pattern u may no longer use (Redis's ACLKillPubsubClientsIfNeeded).
func (s *Server) killPubsubViolators(self *conn, u *acl.User) {
	for _, other := range s.clientsSnapshot() {
		if other.User() != u {
			continue
		}
		channels, patterns := other.subscribedNames()
		kill := false
		for _, p := range patterns {
			if !u.CheckChannel([]byte(p), true) {
				kill = true
			}
		}
		for _, ch := range channels {
			if !u.CheckChannel([]byte(ch), false) {
				kill = true
			}
		}
		if kill {
			killClient(self, other)
		}
	}
}

// ---- the ACL command family (semantics: redis.io/commands/acl) ----

func aclCommands() []Command {
	const (
		admin = FlagAdmin | FlagNoScript | FlagLoading | FlagStale
		plain = FlagNoScript | FlagLoading | FlagStale
	)
	sub := func(name string, arity, flags int, since, summary string, run Handler) Command {
		return Command{Name: "acl|" + name, Arity: arity, Flags: flags, Group: "server", Since: since,
			Summary: summary, Run: run, NoLock: true}
	}
	return []Command{
		{Name: "acl", Arity: -2, Group: "server", Since: "6.0.0",
			Summary: "A container for Access List Control commands", Subcommands: []Command{
				sub("cat", -2, plain, "6.0.0", "Lists the ACL categories, or the commands inside a category.", aclCatCommand),
				sub("deluser", -3, admin, "6.0.0", "Deletes ACL users, and terminates their connections.", aclDeluserCommand),
				sub("dryrun", -4, admin, "7.0.0", "Simulates the execution of a command by a user, without executing the command.", aclDryrunCommand),
				sub("genpass", -2, plain, "6.0.0", "Generates a pseudorandom, secure password that can be used to identify ACL users.", aclGenpassCommand),
				sub("getuser", 3, admin, "6.0.0", "Lists the ACL rules of a user.", aclGetuserCommand),
				sub("help", 2, FlagLoading|FlagStale, "6.0.0", "Returns helpful text about the different subcommands.", aclHelpCommand),
				sub("list", 2, admin, "6.0.0", "Dumps the effective rules in ACL file format.", aclListCommand),
				sub("load", 2, admin, "6.0.0", "Reloads the rules from the configured ACL file.", aclLoadCommand),
				sub("log", -2, admin, "6.0.0", "Lists recent security events generated due to ACL rules.", aclLogCommand),
				sub("save", 2, admin, "6.0.0", "Saves the effective ACL rules in the configured ACL file.", aclSaveCommand),
				sub("setuser", -3, admin, "6.0.0", "Creates and modifies an ACL user and its rules.", aclSetuserCommand),
				sub("users", 2, admin, "6.0.0", "Lists all ACL users.", aclUsersCommand),
				sub("whoami", 2, plain, "6.0.0", "Returns the authenticated username of the current connection.", aclWhoamiCommand),
			}},
	}
}

// errorLine makes a text safe as one error line, as Redis's
// addReplyErrorSdsSafe does (a rule may hold CR or LF).
func errorLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

func aclSubcommandSyntax(c *Client, args [][]byte) {
	c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try ACL HELP.")
}

func aclSetuserCommand(c *Client, args [][]byte) {
	name := string(args[2])
	ops := make([]string, len(args)-3)
	for i, a := range args[3:] {
		ops[i] = string(a)
	}
	var err error
	msg := c.changeACL(func() {
		var u *acl.User
		var narrowed bool
		u, narrowed, err = c.Srv.acl.store.SetUser(name, ops)
		if err == nil && narrowed {
			c.Srv.killPubsubViolators(c.conn, u)
		}
	})
	switch {
	case err != nil:
		c.WriteError(errorLine("ERR " + err.Error()))
	case msg != "":
		c.WriteError(msg)
	default:
		c.WriteOK()
	}
}

func aclDeluserCommand(c *Client, args [][]byte) {
	names := make([]string, len(args)-2)
	for i, a := range args[2:] {
		names[i] = string(a)
	}
	var gone []*acl.User
	var err error
	msg := c.changeACL(func() {
		gone, err = c.Srv.acl.store.DelUser(names...)
	})
	switch {
	case err != nil:
		c.WriteError("ERR " + err.Error())
	case msg != "":
		c.WriteError(msg)
	default:
		c.Srv.disconnectUsers(c.conn, gone)
		c.WriteInt(int64(len(gone)))
	}
}

func aclGetuserCommand(c *Client, args [][]byte) {
	u := c.Srv.acl.store.User(string(args[2]))
	if u == nil {
		c.WriteNull()
		return
	}
	in := u.Info()
	c.WriteMap(6)
	c.WriteBulkString("flags")
	c.WriteSet(len(in.Flags))
	for _, f := range in.Flags {
		c.WriteBulkString(f)
	}
	c.WriteBulkString("passwords")
	c.WriteArray(len(in.Passwords))
	for _, p := range in.Passwords {
		c.WriteBulkString(p)
	}
	writeSelectorInfo(c, in.Root)
	c.WriteBulkString("selectors")
	c.WriteArray(len(in.Selectors))
	for _, s := range in.Selectors {
		c.WriteMap(3)
		writeSelectorInfo(c, s)
	}
}

func writeSelectorInfo(c *Client, s acl.SelectorInfo) {
	c.WriteBulkString("commands")
	c.WriteBulkString(s.Commands)
	c.WriteBulkString("keys")
	c.WriteBulkString(s.Keys)
	c.WriteBulkString("channels")
	c.WriteBulkString(s.Channels)
}

func aclListCommand(c *Client, _ [][]byte) {
	lines := c.Srv.acl.store.List()
	c.WriteArray(len(lines))
	for _, l := range lines {
		c.WriteBulkString(l)
	}
}

func aclUsersCommand(c *Client, _ [][]byte) {
	names := c.Srv.acl.store.Usernames()
	c.WriteArray(len(names))
	for _, n := range names {
		c.WriteBulkString(n)
	}
}

func aclWhoamiCommand(c *Client, _ [][]byte) { c.WriteBulkString(c.User().Name()) }

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func aclLoadCommand(c *Client, _ [][]byte) {
	a := c.Srv.acl
	if a.file == "" {
		c.WriteError(errNoACLFile)
		return
	}
	var gone []*acl.User
	var err error
	msg := c.changeACL(func() { gone, err = a.store.LoadFile(a.file) })
	switch {
	case err != nil:
		c.WriteError(errorLine("ERR " + err.Error()))
	case msg != "":
		c.WriteError(msg)
	default:
		c.Srv.disconnectUsers(c.conn, gone)
		c.WriteOK()
	}
}

func aclSaveCommand(c *Client, _ [][]byte) {
	a := c.Srv.acl
	if a.file == "" {
		c.WriteError(errNoACLFile)
		return
	}
	if err := a.store.SaveFile(a.file); err != nil {
		c.Srv.logf("ACL SAVE: %v", err)
		c.WriteError("ERR " + acl.ErrSave.Error())
		return
	}
	c.WriteOK()
}

func aclCatCommand(c *Client, args [][]byte) {
	switch len(args) {
	case 2:
		c.WriteArray(len(acl.Categories))
		for _, cat := range acl.Categories {
			c.WriteBulkString(cat)
		}
	case 3:
		names, ok := c.Srv.acl.store.Table().Category(string(args[2]))
		if !ok {
			c.WriteError("ERR Unknown category '" + truncate(CString(args[2]), 128) + "'")
			return
		}
		c.WriteArray(len(names))
		for _, n := range names {
			c.WriteBulkString(n)
		}
	default:
		aclSubcommandSyntax(c, args)
	}
}

func aclGenpassCommand(c *Client, args [][]byte) {
	if len(args) > 3 {
		aclSubcommandSyntax(c, args)
		return
	}
	bits := int64(256)
	if len(args) == 3 {
		n, ok := ParseInt64(args[2])
		if !ok {
			c.WriteError(ErrNotInteger)
			return
		}
		bits = n
	}
	p, err := acl.GenPass(bits)
	if err != nil {
		c.WriteError("ERR " + err.Error())
		return
	}
	c.WriteBulkString(p)
}

func aclLogCommand(c *Client, args [][]byte) {
	if len(args) > 3 {
		aclSubcommandSyntax(c, args)
		return
	}
	count := int64(10)
	if len(args) == 3 {
		if ArgIs(args[2], "reset") {
			c.Srv.acl.log.Reset()
			c.WriteOK()
			return
		}
		n, ok := ParseInt64(args[2])
		if !ok {
			c.WriteError(ErrNotInteger)
			return
		}
		count = max(n, 0)
	}
	entries := c.Srv.acl.log.Entries(int(min(count, int64(1<<31))))
	now := time.Now()
	c.WriteArray(len(entries))
	for _, e := range entries {
		c.WriteMap(7)
		c.WriteBulkString("count")
		c.WriteInt(int64(e.Count))
		c.WriteBulkString("reason")
		c.WriteBulkString(e.Reason.String())
		c.WriteBulkString("context")
		c.WriteBulkString(e.Context.String())
		c.WriteBulkString("object")
		c.WriteBulkString(e.Object)
		c.WriteBulkString("username")
		c.WriteBulkString(e.Username)
		c.WriteBulkString("age-seconds")
		c.WriteDouble(e.AgeSeconds(now))
		c.WriteBulkString("client-info")
		c.WriteBulkString(e.ClientInfo)
	}
}

func aclDryrunCommand(c *Client, args [][]byte) {
	u := c.Srv.acl.store.User(string(args[2]))
	if u == nil {
		c.WriteError("ERR User '" + string(CString(args[2])) + "' not found")
		return
	}
	target := args[3:]
	cmd := lookupCommand(c.Srv.table, target[0])
	if cmd != nil && cmd.subs != nil && len(target) >= 2 {
		cmd = lookupCommand(cmd.subs, target[1])
	}
	if cmd == nil {
		c.WriteError("ERR Command '" + string(CString(target[0])) + "' not found")
		return
	}
	if !arityOK(cmd.Arity, len(target)) {
		c.WriteError("ERR wrong number of arguments for '" + cmd.Name + "' command")
		return
	}
	if cmd.aclCmd == nil {
		c.WriteOK()
		return
	}
	q := aclRequest(cmd, target)
	if d := u.Check(q); !d.OK() {
		c.WriteBulkString(d.DryRun(q))
		return
	}
	c.WriteOK()
}

func aclHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "ACL", []string{
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	})
}

// subscribedNames are the channels (shard channels included: ACL checks
// them alike) and patterns c is subscribed to.
func (c *conn) subscribedNames() (channels, patterns []string) {
	h := c.srv.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range c.ps.channels {
		channels = append(channels, ch)
	}
	for ch := range c.ps.shard {
		channels = append(channels, ch)
	}
	for p := range c.ps.patterns {
		patterns = append(patterns, p)
	}
	return channels, patterns
}

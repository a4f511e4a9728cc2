package acl

import (
	"fmt"
	"strings"
)

// Categories are Redis 7.0's ACL categories in its order (the bit order
// ACL CAT and COMMAND print, and the order the rule describer tries them).
var Categories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// categoryBit returns the bit of a category name (case-insensitive), or 0.
func categoryBit(name string) uint32 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}

// CommandSpec describes one command of the server's command table, as the
// ACL rules see it.
type CommandSpec struct {
	// Name is the full lowercase name: "get", or "config|get" for a
	// subcommand.
	Name string
	// Categories are the command's ACL categories without the "@"
	// ("read", "fast").
	Categories []string
	// NoAuth is Redis's no_auth flag (AUTH, HELLO): such a command is
	// allowed whatever the command rules say.
	NoAuth bool
	// Subcommands of a container command (CONFIG, CLIENT), each named
	// "parent|sub".
	Subcommands []CommandSpec
}

// Command is a command of a Table: its ID indexes the users' command
// bitmaps.
type Command struct {
	ID       int
	Name     string // full name, "config|get"
	cats     uint32
	NoAuth   bool
	Parent   *Command   // nil for a top-level command
	Subs     []*Command // subcommands in table order
	subIndex map[string]*Command
}

// Table is the command table the rules refer to. It is immutable.
type Table struct {
	cmds []*Command // every command, each parent before its subcommands
	top  []*Command // top-level commands in table order
	byID map[string]*Command
}

// NewTable indexes the server's command table. The order of specs is the
// order single-command rules print in (see the package doc). A duplicate
// name or an unknown category is a programming error and panics.
func NewTable(specs []CommandSpec) *Table {
	t := &Table{byID: map[string]*Command{}}
	var add func(s CommandSpec, parent *Command) *Command
	add = func(s CommandSpec, parent *Command) *Command {
		name := strings.ToLower(s.Name)
		if _, dup := t.byID[name]; dup {
			panic(fmt.Errorf("acl: command %q twice in the table", name))
		}
		c := &Command{ID: len(t.cmds), Name: name, NoAuth: s.NoAuth, Parent: parent}
		for _, cat := range s.Categories {
			b := categoryBit(strings.TrimPrefix(cat, "@"))
			if b == 0 {
				panic(fmt.Errorf("acl: command %q: unknown category %q", name, cat))
			}
			c.cats |= b
		}
		t.cmds = append(t.cmds, c)
		t.byID[name] = c
		if len(s.Subcommands) > 0 {
			c.subIndex = map[string]*Command{}
			for _, sub := range s.Subcommands {
				sc := add(sub, c)
				c.Subs = append(c.Subs, sc)
				short := sc.Name
				if i := strings.IndexByte(short, '|'); i >= 0 {
					short = short[i+1:]
				}
				c.subIndex[short] = sc
			}
		}
		return c
	}
	for _, s := range specs {
		t.top = append(t.top, add(s, nil))
	}
	return t
}

// Len is the number of commands, subcommands included.
func (t *Table) Len() int { return len(t.cmds) }

// Lookup finds a command by its full name, "get" or "config|get"
// (case-insensitive), as Redis's strict lookup does: more than one "|", a
// "|" after a command without subcommands, or an unknown name give nil.
func (t *Table) Lookup(name string) *Command {
	base, sub, hasSub := strings.Cut(name, "|")
	if hasSub && strings.Contains(sub, "|") {
		return nil
	}
	c := t.byID[strings.ToLower(base)]
	if c == nil || c.Parent != nil {
		return nil
	}
	if !hasSub {
		return c
	}
	if c.subIndex == nil {
		return nil
	}
	return c.subIndex[strings.ToLower(sub)]
}

// InCategory reports whether c belongs to the category (name without "@").
func (c *Command) InCategory(category string) bool {
	b := categoryBit(category)
	return b != 0 && c.cats&b != 0
}

// Category returns the commands of a category in table order (ACL CAT
// <category>), parents before their subcommands; ok is false for an unknown
// category.
func (t *Table) Category(category string) (names []string, ok bool) {
	b := categoryBit(category)
	if b == 0 {
		return nil, false
	}
	names = []string{}
	for _, c := range t.cmds {
		if c.cats&b != 0 {
			names = append(names, c.Name)
		}
	}
	return names, true
}

package server

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/persimmon-db/persimmon/proto"
)

// COMMAND DOCS: Redis 7.0.15's documentation of each of its commands, as
// its src/commands/*.json declare it and addReplyCommandDocs (server.c)
// sends it: summary, since, group, complexity, doc_flags,
// deprecated_since, replaced_by, history and the argument tree.
// commanddocs.json is written by scripts/gen-command-docs.py from a Redis
// 7.0.15 source tree; a command Redis 7.0 does not have (TR.*, WAITAOF,
// CLIENT SETINFO) is documented by its table entry's Summary, Since and
// Group.

//go:embed commanddocs.json
var commandDocsJSON []byte

// commandDoc is one command's documentation (fields as in Redis; an empty
// one is not sent).
type commandDoc struct {
	Summary         string      `json:"summary"`
	Since           string      `json:"since"`
	Group           string      `json:"group"`
	Complexity      string      `json:"complexity"`
	DocFlags        []string    `json:"doc_flags"`
	DeprecatedSince string      `json:"deprecated_since"`
	ReplacedBy      string      `json:"replaced_by"`
	History         [][2]string `json:"history"`
	Arguments       []argDoc    `json:"arguments"`
}

// argDoc is one argument of a command's documentation; Arguments are the
// alternatives of a "oneof" or the parts of a "block".
type argDoc struct {
	Name            string   `json:"name"`
	Type            string   `json:"type"`
	KeySpecIndex    *int     `json:"key_spec_index"`
	Token           *string  `json:"token"` // MIGRATE's is ""
	Summary         string   `json:"summary"`
	Since           string   `json:"since"`
	DeprecatedSince string   `json:"deprecated_since"`
	Flags           []string `json:"flags"`
	Arguments       []argDoc `json:"arguments"`
}

// redisCommandDocs decodes commanddocs.json once, on the first COMMAND
// DOCS: name or "container|sub" → documentation.
var redisCommandDocs = sync.OnceValue(func() map[string]*commandDoc {
	docs := map[string]*commandDoc{}
	if err := json.Unmarshal(commandDocsJSON, &docs); err != nil {
		panic(fmt.Sprintf("server: commanddocs.json: %v", err)) // embedded at build time: a broken file is a build defect
	}
	return docs
})

// appendCommandDocs appends a COMMAND DOCS value for cmd: its Redis 7.0
// documentation if Redis has the command, else its table entry's summary,
// since and group; for a container, its subcommands' docs.
func appendCommandDocs(w *proto.Writer, cmd *Command) {
	d := redisCommandDocs()[cmd.Name]
	if d == nil {
		d = &commandDoc{Summary: cmd.Summary, Since: cmd.Since, Group: cmd.Group}
	}
	n := 1 // group, always
	for _, has := range []bool{d.Summary != "", d.Since != "", d.Complexity != "", len(d.DocFlags) > 0,
		d.DeprecatedSince != "", d.ReplacedBy != "", len(d.History) > 0, len(d.Arguments) > 0, len(cmd.Subcommands) > 0} {
		if has {
			n++
		}
	}
	w.WriteMap(n)
	optionalField(w, "summary", d.Summary)
	optionalField(w, "since", d.Since)
	w.WriteBulkString("group")
	w.WriteBulkString(d.Group)
	optionalField(w, "complexity", d.Complexity)
	if len(d.DocFlags) > 0 {
		w.WriteBulkString("doc_flags")
		writeFlagSet(w, d.DocFlags)
	}
	optionalField(w, "deprecated_since", d.DeprecatedSince)
	optionalField(w, "replaced_by", d.ReplacedBy)
	if len(d.History) > 0 {
		w.WriteBulkString("history")
		w.WriteSet(len(d.History))
		for _, h := range d.History {
			w.WriteArray(2)
			w.WriteBulkString(h[0])
			w.WriteBulkString(h[1])
		}
	}
	if len(d.Arguments) > 0 {
		w.WriteBulkString("arguments")
		appendArgDocs(w, d.Arguments)
	}
	if len(cmd.Subcommands) > 0 {
		w.WriteBulkString("subcommands")
		w.WriteMap(len(cmd.Subcommands))
		for i := range cmd.Subcommands {
			sub := &cmd.Subcommands[i]
			w.WriteBulkString(sub.Name)
			appendCommandDocs(w, sub)
		}
	}
}

// appendArgDocs appends an argument list as addReplyCommandArgList does.
func appendArgDocs(w *proto.Writer, args []argDoc) {
	w.WriteArray(len(args))
	for i := range args {
		a := &args[i]
		n := 2
		for _, has := range []bool{a.KeySpecIndex != nil, a.Token != nil, a.Summary != "", a.Since != "",
			a.DeprecatedSince != "", len(a.Flags) > 0, a.Type == "oneof" || a.Type == "block"} {
			if has {
				n++
			}
		}
		w.WriteMap(n)
		w.WriteBulkString("name")
		w.WriteBulkString(a.Name)
		w.WriteBulkString("type")
		w.WriteBulkString(a.Type)
		if a.KeySpecIndex != nil {
			w.WriteBulkString("key_spec_index")
			w.WriteInt(int64(*a.KeySpecIndex))
		}
		if a.Token != nil {
			w.WriteBulkString("token")
			w.WriteBulkString(*a.Token)
		}
		optionalField(w, "summary", a.Summary)
		optionalField(w, "since", a.Since)
		optionalField(w, "deprecated_since", a.DeprecatedSince)
		if len(a.Flags) > 0 {
			w.WriteBulkString("flags")
			writeFlagSet(w, a.Flags)
		}
		if a.Type == "oneof" || a.Type == "block" {
			w.WriteBulkString("arguments")
			appendArgDocs(w, a.Arguments)
		}
	}
}

// optionalField appends name and value, unless value is empty.
func optionalField(w *proto.Writer, name, value string) {
	if value != "" {
		w.WriteBulkString(name)
		w.WriteBulkString(value)
	}
}

// writeFlagSet appends flags as a set of status replies (addReplyCommandFlags).
func writeFlagSet(w *proto.Writer, flags []string) {
	w.WriteSet(len(flags))
	for _, f := range flags {
		w.WriteString(f)
	}
}

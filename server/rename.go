package server

import (
	"errors"
	"strings"
)

// rename-command, as Redis 7.0's config loader applies it: the command is
// taken out of the table clients' requests are looked up in and, unless
// the new name is empty, put back under the new name. Everything that
// looks a command up for a client (dispatch, redis.call, COMMAND INFO,
// ACL DRYRUN) sees the renamed table; ACL rules, INFO commandstats and
// COMMAND's replies keep the command's own name (Redis's orig_commands and
// cmd->fullname).

// CommandRename is one rename-command line: From's command is served as
// To, or not at all when To is "".
type CommandRename struct {
	From, To string
}

// The errors of a rename that cannot be applied, in Redis's words.
var (
	errRenameNoSuchCommand = errors.New("No such command in rename-command")
	errRenameTargetExists  = errors.New("Target command name already exists")
)

// applyRenames renames the commands of table in order; a failed rename is
// returned with its index and leaves the renames before it applied.
func applyRenames(table map[string]*Command, renames []CommandRename) (int, error) {
	for i, r := range renames {
		from := strings.ToLower(r.From)
		cmd := table[from]
		if cmd == nil {
			return i, errRenameNoSuchCommand
		}
		delete(table, from)
		if r.To == "" {
			continue
		}
		to := strings.ToLower(r.To)
		if table[to] != nil {
			return i, errRenameTargetExists
		}
		table[to] = cmd
	}
	return -1, nil
}

// CheckCommandRenames applies renames to a table of the server's commands
// and families, as the server will at start-up, and reports the first one
// redis-server would refuse (its index, and the error in Redis's words);
// -1 and nil when they all apply.
func CheckCommandRenames(families []Command, renames []CommandRename) (int, error) {
	return applyRenames(newCommandTable(families), renames)
}

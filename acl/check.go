package acl

import "strings"

// Reason is why a request was denied. The values order the reasons as
// Redis picks among selectors: a channel denial outranks a key denial,
// which outranks a command denial.
type Reason int

const (
	Allowed       Reason = 0
	DeniedCommand Reason = 1
	DeniedKey     Reason = 2
	DeniedAuth    Reason = 3 // ACL LOG only: a failed AUTH
	DeniedChannel Reason = 4
)

// String is the reason as ACL LOG prints it.
func (r Reason) String() string {
	switch r {
	case DeniedCommand:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// KeyRef is one key argument of a request. Read is Redis's ACCESS key-spec
// flag (the command reads the value); Write is INSERT, DELETE or UPDATE. A
// key with neither (EXISTS, TYPE's metadata-only access) matches a pattern
// of any permission.
type KeyRef struct {
	Pos   int // index in Request.Args
	Read  bool
	Write bool
}

// ChannelRef is one channel argument: Pattern for PSUBSCRIBE's patterns,
// which match an ACL channel pattern only literally.
type ChannelRef struct {
	Pos     int // index in Request.Args
	Pattern bool
}

// Request is a command as the check sees it. Cmd is the command, or the
// subcommand for a container (Args[1] is then its name); Args is the whole
// command line, name included.
type Request struct {
	Cmd      *Command
	Args     [][]byte
	Keys     []KeyRef
	Channels []ChannelRef
}

// Denial is the result of a check: Reason Allowed, or the reason and, for
// a key or channel, the index in Args of the argument that failed.
type Denial struct {
	Reason Reason
	Pos    int
}

// OK reports an allowed request.
func (d Denial) OK() bool { return d.Reason == Allowed }

// Unrestricted reports whether u may run every command on every key and
// channel (the default user as created): the server may skip Check for it.
// It is a snapshot: SETUSER may change it at any time.
func (u *User) Unrestricted() bool {
	r := u.rules.Load()
	s := r.selectors[0]
	return s.allCommands && s.allKeys && s.allChannels
}

func matchKey(s *selector, key []byte, k KeyRef) bool {
	if s.allKeys {
		return true
	}
	need := 0
	if k.Read {
		need |= permRead
	}
	if k.Write {
		need |= permWrite
	}
	for _, p := range s.keys {
		if p.perm&need == need && Match(p.pattern, key, false) {
			return true
		}
	}
	return false
}

func matchChannel(list []string, ch []byte, pattern bool) bool {
	for _, p := range list {
		if (pattern && p == string(ch)) || (!pattern && Match(p, ch, false)) {
			return true
		}
	}
	return false
}

// checkSelector is Redis's ACLSelectorCheckCmd.
func (s *selector) check(q *Request) Denial {
	c := q.Cmd
	if !s.allCommands && !c.NoAuth && !s.bit(c.ID) {
		idx := 1
		if c.Parent != nil {
			idx = 2
		}
		allowed := false
		if len(q.Args) > idx {
			for _, a := range s.firstArgs[c.ID] {
				if strings.EqualFold(a, string(q.Args[idx])) {
					allowed = true
					break
				}
			}
		}
		if !allowed {
			return Denial{Reason: DeniedCommand}
		}
	}
	if !s.allKeys {
		for _, k := range q.Keys {
			if !matchKey(s, q.Args[k.Pos], k) {
				return Denial{Reason: DeniedKey, Pos: k.Pos}
			}
		}
	}
	if !s.allChannels {
		for _, ch := range q.Channels {
			if !matchChannel(s.channels, q.Args[ch.Pos], ch.Pattern) {
				return Denial{Reason: DeniedChannel, Pos: ch.Pos}
			}
		}
	}
	return Denial{}
}

// Check is Redis's ACLCheckAllUserCommandPerm: the request is allowed if
// one selector allows it whole. Otherwise the denial reported is the
// highest-ranked reason over the selectors (see Reason), and among those
// the last argument position.
func (u *User) Check(q *Request) Denial { return check(u.rules.Load(), q, nil) }

// CheckFindingKeys is Check for a request whose Keys are found by keys,
// called only when the user's rules restrict keys at all (finding them
// costs more than the rest of the check). The rules are read once, so a
// concurrent SETUSER cannot mix two versions of them in one check.
func (u *User) CheckFindingKeys(q *Request, keys func() []KeyRef) Denial {
	return check(u.rules.Load(), q, keys)
}

func check(r *rules, q *Request, keys func() []KeyRef) Denial {
	if keys != nil {
		for _, s := range r.selectors {
			if !s.allKeys {
				q.Keys = keys()
				break
			}
		}
	}
	worst := Denial{Reason: DeniedCommand}
	for _, s := range r.selectors {
		d := s.check(q)
		if d.OK() {
			return d
		}
		if d.Reason > worst.Reason || (d.Reason == worst.Reason && d.Pos > worst.Pos) {
			worst = d
		}
	}
	return worst
}

// CheckKey reports whether some selector of u allows the key with the
// given access (Redis's ACLUserCheckKeyPerm).
func (u *User) CheckKey(key []byte, read, write bool) bool {
	for _, s := range u.rules.Load().selectors {
		if matchKey(s, key, KeyRef{Read: read, Write: write}) {
			return true
		}
	}
	return false
}

// CheckChannel reports whether some selector of u allows the channel
// (pattern: a PSUBSCRIBE pattern, matched literally).
func (u *User) CheckChannel(ch []byte, pattern bool) bool {
	for _, s := range u.rules.Load().selectors {
		if s.allChannels || matchChannel(s.channels, ch, pattern) {
			return true
		}
	}
	return false
}

// CheckUnrestrictedKeys is Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess
// (SORT BY/GET, which read keys no key position names): one selector must
// allow the request and hold "*" for the access.
func (u *User) CheckUnrestrictedKeys(q *Request, read, write bool) bool {
	need := 0
	if read {
		need |= permRead
	}
	if write {
		need |= permWrite
	}
	for _, s := range u.rules.Load().selectors {
		if !s.check(q).OK() {
			continue
		}
		if s.allKeys {
			return true
		}
		for _, p := range s.keys {
			if p.perm&need == need && p.pattern == "*" {
				return true
			}
		}
	}
	return false
}

// Error is the NOPERM error a denied command gets at the top level or when
// queued in MULTI (Redis's processCommand), without the leading "-".
func (d Denial) Error(q *Request) string {
	switch d.Reason {
	case DeniedCommand:
		return "NOPERM this user has no permissions to run the '" + q.Cmd.Name + "' command"
	case DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "ERR no permission"
}

// ExecError is the error of a queued command that EXEC finds denied (the
// rules changed after it was queued).
func (d Denial) ExecError() string {
	reason := "no permission"
	switch d.Reason {
	case DeniedCommand:
		reason = "no permission to execute the command or subcommand"
	case DeniedKey:
		reason = "no permission to touch the specified keys"
	case DeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// ScriptError is the error redis.call raises for a denied command (Redis
// sends it with the ERR prefix).
func (d Denial) ScriptError() string {
	msg := "lacking the permissions for the command"
	switch d.Reason {
	case DeniedCommand:
		msg = "can't run this command or subcommand"
	case DeniedKey:
		msg = "can't access at least one of the keys mentioned in the command arguments"
	case DeniedChannel:
		msg = "can't publish to the channel mentioned in the command"
	}
	return "ERR The user executing the script " + msg
}

// DryRun is ACL DRYRUN's reply for the check: "" for an allowed request
// (the server replies OK), else the bulk string Redis replies.
func (d Denial) DryRun(q *Request) string {
	switch d.Reason {
	case DeniedCommand:
		return "This user has no permissions to run the '" + q.Cmd.Name + "' command"
	case DeniedKey:
		return "This user has no permissions to access the '" + string(q.Args[d.Pos]) + "' key"
	case DeniedChannel:
		return "This user has no permissions to access the '" + string(q.Args[d.Pos]) + "' channel"
	}
	return ""
}

// Channels returns the channel arguments of a pub/sub command that the
// channel rules check (Redis's commands_with_channels, publish and
// subscribe flags): every argument of SUBSCRIBE, SSUBSCRIBE and PSUBSCRIBE
// (patterns), the first of PUBLISH and SPUBLISH. Unsubscribing is never
// checked. name is the command's lowercase name.
func Channels(name string, args [][]byte) []ChannelRef {
	var refs []ChannelRef
	switch name {
	case "publish", "spublish":
		if len(args) > 1 {
			refs = []ChannelRef{{Pos: 1}}
		}
	case "subscribe", "ssubscribe", "psubscribe":
		for i := 1; i < len(args); i++ {
			refs = append(refs, ChannelRef{Pos: i, Pattern: name == "psubscribe"})
		}
	}
	return refs
}

// LogEntry is the ACL LOG entry for a denied request: its object is the
// command's full name, or the key or channel that failed.
func (d Denial) LogEntry(q *Request, ctx Context, username, clientInfo string) LogEntry {
	e := LogEntry{Reason: d.Reason, Context: ctx, Username: username, ClientInfo: clientInfo}
	switch d.Reason {
	case DeniedCommand:
		e.Object = q.Cmd.Name
	case DeniedKey, DeniedChannel:
		e.Object = string(q.Args[d.Pos])
	}
	return e
}

// AuthFailure is the ACL LOG entry for a failed AUTH or HELLO AUTH: the
// object is the command name as the client sent it, the username the one
// it tried.
func AuthFailure(argv0, username string, ctx Context, clientInfo string) LogEntry {
	return LogEntry{Reason: DeniedAuth, Context: ctx, Object: argv0, Username: username, ClientInfo: clientInfo}
}

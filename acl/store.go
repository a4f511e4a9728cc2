package acl

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// DefaultUser is the name of the user every new connection starts as.
const DefaultUser = "default"

// Store holds the users of a server. Its methods are safe for concurrent
// use; writers are serialised.
type Store struct {
	mu    sync.Mutex
	table *Table
	users map[string]*User
	def   *User // the "default" user: the same handle for the Store's life
	// pubsubAll is acl-pubsub-default allchannels: new selectors and
	// "reset" grant every channel (Redis 7.0's default is resetchannels).
	pubsubAll bool
}

// NewStore returns a store with only the default user ("on nopass ~* &*
// +@all"), rules referring to table t.
func NewStore(t *Table) *Store {
	s := &Store{table: t, users: map[string]*User{}}
	s.def = s.newUser(DefaultUser, defaultRules(t, false))
	s.users[DefaultUser] = s.def
	return s
}

func defaultRules(t *Table, pubsubAll bool) *rules {
	r := newRules(t, pubsubAll)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := r.apply(t, pubsubAll, op); err != nil {
			panic(err)
		}
	}
	return r
}

func (s *Store) newUser(name string, r *rules) *User {
	u := &User{name: name, table: s.table}
	s.publish(u, r)
	return u
}

// publish makes r the rules of u.
func (s *Store) publish(u *User, r *rules) {
	r.described = r.describe(s.table)
	u.rules.Store(r)
}

// Table is the command table the store's rules refer to.
func (s *Store) Table() *Table { return s.table }

// SetPubsubDefault sets acl-pubsub-default: allchannels (true) or
// resetchannels (false). It applies to selectors created afterwards and to
// "reset", as in Redis.
func (s *Store) SetPubsubDefault(allChannels bool) {
	s.mu.Lock()
	s.pubsubAll = allChannels
	s.mu.Unlock()
}

// PubsubDefault reports acl-pubsub-default: true for allchannels.
func (s *Store) PubsubDefault() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pubsubAll
}

// Default is the default user.
func (s *Store) Default() *User { return s.def }

// User returns the named user, or nil.
func (s *Store) User(name string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[name]
}

// Authenticate returns the user that name and pass authenticate as, or nil
// (unknown user, off, or no password matches).
func (s *Store) Authenticate(name, pass string) *User {
	u := s.User(name)
	if u == nil || !u.CheckPassword(pass) {
		return nil
	}
	return u
}

// ErrUsernameSpaces is ACL SETUSER's refusal of a name with spaces.
var ErrUsernameSpaces = errors.New("Usernames can't contain spaces or null characters")

// ErrDeleteDefault is ACL DELUSER's refusal to remove the default user.
var ErrDeleteDefault = errors.New("The 'default' user cannot be removed")

// mergeSelectors joins a selector spread over several words ("(+get",
// "~k)") into one, as Redis does; bad is the index of an unclosed "(" or
// -1.
func mergeSelectors(ops []string) (merged []string, bad int) {
	open := -1
	var cur string
	for j, op := range ops {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			cur, open = op, j
			continue
		}
		if open >= 0 {
			cur += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				merged = append(merged, cur)
				open = -1
			}
			continue
		}
		merged = append(merged, op)
	}
	if open >= 0 {
		return nil, open
	}
	return merged, -1
}

// SetUser is ACL SETUSER: it creates the user if needed and applies ops in
// order, all or nothing. The error is Redis's text (without "ERR ").
// narrowed reports whether an existing user lost channel permissions its
// pub/sub clients may hold (the server then checks and disconnects them).
func (s *Store) SetUser(name string, ops []string) (u *User, narrowed bool, err error) {
	if hasSpaces(name) {
		return nil, false, ErrUsernameSpaces
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	merged, bad := mergeSelectors(ops)
	if bad >= 0 {
		return nil, false, fmt.Errorf("Unmatched parenthesis in acl selector starting at '%s'.", ops[bad])
	}
	u = s.users[name]
	var r *rules
	if u != nil {
		r = u.rules.Load().clone()
	} else {
		r = newRules(s.table, s.pubsubAll)
	}
	for _, op := range merged {
		if err := r.apply(s.table, s.pubsubAll, op); err != nil {
			return nil, false, fmt.Errorf("Error in ACL SETUSER modifier '%s': %s", op, err)
		}
	}
	if u == nil {
		u = s.newUser(name, r)
		s.users[name] = u
		return u, false, nil
	}
	narrowed = channelsNarrowed(u.rules.Load(), r)
	s.publish(u, r)
	return u, narrowed, nil
}

// channelsNarrowed reports whether the channel patterns of after are not a
// superset of those of before (Redis's ACLKillPubsubClientsIfNeeded test).
func channelsNarrowed(before, after *rules) bool {
	var upcoming []string
	for _, sel := range after.selectors {
		if sel.allChannels {
			return false
		}
		upcoming = append(upcoming, sel.channels...)
	}
	for _, sel := range before.selectors {
		if sel.allChannels {
			return true
		}
		for _, c := range sel.channels {
			if !slices.Contains(upcoming, c) {
				return true
			}
		}
	}
	return false
}

// DelUser is ACL DELUSER: it removes the named users that exist and
// returns them (marked Deleted; the server disconnects their clients).
func (s *Store) DelUser(names ...string) ([]*User, error) {
	for _, n := range names {
		if n == DefaultUser {
			return nil, ErrDeleteDefault
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []*User
	for _, n := range names {
		if u := s.users[n]; u != nil {
			delete(s.users, n)
			u.deleted.Store(true)
			gone = append(gone, u)
		}
	}
	return gone, nil
}

// sortedUsers returns the users in name order (Redis's radix tree order:
// bytewise).
func (s *Store) sortedUsers() []*User {
	out := make([]*User, 0, len(s.users))
	for _, u := range s.users {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Usernames is ACL USERS: every user name in order.
func (s *Store) Usernames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, u := range s.sortedUsers() {
		out = append(out, u.name)
	}
	return out
}

// List is ACL LIST: "user <name> <rules>" for every user in name order.
func (s *Store) List() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, u := range s.sortedUsers() {
		out = append(out, "user "+u.name+" "+u.Describe())
	}
	return out
}

// Dump is the whole ACL state in aclfile form: ACL LIST's lines, each
// ended by "\n" (what ACL SAVE writes; Restore and LoadText read it back).
func (s *Store) Dump() string {
	var b strings.Builder
	for _, l := range s.List() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// SetDefaultPassword ties the default user to requirepass, as Redis does:
// "resetpass", then ">pass", or "nopass" for "".
func (s *Store) SetDefaultPassword(pass string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.def.rules.Load().clone()
	ops := []string{"resetpass", "nopass"}
	if pass != "" {
		ops[1] = ">" + pass
	}
	for _, op := range ops {
		if err := r.apply(s.table, s.pubsubAll, op); err != nil {
			panic(err)
		}
	}
	s.publish(s.def, r)
}

// AuthRequired reports whether a new connection must authenticate: the
// default user has a password or is off (Redis's authRequired). A
// connection that has not authenticated runs as the default user.
func (s *Store) AuthRequired() bool {
	r := s.def.rules.Load()
	return r.flags&flagNoPass == 0 || r.flags&flagDisabled != 0
}

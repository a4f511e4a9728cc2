package acl

import (
	"errors"
	"slices"
	"strings"
)

// Key pattern permissions (Redis's ACL_READ_PERMISSION, ACL_WRITE_PERMISSION).
const (
	permRead  = 1
	permWrite = 2
	permAll   = permRead | permWrite
)

type keyPattern struct {
	perm    int
	pattern string
}

// String is the pattern as rules print it: ~p, %R~p or %W~p.
func (k keyPattern) String() string {
	switch k.perm {
	case permAll:
		return "~" + k.pattern
	case permRead:
		return "%R~" + k.pattern
	case permWrite:
		return "%W~" + k.pattern
	}
	panic(errors.New("acl: key pattern without permission"))
}

// selector is one set of command, key and channel permissions: a user's
// root selector (the rules outside parentheses) or one of its "(...)"
// selectors. A selector is mutated only while it is private to a
// SETUSER being staged; published rules are never changed.
type selector struct {
	root        bool
	allCommands bool     // Redis's SELECTOR_FLAG_ALLCOMMANDS: +@all and no - since
	future      bool     // Redis's reserved bit: +@all, so future commands too
	bits        []uint64 // allowed command IDs
	// firstArgs: for a command whose bit is off, the first arguments that
	// still allow it (+select|0), in the order added.
	firstArgs   map[int][]string
	allKeys     bool
	keys        []keyPattern
	allChannels bool
	channels    []string
}

func newSelector(t *Table, root, allChannels bool) *selector {
	return &selector{root: root, bits: make([]uint64, (t.Len()+63)/64), allChannels: allChannels}
}

func (s *selector) clone() *selector {
	c := *s
	c.bits = slices.Clone(s.bits)
	c.keys = slices.Clone(s.keys)
	c.channels = slices.Clone(s.channels)
	if s.firstArgs != nil {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for id, a := range s.firstArgs {
			c.firstArgs[id] = slices.Clone(a)
		}
	}
	return &c
}

func (s *selector) bit(id int) bool { return s.bits[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int, on bool) {
	if on {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// changePerm allows or blocks a command and, for a container, its
// subcommands; it drops the command's first-arg exceptions.
func (s *selector) changePerm(c *Command, on bool) {
	s.setBit(c.ID, on)
	delete(s.firstArgs, c.ID)
	for _, sub := range c.Subs {
		s.setBit(sub.ID, on)
	}
}

func (s *selector) setAll(t *Table, on bool) {
	for i := range s.bits {
		s.bits[i] = 0
	}
	if on {
		for i := 0; i < t.Len(); i++ {
			s.bits[i/64] |= 1 << (i % 64)
		}
	}
	s.allCommands, s.future, s.firstArgs = on, on, nil
}

func (s *selector) setCategory(t *Table, bit uint32, on bool) {
	for _, c := range t.cmds {
		if c.cats&bit != 0 {
			s.changePerm(c, on)
		}
	}
}

func (s *selector) countCategory(t *Table, bit uint32) (on, off int) {
	for _, c := range t.cmds {
		if c.cats&bit != 0 {
			if s.bit(c.ID) {
				on++
			} else {
				off++
			}
		}
	}
	return on, off
}

// Reasons a rule is refused: each maps to Redis's text (ruleError).
var (
	errRuleSyntax       = errors.New("Syntax error")
	errRuleUnknown      = errors.New("Unknown command or category name in ACL")
	errRuleKeyAfterAll  = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errRuleChanAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errRuleNoPassword   = errors.New("The password you are trying to remove from the user does not exist")
	errRuleBadHash      = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errRuleSubFirstArg  = errors.New("Allowing first-arg of a subcommand is not supported")
)

// hasSpaces reports a byte isspace() or NUL would flag.
func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// apply applies one selector rule (keys, channels, commands).
func (s *selector) apply(t *Table, op string) error {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys, s.keys = true, nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels, s.channels = true, nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels, s.channels = false, nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		s.setAll(t, true)
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		s.setAll(t, false)
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return errRuleChanAfterAll
		}
		p := op[1:]
		if hasSpaces(p) {
			return errRuleSyntax
		}
		if !slices.Contains(s.channels, p) {
			s.channels = append(s.channels, p)
		}
		s.allChannels = false
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		return s.allowCommand(t, op[1:])
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		c := t.Lookup(op[1:])
		if c == nil {
			return errRuleUnknown
		}
		s.changePerm(c, false)
	case op[0] == '+' || op[0] == '-':
		b := categoryBit(op[2:])
		if b == 0 {
			return errRuleUnknown
		}
		s.setCategory(t, b, op[0] == '+')
	default:
		return errRuleSyntax
	}
	return nil
}

func (s *selector) addKeyPattern(op string) error {
	if s.allKeys {
		return errRuleKeyAfterAll
	}
	perm, off := permAll, 1
	if op[0] == '%' {
		perm = 0
	loop:
		for ; off < len(op); off++ {
			switch {
			case (op[off] == 'R' || op[off] == 'r') && perm&permRead == 0:
				perm |= permRead
			case (op[off] == 'W' || op[off] == 'w') && perm&permWrite == 0:
				perm |= permWrite
			case op[off] == '~':
				off++
				break loop
			default:
				return errRuleSyntax
			}
		}
	}
	if perm == 0 {
		// "%~p": Debian's 7.0.15 refuses it (the upstream source accepts it
		// and then cannot print it).
		return errRuleSyntax
	}
	p := op[min(off, len(op)):]
	if hasSpaces(p) {
		return errRuleSyntax
	}
	if i := slices.IndexFunc(s.keys, func(k keyPattern) bool { return k.pattern == p }); i >= 0 {
		s.keys[i].perm |= perm
	} else {
		s.keys = append(s.keys, keyPattern{perm: perm, pattern: p})
	}
	s.allKeys = false
	return nil
}

// allowCommand applies +name, +container|sub or +command|first-arg.
func (s *selector) allowCommand(t *Table, name string) error {
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		c := t.Lookup(name)
		if c == nil {
			return errRuleUnknown
		}
		s.changePerm(c, true)
		return nil
	}
	base, sub := name[:i], name[i+1:]
	c := t.Lookup(base)
	if c == nil {
		return errRuleUnknown
	}
	if c.Parent != nil {
		return errRuleSubFirstArg
	}
	if sub == "" {
		return errRuleSyntax
	}
	if len(c.Subs) > 0 {
		sc := t.Lookup(name)
		if sc == nil {
			return errRuleUnknown
		}
		s.changePerm(sc, true)
		return nil
	}
	// A first-arg exception (deprecated in Redis, still accepted).
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	if !slices.ContainsFunc(s.firstArgs[c.ID], func(a string) bool { return strings.EqualFold(a, sub) }) {
		s.firstArgs[c.ID] = append(s.firstArgs[c.ID], sub)
	}
	return nil
}

// describeCommands prints the command rules that rebuild s's bitmap, as
// Redis 7.0's ACLDescribeSelectorCommandRules does: +@all or -@all, then the
// categories chosen by its best-fit loop, then single commands (in table
// order here, see the package doc) and first-arg exceptions.
func (s *selector) describeCommands(t *Table) string {
	var b strings.Builder
	additive := !s.future
	fake := newSelector(t, false, false)
	if additive {
		b.WriteString("-@all ")
	} else {
		b.WriteString("+@all ")
		fake.setAll(t, true)
	}
	temp := &selector{bits: slices.Clone(s.bits)}
	applied := make([]bool, len(Categories))
	for {
		best, mindiff, maxsame := -1, int(^uint(0)>>1), 0
		for j := range Categories {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(t, 1<<j)
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
				best, mindiff, maxsame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		bit := uint32(1) << best
		fake.setCategory(t, bit, additive)
		temp.setCategory(t, bit, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(Categories[best])
		b.WriteByte(' ')
		applied[best] = true
	}
	var single func(cmds []*Command)
	single = func(cmds []*Command) {
		for _, c := range cmds {
			user, have := s.bit(c.ID), fake.bit(c.ID)
			if user != have {
				if user {
					b.WriteByte('+')
				} else {
					b.WriteByte('-')
				}
				b.WriteString(c.Name)
				b.WriteByte(' ')
				fake.changePerm(c, user)
			}
			single(c.Subs)
			if !user {
				for _, a := range s.firstArgs[c.ID] {
					b.WriteString("+" + c.Name + "|" + a + " ")
				}
			}
		}
	}
	single(t.top)
	if !slices.Equal(fake.bits, s.bits) {
		// Redis panics here rather than print rules that grant something
		// else; a wrong ACL LIST is a security bug, so do the same.
		panic(errors.New("acl: described command rules do not rebuild the bitmap"))
	}
	out := b.String()
	return out[:len(out)-1]
}

// describe prints the selector's keys, channels and commands (one ACL LIST
// selector, without parentheses).
func (s *selector) describe(t *Table) string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String())
			b.WriteByte(' ')
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.describeCommands(t))
	return b.String()
}

// SelectorInfo is one selector as ACL GETUSER shows it.
type SelectorInfo struct {
	Commands string // "-@all +get"
	Keys     string // "~k* %R~r*", "~*" for allkeys, "" for none
	Channels string // "&ch*", "&*" for allchannels, "" for none
}

func (s *selector) info(t *Table) SelectorInfo {
	in := SelectorInfo{Commands: s.describeCommands(t)}
	if s.allKeys {
		in.Keys = "~*"
	} else {
		parts := make([]string, len(s.keys))
		for i, k := range s.keys {
			parts[i] = k.String()
		}
		in.Keys = strings.Join(parts, " ")
	}
	if s.allChannels {
		in.Channels = "&*"
	} else {
		parts := make([]string, len(s.channels))
		for i, c := range s.channels {
			parts[i] = "&" + c
		}
		in.Channels = strings.Join(parts, " ")
	}
	return in
}

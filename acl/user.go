package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"slices"
	"strings"
	"sync/atomic"
)

// User flags, in the order Redis prints them.
const (
	flagEnabled = 1 << iota
	flagDisabled
	flagNoPass
	flagSkipSanitize
	flagSanitize
)

var flagNames = []struct {
	bit  int
	name string
}{
	{flagEnabled, "on"}, {flagDisabled, "off"}, {flagNoPass, "nopass"},
	{flagSkipSanitize, "skip-sanitize-payload"}, {flagSanitize, "sanitize-payload"},
}

// rules is the whole permission state of a user. A published rules value
// is immutable: SETUSER stages a clone and swaps it in.
type rules struct {
	flags     int
	passwords []string    // SHA-256 hex, in the order added
	selectors []*selector // [0] is the root selector
	described string      // ACL LIST rules, computed once
}

func (r *rules) clone() *rules {
	c := &rules{flags: r.flags, passwords: slices.Clone(r.passwords)}
	for _, s := range r.selectors {
		c.selectors = append(c.selectors, s.clone())
	}
	return c
}

// User is a user of a Store. Connections keep the *User they
// authenticated as: SETUSER changes what it may do from the next command
// on, DELUSER and ACL LOAD mark it Deleted (the server then disconnects its
// clients, as Redis does).
type User struct {
	name    string
	rules   atomic.Pointer[rules]
	deleted atomic.Bool
	table   *Table
}

// Name is the user's name.
func (u *User) Name() string { return u.name }

// Deleted reports whether the user was removed (DELUSER, ACL LOAD).
func (u *User) Deleted() bool { return u.deleted.Load() }

// Enabled reports the "on" flag.
func (u *User) Enabled() bool { return u.rules.Load().flags&flagEnabled != 0 }

// NoPass reports the "nopass" flag.
func (u *User) NoPass() bool { return u.rules.Load().flags&flagNoPass != 0 }

// HashPassword is a password as users keep it: lowercase SHA-256 hex.
func HashPassword(pass string) string {
	h := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(h[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// CheckPassword reports whether pass authenticates as u: u is on, and
// nopass or pass matches one of its passwords (compared in constant time).
func (u *User) CheckPassword(pass string) bool {
	r := u.rules.Load()
	if r.flags&flagDisabled != 0 {
		return false
	}
	if r.flags&flagNoPass != 0 {
		return true
	}
	h := HashPassword(pass)
	ok := false
	for _, p := range r.passwords {
		if subtle.ConstantTimeCompare([]byte(h), []byte(p)) == 1 {
			ok = true
		}
	}
	return ok
}

func newRules(t *Table, pubsubAll bool) *rules {
	return &rules{flags: flagDisabled, selectors: []*selector{newSelector(t, true, pubsubAll)}}
}

// applyUser applies one SETUSER word to staged rules r.
func (r *rules) apply(t *Table, pubsubAll bool, op string) error {
	if op == "" {
		return nil
	}
	switch {
	case strings.EqualFold(op, "on"):
		r.flags = r.flags&^flagDisabled | flagEnabled
	case strings.EqualFold(op, "off"):
		r.flags = r.flags&^flagEnabled | flagDisabled
	case strings.EqualFold(op, "skip-sanitize-payload"):
		r.flags = r.flags&^flagSanitize | flagSkipSanitize
	case strings.EqualFold(op, "sanitize-payload"):
		r.flags = r.flags&^flagSkipSanitize | flagSanitize
	case strings.EqualFold(op, "nopass"):
		r.flags |= flagNoPass
		r.passwords = nil
	case strings.EqualFold(op, "resetpass"):
		r.flags &^= flagNoPass
		r.passwords = nil
	case op[0] == '>' || op[0] == '#':
		h := op[1:]
		if op[0] == '>' {
			h = HashPassword(op[1:])
		} else if !validHash(h) {
			return errRuleBadHash
		}
		if !slices.Contains(r.passwords, h) {
			r.passwords = append(r.passwords, h)
		}
		r.flags &^= flagNoPass
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = HashPassword(op[1:])
		} else if !validHash(h) {
			return errRuleBadHash
		}
		i := slices.Index(r.passwords, h)
		if i < 0 {
			return errRuleNoPassword
		}
		r.passwords = slices.Delete(r.passwords, i, i+1)
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(t, false, pubsubAll)
		for _, w := range splitArgs(op[1 : len(op)-1]) {
			if err := s.apply(t, w); err != nil {
				return err
			}
		}
		r.selectors = append(r.selectors, s)
	case strings.EqualFold(op, "clearselectors"):
		r.selectors = r.selectors[:1]
	case strings.EqualFold(op, "reset"):
		r.flags = r.flags&^(flagNoPass|flagEnabled|flagSkipSanitize) | flagDisabled | flagSanitize
		r.passwords = nil
		root := r.selectors[0]
		root.allKeys, root.keys = false, nil
		root.allChannels, root.channels = pubsubAll, nil
		root.setAll(t, false)
		r.selectors = r.selectors[:1]
	default:
		return r.selectors[0].apply(t, op)
	}
	return nil
}

func (r *rules) describe(t *Table) string {
	var b strings.Builder
	for _, f := range flagNames {
		if r.flags&f.bit != 0 {
			b.WriteString(f.name + " ")
		}
	}
	for _, p := range r.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range r.selectors {
		if s.root {
			b.WriteString(s.describe(t))
		} else {
			b.WriteString(" (" + s.describe(t) + ")")
		}
	}
	return b.String()
}

// Describe is the user's rules as ACL LIST prints them after
// "user <name> ": flags, password hashes, the root selector, then each
// selector in parentheses ("on #5e88... ~k* resetchannels -@all +get").
func (u *User) Describe() string {
	r := u.rules.Load()
	return r.described
}

// UserInfo is ACL GETUSER's reply: the fields in Redis's order.
type UserInfo struct {
	Flags     []string // a set in RESP3
	Passwords []string // SHA-256 hex
	Root      SelectorInfo
	Selectors []SelectorInfo
}

// Info is the data of ACL GETUSER for u.
func (u *User) Info() UserInfo {
	r := u.rules.Load()
	in := UserInfo{Flags: []string{}, Passwords: slices.Clone(r.passwords), Root: r.selectors[0].info(u.table)}
	if in.Passwords == nil {
		in.Passwords = []string{}
	}
	for _, f := range flagNames {
		if r.flags&f.bit != 0 {
			in.Flags = append(in.Flags, f.name)
		}
	}
	in.Selectors = []SelectorInfo{}
	for _, s := range r.selectors[1:] {
		in.Selectors = append(in.Selectors, s.info(u.table))
	}
	return in
}

// splitArgs splits the inside of a "(...)" selector as Redis's
// sdssplitargs does: spaces separate, "double" quotes take \n \r \t \b \a
// \\ \" and \xHH escapes, 'single' quotes take \'. Unbalanced quotes give
// no words at all (Redis then creates an empty selector).
func splitArgs(line string) []string {
	var out []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return out
		}
		var cur []byte
		inq, insq := false, false
		for {
			if inq {
				if i >= len(line) {
					return nil
				}
				switch {
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					switch line[i] {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, line[i])
					}
				case line[i] == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil
					}
					inq = false
					i++
					goto done
				default:
					cur = append(cur, line[i])
				}
			} else if insq {
				if i >= len(line) {
					return nil
				}
				switch {
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil
					}
					insq = false
					i++
					goto done
				default:
					cur = append(cur, line[i])
				}
			} else {
				if i >= len(line) {
					goto done
				}
				switch line[i] {
				case ' ', '\n', '\r', '\t', 0:
					goto done
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, line[i])
				}
			}
			i++
		}
	done:
		out = append(out, string(cur))
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

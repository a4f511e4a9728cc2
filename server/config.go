package server

import (
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// CONFIG GET / SET / RESETSTAT / REWRITE (semantics: redis.io/commands/config-get,
// config-set, config-rewrite; Redis 7.0's rules and error texts). The
// parameters are in configtable.go. Every value is kept in canonical form
// (what CONFIG GET prints) in the server's configStore; the parameters the
// server honours also have an apply hook that pushes the value into the
// live settings the connections read.
//
// CONFIG SET of several parameters is atomic: every name and value is
// validated before anything changes, then the values are stored and the
// apply hooks run once each; if one fails (a port already in use) the old
// values are stored and applied back and nothing has changed.

// configStore holds the current value of every parameter, by canonical
// name. mu also serialises CONFIG SET and CONFIG REWRITE.
type configStore struct {
	mu     sync.Mutex
	params []configParam
	byName map[string]*configParam // lower-case name and alias
	vals   map[string]string       // canonical name -> canonical value
}

// errImmutable is Redis's reason for a parameter that cannot be set.
var errImmutable = errors.New("can't set immutable config")

// ConfigLine is one parameter setting from a config file, validated by
// CheckConfigLine: the canonical name and the canonical value.
type ConfigLine struct {
	Name, Value string
}

// defaultConfigParams is the table shared by start-up checks (the config
// file loader) and every server.
var defaultConfigParams = newConfigTable()

func newConfigStore() *configStore {
	cs := &configStore{params: newConfigTable(), byName: map[string]*configParam{}, vals: map[string]string{}}
	for i := range cs.params {
		p := &cs.params[i]
		cs.byName[p.name] = p
		if p.alias != "" {
			cs.byName[p.alias] = p
		}
		cs.vals[p.name] = p.def
	}
	return cs
}

func (cs *configStore) lookup(name string) *configParam {
	return cs.byName[strings.ToLower(name)]
}

// initConfig fills the store from the start-up configuration: the
// settings Config carries as fields, then cfg.Params (a config file's
// other lines), each applied as CONFIG SET would.
func (s *Server) initConfig(cfg Config) {
	cs := newConfigStore()
	s.conf = cs
	cs.vals["bind"] = cfg.Bind
	cs.vals["requirepass"] = cfg.Requirepass
	cs.vals["protected-mode"] = yesNo(cfg.ProtectedMode)
	cs.vals["proto-max-bulk-len"] = strconv.FormatInt(cfg.ProtoMaxBulkLen, 10)
	cs.vals["maxclients"] = strconv.Itoa(cfg.MaxClients)
	cs.vals["timeout"] = strconv.Itoa(cfg.Timeout)
	cs.vals["appendfsync"] = appendfsyncFor(cfg.Durability)
	cs.vals["save"] = ""
	cs.vals["port"] = strconv.Itoa(cfg.Port)
	for _, l := range cfg.Params {
		p := cs.lookup(l.Name)
		if p == nil || p.group == "listen" {
			continue
		}
		cs.vals[p.name] = l.Value
		if p.apply != nil {
			if err := p.apply(s, l.Value); err != nil {
				s.logf("config: %s: %v", p.name, err)
			}
		}
	}
}

// AppendfsyncWarning is the warning for an appendfsync setting that asks
// for more than the durability mode gives ("" when there is none): always
// means power-loss safety, which only msync mode gives everywhere.
func AppendfsyncWarning(param, value, durability string) string {
	if param != "appendfsync" || value != "always" || durability == "msync" {
		return ""
	}
	return "appendfsync always asks for safety against power loss; this server runs --durability " + durability +
		", which does not give it on a filesystem without DAX: use --durability msync"
}

// appendfsyncFor is the appendfsync setting whose guarantee the durability
// mode matches (DESIGN.md): pmem mode is at least everysec (always on a DAX
// filesystem, which the server does not claim here), msync always, none no.
func appendfsyncFor(durability string) string {
	switch durability {
	case "msync":
		return "always"
	case "none":
		return "no"
	}
	return "everysec"
}

// ConfigValue returns the current value of a parameter, by name or alias,
// as CONFIG GET prints it; ok is false for an unknown name.
func (s *Server) ConfigValue(name string) (value string, ok bool) {
	p := s.conf.lookup(name)
	if p == nil {
		return "", false
	}
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	return s.configGet(p), true
}

func (s *Server) configGet(p *configParam) string {
	if p.get != nil {
		return p.get(s)
	}
	return s.conf.vals[p.name]
}

// CheckConfigLine validates a config file line's parameter and arguments
// as redis-server's loader does, and returns the canonical name and value;
// ok is false when the name is not a parameter. replaced is the note on
// what Persimmon does instead when the value is not the default, for the
// loader's log.
func CheckConfigLine(name string, args []string) (line ConfigLine, replaced string, ok bool, err error) {
	var p *configParam
	for i := range defaultConfigParams {
		q := &defaultConfigParams[i]
		if strings.EqualFold(q.name, name) || (q.alias != "" && strings.EqualFold(q.alias, name)) {
			p = q
			break
		}
	}
	if p == nil {
		return ConfigLine{}, "", false, nil
	}
	if p.flags&cfgMultiArg == 0 && len(args) != 1 {
		return ConfigLine{}, "", true, errors.New("wrong number of arguments")
	}
	v, err := p.canonical(p.def, strings.Join(args, " "))
	if err != nil {
		return ConfigLine{}, "", true, err
	}
	if v != p.def {
		replaced = p.replaced
	}
	return ConfigLine{p.name, v}, replaced, true, nil
}

// canonical validates v for p and returns it as CONFIG GET prints it; cur
// is the current value (for the special parameters that merge).
func (p *configParam) canonical(cur, v string) (string, error) {
	var out string
	switch p.kind {
	case kindBool:
		b, err := configBool(v)
		if err != nil {
			return "", err
		}
		out = yesNo(b)
	case kindInt:
		n, ok := ParseInt64([]byte(v))
		if !ok {
			return "", errors.New("argument couldn't be parsed into an integer")
		}
		if err := p.inRange(n); err != nil {
			return "", err
		}
		if p.fix != nil {
			n = p.fix(n)
		}
		out = strconv.FormatInt(n, 10)
	case kindOctal:
		n, err := strconv.ParseInt(v, 8, 64)
		if err != nil {
			return "", errors.New("argument couldn't be parsed as an octal number")
		}
		if err := p.inRange(n); err != nil {
			return "", err
		}
		out = strconv.FormatInt(n, 8)
	case kindMemory, kindMemPercent:
		u, err := memToBytes(v)
		if err == nil && p.kind == kindMemPercent && int64(u) < 0 {
			// A saturated size is -1 to Redis's signed type: a percentage.
			if int64(u) < p.lo {
				return "", fmt.Errorf("percentage argument must be less or equal to %d", -p.lo)
			}
			return strconv.FormatInt(-int64(u), 10) + "%", nil
		}
		if err == nil {
			if p.hi != maxUint64 && u > uint64(p.hi) || u < uint64(max(p.lo, 0)) {
				return "", p.rangeError()
			}
			if p.fix != nil {
				u = uint64(p.fix(int64(u)))
			}
			out = strconv.FormatUint(u, 10)
			break
		}
		if p.kind == kindMemPercent {
			if n, ok := ParseInt64([]byte(strings.TrimSuffix(v, "%"))); ok && len(v) > 1 && strings.HasSuffix(v, "%") && n >= 0 {
				if -n < p.lo {
					return "", fmt.Errorf("percentage argument must be less or equal to %d", -p.lo)
				}
				out = strconv.FormatInt(n, 10) + "%"
				break
			}
			return "", errors.New("argument must be a memory or percent value")
		}
		return "", errors.New("argument must be a memory value")
	case kindEnum:
		var err error
		if out, err = p.enumCanonical(v); err != nil {
			return "", err
		}
	case kindString:
		out = v
	case kindSpecial:
		if p.parse == nil {
			return v, nil
		}
		return p.parse(cur, v)
	}
	if p.check != nil {
		if err := p.check(out); err != nil {
			return "", err
		}
	}
	return out, nil
}

func (p *configParam) inRange(n int64) error {
	if (p.unsigned && n < 0) || n < p.lo || (p.hi != maxUint64 && n > p.hi) {
		return p.rangeError()
	}
	return nil
}

func (p *configParam) rangeError() error {
	hi := strconv.FormatInt(p.hi, 10)
	if p.hi == maxUint64 {
		hi = strconv.FormatUint(math.MaxUint64, 10)
	}
	lo := strconv.FormatInt(p.lo, 10)
	if p.kind == kindOctal {
		lo, hi = strconv.FormatInt(p.lo, 8), strconv.FormatInt(p.hi, 8)
	}
	return fmt.Errorf("argument must be between %s and %s inclusive", lo, hi)
}

// enumCanonical maps v (case-insensitive; with cfgMultiArg a
// space-separated set of flags) to the names CONFIG GET prints.
func (p *configParam) enumCanonical(v string) (string, error) {
	find := func(name string) (int, bool) {
		for _, e := range p.enum {
			if strings.EqualFold(e.name, name) {
				return e.val, true
			}
		}
		return 0, false
	}
	bad := func() error {
		names := make([]string, len(p.enum))
		for i, e := range p.enum {
			names[i] = e.name
		}
		return errors.New("argument(s) must be one of the following: " + strings.Join(names, ", "))
	}
	if p.flags&cfgMultiArg == 0 {
		val, ok := find(v)
		if !ok {
			return "", bad()
		}
		for _, e := range p.enum {
			if e.val == val {
				return e.name, nil
			}
		}
	}
	bits := 0
	for _, a := range strings.Split(v, " ") {
		val, ok := find(a)
		if !ok {
			return "", bad()
		}
		bits |= val
	}
	if bits&1 != 0 && bits&2 != 0 { // shutdown-on-sig*: save and nosave
		return "", errors.New("shutdown options SAVE and NOSAVE can't be used simultaneously")
	}
	if bits == 0 {
		return p.enum[0].name, nil
	}
	var names []string
	for _, e := range p.enum {
		if e.val != 0 && bits&e.val == e.val {
			names = append(names, e.name)
		}
	}
	return strings.Join(names, " "), nil
}

// configMatches returns the parameter names any of patterns matches, each
// once, with the parameter they name: a pattern without glob characters
// names one parameter by name or alias (hidden ones too) and is answered
// under the name given; a glob matches names and aliases of every
// parameter not hidden.
func (cs *configStore) configMatches(patterns [][]byte) (names []string, params []*configParam) {
	seen := map[string]bool{}
	add := func(name string, p *configParam) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
			params = append(params, p)
		}
	}
	for _, pat := range patterns {
		if !strings.ContainsAny(string(pat), "[*?") {
			if p := cs.lookup(string(pat)); p != nil {
				add(string(pat), p)
			}
			continue
		}
		for i := range cs.params {
			p := &cs.params[i]
			if p.flags&cfgHidden != 0 {
				continue
			}
			if globMatchFold(pat, []byte(p.name)) {
				add(p.name, p)
			}
			if p.alias != "" && globMatchFold(pat, []byte(p.alias)) {
				add(p.alias, p)
			}
		}
	}
	return names, params
}

// configGetCommand: CONFIG GET parameter [parameter ...].
func configGetCommand(c *Client, args [][]byte) {
	cs := c.Srv.conf
	names, params := cs.configMatches(args[2:])
	cs.mu.Lock()
	vals := make([]string, len(params))
	for i, p := range params {
		vals[i] = c.Srv.configGet(p)
	}
	cs.mu.Unlock()
	c.WriteMap(len(names))
	for i, n := range names {
		c.WriteBulkString(n)
		c.WriteBulkString(vals[i])
	}
}

// configSetCommand: CONFIG SET parameter value [parameter value ...],
// atomic (see the top of this file).
func configSetCommand(c *Client, args [][]byte) {
	if len(args)%2 != 0 {
		c.WriteError("ERR syntax error")
		return
	}
	s := c.Srv
	cs := s.conf
	failed := func(name string, err error) {
		c.WriteError("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + err.Error())
	}
	type change struct {
		p        *configParam
		given    string // the name as Redis reports it: the alias if given by it
		raw      string
		old, new string
	}
	var changes []change
	var refused error
	var refusedName string
	for i := 2; i < len(args); i += 2 {
		name := string(args[i])
		p := cs.lookup(name)
		if p == nil && refused == nil {
			c.WriteError("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'")
			return
		}
		if refused != nil {
			continue // the first error is the one reported
		}
		switch {
		case p.flags&cfgImmutable != 0:
			refused, refusedName = errImmutable, name
		case p.flags&cfgProtected != 0 && !s.protectedConfigAllowed(c):
			refused, refusedName = errors.New("can't set protected config"), name
		}
		for _, ch := range changes {
			// A name and its alias are two entries to Redis: only the same
			// spelling twice is a duplicate.
			if refused == nil && ch.p == p && strings.EqualFold(ch.given, name) {
				refused, refusedName = errors.New("duplicate parameter"), name
			}
		}
		given := p.name
		if p.alias != "" && strings.EqualFold(name, p.alias) {
			given = p.alias
		}
		changes = append(changes, change{p: p, given: given, raw: string(args[i+1])})
	}
	if refused != nil {
		failed(refusedName, refused)
		return
	}

	cs.mu.Lock()
	defer cs.mu.Unlock()
	// bind and port rebind together: each starts from what is listening.
	cs.vals["bind"] = *s.live.bind.Load()
	cs.vals["port"] = strconv.FormatInt(s.live.port.Load(), 10)
	for i := range changes {
		ch := &changes[i]
		ch.old = s.configGet(ch.p)
		v, err := ch.p.canonical(ch.old, ch.raw)
		if err != nil {
			failed(ch.given, err)
			return
		}
		if ch.p.name == "dir" {
			// The data directory holds the open arena; Redis's chdir has no
			// counterpart.
			failed(ch.p.name, errors.New("the data directory holds the open keyspace: restart with --dir to move it"))
			return
		}
		ch.new = v
	}
	for _, ch := range changes {
		cs.vals[ch.p.name] = ch.new
	}
	applied := map[string]bool{}
	var applyErr error
	var applyName string
	for _, ch := range changes {
		if ch.p.apply == nil || (ch.p.group != "" && applied[ch.p.group]) {
			continue
		}
		if ch.p.group != "" {
			applied[ch.p.group] = true
		}
		if err := ch.p.apply(s, ch.new); err != nil {
			applyErr, applyName = err, ch.p.name
			s.logf("CONFIG SET %s: %v; restoring the previous settings", ch.p.name, err)
			break
		}
	}
	if applyErr != nil {
		for _, ch := range changes {
			cs.vals[ch.p.name] = ch.old
		}
		applied = map[string]bool{}
		for _, ch := range changes {
			if ch.p.apply == nil || (ch.p.group != "" && applied[ch.p.group]) {
				continue
			}
			if ch.p.group != "" {
				applied[ch.p.group] = true
			}
			if err := ch.p.apply(s, ch.old); err != nil {
				s.logf("CONFIG SET: restoring %s: %v", ch.p.name, err)
			}
		}
		failed(applyName, applyErr)
		return
	}
	for _, ch := range changes {
		switch {
		case ch.new == ch.old:
			// Unchanged (tools that restore a whole CONFIG GET * do this).
		case ch.p.flags&cfgSensitive != 0:
			s.logf("CONFIG SET %s (value not logged)", ch.p.name)
		case ch.p.replaced != "" && ch.new != ch.p.def:
			s.logf("CONFIG SET %s %q: %s", ch.p.name, ch.new, ch.p.replaced)
			if w := AppendfsyncWarning(ch.p.name, ch.new, s.cfg.Durability); w != "" {
				s.logf("warning: %s", w)
			}
		default:
			s.logf("CONFIG SET %s %q", ch.p.name, ch.new)
		}
	}
	c.WriteOK()
}

// protectedConfigAllowed is enable-protected-configs for this client: yes,
// or local and the client is on a loopback address.
func (s *Server) protectedConfigAllowed(c *Client) bool {
	return s.protectedActionAllowed(c, "enable-protected-configs")
}

// Logf writes a line to the server log (DEBUG LOG).
func (s *Server) Logf(format string, args ...any) { s.logf(format, args...) }

// DebugCommandAllowed says whether c may run DEBUG: enable-debug-command
// is yes, or local and c is on a loopback address (Redis 7.0).
func (s *Server) DebugCommandAllowed(c *Client) bool {
	return s.protectedActionAllowed(c, "enable-debug-command")
}

// protectedActionAllowed reads one of Redis's enable-* protected-action
// parameters (enable-protected-configs, enable-debug-command) for c.
func (s *Server) protectedActionAllowed(c *Client, param string) bool {
	s.conf.mu.Lock() // vals is CONFIG SET's map (another client's may be writing it)
	v := s.conf.vals[param]
	s.conf.mu.Unlock()
	switch v {
	case "yes":
		return true
	case "local":
		if c.conn == nil {
			return false
		}
		if _, ok := c.conn.unixSocket(); ok {
			return true // a unix-socket client is local (Redis's islocalClient)
		}
		host, _, err := net.SplitHostPort(c.conn.addr)
		ip := net.ParseIP(host)
		return err == nil && ip != nil && ip.IsLoopback()
	}
	return false
}

// applyListen rebinds to the stored bind and port.
func applyListen(s *Server, _ string) error {
	port, err := strconv.Atoi(s.conf.vals["port"])
	if err != nil {
		return err
	}
	bind := s.conf.vals["bind"]
	if bind == *s.live.bind.Load() && int64(port) == s.live.port.Load() {
		return nil
	}
	if err := s.rebind(bind, port); err != nil {
		s.logf("CONFIG SET bind/port: %v", err)
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	return nil
}

func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func configBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, errors.New("argument must be 'yes' or 'no'")
}

// ParseMemory parses a size the way redis.conf does: a plain number of
// bytes, or a number with a unit, case-insensitive: k=1000, kb=1024,
// m=1000², mb=1024², g=1000³, gb=1024³.
func ParseMemory(s string) (int64, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			l, mul = strings.TrimSuffix(l, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(l, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid memory size %q", s)
	}
	if n > math.MaxInt64/mul {
		return 0, fmt.Errorf("memory size %q overflows", s)
	}
	return n * mul, nil
}

// configNames lists every name and alias CONFIG GET * answers, sorted
// (tests).
func configNames() []string {
	var out []string
	for _, p := range defaultConfigParams {
		if p.flags&cfgHidden != 0 {
			continue
		}
		out = append(out, p.name)
		if p.alias != "" {
			out = append(out, p.alias)
		}
	}
	sort.Strings(out)
	return out
}

func configResetstatCommand(c *Client, _ [][]byte) {
	c.Srv.resetStats()
	c.WriteOK()
}

func configHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "CONFIG", []string{
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	})
}

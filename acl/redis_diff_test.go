package acl

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// setuserCases are ACL SETUSER argument lists (after the user name), each
// applied to a fresh user in Redis and here, or, with a leading "=", to
// the user of the case before it.
var setuserCases = [][]string{
	{},
	{"on"},
	{"on", "off"},
	{"reset"},
	{"on", ">p1", ">p2", "<p1"},
	{"on", ">p1", ">p1"},
	{"<nope"},
	{"#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"},
	{"#5E884898DA28047151D0E56F8DC6292773603D0D6AABBDD62A11EF721D1542D8"},
	{"#abc"},
	{">x", "!2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},
	{"!2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},
	{">x", "nopass"},
	{"nopass", ">x"},
	{"nopass", "resetpass"},
	{"skip-sanitize-payload"},
	{"sanitize-payload", "skip-sanitize-payload", "sanitize-payload"},
	{"+get"},
	{"+GET", "+set", "-get"},
	{"+@all"},
	{"allcommands", "-get"},
	{"+@all", "-@dangerous"},
	{"+@all", "-@write", "+set"},
	{"+@read"},
	{"+@read", "+@write", "-@dangerous"},
	{"+@string", "-get", "+hget"},
	{"+@hash", "+@list", "+@set", "+@sortedset"},
	{"+@fast", "-@write"},
	{"+@all", "-@keyspace", "-@read", "+@string"},
	{"nocommands", "+@admin", "-@dangerous"},
	{"+@pubsub", "+@connection", "+@transaction", "+@scripting"},
	{"+@nosuch"},
	{"+nosuch"},
	{"-nosuch"},
	{"+"},
	{"-@"},
	{"+@"},
	{"bogus"},
	{"+config|get"},
	{"+config|nosuch"},
	{"+config|get|x"},
	{"+config|"},
	{"+client", "-client|kill"},
	{"+@all", "-client|kill", "-config"},
	{"-config|get"},
	{"+select|0", "+select|1", "+select|0"},
	{"+select|0", "+select"},
	{"+select|0", "-select"},
	{"+select", "-select|0"},
	{"+debug|object"},
	{"~k*"},
	{"~k*", "~k*", "%R~k*"},
	{"%R~r*", "%W~w*", "%RW~rw*"},
	{"%WR~x", "%r~y"},
	{"%R~r*", "%W~r*"},
	{"%RR~x"},
	{"%X~x"},
	{"%R"},
	{"%~x"},
	{"~*"},
	{"allkeys", "~k*"},
	{"~k*", "allkeys"},
	{"~k*", "resetkeys", "~j*"},
	{"%RW~*"},
	{"~a b"},
	{"&c*"},
	{"&c*", "&c*", "&d"},
	{"allchannels"},
	{"&*", "&c"},
	{"&c", "resetchannels"},
	{"&a b"},
	{"(+get ~k*)"},
	{"(", "+get", "~k*", ")"},
	{"(+get", "~k*)"},
	{"(+get ~k*)", "(+set &c)"},
	{"(+get ~k*)", "clearselectors"},
	{"(+get", "~k*"},
	{"(+nosuch)"},
	{"()"},
	{"(~k* %R~r* &ch allchannels +@read -get)"},
	{"(\"+get\" '~k*')"},
	{"(\"+get)"},
	{"(allkeys ~x)"},
	{"on", ">pw", "~k*", "&c", "+get", "(+set ~s*)", "reset"},
	{"on", "nopass", "allkeys", "allchannels", "allcommands"},
	{"", "on"},
}

// selectorRules splits a command rule string into its ordered part
// (+@all/-@all and the categories) and its single-command rules, whose
// order in Redis follows a hash seed (see the package doc): sorted.
func normaliseCommands(rules string) string {
	words := strings.Fields(rules)
	i := 0
	for i < len(words) && (strings.HasPrefix(words[i], "+@") || strings.HasPrefix(words[i], "-@")) {
		i++
	}
	rest := slices.Clone(words[i:])
	slices.Sort(rest)
	return strings.Join(words[:i], " ") + " | " + strings.Join(rest, " ")
}

// normaliseListLine applies normaliseCommands to each selector of an ACL
// LIST line.
func normaliseListLine(line string) string {
	var out []string
	depth := 0
	var cur []string
	flush := func() {
		var keep, cmds []string
		for _, w := range cur {
			if strings.HasPrefix(w, "+") || strings.HasPrefix(w, "-") {
				cmds = append(cmds, w)
			} else {
				keep = append(keep, w)
			}
		}
		out = append(out, strings.Join(keep, " ")+" "+normaliseCommands(strings.Join(cmds, " ")))
		cur = nil
	}
	for _, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "(") && depth == 0 {
			flush()
			depth = 1
			w = w[1:]
		}
		end := strings.HasSuffix(w, ")") && depth == 1
		if end {
			w = w[:len(w)-1]
		}
		if w != "" {
			cur = append(cur, w)
		}
		if end {
			flush()
			depth = 0
		}
	}
	flush()
	return strings.Join(out, " || ")
}

func infoFromRedis(v any) (UserInfo, error) {
	arr, ok := v.([]any)
	if !ok {
		return UserInfo{}, fmt.Errorf("GETUSER reply %v", v)
	}
	sel := func(m []any) SelectorInfo {
		var s SelectorInfo
		for i := 0; i+1 < len(m); i += 2 {
			switch m[i] {
			case "commands":
				s.Commands = m[i+1].(string)
			case "keys":
				s.Keys = m[i+1].(string)
			case "channels":
				s.Channels = m[i+1].(string)
			}
		}
		return s
	}
	in := UserInfo{Root: sel(arr), Flags: []string{}, Passwords: []string{}, Selectors: []SelectorInfo{}}
	for i := 0; i+1 < len(arr); i += 2 {
		switch arr[i] {
		case "flags":
			for _, f := range arr[i+1].([]any) {
				in.Flags = append(in.Flags, f.(string))
			}
		case "passwords":
			for _, p := range arr[i+1].([]any) {
				in.Passwords = append(in.Passwords, p.(string))
			}
		case "selectors":
			for _, s := range arr[i+1].([]any) {
				in.Selectors = append(in.Selectors, sel(s.([]any)))
			}
		}
	}
	return in, nil
}

func normaliseInfo(in UserInfo) UserInfo {
	in.Root.Commands = normaliseCommands(in.Root.Commands)
	for i := range in.Selectors {
		in.Selectors[i].Commands = normaliseCommands(in.Selectors[i].Commands)
	}
	return in
}

// TestSetUserMatchesRedis runs every case in redis-server 7.0.15 and in a
// Store with Redis's own command table, and compares the reply, the ACL
// LIST line and the ACL GETUSER fields.
func TestSetUserMatchesRedis(t *testing.T) {
	rc, _ := startRedis(t)
	st := NewStore(redisTable(t))
	for i, args := range setuserCases {
		name := fmt.Sprintf("u%d", i)
		rv, err := rc.do(append([]string{"ACL", "SETUSER", name}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		_, _, gerr := st.SetUser(name, args)
		want := "OK"
		if e, ok := rv.(respErr); ok {
			want = string(e)
		}
		got := "OK"
		if gerr != nil {
			got = "ERR " + gerr.Error()
		}
		if got != want {
			t.Errorf("case %d %q: reply\n got %q\nwant %q", i, args, got, want)
			continue
		}
		if gerr != nil {
			continue
		}
		lv, _ := rc.do("ACL", "LIST")
		var wantLine string
		for _, l := range lv.([]any) {
			if strings.HasPrefix(l.(string), "user "+name+" ") {
				wantLine = l.(string)
			}
		}
		gotLine := "user " + name + " " + st.User(name).Describe()
		if normaliseListLine(gotLine) != normaliseListLine(wantLine) {
			t.Errorf("case %d %q: ACL LIST\n got %q\nwant %q", i, args, gotLine, wantLine)
		}
		gv, _ := rc.do("ACL", "GETUSER", name)
		wantInfo, err := infoFromRedis(gv)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := normaliseInfo(st.User(name).Info()), normaliseInfo(wantInfo); !reflect.DeepEqual(g, w) {
			t.Errorf("case %d %q: GETUSER\n got %+v\nwant %+v", i, args, g, w)
		}
	}
	// ACL LIST as a whole: same users, in the same order.
	lv, _ := rc.do("ACL", "LIST")
	var want []string
	for _, l := range lv.([]any) {
		want = append(want, normaliseListLine(l.(string)))
	}
	var got []string
	for _, l := range st.List() {
		got = append(got, normaliseListLine(l))
	}
	if !slices.Equal(got, want) {
		t.Errorf("ACL LIST\n got %q\nwant %q", got, want)
	}
	// The aclfile text round-trips: loading Dump gives the same lines.
	st2 := NewStore(redisTable(t))
	if _, err := st2.LoadText(st.Dump(), "x.acl"); err != nil {
		t.Fatal(err)
	}
	if st2.Dump() != st.Dump() {
		t.Errorf("Dump does not round-trip:\n%s\nvs\n%s", st2.Dump(), st.Dump())
	}
}

// TestCatMatchesRedis compares ACL CAT <category> for every category (as
// sets: Redis's order is its hash order).
func TestCatMatchesRedis(t *testing.T) {
	rc, _ := startRedis(t)
	tb := redisTable(t)
	v, _ := rc.do("ACL", "CAT")
	var cats []string
	for _, c := range v.([]any) {
		cats = append(cats, c.(string))
	}
	if !slices.Equal(cats, Categories) {
		t.Fatalf("ACL CAT: %q, want %q", Categories, cats)
	}
	for _, c := range cats {
		v, _ := rc.do("ACL", "CAT", c)
		var want []string
		for _, n := range v.([]any) {
			want = append(want, n.(string))
		}
		got, ok := tb.Category(c)
		slices.Sort(want)
		slices.Sort(got)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("ACL CAT %s:\n got %q\nwant %q", c, got, want)
		}
	}
}

// aclLoadCases are aclfile texts; Redis's and our ACL LOAD replies must
// match (with the file's path in place of PATH).
var aclLoadCases = []string{
	"",
	"\n\n",
	"user alice on >pw ~* +@all\n",
	"user alice on >pw ~* +@all\nuser bob off\n",
	"user default on nopass ~* &* +@all\n",
	"user default off\n",
	"# a comment\n",
	"usr alice on\n",
	"user\n",
	"user alice on\nuser alice off\n",
	"user alice on +nosuch -alsonot\n",
	"user alice on bogus +nosuch ~a b\n",
	"user alice on ~* ~k\n",
	"user alice (+get ~k*)\n",
	"user alice  on   +get\n",
	"user alice on\tx\n",
	"user alice on +get\r\nuser bob on\r\n",
	"user alice #abc\n",
	"user alice on\nbad line\nuser bob +nosuch\n",
}

func TestLoadMatchesRedis(t *testing.T) {
	rc, path := startRedis(t)
	// Each file also defines admin, whom the test connection is: a
	// successful load disconnects the clients of every replaced user.
	const admin = "user admin on nopass ~* &* +@all\n"
	for i, text := range aclLoadCases {
		if err := os.WriteFile(path, []byte(text+admin), 0o644); err != nil {
			t.Fatal(err)
		}
		rv, err := rc.do("ACL", "LOAD")
		if err != nil {
			t.Fatal(err)
		}
		want := "OK"
		if e, ok := rv.(respErr); ok {
			want = string(e)
		}
		st := NewStore(redisTable(t))
		got := "OK"
		if _, err := st.LoadFile(path); err != nil {
			got = "ERR " + err.Error()
		}
		if got != want {
			t.Errorf("case %d %q:\n got %q\nwant %q", i, text, got, want)
			continue
		}
		if got != "OK" {
			continue
		}
		rc.redial(t)
		if v, _ := rc.do("AUTH", "admin", "x"); v != "OK" {
			t.Fatalf("AUTH admin: %v", v)
		}
		lv, _ := rc.do("ACL", "LIST")
		var wantLines []string
		for _, l := range lv.([]any) {
			wantLines = append(wantLines, normaliseListLine(l.(string)))
		}
		var gotLines []string
		for _, l := range st.List() {
			gotLines = append(gotLines, normaliseListLine(l))
		}
		if !slices.Equal(gotLines, wantLines) {
			t.Errorf("case %d %q: ACL LIST\n got %q\nwant %q", i, text, gotLines, wantLines)
		}
	}
	os.Remove(path)
	rv, _ := rc.do("ACL", "LOAD")
	_, err := NewStore(redisTable(t)).LoadFile(path)
	if e, _ := rv.(respErr); err == nil || "ERR "+err.Error() != string(e) {
		t.Errorf("missing file: got %v, want %q", err, rv)
	}
}

// dryrunUsers and dryrunCommands: every command is checked for every user
// by ACL DRYRUN in Redis and by User.Check here.
var dryrunUsers = [][]string{
	{"on", "nopass", "+get", "~k*"},
	{"on", "nopass", "+@all", "%R~r*", "%W~w*", "allchannels"},
	{"on", "nopass", "+@all", "~a*", "(+get ~b*)", "(+set ~c* &c*)"},
	{"on", "nopass", "+select|0", "+config|get", "&c*", "+publish", "+subscribe", "+psubscribe"},
	{"on", "nopass", "+@all", "allkeys", "resetchannels", "&news.*"},
	{"on", "nopass", "+@read", "-@dangerous", "~*", "(%W~w* +@write)"},
}

var dryrunCommands = [][]string{
	{"get", "k1"}, {"get", "x"}, {"set", "k1", "v"}, {"set", "r1", "v"}, {"get", "r1"},
	{"get", "w1"}, {"set", "w1", "v"}, {"exists", "w1"}, {"exists", "x"}, {"rename", "r1", "w1"},
	{"copy", "r1", "w1"}, {"lmove", "r1", "w1", "left", "right"}, {"get", "b1"}, {"set", "c1", "v"},
	{"set", "b1", "v"}, {"mget", "a1", "b1"}, {"mset", "a1", "1", "c1", "2"}, {"mget", "b1", "x", "y"},
	{"select", "0"}, {"select", "1"}, {"SELECT", "0"}, {"config", "get", "x"}, {"config", "set", "x", "y"},
	{"publish", "c1", "m"}, {"publish", "news.x", "m"}, {"publish", "other", "m"},
	{"subscribe", "news.a", "other"}, {"subscribe", "c1"}, {"psubscribe", "news.*"}, {"psubscribe", "news.x"},
	{"psubscribe", "c*"}, {"ping"}, {"auth", "x"}, {"hello"}, {"keys", "*"}, {"flushall"},
	{"spublish", "c1", "m"}, {"ssubscribe", "news.a", "c2"}, {"unsubscribe", "zz"}, {"punsubscribe", "zz*"},
	{"sort", "r1"}, {"type", "w1"}, {"append", "w1", "x"}, {"incr", "k1"}, {"get", ""},
}

// requestFromRedis builds a Request for args with the key positions and
// flags redis-server reports (COMMAND GETKEYSANDFLAGS) and the channel
// positions of the pub/sub commands.
func requestFromRedis(t *testing.T, rc *redisConn, tb *Table, args []string) *Request {
	t.Helper()
	q := &Request{}
	for _, a := range args {
		q.Args = append(q.Args, []byte(a))
	}
	q.Cmd = tb.Lookup(args[0])
	if q.Cmd != nil && len(q.Cmd.Subs) > 0 && len(args) > 1 {
		q.Cmd = tb.Lookup(args[0] + "|" + args[1])
	}
	if q.Cmd == nil {
		t.Fatalf("%q: no such command in the table", args)
	}
	v, err := rc.do(append([]string{"COMMAND", "GETKEYSANDFLAGS"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	if keys, ok := v.([]any); ok {
		used := map[int]bool{}
		for _, k := range keys {
			kf := k.([]any)
			name := kf[0].(string)
			ref := KeyRef{Pos: -1}
			for _, f := range kf[1].([]any) {
				switch f {
				case "access":
					ref.Read = true
				case "insert", "delete", "update":
					ref.Write = true
				}
			}
			for i := 1; i < len(args); i++ {
				if args[i] == name && !used[i] {
					ref.Pos, used[i] = i, true
					break
				}
			}
			q.Keys = append(q.Keys, ref)
		}
	}
	q.Channels = Channels(q.Cmd.Name, q.Args)
	return q
}

func TestDryRunMatchesRedis(t *testing.T) {
	rc, _ := startRedis(t)
	tb := redisTable(t)
	st := NewStore(tb)
	for i, rules := range dryrunUsers {
		name := fmt.Sprintf("d%d", i)
		if v, _ := rc.do(append([]string{"ACL", "SETUSER", name}, rules...)...); v != "OK" {
			t.Fatalf("redis SETUSER %q: %v", rules, v)
		}
		u, _, err := st.SetUser(name, rules)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range dryrunCommands {
			v, err := rc.do(append([]string{"ACL", "DRYRUN", name}, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			q := requestFromRedis(t, rc, tb, args)
			got := "OK"
			if d := u.Check(q); !d.OK() {
				got = d.DryRun(q)
			}
			if got != v {
				t.Errorf("user %q, %q: got %q, want %q", rules, args, got, v)
			}
		}
	}
}

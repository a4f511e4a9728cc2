package acl

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The expectations below are redis-server 7.0.15's replies, copied from
// redis-cli against Debian's build (the differential tests in
// redis_diff_test.go check many more cases live).

func TestListLines(t *testing.T) {
	tb := redisTable(t)
	cases := []struct {
		ops  []string
		want string
	}{
		{[]string{"on", ">p1", "+get", "~k*", "&ch*", "(+set ~w*)"},
			"on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~k* resetchannels &ch* -@all +get (~w* resetchannels -@all +set)"},
		{[]string{"+@all", "-@write", "+set"}, "off resetchannels +@all -@write +set"},
		{[]string{"%R"}, "off %R~ resetchannels -@all"},
		{[]string{"%RW"}, "off ~ resetchannels -@all"},
		{[]string{"reset"}, "off sanitize-payload resetchannels -@all"},
		{[]string{"on", "nopass", "allkeys", "allchannels", "allcommands"}, "on nopass ~* &* +@all"},
		{[]string{"%R~r*", "%W~w*", "%W~r*"}, "off ~r* %W~w* resetchannels -@all"},
		{[]string{"+@read"}, "off resetchannels -@all +@read"},
		{[]string{"+select|0", "+select|1"}, "off resetchannels -@all +select|0 +select|1"},
		{[]string{"+client", "-client|kill"}, "off resetchannels -@all +client -client|kill"},
	}
	for _, c := range cases {
		st := NewStore(tb)
		u, _, err := st.SetUser("x", c.ops)
		if err != nil {
			t.Fatalf("%q: %v", c.ops, err)
		}
		if got := u.Describe(); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.ops, got, c.want)
		}
	}
	st := NewStore(tb)
	if got := st.List(); !reflect.DeepEqual(got, []string{"user default on nopass ~* &* +@all"}) {
		t.Errorf("default: %q", got)
	}
}

func TestSetUserErrors(t *testing.T) {
	st := NewStore(redisTable(t))
	cases := []struct {
		ops  []string
		want string
	}{
		{[]string{"+nosuch"}, "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"},
		{[]string{"+@nosuch"}, "Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL"},
		{[]string{"bogus"}, "Error in ACL SETUSER modifier 'bogus': Syntax error"},
		{[]string{"~a b"}, "Error in ACL SETUSER modifier '~a b': Syntax error"},
		{[]string{"allkeys", "~k"}, "Error in ACL SETUSER modifier '~k': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"},
		{[]string{"&*", "&c"}, "Error in ACL SETUSER modifier '&c': Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"},
		{[]string{"<nope"}, "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist"},
		{[]string{"#abc"}, "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{[]string{"+config|get|x"}, "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported"},
		{[]string{"+config|"}, "Error in ACL SETUSER modifier '+config|': Syntax error"},
		{[]string{"(+get", "~k*"}, "Unmatched parenthesis in acl selector starting at '(+get'."},
		{[]string{"(+nosuch)"}, "Error in ACL SETUSER modifier '(+nosuch)': Unknown command or category name in ACL"},
		{[]string{"%~x"}, "Error in ACL SETUSER modifier '%~x': Syntax error"},
	}
	for _, c := range cases {
		_, _, err := st.SetUser("x", c.ops)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v\nwant %q", c.ops, err, c.want)
		}
	}
	if st.User("x") != nil {
		t.Error("a failed SETUSER created the user")
	}
	if _, _, err := st.SetUser("a b", nil); err != ErrUsernameSpaces {
		t.Errorf("spaces: %v", err)
	}
	// All or nothing on an existing user.
	st.SetUser("y", []string{"on", "+get"})
	before := st.User("y").Describe()
	if _, _, err := st.SetUser("y", []string{"+set", "bogus"}); err == nil || st.User("y").Describe() != before {
		t.Errorf("a failed SETUSER changed the user: %v %q", err, st.User("y").Describe())
	}
}

func TestGetUserInfo(t *testing.T) {
	st := NewStore(redisTable(t))
	u, _, err := st.SetUser("u1", []string{"on", ">p1", "+get", "~k*", "&ch*", "(+set ~w*)"})
	if err != nil {
		t.Fatal(err)
	}
	want := UserInfo{
		Flags:     []string{"on"},
		Passwords: []string{"f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a"},
		Root:      SelectorInfo{Commands: "-@all +get", Keys: "~k*", Channels: "&ch*"},
		Selectors: []SelectorInfo{{Commands: "-@all +set", Keys: "~w*", Channels: ""}},
	}
	if got := u.Info(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	def := st.Default().Info()
	if !reflect.DeepEqual(def, UserInfo{Flags: []string{"on", "nopass"}, Passwords: []string{},
		Root: SelectorInfo{"+@all", "~*", "&*"}, Selectors: []SelectorInfo{}}) {
		t.Errorf("default: %+v", def)
	}
}

func TestAuthenticateAndRequirepass(t *testing.T) {
	st := NewStore(redisTable(t))
	if st.Authenticate("default", "anything") != st.Default() {
		t.Fatal("nopass default refuses a password")
	}
	st.SetDefaultPassword("secret")
	if st.Authenticate("default", "anything") != nil || st.Authenticate("default", "secret") != st.Default() {
		t.Fatal("requirepass secret not in force")
	}
	if got := st.Default().Describe(); got != "on #2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ~* &* +@all" {
		t.Errorf("default with requirepass: %q", got)
	}
	st.SetDefaultPassword("")
	if !st.Default().NoPass() {
		t.Fatal("requirepass \"\" did not give nopass")
	}
	st.SetUser("alice", []string{">a1", ">a2"})
	if st.Authenticate("alice", "a1") != nil {
		t.Fatal("an off user authenticated")
	}
	st.SetUser("alice", []string{"on"})
	if st.Authenticate("alice", "a2") == nil || st.Authenticate("alice", "a3") != nil || st.Authenticate("bob", "a1") != nil {
		t.Fatal("alice's passwords")
	}
	st.SetUser("alice", []string{"#" + HashPassword("h"), "<a1"})
	if st.Authenticate("alice", "h") == nil || st.Authenticate("alice", "a1") != nil {
		t.Fatal("hash password or removal")
	}
}

func TestUserHandleFollowsChanges(t *testing.T) {
	tb := redisTable(t)
	st := NewStore(tb)
	u, _, _ := st.SetUser("c", []string{"on", "nopass", "+get", "~*"})
	set := &Request{Cmd: tb.Lookup("set"), Args: [][]byte{[]byte("set"), []byte("k"), []byte("v")}, Keys: []KeyRef{{Pos: 1, Write: true}}}
	if d := u.Check(set); d.Reason != DeniedCommand {
		t.Fatalf("SET allowed before +set: %+v", d)
	}
	if d := u.Check(set); d.Error(set) != "NOPERM this user has no permissions to run the 'set' command" {
		t.Fatalf("text %q", d.Error(set))
	}
	st.SetUser("c", []string{"+set"})
	if d := u.Check(set); !d.OK() {
		t.Fatalf("the handle does not see +set: %+v", d)
	}
	gone, err := st.DelUser("c", "nosuch")
	if err != nil || len(gone) != 1 || gone[0] != u || !u.Deleted() || st.User("c") != nil {
		t.Fatalf("DelUser: %v %v", gone, err)
	}
	if _, err := st.DelUser("default"); err != ErrDeleteDefault {
		t.Fatalf("deleting default: %v", err)
	}
}

func TestCheckTexts(t *testing.T) {
	tb := redisTable(t)
	st := NewStore(tb)
	u, _, _ := st.SetUser("c", []string{"on", "+@all", "~k*", "&c*"})
	get := &Request{Cmd: tb.Lookup("get"), Args: [][]byte{[]byte("get"), []byte("x")}, Keys: []KeyRef{{Pos: 1, Read: true}}}
	d := u.Check(get)
	if d.Reason != DeniedKey || d.Pos != 1 {
		t.Fatalf("%+v", d)
	}
	if d.Error(get) != "NOPERM this user has no permissions to access one of the keys used as arguments" ||
		d.DryRun(get) != "This user has no permissions to access the 'x' key" ||
		d.ExecError() != "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to touch the specified keys" ||
		d.ScriptError() != "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments" {
		t.Errorf("texts: %q %q %q %q", d.Error(get), d.DryRun(get), d.ExecError(), d.ScriptError())
	}
	pub := &Request{Cmd: tb.Lookup("publish"), Args: [][]byte{[]byte("publish"), []byte("d"), []byte("m")}, Channels: []ChannelRef{{Pos: 1}}}
	if d := u.Check(pub); d.Reason != DeniedChannel || d.Error(pub) != "NOPERM this user has no permissions to access one of the channels used as arguments" {
		t.Errorf("publish: %+v %q", d, d.Error(pub))
	}
	if !u.CheckChannel([]byte("cx"), false) || u.CheckChannel([]byte("c*x"), true) || !u.CheckChannel([]byte("c*"), true) {
		t.Error("CheckChannel")
	}
	if !u.CheckKey([]byte("k1"), true, true) || u.CheckKey([]byte("x"), true, false) {
		t.Error("CheckKey")
	}
	sort := &Request{Cmd: tb.Lookup("sort"), Args: [][]byte{[]byte("sort"), []byte("k1")}, Keys: []KeyRef{{Pos: 1, Read: true}}}
	if u.CheckUnrestrictedKeys(sort, true, false) {
		t.Error("~k* is not unrestricted")
	}
	st.SetUser("c", []string{"%R~*"})
	if !u.CheckUnrestrictedKeys(sort, true, false) || u.CheckUnrestrictedKeys(sort, true, true) {
		t.Error("%R~* is unrestricted for reads only")
	}
	if u.Unrestricted() || !st.Default().Unrestricted() {
		t.Error("Unrestricted")
	}
}

func TestLogMerging(t *testing.T) {
	l := NewLog(3)
	t0 := time.Unix(1000, 0)
	e := LogEntry{Reason: DeniedCommand, Context: ContextToplevel, Object: "get", Username: "u", ClientInfo: "id=1"}
	l.Add(e, t0)
	e.ClientInfo = "id=2"
	l.Add(e, t0.Add(30*time.Second)) // merges: same everything within 60 s
	got := l.Entries(10)
	if len(got) != 1 || got[0].Count != 2 || got[0].ClientInfo != "id=2" || !got[0].Updated.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("merge: %+v", got)
	}
	l.Add(e, t0.Add(91*time.Second)) // 61 s after the update: a new entry
	if got := l.Entries(10); len(got) != 2 || got[0].Count != 1 {
		t.Fatalf("window: %+v", got)
	}
	key := e
	key.Reason, key.Object = DeniedKey, "k"
	l.Add(key, t0.Add(92*time.Second))
	multi := e
	multi.Context = ContextMulti
	l.Add(multi, t0.Add(93*time.Second)) // 4th entry: the oldest goes
	got = l.Entries(10)
	if len(got) != 3 || got[0].Context != ContextMulti || got[2].Updated != t0.Add(91*time.Second) {
		t.Fatalf("trim: %+v", got)
	}
	// A match further down moves to the front.
	l.Add(key, t0.Add(94*time.Second))
	got = l.Entries(1)
	if len(got) != 1 || got[0].Reason != DeniedKey || got[0].Count != 2 {
		t.Fatalf("move to front: %+v", got)
	}
	if age := got[0].AgeSeconds(t0.Add(95*time.Second + 250*time.Millisecond)); age != 1.25 {
		t.Errorf("age %v", age)
	}
	if len(l.Entries(-1)) != 0 {
		t.Error("negative count")
	}
	l.Reset()
	if len(l.Entries(10)) != 0 {
		t.Error("reset")
	}
	if DeniedAuth.String() != "auth" || ContextLua.String() != "lua" {
		t.Error("names")
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		// "*" does not match "" in Redis (ACL DRYRUN of GET "" under %R~* is denied).
		{"*", "", false}, {"*", "abc", true}, {"a*", "abc", true}, {"a*", "bac", false},
		{"a?c", "abc", true}, {"a?c", "ac", false}, {"[abc]x", "bx", true}, {"[^abc]x", "bx", false},
		{"[a-c]", "b", true}, {"[c-a]", "b", true}, {"[a-c]", "d", false}, {"\\*", "*", true},
		{"\\*", "a", false}, {"[", "[", false}, {"[ab", "a", true}, {"a**b", "axxb", true},
		{"*b*", "ab", true}, {"a\\", "a\\", true}, {"[\\]]", "]", true}, {"user:*:name", "user:1:name", true},
	}
	for _, c := range cases {
		if got := Match(c.pat, []byte(c.s), false); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.pat, c.s, got)
		}
	}
	if !Match("A*", []byte("abc"), true) || Match("A*", []byte("abc"), false) {
		t.Error("nocase")
	}
}

func TestGenPass(t *testing.T) {
	p, err := GenPass(256)
	if err != nil || len(p) != 64 || !validHash(p) {
		t.Fatalf("%q %v", p, err)
	}
	if q, _ := GenPass(256); q == p {
		t.Fatal("two equal passwords")
	}
	if p, _ := GenPass(5); len(p) != 2 {
		t.Fatalf("5 bits: %q", p)
	}
	for _, bits := range []int64{0, -1, 4097} {
		if _, err := GenPass(bits); err != ErrGenPassBits {
			t.Errorf("%d bits: %v", bits, err)
		}
	}
}

func TestSaveLoadFile(t *testing.T) {
	tb := redisTable(t)
	st := NewStore(tb)
	st.SetUser("alice", []string{"on", ">pw", "~k*", "&c", "+@read", "-keys", "(+set %W~w*)"})
	st.SetUser("bob", []string{"+select|0"})
	st.SetDefaultPassword("s3")
	path := filepath.Join(t.TempDir(), "users.acl")
	if err := st.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != st.Dump() || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("file %q", b)
	}
	st2 := NewStore(tb)
	def := st2.Default()
	old, _, _ := st2.SetUser("carol", []string{"on"})
	gone, err := st2.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Dump() != st.Dump() {
		t.Errorf("loaded\n%s\nsaved\n%s", st2.Dump(), st.Dump())
	}
	if st2.Default() != def || len(gone) != 1 || gone[0] != old || !old.Deleted() || st2.User("carol") != nil {
		t.Errorf("handles after load: gone %v", gone)
	}
	if st2.Authenticate("default", "s3") == nil || st2.Authenticate("alice", "pw") == nil {
		t.Error("passwords after load")
	}
	// A bad file changes nothing.
	before := st2.Dump()
	os.WriteFile(path, []byte("user dave on\nnot a user line\n"), 0o644)
	_, err = st2.LoadFile(path)
	want := path + ":2 should start with user keyword followed by the username. WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if err == nil || err.Error() != want || st2.Dump() != before {
		t.Errorf("bad file: %v", err)
	}
	// No default line: the default user as created.
	os.WriteFile(path, []byte("user dave on\n"), 0o644)
	if _, err := st2.LoadFile(path); err != nil || st2.Default().Describe() != "on nopass ~* &* +@all" {
		t.Errorf("no default line: %v %q", err, st2.Default().Describe())
	}
	_, err = st2.LoadFile(filepath.Join(t.TempDir(), "none.acl"))
	if err == nil || !strings.HasSuffix(err.Error(), "none.acl': No such file or directory") {
		t.Errorf("missing file: %v", err)
	}
	if err := NewStore(tb).SaveFile(filepath.Join(t.TempDir(), "no", "dir.acl")); err == nil || !strings.HasPrefix(err.Error(), ErrSave.Error()) {
		t.Errorf("unwritable: %v", err)
	}
}

func TestChannelsNarrowed(t *testing.T) {
	st := NewStore(redisTable(t))
	st.SetUser("p", []string{"&a", "&b"})
	cases := []struct {
		ops  []string
		want bool
	}{
		{[]string{"&c"}, false},
		{[]string{"resetchannels", "&a"}, true},
		{[]string{"allchannels"}, false},
		{[]string{"resetchannels", "&a", "&b", "&c", "(&x)"}, true}, // from allchannels
		{[]string{"resetchannels", "(&*)"}, false},
	}
	for _, c := range cases {
		_, narrowed, err := st.SetUser("p", c.ops)
		if err != nil || narrowed != c.want {
			t.Errorf("%q: narrowed %v err %v", c.ops, narrowed, err)
		}
	}
	st.SetUser("q", []string{"allchannels"})
	if _, narrowed, _ := st.SetUser("q", []string{"resetchannels", "&x"}); !narrowed {
		t.Error("from allchannels to &x")
	}
}

func TestPubsubDefault(t *testing.T) {
	st := NewStore(redisTable(t))
	st.SetPubsubDefault(true)
	u, _, _ := st.SetUser("p", []string{"(+get)"})
	if got := u.Describe(); got != "off &* -@all (&* -@all +get)" {
		t.Errorf("allchannels default: %q", got)
	}
}

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"+get ~k*", []string{"+get", "~k*"}},
		{"  a   b  ", []string{"a", "b"}},
		{`"+get" '~k*'`, []string{"+get", "~k*"}},
		{`"a\x41\n"`, []string{"aA\n"}},
		{`'it\'s'`, []string{"it's"}},
		{`"open`, nil},
		{`"a"b`, nil},
		{"", nil},
	}
	for _, c := range cases {
		if got := splitArgs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSingleCategoryDescribed is Redis's "ACL GETUSER provides reasonable
// results": a user of one category prints as just that category.
func TestSingleCategoryDescribed(t *testing.T) {
	st := NewStore(redisTable(t))
	for _, c := range Categories {
		u, _, err := st.SetUser("a", []string{"reset", "+@all", "-@" + c})
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Info().Root.Commands; got != "+@all -@"+c {
			t.Errorf("+@all -@%s: %q", c, got)
		}
		u, _, _ = st.SetUser("r", []string{"reset", "-@all", "+@" + c})
		if got := u.Info().Root.Commands; got != "-@all +@"+c {
			t.Errorf("-@all +@%s: %q", c, got)
		}
	}
	// And the subcommand cases of acl.tcl.
	cases := []struct {
		ops  []string
		want string
	}{
		{[]string{"+memory|doctor"}, "-@all +memory|doctor"},
		{[]string{"+memory|doctor", "+memory"}, "-@all +memory"},
		{[]string{"+memory", "+@all", "+client|id"}, "+@all"},
		{[]string{"+@all", "-memory|doctor"}, "+@all -memory|doctor"},
		{[]string{"+@all", "-memory"}, "+@all -memory"},
		{[]string{"+@all", "-client|kill"}, "+@all -client|kill"},
	}
	for _, c := range cases {
		u, _, _ := st.SetUser("s", append([]string{"reset"}, c.ops...))
		if got := u.Info().Root.Commands; got != c.want {
			t.Errorf("%q: %q, want %q", c.ops, got, c.want)
		}
	}
}

func TestAuthRequired(t *testing.T) {
	st := NewStore(redisTable(t))
	if st.AuthRequired() {
		t.Fatal("nopass default requires auth")
	}
	st.SetUser("default", []string{"off"})
	if !st.AuthRequired() {
		t.Fatal("default off: new connections are authenticated")
	}
	st.SetUser("default", []string{"on", ">x"})
	if !st.AuthRequired() {
		t.Fatal("default with a password")
	}
	st.SetDefaultPassword("")
	if st.AuthRequired() {
		t.Fatal("requirepass \"\"")
	}
}

func TestLogEntries(t *testing.T) {
	tb := redisTable(t)
	st := NewStore(tb)
	u, _, _ := st.SetUser("c", []string{"on", "+get", "~k*"})
	get := &Request{Cmd: tb.Lookup("get"), Args: [][]byte{[]byte("GET"), []byte("x")}, Keys: []KeyRef{{Pos: 1, Read: true}}}
	e := u.Check(get).LogEntry(get, ContextMulti, "c", "id=7")
	if e.Reason != DeniedKey || e.Object != "x" || e.Context != ContextMulti || e.Username != "c" || e.ClientInfo != "id=7" {
		t.Errorf("key entry %+v", e)
	}
	cfg := &Request{Cmd: tb.Lookup("config|get"), Args: [][]byte{[]byte("CONFIG"), []byte("GET"), []byte("x")}}
	if e := u.Check(cfg).LogEntry(cfg, ContextLua, "c", ""); e.Object != "config|get" || e.Reason != DeniedCommand {
		t.Errorf("command entry %+v", e)
	}
	if e := AuthFailure("AUTH", "c", ContextToplevel, "id=1"); e.Reason != DeniedAuth || e.Object != "AUTH" {
		t.Errorf("auth entry %+v", e)
	}
}

func TestCheckFindingKeys(t *testing.T) {
	tb := redisTable(t)
	st := NewStore(tb)
	u, _, _ := st.SetUser("c", []string{"on", "+@all", "-flushall", "~*"})
	calls := 0
	keys := func() []KeyRef { calls++; return []KeyRef{{Pos: 1, Read: true}} }
	get := &Request{Cmd: tb.Lookup("get"), Args: [][]byte{[]byte("get"), []byte("x")}}
	if d := u.CheckFindingKeys(get, keys); !d.OK() || calls != 0 {
		t.Fatalf("allkeys: %+v, keys found %d times", d, calls)
	}
	st.SetUser("c", []string{"resetkeys", "~k*"})
	if d := u.CheckFindingKeys(get, keys); d.Reason != DeniedKey || d.Pos != 1 || calls != 1 {
		t.Fatalf("~k*: %+v, keys found %d times", d, calls)
	}
}

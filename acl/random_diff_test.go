package acl

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// randomRules draws a SETUSER argument list from the rule words Redis
// knows, with commands, subcommands and categories of tb.
func randomRules(r *rand.Rand, tb *Table) []string {
	n := 1 + r.IntN(8)
	var ops []string
	cmd := func() *Command { return tb.cmds[r.IntN(len(tb.cmds))] }
	for range n {
		switch r.IntN(16) {
		case 0:
			ops = append(ops, "+@"+Categories[r.IntN(len(Categories))])
		case 1:
			ops = append(ops, "-@"+Categories[r.IntN(len(Categories))])
		case 2, 3:
			ops = append(ops, "+"+cmd().Name)
		case 4, 5:
			ops = append(ops, "-"+cmd().Name)
		case 6:
			ops = append(ops, []string{"+@all", "-@all", "allcommands", "nocommands"}[r.IntN(4)])
		case 7:
			ops = append(ops, []string{"~k*", "%R~r*", "%W~w*", "%RW~x", "allkeys", "resetkeys"}[r.IntN(6)])
		case 8:
			ops = append(ops, []string{"&c*", "&d", "allchannels", "resetchannels"}[r.IntN(4)])
		case 9:
			ops = append(ops, []string{"on", "off", "nopass", "resetpass", ">p" + strconv.Itoa(r.IntN(3)), "<p" + strconv.Itoa(r.IntN(3))}[r.IntN(6)])
		case 10:
			ops = append(ops, "+select|"+strconv.Itoa(r.IntN(3)))
		case 11:
			ops = append(ops, fmt.Sprintf("(+%s ~s%d)", cmd().Name, r.IntN(3)))
		case 12:
			ops = append(ops, "clearselectors")
		case 13:
			ops = append(ops, "reset")
		default:
			ops = append(ops, "+"+cmd().Name, "-"+cmd().Name)
		}
	}
	return ops
}

// TestRandomSetUserMatchesRedis applies random rule lists to users in
// redis-server and here and compares replies, ACL LIST lines and GETUSER.
// PERSIMMON_ACL_SEED picks the seed (printed on failure).
func TestRandomSetUserMatchesRedis(t *testing.T) {
	rc, _ := startRedis(t)
	tb := redisTable(t)
	seed := uint64(12)
	if s := os.Getenv("PERSIMMON_ACL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	r := rand.New(rand.NewPCG(seed, seed))
	st := NewStore(tb)
	fails := 0
	for i := 0; i < 400 && fails < 5; i++ {
		name := fmt.Sprintf("r%d", r.IntN(40)) // users are changed again and again
		ops := randomRules(r, tb)
		rv, err := rc.do(append([]string{"ACL", "SETUSER", name}, ops...)...)
		if err != nil {
			t.Fatal(err)
		}
		want := "OK"
		if e, ok := rv.(respErr); ok {
			want = string(e)
		}
		got := "OK"
		if _, _, err := st.SetUser(name, ops); err != nil {
			got = "ERR " + err.Error()
		}
		if got != want {
			t.Errorf("seed %d step %d %s %q: reply %q, want %q", seed, i, name, ops, got, want)
			fails++
			continue
		}
		u := st.User(name)
		if u == nil {
			continue
		}
		gv, _ := rc.do("ACL", "GETUSER", name)
		wi, err := infoFromRedis(gv)
		if err != nil {
			t.Fatal(err)
		}
		gi := u.Info()
		if g, w := fmt.Sprintf("%+v", normaliseInfo(gi)), fmt.Sprintf("%+v", normaliseInfo(wi)); g != w {
			t.Errorf("seed %d step %d %s %q: GETUSER\n got %s\nwant %s", seed, i, name, ops, g, w)
			fails++
		}
	}
	lv, _ := rc.do("ACL", "LIST")
	var want []string
	for _, l := range lv.([]any) {
		want = append(want, normaliseListLine(l.(string)))
	}
	var got []string
	for _, l := range st.List() {
		got = append(got, normaliseListLine(l))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("seed %d: ACL LIST\n got %q\nwant %q", seed, got, want)
	}
}

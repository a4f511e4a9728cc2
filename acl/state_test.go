package acl

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	tb := redisTable(t)
	dir := t.TempDir()
	st := NewStore(tb)
	if found, err := st.LoadState(dir); found || err != nil {
		t.Fatalf("empty dir: %v %v", found, err)
	}
	st.SetUser("alice", []string{"on", ">pw", "~k*", "+get", "(+set ~w*)"})
	st.SetDefaultPassword("s")
	if err := st.SaveState(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, StateFileName+".tmp-123"), []byte("user half"), 0o644)
	st2 := NewStore(tb)
	if found, err := st2.LoadState(dir); !found || err != nil {
		t.Fatalf("load: %v %v", found, err)
	}
	if st2.Dump() != st.Dump() {
		t.Fatalf("state\n%s\nwant\n%s", st2.Dump(), st.Dump())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(m) != 0 {
		t.Fatalf("leftover temp files %q", m)
	}
	for _, bad := range []string{"", "user alice on", "user alice +nosuch\n"} {
		os.WriteFile(filepath.Join(dir, StateFileName), []byte(bad), 0o644)
		before := st2.Dump()
		if _, err := st2.LoadState(dir); err == nil || !strings.Contains(err.Error(), StateFileName) || st2.Dump() != before {
			t.Errorf("state %q: %v", bad, err)
		}
	}
}

// TestStateSurvivesKill runs SaveState in a child process that reports
// each save acknowledged, kills it with SIGKILL at some point, and
// requires the state file to load whole, at or after the last
// acknowledged version.
func TestStateSurvivesKill(t *testing.T) {
	if os.Getenv("PERSIMMON_ACL_STATE_CHILD") != "" {
		stateChild()
		return
	}
	tb := redisTable(t)
	for round := 0; round < 3; round++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestStateSurvivesKill$")
		cmd.Env = append(os.Environ(), "PERSIMMON_ACL_STATE_CHILD="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		acked := -1
		for sc.Scan() && acked < 20+round*15 {
			if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "acked ")); err == nil {
				acked = n
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		st := NewStore(tb)
		found, err := st.LoadState(dir)
		if err != nil || !found {
			t.Fatalf("round %d: after kill: %v %v", round, found, err)
		}
		u := st.User("v")
		if u == nil {
			t.Fatalf("round %d: no user v", round)
		}
		var got int
		fmt.Sscanf(u.Info().Root.Keys, "~v%d", &got)
		if got < acked {
			t.Fatalf("round %d: state at version %d, %d was acknowledged", round, got, acked)
		}
	}
}

// stateChild saves versions 0, 1, ... of a user, printing each once it is
// durable, until killed.
func stateChild() {
	dir := os.Getenv("PERSIMMON_ACL_STATE_CHILD")
	b, _ := os.ReadFile(fixturePath)
	st := NewStore(NewTable(parseSpecs(string(b))))
	for i := 0; ; i++ {
		st.SetUser("v", []string{"resetkeys", fmt.Sprintf("~v%d", i)})
		// Enough users that a write is more than one page.
		st.SetUser(fmt.Sprintf("pad%d", i%50), []string{"on", ">" + strings.Repeat("x", 100), "+@read", "~pad*"})
		if err := st.SaveState(dir); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("acked %d\n", i)
	}
}

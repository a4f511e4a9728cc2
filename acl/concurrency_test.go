package acl

import (
	"fmt"
	"sync"
	"testing"
)

// TestCheckDuringSetUser runs checks on a user's handle while another
// goroutine keeps changing the user (run it with -race): every check sees
// one published state whole, either SET allowed on k (an even version) or
// not (an odd one), never a torn mix.
func TestCheckDuringSetUser(t *testing.T) {
	tb := redisTable(t)
	st := NewStore(tb)
	u, _, _ := st.SetUser("c", []string{"on", "nopass", "+@all", "~k"})
	set := &Request{Cmd: tb.Lookup("set"), Args: [][]byte{[]byte("set"), []byte("k"), []byte("v")}, Keys: []KeyRef{{Pos: 1, Write: true}}}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			ops := []string{"resetkeys", "~k", fmt.Sprintf("~v%d", i)}
			if i%2 == 1 {
				ops = []string{"resetkeys", fmt.Sprintf("~v%d", i)}
			}
			if _, _, err := st.SetUser("c", ops); err != nil {
				t.Error(err)
				return
			}
			st.List()
		}
		close(done)
	}()
	for {
		select {
		case <-done:
			wg.Wait()
			return
		default:
		}
		d := u.Check(set)
		if !d.OK() && d.Reason != DeniedKey {
			t.Fatalf("torn state: %+v", d)
		}
		_ = u.Describe()
		_ = u.Info()
	}
}

func BenchmarkCheckRestricted(b *testing.B) {
	tb := redisTable(b)
	st := NewStore(tb)
	u, _, _ := st.SetUser("c", []string{"on", "nopass", "+@all", "-@dangerous", "~user:*", "~session:*"})
	set := &Request{Cmd: tb.Lookup("set"), Args: [][]byte{[]byte("set"), []byte("session:12345"), []byte("v")}, Keys: []KeyRef{{Pos: 1, Write: true}}}
	b.ReportAllocs()
	for b.Loop() {
		if !u.Check(set).OK() {
			b.Fatal("denied")
		}
	}
}

func BenchmarkDescribe(b *testing.B) {
	tb := redisTable(b)
	st := NewStore(tb)
	u, _, _ := st.SetUser("c", []string{"+@read", "+@write", "-@dangerous"})
	r := u.rules.Load()
	for b.Loop() {
		r.describe(tb)
	}
}

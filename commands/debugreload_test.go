package commands

import (
	"testing"

	"github.com/persimmon-db/persimmon/recovery"
)

// TestReloadCheck: the recovered copy of a keyspace's own directory
// matches it; checked against another directory's data, the difference is
// found.
func TestReloadCheck(t *testing.T) {
	open := func(dir string) *Client {
		ks, _, err := recovery.Open(recovery.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ks.Close() })
		return &Client{KS: ks}
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a, b := open(dirA), open(dirB)
	for _, c := range []*Client{a, b} {
		cmdReply(t, c, "RPUSH", "l", "x", "y")
		cmdReply(t, c, "HSET", "h", "f", "v")
		cmdReply(t, c, "SET", "s", "1", "PX", "1000000")
	}
	cmdReply(t, b, "SET", "s", "2")

	a.KS.Lock()
	n, err := reloadCheck(a.KS, dirA, 0)
	a.KS.Unlock()
	if err != nil || n != 3 {
		t.Fatalf("own directory: %d keys, %v", n, err)
	}
	b.KS.Lock()
	_, err = reloadCheck(b.KS, dirA, 0)
	b.KS.Unlock()
	if err == nil {
		t.Fatal("a keyspace checked against another's directory: no difference found")
	}
}

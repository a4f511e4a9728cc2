package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestCrashAfterCleaningChurn: a list that empties and comes back while
// segment cleaning runs (1 MiB segments), then kill -9 and a restart: the
// server must start and hold exactly what was acknowledged. (The replay
// of pops over a list whose pushes were cleaned away is reproduced
// deterministically by keyspace's TestCleaningRandomModel; this run does
// not always reach that interleaving.)
func TestCrashAfterCleaningChurn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := startServer(t, dir, "--segment-size", "1mb")
	c := s.client()
	pad := strings.Repeat("v", 120)
	var model []string // the list "q" as acknowledged
	next := 0
	churn := func(rounds int) {
		for round := 0; round < rounds; round++ {
			p := c.Pipeline()
			for i := 0; i < 20; i++ {
				p.RPush(ctx, "q", fmt.Sprint(next+i, pad))
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 20; i++ {
				model = append(model, fmt.Sprint(next+i, pad))
			}
			next += 20
			pops := 15 + round%11 // the list empties every few rounds
			got, err := c.LPopCount(ctx, "q", pops).Result()
			if err != nil && len(model) > 0 {
				t.Fatal(err)
			}
			model = model[len(got):]
		}
	}
	cleaned := func() int64 {
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseInt(infoField(info, "cleaned_bytes"), 10, 64)
		return n
	}
	// Churn until the background cleaner has removed segments (it runs
	// every 100 ms once the arena passes twice the live bytes plus a
	// segment), then some more, so later segments hold pops of list
	// incarnations whose pushes were cleaned away.
	for rounds := 0; cleaned() == 0; rounds++ {
		if rounds == 5000 {
			t.Fatalf("nothing was cleaned after %d rounds", rounds*50)
		}
		churn(50)
	}
	churn(300)
	s.kill()

	s = startServer(t, dir, "--segment-size", "1mb")
	c = s.client()
	got, err := c.LRange(ctx, "q", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(model) {
		t.Fatalf("after kill -9: LLEN q = %d, acknowledged %d", len(got), len(model))
	}
	for i := range got {
		if got[i] != model[i] {
			t.Fatalf("after kill -9: LINDEX q %d = %.20q..., want %.20q...", i, got[i], model[i])
		}
	}
}

// infoField returns the value of name in an INFO reply ("" if absent).
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/proto"
)

// TestBatchKeys: the keys prefetched are those of the SET and GET
// requests parsed ahead, which stop at the first request not whole and
// canonical, or at max.
func TestBatchKeys(t *testing.T) {
	req := func(args ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		return b.String()
	}
	cases := []struct {
		name, data string
		max        int
		want       []string
	}{
		{"pipeline", req("SET", "a", "1") + req("get", "b") + req("Set", "c\r\nd", "x", "EX", "10"), 64, []string{"a", "b", "c\r\nd"}},
		{"others skipped", req("INCR", "a") + req("GET", "b") + req("PING") + req("SETEX", "c", "1", "v") + req("GET", "d"), 64, []string{"b", "d"}},
		{"cut short", req("GET", "a") + req("GET", "b")[:9], 64, []string{"a"}},
		{"inline stops", req("GET", "a") + "GET b\r\n" + req("GET", "c"), 64, []string{"a"}},
		{"bad length stops", req("GET", "a") + "*2\r\n$3\r\nGET\r\n$-1\r\n" + req("GET", "c"), 64, []string{"a"}},
		{"no key", req("GET") + req("GET", "b"), 64, []string{"b"}},
		{"max", req("GET", "a") + req("GET", "b") + req("GET", "c"), 2, []string{"a", "b"}},
		{"empty key", req("GET", "") + req("GET", "b"), 64, []string{"", "b"}},
	}
	for _, tc := range cases {
		reqs, _ := proto.ParseBatch([]byte(tc.data), tc.max, nil, nil)
		got := batchKeys(reqs, nil)
		var gs []string
		for _, k := range got {
			gs = append(gs, string(k))
		}
		if fmt.Sprint(gs) != fmt.Sprint(tc.want) || len(gs) != len(tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, gs, tc.want)
		}
	}
}

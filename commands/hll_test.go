package commands

import (
	"reflect"
	"testing"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports
// them (the key specs are compared with redis-server in e2e hll.txt).
var hllCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"pfadd", -2, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"pfcount", -2, FlagReadonly, 1, -1, 1},
	{"pfmerge", -2, FlagWrite | FlagDenyOOM, 1, -1, 1},
	{"pfdebug", 3, FlagWrite | FlagDenyOOM | FlagAdmin, 2, 2, 1},
	{"pfselftest", 1, FlagAdmin, 0, 0, 0},
}

func TestHLLCommandInfo(t *testing.T) {
	checkCommandInfo(t, hllCommands(), hllCommandInfo)
	for _, cmd := range hllCommands() {
		if cmd.Group != "hyperloglog" || cmd.Since == "" || cmd.Summary == "" || cmd.Run == nil {
			t.Errorf("incomplete entry %+v", cmd)
		}
	}
}

func TestDiffSpans(t *testing.T) {
	a := []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	b := []byte("aaXaaaaYYaaaaaaaaaaaaaaaaaaaZa")
	got := diffSpans(a, b, 8)
	want := [][2]int{{2, 9}, {28, 29}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("diffSpans = %v, want %v", got, want)
	}
	if s := diffSpans(a, a, 8); len(s) != 0 {
		t.Fatalf("equal slices: %v", s)
	}
}

package proto

import (
	"slices"
	"testing"
)

func TestScanMultibulk(t *testing.T) {
	lim := Limits{MaxBulk: 512 << 20}
	for _, tt := range []struct {
		in   string
		lim  Limits
		want Verdict
	}{
		{"*", lim, Verdict{}},
		{"*2\r", lim, Verdict{}},
		{"*2\r\n", lim, Verdict{}},
		{"*2\r\n$3\r\nget\r\n$1", lim, Verdict{}},
		{"*2\r\n$3\r\nget\r\n$100\r\nab", lim, Verdict{Need: 13 + 6 + 100 + 2}},
		{"*1\r\n$3\r\nget\r\n", lim, Verdict{Complete: true}},
		{"*0\r\n", lim, Verdict{Skip: 4}},
		{"*-1\r\nPING", lim, Verdict{Skip: 5}},
		{"*01\r\n", lim, Verdict{Err: "invalid multibulk length"}},
		{"*+1\r\n", lim, Verdict{Err: "invalid multibulk length"}},
		{"*2147483648\r\n", lim, Verdict{Err: "invalid multibulk length"}},
		{"*2147483647\r\n", lim, Verdict{}},
		{"*1048576\r\n", lim, Verdict{}},
		{"*11\r\n", Limits{MaxBulk: 512 << 20, Unauth: true}, Verdict{Err: "unauthenticated multibulk length"}},
		{"*1\r\n$16385\r\n", Limits{MaxBulk: 512 << 20, Unauth: true}, Verdict{Err: "unauthenticated bulk length"}},
		{"*1\r\n$11\r\n", Limits{MaxBulk: 10}, Verdict{Err: "invalid bulk length"}},
		{"*1\r\n$10\r\n", Limits{MaxBulk: 10}, Verdict{Need: 9 + 10 + 2}},
		{"*1\r\n:1\r\n", lim, Verdict{Err: "expected '$', got ':'"}},
	} {
		if got := ScanMultibulk([]byte(tt.in), tt.lim); got != tt.want {
			t.Errorf("ScanMultibulk(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string // nil: unbalanced quotes
	}{
		{"", []string{}},
		{"  set  a   b ", []string{"set", "a", "b"}},
		{"set\ta\tb", []string{"set", "a", "b"}},
		{`set "a b" 'c d'`, []string{"set", "a b", "c d"}},
		{`"\x41\x4a\x4A\n\r\t\b\a\\\"z"`, []string{"AJJ\n\r\t\b\a\\\"z"}},
		{`"\x4"`, []string{"x4"}},
		{`'it\'s' "x"`, []string{"it's", "x"}},
		{`'a\nb'`, []string{`a\nb`}},
		{`a"b c"d`, nil},
		{`a"b c" d`, []string{"ab c", "d"}},
		{`""`, []string{""}},
		{`"" ''`, []string{"", ""}},
		{`"abc`, nil},
		{`'abc`, nil},
		{`"a"b`, nil},
		{`'a'b`, nil},
		{`"a\"`, nil},
	} {
		args, _, ok := SplitInline([]byte(tt.in), nil, nil)
		if tt.want == nil {
			if ok {
				t.Errorf("SplitInline(%q) = %q, want unbalanced quotes", tt.in, args)
			}
			continue
		}
		got := make([]string, len(args))
		for i, a := range args {
			got[i] = string(a)
		}
		if !ok || !slices.Equal(got, tt.want) {
			t.Errorf("SplitInline(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

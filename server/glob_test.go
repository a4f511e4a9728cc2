package server

import (
	"strings"
	"testing"
)

// The expectations below were taken from Redis 7.0.15 (KEYS pattern against
// a database holding only the string), so they pin stringmatchlen's corner
// cases, not what a glob "should" do.
func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", false}, // stringmatchlen; KEYS and SCAN special-case the pattern "*"
		{"**", "", false},
		{"*", "a", true},
		{"?", "", false},
		{"?", "a", true},
		{"?", "ab", false},
		{"a*", "a", true},
		{"a*b", "ab", true},
		{"a*b", "axxb", true},
		{"a*b", "axxbc", false},
		{"*a*b*", "zzazzbzz", true},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h*llo", "hllo", true},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true},
		{"h[a-b]llo", "hcllo", false},
		{"[", "[", false},
		{"[", "", false},
		{"[a", "a", true},
		{"[a", "b", false},
		{"a[", "a", false},
		{"a[", "a[", false},
		{"[^", "x", true},
		{"a[^", "ab", true},
		{"a[^", "a", false},
		{"[]", "]", false},
		{"[]a]", "]", false},
		{"[]a]", "]a]", false},
		{"[a-]", "-", false},
		{"[a-]", "]", true},
		{"[a-]", "a", true},
		{"[\\]]", "]", true},
		{"[\\]", "\\", false},
		{"[\\]", "]", true},
		{"\\", "\\", true},
		{"a\\", "a\\", true},
		{"\\*", "*", true},
		{"\\*", "a", false},
		{"\\?", "?", true},
		{"\\[a]", "[a]", true},
		{"[*]", "*", true},
		{"[?]", "x", false},
		{"*\\", "a\\", true},
		{"a*", "abc", true},
		{"*c", "abc", true},
		{"*c", "abd", false},
		{"a?c*", "abcdef", true},
		{"[^]", "x", true},
		{"[^]", "", false},
		{"[!a]", "!", true},
		{"[!a]", "b", false},
		{"[a-c-e]", "d", false},
		{"[a-c-e]", "-", true},
		{"[a-c-e]", "e", true},
		{"***a", "ba", true},
		{"a**", "a", true},
		{"a*?", "a", false},
		{"a*?", "ab", true},
		{"*?*", "x", true},
		{"[A-Z]", "q", false},
		{"foo*bar*baz", "foobarbaz", true},
		{"foo*bar*baz", "foobazbar", false},
		{"*ab*ab", "abab", true},
		{"*ab*ab", "ababa", false},
		{"[0-9][0-9]", "42", true},
		{"user:*:name", "user:1000:name", true},
		{"a[\\-]b", "a-b", true},
		{"a[\\-z]b", "a\\b", false},
		{"a[b-\\]c", "a\\c", true},
		{"a[\x01-\xff]", "a\xe9", false},
		{"a[b-\xff]", "a-", true},
		{"a[b-\xff]", "a\xe9", false},
		{"a[\x80-\xff]", "a\xe9", true},
		{"\xe9*", "\xe9\xea", true},
		{"a[b-\xff]", "az", false},
	}
	for _, tt := range tests {
		if got := GlobMatch([]byte(tt.pattern), []byte(tt.s)); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestGlobMatchFold(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"HELLO", "hello", true},
		{"h?LLO", "Hello", true},
		{"[A-C]x", "bX", true},
		{"[a-c]x", "BX", true},
		{"[^A]", "a", false},
		{"[XY]", "y", true},
		{"\\A", "a", true},
		{"hello", "hellp", false},
	}
	for _, tt := range tests {
		if got := globMatchFold([]byte(tt.pattern), []byte(tt.s)); got != tt.want {
			t.Errorf("globMatchFold(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// A pattern built to make naive backtracking exponential must finish fast
// and agree with Redis (no match).
func TestGlobMatchPathological(t *testing.T) {
	pattern := []byte(strings.Repeat("a*", 30) + "b")
	s := []byte(strings.Repeat("a", 200))
	if GlobMatch(pattern, s) {
		t.Fatal("matched")
	}
	if !GlobMatch(pattern, append(s, 'b')) {
		t.Fatal("did not match with the trailing b")
	}
}

// More than 1000 nested '*'s match nothing, as in Redis.
func TestGlobMatchNesting(t *testing.T) {
	deep := []byte(strings.Repeat("a*", 1002) + "a")
	if GlobMatch(deep, []byte(strings.Repeat("a", 1003))) {
		t.Fatal("a pattern nested deeper than 1000 '*'s matched")
	}
	shallow := []byte(strings.Repeat("a*", 900) + "a")
	if !GlobMatch(shallow, []byte(strings.Repeat("a", 901))) {
		t.Fatal("a pattern of 900 '*'s did not match")
	}
}

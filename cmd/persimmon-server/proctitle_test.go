package main

import "testing"

func TestRedactedCommandLine(t *testing.T) {
	cases := []struct {
		args  []string
		want  string
		found bool
	}{
		{[]string{"srv", "--port", "1"}, "srv\x00--port\x001", false},
		{[]string{"srv", "--requirepass", "pw", "--port", "1"}, "srv\x00--requirepass\x00*\x00--port\x001", true},
		{[]string{"srv", "-requirepass=pw", "--masterauth", "x"}, "srv\x00-requirepass=*\x00--masterauth\x00*", true},
		{[]string{"srv", "--requirepass", ""}, "srv\x00--requirepass\x00", false},
		{[]string{"srv", "--requirepass"}, "srv\x00--requirepass", false},
	}
	for _, c := range cases {
		got, found := redactedCommandLine(c.args)
		if got != c.want || found != c.found {
			t.Errorf("%q: got %q %v, want %q %v", c.args, got, found, c.want, c.found)
		}
	}
}

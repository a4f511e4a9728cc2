package server

import (
	"strconv"
	"strings"
	"testing"
)

// MIGRATE's credentials are redacted as Redis 7.0.15's migrateCommand
// redacts them while parsing (TCL introspection "MONITOR supports
// redacting command arguments").
func TestMigrateRedacted(t *testing.T) {
	for _, tt := range []struct{ req, want string }{
		{"migrate h 1 key 9 5000", ""},
		{"migrate h 1 key 9 5000 AUTH user", "7"},
		{"migrate h 1 key 9 5000 auth2 user password", "7 8"},
		{"migrate h 1 key 9 5000 COPY REPLACE AUTH pw KEYS a b", "9"},
		{"migrate h 1 key 9 5000 AUTH", ""},           // syntax error first
		{"migrate h 1 key 9 5000 nosuch AUTH pw", ""}, // parsing stopped before AUTH
		{"migrate h 1 key 9 5000 AUTH2 u", ""},        // AUTH2 needs two
		{"migrate h 1 '' 9 5000 KEYS AUTH pw", ""},    // after KEYS every argument is a key
		{"migrate h 1 key 9 5000 AUTH a AUTH2 b c", "7 9 10"},
	} {
		if g := redactedPositions("migrate", tt.req); g != tt.want {
			t.Errorf("%s: redacted %q, want %q", tt.req, g, tt.want)
		}
	}
}

// CONFIG SET redacts the values of Redis 7.0's SENSITIVE_CONFIG
// parameters (requirepass, masterauth, masteruser), whatever their
// position among the pairs, and nothing else (TCL slowlog "Certain
// commands are omitted that contain sensitive information").
func TestConfigSetRedacted(t *testing.T) {
	for _, tt := range []struct{ req, want string }{
		{"config set masterauth x", "3"},
		{"config set MASTERUSER u", "3"},
		{"config set requirepass p", "3"},
		{"config set maxmemory 1 masterauth x requirepass y", "5 7"},
		{"config set slowlog-log-slower-than 0", ""},
		{"config set masterauth-nosuch x", ""},
	} {
		if g := redactedPositions("config|set", tt.req); g != tt.want {
			t.Errorf("%s: redacted %q, want %q", tt.req, g, tt.want)
		}
	}
}

// redactedPositions is the space-separated positions of req's arguments
// (req split on spaces) that command name redacts.
func redactedPositions(name, req string) string {
	var args [][]byte
	for _, a := range strings.Fields(req) {
		args = append(args, []byte(a))
	}
	hide := redactedArgs(&Command{Name: name}, args)
	var got []string
	for i := range args {
		if hide(i) {
			got = append(got, strconv.Itoa(i))
		}
	}
	return strings.Join(got, " ")
}

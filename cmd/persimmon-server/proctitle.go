package main

import (
	"os"
	"strings"
	"unsafe"
)

// Secrets on the command line (--requirepass, --masterauth) are hidden
// from ps and /proc/<pid>/cmdline, as redis-server hides them by rewriting
// its process title: the bytes of the kernel's argv area are overwritten
// in place with the command line, each secret replaced by "*".

// secretFlags are the directives whose values are hidden.
var secretFlags = map[string]bool{"requirepass": true, "masterauth": true}

// ownArgs returns a copy of os.Args that does not alias the argv area
// (Go's os.Args strings point into it; rewriting it would change them).
func ownArgs() []string {
	out := make([]string, len(os.Args))
	for i, a := range os.Args {
		out[i] = strings.Clone(a)
	}
	return out
}

// redactedCommandLine is args joined by NULs with every secret value
// replaced by "*", and whether there was one. It is never longer than the
// original.
func redactedCommandLine(args []string) (string, bool) {
	out := make([]string, len(args))
	copy(out, args)
	found := false
	for i := 1; i < len(out); i++ {
		a := out[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !secretFlags[strings.ToLower(name)] {
			continue
		}
		switch {
		case hasValue:
			if j := strings.IndexByte(a, '='); j+1 < len(a) {
				out[i] = a[:j+1] + "*"
				found = true
			}
		case i+1 < len(out) && out[i+1] != "":
			out[i+1] = "*"
			found = true
			i++
		}
	}
	return strings.Join(out, "\x00"), found
}

// hideSecrets rewrites the argv area if the command line holds a secret.
// It does nothing when os.Args do not lie contiguously in one area as the
// kernel passed them (then there is no area to rewrite safely).
func hideSecrets() {
	line, found := redactedCommandLine(os.Args)
	if !found {
		return
	}
	area, ok := argvArea()
	if !ok || len(line) > len(area) {
		return
	}
	n := copy(area, line)
	clear(area[n:])
}

// argvArea is the kernel's argv strings, NUL-separated, as one slice.
func argvArea() ([]byte, bool) {
	if len(os.Args) == 0 {
		return nil, false
	}
	start := unsafe.StringData(os.Args[0])
	if start == nil {
		return nil, false
	}
	base := uintptr(unsafe.Pointer(start))
	next := base
	for _, a := range os.Args {
		p := unsafe.StringData(a)
		if p == nil || uintptr(unsafe.Pointer(p)) != next {
			return nil, false
		}
		next += uintptr(len(a)) + 1
	}
	// The last NUL stays: the area is base .. next-1.
	return unsafe.Slice(start, next-1-base), true
}

package functions

import (
	"errors"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Flags are a function's flags (redis.register_function's flags table).
type Flags uint8

// The flags, in the order FUNCTION LIST replies them.
const (
	NoWrites Flags = 1 << iota
	AllowOOM
	AllowStale
	NoCluster
	AllowCrossSlotKeys
)

var flagNames = [...]struct {
	flag Flags
	name string
}{
	{NoWrites, "no-writes"},
	{AllowOOM, "allow-oom"},
	{AllowStale, "allow-stale"},
	{NoCluster, "no-cluster"},
	{AllowCrossSlotKeys, "allow-cross-slot-keys"},
}

// ParseFlag returns the flag named s (ignoring ASCII case, as Redis
// compares them).
func ParseFlag(s string) (Flags, bool) {
	for _, f := range flagNames {
		if equalFoldASCII(s, f.name) {
			return f.flag, true
		}
	}
	return 0, false
}

// Names lists the flags set in f, in Redis's order.
func (f Flags) Names() []string {
	names := []string{}
	for _, n := range flagNames {
		if f&n.flag != 0 {
			names = append(names, n.name)
		}
	}
	return names
}

// Function is one registered function.
type Function struct {
	Name           string // as registered (FCALL matches it ignoring ASCII case)
	Description    string
	HasDescription bool // FUNCTION LIST replies a null description when false
	Flags          Flags
	Library        *Library
	// Callback is the function to call with (keys, args), two tables of
	// strings; its environment is the engine's.
	Callback lua.LValue
}

// Library is one loaded library.
type Library struct {
	Name      string
	Engine    string // "LUA"
	Code      []byte // the code as loaded, header line included
	Functions []*Function
}

// Set is a set of libraries. A Set is never changed: Load, Delete and
// Restore return a new one.
type Set struct {
	libs  map[string]*Library  // by name (case-sensitive, as in Redis)
	funcs map[string]*Function // by foldName(name)
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{libs: map[string]*Library{}, funcs: map[string]*Function{}}
}

func (s *Set) clone() *Set {
	c := &Set{libs: make(map[string]*Library, len(s.libs)+1), funcs: make(map[string]*Function, len(s.funcs)+4)}
	for k, v := range s.libs {
		c.libs[k] = v
	}
	for k, v := range s.funcs {
		c.funcs[k] = v
	}
	return c
}

// Library returns the library called name, or nil.
func (s *Set) Library(name string) *Library { return s.libs[name] }

// Function returns the function called name ignoring ASCII case, or nil.
func (s *Set) Function(name string) *Function { return s.funcs[foldName(name)] }

// Libraries returns the libraries in name order.
func (s *Set) Libraries() []*Library {
	libs := make([]*Library, 0, len(s.libs))
	for _, l := range s.libs {
		libs = append(libs, l)
	}
	slices.SortFunc(libs, func(a, b *Library) int { return strings.Compare(a.Name, b.Name) })
	return libs
}

// LibraryCount is the number of libraries (FUNCTION STATS libraries_count).
func (s *Set) LibraryCount() int { return len(s.libs) }

// FunctionCount is the number of functions (FUNCTION STATS functions_count).
func (s *Set) FunctionCount() int { return len(s.funcs) }

// Codes returns the libraries' codes in name order: what a durable record
// or a DUMP payload holds.
func (s *Set) Codes() [][]byte {
	libs := s.Libraries()
	codes := make([][]byte, len(libs))
	for i, l := range libs {
		codes[i] = l.Code
	}
	return codes
}

// ErrLibraryNotFound is FUNCTION DELETE's error for a missing library.
var ErrLibraryNotFound = errors.New("ERR Library not found")

// Delete returns s without the library called name.
func (s *Set) Delete(name string) (*Set, error) {
	l := s.libs[name]
	if l == nil {
		return nil, ErrLibraryNotFound
	}
	c := s.clone()
	c.unlink(l)
	return c, nil
}

func (s *Set) unlink(l *Library) {
	for _, f := range l.Functions {
		delete(s.funcs, foldName(f.Name))
	}
	delete(s.libs, l.Name)
}

func (s *Set) link(l *Library) {
	for _, f := range l.Functions {
		s.funcs[foldName(f.Name)] = f
	}
	s.libs[l.Name] = l
}

// collision returns the first function of l (in name order) whose name s
// already holds.
func (s *Set) collision(l *Library) *Function {
	for _, f := range l.Functions {
		if s.funcs[foldName(f.Name)] != nil {
			return f
		}
	}
	return nil
}

// RestorePolicy is how FUNCTION RESTORE treats the libraries already there.
type RestorePolicy int

// The policies (Redis's default is Append).
const (
	Append  RestorePolicy = iota // add the payload's libraries; a library name taken is an error
	Replace                      // add them, replacing libraries of the same name
	Flush                        // drop every library first
)

// ErrBadRestorePolicy is FUNCTION RESTORE's error for an unknown policy.
var ErrBadRestorePolicy = errors.New("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")

// ParseRestorePolicy reads FLUSH, APPEND or REPLACE (any case).
func ParseRestorePolicy(s string) (RestorePolicy, error) {
	switch {
	case equalFoldASCII(s, "append"):
		return Append, nil
	case equalFoldASCII(s, "replace"):
		return Replace, nil
	case equalFoldASCII(s, "flush"):
		return Flush, nil
	}
	return 0, ErrBadRestorePolicy
}

// join returns s with the libraries of src added as Redis's libraryJoin
// does: a library name already in s is an error unless replace (then the
// old library goes), and a function name taken by a library that stays is
// an error.
func (s *Set) join(src *Set, replace bool) (*Set, error) {
	c := s.clone()
	for _, l := range src.Libraries() {
		if old := c.libs[l.Name]; old != nil {
			if !replace {
				return nil, errors.New("ERR Library " + l.Name + " already exists")
			}
			c.unlink(old)
		}
	}
	for _, l := range src.Libraries() {
		if f := c.collision(l); f != nil {
			return nil, errors.New("ERR Function " + f.Name + " already exists")
		}
	}
	for _, l := range src.Libraries() {
		c.link(l)
	}
	return c, nil
}

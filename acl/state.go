package acl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Durability of ACL changes.
//
// Redis keeps ACL changes in memory until ACL SAVE (or CONFIG REWRITE);
// Persimmon acknowledges an ACL change only once it is durable. The whole
// ACL state is small (one line a user) and changes rarely, so it is kept
// as one record, the state file StateFileName in the data directory,
// holding Dump's text (the aclfile format, so it is readable, and loads
// with the same code and errors as an aclfile). The server writes it with
// SaveState after every change that succeeded (ACL SETUSER, ACL DELUSER,
// ACL LOAD, CONFIG SET requirepass) and before it replies: temporary file,
// fsync, rename, fsync of the directory, so a crash (kill -9 or power
// loss, in every durability mode) leaves the old state or the new one
// whole, never a mix.
//
// Start-up order: the default user as created, requirepass, then the
// aclfile if one is configured (Redis's order), then the state file if it
// exists: it holds every change acknowledged since, so it wins. An
// operator who edited the aclfile while the server was down runs ACL LOAD
// (or removes the state file) to make it win.
//
// Why a file and not a wal record: a record in the keyspace's log would
// need a kind the cleaner knows to keep alive (the newest state is live
// however old its segment) and a place the index re-attach finds without a
// replay; the keyspace and its index are being reworked, and an ACL change
// gains nothing from group commit. The cost is that an ACL change is not
// in the same atomic unit as data writes: a MULTI holding ACL SETUSER and
// SET survives a crash as its ACL part, its data part, both or neither, and
// not necessarily whole. Each part is still acknowledged only when durable.

// StateFileName is the state file's name in the data directory.
const StateFileName = "acl.state"

// SaveState writes the store's state to dir's state file durably. The
// error wraps ErrSave.
func (s *Store) SaveState(dir string) error {
	return WriteFileDurably(filepath.Join(dir, StateFileName), []byte(s.Dump()))
}

// LoadState replaces the users with the state file of dir, if there is
// one (found false, nothing changed, if not). Leftover temporary files of
// an interrupted SaveState are removed. A state file that does not load is
// corruption: the error names the file and the server should refuse to
// start rather than run with other users than it acknowledged.
func (s *Store) LoadState(dir string) (found bool, err error) {
	path := filepath.Join(dir, StateFileName)
	leftovers, _ := filepath.Glob(filepath.Join(dir, StateFileName+".tmp-*"))
	for _, l := range leftovers {
		if err := os.Remove(l); err != nil {
			return false, fmt.Errorf("acl: removing %s: %w", l, err)
		}
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("acl: reading %s: %w", path, err)
	}
	if len(b) == 0 || !strings.HasSuffix(string(b), "\n") {
		// Dump always ends with a line; a short file was not written by
		// SaveState (which renames only a whole file).
		return false, fmt.Errorf("acl: %s: not a whole ACL state (%d bytes)", path, len(b))
	}
	if _, err := s.LoadText(string(b), path); err != nil {
		return false, fmt.Errorf("acl: %s: %w", path, err)
	}
	return true, nil
}

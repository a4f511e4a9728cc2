package acl

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The aclfile: one user a line, "user <name> <rule> <rule> ...", the rules
// as ACL SETUSER takes them (a selector may span several words). Empty
// lines are allowed; anything else, a comment included, is an error,
// because ACL SAVE rewrites the file. Words are separated by single spaces
// (Redis splits on " " and trims tabs and CRs from each word).

// LoadError lists every problem an aclfile has, in Redis's wording: the
// Error text is what ACL LOAD replies (after "ERR ") and what start-up
// prints after "Aborting Redis startup because of ACL errors: ".
type LoadError struct{ msg string }

func (e *LoadError) Error() string { return e.msg }

// LoadText replaces every user with those the aclfile text defines, as
// ACL LOAD does: all or nothing. filename names the file in the errors. A
// file without a default user gets the default user as created. The
// default user keeps its handle (its connections stay); every other old
// user is returned marked Deleted, for the server to disconnect its
// clients as Redis does.
func (s *Store) LoadText(text, filename string) ([]*User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs strings.Builder
	loaded := map[string]*rules{}
	for i, line := range strings.Split(text, "\n") {
		linenum := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", filename, linenum)
			continue
		}
		name := argv[1]
		if hasSpaces(name) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", filename, linenum, name)
			continue
		}
		if _, dup := loaded[name]; dup {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, linenum)
			continue
		}
		r := newRules(s.table, s.pubsubAll)
		loaded[name] = r
		merged, bad := mergeSelectors(argv[2:])
		if bad >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", filename, linenum)
		}
		syntaxErr := false
		for _, op := range merged {
			op = strings.Trim(op, "\t\r\n")
			err := r.apply(s.table, s.pubsubAll, op)
			switch {
			case err == nil:
			case errors.Is(err, errRuleUnknown):
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", filename, linenum, op, err)
			case !syntaxErr:
				fmt.Fprintf(&errs, "%s:%d: %s. ", filename, linenum, err)
				syntaxErr = true
			}
		}
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, &LoadError{errs.String()}
	}
	var gone []*User
	for name, u := range s.users {
		if name != DefaultUser {
			u.deleted.Store(true)
			gone = append(gone, u)
		}
	}
	users := map[string]*User{DefaultUser: s.def}
	for name, r := range loaded {
		if name == DefaultUser {
			continue
		}
		users[name] = s.newUser(name, r)
	}
	def := loaded[DefaultUser]
	if def == nil {
		def = defaultRules(s.table, s.pubsubAll)
	}
	s.publish(s.def, def)
	s.users = users
	return gone, nil
}

// strerror is the C library's text for a file error (Go's errno texts are
// glibc's with a lowercase first letter).
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		m := errno.Error()
		if m != "" {
			return strings.ToUpper(m[:1]) + m[1:]
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// LoadFile is ACL LOAD (and start-up with an aclfile) from path.
func (s *Store) LoadFile(path string) ([]*User, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &LoadError{fmt.Sprintf("Error loading ACLs, opening file '%s': %s", path, strerror(err))}
	}
	return s.LoadText(string(b), path)
}

// ErrSave is ACL SAVE's reply when the file could not be written.
var ErrSave = errors.New("There was an error trying to save the ACLs. Please check the server logs for more information")

// SaveFile is ACL SAVE: Dump written to path durably (a temporary file
// beside it, fsync, rename over path, fsync of the directory). The
// returned error wraps ErrSave and names the step that failed, for the
// log.
func (s *Store) SaveFile(path string) error {
	return WriteFileDurably(path, []byte(s.Dump()))
}

// WriteFileDurably replaces path with data so that a crash leaves either
// the old or the new content whole: temporary file, fsync, rename, fsync
// of the directory. Errors wrap ErrSave.
func WriteFileDurably(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%w: opening temp file: %v", ErrSave, err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%w: writing %s: %v", ErrSave, tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%w: syncing %s: %v", ErrSave, tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%w: closing %s: %v", ErrSave, tmp.Name(), err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("%w: chmod %s: %v", ErrSave, tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%w: renaming to %s: %v", ErrSave, path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: opening %s: %v", ErrSave, dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%w: syncing %s: %v", ErrSave, dir, err)
	}
	return nil
}

// GenPassMaxBits is ACL GENPASS's largest size.
const GenPassMaxBits = 4096

// ErrGenPassBits is ACL GENPASS's error for a size out of range.
var ErrGenPassBits = fmt.Errorf("ACL GENPASS argument must be the number of bits for the output password, a positive number up to %d", GenPassMaxBits)

// GenPass is ACL GENPASS: bits of randomness as (bits+3)/4 lowercase hex
// characters.
func GenPass(bits int64) (string, error) {
	if bits <= 0 || bits > GenPassMaxBits {
		return "", ErrGenPassBits
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(buf)[:chars], nil
}

package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
)

// The unix-socket listener (semantics: redis.conf unixsocket and
// unixsocketperm). With unixsocket set the server also accepts on that
// path, in both I/O modes: the accepted connection goes through the same
// accept path as a TCP one (protected mode counts it as local, CLIENT LIST
// shows addr=<path>:0 and flags U, the event loop enrolls its descriptor
// like any socket's). The listener is kept apart from the TCP ones, so
// CONFIG SET bind/port rebinding leaves it open.
//
// As Redis does, a file left at the path by an earlier run is removed
// first, but only if it is a socket: Redis unlinks whatever is there,
// Persimmon refuses to delete a regular file and fails to listen instead.
// unixsocketperm (octal, 0 = leave the umask's mode) is applied with chmod
// once the socket exists. The file is removed when the server closes.

// unixSocketConfig returns the configured socket path ("" = none) and
// permissions (0 = unchanged).
func (s *Server) unixSocketConfig() (path string, perm fs.FileMode, err error) {
	s.conf.mu.Lock()
	path, permText := s.conf.vals["unixsocket"], s.conf.vals["unixsocketperm"]
	s.conf.mu.Unlock()
	if permText == "" {
		return path, 0, nil
	}
	p, err := strconv.ParseUint(permText, 8, 32)
	if err != nil || p > 0o777 {
		return path, 0, fmt.Errorf("server: unixsocketperm %q is not an octal mode", permText)
	}
	return path, fs.FileMode(p), nil
}

// listenUnix opens the unixsocket listener, or returns nil when none is
// configured.
func (s *Server) listenUnix() (net.Listener, error) {
	path, perm, err := s.unixSocketConfig()
	if err != nil || path == "" {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSocket != 0 {
		// A socket left by an earlier run (a kill -9 leaves it behind).
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("server: removing the stale unix socket %s: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("server: listen on unix socket %s: %w", path, err)
	}
	if perm != 0 {
		if err := os.Chmod(path, perm); err != nil {
			ln.Close()
			return nil, fmt.Errorf("server: unixsocketperm %o on %s: %w", perm, path, err)
		}
	}
	return ln, nil
}

// UnixAddr returns the unix socket's address, or nil when the server
// listens on none.
func (s *Server) UnixAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unixLn == nil {
		return nil
	}
	return s.unixLn.Addr()
}

// errNoListener is Listen's error for a configuration that listens nowhere.
var errNoListener = errors.New("server: configured to not listen anywhere (no TCP port and no unix socket)")

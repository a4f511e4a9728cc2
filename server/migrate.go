package server

import (
	"bufio"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// MIGRATE's connection cache, as Redis keeps one (cluster.c): a connection
// per target host:port, reused by later MIGRATEs, at most
// migrateCacheItems of them (a random one is closed to make room), each
// closed once unused for migrateCacheTTL. INFO's migrate_cached_sockets
// counts them. The cache closes idle connections when it is next used or
// counted, not on a timer: what INFO reports is the same.

const (
	migrateCacheItems = 64
	migrateCacheTTL   = 10 * time.Second
)

// MigrateConn is a cached connection to a MIGRATE target. LastDB is the
// database its last SELECT chose (-1: unknown, SELECT again). A caller
// holds it alone between MigrateConn and MigrateRelease or MigrateDrop.
type MigrateConn struct {
	Conn   net.Conn
	R      *bufio.Reader
	LastDB int64
	used   time.Time
}

type migrateCache struct {
	mu    sync.Mutex
	conns map[string]*MigrateConn
}

func (m *migrateCache) sweepLocked(now time.Time) {
	for k, c := range m.conns {
		if now.Sub(c.used) > migrateCacheTTL {
			c.Conn.Close()
			delete(m.conns, k)
		}
	}
}

// MigrateConn takes the cached connection to addr (host:port) out of the
// cache, or dials one within timeout; the caller gives it back with
// MigrateRelease (or closes it after an I/O error). Taken out, a
// connection serves one MIGRATE at a time even when MIGRATEs of other keys
// run in parallel.
func (s *Server) MigrateConn(addr string, timeout time.Duration) (*MigrateConn, error) {
	m := &s.migrate
	now := time.Now()
	m.mu.Lock()
	m.sweepLocked(now)
	if c := m.conns[addr]; c != nil {
		delete(m.conns, addr)
		m.mu.Unlock()
		return c, nil
	}
	m.mu.Unlock()
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &MigrateConn{Conn: nc, R: bufio.NewReader(nc), LastDB: -1}, nil
}

// MigrateRelease puts a connection MigrateConn gave back into the cache,
// its idle time starting now.
func (s *Server) MigrateRelease(addr string, c *MigrateConn) {
	m := &s.migrate
	m.mu.Lock()
	defer m.mu.Unlock()
	c.used = time.Now()
	if m.conns == nil {
		m.conns = map[string]*MigrateConn{}
	}
	if len(m.conns) >= migrateCacheItems {
		keys := make([]string, 0, len(m.conns))
		for k := range m.conns {
			keys = append(keys, k)
		}
		k := keys[rand.IntN(len(keys))]
		m.conns[k].Conn.Close()
		delete(m.conns, k)
	}
	if old := m.conns[addr]; old != nil {
		old.Conn.Close()
	}
	m.conns[addr] = c
}

// migrateSockets is INFO's migrate_cached_sockets.
func (s *Server) migrateSockets() int {
	m := &s.migrate
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(time.Now())
	return len(m.conns)
}

// migrateEffect is what a MIGRATE that ran on c propagates, as Redis
// rewrites it: a DEL of its keys that are gone (the ones the target
// acknowledged; a key that was missing before is missing on the replica
// too), even when the reply is an error (some keys may have moved before
// it); nothing with COPY or when no key went.
func (c *conn) migrateEffect(args [][]byte) [][]byte {
	if len(args) < 6 {
		return nil
	}
	keys := args[3:4]
	for j := 6; j < len(args); j++ {
		switch {
		case ArgIs(args[j], "copy"):
			return nil
		case ArgIs(args[j], "auth"):
			j++
		case ArgIs(args[j], "auth2"):
			j += 2
		case ArgIs(args[j], "keys"):
			keys = args[j+1:]
			j = len(args)
		}
	}
	eff := [][]byte{[]byte("DEL")}
	for _, k := range keys {
		if len(k) > 0 && !c.KS.Exists(c.DB, k) {
			eff = append(eff, k)
		}
	}
	if len(eff) == 1 {
		return nil
	}
	return eff
}

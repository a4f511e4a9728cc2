package server

import "github.com/persimmon-db/persimmon/keyspace"

// Cold GETs with a goroutine per connection (keyspace/coldread.go): while
// the process takes major faults, a GET first asks under the lock which
// pages it would fault on, lets the lock go while they are read in
// (sleeping, so the other connections' GETs run and their reads overlap
// on the device), then runs as usual. The event loop serves every
// connection on one goroutine, so waiting there would stall them all: it
// does not warm.

// warmGet reads in the pages a GET of key would fault on, without the
// keyspace lock held while they are read.
func (c *conn) warmGet(key []byte) {
	env := &c.srv.env
	env.lock()
	c.warm = c.KS.ColdPages(c.DB, key, c.warm[:0])
	env.unlock()
	if len(c.warm) > 0 {
		keyspace.WaitResident(c.warm)
		clear(c.warm) // the mappings' slices are not kept
	}
}

// warmsGet reports whether cmd is a GET to warm (coldread.go).
func (c *conn) warmsGet(cmd *Command, args [][]byte) bool {
	return cmd == c.srv.getCmd && len(args) == 2 && c.srv.cfg.IO != IOLoop && c.KS != nil && c.KS.ColdReads()
}

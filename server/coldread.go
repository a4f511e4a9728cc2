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
// keyspace lock held while they are read: the index slot's page first if
// it is not resident, then the record's, found through the slot once it
// is in (asked for under the lock again), so that the GET faults on
// neither under the lock. Warming the slot's page only, as before, left
// the record's fault to the GET, under the lock: zipfian GETs of 2 M
// keys in a cgroup of a quarter of their size took 0.11-0.18 major faults
// a GET, 0.02-0.03 now.
func (c *conn) warmGet(key []byte) {
	env := &c.srv.env
	for round := 0; round < 2; round++ {
		env.lock()
		var slot bool
		c.warm, slot = c.KS.ColdPages(c.DB, key, c.warm[:0])
		env.unlock()
		if len(c.warm) == 0 {
			return
		}
		keyspace.WaitResident(c.warm)
		clear(c.warm) // the mappings' slices are not kept
		if !slot {
			return // the records' pages: the GET can run
		}
	}
}

// warmsGet reports whether cmd is a GET to warm (coldread.go).
func (c *conn) warmsGet(cmd *Command, args [][]byte) bool {
	return cmd == c.srv.getCmd && len(args) == 2 && c.srv.cfg.IO != IOLoop && c.KS != nil && c.KS.ColdReads()
}

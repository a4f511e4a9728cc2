package server

import (
	"bytes"

	"github.com/persimmon-db/persimmon/proto"
)

// Parsing a pipelined batch once, and prefetching its keys.
//
// A read that holds several pipelined requests lets the server know their
// keys before it runs any of them. parseAhead parses the requests at the
// front of the input in RESP's canonical form (proto.ParseBatch, up to
// prefetchMax of them, stopping at the first it does not take) and hands
// the keys of its SET and GET requests to the keyspace
// (Keyspace.Prefetch), which asks the processor for the key index's words
// and records they will read: at -P 16 the cache misses of sixteen
// lookups are then in flight together instead of one after the other. The
// prefetch is only a hint: nothing changes, a key missed is looked up as
// before, and it is skipped when the keyspace lock is not free (it never
// waits for it). processInput then takes the parsed requests one by one
// (nextRequest) instead of parsing them again, applying the protocol
// limits in force when each runs; a request parseAhead did not take goes
// through the connection's proto.Reader as before, and the next batch is
// parsed from after it.

// prefetchMax is the most requests of one batch parsed ahead, and so the
// most keys prefetched at once.
const prefetchMax = 64

// parsedBatch is the requests parseAhead took from the front of an input
// of length base: nextRequest hands out reqs[next] when the input it is
// given starts where that request does.
type parsedBatch struct {
	reqs []proto.Parsed
	args [][]byte // the requests' arguments (views of rbuf)
	next int
	base int
	keys [][]byte // the prefetch's scratch
}

// beginBatch starts the parsing of a read's input (processInput, before
// its loop).
func (c *conn) beginBatch(data []byte) {
	c.endBatch()
	c.parseAhead(data)
}

// endBatch drops the parsed requests: their views of rbuf must not be
// kept past the loop that takes them (a large buffer may be let go).
func (c *conn) endBatch() {
	b := &c.pb
	clear(b.args)
	clear(b.reqs)
	b.reqs, b.args, b.next = b.reqs[:0], b.args[:0], 0
}

// parseAhead parses the requests at the front of data and prefetches
// their keys.
func (c *conn) parseAhead(data []byte) {
	b := &c.pb
	c.endBatch()
	if len(data) == 0 || data[0] != '*' {
		return
	}
	b.reqs, b.args = proto.ParseBatch(data, prefetchMax, b.reqs, b.args)
	b.base = len(data)
	if c.KS != nil && !c.InMulti && len(b.reqs) >= 2 {
		c.prefetchKeys()
	}
}

// nextRequest is proto.Reader.Next for processInput: the next request
// parsed ahead when data starts with it (a new batch is parsed when the
// last one is used up), else the reader's answer.
func (c *conn) nextRequest(data []byte) (args [][]byte, rest []byte, need int, perr string) {
	b := &c.pb
	if b.next >= len(b.reqs) {
		c.parseAhead(data)
	}
	if b.next < len(b.reqs) {
		start := 0
		if b.next > 0 {
			start = b.reqs[b.next-1].End
		}
		if r := b.reqs[b.next]; b.base-len(data) == start {
			b.next++
			if msg := c.limits().Check(r.Args); msg != "" {
				return nil, data, 0, msg
			}
			return r.Args, data[r.End-start:], 0, ""
		}
		c.endBatch() // not where the batch stands: parse it all again
	}
	return c.reader.Next(data, c.limits())
}

// prefetchKeys hands the keys of the parsed SET and GET requests to the
// keyspace, under the lock if it is free.
func (c *conn) prefetchKeys() {
	b := &c.pb
	keys := batchKeys(b.reqs, b.keys[:0])
	if len(keys) >= 2 && c.srv.loading.Load() == nil {
		env := &c.srv.env
		if env.tryLock != nil && env.tryLock() {
			c.KS.Prefetch(c.DB, keys)
			env.unlock()
		}
	}
	clear(keys) // views of rbuf: not kept past this read
	b.keys = keys[:0]
}

// batchKeys appends to keys the key (second argument) of each request of
// reqs whose command is SET or GET.
func batchKeys(reqs []proto.Parsed, keys [][]byte) [][]byte {
	for _, r := range reqs {
		if len(r.Args) >= 2 && len(r.Args[0]) == 3 && (bytes.EqualFold(r.Args[0], []byte("set")) || bytes.EqualFold(r.Args[0], []byte("get"))) {
			keys = append(keys, r.Args[1])
		}
	}
	return keys
}

package server

import (
	"bytes"

	"github.com/persimmon-db/persimmon/proto"
)

// Prefetching a pipelined batch's keys.
//
// A read that holds several pipelined requests lets the server know their
// keys before it runs any of them. prefetchBatch picks the keys of the
// batch's SET and GET requests (a cheap scan of the canonical RESP form;
// it stops at the first request it does not follow) and hands them to the
// keyspace (Keyspace.Prefetch), which asks the processor for the key
// index's words and records they will read: at -P 16 the cache misses of
// sixteen lookups are then in flight together instead of one after the
// other. It is only a hint: nothing changes, a key the scan misses is
// looked up as before, and it is skipped when the keyspace lock is not
// free (it never waits for it).

// prefetchMax is the most keys of one batch prefetched.
const prefetchMax = 64

func (c *conn) prefetchBatch(data []byte) {
	keys := batchKeys(data, c.pfKeys[:0], prefetchMax)
	if len(keys) >= 2 && c.srv.loading.Load() == nil {
		env := &c.srv.env
		if env.tryLock != nil && env.tryLock() {
			c.KS.Prefetch(c.DB, keys)
			env.unlock()
		}
	}
	clear(keys) // views of rbuf: not kept past this read
	c.pfKeys = keys[:0]
}

// batchKeys appends to keys the key (second argument) of each whole
// request at the front of data, up to max, whose command is SET or GET, in
// RESP's canonical form ("*<n>\r\n", then "$<len>\r\n<bytes>\r\n" each);
// it stops at anything else that is not such a request.
func batchKeys(data []byte, keys [][]byte, max int) [][]byte {
	for len(keys) < max && len(data) > 0 && data[0] == '*' {
		n, i, ok := proto.DecimalLine(data, 1)
		if !ok || n < 1 {
			return keys
		}
		var cmd, key []byte
		for a := 0; a < n; a++ {
			if i >= len(data) || data[i] != '$' {
				return keys
			}
			l, j, ok := proto.DecimalLine(data, i+1)
			if !ok || l < 0 || j+l+2 > len(data) {
				return keys
			}
			switch a {
			case 0:
				cmd = data[j : j+l]
			case 1:
				key = data[j : j+l]
			}
			i = j + l + 2
		}
		data = data[i:]
		if key != nil && len(cmd) == 3 && (bytes.EqualFold(cmd, []byte("set")) || bytes.EqualFold(cmd, []byte("get"))) {
			keys = append(keys, key)
		}
	}
	return keys
}

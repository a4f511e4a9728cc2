package server

import "github.com/persimmon-db/persimmon/keyspace"

// Blocking of the stream readers (XREAD, XREADGROUP), for the streams
// family: which reader takes its turn, and who is woken by a write.

// yieldsToGroupReader reports whether an XREADGROUP must leave the new
// entries of key to an XREADGROUP blocked on it before this client that
// was woken and has not taken its turn yet (arrival order, as Redis serves
// its blocked clients; see yieldsTo for lists).
func (c *Client) YieldsToGroupReader(key []byte) bool {
	cn := c.conn
	if cn == nil || cn.inExec {
		return false
	}
	r := LoadRegistry(c.KS)
	if r == nil {
		return false
	}
	for _, b := range r.waiters[BlockKey{c.DB, string(key)}] {
		if b == cn.blk.b {
			return false
		}
		if b.groupRead && b.woken {
			return true
		}
	}
	return false
}

// passTurn is called by a woken stream reader that found nothing and
// blocks again: the readers behind it on its keys that are not woken are,
// as they may have yielded to it (YieldsToGroupReader) or been passed over
// by the wake-up of the first waiter only (a RENAME or MULTI's push).
func (c *Client) PassTurn(keys [][]byte) {
	cn := c.conn
	r := LoadRegistry(c.KS)
	if cn == nil || cn.blk.b == nil || r == nil {
		return
	}
	for _, key := range keys {
		k := BlockKey{c.DB, string(key)}
		behind := false
		for _, b := range r.waiters[k] {
			if b == cn.blk.b {
				behind = true
			} else if behind && !b.woken {
				b.wake(r, k)
			}
		}
	}
}

// streamKeyTouched is the keyspace's OnKeyTouched hook: it wakes the
// XREADGROUP clients blocked on a key that was written or deleted (key
// nil: any key of db), so that one whose stream or group is gone answers
// with Redis's error instead of waiting forever.
func (r *BlockRegistry) streamKeyTouched(db int, key []byte) {
	if len(r.waiters) == 0 {
		return
	}
	if key != nil {
		k := BlockKey{db, string(key)}
		for _, b := range r.waiters[k] {
			if b.groupRead && !b.woken {
				b.wake(r, k)
			}
		}
		return
	}
	for k, q := range r.waiters {
		if k.db != db {
			continue
		}
		for _, b := range q {
			if b.groupRead && !b.woken {
				b.wake(r, k)
			}
		}
	}
}

// signalStreamReaders wakes every client blocked on (db, key) after an
// XADD: readers take nothing from a stream, so one entry can serve them
// all (the keyspace hook wakes only the first waiter, which suits pops).
func SignalStreamReaders(ks *keyspace.Keyspace, db int, key []byte) {
	r := LoadRegistry(ks)
	if r == nil || len(r.waiters) == 0 {
		return
	}
	k := BlockKey{db, string(key)}
	for _, b := range r.waiters[k] {
		b.wake(r, k)
	}
}

// Rerun reports whether the command running is a blocked client's retry
// after a wake-up (not its first run).
func (c *Client) Rerun() bool { return c.conn != nil && c.conn.blk.b != nil }

// MarkGroupRead marks the client's pending block as an XREADGROUP, which
// keyspace touches wake (streamKeyTouched). Call it after BlockOn succeeded.
func (c *Client) MarkGroupRead() { c.conn.blk.b.groupRead = true }

// HLLSparseMaxBytes is hll-sparse-max-bytes as CONFIG SET last set it.
func (c *Client) HLLSparseMaxBytes() int { return int(c.Srv.live.hllSparseMaxBytes.Load()) }

// StreamNodeLimits are stream-node-max-entries and stream-node-max-bytes
// as CONFIG SET last set them (Redis's defaults for a client without a
// server: a handler run in a unit test or benchmark).
func (c *Client) StreamNodeLimits() keyspace.StreamNodeLimits {
	if c.Srv == nil {
		return keyspace.StreamNodeLimits{MaxEntries: 100, MaxBytes: 4096}
	}
	return keyspace.StreamNodeLimits{MaxEntries: c.Srv.live.streamNodeEntries.Load(), MaxBytes: c.Srv.live.streamNodeBytes.Load()}
}

// ProtoMaxBulkLen is proto-max-bulk-len as CONFIG SET last set it.
func (c *Client) ProtoMaxBulkLen() int64 { return c.Srv.live.protoMaxBulkLen.Load() }

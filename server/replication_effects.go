package server

import (
	"bytes"
	"strconv"
)

// Effects-only propagation: a write reaches the replication stream as
// what it did, never as something the replica would have to decide again
// (its clock, its random choices, its float formatting), so a replica
// that applies the stream holds exactly the master's data. Redis 7.0
// rewrites the same commands the same way:
//
//	SPOP key [count]          SREM key member...      (the members popped)
//	INCRBYFLOAT key n         SET key value KEEPTTL   (the value it made)
//	HINCRBYFLOAT key f n      HSET key f value
//	EXPIRE/PEXPIRE, SETEX,    PEXPIREAT / SET ... PXAT (the absolute time
//	PSETEX, SET EX|PX|EXAT,   read back; DEL when the key is gone)
//	GETEX EX|PX|EXAT|PXAT
//	RESTORE key ttl ...       RESTORE key <abs ms> ... ABSTTL
//	XADD key ... * ...        XADD key ... <the ID it made> ...
//	BLPOP, BLMOVE, BZPOPMIN,  LPOP, LMOVE, ZPOPMIN, ... (what was popped)
//	...
//	a key expired (read       DEL key, UNLINK when lazyfree-lazy-expire
//	or the background cycle)  is yes
//
// A script's or function's writes are each propagated as they run
// (rewritten as above), wrapped in MULTI/EXEC; the EVAL or FCALL itself
// is not.

// effect rewrites a write into its effect, read from its reply and the
// keyspace just after it ran (under the same lock). rewritten is false
// for a write propagated as sent; eff nil means it changed nothing.
func (c *conn) effect(name string, args [][]byte, reply []byte) (eff [][]byte, rewritten bool) {
	if eff, blocking := blockingEffect(name, args, reply); blocking {
		return eff, true
	}
	if eff, relative := c.expireEffect(name, args, reply); relative {
		return eff, true
	}
	switch name {
	case "spop":
		return spopEffect(args, reply), true
	case "incrbyfloat":
		v, ok := bulkReply(reply)
		if !ok || len(args) != 3 {
			return nil, true
		}
		return [][]byte{[]byte("SET"), args[1], v, []byte("KEEPTTL")}, true
	case "hincrbyfloat":
		v, ok := bulkReply(reply)
		if !ok || len(args) != 4 {
			return nil, true
		}
		return [][]byte{[]byte("HSET"), args[1], args[2], v}, true
	case "restore":
		return c.restoreEffect(args)
	case "xadd":
		return xaddEffect(args, reply)
	}
	return nil, false
}

// spopEffect is SPOP as the SREM of what it popped (nil: nothing).
func spopEffect(args [][]byte, reply []byte) [][]byte {
	var popped [][]byte
	if v, ok := bulkReply(reply); ok {
		popped = [][]byte{v}
	} else if vs, ok := bulkItems(reply); ok {
		popped = vs
	}
	if len(popped) == 0 {
		return nil
	}
	return append([][]byte{[]byte("SREM"), args[1]}, popped...)
}

// bulkReply reads a bulk-string reply (RESP2 or RESP3); ok is false for
// a null or anything else.
func bulkReply(p []byte) ([]byte, bool) {
	if len(p) == 0 || p[0] != '$' {
		return nil, false
	}
	n, rest, ok := lenLine(p[1:])
	if !ok || n < 0 || len(rest) < n {
		return nil, false
	}
	return rest[:n], true
}

// bulkItems reads an array (or RESP3 set) reply of bulk strings.
func bulkItems(p []byte) ([][]byte, bool) {
	if len(p) == 0 || (p[0] != '*' && p[0] != '~') {
		return nil, false
	}
	n, p, ok := lenLine(p[1:])
	if !ok || n < 0 {
		return nil, false
	}
	out := make([][]byte, 0, n)
	for range n {
		if len(p) == 0 || p[0] != '$' {
			return nil, false
		}
		l, rest, ok := lenLine(p[1:])
		if !ok || l < 0 || len(rest) < l+2 {
			return nil, false
		}
		out = append(out, rest[:l])
		p = rest[l+2:]
	}
	return out, true
}

// restoreEffect gives RESTORE's relative TTL as the absolute time it set
// (ABSTTL), or DEL when the key did not survive it.
func (c *conn) restoreEffect(args [][]byte) ([][]byte, bool) {
	if len(args) < 4 || string(args[2]) == "0" {
		return nil, false
	}
	for _, a := range args[4:] {
		if ArgIs(a, "absttl") {
			return nil, false
		}
	}
	ms, ok := c.KS.ExpireAt(c.DB, args[1])
	if !ok || ms == 0 {
		return [][]byte{[]byte("DEL"), args[1]}, true
	}
	out := append([][]byte{args[0], args[1], strconv.AppendInt(nil, ms, 10)}, args[3:]...)
	return append(out, []byte("ABSTTL")), true
}

// xaddEffect puts the ID XADD generated in place of its '*' (or its
// "ms-*"); nil when it added nothing (NOMKSTREAM on a missing key).
func xaddEffect(args [][]byte, reply []byte) ([][]byte, bool) {
	i := 2
	for i < len(args) {
		switch {
		case ArgIs(args[i], "nomkstream"):
			i++
			continue
		case ArgIs(args[i], "maxlen") || ArgIs(args[i], "minid"):
			i++
			if i < len(args) && (string(args[i]) == "=" || string(args[i]) == "~") {
				i++
			}
			i++
			if i < len(args) && ArgIs(args[i], "limit") {
				i += 2
			}
			continue
		}
		break
	}
	if i >= len(args) || !bytes.Contains(args[i], []byte("*")) {
		return nil, false
	}
	id, ok := bulkReply(reply)
	if !ok {
		return nil, true
	}
	out := append([][]byte(nil), args...)
	out[i] = id
	return out, true
}

// propagateExpired is the keyspace's OnExpired hook: a key the master
// expired (lazily or in the background cycle) goes to the stream as DEL
// (UNLINK with lazyfree-lazy-expire yes), as Redis propagates it, so a
// replica, which never expires keys itself, drops it too. A replica's own
// expiries are not propagated (Master.Propagate drops writes while it
// relays its master's stream).
func (s *Server) propagateExpired(db int, key string) {
	m := s.master
	if m == nil || !m.Streaming() {
		return
	}
	name := "DEL"
	if s.replica.lazyExpire.Load() {
		name = "UNLINK"
	}
	m.Propagate(db, []byte(name), []byte(key))
}

package server

import (
	"bytes"
	"strconv"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Effects-only propagation: a write reaches the replication stream as
// what it did, never as something the replica would have to decide again
// (its clock, its random choices, its float formatting), so a replica
// that applies the stream holds exactly the master's data. Redis 7.0
// rewrites the same commands the same way:
//
//	SPOP key [count]          SREM key member, one per member popped; DEL
//	                          key when a count took the whole set
//	INCRBYFLOAT key n         SET key value KEEPTTL   (the value it made)
//	HINCRBYFLOAT key f n      HSET key f value
//	GETSET key v              SET key v
//	SET key v [NX|XX] GET     SET key v [NX|XX]       (no GET)
//	GEOADD key [opts] lon lat m...  zadd key [opts] <geohash score> m...
//	EXPIRE/PEXPIRE/EXPIREAT   PEXPIREAT key ms [NX|XX|GT|LT] (the absolute
//	                          time read back; DEL when the key is gone)
//	SETEX, PSETEX, SET with   SET key value PXAT ms
//	EX|PX|EXAT|PXAT
//	GETEX EX|PX|EXAT|PXAT     PEXPIREAT key ms (DEL when the time is past)
//	RESTORE key ttl ...       RESTORE key <abs ms> ... ABSTTL
//	XADD key ... * ...        XADD key ... <the ID it made> ...
//	BLPOP, BLMOVE, BZPOPMIN,  LPOP, LMOVE, ZPOPMIN, ... (what was popped)
//	[B]LMPOP, [B]ZMPOP        LPOP|RPOP / ZPOPMIN|ZPOPMAX key <count popped>
//	GETDEL key                DEL key (UNLINK with lazyfree-lazy-user-del)
//	...
//	a key expired (read       DEL key, UNLINK when lazyfree-lazy-expire
//	or the background cycle)  is yes; before the write that found it
//
// A time already past deletes the key: DEL (UNLINK with
// lazyfree-lazy-expire). A write that changed nothing is not propagated;
// how a command's effects, a script's or EXEC's writes are grouped (alone,
// or in MULTI/EXEC) is propagate.go's.

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
	case "getdel":
		if len(args) != 2 || len(reply) == 0 || reply[0] == '_' || bytes.HasPrefix(reply, []byte("$-1")) {
			return nil, true // no key: nothing changed
		}
		del := []byte("DEL") // getdelCommand's rewrite
		if v, _ := c.srv.ConfigValue("lazyfree-lazy-user-del"); v == "yes" {
			del = []byte("UNLINK")
		}
		return [][]byte{del, args[1]}, true
	case "getset":
		if len(args) != 3 {
			return nil, false
		}
		return [][]byte{[]byte("SET"), args[1], args[2]}, true // getsetCommand's rewrite
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
	case "geoadd":
		return c.geoaddEffect(args), true
	case "xadd":
		eff, rewritten := xaddEffect(args, reply)
		if rewritten && eff == nil {
			return nil, true
		}
		if !rewritten {
			eff = args
		}
		if trimmed := c.streamTrimEffect(eff, 2); trimmed != nil {
			return trimmed, true
		}
		return eff, rewritten
	case "xtrim":
		if bytes.HasPrefix(reply, []byte(":0\r\n")) {
			return nil, true // it removed nothing
		}
		if trimmed := c.streamTrimEffect(args, 2); trimmed != nil {
			return trimmed, true
		}
	}
	return nil, false
}

// spopEffects is SPOP as Redis 7.0 propagates it (t_set.c): an SREM of
// each member popped, or DEL when a count took the whole set.
func (c *conn) spopEffects(args [][]byte, reply []byte) [][][]byte {
	var popped [][]byte
	if v, ok := bulkReply(reply); ok {
		popped = [][]byte{v}
	} else if vs, ok := bulkItems(reply); ok {
		popped = vs
	}
	if len(popped) == 0 || len(args) < 2 {
		return nil
	}
	if len(args) > 2 {
		if _, ok := c.KS.ExpireAt(c.DB, args[1]); !ok {
			return [][][]byte{{[]byte("DEL"), args[1]}}
		}
	}
	effs := make([][][]byte, len(popped))
	for i, m := range popped {
		effs[i] = [][]byte{[]byte("SREM"), args[1], m}
	}
	return effs
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

// geoaddEffect is GEOADD as the ZADD it runs (geoaddCommand's rewrite):
// "zadd" key, its NX|XX|CH, then score member for each member, the score
// being the member's geohash as an integer, read back.
func (c *conn) geoaddEffect(args [][]byte) [][]byte {
	i := 2
	for i < len(args) && (ArgIs(args[i], "nx") || ArgIs(args[i], "xx") || ArgIs(args[i], "ch")) {
		i++
	}
	z, err := c.KS.ZSetAt(c.DB, args[1])
	if err != nil || z == nil || (len(args)-i)%3 != 0 {
		return nil
	}
	out := append([][]byte{[]byte("zadd")}, args[1:i]...)
	n := len(out)
	for ; i+2 < len(args); i += 3 {
		if score, ok := z.Score(args[i+2]); ok {
			out = append(out, strconv.AppendInt(nil, int64(score), 10), args[i+2])
		}
	}
	if len(out) == n {
		return nil
	}
	return out
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

// expireDel is how a key an expiry removed is deleted in the stream: DEL,
// or UNLINK with lazyfree-lazy-expire yes (Redis's propagateDeletion and
// expireGenericCommand).
func (s *Server) expireDel() []byte {
	if s.replica.lazyExpire.Load() {
		return []byte("UNLINK")
	}
	return []byte("DEL")
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
	s.alsoPropagate(db, s.expireDel(), []byte(key)) // before the write that found it (propagate.go)
}

// Streams' effects, as Redis 7.0 propagates them (t_stream.c):
//
//	XADD/XTRIM MAXLEN|MINID ~ n   MAXLEN = <length after> | MINID = <first ID
//	                              after> (LIMIT dropped: an exact trim has
//	                              none); an XTRIM that removed nothing: nothing
//	XCLAIM, XAUTOCLAIM,           per entry claimed (or delivered): XCLAIM key group
//	XREADGROUP (also when served  <consumer> 0 <id> TIME <ms> RETRYCOUNT <n>
//	after blocking)               FORCE JUSTID LASTID <group's last ID>, read
//	                              back from the PEL; several in MULTI/EXEC;
//	                              XREADGROUP NOACK: XGROUP SETID key group
//	                              <last ID> ENTRIESREAD <n> per stream read
//
// An XCLAIM that finds an ID deleted from the stream drops it from the
// PEL; its XCLAIM goes with the claiming consumer and RETRYCOUNT 0 (Redis
// names the old owner and count, which are gone once it ran here): the
// replica drops the same entry. For an XCLAIM naming IDs missing from the
// stream that were not pending, that XCLAIM is a no-op Redis would not
// send. An XCLAIM with LASTID that claimed nothing goes as XGROUP SETID.

// streamTrimEffect rewrites an approximate trim (~) into the exact one
// that leaves what the master has; from is where the options start.
// nil when args has no "~" (propagated as sent).
func (c *conn) streamTrimEffect(args [][]byte, from int) [][]byte {
	out := [][]byte(nil)
	for i := from; i+2 < len(args); i++ {
		if !(ArgIs(args[i], "maxlen") || ArgIs(args[i], "minid")) || string(args[i+1]) != "~" {
			continue
		}
		m, ok, err := c.KS.Stream(c.DB, args[1])
		if err != nil || !ok {
			return nil
		}
		out = append(append([][]byte(nil), args[:i+1]...), []byte("="))
		if ArgIs(args[i], "maxlen") {
			out = append(out, strconv.AppendInt(nil, int64(m.Length), 10))
		} else {
			first := m.FirstID
			if m.Length == 0 {
				first = keyspace.StreamID{}
			}
			out = append(out, appendStreamID(nil, first))
		}
		rest := args[i+3:]
		if len(rest) >= 2 && ArgIs(rest[0], "limit") {
			rest = rest[2:]
		}
		return append(out, rest...)
	}
	return nil
}

func appendStreamID(dst []byte, id keyspace.StreamID) []byte {
	dst = strconv.AppendUint(dst, id.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, id.Seq, 10)
}

// parseStreamIDArg reads "ms-seq" or "ms" (seq 0).
func parseStreamIDArg(p []byte) (keyspace.StreamID, bool) {
	ms, seq, dash := bytes.Cut(p, []byte("-"))
	a, err := strconv.ParseUint(string(ms), 10, 64)
	if err != nil {
		return keyspace.StreamID{}, false
	}
	var b uint64
	if dash {
		if b, err = strconv.ParseUint(string(seq), 10, 64); err != nil {
			return keyspace.StreamID{}, false
		}
	}
	return keyspace.StreamID{Ms: a, Seq: b}, true
}

// xclaimOf is the XCLAIM that sets the PEL entry of id as it is now.
func (c *conn) xclaimOf(key, group []byte, id keyspace.StreamID, fallbackConsumer []byte, lastID keyspace.StreamID) [][]byte {
	consumer, at, count := fallbackConsumer, c.KS.NowMs(), uint64(0)
	if p, ok := c.KS.StreamPendingEntry(c.DB, key, group, id); ok {
		consumer, at, count = []byte(p.Consumer), p.DeliveryTime, p.DeliveryCount
	}
	return [][]byte{[]byte("XCLAIM"), key, group, consumer, []byte("0"), appendStreamID(nil, id),
		[]byte("TIME"), strconv.AppendInt(nil, at, 10), []byte("RETRYCOUNT"), strconv.AppendUint(nil, count, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), appendStreamID(nil, lastID)}
}

// claimEffects is what XCLAIM or XAUTOCLAIM did, as XCLAIMs of the PEL
// entries it set (see above); handled is false for other commands.
func (c *conn) claimEffects(name string, args [][]byte, reply []byte) (effs [][][]byte, handled bool) {
	if name == "xreadgroup" {
		return c.readGroupEffects(args, reply), true
	}
	if name != "xclaim" && name != "xautoclaim" || len(args) < 6 || len(reply) == 0 || reply[0] == '-' {
		return nil, false
	}
	key, group, consumer := args[1], args[2], args[3]
	gi, ok := c.KS.StreamGroup(c.DB, key, group)
	if !ok {
		return nil, true
	}
	var claimed, deleted []keyspace.StreamID
	if name == "xclaim" {
		claimed = replyStreamIDs(reply)
		lastGiven := false
		i := 5
		for ; i < len(args); i++ { // the IDs, up to the first option
			id, ok := parseStreamIDArg(args[i])
			if !ok {
				break
			}
			if !c.KS.StreamHas(c.DB, key, id) {
				deleted = append(deleted, id)
			}
		}
		for ; i < len(args); i++ {
			lastGiven = lastGiven || ArgIs(args[i], "lastid")
		}
		if len(claimed) == 0 && len(deleted) == 0 {
			if !lastGiven {
				return nil, true
			}
			er := []byte("0")
			if gi.EntriesRead >= 0 {
				er = strconv.AppendInt(nil, gi.EntriesRead, 10)
			}
			return [][][]byte{{[]byte("XGROUP"), []byte("SETID"), key, group, appendStreamID(nil, gi.LastID), []byte("ENTRIESREAD"), er}}, true
		}
	} else {
		// [cursor, [claimed entries or IDs], [deleted IDs]]
		n, p, ok := lenLine(reply[1:])
		if !ok || n < 2 {
			return nil, true
		}
		if p, ok = skipRESP(p); !ok { // the cursor
			return nil, true
		}
		claimed = replyStreamIDs(p)
		if n >= 3 {
			if p, ok = skipRESP(p); ok {
				deleted = replyStreamIDs(p)
			}
		}
	}
	for _, id := range deleted {
		effs = append(effs, c.xclaimOf(key, group, id, consumer, gi.LastID))
	}
	for _, id := range claimed {
		effs = append(effs, c.xclaimOf(key, group, id, consumer, gi.LastID))
	}
	return effs, true
}

// replyStreamIDs reads the IDs of an array reply whose elements are IDs
// (JUSTID) or entries [id, [field, value...]].
func replyStreamIDs(p []byte) []keyspace.StreamID {
	if len(p) == 0 || p[0] != '*' {
		return nil
	}
	n, p, ok := lenLine(p[1:])
	if !ok || n <= 0 {
		return nil
	}
	var out []keyspace.StreamID
	for range n {
		el := p
		var ok bool
		if p, ok = skipRESP(p); !ok {
			return out
		}
		if len(el) > 0 && el[0] == '*' {
			if _, rest, ok := lenLine(el[1:]); ok {
				el = rest
			}
		}
		if v, ok := bulkReply(el); ok {
			if id, ok := parseStreamIDArg(v); ok {
				out = append(out, id)
			}
		}
	}
	return out
}

// skipRESP returns what follows the RESP2/RESP3 value at the start of p.
func skipRESP(p []byte) ([]byte, bool) {
	if len(p) == 0 {
		return nil, false
	}
	switch p[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		i := bytes.Index(p, []byte("\r\n"))
		if i < 0 {
			return nil, false
		}
		return p[i+2:], true
	case '$', '!', '=':
		n, rest, ok := lenLine(p[1:])
		if !ok {
			return nil, false
		}
		if n < 0 {
			return rest, true
		}
		if len(rest) < n+2 {
			return nil, false
		}
		return rest[n+2:], true
	case '*', '~', '>', '%', '|':
		n, rest, ok := lenLine(p[1:])
		if !ok {
			return nil, false
		}
		if p[0] == '%' || p[0] == '|' {
			n *= 2
		}
		for range max(n, 0) {
			if rest, ok = skipRESP(rest); !ok {
				return nil, false
			}
		}
		return rest, true
	}
	return nil, false
}

// readGroupEffects is what an XREADGROUP delivered (see above); nothing
// when it delivered nothing (or blocked: it is propagated when served).
func (c *conn) readGroupEffects(args [][]byte, reply []byte) [][][]byte {
	if len(reply) == 0 || (reply[0] != '*' && reply[0] != '%') {
		return nil
	}
	var group, consumer []byte
	noack := false
	newOnly := map[string]bool{} // keys read with ">"
	for i := 1; i < len(args); i++ {
		switch {
		case ArgIs(args[i], "group") && i+2 < len(args):
			group, consumer = args[i+1], args[i+2]
			i += 2
		case ArgIs(args[i], "noack"):
			noack = true
		case ArgIs(args[i], "streams"):
			keys := args[i+1:]
			half := len(keys) / 2
			for j := 0; j < half; j++ {
				newOnly[string(keys[j])] = string(keys[half+j]) == ">"
			}
			i = len(args)
		}
	}
	n, p, ok := lenLine(reply[1:])
	if !ok || n <= 0 || group == nil {
		return nil
	}
	var effs [][][]byte
	for range n {
		if reply[0] == '*' { // RESP2: [key, entries]; RESP3: key => entries
			if _, p, ok = lenLine(p[1:]); !ok {
				return effs
			}
		}
		key, ok := bulkReply(p)
		if !ok {
			return effs
		}
		key = bytes.Clone(key)
		if p, ok = skipRESP(p); !ok {
			return effs
		}
		ids := replyStreamIDs(p)
		if p, ok = skipRESP(p); !ok {
			return effs
		}
		gi, ok := c.KS.StreamGroup(c.DB, key, group)
		if !ok || len(ids) == 0 {
			continue
		}
		if noack {
			// No PEL entry to claim: the consumer (which Redis creates
			// and propagates here) and the group's last ID.
			er := []byte("0")
			if gi.EntriesRead >= 0 {
				er = strconv.AppendInt(nil, gi.EntriesRead, 10)
			}
			effs = append(effs, [][]byte{[]byte("XGROUP"), []byte("CREATECONSUMER"), key, group, consumer},
				[][]byte{[]byte("XGROUP"), []byte("SETID"), key, group, appendStreamID(nil, gi.LastID), []byte("ENTRIESREAD"), er})
			continue
		}
		for _, id := range ids {
			last := gi.LastID
			if newOnly[string(key)] {
				last = id // the group's last ID as it delivered this entry
			}
			effs = append(effs, c.xclaimOf(key, group, id, consumer, last))
		}
	}
	return effs
}

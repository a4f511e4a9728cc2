package commands

import (
	"bytes"
	"math"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Stream commands (semantics: redis.io and Redis 7.0's t_stream.c): XADD,
// XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XINFO STREAM, XREAD. The
// stream itself is keyspace's (keyspace/stream.go): every write here is one
// batch of stream operations, XADD's trimming included.

// Error replies, in Redis 7.0's words.
var (
	errStreamID          = replyError("ERR Invalid stream ID specified as stream command argument")
	errXAddTop           = replyError("ERR The ID specified in XADD is equal or smaller than the target stream top item")
	errXAddZero          = replyError("ERR The ID specified in XADD must be greater than 0-0")
	errStreamElemLarge   = replyError("ERR Elements are too large to be stored")
	errStreamExhausted   = replyError("ERR The stream has exhausted the last possible ID, unable to add more items")
	errMaxLenNegative    = replyError("ERR The MAXLEN argument must be >= 0.")
	errLimitNegative     = replyError("ERR The LIMIT argument must be >= 0.")
	errTrimBoth          = replyError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
	errLimitNoStrategy   = replyError("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
	errXTrimNoStrategy   = replyError("ERR syntax error, XTRIM must be called with a trimming strategy")
	errLimitNoApprox     = replyError("ERR syntax error, LIMIT cannot be used without the special ~ option")
	errStartInterval     = replyError("ERR invalid start ID for the interval")
	errEndInterval       = replyError("ERR invalid end ID for the interval")
	errXSetIDTop         = replyError("ERR The ID specified in XSETID is smaller than the target stream top item")
	errXSetIDAdded       = replyError("ERR The entries_added specified in XSETID is smaller than the target stream length")
	errXSetIDAddedNeg    = replyError("ERR entries_added must be positive")
	errXSetIDMaxDel      = replyError("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
	errXReadUnbalanced   = replyError("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
	errXReadGroupOpt     = replyError("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
	errXReadNoAckOpt     = replyError("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
	errXReadGT           = replyError("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
	errTimeoutNotInteger = replyError("ERR timeout is not an integer or out of range")
)

// streamDefaultTrimLimit is the LIMIT of a "~" trim given none: 100
// nodes' worth (100 × stream-node-max-entries), at least 10,000 when that
// is 0 and at most 1,000,000, as Redis 7.0 sets it.
func streamDefaultTrimLimit(maxEntries int64) int64 {
	n := 100 * maxEntries
	if maxEntries > 1<<40 {
		n = 1000000
	}
	if n <= 0 {
		n = 10000
	}
	return min(n, 1000000)
}

func streamCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast = FlagDenyOOM, FlagFast
	const g = "stream"
	ndo := []string{"nondeterministic_output"}
	return append(streamGroupCommands(), []Command{
		{Name: "xadd", Arity: -5, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Appends a new entry to a stream", Run: cmdXAdd, Tips: ndo,
			KeySpecs: []KeySpec{{Notes: "UPDATE instead of INSERT because of the optional trimming feature", Flags: KeyRW | KeyUpdate, Index: 1, KeyStep: 1}}},
		{Name: "xrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval", Run: cmdXRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "xrevrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", Run: cmdXRevRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "xlen", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Return the number of entries in a stream", Run: cmdXLen,
			KeySpecs: key1(KeyRO)},
		{Name: "xdel", Arity: -3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", Run: cmdXDel,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "xtrim", Arity: -4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Trims the stream to (approximately if '~' is passed) a certain size", Run: cmdXTrim, Tips: ndo,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "xsetid", Arity: -3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "An internal command for replicating stream values", Run: cmdXSetID,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "xread", Arity: -4, Flags: r | FlagBlocking | FlagMovableKeys, Group: g, Since: "5.0.0",
			Summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", Run: cmdXRead,
			KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Keyword: "STREAMS", StartFrom: 1, LastKey: -1, KeyStep: 1, Limit: 2}},
			GetKeys:  xreadGetKeys},
		{Name: "xinfo", Arity: -2, Group: g, Since: "5.0.0",
			Summary: "A container for stream introspection commands", Subcommands: []Command{
				{Name: "xinfo|stream", Arity: -3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "5.0.0",
					Summary: "Get information about a stream", Run: cmdXInfoStream,
					KeySpecs: []KeySpec{keyAt(KeyRO|KeyAccess, 2)}},
				xinfoGroupSubcommands()[0], xinfoGroupSubcommands()[1],
				{Name: "xinfo|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: g, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Run: cmdXInfoHelp, NoLock: true},
			}},
	}...)
}

// xreadGetKeys finds XREAD's keys: the first half of the arguments after
// STREAMS (Redis's xreadGetKeys). Unbalanced arguments name no key.
func xreadGetKeys(args [][]byte) []KeyRef {
	for i := 1; i < len(args); i++ {
		if argIs(args[i], "streams") {
			rest := len(args) - i - 1
			if rest == 0 || rest%2 != 0 {
				return nil
			}
			refs := make([]KeyRef, 0, rest/2)
			for k := i + 1; k <= i+rest/2; k++ {
				refs = append(refs, KeyRef{Pos: k, Flags: KeyRO | KeyAccess})
			}
			return refs
		}
	}
	return nil
}

// ---- IDs ----

// parseStreamUint parses one half of an ID as Redis's string2ull does:
// strictly as a long long if it can (a negative one is refused), else as
// C's strtoull (leading spaces, a sign, leading zeros; a '-' wraps).
func parseStreamUint(b []byte) (uint64, bool) {
	if v, ok := parseInt64(b); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseStreamID parses <ms>[-<seq>] (seq defaults to missingSeq) the way
// Redis 7.0's streamGenericParseIDOrReply does. strict refuses "-" and "+"
// (which otherwise mean 0-0 and the largest ID); autoSeq accepts <ms>-*
// (seqGiven is then false).
func parseStreamID(arg []byte, missingSeq uint64, strict, autoSeq bool) (id keyspace.StreamID, seqGiven bool, err error) {
	if i := bytes.IndexByte(arg, 0); i >= 0 {
		arg = arg[:i] // Redis copies the argument into a C string
	}
	if len(arg) > 127 {
		return id, false, errStreamID
	}
	if len(arg) == 1 && (arg[0] == '-' || arg[0] == '+') {
		if strict {
			return id, false, errStreamID
		}
		if arg[0] == '-' {
			return keyspace.StreamID{}, true, nil
		}
		return keyspace.MaxStreamID, true, nil
	}
	msPart, seqPart, dash := bytes.Cut(arg, []byte("-"))
	ms, ok := parseStreamUint(msPart)
	if !ok {
		return id, false, errStreamID
	}
	seq := missingSeq
	seqGiven = true
	if dash {
		if autoSeq && len(seqPart) == 1 && seqPart[0] == '*' {
			seq, seqGiven = 0, false
		} else if seq, ok = parseStreamUint(seqPart); !ok {
			return id, false, errStreamID
		}
	}
	return keyspace.StreamID{Ms: ms, Seq: seq}, seqGiven, nil
}

// parseStrictID is streamParseStrictIDOrReply with a missing seq of 0.
func parseStrictID(arg []byte) (keyspace.StreamID, error) {
	id, _, err := parseStreamID(arg, 0, true, false)
	return id, err
}

// parseIntervalID parses an XRANGE bound: "-", "+", an ID, or "(" and a
// strict ID for an exclusive bound.
func parseIntervalID(arg []byte, missingSeq uint64) (id keyspace.StreamID, exclusive bool, err error) {
	if len(arg) > 1 && arg[0] == '(' {
		id, _, err = parseStreamID(arg[1:], missingSeq, true, false)
		return id, true, err
	}
	id, _, err = parseStreamID(arg, missingSeq, false, false)
	return id, false, err
}

// ---- replies ----

// writeStreamEntry appends [id, [field, value, ...]].
func writeStreamEntry(c *Client, id keyspace.StreamID, fields [][]byte) {
	c.WriteArray(2)
	writeStreamID(c, id)
	c.WriteArray(len(fields))
	for _, f := range fields {
		c.WriteBulk(f)
	}
}

func writeStreamID(c *Client, id keyspace.StreamID) {
	var buf [48]byte
	c.WriteBulk(id.Append(buf[:0]))
}

// writeStreamRange appends the entries of [start, end] (reversed with rev),
// at most count (< 0: all), as an array.
func writeStreamRange(c *Client, key []byte, start, end keyspace.StreamID, count int, rev bool) {
	mark := len(c.Out)
	c.WriteArray(0) // patched below
	hdr := len(c.Out)
	n := 0
	c.KS.XRange(c.DB, key, start, end, count, rev, func(id keyspace.StreamID, fields [][]byte) {
		writeStreamEntry(c, id, fields)
		n++
	})
	if n == 0 {
		return
	}
	body := append([]byte(nil), c.Out[hdr:]...)
	c.Out = c.Out[:mark]
	c.WriteArray(n)
	c.Out = append(c.Out, body...)
}

// lookupStream returns the stream's state; ok false after replying
// WRONGTYPE.
func lookupStream(c *Client, key []byte) (m keyspace.StreamMeta, exists, ok bool) {
	m, exists, err := c.KS.Stream(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return m, false, false
	}
	return m, exists, true
}

// ---- trimming arguments ----

// streamAddTrimArgs are XADD's and XTRIM's options (streamAddTrimArgs in
// Redis).
type streamAddTrimArgs struct {
	id         keyspace.StreamID
	idGiven    bool // not "*"
	seqGiven   bool // not <ms>-*
	noMkStream bool
	strategy   int // 0 none, 1 MAXLEN, 2 MINID
	trim       keyspace.StreamTrim
}

// parseAddTrimArgs parses from args[2] the way Redis's
// streamParseAddOrTrimArgsOrReply does; for XADD it stops at the ID and
// returns its position.
func parseAddTrimArgs(c *Client, args [][]byte, xadd bool) (a streamAddTrimArgs, idPos int, err error) {
	limitGiven := false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			return a, i, a.finish(c, limitGiven, xadd)
		case argIs(opt, "maxlen") && more > 0, argIs(opt, "minid") && more > 0:
			if a.strategy != 0 {
				return a, 0, errTrimBoth
			}
			a.trim.Approx = false
			if next := args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.trim.Approx = next[0] == '~'
				i++
			}
			if argIs(opt, "maxlen") {
				n, err := argInt64(args[i+1])
				if err != nil {
					return a, 0, err
				}
				if n < 0 {
					return a, 0, errMaxLenNegative
				}
				a.strategy, a.trim.MaxLen = 1, n
			} else {
				id, err := parseStrictID(args[i+1])
				if err != nil {
					return a, 0, err
				}
				a.strategy, a.trim.ByMinID, a.trim.MinID = 2, true, id
			}
			i++
		case argIs(opt, "limit") && more > 0:
			n, err := argInt64(args[i+1])
			if err != nil {
				return a, 0, err
			}
			if n < 0 {
				return a, 0, errLimitNegative
			}
			a.trim.Limit, limitGiven = n, true
			i++
		case xadd && argIs(opt, "nomkstream"):
			a.noMkStream = true
		case xadd:
			id, seqGiven, err := parseStreamID(opt, 0, true, true)
			if err != nil {
				return a, 0, err
			}
			a.id, a.idGiven, a.seqGiven = id, true, seqGiven
			return a, i, a.finish(c, limitGiven, xadd)
		default:
			return a, 0, errSyntax
		}
	}
	return a, i, a.finish(c, limitGiven, xadd)
}

func (a *streamAddTrimArgs) finish(c *Client, limitGiven, xadd bool) error {
	if a.trim.Limit != 0 && a.strategy == 0 {
		return errLimitNoStrategy
	}
	if !xadd && a.strategy == 0 {
		return errXTrimNoStrategy
	}
	switch {
	case limitGiven && !a.trim.Approx:
		return errLimitNoApprox
	case !limitGiven && a.trim.Approx:
		a.trim.Limit = streamDefaultTrimLimit(c.StreamNodeLimits().MaxEntries)
	case !a.trim.Approx:
		a.trim.Limit = 0
	}
	return nil
}

// ---- commands ----

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
func cmdXAdd(c *Client, args [][]byte) {
	a, idPos, err := parseAddTrimArgs(c, args, true)
	if err != nil {
		c.WriteErr(err)
		return
	}
	fieldPos := idPos + 1
	if n := len(args) - fieldPos; n < 2 || n%2 == 1 {
		c.WriteError(WrongArgs("xadd"))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.WriteErr(errXAddZero)
		return
	}
	key := args[1]
	fields := args[fieldPos:]
	m, exists, open, err := c.KS.StreamForAdd(c.DB, key, fields, c.StreamNodeLimits())
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !exists && a.noMkStream {
		c.WriteNull()
		return
	}
	if m.LastID == keyspace.MaxStreamID {
		c.WriteErr(errStreamExhausted)
		return
	}
	id, err := nextStreamID(c, m.LastID, a)
	if err != nil {
		c.WriteErr(err)
		return
	}
	b := c.KS.NewBatch()
	b.XAddNode(c.DB, key, id, fields, open, id, 0)
	trimmed := false
	if a.strategy != 0 {
		a.trim.AddOpensNode = open
		if keep, all, n := c.KS.StreamTrimPlan(c.DB, key, true, id, a.trim); n > 0 {
			b.XTrim(c.DB, key, keep, all)
			trimmed = true
		}
	}
	mark := len(c.Out)
	if commitReply(c, b, mark) {
		writeStreamID(c, id)
		SignalStreamReaders(c.KS, c.DB, key)
		c.Notify(notifyStream, "xadd", key)
		if trimmed {
			c.Notify(notifyStream, "xtrim", key)
		}
	}
}

// nextStreamID is the ID XADD gives the entry (streamAppendItem's rules).
func nextStreamID(c *Client, last keyspace.StreamID, a streamAddTrimArgs) (keyspace.StreamID, error) {
	switch {
	case !a.idGiven: // "*"
		ms := uint64(max(c.KS.NowMs(), 0))
		if ms > last.Ms {
			return keyspace.StreamID{Ms: ms}, nil
		}
		id, _ := last.Next() // last is not the largest ID: checked
		return id, nil
	case !a.seqGiven: // <ms>-*
		if a.id.Ms == last.Ms {
			if last.Seq == math.MaxUint64 {
				return a.id, errStreamElemLarge // Redis: ERANGE from streamAppendItem
			}
			return keyspace.StreamID{Ms: last.Ms, Seq: last.Seq + 1}, nil
		}
		if a.id.Ms < last.Ms {
			return a.id, errXAddTop
		}
		return keyspace.StreamID{Ms: a.id.Ms}, nil
	}
	if !last.Less(a.id) {
		return a.id, errXAddTop
	}
	return a.id, nil
}

// XRANGE key start end [COUNT count]
func cmdXRange(c *Client, args [][]byte) { xrangeGeneric(c, args, false) }

// XREVRANGE key end start [COUNT count]
func cmdXRevRange(c *Client, args [][]byte) { xrangeGeneric(c, args, true) }

func xrangeGeneric(c *Client, args [][]byte, rev bool) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ex, err := parseIntervalID(startArg, 0)
	if err == nil && ex {
		var ok bool
		if start, ok = start.Next(); !ok {
			err = errStartInterval
		}
	}
	if err != nil {
		c.WriteErr(err)
		return
	}
	end, ex, err := parseIntervalID(endArg, math.MaxUint64)
	if err == nil && ex {
		var ok bool
		if end, ok = end.Prev(); !ok {
			err = errEndInterval
		}
	}
	if err != nil {
		c.WriteErr(err)
		return
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if !argIs(args[j], "count") || j+1 >= len(args) {
			c.WriteErr(errSyntax)
			return
		}
		if count, err = argInt64(args[j+1]); err != nil {
			c.WriteErr(err)
			return
		}
		count = max(count, 0)
		j++
	}
	_, exists, ok := lookupStream(c, args[1])
	switch {
	case !ok:
		return
	case !exists:
		c.WriteArray(0)
		return
	case count == 0:
		c.WriteNullArray()
		return
	}
	writeStreamRange(c, args[1], start, end, int(min(count, math.MaxInt32)), rev)
}

// XLEN key
func cmdXLen(c *Client, args [][]byte) {
	if m, _, ok := lookupStream(c, args[1]); ok {
		c.WriteInt(int64(m.Length))
	}
}

// XDEL key id [id ...]
func cmdXDel(c *Client, args [][]byte) {
	// Redis 7.0's order: a missing key answers 0 and a wrong type
	// WRONGTYPE before any ID is parsed.
	key := args[1]
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists {
		c.WriteInt(0)
		return
	}
	ids, ok := parseStrictIDs(c, args[2:])
	if !ok {
		return
	}
	var del []keyspace.StreamID
	for _, id := range ids {
		if c.KS.StreamHas(c.DB, key, id) && !containsID(del, id) {
			del = append(del, id)
		}
	}
	if len(del) == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.XDel(c.DB, key, del)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(del)))
		c.Notify(notifyStream, "xdel", key)
	}
}

func containsID(ids []keyspace.StreamID, id keyspace.StreamID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
func cmdXTrim(c *Client, args [][]byte) {
	a, i, err := parseAddTrimArgs(c, args, false)
	if err == nil && i < len(args) {
		err = errSyntax
	}
	if err != nil {
		c.WriteErr(err)
		return
	}
	key := args[1]
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists {
		c.WriteInt(0)
		return
	}
	keep, all, n := c.KS.StreamTrimPlan(c.DB, key, false, keyspace.StreamID{}, a.trim)
	if n == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.XTrim(c.DB, key, keep, all)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(n)
		c.Notify(notifyStream, "xtrim", key)
	}
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
func cmdXSetID(c *Client, args [][]byte) {
	id, err := parseStrictID(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	added := int64(-1)
	var maxDel keyspace.StreamID
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case argIs(args[i], "entriesadded") && more > 0:
			if added, err = argInt64(args[i+1]); err != nil {
				c.WriteErr(err)
				return
			}
			if added < 0 {
				c.WriteErr(errXSetIDAddedNeg)
				return
			}
		case argIs(args[i], "maxdeletedid") && more > 0:
			if maxDel, err = parseStrictID(args[i+1]); err != nil {
				c.WriteErr(err)
				return
			}
			if id.Less(maxDel) {
				c.WriteErr(errXSetIDMaxDel)
				return
			}
		default:
			c.WriteErr(errSyntax)
			return
		}
	}
	key := args[1]
	m, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists {
		c.WriteError(ErrNoSuchKey)
		return
	}
	if m.Length > 0 {
		if top, _ := streamTop(c, key); id.Less(top) {
			c.WriteErr(errXSetIDTop)
			return
		}
		if added != -1 && int64(m.Length) > added {
			c.WriteErr(errXSetIDAdded)
			return
		}
	}
	m.LastID = id
	if added != -1 {
		m.EntriesAdded = uint64(added)
	}
	if !maxDel.IsZero() {
		m.MaxDeletedID = maxDel
	}
	b := c.KS.NewBatch()
	b.XSetID(c.DB, key, m)
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
		c.Notify(notifyStream, "xsetid", key)
	}
}

// XINFO STREAM key [FULL [COUNT count]]
func cmdXInfoStream(c *Client, args [][]byte) {
	// Redis 7.0 looks the key up (no such key, WRONGTYPE) before it parses
	// FULL and COUNT.
	key := args[2]
	m, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists {
		c.WriteError(ErrNoSuchKey)
		return
	}
	full := false
	count := int64(10)
	if len(args) > 3 {
		if (len(args) != 4 && len(args) != 6) || !argIs(args[3], "full") || (len(args) == 6 && !argIs(args[4], "count")) {
			c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try XINFO HELP.")
			return
		}
		full = true
		if len(args) == 6 {
			n, err := argInt64(args[5])
			if err != nil {
				c.WriteErr(err)
				return
			}
			if count = n; n < 0 {
				count = 10
			}
		}
	}
	if full {
		c.WriteMap(9)
	} else {
		c.WriteMap(10)
	}
	c.WriteBulkString("length")
	c.WriteInt(int64(m.Length))
	rkeys, rnodes := c.KS.StreamRadix(c.DB, key)
	c.WriteBulkString("radix-tree-keys")
	c.WriteInt(int64(rkeys))
	c.WriteBulkString("radix-tree-nodes")
	c.WriteInt(int64(rnodes))
	c.WriteBulkString("last-generated-id")
	writeStreamID(c, m.LastID)
	c.WriteBulkString("max-deleted-entry-id")
	writeStreamID(c, m.MaxDeletedID)
	c.WriteBulkString("entries-added")
	c.WriteInt(int64(m.EntriesAdded))
	c.WriteBulkString("recorded-first-entry-id")
	writeStreamID(c, m.FirstID)
	if full {
		c.WriteBulkString("entries")
		n := -1
		if count > 0 {
			n = int(min(count, math.MaxInt32))
		}
		writeStreamRange(c, key, keyspace.StreamID{}, keyspace.MaxStreamID, n, false)
		c.WriteBulkString("groups")
		writeFullGroups(c, key, count)
		return
	}
	c.WriteBulkString("groups")
	c.WriteInt(int64(m.Groups))
	edge := func(rev bool) {
		found := false
		c.KS.XRange(c.DB, key, keyspace.StreamID{}, keyspace.MaxStreamID, 1, rev, func(id keyspace.StreamID, fields [][]byte) {
			writeStreamEntry(c, id, fields)
			found = true
		})
		if !found {
			c.WriteNull()
		}
	}
	c.WriteBulkString("first-entry")
	edge(false)
	c.WriteBulkString("last-entry")
	edge(true)
}

// XINFO HELP
func cmdXInfoHelp(c *Client, _ [][]byte) {
	lines := []string{
		"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
		"HELP",
		"    Prints this help.",
	}
	c.WriteArray(len(lines))
	for _, l := range lines {
		c.WriteString(l)
	}
}

// ---- XREAD ----

// parseStrictIDs parses every argument as a full stream ID (XDEL, XACK);
// at the first bad one it writes the error and reports false.
func parseStrictIDs(c *Client, args [][]byte) ([]keyspace.StreamID, bool) {
	ids := make([]keyspace.StreamID, 0, len(args))
	for _, a := range args {
		id, err := parseStrictID(a)
		if err != nil {
			c.WriteErr(err)
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// xreadOptions are the options of XREAD and XREADGROUP, up to STREAMS.
type xreadOptions struct {
	count      int64         // COUNT; 0: no limit
	timeout    time.Duration // BLOCK; -1: do not block
	streamsArg int           // index of the first key after STREAMS
	// XREADGROUP only
	group, consumer []byte
	noack           bool
}

// parseXReadOptions parses the options of XREAD (group false) or
// XREADGROUP (group true) as Redis 7.0's xreadCommand does, one parser for
// both: BLOCK, COUNT, STREAMS (the rest must be keys and IDs in equal
// numbers), and GROUP and NOACK, which XREAD refuses. On a bad option it
// writes the error and reports false.
func parseXReadOptions(c *Client, args [][]byte, group bool) (o xreadOptions, ok bool) {
	o.timeout = -1
	for i := 1; i < len(args) && o.streamsArg == 0; i++ {
		more := len(args) - i - 1
		switch {
		case argIs(args[i], "block") && more > 0:
			if c.InScript() {
				// Redis refuses BLOCK in a script outright (a script
				// cannot block), before it reads the timeout.
				c.WriteError("ERR " + string(args[0]) + " command is not allowed with BLOCK option from scripts")
				return o, false
			}
			i++
			ms, ok := parseInt64(args[i])
			if !ok {
				c.WriteErr(errTimeoutNotInteger)
				return o, false
			}
			if ms < 0 {
				c.WriteErr(errTimeoutNegative)
				return o, false
			}
			o.timeout = time.Duration(min(ms, int64(maxBlockTimeout/time.Millisecond))) * time.Millisecond
		case argIs(args[i], "count") && more > 0:
			i++
			n, err := argInt64(args[i])
			if err != nil {
				c.WriteErr(err)
				return o, false
			}
			o.count = max(n, 0)
		case argIs(args[i], "streams") && more > 0:
			o.streamsArg = i + 1
			if (len(args)-o.streamsArg)%2 != 0 {
				c.WriteErr(errXReadUnbalanced) // Redis 7.0 words it so for XREADGROUP too
				return o, false
			}
		case argIs(args[i], "group") && more >= 2:
			if !group {
				c.WriteErr(errXReadGroupOpt)
				return o, false
			}
			o.group, o.consumer = args[i+1], args[i+2]
			i += 2
		case argIs(args[i], "noack"):
			if !group {
				c.WriteErr(errXReadNoAckOpt)
				return o, false
			}
			o.noack = true
		default:
			c.WriteErr(errSyntax)
			return o, false
		}
	}
	if o.streamsArg == 0 {
		c.WriteErr(errSyntax)
		return o, false
	}
	if group && o.group == nil {
		c.WriteErr(errXReadGroupMissing)
		return o, false
	}
	return o, true
}

// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
//
// Blocking: when no stream can serve it, the command blocks on its keys
// (blockOn). Before it does, each "$" argument is replaced by the ID it
// stood for (the stream's last ID at the first run): the re-run after a
// wake-up reads the same arguments and so the entries added since. A
// re-run serves only the first stream that has entries (in the order the
// keys were signalled), as Redis replies with the stream that woke it.
func cmdXRead(c *Client, args [][]byte) {
	o, ok := parseXReadOptions(c, args, false)
	if !ok {
		return
	}
	count, timeout, streamsArg := o.count, o.timeout, o.streamsArg
	n := (len(args) - streamsArg) / 2
	keys := args[streamsArg : streamsArg+n]
	ids := make([]keyspace.StreamID, n)
	rerun := c.Rerun()
	for i := range n {
		arg := args[streamsArg+n+i]
		var m keyspace.StreamMeta
		var exists bool
		if rerun {
			// A key that became another type while the reader waited
			// does not answer WRONGTYPE: Redis 7.0 keeps the reader
			// blocked until a stream there has new entries.
			m, exists, _ = c.KS.Stream(c.DB, keys[i])
		} else if m, exists, ok = lookupStream(c, keys[i]); !ok {
			return
		}
		switch {
		case len(arg) == 1 && arg[0] == '$':
			if exists {
				ids[i] = m.LastID
			}
			continue
		case len(arg) == 1 && arg[0] == '>':
			c.WriteErr(errXReadGT)
			return
		}
		id, err := parseStrictID(arg)
		if err != nil {
			c.WriteErr(err)
			return
		}
		ids[i] = id
	}
	order := make([]int, 0, n)
	if rerun {
		for _, k := range c.ServingOrder(keys) {
			for i := range keys {
				if string(k) == string(keys[i]) && !containsInt(order, i) {
					order = append(order, i)
					break
				}
			}
		}
	} else {
		for i := range n {
			order = append(order, i)
		}
	}
	served := 0
	mark := len(c.Out)
	c.WriteArray(0) // patched below
	hdr := len(c.Out)
	for _, i := range order {
		start, ok := ids[i].Next()
		if !ok {
			continue
		}
		// Served if the stream's last entry is above the ID.
		top, has := streamTop(c, keys[i])
		if !has || !ids[i].Less(top) {
			continue
		}
		c.WriteArrayMapEntry()
		c.WriteBulk(keys[i])
		lim := -1
		if count > 0 {
			lim = int(min(count, math.MaxInt32))
		}
		writeStreamRange(c, keys[i], start, keyspace.MaxStreamID, lim, false)
		served++
		if rerun {
			break
		}
	}
	if served > 0 {
		body := append([]byte(nil), c.Out[hdr:]...)
		c.Out = c.Out[:mark]
		c.WriteArrayMap(served) // a map of stream name to entries in RESP3
		c.Out = append(c.Out, body...)
		return
	}
	c.Out = c.Out[:mark]
	if timeout < 0 {
		c.WriteNullArray()
		return
	}
	if rerun {
		c.PassTurn(keys)
	}
	// Pin "$" to the ID it resolved to, for the re-runs (see above).
	for i := range n {
		if a := args[streamsArg+n+i]; len(a) == 1 && a[0] == '$' {
			args[streamsArg+n+i] = ids[i].Append(nil)
		}
	}
	if !c.BlockOn(keys, timeout) {
		c.WriteNullArray()
	}
}

// streamTop returns the ID of the stream's last entry (Redis's
// streamLastValidID); has is false for an empty or missing stream.
func streamTop(c *Client, key []byte) (top keyspace.StreamID, has bool) {
	c.KS.XRange(c.DB, key, keyspace.StreamID{}, keyspace.MaxStreamID, 1, true, func(id keyspace.StreamID, _ [][]byte) { top, has = id, true })
	return top, has
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ---- consumer groups ----

var (
	errXGroupNoKey       = replyError("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
	errBusyGroup         = replyError("BUSYGROUP Consumer Group name already exists")
	errEntriesReadRange  = replyError("ERR value for ENTRIESREAD must be positive or -1")
	errXReadGroupDollar  = replyError("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
	errXReadGroupMissing = replyError("ERR Missing GROUP option for XREADGROUP")
	errAutoClaimCount    = replyError("ERR COUNT must be > 0")
)

func errNoGroupForKey(group, key []byte) error {
	return replyError("NOGROUP No such consumer group '" + string(cString(group)) + "' for key name '" + string(cString(key)) + "'")
}

func errNoKeyOrGroup(key, group []byte) error {
	return replyError("NOGROUP No such key '" + string(cString(key)) + "' or consumer group '" + string(cString(group)) + "'")
}

func streamGroupCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast = FlagDenyOOM, FlagFast
	const g = "stream"
	ndo := []string{"nondeterministic_output"}
	at2 := func(flags int) []KeySpec { return []KeySpec{keyAt(flags, 2)} }
	return []Command{
		{Name: "xgroup", Arity: -2, Group: g, Since: "5.0.0",
			Summary: "A container for consumer groups commands", Subcommands: []Command{
				{Name: "xgroup|create", Arity: -5, Flags: w | dm, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "5.0.0",
					Summary: "Create a consumer group.", Run: cmdXGroupCreate, KeySpecs: at2(KeyRW | KeyInsert)},
				{Name: "xgroup|setid", Arity: -5, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "5.0.0",
					Summary: "Set a consumer group to an arbitrary last delivered ID value.", Run: cmdXGroupSetID, KeySpecs: at2(KeyRW | KeyUpdate)},
				{Name: "xgroup|destroy", Arity: 4, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "5.0.0",
					Summary: "Destroy a consumer group.", Run: cmdXGroupDestroy, KeySpecs: at2(KeyRW | KeyDelete)},
				{Name: "xgroup|createconsumer", Arity: 5, Flags: w | dm, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "6.2.0",
					Summary: "Create a consumer in a consumer group.", Run: cmdXGroupCreateConsumer, KeySpecs: at2(KeyRW | KeyInsert)},
				{Name: "xgroup|delconsumer", Arity: 5, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "5.0.0",
					Summary: "Delete a consumer from a consumer group.", Run: cmdXGroupDelConsumer, KeySpecs: at2(KeyRW | KeyDelete)},
				{Name: "xgroup|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: g, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands", Run: cmdXGroupHelp, NoLock: true},
			}},
		{Name: "xreadgroup", Arity: -7, Flags: w | FlagBlocking | FlagMovableKeys, Group: g, Since: "5.0.0",
			Summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", Run: cmdXReadGroup,
			KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Keyword: "STREAMS", StartFrom: 4, LastKey: -1, KeyStep: 1, Limit: 2}},
			GetKeys:  xreadGetKeys},
		{Name: "xack", Arity: -4, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", Run: cmdXAck,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "xpending", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", Run: cmdXPending, Tips: ndo,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "xclaim", Arity: -6, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", Run: cmdXClaim, Tips: ndo,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "xautoclaim", Arity: -6, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "6.2.0",
			Summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", Run: cmdXAutoClaim, Tips: ndo,
			KeySpecs: key1(KeyRW | KeyDelete)},
	}
}

// xinfoGroupSubcommands are XINFO GROUPS and XINFO CONSUMERS.
func xinfoGroupSubcommands() []Command {
	const g = "stream"
	return []Command{
		{Name: "xinfo|groups", Arity: 3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "5.0.0",
			Summary: "List the consumer groups of a stream", Run: cmdXInfoGroups,
			KeySpecs: []KeySpec{keyAt(KeyRO|KeyAccess, 2)}},
		{Name: "xinfo|consumers", Arity: 4, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "5.0.0",
			Summary: "List the consumers in a consumer group", Run: cmdXInfoConsumers, Tips: []string{"nondeterministic_output"},
			KeySpecs: []KeySpec{keyAt(KeyRO|KeyAccess, 2)}},
	}
}

// parseEntriesRead parses ENTRIESREAD's value.
func parseEntriesRead(b []byte) (int64, error) {
	n, err := argInt64(b)
	if err != nil {
		return 0, err
	}
	if n < 0 && n != -1 {
		return 0, errEntriesReadRange
	}
	return n, nil
}

func xgroupSyntax(c *Client, args [][]byte) {
	c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try XGROUP HELP.")
}

// xgroupLookup finds the stream and, with needGroup, the group of an
// XGROUP subcommand (args[2] key, args[3] group), replying Redis's errors.
func xgroupLookup(c *Client, args [][]byte, needGroup bool) (m keyspace.StreamMeta, gi keyspace.StreamGroupInfo, hasGroup, ok bool) {
	m, exists, ok := lookupStream(c, args[2])
	if !ok {
		return m, gi, false, false
	}
	if !exists {
		c.WriteErr(errXGroupNoKey)
		return m, gi, false, false
	}
	gi, hasGroup = c.KS.StreamGroup(c.DB, args[2], args[3])
	if needGroup && !hasGroup {
		c.WriteErr(errNoGroupForKey(args[3], args[2]))
		return m, gi, false, false
	}
	return m, gi, hasGroup, true
}

// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD entries-read]
func cmdXGroupCreate(c *Client, args [][]byte) {
	mkstream := false
	entriesRead := int64(-1)
	for i := 5; i < len(args); {
		switch {
		case argIs(args[i], "mkstream"):
			mkstream = true
			i++
		case argIs(args[i], "entriesread") && i+1 < len(args):
			n, err := parseEntriesRead(args[i+1])
			if err != nil {
				c.WriteErr(err)
				return
			}
			entriesRead = n
			i += 2
		default:
			xgroupSyntax(c, args)
			return
		}
	}
	// Redis 7.0 checks the argument count after the key's type and
	// existence: WRONGTYPE first.
	key := args[2]
	m, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists && !mkstream {
		c.WriteErr(errXGroupNoKey)
		return
	}
	if len(args) > 8 {
		xgroupSyntax(c, args)
		return
	}
	var id keyspace.StreamID
	if a := args[4]; len(a) == 1 && a[0] == '$' {
		id = m.LastID
	} else {
		var err error
		if id, err = parseStrictID(a); err != nil {
			c.WriteErr(err)
			return
		}
	}
	if _, has := c.KS.StreamGroup(c.DB, key, args[3]); has {
		c.WriteErr(errBusyGroup)
		return
	}
	b := c.KS.NewBatch()
	if !exists {
		b.XSetID(c.DB, key, keyspace.StreamMeta{})
	}
	b.XGroupCreate(c.DB, key, string(args[3]), id, entriesRead)
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
		c.Notify(notifyStream, "xgroup-create", key)
	}
}

// XGROUP SETID key group id|$ [ENTRIESREAD entries-read]
func cmdXGroupSetID(c *Client, args [][]byte) {
	entriesRead := int64(-1)
	for i := 5; i < len(args); {
		if argIs(args[i], "entriesread") && i+1 < len(args) {
			n, err := parseEntriesRead(args[i+1])
			if err != nil {
				c.WriteErr(err)
				return
			}
			entriesRead = n
			i += 2
			continue
		}
		xgroupSyntax(c, args)
		return
	}
	m, _, _, ok := xgroupLookup(c, args, true)
	if !ok {
		return
	}
	if len(args) != 5 && len(args) != 7 {
		xgroupSyntax(c, args)
		return
	}
	var id keyspace.StreamID
	if a := args[4]; len(a) == 1 && a[0] == '$' {
		id = m.LastID
	} else {
		var err error
		if id, _, err = parseStreamID(a, 0, false, false); err != nil {
			c.WriteErr(err)
			return
		}
	}
	b := c.KS.NewBatch()
	b.XGroupSetID(c.DB, args[2], string(args[3]), id, entriesRead)
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
		c.Notify(notifyStream, "xgroup-setid", args[2])
	}
}

// XGROUP DESTROY key group
func cmdXGroupDestroy(c *Client, args [][]byte) {
	_, _, has, ok := xgroupLookup(c, args, false)
	if !ok {
		return
	}
	if !has {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.XGroupDestroy(c.DB, args[2], string(args[3]))
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		c.Notify(notifyStream, "xgroup-destroy", args[2])
	}
}

// XGROUP CREATECONSUMER key group consumer
func cmdXGroupCreateConsumer(c *Client, args [][]byte) {
	if _, _, _, ok := xgroupLookup(c, args, true); !ok {
		return
	}
	if _, exists := c.KS.StreamConsumer(c.DB, args[2], args[3], args[4]); exists {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.XConsumerCreate(c.DB, args[2], string(args[3]), string(args[4]), c.KS.NowMs())
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		c.Notify(notifyStream, "xgroup-createconsumer", args[2])
	}
}

// XGROUP DELCONSUMER key group consumer
func cmdXGroupDelConsumer(c *Client, args [][]byte) {
	if _, _, _, ok := xgroupLookup(c, args, true); !ok {
		return
	}
	ci, exists := c.KS.StreamConsumer(c.DB, args[2], args[3], args[4])
	if !exists {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.XConsumerDel(c.DB, args[2], string(args[3]), string(args[4]))
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(ci.Pending))
		c.Notify(notifyStream, "xgroup-delconsumer", args[2])
	}
}

// XGROUP HELP
func cmdXGroupHelp(c *Client, _ [][]byte) {
	lines := []string{
		"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.",
		"HELP",
		"    Prints this help.",
	}
	c.WriteArray(len(lines))
	for _, l := range lines {
		c.WriteString(l)
	}
}

// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]
//
// ">" reads entries never delivered to the group; another ID reads the
// consumer's own pending entries above it. Everything one call changes
// (the group's last-delivered ID and entries-read, the pending entries,
// the consumer's seen-time) is one batch. Blocking works as for XREAD
// (">" is re-evaluated on each re-run).
func cmdXReadGroup(c *Client, args [][]byte) {
	o, ok := parseXReadOptions(c, args, true)
	if !ok {
		return
	}
	count, timeout, streamsArg := o.count, o.timeout, o.streamsArg
	group, consumer, noack := o.group, o.consumer, o.noack
	n := (len(args) - streamsArg) / 2
	keys := args[streamsArg : streamsArg+n]
	ids := make([]keyspace.StreamID, n)
	fresh := make([]bool, n) // ">"
	rerun := c.Rerun()
	for i := range n {
		if rerun { // woken: the stream or the group may have gone
			if t := c.KS.Type(c.DB, keys[i]); t != keyspace.TypeStream {
				c.WriteError("UNBLOCKED the stream key no longer exists")
				return
			}
			if _, has := c.KS.StreamGroup(c.DB, keys[i], group); !has {
				c.WriteError("NOGROUP the consumer group this client was blocked on no longer exists")
				return
			}
		}
		_, exists, ok := lookupStream(c, keys[i])
		if !ok {
			return
		}
		if _, has := c.KS.StreamGroup(c.DB, keys[i], group); !exists || !has {
			c.WriteError("NOGROUP No such key '" + string(cString(keys[i])) + "' or consumer group '" + string(cString(group)) + "' in XREADGROUP with GROUP option")
			return
		}
		arg := args[streamsArg+n+i]
		switch {
		case len(arg) == 1 && arg[0] == '$':
			c.WriteErr(errXReadGroupDollar)
			return
		case len(arg) == 1 && arg[0] == '>':
			fresh[i] = true
			continue
		}
		id, err := parseStrictID(arg)
		if err != nil {
			c.WriteErr(err)
			return
		}
		ids[i] = id
	}
	now := c.KS.NowMs()
	lim := -1
	if count > 0 {
		lim = int(min(count, math.MaxInt32))
	}
	b := c.KS.NewBatch()
	served := 0
	var created [][]byte // streams whose group gets the consumer now (notifications)
	mark := len(c.Out)
	c.WriteArray(0) // patched below
	hdr := len(c.Out)
	for i := range n {
		key := keys[i]
		gi, _ := c.KS.StreamGroup(c.DB, key, group)
		if fresh[i] {
			top, has := streamTop(c, key)
			if !has || !gi.LastID.Less(top) || c.YieldsToGroupReader(key) {
				continue
			}
			start, _ := gi.LastID.Next()
			var delivered []keyspace.StreamID
			var sets []keyspace.PendingSet
			c.WriteArrayMapEntry()
			c.WriteBulk(key)
			emark := len(c.Out)
			c.WriteArray(0)
			ehdr := len(c.Out)
			c.KS.XRange(c.DB, key, start, keyspace.MaxStreamID, lim, false, func(id keyspace.StreamID, fields [][]byte) {
				writeStreamEntry(c, id, fields)
				delivered = append(delivered, id)
				if !noack {
					sets = append(sets, keyspace.PendingSet{ID: id, DeliveryTime: now, DeliveryCount: 1})
				}
			})
			patchArray(c, emark, ehdr, len(delivered))
			er := c.KS.StreamReadCounter(c.DB, key, group, delivered)
			b.XGroupSetID(c.DB, key, string(group), delivered[len(delivered)-1], er)
			created = appendNewConsumer(c, created, key, group, consumer)
			b.XPelSet(c.DB, key, string(group), string(consumer), now, sets)
			served++
			continue
		}
		// History: the consumer's pending entries above the ID.
		start, ok := ids[i].Next()
		c.WriteArrayMapEntry()
		c.WriteBulk(key)
		emark := len(c.Out)
		c.WriteArray(0)
		ehdr := len(c.Out)
		k := 0
		var sets []keyspace.PendingSet
		if ok {
			c.KS.StreamPEL(c.DB, key, group, consumer, start, keyspace.MaxStreamID, func(p keyspace.StreamPending) bool {
				if lim >= 0 && k >= lim {
					return false
				}
				k++
				found := false
				c.KS.XRange(c.DB, key, p.ID, p.ID, 1, false, func(id keyspace.StreamID, fields [][]byte) {
					writeStreamEntry(c, id, fields)
					found = true
				})
				if !found {
					c.WriteArray(2)
					writeStreamID(c, p.ID)
					c.WriteNullArray()
					return true
				}
				sets = append(sets, keyspace.PendingSet{ID: p.ID, DeliveryTime: now, DeliveryCount: p.DeliveryCount + 1})
				return true
			})
		}
		patchArray(c, emark, ehdr, k)
		created = appendNewConsumer(c, created, key, group, consumer)
		b.XPelSet(c.DB, key, string(group), string(consumer), now, sets)
		served++
	}
	if served > 0 {
		body := append([]byte(nil), c.Out[hdr:]...)
		c.Out = c.Out[:mark]
		c.WriteArrayMap(served) // a map of stream name to entries in RESP3
		c.Out = append(c.Out, body...)
		if !commitReply(c, b, mark) {
			return
		}
		notifyEach(c, notifyStream, "xgroup-createconsumer", created, 1)
		return
	}
	c.Out = c.Out[:mark]
	if timeout < 0 {
		c.WriteNullArray()
		return
	}
	if rerun {
		c.PassTurn(keys)
	}
	if !c.BlockOn(keys, timeout) {
		c.WriteNullArray()
		return
	}
	c.MarkGroupRead()
}

// patchArray rewrites the array header written at mark (ending at hdr) to
// n elements.
func patchArray(c *Client, mark, hdr, n int) {
	if n == 0 {
		return
	}
	body := append([]byte(nil), c.Out[hdr:]...)
	c.Out = c.Out[:mark]
	c.WriteArray(n)
	c.Out = append(c.Out, body...)
}

// XACK key group id [id ...]
func cmdXAck(c *Client, args [][]byte) {
	// Redis 7.0's order: key lookup and type check, then the group (a
	// missing key or group answers 0 before any ID is parsed), then the IDs.
	key, group := args[1], args[2]
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists {
		c.WriteInt(0)
		return
	}
	if _, has := c.KS.StreamGroup(c.DB, key, group); !has {
		c.WriteInt(0)
		return
	}
	ids, ok := parseStrictIDs(c, args[3:])
	if !ok {
		return
	}
	var acked []keyspace.StreamID
	for _, id := range ids {
		if _, pending := c.KS.StreamPendingEntry(c.DB, key, group, id); pending && !containsID(acked, id) {
			acked = append(acked, id)
		}
	}
	if len(acked) == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.XAck(c.DB, key, string(group), acked)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(acked)))
	}
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
func cmdXPending(c *Client, args [][]byte) {
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		c.WriteErr(errSyntax)
		return
	}
	var minIdle, count int64
	var start, end keyspace.StreamID
	var consumer []byte
	if len(args) >= 6 {
		si := 3
		if argIs(args[3], "idle") {
			var err error
			if minIdle, err = argInt64(args[4]); err != nil {
				c.WriteErr(err)
				return
			}
			if len(args) < 8 {
				c.WriteErr(errSyntax)
				return
			}
			si += 2
		}
		var err error
		if count, err = argInt64(args[si+2]); err != nil {
			c.WriteErr(err)
			return
		}
		count = max(count, 0)
		var ex bool
		if start, ex, err = parseIntervalID(args[si], 0); err != nil {
			c.WriteErr(err)
			return
		}
		if ex {
			var ok bool
			if start, ok = start.Next(); !ok {
				c.WriteErr(errStartInterval)
				return
			}
		}
		if end, ex, err = parseIntervalID(args[si+1], math.MaxUint64); err != nil {
			c.WriteErr(err)
			return
		}
		if ex {
			var ok bool
			if end, ok = end.Prev(); !ok {
				c.WriteErr(errEndInterval)
				return
			}
		}
		if si+3 < len(args) {
			consumer = args[si+3]
		}
	}
	key, group := args[1], args[2]
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	gi, has := c.KS.StreamGroup(c.DB, key, group)
	if !exists || !has {
		c.WriteErr(errNoKeyOrGroup(key, group))
		return
	}
	if len(args) == 3 {
		c.WriteArray(4)
		c.WriteInt(int64(gi.Pending))
		if gi.Pending == 0 {
			c.WriteNull()
			c.WriteNull()
			c.WriteNullArray()
			return
		}
		var first, last keyspace.StreamID
		k := 0
		c.KS.StreamPEL(c.DB, key, group, nil, keyspace.StreamID{}, keyspace.MaxStreamID, func(p keyspace.StreamPending) bool {
			if k == 0 {
				first = p.ID
			}
			last = p.ID
			k++
			return true
		})
		writeStreamID(c, first)
		writeStreamID(c, last)
		var cons []keyspace.StreamConsumerInfo
		for _, ci := range c.KS.StreamConsumers(c.DB, key, group) {
			if ci.Pending > 0 {
				cons = append(cons, ci)
			}
		}
		c.WriteArray(len(cons))
		for _, ci := range cons {
			c.WriteArray(2)
			c.WriteBulkString(ci.Name)
			c.WriteBulkInt(int64(ci.Pending))
		}
		return
	}
	if consumer != nil {
		if _, exists := c.KS.StreamConsumer(c.DB, key, group, consumer); !exists {
			c.WriteArray(0)
			return
		}
	}
	now := c.KS.NowMs()
	mark := len(c.Out)
	c.WriteArray(0)
	hdr := len(c.Out)
	n := 0
	if count > 0 {
		c.KS.StreamPEL(c.DB, key, group, consumer, start, end, func(p keyspace.StreamPending) bool {
			idle := max(now-p.DeliveryTime, 0)
			if minIdle != 0 && idle < minIdle {
				return true
			}
			c.WriteArray(4)
			writeStreamID(c, p.ID)
			c.WriteBulkString(p.Consumer)
			c.WriteInt(idle)
			c.WriteInt(int64(p.DeliveryCount))
			n++
			return int64(n) < count
		})
	}
	patchArray(c, mark, hdr, n)
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]
func cmdXClaim(c *Client, args [][]byte) {
	key, group, consumer := args[1], args[2], args[3]
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	gi, has := c.KS.StreamGroup(c.DB, key, group)
	if !exists || !has {
		c.WriteErr(errNoKeyOrGroup(key, group))
		return
	}
	minIdle, ok := parseInt64(args[4])
	if !ok {
		c.WriteError("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	var ids []keyspace.StreamID
	for ; j < len(args); j++ {
		id, err := parseStrictID(args[j])
		if err != nil {
			break
		}
		ids = append(ids, id)
	}
	now := c.KS.NowMs()
	deliveryTime := int64(-1)
	retryCount := int64(-1)
	force, justID := false, false
	var lastID keyspace.StreamID
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		switch {
		case argIs(opt, "force"):
			force = true
		case argIs(opt, "justid"):
			justID = true
		case argIs(opt, "idle") && more > 0:
			j++
			v, ok := parseInt64(args[j])
			if !ok {
				c.WriteError("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			deliveryTime = now - v
		case argIs(opt, "time") && more > 0:
			j++
			v, ok := parseInt64(args[j])
			if !ok {
				c.WriteError("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			deliveryTime = v
		case argIs(opt, "retrycount") && more > 0:
			j++
			v, ok := parseInt64(args[j])
			if !ok {
				c.WriteError("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retryCount = v
		case argIs(opt, "lastid") && more > 0:
			j++
			id, err := parseStrictID(args[j])
			if err != nil {
				c.WriteErr(err)
				return
			}
			lastID = id
		default:
			c.WriteError("ERR Unrecognized XCLAIM option '" + string(cString(opt)) + "'")
			return
		}
	}
	if deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	b := c.KS.NewBatch()
	if gi.LastID.Less(lastID) {
		b.XGroupSetID(c.DB, key, string(group), lastID, gi.EntriesRead)
	}
	var gone []keyspace.StreamID
	var sets []keyspace.PendingSet
	mark := len(c.Out)
	c.WriteArray(0)
	hdr := len(c.Out)
	n := 0
	for _, id := range ids {
		p, pending := c.KS.StreamPendingEntry(c.DB, key, group, id)
		if !c.KS.StreamHas(c.DB, key, id) {
			if pending && !containsID(gone, id) {
				gone = append(gone, id)
			}
			continue
		}
		if !pending && !force {
			continue
		}
		if idx := pendingSetIndex(sets, id); idx >= 0 { // the same ID twice
			p = keyspace.StreamPending{ID: id, Consumer: string(consumer), DeliveryTime: sets[idx].DeliveryTime, DeliveryCount: sets[idx].DeliveryCount}
			pending = true
		} else if !pending {
			p = keyspace.StreamPending{ID: id, DeliveryTime: now, DeliveryCount: 1}
		}
		if pending && minIdle > 0 && now-p.DeliveryTime < minIdle {
			continue
		}
		cnt := p.DeliveryCount
		switch {
		case retryCount >= 0:
			cnt = uint64(retryCount)
		case !justID:
			cnt++
		}
		ps := keyspace.PendingSet{ID: id, DeliveryTime: deliveryTime, DeliveryCount: cnt}
		if idx := pendingSetIndex(sets, id); idx >= 0 {
			sets[idx] = ps
		} else {
			sets = append(sets, ps)
		}
		if justID {
			writeStreamID(c, id)
		} else {
			c.KS.XRange(c.DB, key, id, id, 1, false, func(id keyspace.StreamID, fields [][]byte) { writeStreamEntry(c, id, fields) })
		}
		n++
	}
	patchArray(c, mark, hdr, n)
	if len(gone) > 0 {
		b.XAck(c.DB, key, string(group), gone)
	}
	created := len(sets) > 0 && len(appendNewConsumer(c, nil, key, group, consumer)) > 0
	if len(sets) > 0 {
		b.XPelSet(c.DB, key, string(group), string(consumer), now, sets)
	}
	if b.Len() > 0 && commitReply(c, b, mark) && created {
		c.Notify(notifyStream, "xgroup-createconsumer", key)
	}
}

func pendingSetIndex(sets []keyspace.PendingSet, id keyspace.StreamID) int {
	for i := range sets {
		if sets[i].ID == id {
			return i
		}
	}
	return -1
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
func cmdXAutoClaim(c *Client, args [][]byte) {
	key, group, consumer := args[1], args[2], args[3]
	// Redis parses the arguments before it looks at the key.
	minIdle, ok := parseInt64(args[4])
	if !ok {
		c.WriteError("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ex, err := parseIntervalID(args[5], 0)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if ex {
		if start, ok = start.Next(); !ok {
			c.WriteErr(errStartInterval)
			return
		}
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case argIs(args[j], "count") && more > 0:
			v, ok := parseInt64(args[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.WriteErr(errAutoClaimCount)
				return
			}
			count = v
			j++
		case argIs(args[j], "justid"):
			justID = true
		default:
			c.WriteErr(errSyntax)
			return
		}
	}
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if _, has := c.KS.StreamGroup(c.DB, key, group); !exists || !has {
		c.WriteErr(errNoKeyOrGroup(key, group))
		return
	}
	now := c.KS.NowMs()
	attempts := count * 10
	var gone []keyspace.StreamID
	var sets []keyspace.PendingSet
	var claimed [][]byte // rendered entries
	next := keyspace.StreamID{}
	c.KS.StreamPEL(c.DB, key, group, nil, start, keyspace.MaxStreamID, func(p keyspace.StreamPending) bool {
		if attempts == 0 || count == 0 {
			next = p.ID
			return false
		}
		attempts--
		if !c.KS.StreamHas(c.DB, key, p.ID) {
			gone = append(gone, p.ID)
			count--
			return true
		}
		if minIdle > 0 && now-p.DeliveryTime < minIdle {
			return true
		}
		cnt := p.DeliveryCount
		if !justID {
			cnt++
		}
		sets = append(sets, keyspace.PendingSet{ID: p.ID, DeliveryTime: now, DeliveryCount: cnt})
		save := c.Out
		c.Out = nil
		if justID {
			writeStreamID(c, p.ID)
		} else {
			c.KS.XRange(c.DB, key, p.ID, p.ID, 1, false, func(id keyspace.StreamID, fields [][]byte) { writeStreamEntry(c, id, fields) })
		}
		claimed = append(claimed, c.Out)
		c.Out = save
		count--
		return true
	})
	mark := len(c.Out)
	c.WriteArray(3)
	writeStreamID(c, next)
	c.WriteArray(len(claimed))
	for _, e := range claimed {
		c.WriteRaw(e)
	}
	c.WriteArray(len(gone))
	for _, id := range gone {
		writeStreamID(c, id)
	}
	b := c.KS.NewBatch()
	if len(gone) > 0 {
		b.XAck(c.DB, key, string(group), gone)
	}
	created := len(sets) > 0 && len(appendNewConsumer(c, nil, key, group, consumer)) > 0
	if len(sets) > 0 {
		b.XPelSet(c.DB, key, string(group), string(consumer), now, sets)
	}
	if b.Len() > 0 && commitReply(c, b, mark) && created {
		c.Notify(notifyStream, "xgroup-createconsumer", key)
	}
}

// XINFO GROUPS key
func cmdXInfoGroups(c *Client, args [][]byte) {
	key := args[2]
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists {
		c.WriteError(ErrNoSuchKey)
		return
	}
	groups := c.KS.StreamGroups(c.DB, key)
	c.WriteArray(len(groups))
	for _, g := range groups {
		c.WriteMap(6)
		c.WriteBulkString("name")
		c.WriteBulkString(g.Name)
		c.WriteBulkString("consumers")
		c.WriteInt(int64(g.Consumers))
		c.WriteBulkString("pending")
		c.WriteInt(int64(g.Pending))
		c.WriteBulkString("last-delivered-id")
		writeStreamID(c, g.LastID)
		writeGroupCounters(c, g)
	}
}

// writeGroupCounters appends entries-read and lag (nil when unknown).
func writeGroupCounters(c *Client, g keyspace.StreamGroupInfo) {
	c.WriteBulkString("entries-read")
	if g.EntriesRead != -1 {
		c.WriteInt(g.EntriesRead)
	} else {
		c.WriteNull()
	}
	c.WriteBulkString("lag")
	if g.LagValid {
		c.WriteInt(g.Lag)
	} else {
		c.WriteNull()
	}
}

// XINFO CONSUMERS key group
func cmdXInfoConsumers(c *Client, args [][]byte) {
	key, group := args[2], args[3]
	_, exists, ok := lookupStream(c, key)
	if !ok {
		return
	}
	if !exists {
		c.WriteError(ErrNoSuchKey)
		return
	}
	if _, has := c.KS.StreamGroup(c.DB, key, group); !has {
		c.WriteErr(errNoGroupForKey(group, key))
		return
	}
	now := c.KS.NowMs()
	cons := c.KS.StreamConsumers(c.DB, key, group)
	c.WriteArray(len(cons))
	for _, ci := range cons {
		c.WriteMap(3)
		c.WriteBulkString("name")
		c.WriteBulkString(ci.Name)
		c.WriteBulkString("pending")
		c.WriteInt(int64(ci.Pending))
		c.WriteBulkString("idle")
		c.WriteInt(max(now-ci.SeenTime, 0))
	}
}

// writeFullGroups appends XINFO STREAM FULL's "groups" value: each group
// with its pending entries and consumers, lists cut at count (0: all).
// Redis 7.0 names the lists "pending" (the counts "pel-count").
func writeFullGroups(c *Client, key []byte, count int64) {
	groups := c.KS.StreamGroups(c.DB, key)
	c.WriteArray(len(groups))
	for _, g := range groups {
		c.WriteMap(7)
		c.WriteBulkString("name")
		c.WriteBulkString(g.Name)
		c.WriteBulkString("last-delivered-id")
		writeStreamID(c, g.LastID)
		writeGroupCounters(c, g)
		c.WriteBulkString("pel-count")
		c.WriteInt(int64(g.Pending))
		c.WriteBulkString("pending")
		mark := len(c.Out)
		c.WriteArray(0)
		hdr := len(c.Out)
		n := int64(0)
		c.KS.StreamPEL(c.DB, key, []byte(g.Name), nil, keyspace.StreamID{}, keyspace.MaxStreamID, func(p keyspace.StreamPending) bool {
			if count > 0 && n >= count {
				return false
			}
			c.WriteArray(4)
			writeStreamID(c, p.ID)
			c.WriteBulkString(p.Consumer)
			c.WriteInt(p.DeliveryTime)
			c.WriteInt(int64(p.DeliveryCount))
			n++
			return true
		})
		patchArray(c, mark, hdr, int(n))
		c.WriteBulkString("consumers")
		cons := c.KS.StreamConsumers(c.DB, key, []byte(g.Name))
		c.WriteArray(len(cons))
		for _, ci := range cons {
			c.WriteMap(4)
			c.WriteBulkString("name")
			c.WriteBulkString(ci.Name)
			c.WriteBulkString("seen-time")
			c.WriteInt(ci.SeenTime)
			c.WriteBulkString("pel-count")
			c.WriteInt(int64(ci.Pending))
			c.WriteBulkString("pending")
			mark := len(c.Out)
			c.WriteArray(0)
			hdr := len(c.Out)
			n := int64(0)
			c.KS.StreamPEL(c.DB, key, []byte(g.Name), []byte(ci.Name), keyspace.StreamID{}, keyspace.MaxStreamID, func(p keyspace.StreamPending) bool {
				if count > 0 && n >= count {
					return false
				}
				c.WriteArray(3)
				writeStreamID(c, p.ID)
				c.WriteInt(p.DeliveryTime)
				c.WriteInt(int64(p.DeliveryCount))
				n++
				return true
			})
			patchArray(c, mark, hdr, int(n))
		}
	}
}

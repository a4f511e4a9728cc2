package commands

import (
	"math"
	"strconv"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Set commands (redis.io group "set").
//
// Writes log results, not choices: SPOP picks its members here and logs
// their removal; SMOVE is a removal and an addition in one batch; the
// *STORE commands are a delete of the destination and an addition of the
// result in one batch. Each command is therefore one atomic record.
//
// Replies whose order Redis leaves unspecified follow Redis where it is
// cheap: a set Redis keeps as an intset (integers only, at most 512 of
// them) is replied in ascending order by SMEMBERS, SSCAN, SPOP and
// SRANDMEMBER of the whole set, and so is a result of SINTER, SUNION or
// SDIFF that Redis would build as an intset.

func setCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast = FlagDenyOOM, FlagFast
	return []Command{
		{Name: "sadd", Arity: -3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Add one or more members to a set", Run: cmdSAdd,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "srem", Arity: -3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Remove one or more members from a set", Run: cmdSRem,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "sismember", Arity: 3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Determine if a given value is a member of a set", Run: cmdSIsMember,
			KeySpecs: key1(KeyRO)},
		{Name: "smismember", Arity: -3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "6.2.0",
			Summary: "Returns the membership associated with the given elements for a set", Run: cmdSMIsMember,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "smembers", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Get all the members in a set", Run: cmdSMembers,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output_order"}},
		{Name: "scard", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Get the number of members in a set", Run: cmdSCard,
			KeySpecs: key1(KeyRO)},
		{Name: "spop", Arity: -2, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Remove and return one or multiple random members from a set", Run: cmdSPop,
			KeySpecs: key1(KeyRW | KeyAccess | KeyDelete), Tips: []string{"nondeterministic_output"}},
		{Name: "srandmember", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Get one or multiple random members from a set", Run: cmdSRandMember,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
		{Name: "smove", Arity: 4, Flags: w | fast, FirstKey: 1, LastKey: 2, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Move a member from one set to another", Run: cmdSMove,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 1), keyAt(KeyRW|KeyInsert, 2)}},
		{Name: "sinter", Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Intersect multiple sets", Run: cmdSInter,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 1, -1, 1)}, Tips: []string{"nondeterministic_output_order"}},
		// Redis reports SINTERCARD's keys as movable (numkeys), with 0 0 0.
		{Name: "sintercard", Arity: -3, Flags: r | FlagMovableKeys, Group: "set", Since: "7.0.0",
			Summary: "Intersect multiple sets and return the cardinality of the result", Run: cmdSInterCard,
			KeySpecs: []KeySpec{keyNumkeys(KeyRO|KeyAccess, 1)}, GetKeys: numkeysGetKeys(0, 1, 2)},
		{Name: "sunion", Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Add multiple sets", Run: cmdSUnion,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 1, -1, 1)}, Tips: []string{"nondeterministic_output_order"}},
		{Name: "sdiff", Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Subtract multiple sets", Run: cmdSDiff,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 1, -1, 1)}, Tips: []string{"nondeterministic_output_order"}},
		{Name: "sinterstore", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Intersect multiple sets and store the resulting set in a key", Run: cmdSInterStore, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyUpdate, 1), keyRange(KeyRO|KeyAccess, 2, -1, 1)}},
		{Name: "sunionstore", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Add multiple sets and store the resulting set in a key", Run: cmdSUnionStore, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyRange(KeyRO|KeyAccess, 2, -1, 1)}},
		{Name: "sdiffstore", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: -1, Step: 1, Group: "set", Since: "1.0.0",
			Summary: "Subtract multiple sets and store the resulting set in a key", Run: cmdSDiffStore, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyRange(KeyRO|KeyAccess, 2, -1, 1)}},
		{Name: "sscan", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "2.8.0",
			Summary: "Incrementally iterate Set elements", Run: cmdSScan,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
	}
}

// writeSetMembers replies members as an array (SRANDMEMBER, SSCAN).
func writeSetMembers(c *Client, ms [][]byte) {
	c.WriteArray(len(ms))
	for _, m := range ms {
		c.WriteBulk(m)
	}
}

// writeSet replies members as a set (SMEMBERS, SPOP with a count, SINTER,
// SUNION, SDIFF: Redis's addReplySetLen).
func writeSet(c *Client, ms [][]byte) {
	c.WriteSet(len(ms))
	for _, m := range ms {
		c.WriteBulk(m)
	}
}

// SADD key member [member ...]: the number of members added.
func cmdSAdd(c *Client, args [][]byte) {
	key := args[1]
	added, err := c.KS.SFilter(c.DB, key, args[2:], false)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if len(added) == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.SAdd(c.DB, key, added...)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(added)))
		c.Notify(notifySet, "sadd", key)
	}
}

// SREM key member [member ...]: the number of members removed.
func cmdSRem(c *Client, args [][]byte) {
	key := args[1]
	removed, err := c.KS.SFilter(c.DB, key, args[2:], true)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if len(removed) == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.SRem(c.DB, key, removed...)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(removed)))
		notifyChanged(c, notifySet, "srem", key)
	}
}

// SISMEMBER key member
func cmdSIsMember(c *Client, args [][]byte) {
	in, err := c.KS.SIsMember(c.DB, args[1], args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(setBoolInt(in))
}

func setBoolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// SMISMEMBER key member [member ...]
func cmdSMIsMember(c *Client, args [][]byte) {
	if _, err := c.KS.SCard(c.DB, args[1]); err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteArray(len(args) - 2)
	for _, m := range args[2:] {
		in, _ := c.KS.SIsMember(c.DB, args[1], m)
		c.WriteInt(setBoolInt(in))
	}
}

// SMEMBERS key
func cmdSMembers(c *Client, args [][]byte) {
	ms, err := c.KS.SMemberBytes(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	writeSet(c, ms)
}

// SCARD key
func cmdSCard(c *Client, args [][]byte) {
	n, err := c.KS.SCard(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(int64(n))
}

var errSPopCount = replyError("ERR value is out of range, must be positive")

// parseSPopCount parses SPOP's count (getPositiveLongFromObjectOrReply):
// one error text for a non-integer and a negative number.
func parseSPopCount(b []byte) (int64, error) {
	n, ok := parseInt64(b)
	if !ok || n < 0 {
		return 0, errSPopCount
	}
	return n, nil
}

// SPOP key [count]: without count a bulk string (nil for a missing key),
// with count an array of up to count distinct members.
func cmdSPop(c *Client, args [][]byte) {
	key := args[1]
	if len(args) > 3 {
		c.WriteErr(errSyntax)
		return
	}
	withCount := len(args) == 3
	var count int64 = 1
	if withCount {
		var err error
		if count, err = parseSPopCount(args[2]); err != nil {
			c.WriteErr(err)
			return
		}
	}
	size, err := c.KS.SCard(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if size == 0 || count == 0 {
		if withCount {
			c.WriteSet(0)
		} else {
			c.WriteNull()
		}
		return
	}
	b := c.KS.NewBatch()
	var ms [][]byte
	if count >= int64(size) {
		ms, _ = c.KS.SMemberBytes(c.DB, key)
		b.Del(c.DB, key)
	} else {
		ms, _ = c.KS.SSample(c.DB, key, int(count))
		b.SRem(c.DB, key, ms...)
	}
	mark := len(c.Out)
	if withCount {
		writeSet(c, ms)
	} else {
		c.WriteBulk(ms[0])
	}
	if commitReply(c, b, mark) {
		notifyChanged(c, notifySet, "spop", key)
	}
}

// srandMaxRepeats bounds SRANDMEMBER's negative count: the reply is built
// in memory before it is sent, so a count like -LONG_MAX (which makes
// Redis itself run out of memory) is refused with "ERR value is out of
// range" instead.
const srandMaxRepeats = 1 << 24

// SRANDMEMBER key [count]: a positive count gives distinct members, a
// negative one |count| members that may repeat. Redis parses the count
// (within ±LONG_MAX) before it looks at the key.
func cmdSRandMember(c *Client, args [][]byte) {
	key := args[1]
	if len(args) > 3 {
		c.WriteErr(errSyntax)
		return
	}
	if len(args) == 2 {
		m, ok, err := c.KS.SRandomMember(c.DB, key)
		if err != nil {
			c.WriteErr(err)
			return
		}
		if !ok {
			c.WriteNull()
			return
		}
		c.WriteBulk(m)
		return
	}
	count, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if count == math.MinInt64 {
		c.WriteError("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	size, err := c.KS.SCard(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	switch {
	case size == 0 || count == 0:
		c.WriteArray(0)
	case count > 0:
		ms, _ := c.KS.SSample(c.DB, key, int(min(count, int64(size))))
		writeSetMembers(c, ms)
	case count < -srandMaxRepeats:
		c.WriteError("ERR value is out of range")
	default:
		c.WriteArray(int(-count))
		_ = c.KS.SRandomMembers(c.DB, key, int(-count), func(m []byte) { c.WriteBulk(m) })
	}
}

// SMOVE source destination member: 1 if moved, 0 if source does not hold
// member. A missing source answers 0 before the destination's type is
// looked at, as in Redis.
func cmdSMove(c *Client, args [][]byte) {
	src, dst, member := args[1], args[2], args[3]
	srcSize, err := c.KS.SCard(c.DB, src)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if srcSize == 0 {
		c.WriteInt(0)
		return
	}
	if _, err := c.KS.SCard(c.DB, dst); err != nil {
		c.WriteErr(err)
		return
	}
	in, _ := c.KS.SIsMember(c.DB, src, member)
	if !in || string(src) == string(dst) {
		c.WriteInt(setBoolInt(in))
		return
	}
	b := c.KS.NewBatch()
	b.SRem(c.DB, src, member)
	already, _ := c.KS.SIsMember(c.DB, dst, member)
	if !already {
		b.SAdd(c.DB, dst, member)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		notifyChanged(c, notifySet, "srem", src)
		if !already {
			c.Notify(notifySet, "sadd", dst)
		}
	}
}

// SINTER key [key ...]
func cmdSInter(c *Client, args [][]byte) {
	ms, err := c.KS.SInter(c.DB, args[1:], 0)
	setAlgebraReply(c, ms, err)
}

// SUNION key [key ...]
func cmdSUnion(c *Client, args [][]byte) {
	ms, err := c.KS.SUnion(c.DB, args[1:])
	setAlgebraReply(c, ms, err)
}

// SDIFF key [key ...]
func cmdSDiff(c *Client, args [][]byte) {
	ms, err := c.KS.SDiff(c.DB, args[1:])
	setAlgebraReply(c, ms, err)
}

func setAlgebraReply(c *Client, ms [][]byte, err error) {
	if err != nil {
		c.WriteErr(err)
		return
	}
	keyspace.SortLikeIntset(ms)
	writeSet(c, ms)
}

// SINTERSTORE destination key [key ...]
func cmdSInterStore(c *Client, args [][]byte) {
	ms, err := c.KS.SInter(c.DB, args[2:], 0)
	storeSetResult(c, args[1], ms, err, "sinterstore")
}

// SUNIONSTORE destination key [key ...]
func cmdSUnionStore(c *Client, args [][]byte) {
	ms, err := c.KS.SUnion(c.DB, args[2:])
	storeSetResult(c, args[1], ms, err, "sunionstore")
}

// SDIFFSTORE destination key [key ...]
func cmdSDiffStore(c *Client, args [][]byte) {
	ms, err := c.KS.SDiff(c.DB, args[2:])
	storeSetResult(c, args[1], ms, err, "sdiffstore")
}

// storeSetResult replaces dst (whatever it holds) with the set of ms, deleting
// it when ms is empty, in one batch, and replies the size.
func storeSetResult(c *Client, dst []byte, ms [][]byte, err error, event string) {
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.KS.CountLookups(false) // the sources were read (counted); dst is written
	b := c.KS.NewBatch()
	existed := c.KS.Exists(c.DB, dst)
	if existed {
		b.Del(c.DB, dst)
	}
	if len(ms) > 0 {
		b.SAdd(c.DB, dst, ms...)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(ms)))
		notifyStore(c, notifySet, event, dst, len(ms) > 0, existed)
	}
}

// parseSInterCard parses SINTERCARD numkeys key [key ...] [LIMIT limit]
// with Redis's checks and texts, in its order.
func parseSInterCard(args [][]byte) (keys [][]byte, limit int64, err error) {
	numkeys, ok := parseInt64(args[1])
	if !ok || numkeys < 1 {
		return nil, 0, replyError("ERR numkeys should be greater than 0")
	}
	if numkeys > int64(len(args)-2) {
		return nil, 0, replyError("ERR Number of keys can't be greater than number of args")
	}
	keys = args[2 : 2+numkeys]
	for i := 2 + int(numkeys); i < len(args); i++ {
		if argIs(args[i], "limit") && i+1 < len(args) {
			i++
			n, ok := parseInt64(args[i])
			if !ok || n < 0 {
				return nil, 0, replyError("ERR LIMIT can't be negative")
			}
			limit = n
			continue
		}
		return nil, 0, errSyntax
	}
	return keys, limit, nil
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func cmdSInterCard(c *Client, args [][]byte) {
	keys, limit, err := parseSInterCard(args)
	if err != nil {
		c.WriteErr(err)
		return
	}
	ms, err := c.KS.SInter(c.DB, keys, int(min(limit, math.MaxInt32)))
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(int64(len(ms)))
}

// SSCAN key cursor [MATCH pattern] [COUNT count]. Redis checks the cursor,
// then the key (a missing key answers an empty scan whatever the options),
// then the options.
func cmdSScan(c *Client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		c.WriteError("ERR invalid cursor")
		return
	}
	n, err := c.KS.SCard(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if n == 0 {
		c.WriteArray(2)
		c.WriteBulkString("0")
		c.WriteArray(0)
		return
	}
	o, err := parseScanOptions(args[3:], false)
	if err != nil {
		c.WriteErr(err)
		return
	}
	var ms [][]byte
	next, _ := c.KS.SScan(c.DB, args[1], cursor, o.count, func(m []byte) {
		if o.match == nil || globMatch(o.match, m) {
			ms = append(ms, m)
		}
	})
	c.WriteArray(2)
	c.WriteBulkString(strconv.FormatUint(next, 10))
	writeSetMembers(c, ms)
}

package commands

import (
	"math"
	"strconv"
)

// Hash commands (redis.io group "hash").
//
// Every handler parses its arguments first, in the order Redis checks them
// (so that a command with several faults gets Redis's error), then reads,
// then writes at most one batch. A write carries its result, never an
// instruction: HINCRBY and HINCRBYFLOAT log an HSET of the new value, so
// replay needs no arithmetic. A field set to its current value is still a
// write (Redis signals the key as modified too). Writes that change nothing
// (HSETNX on an existing field, HDEL of missing fields) write no record.

func hashCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast = FlagDenyOOM, FlagFast
	return []Command{
		{Name: "hset", Arity: -4, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Set the string value of a hash field", Run: cmdHSet,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "hsetnx", Arity: 4, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Set the value of a hash field, only if the field does not exist", Run: cmdHSetNX,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "hget", Arity: 3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Get the value of a hash field", Run: cmdHGet,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "hmset", Arity: -4, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Set multiple hash fields to multiple values", Run: cmdHMSet,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "hmget", Arity: -3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Get the values of all the given hash fields", Run: cmdHMGet,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "hgetall", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Get all the fields and values in a hash", Run: cmdHGetAll,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output_order"}},
		{Name: "hdel", Arity: -3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Delete one or more hash fields", Run: cmdHDel,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "hlen", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Get the number of fields in a hash", Run: cmdHLen,
			KeySpecs: key1(KeyRO)},
		{Name: "hexists", Arity: 3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Determine if a hash field exists", Run: cmdHExists,
			KeySpecs: key1(KeyRO)},
		{Name: "hkeys", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Get all the fields in a hash", Run: cmdHKeys,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output_order"}},
		{Name: "hvals", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Get all the values in a hash", Run: cmdHVals,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output_order"}},
		{Name: "hincrby", Arity: 4, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
			Summary: "Increment the integer value of a hash field by the given number", Run: cmdHIncrBy,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "hincrbyfloat", Arity: 4, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.6.0",
			Summary: "Increment the float value of a hash field by the given amount", Run: cmdHIncrByFloat,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "hstrlen", Arity: 3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "3.2.0",
			Summary: "Get the length of the value of a hash field", Run: cmdHStrlen,
			KeySpecs: key1(KeyRO)},
		{Name: "hrandfield", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "6.2.0",
			Summary: "Get one or multiple random fields from a hash", Run: cmdHRandField,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
		{Name: "hscan", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.8.0",
			Summary: "Incrementally iterate hash fields and associated values", Run: cmdHScan,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
	}
}

// ---- writes ----

// HSET key field value [field value ...]: the number of fields added.
func cmdHSet(c *Client, args [][]byte) {
	if n, ok := hashSet(c, args, "hset"); ok {
		c.WriteInt(int64(n))
	}
}

// HMSET key field value [field value ...]: HSET replying OK.
func cmdHMSet(c *Client, args [][]byte) {
	if _, ok := hashSet(c, args, "hmset"); ok {
		c.WriteOK()
	}
}

// hashSet writes the field/value pairs of args[2:] as one operation and
// returns how many fields were new (a field named twice counts once).
func hashSet(c *Client, args [][]byte, name string) (added int, ok bool) {
	if len(args)%2 != 0 {
		c.WriteError(WrongArgs(name))
		return 0, false
	}
	key, pairs := args[1], args[2:]
	if _, err := c.KS.HLen(c.DB, key); err != nil {
		c.WriteErr(err)
		return 0, false
	}
	var seen map[string]struct{} // new fields so far, when a field may repeat
	if len(pairs) > 2 {
		seen = make(map[string]struct{}, len(pairs)/2)
	}
	for i := 0; i < len(pairs); i += 2 {
		f := pairs[i]
		if _, exists, _ := c.KS.HGet(c.DB, key, f); exists {
			continue
		}
		if seen != nil {
			if _, dup := seen[string(f)]; dup {
				continue
			}
			seen[string(f)] = struct{}{}
		}
		added++
	}
	b := c.KS.NewBatch()
	b.HSet(c.DB, key, pairs...)
	ok = commitReply(c, b, len(c.Out))
	if ok {
		c.Notify(notifyHash, "hset", key)
	}
	return added, ok
}

// HSETNX key field value
func cmdHSetNX(c *Client, args [][]byte) {
	key, field := args[1], args[2]
	_, exists, err := c.KS.HGet(c.DB, key, field)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if exists {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.HSet(c.DB, key, field, args[3])
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		c.Notify(notifyHash, "hset", key)
	}
}

// HDEL key field [field ...]: the number of fields removed. The logged
// operation names only the fields that existed, each once; deleting the
// last field deletes the key.
func cmdHDel(c *Client, args [][]byte) {
	key := args[1]
	if _, err := c.KS.HLen(c.DB, key); err != nil {
		c.WriteErr(err)
		return
	}
	var del [][]byte
	var seen map[string]struct{} // for many fields; few are checked against del
	if len(args) > 2+16 {
		seen = make(map[string]struct{}, len(args)-2)
	}
	for _, f := range args[2:] {
		if _, exists, _ := c.KS.HGet(c.DB, key, f); !exists {
			continue
		}
		if seen != nil {
			if _, dup := seen[string(f)]; dup {
				continue
			}
			seen[string(f)] = struct{}{}
		} else if hashFieldListed(del, f) {
			continue
		}
		del = append(del, f)
	}
	if len(del) == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.HDel(c.DB, key, del...)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(del)))
		notifyChanged(c, notifyHash, "hdel", key)
	}
}

// hashFieldListed reports whether list holds s.
func hashFieldListed(list [][]byte, s []byte) bool {
	for _, x := range list {
		if string(x) == string(s) {
			return true
		}
	}
	return false
}

// HINCRBY key field increment. Redis checks the increment, then the key's
// type, then the field's value ("ERR hash value is not an integer"), then
// overflow.
func cmdHIncrBy(c *Client, args [][]byte) {
	key, field := args[1], args[2]
	incr, err := argInt64(args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	val, exists, err := c.KS.HGet(c.DB, key, field)
	if err != nil {
		c.WriteErr(err)
		return
	}
	var cur int64
	if exists {
		var ok bool
		if cur, ok = parseInt64(val); !ok {
			c.WriteError("ERR hash value is not an integer")
			return
		}
	}
	n, ok := addInt64(cur, incr)
	if !ok {
		c.WriteErr(errOverflow)
		return
	}
	var buf [20]byte
	b := c.KS.NewBatch()
	b.HSet(c.DB, key, field, strconv.AppendInt(buf[:0], n, 10))
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(n)
		c.Notify(notifyHash, "hincrby", key)
	}
}

// HINCRBYFLOAT key field increment: a long double sum formatted as
// INCRBYFLOAT formats it. Redis checks the increment (syntax, then
// "ERR value is NaN or Infinity"), then the key's type, then the field's
// value ("ERR hash value is not a float"), then the sum.
func cmdHIncrByFloat(c *Client, args [][]byte) {
	key, field := args[1], args[2]
	incr, ok := parseLongDouble(args[3])
	if !ok {
		c.WriteErr(errNotFloat)
		return
	}
	if incr.IsInf() {
		c.WriteError("ERR value is NaN or Infinity")
		return
	}
	val, exists, err := c.KS.HGet(c.DB, key, field)
	if err != nil {
		c.WriteErr(err)
		return
	}
	cur := newLongDouble()
	if exists {
		if cur, ok = parseLongDouble(val); !ok {
			c.WriteError("ERR hash value is not a float")
			return
		}
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.WriteErr(errNaNOrInf)
		return
	}
	s := formatLongDouble(sum)
	b := c.KS.NewBatch()
	b.HSet(c.DB, key, field, []byte(s))
	if commitReply(c, b, len(c.Out)) {
		c.WriteBulkString(s)
		c.Notify(notifyHash, "hincrbyfloat", key)
	}
}

// ---- reads ----

// HGET key field
func cmdHGet(c *Client, args [][]byte) {
	val, exists, err := c.KS.HGet(c.DB, args[1], args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	writeBulkOrNull(c, val, exists)
}

// HMGET key field [field ...]: nil for each missing field (every field of
// a missing key); WRONGTYPE for another type.
func cmdHMGet(c *Client, args [][]byte) {
	key := args[1]
	if _, err := c.KS.HLen(c.DB, key); err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteArray(len(args) - 2)
	for _, f := range args[2:] {
		val, exists, _ := c.KS.HGet(c.DB, key, f)
		writeBulkOrNull(c, val, exists)
	}
}

// HLEN key
func cmdHLen(c *Client, args [][]byte) {
	n, err := c.KS.HLen(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(int64(n))
}

// HEXISTS key field
func cmdHExists(c *Client, args [][]byte) {
	_, exists, err := c.KS.HGet(c.DB, args[1], args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if exists {
		c.WriteInt(1)
	} else {
		c.WriteInt(0)
	}
}

// HSTRLEN key field: 0 for a missing key or field.
func cmdHStrlen(c *Client, args [][]byte) {
	val, _, err := c.KS.HGet(c.DB, args[1], args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(int64(len(val)))
}

// What HGETALL, HKEYS and HVALS reply for each field.
const (
	hashReplyFields = 1 << iota
	hashReplyValues
)

func cmdHGetAll(c *Client, args [][]byte) { hashGetAll(c, args[1], hashReplyFields|hashReplyValues) }
func cmdHKeys(c *Client, args [][]byte)   { hashGetAll(c, args[1], hashReplyFields) }
func cmdHVals(c *Client, args [][]byte)   { hashGetAll(c, args[1], hashReplyValues) }

// hashGetAll replies every field and/or value of the hash at key, in the
// hash's order (insertion order while it is small, as in Redis).
func hashGetAll(c *Client, key []byte, what int) {
	n, err := c.KS.HLen(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if what == hashReplyFields|hashReplyValues {
		c.WriteMap(n) // HGETALL
	} else {
		c.WriteArray(n)
	}
	c.KS.CountLookups(false) // HLen counted the key; the rest of the command reads nothing else
	_ = c.KS.HRange(c.DB, key, func(field, val []byte) {
		if what&hashReplyFields != 0 {
			c.WriteBulk(field)
		}
		if what&hashReplyValues != 0 {
			c.WriteBulk(val)
		}
	})
}

// hrandfieldMaxRepeats bounds the reply of HRANDFIELD with a negative
// count: Redis would try to build a reply of any size (and stall every
// client meanwhile); this server refuses one of more than 2^26 elements.
const hrandfieldMaxRepeats = 1 << 26

// HRANDFIELD key [count [WITHVALUES]]. Redis parses the count (within
// ±LONG_MAX), then the option, then (WITHVALUES) checks |count| <=
// LONG_MAX/2, and only then looks at the key.
func cmdHRandField(c *Client, args [][]byte) {
	key := args[1]
	if len(args) == 2 {
		var field []byte
		found := false
		err := c.KS.HRandomFields(c.DB, key, 1, false, func(f, _ []byte) { field, found = f, true })
		if err != nil {
			c.WriteErr(err)
			return
		}
		writeBulkOrNull(c, field, found)
		return
	}
	count, ok := parseInt64(args[2])
	if !ok {
		c.WriteErr(errNotInteger)
		return
	}
	if count == math.MinInt64 {
		c.WriteError("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withValues := false
	if len(args) > 4 || (len(args) == 4 && !argIs(args[3], "withvalues")) {
		c.WriteErr(errSyntax)
		return
	}
	if len(args) == 4 {
		withValues = true
		if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
			c.WriteError("ERR value is out of range")
			return
		}
	}
	size, err := c.KS.HLen(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if size == 0 || count == 0 {
		c.WriteArray(0)
		return
	}
	unique := count > 0
	n := count
	if !unique {
		n = -count
		if n > hrandfieldMaxRepeats {
			c.WriteError("ERR value is out of range")
			return
		}
	} else if n > int64(size) {
		n = int64(size)
	}
	if withValues {
		c.WritePairs(int(n)) // [field, value] pairs in RESP3
	} else {
		c.WriteArray(int(n))
	}
	_ = c.KS.HRandomFields(c.DB, key, int(n), unique, func(field, val []byte) {
		if withValues {
			c.WritePair()
		}
		c.WriteBulk(field)
		if withValues {
			c.WriteBulk(val)
		}
	})
}

// HSCAN key cursor [MATCH pattern] [COUNT count]: [next cursor, [field,
// value, ...]]. Redis checks the cursor, then the key (a missing key
// replies an empty scan without looking at the options), then the options.
// A small hash is returned whole with cursor 0, as Redis does for a
// listpack; MATCH filters on the field name.
func cmdHScan(c *Client, args [][]byte) {
	key := args[1]
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		c.WriteError("ERR invalid cursor")
		return
	}
	n, err := c.KS.HLen(c.DB, key)
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
	var found [][]byte // field, value, ...; alias the keyspace until Unlock
	next, _ := c.KS.HScan(c.DB, key, cursor, o.count, func(field, val []byte) {
		if o.match == nil || globMatch(o.match, field) {
			found = append(found, field, val)
		}
	})
	c.WriteArray(2)
	c.WriteBulkString(strconv.FormatUint(next, 10))
	c.WriteArray(len(found))
	for _, b := range found {
		c.WriteBulk(b)
	}
}

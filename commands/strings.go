package commands

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/persimmon-db/persimmon/keyspace"
)

// String and bitmap commands (redis.io groups "string" and "bitmap").
//
// Each handler parses all of its arguments into a typed value first (the
// parse* functions, which touch nothing and are unit-tested on their own),
// then reads the keyspace, then writes at most one batch. Where Redis reads
// the key before it has finished validating arguments (BITCOUNT, BITPOS,
// GETEX, INCRBYFLOAT) the handler reports the parse error at the same point
// Redis does, so the reply is the same; either way nothing is written.
//
// Commands that change a string in place (APPEND, SETRANGE, SETBIT, INCR…)
// keep the key's TTL, as Redis does; SET, GETSET, MSET drop it.

func stringCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast = FlagDenyOOM, FlagFast
	return []Command{
		{Name: "set", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Set the string value of a key", Run: cmdSet,
			KeySpecs: []KeySpec{{Notes: "RW and ACCESS due to the optional `GET` argument", Flags: KeyRW | KeyAccess | KeyUpdate | KeyVariableFlags, Index: 1, KeyStep: 1}}, GetKeys: setGetKeys},
		{Name: "get", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Get the value of a key", Run: cmdGet,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "getset", Arity: 3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Set the string value of a key and return its old value", Run: cmdGetSet,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "getdel", Arity: 2, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "6.2.0",
			Summary: "Get the value of a key and delete the key", Run: cmdGetDel, CountsReads: true,
			KeySpecs: key1(KeyRW | KeyAccess | KeyDelete)},
		{Name: "getex", Arity: -2, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "6.2.0",
			Summary: "Get the value of a key and optionally set its expiration", Run: cmdGetEx, CountsReads: true,
			KeySpecs: []KeySpec{{Notes: "RW and UPDATE because it changes the TTL", Flags: KeyRW | KeyAccess | KeyUpdate, Index: 1, KeyStep: 1}}},
		{Name: "setnx", Arity: 3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Set the value of a key, only if the key does not exist", Run: cmdSetNX,
			KeySpecs: key1(KeyOW | KeyInsert)},
		{Name: "setex", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.0.0",
			Summary: "Set the value and expiration of a key", Run: cmdSetEx,
			KeySpecs: key1(KeyOW | KeyUpdate)},
		{Name: "psetex", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.6.0",
			Summary: "Set the value and expiration in milliseconds of a key", Run: cmdPSetEx,
			KeySpecs: key1(KeyOW | KeyUpdate)},
		{Name: "mset", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Since: "1.0.1",
			Summary: "Set multiple keys to multiple values", Run: cmdMSet,
			KeySpecs: []KeySpec{keyRange(KeyOW|KeyUpdate, 1, -1, 2)}, Tips: []string{"request_policy:multi_shard", "response_policy:all_succeeded"}},
		{Name: "msetnx", Arity: -3, Flags: w | dm, FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Since: "1.0.1",
			Summary: "Set multiple keys to multiple values, only if none of the keys exist", Run: cmdMSetNX,
			KeySpecs: []KeySpec{keyRange(KeyOW|KeyInsert, 1, -1, 2)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_min"}},
		{Name: "mget", Arity: -2, Flags: r | fast, FirstKey: 1, LastKey: -1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Get the values of all the given keys", Run: cmdMGet,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 1, -1, 1)}, Tips: []string{"request_policy:multi_shard"}},
		{Name: "incr", Arity: 2, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Increment the integer value of a key by one", Run: cmdIncr,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "decr", Arity: 2, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Decrement the integer value of a key by one", Run: cmdDecr,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "incrby", Arity: 3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Increment the integer value of a key by the given amount", Run: cmdIncrBy,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "decrby", Arity: 3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Decrement the integer value of a key by the given number", Run: cmdDecrBy,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "incrbyfloat", Arity: 3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.6.0",
			Summary: "Increment the float value of a key by the given amount", Run: cmdIncrByFloat,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "append", Arity: 3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.0.0",
			Summary: "Append a value to a key", Run: cmdAppend,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "strlen", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.2.0",
			Summary: "Get the length of the value stored in a key", Run: cmdStrlen,
			KeySpecs: key1(KeyRO)},
		{Name: "getrange", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.4.0",
			Summary: "Get a substring of the string stored at a key", Run: cmdGetRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "substr", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
			Summary: "Get a substring of the string stored at a key", Run: cmdGetRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "setrange", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "2.2.0",
			Summary: "Overwrite part of a string at key starting at the specified offset", Run: cmdSetRange,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "setbit", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
			Summary: "Sets or clears the bit at offset in the string value stored at key", Run: cmdSetBit,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "getbit", Arity: 3, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
			Summary: "Returns the bit value at offset in the string value stored at key", Run: cmdGetBit,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "bitcount", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.6.0",
			Summary: "Count set bits in a string", Run: cmdBitCount,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "bitpos", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.8.7",
			Summary: "Find first bit set or clear in a string", Run: cmdBitPos,
			KeySpecs: key1(KeyRO | KeyAccess)},
	}
}

// ---- shared helpers ----

// expireAtOf returns key's absolute expiry in Unix ms, 0 when it has none
// or does not exist.
func expireAtOf(c *Client, key []byte) int64 {
	ms, ok := c.KS.ExpireAt(c.DB, key)
	if !ok {
		return 0
	}
	return ms
}

// putString adds to b the write of val at key in c's database with the
// given absolute expiry. An expiry at or before now deletes the key
// instead: the value would be born expired, and Redis does not keep it
// either, except on a replica (alreadyExpired).
func putString(c *Client, b *keyspace.Batch, key, val []byte, expireAt, now int64) {
	if expireAt != 0 && alreadyExpired(c, expireAt, now) {
		b.Del(c.DB, key)
		return
	}
	b.Set(c.DB, key, val, expireAt)
}

// alreadyExpired is Redis's checkAlreadyExpired: a command setting an
// expiry at or before now deletes the key at once, but a replica keeps
// the key with that expiry, hidden from reads, until its master's DEL
// (or, for a writable replica's own write, its expiry cycle; keyspace
// replica_expiry.go).
func alreadyExpired(c *Client, at, now int64) bool { return at <= now && !c.KS.IsReplica() }

// ---- SET and its relatives ----

// expireKind says which expiry option a SET or GETEX carries.
type expireKind uint8

const (
	expireNone expireKind = iota
	expireEX              // relative, seconds
	expirePX              // relative, milliseconds
	expireEXAT            // absolute, Unix seconds
	expirePXAT            // absolute, Unix milliseconds
)

// setOptions are the options of SET (and, for the subset GETEX accepts,
// of GETEX).
type setOptions struct {
	nx, xx   bool
	get      bool
	keepTTL  bool
	persist  bool // GETEX only
	expire   expireKind
	expireAt []byte // the expire option's argument, converted by expireAtMs
}

// parseSetOptions parses the option tokens of SET (getex false: args after
// key and value) or GETEX (getex true: args after the key), with Redis's
// rules: NX and XX exclude each other; EX, PX, EXAT, PXAT, KEEPTTL (and
// PERSIST for GETEX) exclude each other, but the same expiry option may be
// repeated and the last one wins; a missing expiry argument, an option the
// command does not take, or an unknown token is "ERR syntax error". The
// expiry's number is not looked at here (see expireAtMs), because Redis
// reports a syntax error anywhere before a bad number.
func parseSetOptions(args [][]byte, getex bool) (setOptions, error) {
	var o setOptions
	set := !getex
	for i := 0; i < len(args); i++ {
		a := args[i]
		hasNext := i+1 < len(args)
		// An expiry option may follow only itself (repeated) or nothing.
		expiryFree := func(k expireKind) bool {
			return !o.keepTTL && !o.persist && (o.expire == expireNone || o.expire == k)
		}
		switch {
		case set && argIs(a, "nx") && !o.xx:
			o.nx = true
		case set && argIs(a, "xx") && !o.nx:
			o.xx = true
		case set && argIs(a, "get"):
			o.get = true
		case set && argIs(a, "keepttl") && !o.persist && o.expire == expireNone:
			o.keepTTL = true
		case getex && argIs(a, "persist") && o.expire == expireNone && !o.keepTTL:
			o.persist = true
		case argIs(a, "ex") && hasNext && expiryFree(expireEX):
			o.expire, o.expireAt = expireEX, args[i+1]
			i++
		case argIs(a, "px") && hasNext && expiryFree(expirePX):
			o.expire, o.expireAt = expirePX, args[i+1]
			i++
		case argIs(a, "exat") && hasNext && expiryFree(expireEXAT):
			o.expire, o.expireAt = expireEXAT, args[i+1]
			i++
		case argIs(a, "pxat") && hasNext && expiryFree(expirePXAT):
			o.expire, o.expireAt = expirePXAT, args[i+1]
			i++
		default:
			return setOptions{}, errSyntax
		}
	}
	return o, nil
}

// expireAtMs converts an expiry option to an absolute Unix ms time, as
// Redis's getExpireMillisecondsOrReply does: the number must be an integer
// (else "value is not an integer"), positive, and must not overflow when
// converted to milliseconds or added to now (else "invalid expire time in
// '<cmd>' command"). It returns 0 when there is no expiry option.
func expireAtMs(kind expireKind, arg []byte, now int64, cmd string) (int64, error) {
	if kind == expireNone {
		return 0, nil
	}
	v, ok := parseInt64(arg)
	if !ok {
		return 0, errNotInteger
	}
	seconds := kind == expireEX || kind == expireEXAT
	if v <= 0 || (seconds && v > math.MaxInt64/1000) {
		return 0, errInvalidExpire(cmd)
	}
	if seconds {
		v *= 1000
	}
	if kind == expireEX || kind == expirePX {
		if v > math.MaxInt64-now {
			return 0, errInvalidExpire(cmd)
		}
		v += now
	}
	return v, nil
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]
func cmdSet(c *Client, args [][]byte) {
	o, err := parseSetOptions(args[3:], false)
	if err != nil {
		c.WriteErr(err)
		return
	}
	var now int64 // read only when an expiry needs it: putString ignores it for expireAt 0
	if o.expire != expireNone || o.keepTTL {
		now = c.KS.NowMs()
	}
	expireAt, err := expireAtMs(o.expire, o.expireAt, now, "set")
	if err != nil {
		c.WriteErr(err)
		return
	}
	setString(c, args[1], args[2], o, expireAt, now)
}

// setString runs a parsed SET (also SETNX, SETEX, PSETEX).
func setString(c *Client, key, val []byte, o setOptions, expireAt, now int64) {
	var old []byte
	var found bool
	if o.get {
		var err error
		if old, found, err = c.KS.Get(c.DB, key); err != nil {
			c.WriteErr(err)
			return
		}
	} else {
		// Only whether the key exists (of any type: SET overwrites it):
		// the same lookup and lazy expiry, without decoding the old value
		// from the arena (a cache miss that was a tenth of SET's CPU at
		// -P 16).
		found = c.KS.Exists(c.DB, key)
	}
	mark := len(c.Out)
	if (o.nx && found) || (o.xx && !found) {
		if o.get {
			writeBulkOrNull(c, old, found)
		} else {
			c.WriteNull()
		}
		return
	}
	if o.keepTTL && found {
		expireAt = expireAtOf(c, key)
	}
	// The old value is copied into the reply before the commit, which may
	// reuse the arena space it points to.
	if o.get {
		writeBulkOrNull(c, old, found)
	}
	b := c.KS.NewBatch()
	putString(c, b, key, val, expireAt, now)
	if commitReply(c, b, mark) {
		if !o.get {
			c.WriteOK()
		}
		notifyStringSet(c, key, o.expire != expireNone)
	}
}

// notifyStringSet sends SET's events: set, and expire if it set an expiry.
func notifyStringSet(c *Client, key []byte, expiry bool) {
	c.Notify(notifyString, "set", key)
	if expiry {
		c.Notify(notifyGeneric, "expire", key)
	}
}

func writeBulkOrNull(c *Client, val []byte, found bool) {
	if found {
		c.WriteBulk(val)
	} else {
		c.WriteNull()
	}
}

// commitReply commits b. The replies appended to c since mark were written
// in anticipation of success (that is how values read from the arena get
// copied out before the commit); if the commit fails they are dropped and
// the error is the only reply.
func commitReply(c *Client, b *keyspace.Batch, mark int) bool {
	if err := c.KS.Commit(b); err != nil {
		c.Out = c.Out[:mark]
		c.WriteErr(err)
		return false
	}
	return true
}

// SETNX key value
func cmdSetNX(c *Client, args [][]byte) {
	key := args[1]
	if c.KS.Exists(c.DB, key) {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	b.Set(c.DB, key, args[2], 0)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		c.Notify(notifyString, "set", key)
	}
}

// SETEX key seconds value
func cmdSetEx(c *Client, args [][]byte) { setWithExpiry(c, args, expireEX, "setex") }

// PSETEX key milliseconds value
func cmdPSetEx(c *Client, args [][]byte) { setWithExpiry(c, args, expirePX, "psetex") }

func setWithExpiry(c *Client, args [][]byte, kind expireKind, name string) {
	now := c.KS.NowMs()
	expireAt, err := expireAtMs(kind, args[2], now, name)
	if err != nil {
		c.WriteErr(err)
		return
	}
	b := c.KS.NewBatch()
	putString(c, b, args[1], args[3], expireAt, now)
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
		notifyStringSet(c, args[1], true)
	}
}

// GET key
func cmdGet(c *Client, args [][]byte) {
	val, found, err := c.KS.Get(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	writeBulkOrNull(c, val, found)
}

// GETSET key value
func cmdGetSet(c *Client, args [][]byte) {
	old, found, err := c.KS.Get(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	mark := len(c.Out)
	writeBulkOrNull(c, old, found)
	b := c.KS.NewBatch()
	b.Set(c.DB, args[1], args[2], 0)
	if commitReply(c, b, mark) {
		c.Notify(notifyString, "set", args[1])
	}
}

// GETDEL key
func cmdGetDel(c *Client, args [][]byte) {
	val, found, err := c.KS.Get(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !found {
		c.WriteNull()
		return
	}
	mark := len(c.Out)
	c.WriteBulk(val)
	b := c.KS.NewBatch()
	b.Del(c.DB, args[1])
	if commitReply(c, b, mark) {
		c.Notify(notifyGeneric, "del", args[1])
	}
}

// GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]
func cmdGetEx(c *Client, args [][]byte) {
	o, err := parseSetOptions(args[2:], true)
	if err != nil {
		c.WriteErr(err)
		return
	}
	key := args[1]
	val, found, err := c.KS.Get(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !found {
		c.WriteNull() // Redis answers before it looks at the expiry's number
		return
	}
	now := c.KS.NowMs()
	expireAt, err := expireAtMs(o.expire, o.expireAt, now, "getex")
	if err != nil {
		c.WriteErr(err)
		return
	}
	mark := len(c.Out)
	c.WriteBulk(val)
	b := c.KS.NewBatch()
	event := "expire"
	switch {
	case o.expire != expireNone && !alreadyExpired(c, expireAt, now):
		c.KS.SetExpire(b, c.DB, key, expireAt) // a large value by reference, not copied
	case o.expire != expireNone:
		putString(c, b, key, val, expireAt, now)
		if o.expire == expireEXAT || o.expire == expirePXAT {
			event = "del"
		}
	case o.persist && expireAtOf(c, key) != 0:
		c.KS.SetExpire(b, c.DB, key, 0)
		event = "persist"
	default:
		return // nothing to change
	}
	if commitReply(c, b, mark) {
		c.Notify(notifyGeneric, event, key)
	}
}

// MSET key value [key value ...]
func cmdMSet(c *Client, args [][]byte) {
	if len(args)%2 == 0 {
		c.WriteError(WrongArgs("mset"))
		return
	}
	b := c.KS.NewBatch()
	for i := 1; i < len(args); i += 2 {
		b.Set(c.DB, args[i], args[i+1], 0)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
		notifyEach(c, notifyString, "set", args[1:], 2)
	}
}

// MSETNX key value [key value ...]
func cmdMSetNX(c *Client, args [][]byte) {
	if len(args)%2 == 0 {
		c.WriteError(WrongArgs("msetnx"))
		return
	}
	for i := 1; i < len(args); i += 2 {
		if c.KS.Exists(c.DB, args[i]) {
			c.WriteInt(0)
			return
		}
	}
	b := c.KS.NewBatch()
	for i := 1; i < len(args); i += 2 {
		b.Set(c.DB, args[i], args[i+1], 0)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		notifyEach(c, notifyString, "set", args[1:], 2)
	}
}

// MGET key [key ...]: a key that is missing or not a string reads as nil.
func cmdMGet(c *Client, args [][]byte) {
	c.WriteArray(len(args) - 1)
	for _, key := range args[1:] {
		val, found, err := c.KS.Get(c.DB, key)
		writeBulkOrNull(c, val, found && err == nil)
	}
}

// ---- counters ----

func cmdIncr(c *Client, args [][]byte) { incrBy(c, args[1], 1) }
func cmdDecr(c *Client, args [][]byte) { incrBy(c, args[1], -1) }

// INCRBY key increment
func cmdIncrBy(c *Client, args [][]byte) {
	n, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	incrBy(c, args[1], n)
}

// DECRBY key decrement
func cmdDecrBy(c *Client, args [][]byte) {
	n, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if n == math.MinInt64 {
		c.WriteError("ERR decrement would overflow") // -n does not exist
		return
	}
	incrBy(c, args[1], -n)
}

// addInt64 returns a+b, and false when the sum overflows (Redis's check).
func addInt64(a, b int64) (int64, bool) {
	if (b < 0 && a < 0 && b < math.MinInt64-a) || (b > 0 && a > 0 && b > math.MaxInt64-a) {
		return 0, false
	}
	return a + b, true
}

func incrBy(c *Client, key []byte, delta int64) {
	val, found, err := c.KS.Get(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	var cur int64
	if found {
		var ok bool
		if cur, ok = parseInt64(val); !ok {
			c.WriteErr(errNotInteger)
			return
		}
	}
	n, ok := addInt64(cur, delta)
	if !ok {
		c.WriteErr(errOverflow)
		return
	}
	var buf [20]byte
	b := c.KS.NewBatch()
	b.Set(c.DB, key, strconv.AppendInt(buf[:0], n, 10), expireAtOf(c, key))
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(n)
		c.Notify(notifyString, "incrby", key)
	}
}

// INCRBYFLOAT key increment. Redis checks the key's type, then the stored
// value, then the increment; the reply is the new value as a bulk string.
func cmdIncrByFloat(c *Client, args [][]byte) {
	key := args[1]
	incr, incrOK := parseLongDouble(args[2])
	val, found, err := c.KS.Get(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	cur := newLongDouble()
	if found {
		var ok bool
		if cur, ok = parseLongDouble(val); !ok {
			c.WriteErr(errNotFloat)
			return
		}
	}
	if !incrOK {
		c.WriteErr(errNotFloat)
		return
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.WriteErr(errNaNOrInf)
		return
	}
	s := formatLongDouble(sum)
	b := c.KS.NewBatch()
	b.Set(c.DB, key, []byte(s), expireAtOf(c, key))
	if commitReply(c, b, len(c.Out)) {
		c.WriteBulkString(s)
		c.Notify(notifyString, "incrbyfloat", key)
	}
}

// ---- APPEND, STRLEN, GETRANGE, SETRANGE ----

// patchThreshold: APPEND, SETRANGE, SETBIT, BITFIELD and the HLL commands
// change a string at least this long by logging only the bytes they
// change (keyspace Batch.SetRange) instead of the whole new value, so
// they cost O(change), not O(length). A string of at most
// encEmbstrMaxLen bytes is patched too, so that it reads as raw (see
// rawString); one in between is written whole.
const patchThreshold = 1024

// patchString reports whether a change in place of a string of oldLen
// bytes (found: it exists) that leaves newLen bytes is logged as a patch:
// a long string's, for its cost, and a short result's, to make it raw.
func patchString(found bool, oldLen, newLen int64) bool {
	return found && oldLen >= patchThreshold || newLen <= encEmbstrMaxLen
}

// Raw strings. Redis 7.0's OBJECT ENCODING is "raw" for a string it
// changed in place (APPEND to an existing key, SETRANGE, SETBIT and
// BITFIELD's writes unshare the value first: even a SETBIT that changes
// no bit, or an APPEND of nothing) or built itself (SETRANGE, SETBIT or
// BITFIELD on a missing key, BITOP's destination), whatever its bytes; a
// string written whole has the encoding tryObjectEncoding gives its
// bytes (stringEncoding), and RENAME, MOVE and COPY keep the encoding.
// The keyspace holds a string changed by Batch.SetRange as a patched
// string, which keyspace.ObjectEncoding reports as raw, so these commands
// write a short result with SetRange, and markRaw's empty patch makes raw
// a short string they write whole. Only a string of at most
// encEmbstrMaxLen bytes needs this: a longer one is raw by its bytes, and
// is written whole (under patchThreshold) so that it stays in the log,
// not in DRAM. (The log cleaner rewrites a patched string whole, after
// which its bytes decide again, as after a Redis restart.)

// markRaw appends to b an empty patch of key, a string once b's earlier
// operations have run, which makes it a patched (raw) string.
func markRaw(b *keyspace.Batch, db int, key []byte) { b.SetRange(db, key, 0, nil) }

// rawString reports whether key in db holds a patched string (raw).
func rawString(c *Client, db int, key []byte) bool {
	enc, isString, ok := c.KS.ObjectEncoding(db, key)
	return ok && !isString && enc == "raw"
}

// needsRawMark reports whether the existing string key of n bytes would
// not read as raw without markRaw.
func needsRawMark(c *Client, key []byte, n int) bool {
	return n <= encEmbstrMaxLen && !rawString(c, c.DB, key)
}

// APPEND key value: to an existing key a patch (the old bytes are not
// read) when patchString says so, else the whole new value; a missing key
// is SET.
func cmdAppend(c *Client, args [][]byte) {
	key, tail := args[1], args[2]
	oldLen, found, err := c.KS.StringLen(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	b := c.KS.NewBatch()
	n := int64(len(tail))
	switch {
	case !found:
		b.Set(c.DB, key, tail, 0) // tryObjectEncoding's encoding, as Redis
	case c.CheckStringLength(int64(oldLen), n) != nil:
		c.WriteErr(c.CheckStringLength(int64(oldLen), n))
		return
	case patchString(true, int64(oldLen), int64(oldLen)+n):
		if len(tail) > 0 || needsRawMark(c, key, oldLen) {
			b.SetRange(c.DB, key, int64(oldLen), tail)
		}
		n += int64(oldLen)
	default:
		old, _, _ := c.KS.Get(c.DB, key)
		val := make([]byte, 0, len(old)+len(tail))
		val = append(append(val, old...), tail...)
		b.Set(c.DB, key, val, expireAtOf(c, key))
		n += int64(oldLen)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(n)
		c.Notify(notifyString, "append", key)
	}
}

// STRLEN key
func cmdStrlen(c *Client, args [][]byte) {
	n, _, err := c.KS.StringLen(c.DB, args[1]) // a large patched string is not built to be measured
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteInt(int64(n))
}

// parseRange parses the start and end arguments of GETRANGE.
func parseRange(startArg, endArg []byte) (start, end int64, err error) {
	if start, err = argInt64(startArg); err != nil {
		return 0, 0, err
	}
	if end, err = argInt64(endArg); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}

// substring returns s[start..end] (inclusive, negative counting from the
// end) with GETRANGE's clamping rules.
func substring(s []byte, start, end int64) []byte {
	if start < 0 && end < 0 && start > end {
		return nil // checked before clamping, as Redis does (-1 -5 is empty)
	}
	start, end, ok := clampRange(start, end, int64(len(s)))
	if !ok {
		return nil
	}
	return s[start : end+1]
}

// clampRange resolves an inclusive index range over n items with Redis's
// rules (negative counts from the end; out-of-range ends are clamped); ok is
// false when the range is empty. GETRANGE, BITCOUNT and BITPOS share it.
func clampRange(start, end, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, n-1)
	return start, end, start <= end
}

// GETRANGE key start end (also SUBSTR)
func cmdGetRange(c *Client, args [][]byte) {
	start, end, err := parseRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	val, _, err := c.KS.Get(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteBulk(substring(val, start, end))
}

// parseSetRangeOffset parses SETRANGE's offset: an integer, not negative.
func parseSetRangeOffset(b []byte) (int64, error) {
	off, err := argInt64(b)
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, replyError("ERR offset is out of range")
	}
	return off, nil
}

// SETRANGE key offset value
func cmdSetRange(c *Client, args [][]byte) {
	key, patch := args[1], args[3]
	off, err := parseSetRangeOffset(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	oldLen, found, err := c.KS.StringLen(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if len(patch) == 0 {
		c.WriteInt(int64(oldLen)) // nothing to write; a missing key stays missing
		return
	}
	if err := c.CheckStringLength(off, int64(len(patch))); err != nil {
		c.WriteErr(err)
		return
	}
	size := max(int64(oldLen), off+int64(len(patch)))
	b := c.KS.NewBatch()
	if patchString(found, int64(oldLen), size) {
		b.SetRange(c.DB, key, off, patch) // the old bytes not read; a missing key is zeros up to off
	} else {
		old, _, _ := c.KS.Get(c.DB, key)
		val := make([]byte, size)
		copy(val, old)
		copy(val[off:], patch)
		var expireAt int64
		if found {
			expireAt = expireAtOf(c, key)
		}
		b.Set(c.DB, key, val, expireAt)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(size)
		c.Notify(notifyString, "setrange", key)
	}
}

// ---- bitmaps ----

var (
	errBitOffset = replyError("ERR bit offset is not an integer or out of range")
	errBitValue  = replyError("ERR bit is not an integer or out of range")
	errBitArg    = replyError("ERR The bit argument must be 1 or 0.")
)

// parseBitOffset parses the offset of SETBIT and GETBIT: an integer from 0
// to 8*limit - 1, limit being proto-max-bulk-len (Client.StringLimit).
func parseBitOffset(b []byte, limit int64) (int64, error) {
	off, ok := parseInt64(b)
	if !ok || off < 0 || off>>3 >= limit {
		return 0, errBitOffset
	}
	return off, nil
}

// parseBitValue parses SETBIT's value: 0 or 1.
func parseBitValue(b []byte) (byte, error) {
	v, ok := parseInt64(b)
	if !ok || v&^1 != 0 {
		return 0, errBitValue
	}
	return byte(v), nil
}

// SETBIT key offset value: the string grows (zero-filled) to hold the bit.
// The reply is the bit's old value.
func cmdSetBit(c *Client, args [][]byte) {
	key := args[1]
	off, err := parseBitOffset(args[2], c.StringLimit())
	if err != nil {
		c.WriteErr(err)
		return
	}
	on, err := parseBitValue(args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	old, found, err := c.KS.Get(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	idx := off >> 3
	mask := byte(0x80) >> (off & 7)
	var oldBit byte
	if idx < int64(len(old)) && old[idx]&mask != 0 {
		oldBit = 1
	}
	if found && idx < int64(len(old)) && oldBit == on {
		// Nothing changes, but Redis has made the string raw.
		if needsRawMark(c, key, len(old)) {
			b := c.KS.NewBatch()
			markRaw(b, c.DB, key)
			if !commitReply(c, b, len(c.Out)) {
				return
			}
		}
		c.WriteInt(int64(oldBit))
		return
	}
	size := max(int64(len(old)), idx+1)
	b := c.KS.NewBatch()
	if patchString(found, int64(len(old)), size) {
		var nb byte
		if idx < int64(len(old)) {
			nb = old[idx]
		}
		if on == 1 {
			nb |= mask
		} else {
			nb &^= mask
		}
		b.SetRange(c.DB, key, idx, []byte{nb}) // the one byte; a missing key is zeros up to it
	} else {
		val := make([]byte, size)
		copy(val, old)
		if on == 1 {
			val[idx] |= mask
		} else {
			val[idx] &^= mask
		}
		var expireAt int64
		if found {
			expireAt = expireAtOf(c, key)
		}
		b.Set(c.DB, key, val, expireAt)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(oldBit))
		c.Notify(notifyString, "setbit", key)
	}
}

// GETBIT key offset: bits past the end of the string are 0.
func cmdGetBit(c *Client, args [][]byte) {
	off, err := parseBitOffset(args[2], c.StringLimit())
	if err != nil {
		c.WriteErr(err)
		return
	}
	val, _, err := c.KS.Get(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	var bit int64
	if idx := off >> 3; idx < int64(len(val)) && val[idx]&(0x80>>(off&7)) != 0 {
		bit = 1
	}
	c.WriteInt(bit)
}

// bitRange is the optional range of BITCOUNT and BITPOS.
type bitRange struct {
	given    bool  // a start (and for BITCOUNT an end) was given
	start    int64 // in bytes, or bits when bitUnit
	end      int64
	endGiven bool // BITPOS: the end was given, so the range is not zero-padded
	bitUnit  bool // BIT: start and end count bits
	// empty: BITCOUNT's negative start > negative end, which Redis answers
	// with 0 before it looks at the unit argument.
	empty bool
}

// parseBitCountRange parses BITCOUNT's arguments after the key: nothing, or
// start end [BYTE|BIT]. Errors come in Redis's order (start, end, the
// empty negative range, then the unit).
func parseBitCountRange(args [][]byte) (bitRange, error) {
	var r bitRange
	switch len(args) {
	case 0:
		return r, nil
	case 2, 3:
	default:
		return r, errSyntax
	}
	var err error
	if r.start, r.end, err = parseRange(args[0], args[1]); err != nil {
		return bitRange{}, err
	}
	r.given, r.endGiven = true, true
	if r.start < 0 && r.end < 0 && r.start > r.end {
		r.empty = true
		return r, nil
	}
	if len(args) == 3 {
		if r.bitUnit, err = parseBitUnit(args[2]); err != nil {
			return bitRange{}, err
		}
	}
	return r, nil
}

func parseBitUnit(b []byte) (bitUnit bool, err error) {
	switch {
	case argIs(b, "bit"):
		return true, nil
	case argIs(b, "byte"):
		return false, nil
	}
	return false, errSyntax
}

// parseBitPosBit parses BITPOS's bit argument: 0 or 1.
func parseBitPosBit(b []byte) (byte, error) {
	v, err := argInt64(b)
	if err != nil {
		return 0, err
	}
	if v != 0 && v != 1 {
		return 0, errBitArg
	}
	return byte(v), nil
}

// parseBitPosRange parses BITPOS's arguments after the bit: nothing, start,
// start end, or start end BYTE|BIT, in Redis's order (start, unit, end).
func parseBitPosRange(args [][]byte) (bitRange, error) {
	var r bitRange
	if len(args) == 0 {
		return r, nil
	}
	if len(args) > 3 {
		return r, errSyntax
	}
	var err error
	if r.start, err = argInt64(args[0]); err != nil {
		return bitRange{}, err
	}
	r.given = true
	if len(args) == 3 {
		if r.bitUnit, err = parseBitUnit(args[2]); err != nil {
			return bitRange{}, err
		}
	}
	if len(args) >= 2 {
		if r.end, err = argInt64(args[1]); err != nil {
			return bitRange{}, err
		}
		r.endGiven = true
	}
	return r, nil
}

// bitSpan resolves r against a string of n bytes to an inclusive range of
// bit positions, with Redis's rules for negative and out-of-range indexes.
// ok is false when the range is empty.
func (r bitRange) bitSpan(n int64) (first, last int64, ok bool) {
	if !r.given {
		return 0, n*8 - 1, n > 0
	}
	total := n
	start, end := r.start, r.end
	if !r.endGiven {
		end = total - 1 // BITPOS key bit start: to the end of the string
		if r.bitUnit {
			end = total*8 + 7
		}
	}
	if r.bitUnit {
		total *= 8
	}
	start, end, ok = clampRange(start, end, total)
	if !ok {
		return 0, 0, false
	}
	if r.bitUnit {
		return start, end, true
	}
	return start * 8, end*8 + 7, true
}

// countBits counts the set bits of s at positions first..last (inclusive,
// most significant bit of s[0] is position 0).
func countBits(s []byte, first, last int64) int64 {
	lo, hi := first>>3, last>>3
	var n int
	for _, b := range s[lo : hi+1] {
		n += bits.OnesCount8(b)
	}
	// Take away the bits of the edge bytes that lie outside the range.
	n -= bits.OnesCount8(s[lo] & ^(byte(0xff) >> (first & 7)))
	n -= bits.OnesCount8(s[hi] & (byte(0xff) >> (last&7 + 1)))
	return int64(n)
}

// bitCount is BITCOUNT's answer for string s and range r.
func bitCount(s []byte, r bitRange) int64 {
	if r.empty {
		return 0
	}
	first, last, ok := r.bitSpan(int64(len(s)))
	if !ok {
		return 0
	}
	return countBits(s, first, last)
}

// findBit returns the position of the first bit equal to bit in s at
// positions first..last, or -1.
func findBit(s []byte, bit byte, first, last int64) int64 {
	skip := byte(0) // a byte with no bit of interest
	if bit == 0 {
		skip = 0xff
	}
	for pos := first; pos <= last; {
		if pos&7 == 0 && pos+7 <= last && s[pos>>3] == skip {
			pos += 8
			continue
		}
		if (s[pos>>3]>>(7-(pos&7)))&1 == bit {
			return pos
		}
		pos++
	}
	return -1
}

// bitPos is BITPOS's answer for string s (which exists), bit and range r.
// Looking for a 0 without an explicit end treats the string as followed by
// zeros, so "not found" is the first position after the range; with an
// explicit end it is -1, as for a 1.
func bitPos(s []byte, bit byte, r bitRange) int64 {
	first, last, ok := r.bitSpan(int64(len(s)))
	if !ok {
		return -1
	}
	if pos := findBit(s, bit, first, last); pos >= 0 {
		return pos
	}
	if bit == 1 || r.endGiven {
		return -1
	}
	return last + 1
}

// BITCOUNT key [start end [BYTE|BIT]]. Redis looks the key up before it
// parses the range: a missing key answers 0 whatever the arguments.
func cmdBitCount(c *Client, args [][]byte) {
	r, parseErr := parseBitCountRange(args[2:])
	val, found, err := c.KS.Get(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !found {
		c.WriteInt(0)
		return
	}
	if parseErr != nil {
		c.WriteErr(parseErr)
		return
	}
	if r.given && r.start < 0 && r.end < 0 && r.start > r.end {
		c.WriteInt(0) // checked before clamping, as Redis's BITCOUNT does (BITPOS does not)
		return
	}
	c.WriteInt(bitCount(val, r))
}

// BITPOS key bit [start [end [BYTE|BIT]]]. The bit is checked first; a
// missing key is an endless run of zeros (0 for bit 0, -1 for bit 1)
// whatever the range arguments, as in Redis.
func cmdBitPos(c *Client, args [][]byte) {
	bit, err := parseBitPosBit(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	r, parseErr := parseBitPosRange(args[3:])
	val, found, err := c.KS.Get(c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !found {
		if bit == 1 {
			c.WriteInt(-1)
		} else {
			c.WriteInt(0)
		}
		return
	}
	if parseErr != nil {
		c.WriteErr(parseErr)
		return
	}
	c.WriteInt(bitPos(val, bit, r))
}

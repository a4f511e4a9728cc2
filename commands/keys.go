package commands

import (
	"math"
	"strconv"
	"strings"

	"github.com/persimmon-db/persimmon/hll"
	"github.com/persimmon-db/persimmon/keyspace"
)

// Generic key commands (redis.io group "generic", and the keyspace-wide
// "server" commands DBSIZE, FLUSHDB, FLUSHALL, SWAPDB).
//
// Changing only a key's TTL (EXPIRE, PERSIST) is written as a re-Set of the
// same value with the new expiry: the keyspace has no separate TTL record,
// and one Set keeps the command a single atomic record. Moving a key
// (RENAME, MOVE) is a Del and a Set in one batch.

func keyCommands() []Command {
	const w, r, fast = FlagWrite, FlagReadonly, FlagFast
	return []Command{
		{Name: "del", Arity: -2, Flags: w, FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Delete a key", Run: cmdDel,
			KeySpecs: []KeySpec{keyRange(KeyRM|KeyDelete, 1, -1, 1)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}},
		{Name: "unlink", Arity: -2, Flags: w | fast, FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "4.0.0",
			Summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", Run: cmdDel,
			KeySpecs: []KeySpec{keyRange(KeyRM|KeyDelete, 1, -1, 1)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}},
		{Name: "exists", Arity: -2, Flags: r | fast, FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Determine if a key exists", Run: cmdExists,
			KeySpecs: []KeySpec{keyRange(KeyRO, 1, -1, 1)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}},
		{Name: "touch", Arity: -2, Flags: r | fast, FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "3.2.1",
			Summary: "Alters the last access time of a key(s). Returns the number of existing keys specified.", Run: cmdTouch,
			KeySpecs: []KeySpec{keyRange(KeyRO, 1, -1, 1)}, Tips: []string{"request_policy:multi_shard", "response_policy:agg_sum"}},
		{Name: "type", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Determine the type stored at key", Run: cmdType,
			KeySpecs: key1(KeyRO)},
		{Name: "expire", Arity: -3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Set a key's time to live in seconds", Run: cmdExpire,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "pexpire", Arity: -3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0",
			Summary: "Set a key's time to live in milliseconds", Run: cmdPExpire,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "expireat", Arity: -3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.2.0",
			Summary: "Set the expiration for a key as a UNIX timestamp", Run: cmdExpireAt,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "pexpireat", Arity: -3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0",
			Summary: "Set the expiration for a key as a UNIX timestamp specified in milliseconds", Run: cmdPExpireAt,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "ttl", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Get the time to live for a key in seconds", Run: cmdTTL,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
		{Name: "pttl", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0",
			Summary: "Get the time to live for a key in milliseconds", Run: cmdPTTL,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
		{Name: "expiretime", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "7.0.0",
			Summary: "Get the expiration Unix timestamp for a key", Run: cmdExpireTime,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "pexpiretime", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "7.0.0",
			Summary: "Get the expiration Unix timestamp for a key in milliseconds", Run: cmdPExpireTime,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "persist", Arity: 2, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.2.0",
			Summary: "Remove the expiration from a key", Run: cmdPersist,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "rename", Arity: 3, Flags: w, FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Rename a key", Run: cmdRename,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 1), keyAt(KeyOW|KeyUpdate, 2)}},
		{Name: "renamenx", Arity: 3, Flags: w | fast, FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Rename a key, only if the new key does not exist", Run: cmdRenameNX,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 1), keyAt(KeyOW|KeyInsert, 2)}},
		{Name: "copy", Arity: -3, Flags: w | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "6.2.0",
			Summary: "Copy a key", Run: cmdCopy, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyRO|KeyAccess, 1), keyAt(KeyOW|KeyUpdate, 2)}},
		{Name: "move", Arity: 3, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
			Summary: "Move a key to another database", Run: cmdMove,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "swapdb", Arity: 3, Flags: w | fast, Group: "server", Since: "4.0.0",
			Summary: "Swaps two Redis databases", Run: cmdSwapDB,
			ACL: []string{"@keyspace", "@dangerous"}},
		{Name: "keys", Arity: 2, Flags: r, Group: "generic", Since: "1.0.0",
			Summary: "Find all keys matching the given pattern", Run: cmdKeys,
			ACL: []string{"@dangerous"}, Tips: []string{"request_policy:all_shards", "nondeterministic_output_order"}},
		{Name: "scan", Arity: -2, Flags: r, Group: "generic", Since: "2.8.0",
			Summary: "Incrementally iterate the keys space", Run: cmdScan,
			Tips: []string{"nondeterministic_output", "request_policy:special"}},
		{Name: "randomkey", Arity: 1, Flags: r, Group: "generic", Since: "1.0.0",
			Summary: "Return a random key from the keyspace", Run: cmdRandomKey,
			Tips: []string{"request_policy:all_shards", "nondeterministic_output"}},
		{Name: "dbsize", Arity: 1, Flags: r | fast, Group: "server", Since: "1.0.0",
			Summary: "Return the number of keys in the selected database", Run: cmdDBSize,
			ACL: []string{"@keyspace"}, Tips: []string{"request_policy:all_shards", "response_policy:agg_sum"}},
		{Name: "flushdb", Arity: -1, Flags: w, Group: "server", Since: "1.0.0",
			Summary: "Remove all keys from the current database", Run: cmdFlushDB,
			ACL: []string{"@keyspace", "@dangerous"}, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}},
		{Name: "flushall", Arity: -1, Flags: w, Group: "server", Since: "1.0.0",
			Summary: "Remove all keys from all databases", Run: cmdFlushAll,
			ACL: []string{"@keyspace", "@dangerous"}, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}},
		{Name: "object", Arity: -2, Group: "generic", Since: "2.2.3",
			Summary: "A container for object introspection commands", Subcommands: objectSubcommands()},
	}
}

// ---- existence, type, deletion ----

// DEL key [key ...] (also UNLINK): the number of keys removed. A key named
// twice is removed, and counted, once. A value above the lazy free
// threshold removed by UNLINK, or by DEL under lazyfree-lazy-user-del, is
// counted in INFO lazyfreed_objects (keyspace/lazyfree.go).
func cmdDel(c *Client, args [][]byte) {
	keys := args[1:]
	var seen map[string]struct{}
	if len(keys) > 1 {
		seen = make(map[string]struct{}, len(keys))
	}
	b := c.KS.NewBatch()
	var n, big int64
	var deleted [][]byte // for the notifications
	for _, key := range keys {
		if seen != nil {
			if _, dup := seen[string(key)]; dup {
				continue
			}
			seen[string(key)] = struct{}{}
		}
		if c.KS.Exists(c.DB, key) {
			b.Del(c.DB, key)
			n++
			deleted = append(deleted, key)
			if c.KS.FreeEffort(c.DB, key) > keyspace.LazyFreeThreshold {
				big++
			}
		}
	}
	if n == 0 {
		c.WriteInt(0)
		return
	}
	if commitReply(c, b, len(c.Out)) {
		if big > 0 && (argIs(args[0], "unlink") || configIs(c, "lazyfree-lazy-user-del", "yes")) {
			c.KS.CountLazyFreed(big)
		}
		c.WriteInt(n)
		notifyEach(c, notifyGeneric, "del", deleted, 1)
	}
}

// configIs reports whether the server's setting name is value (false for
// a client with no server: the package's own tests).
func configIs(c *Client, name, value string) bool {
	if c == nil || c.Srv == nil {
		return false
	}
	v, _ := c.Srv.ConfigValue(name)
	return v == value
}

// TOUCH key [key ...]: as EXISTS, but each key found counts as accessed
// (OBJECT IDLETIME).
func cmdTouch(c *Client, args [][]byte) {
	var n int64
	for _, key := range args[1:] {
		if c.KS.Touch(c.DB, key) {
			n++
		}
	}
	c.WriteInt(n)
}

// EXISTS key [key ...]: the number of named keys that exist, counting a
// key as often as it is named. It is no access (OBJECT IDLETIME).
func cmdExists(c *Client, args [][]byte) {
	var n int64
	for _, key := range args[1:] {
		if c.KS.Exists(c.DB, key) {
			n++
		}
	}
	c.WriteInt(n)
}

// TYPE key
func cmdType(c *Client, args [][]byte) {
	c.WriteString(c.KS.Type(c.DB, args[1]))
}

// ---- expiry ----

// expireFlags are the NX|XX|GT|LT options of the EXPIRE family.
type expireFlags struct {
	nx, xx, gt, lt bool
}

// parseExpireFlags parses the options after EXPIRE's key and time, with
// Redis 7's rules: an unknown token is "ERR Unsupported option <token>";
// NX with any other is refused, then GT with LT.
func parseExpireFlags(args [][]byte) (expireFlags, error) {
	var f expireFlags
	for _, a := range args {
		switch {
		case argIs(a, "nx"):
			f.nx = true
		case argIs(a, "xx"):
			f.xx = true
		case argIs(a, "gt"):
			f.gt = true
		case argIs(a, "lt"):
			f.lt = true
		default:
			return expireFlags{}, replyError("ERR Unsupported option " + string(cString(a))) // Redis prints it with %s
		}
	}
	if f.nx && (f.xx || f.gt || f.lt) {
		return expireFlags{}, replyError("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if f.gt && f.lt {
		return expireFlags{}, replyError("ERR GT and LT options at the same time are not compatible")
	}
	return f, nil
}

// allow reports whether the flags let a key whose current expiry is cur
// (0 = none, which GT and LT treat as infinite) take the new expiry when.
func (f expireFlags) allow(cur, when int64) bool {
	switch {
	case f.nx && cur != 0:
		return false
	case f.xx && cur == 0:
		return false
	case f.gt && (cur == 0 || when <= cur):
		return false
	case f.lt && cur != 0 && when >= cur:
		return false
	}
	return true
}

// expireArgs is a parsed EXPIRE, PEXPIRE, EXPIREAT or PEXPIREAT.
type expireArgs struct {
	when  int64 // absolute Unix ms; may be in the past
	flags expireFlags
}

// parseExpire parses args[2:] of the EXPIRE family. seconds says the time
// is in seconds; base is added to it (now for EXPIRE and PEXPIRE, 0 for the
// AT forms). Negative times are allowed (they delete the key); conversion
// or addition overflow is "invalid expire time". The flags are checked
// before the number, as in Redis.
func parseExpire(args [][]byte, seconds bool, base int64, cmd string) (expireArgs, error) {
	flags, err := parseExpireFlags(args[1:])
	if err != nil {
		return expireArgs{}, err
	}
	when, err := argInt64(args[0])
	if err != nil {
		return expireArgs{}, err
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return expireArgs{}, errInvalidExpire(cmd)
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		return expireArgs{}, errInvalidExpire(cmd)
	}
	return expireArgs{when: when + base, flags: flags}, nil
}

func cmdExpire(c *Client, args [][]byte)   { expireGeneric(c, args, true, true, "expire") }
func cmdPExpire(c *Client, args [][]byte)  { expireGeneric(c, args, false, true, "pexpire") }
func cmdExpireAt(c *Client, args [][]byte) { expireGeneric(c, args, true, false, "expireat") }
func cmdPExpireAt(c *Client, args [][]byte) {
	expireGeneric(c, args, false, false, "pexpireat")
}

// expireGeneric runs EXPIRE key time [NX|XX|GT|LT] and its variants. The
// reply is 1 when the expiry was set (or the key deleted because the time
// is already past), 0 when the key is missing or a flag refused it.
func expireGeneric(c *Client, args [][]byte, seconds, relative bool, cmd string) {
	now := c.KS.NowMs()
	base := int64(0)
	if relative {
		base = now
	}
	e, err := parseExpire(args[2:], seconds, base, cmd)
	if err != nil {
		c.WriteErr(err)
		return
	}
	key := args[1]
	cur, ok := c.KS.ExpireAt(c.DB, key)
	if !ok || !e.flags.allow(cur, e.when) {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	event := "expire"
	if alreadyExpired(c, e.when, now) {
		b.Del(c.DB, key)
		event = "del"
	} else {
		c.KS.SetExpire(b, c.DB, key, e.when)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		c.Notify(notifyGeneric, event, key)
	}
}

// ttlReply is the reply of TTL, PTTL, EXPIRETIME and PEXPIRETIME for a key
// whose expiry is expireAt (ok false: the key does not exist): -2 for a
// missing key, -1 for no expiry. TTL and EXPIRETIME round to the nearest
// second; the addition is unsigned, as Redis's compiled code does it, so an
// expiry near the int64 limit gives Redis's answer rather than a negative
// number.
func ttlReply(expireAt int64, ok bool, now int64, ms, absolute bool) int64 {
	if !ok {
		return -2
	}
	if expireAt == 0 {
		return -1
	}
	t := expireAt
	if !absolute {
		t -= now
	}
	if t < 0 {
		t = 0
	}
	if ms {
		return t
	}
	return int64((uint64(t) + 500) / 1000)
}

func cmdTTL(c *Client, args [][]byte)         { ttlGeneric(c, args[1], false, false) }
func cmdPTTL(c *Client, args [][]byte)        { ttlGeneric(c, args[1], true, false) }
func cmdExpireTime(c *Client, args [][]byte)  { ttlGeneric(c, args[1], false, true) }
func cmdPExpireTime(c *Client, args [][]byte) { ttlGeneric(c, args[1], true, true) }

func ttlGeneric(c *Client, key []byte, ms, absolute bool) {
	expireAt, ok := c.KS.ExpireAt(c.DB, key)
	c.WriteInt(ttlReply(expireAt, ok, c.KS.NowMs(), ms, absolute))
}

// PERSIST key: 1 if an expiry was removed.
func cmdPersist(c *Client, args [][]byte) {
	key := args[1]
	cur, ok := c.KS.ExpireAt(c.DB, key)
	if !ok || cur == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	c.KS.SetExpire(b, c.DB, key, 0)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		c.Notify(notifyGeneric, "persist", key)
	}
}

// ---- RENAME, COPY, MOVE, SWAPDB ----

func cmdRename(c *Client, args [][]byte)   { renameGeneric(c, args[1], args[2], false) }
func cmdRenameNX(c *Client, args [][]byte) { renameGeneric(c, args[1], args[2], true) }

// renameGeneric runs RENAME src dst (nx false: replies OK) or RENAMENX (1
// when renamed, 0 when dst exists). The TTL travels with the value. A
// missing src is an error even when src and dst are the same key.
func renameGeneric(c *Client, src, dst []byte, nx bool) {
	if !c.KS.Exists(c.DB, src) {
		c.WriteErr(errNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.WriteInt(0)
		} else {
			c.WriteOK()
		}
		return
	}
	existed := c.KS.Exists(c.DB, dst)
	if nx && existed {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	c.KS.MoveValue(b, c.DB, src, c.DB, dst, expireAtOf(c, src)) // a large string by reference
	keepRaw(c, b, c.DB, src, c.DB, dst)
	b.Del(c.DB, src)
	if !commitReply(c, b, len(c.Out)) {
		return
	}
	if existed {
		c.Notify(notifyNew, "new", dst) // Redis deletes dst and adds it again
	}
	c.Notify(notifyGeneric, "rename_from", src)
	c.Notify(notifyGeneric, "rename_to", dst)
	if nx {
		c.WriteInt(1)
	} else {
		c.WriteOK()
	}
}

// copyOptions are COPY's options.
type copyOptions struct {
	db      int // destination database
	replace bool
}

// parseCopyOptions parses COPY's arguments after the two keys: DB n and
// REPLACE in any order, repeats allowed (the last DB wins); curDB is the
// default destination.
func parseCopyOptions(args [][]byte, curDB int) (copyOptions, error) {
	o := copyOptions{db: curDB}
	for i := 0; i < len(args); i++ {
		switch {
		case argIs(args[i], "replace"):
			o.replace = true
		case argIs(args[i], "db") && i+1 < len(args):
			db, err := argDB(args[i+1])
			if err != nil {
				return copyOptions{}, err
			}
			o.db = db
			i++
		default:
			return copyOptions{}, errSyntax
		}
	}
	return o, nil
}

// COPY source destination [DB n] [REPLACE]: 1 if copied, 0 if source is
// missing or destination exists without REPLACE. The TTL is copied too.
func cmdCopy(c *Client, args [][]byte) {
	src, dst := args[1], args[2]
	o, err := parseCopyOptions(args[3:], c.DB)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if o.db == c.DB && string(src) == string(dst) {
		c.WriteErr(errSameObject)
		return
	}
	if !c.KS.Exists(c.DB, src) {
		c.WriteInt(0)
		return
	}
	c.KS.CountLookups(false) // the destination is written, not read (COPY counts only src)
	existed := c.KS.Exists(o.db, dst)
	if !o.replace && existed {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	c.KS.CopyValue(b, c.DB, src, o.db, dst, expireAtOf(c, src))
	keepRaw(c, b, c.DB, src, o.db, dst)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		if existed {
			c.NotifyDB(notifyNew, "new", dst, o.db) // Redis deletes dst and adds it again
		}
		c.NotifyDB(notifyGeneric, "copy_to", dst, o.db)
	}
}

// keepRaw appends to b, after the operations that copy (srcDB, src) to
// (dstDB, dst), what keeps a short raw string raw at dst: Redis's RENAME
// and MOVE move the object, and COPY duplicates its encoding.
func keepRaw(c *Client, b *keyspace.Batch, srcDB int, src []byte, dstDB int, dst []byte) {
	if n, ok, _ := c.KS.StringLen(srcDB, src); ok && n <= encEmbstrMaxLen && rawString(c, srcDB, src) {
		markRaw(b, dstDB, dst)
	}
}

// MOVE key db: 1 if moved, 0 if key is missing or exists in db.
func cmdMove(c *Client, args [][]byte) {
	key := args[1]
	db, err := argDB(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if db == c.DB {
		c.WriteErr(errSameObject)
		return
	}
	if !c.KS.Exists(c.DB, key) || c.KS.Exists(db, key) {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	c.KS.MoveValue(b, c.DB, key, db, key, expireAtOf(c, key)) // a large string by reference
	keepRaw(c, b, c.DB, key, db, key)
	b.Del(c.DB, key)
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(1)
		c.Notify(notifyGeneric, "move_from", key)
		c.NotifyDB(notifyGeneric, "move_to", key, db)
	}
}

// parseSwapDB parses SWAPDB's two indexes, with Redis's error texts.
func parseSwapDB(a1, a2 []byte) (db1, db2 int, err error) {
	if db1, err = argInt32(a1, "ERR invalid first DB index"); err != nil {
		return 0, 0, err
	}
	if db2, err = argInt32(a2, "ERR invalid second DB index"); err != nil {
		return 0, 0, err
	}
	if db1 < 0 || db1 >= keyspace.NumDBs || db2 < 0 || db2 >= keyspace.NumDBs {
		return 0, 0, errDBIndex
	}
	return db1, db2, nil
}

// SWAPDB index1 index2
func cmdSwapDB(c *Client, args [][]byte) {
	db1, db2, err := parseSwapDB(args[1], args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if db1 == db2 {
		c.WriteOK()
		return
	}
	b := c.KS.NewBatch()
	b.SwapDB(db1, db2)
	if commitReply(c, b, len(c.Out)) {
		signalSwapped(c.KS, db1, db2) // waiters on keys that came in
		c.WriteOK()
	}
}

// ---- iteration ----

// KEYS pattern
func cmdKeys(c *Client, args [][]byte) {
	pattern := args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	var keys []string
	c.KS.Keys(c.DB, func(key string) {
		if all || globMatch(pattern, []byte(key)) {
			keys = append(keys, key)
		}
	})
	c.WriteArray(len(keys))
	for _, k := range keys {
		c.WriteBulkString(k)
	}
}

// scanOptions are SCAN's arguments.
type scanOptions struct {
	cursor   uint64
	count    int
	match    []byte // nil: every key
	typeName []byte // nil: every type
}

const scanDefaultCount = 10

// parseScan parses SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]:
// the cursor as strtoul reads it ("ERR invalid cursor"), options in any
// order and repeatable (the last wins), COUNT at least 1.
func parseScan(args [][]byte) (scanOptions, error) {
	cursor, ok := parseScanCursor(args[0])
	if !ok {
		return scanOptions{}, replyError("ERR invalid cursor")
	}
	o, err := parseScanOptions(args[1:], true)
	o.cursor = cursor
	return o, err
}

// parseScanOptions parses the options after a cursor as Redis's
// scanGenericCommand does: [MATCH pattern] [COUNT count], plus [TYPE type]
// for SCAN (withType), in any order, repeatable (the last wins), COUNT an
// integer of at least 1. HSCAN, SSCAN and ZSCAN share it (without TYPE).
func parseScanOptions(args [][]byte, withType bool) (scanOptions, error) {
	o := scanOptions{count: scanDefaultCount}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return scanOptions{}, errSyntax
		}
		a, v := args[i], args[i+1]
		switch {
		case argIs(a, "count"):
			n, err := argInt64(v)
			if err != nil {
				return scanOptions{}, err
			}
			if n < 1 {
				return scanOptions{}, errSyntax
			}
			o.count = int(min(n, math.MaxInt32))
		case argIs(a, "match"):
			o.match = v
			if len(v) == 1 && v[0] == '*' {
				o.match = nil
			}
		case withType && argIs(a, "type"):
			o.typeName = v
		default:
			return scanOptions{}, errSyntax
		}
	}
	return o, nil
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. MATCH and TYPE
// filter the keys a step visited, so a step may return none while the
// cursor is not yet 0, as in Redis.
func cmdScan(c *Client, args [][]byte) {
	o, err := parseScan(args[1:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	var keys []string
	next := c.KS.Scan(c.DB, o.cursor, o.count, func(key string) {
		if o.match == nil || globMatch(o.match, []byte(key)) {
			keys = append(keys, key)
		}
	})
	if o.typeName != nil {
		kept := keys[:0]
		for _, k := range keys {
			if strings.EqualFold(c.KS.Type(c.DB, []byte(k)), string(o.typeName)) {
				kept = append(kept, k)
			}
		}
		keys = kept
	}
	c.WriteArray(2)
	c.WriteBulkString(strconv.FormatUint(next, 10))
	c.WriteArray(len(keys))
	for _, k := range keys {
		c.WriteBulkString(k)
	}
}

// RANDOMKEY
func cmdRandomKey(c *Client, args [][]byte) {
	key, ok := c.KS.RandomKey(c.DB)
	if !ok {
		c.WriteNull()
		return
	}
	c.WriteBulkString(key)
}

// DBSIZE
func cmdDBSize(c *Client, args [][]byte) {
	c.WriteInt(int64(c.KS.DBSize(c.DB)))
}

// parseFlushMode checks FLUSHDB's and FLUSHALL's optional ASYNC|SYNC and
// says whether the flush is asynchronous in Redis's sense (ASYNC, or no
// argument under lazyfree-lazy-user-flush yes). Both flush the same way
// here, one record; an asynchronous one counts its keys in INFO
// lazyfreed_objects, as Redis's emptyDbAsync does (keyspace/lazyfree.go).
func parseFlushMode(c *Client, args [][]byte) (async bool, err error) {
	switch {
	case len(args) == 0:
		return configIs(c, "lazyfree-lazy-user-flush", "yes"), nil
	case len(args) == 1 && argIs(args[0], "async"):
		return true, nil
	case len(args) == 1 && argIs(args[0], "sync"):
		return false, nil
	}
	return false, errSyntax
}

// FLUSHDB [ASYNC|SYNC]
func cmdFlushDB(c *Client, args [][]byte) {
	async, err := parseFlushMode(c, args[1:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	keys := c.KS.DBSize(c.DB)
	b := c.KS.NewBatch()
	b.FlushDB(c.DB)
	if commitReply(c, b, len(c.Out)) {
		if async {
			c.KS.CountLazyFreed(int64(keys))
		}
		c.WriteOK()
	}
}

// FLUSHALL [ASYNC|SYNC]
func cmdFlushAll(c *Client, args [][]byte) {
	async, err := parseFlushMode(c, args[1:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	var keys int
	for db := range keyspace.NumDBs {
		keys += c.KS.DBSize(db)
	}
	b := c.KS.NewBatch()
	b.FlushAll()
	if commitReply(c, b, len(c.Out)) {
		if async {
			c.KS.CountLazyFreed(int64(keys))
		}
		c.WriteOK()
	}
}

// ---- OBJECT ----

func objectSubcommands() []Command {
	const r = FlagReadonly
	return []Command{
		{Name: "object|encoding", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, Group: "generic", Since: "2.2.3",
			Summary: "Inspect the internal encoding of a Redis object", Run: cmdObjectEncoding,
			KeySpecs: []KeySpec{keyAt(KeyRO, 2)}, Tips: []string{"nondeterministic_output"}},
		{Name: "object|freq", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, Group: "generic", Since: "4.0.0",
			Summary: "Get the logarithmic access frequency counter of a Redis object", Run: cmdObjectFreq,
			KeySpecs: []KeySpec{keyAt(KeyRO, 2)}, Tips: []string{"nondeterministic_output"}},
		{Name: "object|idletime", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, Group: "generic", Since: "2.2.3",
			Summary: "Get the time since a Redis object was last accessed", Run: cmdObjectIdleTime,
			KeySpecs: []KeySpec{keyAt(KeyRO, 2)}, Tips: []string{"nondeterministic_output"}},
		{Name: "object|refcount", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, Group: "generic", Since: "2.2.3",
			Summary: "Get the number of references to the value of the key", Run: cmdObjectRefCount,
			KeySpecs: []KeySpec{keyAt(KeyRO, 2)}, Tips: []string{"nondeterministic_output"}},
		{Name: "object|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "generic", Since: "6.2.0",
			Summary: "Show helpful text about the different subcommands", Run: cmdObjectHelp, NoLock: true},
	}
}

// Redis's thresholds for string encodings: an integer of at most 20 bytes
// is "int", other strings up to 44 bytes are "embstr", longer ones "raw".
const (
	encIntMaxLen       = 20
	encEmbstrMaxLen    = 44
	sharedIntegers     = 10000      // Redis shares the objects for 0..9999
	sharedRefcount     = 2147483647 // OBJECT REFCOUNT of a shared object
	objectFreqErrorMsg = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. " +
		"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	objectIdleErrorMsg = "ERR An LFU maxmemory policy is selected, idle time not tracked. " +
		"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// stringEncoding is the encoding Redis gives a string value of these
// bytes written whole (SET and the others that call tryObjectEncoding). A
// string Redis changed in place is raw whatever its bytes: the keyspace
// holds those as patched strings (see rawString). A HyperLogLog, which
// Redis always keeps raw (createHLLObject), is told by its header here,
// so a small sparse one stays in the log: only a short HLL a client SET
// itself, embstr in Redis, reads as raw.
func stringEncoding(val []byte) string {
	if len(val) <= encIntMaxLen {
		if _, ok := parseInt64(val); ok {
			return "int"
		}
	}
	if len(val) <= encEmbstrMaxLen && hll.Check(val) != nil {
		return "embstr"
	}
	return "raw"
}

// objectLookup reads key for an OBJECT subcommand: a missing key replies
// nil and returns ok false; val is nil for a collection.
func objectLookup(c *Client, key []byte) (val []byte, ok bool) {
	if !c.KS.Exists(c.DB, key) {
		c.WriteNull()
		return nil, false
	}
	// No access (Redis's objectCommandLookup: LOOKUP_NOTOUCH), and the key
	// was counted once already (Exists).
	was := c.KS.CountLookups(false)
	val, _ = c.KS.PeekString(c.DB, key)
	c.KS.CountLookups(was)
	return val, true
}

// OBJECT ENCODING key
func cmdObjectEncoding(c *Client, args [][]byte) {
	enc, isString, ok := c.KS.ObjectEncoding(c.DB, args[2])
	switch {
	case !ok:
		c.WriteNull()
	case isString:
		c.KS.CountLookups(false)                 // ObjectEncoding counted the key
		val, _ := c.KS.PeekString(c.DB, args[2]) // no access, as ObjectEncoding's peek (OBJECT FREQ stays)
		c.WriteBulkString(stringEncoding(val))
	default:
		c.WriteBulkString(enc)
	}
}

// lfuPolicy reports whether maxmemory-policy is an LFU one: keys then
// count access frequency, not time (package keyspace, lru.go).
func lfuPolicy(c *Client) bool {
	if c.Srv == nil {
		return false // a client without a server: Redis's default policy (noeviction)
	}
	p, _ := c.Srv.ConfigValue("maxmemory-policy")
	return strings.HasSuffix(p, "lfu")
}

// OBJECT FREQ key: the key's logarithmic access counter under an LFU
// maxmemory-policy; Redis's error under any other.
func cmdObjectFreq(c *Client, args [][]byte) {
	n, ok := c.KS.AccessFrequency(c.DB, args[2])
	switch {
	case !ok:
		c.WriteNull()
	case !lfuPolicy(c):
		c.WriteError(objectFreqErrorMsg)
	default:
		c.WriteInt(n)
	}
}

// OBJECT IDLETIME key: seconds since the key was last accessed; Redis's
// error under an LFU maxmemory-policy.
func cmdObjectIdleTime(c *Client, args [][]byte) {
	n, ok := c.KS.IdleTime(c.DB, args[2])
	switch {
	case !ok:
		c.WriteNull()
	case lfuPolicy(c):
		c.WriteError(objectIdleErrorMsg)
	default:
		c.WriteInt(n)
	}
}

// OBJECT REFCOUNT key: Redis's answer for the value, where small integers
// are shared objects.
func cmdObjectRefCount(c *Client, args [][]byte) {
	val, ok := objectLookup(c, args[2])
	if !ok {
		return
	}
	if n, isInt := parseInt64(val); isInt && n >= 0 && n < sharedIntegers {
		c.WriteInt(sharedRefcount)
		return
	}
	c.WriteInt(1)
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// OBJECT HELP
func cmdObjectHelp(c *Client, args [][]byte) {
	c.WriteArray(len(objectHelp))
	for _, line := range objectHelp {
		c.WriteString(line)
	}
}

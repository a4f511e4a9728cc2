package commands

import (
	"bytes"
	"math"

	"github.com/persimmon-db/persimmon/keyspace"
)

// List commands (redis.io group "list").
//
// A list is a deque of element locations in the keyspace (keyspace/list.go),
// so LINDEX, LSET and the start of an LRANGE are O(1) at any index, and
// pushes and pops at either end O(1). Every command parses its arguments
// first, then reads, then writes ONE batch: LMOVE, RPOPLPUSH, LMPOP and
// the blocking commands are a pop and a push (or pops) in one batch,
// recovered whole or not at all. Handlers resolve Redis's negative indexes
// and LINSERT's pivot to absolute indexes before logging, so replay needs
// no comparison to do the same thing.
//
// Argument checks come in Redis 7.0's order (e.g. LSET and LINDEX look the
// key up before they parse the index, LRANGE the other way round; BLPOP parses its timeout first, BLMPOP its
// numkeys, direction and count before its timeout).

func listCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast, ns = FlagDenyOOM, FlagFast, FlagNoScript
	return []Command{
		{Name: "lpush", Arity: -3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Prepend one or multiple elements to a list", Run: cmdLPush,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "rpush", Arity: -3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Append one or multiple elements to a list", Run: cmdRPush,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "lpushx", Arity: -3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0",
			Summary: "Prepend an element to a list, only if the list exists", Run: cmdLPushX,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "rpushx", Arity: -3, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0",
			Summary: "Append an element to a list, only if the list exists", Run: cmdRPushX,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "lpop", Arity: -2, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Remove and get the first elements in a list", Run: cmdLPop,
			KeySpecs: key1(KeyRW | KeyAccess | KeyDelete)},
		{Name: "rpop", Arity: -2, Flags: w | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Remove and get the last elements in a list", Run: cmdRPop,
			KeySpecs: key1(KeyRW | KeyAccess | KeyDelete)},
		{Name: "llen", Arity: 2, Flags: r | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Get the length of a list", Run: cmdLLen,
			KeySpecs: key1(KeyRO)},
		{Name: "lindex", Arity: 3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Get an element from a list by its index", Run: cmdLIndex,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "lrange", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Get a range of elements from a list", Run: cmdLRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "lset", Arity: 4, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Set the value of an element in a list by its index", Run: cmdLSet,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "lrem", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Remove elements from a list", Run: cmdLRem,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "ltrim", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
			Summary: "Trim a list to the specified range", Run: cmdLTrim,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "linsert", Arity: 5, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0",
			Summary: "Insert an element before or after another element in a list", Run: cmdLInsert,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "lpos", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "6.0.6",
			Summary: "Return the index of matching elements on a list", Run: cmdLPos,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "lmove", Arity: 5, Flags: w | dm, FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it", Run: cmdLMove,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 1), keyAt(KeyRW|KeyInsert, 2)}},
		{Name: "rpoplpush", Arity: 3, Flags: w | dm, FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "1.2.0",
			Summary: "Remove the last element in a list, prepend it to another list and return it", Run: cmdRPopLPush,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 1), keyAt(KeyRW|KeyInsert, 2)}},
		// Redis reports LMPOP's and BLMPOP's keys as movable (numkeys), with 0 0 0.
		{Name: "lmpop", Arity: -4, Flags: w | FlagMovableKeys, Group: "list", Since: "7.0.0",
			Summary: "Pop elements from a list", Run: cmdLMPop,
			KeySpecs: []KeySpec{keyNumkeys(KeyRW|KeyAccess|KeyDelete, 1)}, GetKeys: numkeysGetKeys(0, 1, 2)},
		{Name: "blpop", Arity: -3, Flags: w | ns | FlagBlocking, FirstKey: 1, LastKey: -2, Step: 1, Group: "list", Since: "2.0.0",
			Summary: "Remove and get the first element in a list, or block until one is available", Run: cmdBLPop,
			KeySpecs: []KeySpec{keyRange(KeyRW|KeyAccess|KeyDelete, 1, -2, 1)}},
		{Name: "brpop", Arity: -3, Flags: w | ns | FlagBlocking, FirstKey: 1, LastKey: -2, Step: 1, Group: "list", Since: "2.0.0",
			Summary: "Remove and get the last element in a list, or block until one is available", Run: cmdBRPop,
			KeySpecs: []KeySpec{keyRange(KeyRW|KeyAccess|KeyDelete, 1, -2, 1)}},
		{Name: "blmove", Arity: 6, Flags: w | dm | ns | FlagBlocking, FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Run: cmdBLMove,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 1), keyAt(KeyRW|KeyInsert, 2)}},
		{Name: "brpoplpush", Arity: 4, Flags: w | dm | ns | FlagBlocking, FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "2.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available", Run: cmdBRPopLPush,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 1), keyAt(KeyRW|KeyInsert, 2)}},
		{Name: "blmpop", Arity: -5, Flags: w | FlagBlocking | FlagMovableKeys, Group: "list", Since: "7.0.0",
			Summary: "Pop elements from a list, or block until one is available", Run: cmdBLMPop,
			KeySpecs: []KeySpec{keyNumkeys(KeyRW|KeyAccess|KeyDelete, 2)}, GetKeys: numkeysGetKeys(0, 2, 3)},
	}
}

var (
	errListPositive   = replyError("ERR value is out of range, must be positive")
	errListIndexRange = replyError("ERR index out of range")
	errLPosRankZero   = replyError("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
	errLPosCount      = replyError("ERR COUNT can't be negative")
	errLPosMaxlen     = replyError("ERR MAXLEN can't be negative")
	errListNumkeys    = replyError("ERR numkeys should be greater than 0")
	errListCount      = replyError("ERR count should be greater than 0")
)

// lookupList returns the list at key, writing WRONGTYPE (and returning false)
// when the key holds another type.
func lookupList(c *Client, key []byte) (keyspace.List, bool) {
	v, err := c.KS.List(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return v, false
	}
	return v, true
}

// ---- pushes ----

func cmdLPush(c *Client, args [][]byte)  { pushGeneric(c, args, true, false) }
func cmdRPush(c *Client, args [][]byte)  { pushGeneric(c, args, false, false) }
func cmdLPushX(c *Client, args [][]byte) { pushGeneric(c, args, true, true) }
func cmdRPushX(c *Client, args [][]byte) { pushGeneric(c, args, false, true) }

// pushGeneric: LPUSH/RPUSH key element [element ...]; the X forms only
// push onto an existing list.
func pushGeneric(c *Client, args [][]byte, left, onlyExisting bool) {
	key := args[1]
	v, ok := lookupList(c, key)
	if !ok {
		return
	}
	if onlyExisting && !v.Exists() {
		c.WriteInt(0)
		return
	}
	n := v.Len() + len(args) - 2
	b := c.KS.NewBatch()
	if left {
		b.LPush(c.DB, key, args[2:]...)
	} else {
		b.RPush(c.DB, key, args[2:]...)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(n))
		c.Notify(notifyList, listEvent("push", left), key)
	}
}

// ---- pops ----

func cmdLPop(c *Client, args [][]byte) { popGeneric(c, args, true) }
func cmdRPop(c *Client, args [][]byte) { popGeneric(c, args, false) }

// popGeneric: LPOP/RPOP key [count]. Without a count: a bulk string, or
// null for a missing key. With a count: an array (empty for count 0), or
// the null array for a missing key.
func popGeneric(c *Client, args [][]byte, left bool) {
	if len(args) > 3 {
		c.WriteError(WrongArgs(string(listCmdName(args[0]))))
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		n, ok := parseInt64(args[2])
		if !ok || n < 0 {
			c.WriteErr(errListPositive)
			return
		}
		count = n
	}
	key := args[1]
	v, ok := lookupList(c, key)
	if !ok {
		return
	}
	if !v.Exists() {
		if count < 0 {
			c.WriteNull()
		} else {
			c.WriteNullArray()
		}
		return
	}
	mark := len(c.Out)
	if count < 0 {
		c.WriteBulk(listEnd(v, left, 0))
		listPopCommit(c, key, left, 1, mark)
		return
	}
	n := int(min(count, int64(v.Len())))
	writeListEnds(c, v, left, n)
	if n > 0 {
		listPopCommit(c, key, left, n, mark)
	}
}

// listCmdName returns a command name in lower case (for error texts).
func listCmdName(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		out[i] = lowerASCII(ch)
	}
	return out
}

// listEnd returns the i-th element from the head (left) or the tail.
func listEnd(v keyspace.List, left bool, i int) []byte {
	if left {
		return v.At(i)
	}
	return v.At(v.Len() - 1 - i)
}

// writeListEnds writes an array of the first n elements from one end, in pop
// order.
func writeListEnds(c *Client, v keyspace.List, left bool, n int) {
	c.WriteArray(n)
	for i := 0; i < n; i++ {
		c.WriteBulk(listEnd(v, left, i))
	}
}

// listPopCommit commits the removal of n elements from one end of key; on a
// failed commit the replies from mark on are replaced by the error.
func listPopCommit(c *Client, key []byte, left bool, n, mark int) bool {
	b := c.KS.NewBatch()
	if left {
		b.LPop(c.DB, key, n)
	} else {
		b.RPop(c.DB, key, n)
	}
	if !commitReply(c, b, mark) {
		return false
	}
	notifyChanged(c, notifyList, listEvent("pop", left), key)
	return true
}

// listEvent is the notification of a push or pop at one end: lpush,
// rpop...
func listEvent(op string, left bool) string {
	if left {
		return "l" + op
	}
	return "r" + op
}

// ---- reads ----

// LLEN key
func cmdLLen(c *Client, args [][]byte) {
	if v, ok := lookupList(c, args[1]); ok {
		c.WriteInt(int64(v.Len()))
	}
}

// LINDEX key index: O(1) at any index. Like Redis, the key is looked up
// before the index is parsed.
func cmdLIndex(c *Client, args [][]byte) {
	v, ok := lookupList(c, args[1])
	if !ok {
		return
	}
	if !v.Exists() {
		c.WriteNull()
		return
	}
	idx, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	i, in := listIndex(idx, v.Len())
	if !in {
		c.WriteNull()
		return
	}
	c.WriteBulk(v.At(i))
}

// listIndex resolves a Redis index (negative counts from the tail) against
// a length n; in is false when it falls outside the list.
func listIndex(idx int64, n int) (int, bool) {
	if idx < 0 {
		idx += int64(n)
	}
	if idx < 0 || idx >= int64(n) {
		return 0, false
	}
	return int(idx), true
}

// listRange resolves LRANGE/LTRIM's start and stop against a length n
// (Redis's rules) to [from, to] inclusive; empty is true when nothing is in
// range.
func listRange(start, stop int64, n int) (from, to int, empty bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= ln {
		return 0, 0, true
	}
	if stop >= ln {
		stop = ln - 1
	}
	return int(start), int(stop), false
}

// LRANGE key start stop: O(1) to find start, then O(elements returned).
func cmdLRange(c *Client, args [][]byte) {
	start, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	stop, err := argInt64(args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	v, ok := lookupList(c, args[1])
	if !ok {
		return
	}
	from, to, empty := listRange(start, stop, v.Len())
	if empty {
		c.WriteArray(0)
		return
	}
	c.WriteArray(to - from + 1)
	for i := from; i <= to; i++ {
		c.WriteBulk(v.At(i))
	}
}

// lposOptions are LPOS's options; count -1 means "not given" (one reply).
type lposOptions struct {
	rank   int64
	count  int64
	maxlen int64
}

// parseLPos parses LPOS's options (args after key and element) in Redis's
// order: each option as it comes, a bad one stops the parse.
func parseLPos(args [][]byte) (lposOptions, error) {
	o := lposOptions{rank: 1, count: -1}
	for i := 0; i < len(args); i++ {
		more := i+1 < len(args)
		switch a := args[i]; {
		case argIs(a, "rank") && more:
			i++
			r, err := argInt64(args[i])
			if err != nil {
				return o, err
			}
			if r == 0 {
				return o, errLPosRankZero
			}
			o.rank = r
		case argIs(a, "count") && more:
			i++
			n, ok := parseInt64(args[i])
			if !ok || n < 0 {
				return o, errLPosCount
			}
			o.count = n
		case argIs(a, "maxlen") && more:
			i++
			n, ok := parseInt64(args[i])
			if !ok || n < 0 {
				return o, errLPosMaxlen
			}
			o.maxlen = n
		default:
			return o, errSyntax
		}
	}
	return o, nil
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
func cmdLPos(c *Client, args [][]byte) {
	o, err := parseLPos(args[3:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	v, ok := lookupList(c, args[1])
	if !ok {
		return
	}
	elem := args[2]
	n := v.Len()
	skip := o.rank - 1 // matches to skip
	step, i := 1, 0
	if o.rank < 0 {
		skip = -o.rank - 1
		step, i = -1, n-1
		if o.rank == math.MinInt64 {
			// Redis 7.0 negates the rank in place: -LLONG_MIN stays
			// negative and its "matches >= rank" test passes for every
			// match, so the search starts at the first match from the tail.
			skip = 0
		}
	}
	var found []int
	want := o.count
	if want == 0 {
		want = math.MaxInt64
	} else if want < 0 {
		want = 1
	}
	for scanned := int64(0); i >= 0 && i < n && int64(len(found)) < want; i += step {
		if o.maxlen != 0 && scanned >= o.maxlen {
			break
		}
		scanned++
		if string(v.At(i)) != string(elem) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		found = append(found, i)
	}
	if o.count < 0 {
		if len(found) == 0 {
			c.WriteNull()
		} else {
			c.WriteInt(int64(found[0]))
		}
		return
	}
	c.WriteArray(len(found))
	for _, p := range found {
		c.WriteInt(int64(p))
	}
}

// ---- in-place changes ----

// LSET key index element. Like Redis, the key is looked up before the
// index is parsed.
func cmdLSet(c *Client, args [][]byte) {
	key := args[1]
	v, ok := lookupList(c, key)
	if !ok {
		return
	}
	if !v.Exists() {
		c.WriteErr(errNoSuchKey)
		return
	}
	idx, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	i, in := listIndex(idx, v.Len())
	if !in {
		c.WriteErr(errListIndexRange)
		return
	}
	b := c.KS.NewBatch()
	b.LSet(c.DB, key, i, args[3])
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
		c.Notify(notifyList, "lset", key)
	}
}

// LREM key count element
func cmdLRem(c *Client, args [][]byte) {
	count, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	key, elem := args[1], args[3]
	v, ok := lookupList(c, key)
	if !ok {
		return
	}
	// Count what the operation will remove (the applier applies the same
	// rule to the same list).
	removed := int64(0)
	limit := count
	if limit < 0 {
		limit = -limit
		if limit < 0 { // MinInt64
			limit = math.MaxInt64
		}
	}
	n := v.Len()
	for j := 0; j < n && (count == 0 || removed < limit); j++ {
		i := j
		if count < 0 {
			i = n - 1 - j
		}
		if string(v.At(i)) == string(elem) {
			removed++
		}
	}
	if removed == 0 {
		c.WriteInt(0)
		return
	}
	b := c.KS.NewBatch()
	if removed == int64(n) {
		b.Del(c.DB, key)
	} else {
		b.LRem(c.DB, key, count, elem)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(removed)
		notifyChanged(c, notifyList, "lrem", key)
	}
}

// LTRIM key start stop
func cmdLTrim(c *Client, args [][]byte) {
	start, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	stop, err := argInt64(args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	key := args[1]
	v, ok := lookupList(c, key)
	if !ok {
		return
	}
	if !v.Exists() {
		c.WriteOK()
		return
	}
	n := v.Len()
	from, to, empty := listRange(start, stop, n)
	b := c.KS.NewBatch()
	switch {
	case empty:
		b.Del(c.DB, key)
	case from == 0 && to == n-1:
		c.WriteOK() // nothing to trim
		c.Notify(notifyList, "ltrim", key)
		return
	default:
		b.LTrim(c.DB, key, from, to-from+1)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
		notifyChanged(c, notifyList, "ltrim", key)
	}
}

// LINSERT key BEFORE|AFTER pivot element: the pivot is found here, and the
// operation logs the absolute index the element goes to.
func cmdLInsert(c *Client, args [][]byte) {
	var after bool
	switch {
	case argIs(args[2], "after"):
		after = true
	case argIs(args[2], "before"):
	default:
		c.WriteErr(errSyntax)
		return
	}
	key, pivot := args[1], args[3]
	v, ok := lookupList(c, key)
	if !ok {
		return
	}
	if !v.Exists() {
		c.WriteInt(0)
		return
	}
	n := v.Len()
	at := -1
	for i := 0; i < n; i++ {
		if string(v.At(i)) == string(pivot) {
			at = i
			break
		}
	}
	if at < 0 {
		c.WriteInt(-1)
		return
	}
	if after {
		at++
	}
	b := c.KS.NewBatch()
	b.LInsert(c.DB, key, at, args[4])
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(n + 1))
		c.Notify(notifyList, "linsert", key)
	}
}

// ---- moves ----

// parseListWhere parses LEFT or RIGHT.
func parseListWhere(b []byte) (left bool, err error) {
	switch {
	case argIs(b, "left"):
		return true, nil
	case argIs(b, "right"):
		return false, nil
	}
	return false, errSyntax
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
func cmdLMove(c *Client, args [][]byte) {
	from, err := parseListWhere(args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	to, err := parseListWhere(args[4])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if listMove(c, args[1], args[2], from, to, false) == listMoveEmpty {
		c.WriteNull()
	}
}

// RPOPLPUSH source destination
func cmdRPopLPush(c *Client, args [][]byte) {
	if listMove(c, args[1], args[2], false, true, false) == listMoveEmpty {
		c.WriteNull()
	}
}

type listMoveResult int

const (
	listMoveDone  listMoveResult = iota // replied (the element, or an error)
	listMoveEmpty                       // the source is empty: nothing replied
)

// listMove pops one element from an end of src and pushes it at an end of dst
// in one batch, replying the element. Like Redis, a missing source is
// checked before the destination's type.
func listMove(c *Client, src, dst []byte, fromLeft, toLeft, blocking bool) listMoveResult {
	if blocking && c.SkipsOnWake(src, keyspace.TypeList) {
		return listMoveEmpty
	}
	sv, ok := lookupList(c, src)
	if !ok {
		return listMoveDone
	}
	if !sv.Exists() || blocking && c.YieldsTo(src) {
		return listMoveEmpty
	}
	if _, ok := lookupList(c, dst); !ok {
		return listMoveDone
	}
	val := listEnd(sv, fromLeft, 0)
	mark := len(c.Out)
	c.WriteBulk(val)
	b := c.KS.NewBatch()
	pop := func() {
		if fromLeft {
			b.LPop(c.DB, src, 1)
		} else {
			b.RPop(c.DB, src, 1)
		}
	}
	if bytes.Equal(src, dst) {
		// A rotation: push first, so that a one-element list never
		// empties (which would delete the key and its TTL); Redis pushes
		// before it checks the source for emptiness.
		pushListEnd(b, c.DB, dst, val, toLeft)
		pop()
	} else {
		pop()
		pushListEnd(b, c.DB, dst, val, toLeft)
	}
	if commitReply(c, b, mark) {
		c.Notify(notifyList, listEvent("push", toLeft), dst)
		notifyChanged(c, notifyList, listEvent("pop", fromLeft), src)
	}
	return listMoveDone
}

// pushListEnd appends to b the push of val at the left or right end of key.
func pushListEnd(b *keyspace.Batch, db int, key, val []byte, left bool) {
	if left {
		b.LPush(db, key, val)
	} else {
		b.RPush(db, key, val)
	}
}

// lmpopArgs are LMPOP's arguments after parsing.
type lmpopArgs struct {
	keys  [][]byte
	left  bool
	count int64
}

// parseLMPop parses "numkeys key [key ...] LEFT|RIGHT [COUNT count]" (args
// from numkeys on) as Redis 7.0's lmpopGenericCommand does.
func parseLMPop(args [][]byte) (lmpopArgs, error) {
	var m lmpopArgs
	numkeys, ok := parseInt64(args[0])
	if !ok || numkeys < 1 {
		return m, errListNumkeys
	}
	if numkeys >= int64(len(args))-1 {
		return m, errSyntax
	}
	m.keys = args[1 : 1+numkeys]
	left, err := parseListWhere(args[1+numkeys])
	if err != nil {
		return m, err
	}
	m.left = left
	m.count = -1
	for i := int(numkeys) + 2; i < len(args); i++ {
		if m.count == -1 && argIs(args[i], "count") && i+1 < len(args) {
			i++
			n, ok := parseInt64(args[i])
			if !ok || n < 1 {
				return m, errListCount
			}
			m.count = n
			continue
		}
		return m, errSyntax
	}
	if m.count == -1 {
		m.count = 1
	}
	return m, nil
}

// listMPop pops up to m.count elements from the first non-empty list of m.keys
// and replies [key, [elements]]. It reports false (nothing replied) when
// every list is empty; a key of another type answers WRONGTYPE.
func listMPop(c *Client, m lmpopArgs, blocking bool) bool {
	keys := m.keys
	if blocking {
		keys = c.ServingOrder(keys)
	}
	for _, key := range keys {
		if blocking && c.SkipsOnWake(key, keyspace.TypeList) {
			continue
		}
		v, ok := lookupList(c, key)
		if !ok {
			return true
		}
		if !v.Exists() || blocking && c.YieldsTo(key) {
			continue
		}
		n := int(min(m.count, int64(v.Len())))
		mark := len(c.Out)
		c.WriteArray(2)
		c.WriteBulk(key)
		writeListEnds(c, v, m.left, n)
		listPopCommit(c, key, m.left, n, mark)
		return true
	}
	return false
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
func cmdLMPop(c *Client, args [][]byte) {
	m, err := parseLMPop(args[1:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !listMPop(c, m, false) {
		c.WriteNullArray()
	}
}

// ---- blocking (see blocking.go) ----

func cmdBLPop(c *Client, args [][]byte) { listBlockingPop(c, args, true) }
func cmdBRPop(c *Client, args [][]byte) { listBlockingPop(c, args, false) }

// listBlockingPop: BLPOP/BRPOP key [key ...] timeout. Replies [key, element]
// from the first non-empty list, or blocks.
func listBlockingPop(c *Client, args [][]byte, left bool) {
	blockingPop(c, args, keyspace.TypeList, func(key []byte) (served, failed bool) {
		v, ok := lookupList(c, key)
		if !ok {
			return false, true
		}
		if !v.Exists() {
			return false, false
		}
		mark := len(c.Out)
		c.WriteArray(2)
		c.WriteBulk(key)
		c.WriteBulk(listEnd(v, left, 0))
		listPopCommit(c, key, left, 1, mark)
		return true, false
	})
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
func cmdBLMove(c *Client, args [][]byte) {
	from, err := parseListWhere(args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	to, err := parseListWhere(args[4])
	if err != nil {
		c.WriteErr(err)
		return
	}
	listBlockingMove(c, args[1], args[2], from, to, args[5])
}

// BRPOPLPUSH source destination timeout
func cmdBRPopLPush(c *Client, args [][]byte) {
	listBlockingMove(c, args[1], args[2], false, true, args[3])
}

func listBlockingMove(c *Client, src, dst []byte, fromLeft, toLeft bool, timeoutArg []byte) {
	timeout, err := parseBlockTimeout(timeoutArg)
	if err != nil {
		c.WriteErr(err)
		return
	}
	if listMove(c, src, dst, fromLeft, toLeft, true) == listMoveDone {
		return
	}
	if !c.BlockOn([][]byte{src}, timeout) {
		c.WriteNull() // Redis answers a null bulk here, *-1 on a timeout
	}
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
func cmdBLMPop(c *Client, args [][]byte) {
	m, err := parseLMPop(args[2:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	timeout, err := parseBlockTimeout(args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if listMPop(c, m, true) {
		return
	}
	if !c.BlockOn(m.keys, timeout) {
		c.WriteNullArray()
	}
}

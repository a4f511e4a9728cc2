package commands

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Sorted set commands (redis.io group "sorted-set").
//
// Each handler parses its arguments in the order Redis 7.0's t_zset.c
// does (so the same error wins), then reads, then writes at most one
// batch. Writes carry results: ZADD/ZINCRBY log the members they set with
// their final scores, removals log the removed members (or a delete of the
// key when every member goes), and the *STORE commands log a delete of
// the destination and the new contents in the same batch, so each is
// recovered whole or not at all.

func zsetCommands() []Command {
	const w, r = FlagWrite, FlagReadonly
	const dm, fast = FlagDenyOOM, FlagFast
	const g, k1 = "sorted-set", 1
	return []Command{
		{Name: "zadd", Arity: -4, Flags: w | dm | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Adds one or more members to a sorted set, or updates their scores.", Run: cmdZAdd,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "zincrby", Arity: 4, Flags: w | dm | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Increments the score of a member in a sorted set.", Run: cmdZIncrBy,
			KeySpecs: key1(KeyRW | KeyAccess | KeyUpdate)},
		{Name: "zscore", Arity: 3, Flags: r | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Returns the score of a member in a sorted set.", Run: cmdZScore,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zmscore", Arity: -3, Flags: r | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "6.2.0",
			Summary: "Returns the score of one or more members in a sorted set.", Run: cmdZMScore,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zcard", Arity: 2, Flags: r | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Returns the number of members in a sorted set.", Run: cmdZCard,
			KeySpecs: key1(KeyRO)},
		{Name: "zcount", Arity: 4, Flags: r | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0",
			Summary: "Returns the count of members in a sorted set that have scores within a range.", Run: cmdZCount,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zlexcount", Arity: 4, Flags: r | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Returns the number of members in a sorted set within a lexicographical range.", Run: cmdZLexCount,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrange", Arity: -4, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Returns members in a sorted set within a range of indexes.", Run: cmdZRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrangestore", Arity: -5, Flags: w | dm, FirstKey: k1, LastKey: 2, Step: 1, Group: g, Since: "6.2.0",
			Summary: "Stores a range of members from sorted set in a key.", Run: cmdZRangeStore, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyAt(KeyRO|KeyAccess, 2)}},
		{Name: "zrangebyscore", Arity: -4, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.0.5",
			Summary: "Returns members in a sorted set within a range of scores.", Run: cmdZRangeByScore,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrevrangebyscore", Arity: -4, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.2.0",
			Summary: "Returns members in a sorted set within a range of scores in reverse order.", Run: cmdZRevRangeByScore,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrangebylex", Arity: -4, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Returns members in a sorted set within a lexicographical range.", Run: cmdZRangeByLex,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrevrangebylex", Arity: -4, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Returns members in a sorted set within a lexicographical range in reverse order.", Run: cmdZRevRangeByLex,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrevrange", Arity: -4, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Returns members in a sorted set within a range of indexes in reverse order.", Run: cmdZRevRange,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrank", Arity: 3, Flags: r | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0",
			Summary: "Returns the index of a member in a sorted set ordered by ascending scores.", Run: cmdZRank,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrevrank", Arity: 3, Flags: r | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0",
			Summary: "Returns the index of a member in a sorted set ordered by descending scores.", Run: cmdZRevRank,
			KeySpecs: key1(KeyRO | KeyAccess)},
		{Name: "zrem", Arity: -3, Flags: w | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Removes one or more members from a sorted set.", Run: cmdZRem,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "zremrangebyscore", Arity: 4, Flags: w, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "1.2.0",
			Summary: "Removes members in a sorted set within a range of scores.", Run: cmdZRemRangeByScore,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "zremrangebyrank", Arity: 4, Flags: w, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0",
			Summary: "Removes members in a sorted set within a range of indexes.", Run: cmdZRemRangeByRank,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "zremrangebylex", Arity: 4, Flags: w, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Removes members in a sorted set within a lexicographical range.", Run: cmdZRemRangeByLex,
			KeySpecs: key1(KeyRW | KeyDelete)},
		{Name: "zpopmin", Arity: -2, Flags: w | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Returns the lowest-scoring members from a sorted set after removing them.", Run: cmdZPopMin,
			KeySpecs: key1(KeyRW | KeyAccess | KeyDelete)},
		{Name: "zpopmax", Arity: -2, Flags: w | fast, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Returns the highest-scoring members from a sorted set after removing them.", Run: cmdZPopMax,
			KeySpecs: key1(KeyRW | KeyAccess | KeyDelete)},
		{Name: "bzpopmin", Arity: -3, Flags: w | FlagNoScript | fast | FlagBlocking, FirstKey: k1, LastKey: -2, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise.", Run: cmdBZPopMin,
			KeySpecs: []KeySpec{keyRange(KeyRW|KeyAccess|KeyDelete, 1, -2, 1)}},
		{Name: "bzpopmax", Arity: -3, Flags: w | FlagNoScript | fast | FlagBlocking, FirstKey: k1, LastKey: -2, Step: 1, Group: g, Since: "5.0.0",
			Summary: "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member is available otherwise.", Run: cmdBZPopMax,
			KeySpecs: []KeySpec{keyRange(KeyRW|KeyAccess|KeyDelete, 1, -2, 1)}},
		{Name: "zunionstore", Arity: -4, Flags: w | dm | FlagMovableKeys, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0",
			Summary: "Stores the union of multiple sorted sets in a key.", Run: cmdZUnionStore, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyNumkeys(KeyRO|KeyAccess, 2)}, GetKeys: numkeysGetKeys(1, 2, 3)},
		{Name: "zinterstore", Arity: -4, Flags: w | dm | FlagMovableKeys, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.0.0",
			Summary: "Stores the intersect of multiple sorted sets in a key.", Run: cmdZInterStore, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyNumkeys(KeyRO|KeyAccess, 2)}, GetKeys: numkeysGetKeys(1, 2, 3)},
		{Name: "zdiffstore", Arity: -4, Flags: w | dm | FlagMovableKeys, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "6.2.0",
			Summary: "Stores the difference of multiple sorted sets in a key.", Run: cmdZDiffStore, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyNumkeys(KeyRO|KeyAccess, 2)}, GetKeys: numkeysGetKeys(1, 2, 3)},
		{Name: "zunion", Arity: -3, Flags: r | FlagMovableKeys, Group: g, Since: "6.2.0",
			Summary: "Returns the union of multiple sorted sets.", Run: cmdZUnion,
			KeySpecs: []KeySpec{keyNumkeys(KeyRO|KeyAccess, 1)}, GetKeys: numkeysGetKeys(0, 1, 2)},
		{Name: "zinter", Arity: -3, Flags: r | FlagMovableKeys, Group: g, Since: "6.2.0",
			Summary: "Returns the intersect of multiple sorted sets.", Run: cmdZInter,
			KeySpecs: []KeySpec{keyNumkeys(KeyRO|KeyAccess, 1)}, GetKeys: numkeysGetKeys(0, 1, 2)},
		{Name: "zdiff", Arity: -3, Flags: r | FlagMovableKeys, Group: g, Since: "6.2.0",
			Summary: "Returns the difference between multiple sorted sets.", Run: cmdZDiff,
			KeySpecs: []KeySpec{keyNumkeys(KeyRO|KeyAccess, 1)}, GetKeys: numkeysGetKeys(0, 1, 2)},
		{Name: "zintercard", Arity: -3, Flags: r | FlagMovableKeys, Group: g, Since: "7.0.0",
			Summary: "Returns the number of members of the intersect of multiple sorted sets.", Run: cmdZInterCard,
			KeySpecs: []KeySpec{keyNumkeys(KeyRO|KeyAccess, 1)}, GetKeys: numkeysGetKeys(0, 1, 2)},
		{Name: "zmpop", Arity: -4, Flags: w | FlagMovableKeys, Group: g, Since: "7.0.0",
			Summary: "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", Run: cmdZMPop,
			KeySpecs: []KeySpec{keyNumkeys(KeyRW|KeyAccess|KeyDelete, 1)}, GetKeys: numkeysGetKeys(0, 1, 2)},
		{Name: "bzmpop", Arity: -5, Flags: w | FlagBlocking | FlagMovableKeys, Group: g, Since: "7.0.0",
			Summary: "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", Run: cmdBZMPop,
			KeySpecs: []KeySpec{keyNumkeys(KeyRW|KeyAccess|KeyDelete, 2)}, GetKeys: numkeysGetKeys(0, 2, 3)},
		{Name: "zrandmember", Arity: -2, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "6.2.0",
			Summary: "Returns one or more random members from a sorted set.", Run: cmdZRandMember,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
		{Name: "zscan", Arity: -3, Flags: r, FirstKey: k1, LastKey: 1, Step: 1, Group: g, Since: "2.8.0",
			Summary: "Iterates over members and scores of a sorted set.", Run: cmdZScan,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
	}
}

// zsetAt looks the sorted set up; on a wrong type it replies and returns
// false.
func zsetAt(c *Client, key []byte) (*keyspace.ZSet, bool) {
	z, err := c.KS.ZSetAt(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return nil, false
	}
	return z, true
}

// ---- ZADD, ZINCRBY ----

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
func cmdZAdd(c *Client, args [][]byte) { zaddGeneric(c, args, false, nil) }

// ZINCRBY key increment member: ZADD key INCR increment member, through
// the same parser as in Redis (so "ZINCRBY k nx m" is a syntax error).
func cmdZIncrBy(c *Client, args [][]byte) { zaddGeneric(c, args, true, nil) }

// zaddGeneric runs ZADD's args. parsed, when not nil, holds the scores
// already (GEOADD's geohashes), one per score-member pair, and the score
// arguments are not read.
func zaddGeneric(c *Client, args [][]byte, incr bool, parsed []float64) {
	var nx, xx, gt, lt, ch bool
	i := 2
options:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case argIs(a, "nx"):
			nx = true
		case argIs(a, "xx"):
			xx = true
		case argIs(a, "ch"):
			ch = true
		case argIs(a, "incr"):
			incr = true
		case argIs(a, "gt"):
			gt = true
		case argIs(a, "lt"):
			lt = true
		default:
			break options
		}
	}
	pairs := args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		c.WriteErr(errSyntax)
		return
	}
	switch {
	case nx && xx:
		c.WriteError("ERR XX and NX options at the same time are not compatible")
		return
	case (gt && nx) || (lt && nx) || (gt && lt):
		c.WriteError("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case incr && len(pairs) > 2:
		c.WriteError("ERR INCR option supports a single increment-element pair")
		return
	}
	n := len(pairs) / 2
	scores := parsed
	if scores == nil {
		scores = make([]float64, n)
		for j := range scores {
			f, err := scoreArg(pairs[2*j])
			if err != nil {
				c.WriteErr(err)
				return
			}
			scores[j] = f
		}
	}
	key := args[1]
	z, ok := zsetAt(c, key)
	if !ok {
		return
	}
	if z == nil && xx {
		if incr {
			c.WriteNull()
		} else {
			c.WriteInt(0)
		}
		return
	}
	var pending map[string]float64 // members set earlier in this command
	if n > 1 {
		pending = make(map[string]float64, n)
	}
	var added, updated, processed int64
	var last float64
	members := make([][]byte, 0, n)
	set := make([]float64, 0, n)
	// Whether the set is in its small encoding as each member is written:
	// Redis converts before inserting the member that does not fit, and a
	// small set keeps no negative zero (listpackScore).
	small, size := z == nil || z.Small(), 0
	if z != nil {
		size = z.Len()
	}
	for j := 0; j < n; j++ {
		member, score := pairs[2*j+1], scores[j]
		cur, exists := pending[string(member)]
		if !exists && z != nil {
			cur, exists = z.Score(member)
		}
		switch {
		case exists:
			if nx {
				continue
			}
			if incr {
				score += cur
				if math.IsNaN(score) {
					c.WriteErr(errScoreNaN)
					return
				}
			}
			if (lt && score >= cur) || (gt && score <= cur) {
				continue
			}
			processed++
			last = score
			if small {
				score = listpackScore(score)
			}
			if score != cur {
				updated++
				members, set = append(members, member), append(set, score)
			}
		case !xx:
			added++
			processed++
			last = score
			size++
			if small = small && keyspace.ZSetListpackFits(size, len(member)); small {
				score = listpackScore(score)
			}
			members, set = append(members, member), append(set, score)
		default:
			continue
		}
		if pending != nil {
			pending[string(member)] = score
		}
	}
	mark := len(c.Out)
	if incr {
		if processed > 0 {
			c.WriteDouble(last)
		} else {
			c.WriteNull()
		}
	} else if ch {
		c.WriteInt(added + updated)
	} else {
		c.WriteInt(added)
	}
	if len(members) > 0 {
		b := c.KS.NewBatch()
		b.ZAdd(c.DB, key, members, set)
		if commitReply(c, b, mark) {
			c.Notify(notifyZset, pick(incr, "zincr", "zadd"), key)
		}
	}
}

// ---- reads of single members ----

// ZSCORE key member
func cmdZScore(c *Client, args [][]byte) {
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteNull()
		return
	}
	s, found := z.Score(args[2])
	if !found {
		c.WriteNull()
		return
	}
	c.WriteDouble(s)
}

// ZMSCORE key member [member ...]
func cmdZMScore(c *Client, args [][]byte) {
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	c.WriteArray(len(args) - 2)
	for _, m := range args[2:] {
		if z == nil {
			c.WriteNull()
			continue
		}
		if s, found := z.Score(m); found {
			c.WriteDouble(s)
		} else {
			c.WriteNull()
		}
	}
}

// ZCARD key
func cmdZCard(c *Client, args [][]byte) {
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteInt(0)
		return
	}
	c.WriteInt(int64(z.Len()))
}

// ZRANK key member
func cmdZRank(c *Client, args [][]byte) { zrankGeneric(c, args, false) }

// ZREVRANK key member
func cmdZRevRank(c *Client, args [][]byte) { zrankGeneric(c, args, true) }

func zrankGeneric(c *Client, args [][]byte, rev bool) {
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteNull()
		return
	}
	r, found := z.Rank(args[2])
	if !found {
		c.WriteNull()
		return
	}
	if rev {
		r = z.Len() - 1 - r
	}
	c.WriteInt(int64(r))
}

// ZCOUNT key min max
func cmdZCount(c *Client, args [][]byte) {
	r, err := parseScoreRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteInt(0)
		return
	}
	lo, hi := z.ScoreRanks(r)
	c.WriteInt(int64(max(hi-lo, 0)))
}

// ZLEXCOUNT key min max
func cmdZLexCount(c *Client, args [][]byte) {
	r, err := parseLexRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteInt(0)
		return
	}
	lo, hi := z.LexRanks(r, false)
	c.WriteInt(int64(max(hi-lo, 0)))
}

// ---- ranges ----

type zrangeKind uint8

const (
	zrangeAuto zrangeKind = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

type zrangeDir uint8

const (
	zdirAuto zrangeDir = iota
	zdirForward
	zdirReverse
)

// zselection is a run of elements: count of them from the element of
// ascending rank first, walking down the order if reverse.
type zselection struct {
	first, count int
	reverse      bool
}

// rankSelection sanitizes start and end (inclusive, negative from the
// end) over a set of n elements, as Redis does.
func rankSelection(start, end int64, n int, reverse bool) zselection {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= ln {
		return zselection{}
	}
	if end >= ln {
		end = ln - 1
	}
	s := zselection{first: int(start), count: int(end - start + 1), reverse: reverse}
	if reverse {
		s.first = n - 1 - int(start)
	}
	return s
}

// limitSelection applies LIMIT offset count to the ranks [lo, hi) of a
// score or lex range. A negative offset selects nothing and a negative
// count means all, as in Redis.
func limitSelection(lo, hi int, offset, limit int64, reverse bool) zselection {
	n := int64(hi - lo)
	if n <= 0 || offset < 0 || offset >= n {
		return zselection{}
	}
	cnt := n - offset
	if limit >= 0 && limit < cnt {
		cnt = limit
	}
	s := zselection{first: lo + int(offset), count: int(cnt), reverse: reverse}
	if reverse {
		s.first = hi - 1 - int(offset)
	}
	return s
}

// each calls fn for every selected element in order.
func (s zselection) each(z *keyspace.ZSet, fn func(x keyspace.ZNode)) {
	if s.count <= 0 {
		return
	}
	x := z.At(s.first)
	for i := 0; i < s.count && x != 0; i++ {
		fn(x)
		if s.reverse {
			x = z.Prev(x)
		} else {
			x = z.Next(x)
		}
	}
}

// writeSelection replies with the selected members (and scores).
func writeSelection(c *Client, z *keyspace.ZSet, s zselection, withScores bool) {
	if withScores {
		c.WritePairs(s.count)
	} else {
		c.WriteArray(s.count)
	}
	s.each(z, func(x keyspace.ZNode) {
		if withScores {
			c.WritePair()
		}
		c.WriteBulk(z.Member(x))
		if withScores {
			c.WriteDouble(z.ScoreOf(x))
		}
	})
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
func cmdZRange(c *Client, args [][]byte) { zrangeGeneric(c, args, 1, false, zrangeAuto, zdirAuto) }

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
func cmdZRangeStore(c *Client, args [][]byte) {
	zrangeGeneric(c, args, 2, true, zrangeAuto, zdirAuto)
}

// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
func cmdZRangeByScore(c *Client, args [][]byte) {
	zrangeGeneric(c, args, 1, false, zrangeScore, zdirForward)
}

// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
func cmdZRevRangeByScore(c *Client, args [][]byte) {
	zrangeGeneric(c, args, 1, false, zrangeScore, zdirReverse)
}

// ZRANGEBYLEX key min max [LIMIT offset count]
func cmdZRangeByLex(c *Client, args [][]byte) {
	zrangeGeneric(c, args, 1, false, zrangeLex, zdirForward)
}

// ZREVRANGEBYLEX key max min [LIMIT offset count]
func cmdZRevRangeByLex(c *Client, args [][]byte) {
	zrangeGeneric(c, args, 1, false, zrangeLex, zdirReverse)
}

// ZREVRANGE key start stop [WITHSCORES]
func cmdZRevRange(c *Client, args [][]byte) {
	zrangeGeneric(c, args, 1, false, zrangeRank, zdirReverse)
}

// zrangeGeneric is Redis's zrangeGenericCommand: the key at argStart, the
// bounds after it, then the options the variant allows.
func zrangeGeneric(c *Client, args [][]byte, argStart int, store bool, kind zrangeKind, dir zrangeDir) {
	key := args[argStart]
	minIdx, maxIdx := argStart+1, argStart+2
	var withScores bool
	var offset, limit int64 = 0, -1
	for j := argStart + 3; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case !store && argIs(a, "withscores"):
			withScores = true
		case argIs(a, "limit") && left >= 2:
			var err error
			if offset, err = argInt64(args[j+1]); err == nil {
				limit, err = argInt64(args[j+2])
			}
			if err != nil {
				c.WriteErr(err)
				return
			}
			j += 2
		case dir == zdirAuto && argIs(a, "rev"):
			dir = zdirReverse
		case kind == zrangeAuto && argIs(a, "bylex"):
			kind = zrangeLex
		case kind == zrangeAuto && argIs(a, "byscore"):
			kind = zrangeScore
		default:
			c.WriteErr(errSyntax)
			return
		}
	}
	if dir == zdirAuto {
		dir = zdirForward
	}
	if kind == zrangeAuto {
		kind = zrangeRank
	}
	if limit != -1 && kind == zrangeRank {
		c.WriteError("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && kind == zrangeLex {
		c.WriteError("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	reverse := dir == zdirReverse
	if reverse && kind != zrangeRank {
		minIdx, maxIdx = maxIdx, minIdx
	}
	var start, end int64
	var sr keyspace.ScoreRange
	var lr keyspace.LexRange
	var err error
	switch kind {
	case zrangeRank:
		if start, err = argInt64(args[minIdx]); err == nil {
			end, err = argInt64(args[maxIdx])
		}
	case zrangeScore:
		sr, err = parseScoreRange(args[minIdx], args[maxIdx])
	case zrangeLex:
		lr, err = parseLexRange(args[minIdx], args[maxIdx])
	}
	if err != nil {
		c.WriteErr(err)
		return
	}
	z, ok := zsetAt(c, key)
	if !ok {
		return
	}
	var sel zselection
	if z != nil {
		switch kind {
		case zrangeRank:
			sel = rankSelection(start, end, z.Len(), reverse)
		case zrangeScore:
			lo, hi := z.ScoreRanks(sr)
			sel = limitSelection(lo, hi, offset, limit, reverse)
		case zrangeLex:
			lo, hi := z.LexRanks(lr, reverse)
			sel = limitSelection(lo, hi, offset, limit, reverse)
		}
	}
	if !store {
		if z == nil {
			c.WriteArray(0)
			return
		}
		writeSelection(c, z, sel, withScores)
		return
	}
	var members []string
	var scores []float64
	if z != nil {
		sel.each(z, func(x keyspace.ZNode) {
			members = append(members, string(z.Member(x)))
			scores = append(scores, z.ScoreOf(x))
		})
	}
	storeZSet(c, args[1], members, scores, "zrangestore")
}

// storeZSet replaces dst by the given members (none: dst is deleted) in
// one batch and replies with their number.
func storeZSet(c *Client, dst []byte, members []string, scores []float64, event string) {
	mark := len(c.Out)
	c.WriteInt(int64(len(members)))
	c.KS.CountLookups(false) // the sources were read (counted); dst is written
	existed := c.KS.Exists(c.DB, dst)
	if len(members) == 0 && !existed {
		return
	}
	maxLen := 0
	for _, m := range members {
		maxLen = max(maxLen, len(m))
	}
	if keyspace.ZSetListpackFits(len(members), maxLen) {
		for i, f := range scores {
			scores[i] = listpackScore(f)
		}
	}
	b := c.KS.NewBatch()
	b.Del(c.DB, dst)
	b.ZAddStrings(c.DB, dst, members, scores)
	if commitReply(c, b, mark) {
		notifyStore(c, notifyZset, event, dst, len(members) > 0, existed)
	}
}

// ---- removals ----

// ZREM key member [member ...]
func cmdZRem(c *Client, args [][]byte) {
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteInt(0)
		return
	}
	var gone map[string]bool
	if len(args) > 3 {
		gone = make(map[string]bool, len(args)-2)
	}
	var rem [][]byte
	for _, m := range args[2:] {
		if _, found := z.Score(m); !found || gone[string(m)] {
			continue
		}
		if gone != nil {
			gone[string(m)] = true
		}
		rem = append(rem, m)
	}
	mark := len(c.Out)
	c.WriteInt(int64(len(rem)))
	if len(rem) == 0 {
		return
	}
	b := c.KS.NewBatch()
	if len(rem) == z.Len() {
		b.Del(c.DB, args[1])
	} else {
		b.ZRem(c.DB, args[1], rem)
	}
	if commitReply(c, b, mark) {
		notifyChanged(c, notifyZset, "zrem", args[1])
	}
}

// removeSelection writes the removal of the selected elements of the set
// at key (a delete when that is all of them) and replies with their count.
func removeSelection(c *Client, key []byte, z *keyspace.ZSet, s zselection, event string) {
	mark := len(c.Out)
	c.WriteInt(int64(s.count))
	if s.count <= 0 {
		return
	}
	b := c.KS.NewBatch()
	if s.count == z.Len() {
		b.Del(c.DB, key)
	} else {
		members := make([]string, 0, s.count)
		s.each(z, func(x keyspace.ZNode) { members = append(members, string(z.Member(x))) })
		b.ZRemStrings(c.DB, key, members)
	}
	if commitReply(c, b, mark) {
		notifyChanged(c, notifyZset, event, key)
	}
}

// ZREMRANGEBYRANK key start stop
func cmdZRemRangeByRank(c *Client, args [][]byte) {
	start, err := argInt64(args[2])
	if err == nil {
		var end int64
		if end, err = argInt64(args[3]); err == nil {
			z, ok := zsetAt(c, args[1])
			if !ok {
				return
			}
			if z == nil {
				c.WriteInt(0)
				return
			}
			removeSelection(c, args[1], z, rankSelection(start, end, z.Len(), false), "zremrangebyrank")
			return
		}
	}
	c.WriteErr(err)
}

// ZREMRANGEBYSCORE key min max
func cmdZRemRangeByScore(c *Client, args [][]byte) {
	r, err := parseScoreRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteInt(0)
		return
	}
	lo, hi := z.ScoreRanks(r)
	removeSelection(c, args[1], z, limitSelection(lo, hi, 0, -1, false), "zremrangebyscore")
}

// ZREMRANGEBYLEX key min max
func cmdZRemRangeByLex(c *Client, args [][]byte) {
	r, err := parseLexRange(args[2], args[3])
	if err != nil {
		c.WriteErr(err)
		return
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteInt(0)
		return
	}
	lo, hi := z.LexRanks(r, false)
	removeSelection(c, args[1], z, limitSelection(lo, hi, 0, -1, false), "zremrangebylex")
}

// ZPOPMIN key [count]
func cmdZPopMin(c *Client, args [][]byte) { zpopCommand(c, args, false) }

// ZPOPMAX key [count]
func cmdZPopMax(c *Client, args [][]byte) { zpopCommand(c, args, true) }

var errNotPositive = replyError("ERR value is out of range, must be positive")

func zpopCommand(c *Client, args [][]byte, fromMax bool) {
	if len(args) > 3 {
		c.WriteErr(errSyntax)
		return
	}
	count := int64(1)
	if len(args) == 3 {
		// getPositiveLongFromObjectOrReply: one message for both failures.
		n, ok := parseInt64(args[2])
		if !ok || n < 0 {
			c.WriteErr(errNotPositive)
			return
		}
		count = n
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil || count == 0 {
		c.WriteArray(0)
		return
	}
	// With a count, RESP3 nests [member, score] pairs (Redis's
	// use_nested_array); without one the reply is flat in both.
	zpop(c, args[1], z, count, fromMax, nil, len(args) == 3, false)
}

// zpop pops up to count elements from the low (or high) end of z, replying
// with a flat array of member, score pairs, preceded by key when emitKey
// is given (BZPOPMIN/BZPOPMAX); pairs replies the pairs nested in RESP3
// and flat in RESP2 (ZPOPMIN with a count); nested (ZMPOP/BZMPOP) replies
// key and an array of [member, score] pairs in both.
func zpop(c *Client, key []byte, z *keyspace.ZSet, count int64, fromMax bool, emitKey []byte, pairs, nested bool) {
	n := int(min(count, int64(z.Len())))
	sel := zselection{first: 0, count: n}
	if fromMax {
		sel = zselection{first: z.Len() - 1, count: n, reverse: true}
	}
	mark := len(c.Out)
	switch {
	case nested:
		c.WriteArray(2)
		c.WriteBulk(key)
		c.WriteArray(n)
	case emitKey != nil:
		c.WriteArray(2*n + 1)
		c.WriteBulk(emitKey)
	case pairs:
		c.WritePairs(n)
	default:
		c.WriteArray(2 * n)
	}
	members := make([]string, 0, n)
	sel.each(z, func(x keyspace.ZNode) {
		switch {
		case nested:
			c.WriteArray(2)
		case pairs:
			c.WritePair()
		}
		c.WriteBulk(z.Member(x))
		c.WriteDouble(z.ScoreOf(x))
		members = append(members, string(z.Member(x)))
	})
	b := c.KS.NewBatch()
	if n == z.Len() {
		b.Del(c.DB, key)
	} else {
		b.ZRemStrings(c.DB, key, members)
	}
	if commitReply(c, b, mark) {
		notifyChanged(c, notifyZset, pick(fromMax, "zpopmax", "zpopmin"), key)
	}
}

// BZPOPMIN key [key ...] timeout
func cmdBZPopMin(c *Client, args [][]byte) { bzpopCommand(c, args, false) }

// BZPOPMAX key [key ...] timeout
func cmdBZPopMax(c *Client, args [][]byte) { bzpopCommand(c, args, true) }

// bzpopCommand pops from the first non-empty sorted set among the keys,
// replying key, member, score; when all are empty it blocks (see
// blocking.go) and is run again when a ZADD (or anything that adds
// members) reaches one of the keys. As in Redis 7.0 the timeout is
// checked first, then the keys in order: a wrong type stops the search.
func bzpopCommand(c *Client, args [][]byte, fromMax bool) {
	blockingPop(c, args, keyspace.TypeZSet, func(key []byte) (served, failed bool) {
		z, ok := zsetAt(c, key)
		if !ok {
			return false, true
		}
		if z == nil || z.Len() == 0 {
			return false, false
		}
		zpop(c, key, z, 1, fromMax, key, false, false)
		return true, false
	})
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
func cmdZMPop(c *Client, args [][]byte) { zmpopCommand(c, args, 1, false) }

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
func cmdBZMPop(c *Client, args [][]byte) { zmpopCommand(c, args, 2, true) }

var errNumkeys = replyError("ERR numkeys should be greater than 0")

// zmpopCommand is Redis 7.0's zmpopGenericCommand: numkeys, MIN|MAX and
// COUNT are checked before BZMPOP's timeout; the first existing key is
// popped from (a wrong type stops the search); with none, ZMPOP replies
// the null array and BZMPOP blocks.
func zmpopCommand(c *Client, args [][]byte, numkeysIdx int, block bool) {
	numkeys, ok := parseInt64(args[numkeysIdx])
	if !ok || numkeys < 1 {
		c.WriteErr(errNumkeys)
		return
	}
	// MIN|MAX must follow the keys; numkeys is compared before it is
	// added to an index (numkeys near 2^63 wrapped the sum negative).
	if numkeys >= int64(len(args)-numkeysIdx-1) {
		c.WriteErr(errSyntax)
		return
	}
	whereIdx := int64(numkeysIdx) + numkeys + 1
	var fromMax bool
	switch w := args[whereIdx]; {
	case argIs(w, "min"):
	case argIs(w, "max"):
		fromMax = true
	default:
		c.WriteErr(errSyntax)
		return
	}
	count := int64(-1)
	for j := int(whereIdx) + 1; j < len(args); j++ {
		if count == -1 && argIs(args[j], "count") && j+1 < len(args) {
			j++
			n, ok := parseInt64(args[j])
			if !ok || n < 1 {
				c.WriteError("ERR count should be greater than 0")
				return
			}
			count = n
			continue
		}
		c.WriteErr(errSyntax)
		return
	}
	if count == -1 {
		count = 1
	}
	var timeout time.Duration
	if block {
		var err error
		if timeout, err = parseBlockTimeout(args[1]); err != nil {
			c.WriteErr(err)
			return
		}
	}
	keys := args[numkeysIdx+1 : whereIdx]
	order := keys
	if block {
		order = c.ServingOrder(keys)
	}
	for _, key := range order {
		if block && c.SkipsOnWake(key, keyspace.TypeZSet) {
			continue
		}
		z, ok := zsetAt(c, key)
		if !ok {
			return
		}
		if z == nil || z.Len() == 0 || block && c.YieldsTo(key) {
			continue
		}
		zpop(c, key, z, count, fromMax, nil, false, true)
		return
	}
	if !block || !c.BlockOn(keys, timeout) {
		c.WriteNullArray()
	}
}

// ---- ZUNION, ZINTER, ZDIFF and their STORE forms ----

type zsetOp uint8

const (
	zopUnion zsetOp = iota
	zopInter
	zopDiff
)

type zaggregate uint8

const (
	aggSum zaggregate = iota
	aggMin
	aggMax
)

// zsource is one input of a set operation: a sorted set, or a set whose
// members count with score 1 (as in Redis).
type zsource struct {
	z      *keyspace.ZSet
	set    map[string]struct{}
	setOrd []string
	weight float64
}

func (s *zsource) length() int {
	if s.z != nil {
		return s.z.Len()
	}
	return len(s.setOrd)
}

func (s *zsource) score(m string) (float64, bool) {
	if s.z != nil {
		return s.z.Score([]byte(m))
	}
	if _, ok := s.set[m]; ok {
		return 1, true
	}
	return 0, false
}

func (s *zsource) each(fn func(m string, score float64)) {
	if s.z != nil {
		for x := s.z.At(0); x != 0; x = s.z.Next(x) {
			fn(string(s.z.Member(x)), s.z.ScoreOf(x))
		}
		return
	}
	for _, m := range s.setOrd {
		fn(m, 1)
	}
}

func aggregate(target *float64, val float64, agg zaggregate) {
	switch agg {
	case aggSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case aggMin:
		if val < *target {
			*target = val
		}
	case aggMax:
		if val > *target {
			*target = val
		}
	}
}

// ZUNIONSTORE dst numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
func cmdZUnionStore(c *Client, args [][]byte) { zsetOpGeneric(c, args, 2, zopUnion, true, false) }

// ZINTERSTORE dst numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
func cmdZInterStore(c *Client, args [][]byte) { zsetOpGeneric(c, args, 2, zopInter, true, false) }

// ZDIFFSTORE dst numkeys key [key ...]
func cmdZDiffStore(c *Client, args [][]byte) { zsetOpGeneric(c, args, 2, zopDiff, true, false) }

// ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
func cmdZUnion(c *Client, args [][]byte) { zsetOpGeneric(c, args, 1, zopUnion, false, false) }

// ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
func cmdZInter(c *Client, args [][]byte) { zsetOpGeneric(c, args, 1, zopInter, false, false) }

// ZDIFF numkeys key [key ...] [WITHSCORES]
func cmdZDiff(c *Client, args [][]byte) { zsetOpGeneric(c, args, 1, zopDiff, false, false) }

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
func cmdZInterCard(c *Client, args [][]byte) { zsetOpGeneric(c, args, 1, zopInter, false, true) }

// zsetOpGeneric is Redis's zunionInterDiffGenericCommand: the keys are
// looked up (and type-checked) before the options are parsed, as there.
func zsetOpGeneric(c *Client, args [][]byte, numkeysIdx int, op zsetOp, store, cardOnly bool) {
	setnum, err := argInt64(args[numkeysIdx])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if setnum < 1 {
		c.WriteError("ERR at least 1 input key is needed for '" + strings.ToLower(string(args[0])) + "' command")
		return
	}
	if setnum > int64(len(args)-numkeysIdx-1) {
		c.WriteErr(errSyntax)
		return
	}
	src := make([]zsource, setnum)
	j := numkeysIdx + 1
	for i := range src {
		key := args[j]
		j++
		src[i].weight = 1
		switch c.KS.Type(c.DB, key) {
		case keyspace.TypeNone:
		case keyspace.TypeZSet:
			src[i].z, _ = c.KS.ZSetAt(c.DB, key)
		case keyspace.TypeSet:
			members, err := c.KS.SMembers(c.DB, key)
			if err != nil {
				c.WriteErr(err)
				return
			}
			src[i].setOrd = members
			src[i].set = make(map[string]struct{}, len(members))
			for _, m := range members {
				src[i].set[m] = struct{}{}
			}
		default:
			c.WriteErr(keyspace.ErrWrongType)
			return
		}
	}
	agg := aggSum
	withScores := false
	limit := int64(0) // ZINTERCARD: 0 = no limit
	for j < len(args) {
		remaining := len(args) - j
		a := args[j]
		switch {
		case op != zopDiff && !cardOnly && remaining >= len(src)+1 && argIs(a, "weights"):
			j++
			for i := range src {
				w, ok := parseFloat64(args[j])
				if !ok {
					c.WriteError("ERR weight value is not a float")
					return
				}
				src[i].weight = w
				j++
			}
		case op != zopDiff && !cardOnly && remaining >= 2 && argIs(a, "aggregate"):
			switch v := args[j+1]; {
			case argIs(v, "sum"):
				agg = aggSum
			case argIs(v, "min"):
				agg = aggMin
			case argIs(v, "max"):
				agg = aggMax
			default:
				c.WriteErr(errSyntax)
				return
			}
			j += 2
		case !store && !cardOnly && argIs(a, "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && argIs(a, "limit"):
			n, ok := parseInt64(args[j+1])
			if !ok || n < 0 {
				c.WriteError("ERR LIMIT can't be negative")
				return
			}
			limit = n
			j += 2
		default:
			c.WriteErr(errSyntax)
			return
		}
	}
	if op != zopDiff {
		// Smallest first, as Redis does (qsort by cardinality, which glibc
		// sorts stably): the order of a sum's terms follows it.
		slices.SortStableFunc(src, func(a, b zsource) int { return a.length() - b.length() })
	}
	acc := map[string]float64{}
	switch op {
	case zopUnion:
		for i := range src {
			w := src[i].weight
			src[i].each(func(m string, s float64) {
				v := w * s
				if math.IsNaN(v) {
					v = 0
				}
				if cur, ok := acc[m]; ok {
					aggregate(&cur, v, agg)
					acc[m] = cur
				} else {
					acc[m] = v
				}
			})
		}
	case zopInter:
		if src[0].length() > 0 {
			src[0].each(func(m string, s float64) {
				if limit > 0 && int64(len(acc)) >= limit {
					return // ZINTERCARD's LIMIT reached
				}
				score := src[0].weight * s
				if math.IsNaN(score) {
					score = 0
				}
				for k := 1; k < len(src); k++ {
					v, ok := src[k].score(m)
					if !ok {
						return
					}
					aggregate(&score, v*src[k].weight, agg)
				}
				acc[m] = score
			})
		}
	case zopDiff:
		src[0].each(func(m string, s float64) {
			for k := 1; k < len(src); k++ {
				if _, ok := src[k].score(m); ok {
					return
				}
			}
			acc[m] = s
		})
	}
	if cardOnly {
		c.WriteInt(int64(len(acc)))
		return
	}
	members := make([]string, 0, len(acc))
	for m := range acc {
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b string) int {
		sa, sb := acc[a], acc[b]
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return strings.Compare(a, b)
	})
	scores := make([]float64, len(members))
	for i, m := range members {
		scores[i] = acc[m]
	}
	if store {
		storeZSet(c, args[1], members, scores, [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}[op])
		return
	}
	if withScores {
		c.WritePairs(len(members))
	} else {
		c.WriteArray(len(members))
	}
	for i, m := range members {
		if withScores {
			c.WritePair()
		}
		c.WriteBulkString(m)
		if withScores {
			c.WriteDouble(scores[i])
		}
	}
}

// ---- ZRANDMEMBER, ZSCAN ----

// zrandMaxPicks bounds ZRANDMEMBER with a negative count (picks with
// repetition, which the reply must hold all of): a deviation from Redis,
// which accepts any count and exhausts memory on absurd ones.
const zrandMaxPicks = 1 << 26

// ZRANDMEMBER key [count [WITHSCORES]]
func cmdZRandMember(c *Client, args [][]byte) {
	if len(args) < 3 {
		z, ok := zsetAt(c, args[1])
		if !ok {
			return
		}
		if z == nil {
			c.WriteNull()
			return
		}
		c.WriteBulk(z.Member(z.Random()))
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
	if len(args) > 4 || (len(args) == 4 && !argIs(args[3], "withscores")) {
		c.WriteErr(errSyntax)
		return
	}
	withScores := len(args) == 4
	if withScores && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		c.WriteError("ERR value is out of range")
		return
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil || count == 0 {
		c.WriteArray(0)
		return
	}
	emit := func(x keyspace.ZNode) {
		if withScores {
			c.WritePair()
		}
		c.WriteBulk(z.Member(x))
		if withScores {
			c.WriteDouble(z.ScoreOf(x))
		}
	}
	header := func(n int) {
		if withScores {
			c.WritePairs(n)
		} else {
			c.WriteArray(n)
		}
	}
	size := z.Len()
	if count < 0 || count == 1 {
		// With repetitions: each pick is independent.
		n := int(count)
		if count < 0 {
			n = int(-count)
		}
		if n > zrandMaxPicks {
			// Redis would try to build the reply and run out of memory;
			// refusing costs nothing that a client could use.
			c.WriteError("ERR value is out of range")
			return
		}
		header(n)
		for i := 0; i < n; i++ {
			emit(z.Random())
		}
		return
	}
	if count >= int64(size) {
		// The whole set, walked from the top down as Redis's zuiNext does.
		header(size)
		for x := z.At(size - 1); x != 0; x = z.Prev(x) {
			emit(x)
		}
		return
	}
	n := int(count)
	header(n)
	if n*3 > size {
		// Many of them: a partial shuffle of all ranks.
		ranks := make([]int, size)
		for i := range ranks {
			ranks[i] = i
		}
		for i := 0; i < n; i++ {
			k := i + rand.IntN(size-i)
			ranks[i], ranks[k] = ranks[k], ranks[i]
			emit(z.At(ranks[i]))
		}
		return
	}
	picked := make(map[int]bool, n)
	for len(picked) < n {
		r := rand.IntN(size)
		if picked[r] {
			continue
		}
		picked[r] = true
		emit(z.At(r))
	}
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]: the cursor is checked
// first, then the key (a missing key answers an empty scan whatever the
// options), then the options, as in Redis.
func cmdZScan(c *Client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		c.WriteError("ERR invalid cursor")
		return
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
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
	var out []string
	next := z.Scan(cursor, o.count, func(m []byte, s float64) {
		if o.match == nil || globMatch(o.match, m) {
			out = append(out, string(m), formatScore(s))
		}
	})
	c.WriteArray(2)
	c.WriteBulkString(strconv.FormatUint(next, 10))
	c.WriteArray(len(out))
	for _, s := range out {
		c.WriteBulkString(s)
	}
}

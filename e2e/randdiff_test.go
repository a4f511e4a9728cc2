package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Randomized differential test: a pseudo-random command sequence over a
// small keyspace (8 keys, 13 members/fields, one of them 68 bytes long,
// small integer and float scores including inf, values including "" and
// integers) is sent to redis-server
// and to persimmon-server over raw RESP, and each pair of replies must
// render identically, after normalisation for replies whose order or
// content Redis leaves unspecified:
//
//	sort   SMEMBERS, SINTER, SUNION, SDIFF, HKEYS, HVALS, KEYS: sorted elements
//	pairs  HGETALL, HRANDFIELD WITHVALUES with a count covering the hash: sorted pairs
//	len    SRANDMEMBER/HRANDFIELD/ZRANDMEMBER with a small count: only the shape
//	ttl    TTL, PTTL, EXPIRETIME: any positive value renders the same
//	enc    OBJECT ENCODING: the string encodings (int/embstr/raw) are one class
//	       (known divergence, see testdata/diff/keys.txt)
//	scan   SCAN family: the sorted set of everything a full iteration returns
//	spop   SPOP: the shape is compared, then redis-server is resynchronised to
//	       persimmon's choice (SADD back what it popped, SREM what persimmon
//	       popped, which must all have been members)
//
// Lexicographical ranges over a sorted set whose scores differ are not sent
// (Redis leaves their result unspecified; see rdLexKey).
//
// Environment:
//
//	PERSIMMON_RANDDIFF_SEED      first seed (default 1)
//	PERSIMMON_RANDDIFF_SEEDS     number of consecutive seeds to run (default 1)
//	PERSIMMON_RANDDIFF_COUNT     commands per seed (default 3000)
//	PERSIMMON_RANDDIFF_KNOWN     1: also generate and compare the known persimmon
//	                             divergences (rdKnownBug, rdKnownBugAt)
//	PERSIMMON_RANDDIFF_MINIMIZE  1: shrink the first mismatch of each seed to a
//	                             short sequence that reproduces it (slow)
//
// TTLs are always large (>= 100000 s), so no key expires during a run.

// rdStep is one command and how its reply is compared.
type rdStep struct {
	args []string
	mode string   // "", sort, pairs, len, ttl, enc, scan, spop, exec
	sub  []string // exec: the modes of the queued commands
}

func (s rdStep) text() string {
	parts := make([]string, len(s.args))
	for i, a := range s.args {
		if a == "" || strings.ContainsAny(a, " \"\\") {
			parts[i] = strconv.Quote(a)
		} else {
			parts[i] = a
		}
	}
	return strings.Join(parts, " ")
}

// rdUnit is a single command or a whole MULTI ... EXEC block; minimisation
// removes units, never parts of one.
type rdUnit []rdStep

var (
	rdKeys = []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"}
	// rdLong is longer than the listpack value limit (64 bytes): a hash,
	// set or sorted set holding it converts to hashtable or skiplist.
	rdLong    = strings.Repeat("long", 17)
	rdMembers = []string{"a", "b", "c", "d", "e", "f", "g", "1", "2", "10", "-3", "", rdLong}
	rdValues  = []string{"", "0", "1", "-7", "42", "3.5", "abc", "hello world", "9223372036854775807", "-9223372036854775808", "1e3", "x", rdLong}
	rdInts    = []string{"1", "-1", "5", "100", "-100", "0", "3", "9223372036854775807", "abc", "1.5"}
	rdFloats  = []string{"0.1", "-0.5", "1.5", "3", "1e3", "-1e3", "0", "2.5", "abc", "inf"}
	rdScores  = []string{"0", "1", "-1", "2", "2.5", "-3", "10", "0.1", "inf", "-inf", "+inf", "1e3", "1", "2"}
	rdSBounds = []string{"-inf", "+inf", "0", "1", "(1", "2", "2.5", "(2.5", "-1", "10", "(10", "-inf", "+inf"}
	rdLBounds = []string{"-", "+", "[a", "(a", "[c", "(c", "[1", "[", "(g", "[zz", "-", "+"}
	rdIdx     = []string{"-1", "-2", "0", "1", "2", "3", "5", "-5", "10", "-100", "100", "0", "-1"}
	rdWeights = []string{"1", "2", "-1", "0", "0.5", "inf", "1"}
)

type rdGen struct {
	r *rand.Rand
	// known: also generate the patterns of known persimmon bugs (see
	// rdKnownBug), which the default run avoids so that main stays green.
	known bool
}

// rdKnownBug reports a command that hits a known persimmon divergence from
// redis-server 7.0, skipped unless PERSIMMON_RANDDIFF_KNOWN=1. None at the
// moment (GETRANGE with a negative start after a negative end was one until
// it was fixed); state-dependent ones go in rdKnownBugAt.
func rdKnownBug(s rdStep) bool {
	return false
}

func (g *rdGen) n(k int) int            { return g.r.IntN(k) }
func (g *rdGen) p(x float64) bool       { return g.r.Float64() < x }
func (g *rdGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// key picks a key, usually one of the two the family prefers (so that
// collections grow), sometimes any key (so that WRONGTYPE happens).
func (g *rdGen) key(base int) string {
	if g.p(0.85) {
		return rdKeys[(base+g.n(2))%len(rdKeys)]
	}
	return g.pick(rdKeys)
}

func (g *rdGen) keys(base, min, max int) []string {
	n := min + g.n(max-min+1)
	out := make([]string, n)
	for i := range out {
		out[i] = g.key(base)
	}
	return out
}

func (g *rdGen) members(min, max int) []string {
	n := min + g.n(max-min+1)
	out := make([]string, n)
	for i := range out {
		out[i] = g.pick(rdMembers)
	}
	return out
}

// numkeys renders len(ks), now and then wrong.
func (g *rdGen) numkeys(ks []string) string {
	if g.p(0.05) {
		return g.pick([]string{"0", "-1", strconv.Itoa(len(ks) + 1), "x"})
	}
	return strconv.Itoa(len(ks))
}

func (g *rdGen) ttl() string { return strconv.Itoa(100000 + g.n(1000)*100) }

const (
	famString = 0
	famHash   = 2
	famList   = 4
	famSet    = 5 // shares k5 with lists and k6 with sorted sets
	famZSet   = 6
)

// command returns one random command; inMulti excludes those whose reply
// needs more than a normalisation (SPOP resync, SCAN iteration, the score
// check of lex ranges) and the transaction commands.
func (g *rdGen) command(inMulti bool) rdStep {
	for {
		s := g.mutate(g.command1())
		if _, lex := rdLexKey(s.args); inMulti && (lex || s.mode == "spop" || s.mode == "scan" || s.args[0] == "EXEC" || s.args[0] == "DISCARD") {
			continue
		}
		if !g.known && rdKnownBug(s) {
			continue
		}
		return s
	}
}

// mutate sometimes drops trailing arguments or adds a junk one, for arity
// and syntax errors. A random command whose reply becomes unpredictable is
// compared by shape only.
func (g *rdGen) mutate(s rdStep) rdStep {
	switch {
	case g.p(0.03) && len(s.args) > 1:
		s.args = s.args[:1+g.n(len(s.args)-1)]
	case g.p(0.02):
		s.args = append(slices.Clone(s.args), g.pick([]string{"XX", "junk", "1", "WITHSCORES", "COUNT"}))
	default:
		return s
	}
	switch strings.ToUpper(s.args[0]) {
	case "SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER":
		s.mode = "len"
	case "SPOP":
		s.mode = "spop"
	}
	return s
}

func (g *rdGen) command1() rdStep {
	cmd := func(mode string, args ...string) rdStep { return rdStep{args: args, mode: mode} }
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	switch fam := g.n(100); {
	case fam < 20: // strings
		k := g.key(famString)
		switch g.n(22) {
		case 0, 1:
			a := []string{"SET", k, g.pick(rdValues)}
			if g.p(0.3) {
				a = append(a, g.pick([]string{"NX", "XX"}))
			}
			if g.p(0.25) {
				a = append(a, "GET")
			}
			switch g.n(5) {
			case 0:
				a = append(a, "EX", g.ttl())
			case 1:
				a = append(a, "KEEPTTL")
			case 2:
				if g.p(0.2) {
					a = append(a, "EX", g.pick([]string{"0", "-5", "abc"}))
				}
			}
			return cmd("", a...)
		case 2:
			return cmd("", "GET", k)
		case 3:
			return cmd("", "APPEND", k, g.pick(rdValues))
		case 4:
			return cmd("", g.pick([]string{"INCRBY", "DECRBY"}), k, g.pick(rdInts))
		case 5:
			return cmd("", g.pick([]string{"INCR", "DECR"}), k)
		case 6:
			return cmd("", "INCRBYFLOAT", k, g.pick(rdFloats))
		case 7:
			return cmd("", "GETRANGE", k, g.pick(rdIdx), g.pick(rdIdx))
		case 8:
			return cmd("", "SETRANGE", k, strconv.Itoa(g.n(12)), g.pick(rdValues))
		case 9:
			return cmd("", "STRLEN", k)
		case 10:
			return cmd("", "GETDEL", k)
		case 11, 12:
			a := []string{g.pick([]string{"MSET", "MSETNX"})}
			for range 1 + g.n(3) {
				a = append(a, g.key(famString), g.pick(rdValues))
			}
			return cmd("", a...)
		case 13:
			return cmd("", "MGET", g.key(famString), g.key(famString), g.key(famString))
		case 14:
			return cmd("", "SETNX", k, g.pick(rdValues))
		case 15:
			return cmd("", "GETSET", k, g.pick(rdValues))
		case 16:
			switch g.n(3) {
			case 0:
				return cmd("", "GETEX", k)
			case 1:
				return cmd("", "GETEX", k, "EX", g.ttl())
			default:
				return cmd("", "GETEX", k, "PERSIST")
			}
		case 17:
			return cmd("", "SETEX", k, g.ttl(), g.pick(rdValues))
		case 18:
			return cmd("", g.bitfield(k)...)
		case 19:
			op := g.pick([]string{"AND", "OR", "XOR", "NOT"})
			a := []string{"BITOP", op, g.key(famString), g.key(famString)}
			if op != "NOT" || g.p(0.1) {
				for range g.n(3) {
					a = append(a, g.key(famString))
				}
			}
			return cmd("", a...)
		case 20:
			a := []string{"LCS", k, g.key(famString)}
			for range g.n(3) {
				switch g.n(4) {
				case 0:
					a = append(a, "LEN")
				case 1:
					a = append(a, "IDX")
				case 2:
					a = append(a, "WITHMATCHLEN")
				default:
					a = append(a, "MINMATCHLEN", g.pick([]string{"0", "1", "2", "4", "-1", "x"}))
				}
			}
			return cmd("", a...)
		default:
			return cmd("", "SUBSTR", k, g.pick(rdIdx), g.pick(rdIdx))
		}
	case fam < 32: // generic
		k := g.pick(rdKeys)
		switch g.n(17) {
		case 0:
			return cmd("", cat([]string{g.pick([]string{"DEL", "UNLINK"})}, g.keys(0, 1, 2))...)
		case 1:
			return cmd("", cat([]string{"EXISTS"}, g.keys(0, 1, 3))...)
		case 2, 3:
			return cmd("", "TYPE", k)
		case 4:
			return cmd("", g.pick([]string{"RENAME", "RENAMENX"}), k, g.pick(rdKeys))
		case 5:
			a := []string{"COPY", k, g.pick(rdKeys)}
			if g.p(0.4) {
				a = append(a, "REPLACE")
			}
			return cmd("", a...)
		case 6:
			a := []string{g.pick([]string{"EXPIRE", "EXPIRE", "PEXPIRE"}), k, g.ttl()}
			if a[0] == "PEXPIRE" {
				a[2] += "000"
			}
			if g.p(0.4) {
				a = append(a, g.pick([]string{"NX", "XX", "GT", "LT"}))
			}
			if g.p(0.05) {
				a[2] = g.pick([]string{"0", "-1", "abc"})
			}
			return cmd("", a...)
		case 7:
			return cmd("", "PERSIST", k)
		case 8:
			return cmd("ttl", g.pick([]string{"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"}), k)
		case 9, 10:
			return cmd("enc", "OBJECT", "ENCODING", k)
		case 11:
			return cmd("", "DBSIZE")
		case 12:
			return cmd("sort", "KEYS", g.pick([]string{"*", "k[0-3]", "k?", "x*"}))
		case 13:
			a := []string{"SCAN", "0"}
			if g.p(0.5) {
				a = append(a, "TYPE", g.pick([]string{"string", "hash", "list", "set", "zset"}))
			}
			if g.p(0.5) {
				a = append(a, "COUNT", "2")
			}
			return cmd("scan", a...)
		case 14:
			return cmd("", cat([]string{"TOUCH"}, g.keys(0, 1, 3))...)
		case 15:
			return cmd("", "EXPIRE", k, g.pick([]string{"0", "-1"}))
		default:
			return cmd("", "OBJECT", g.pick([]string{"ENCODING", "encoding", "FREQX", "HELP"}))
		}
	case fam < 47: // hashes
		k := g.key(famHash)
		f := g.pick(rdMembers)
		switch g.n(18) {
		case 0, 1, 2:
			a := []string{g.pick([]string{"HSET", "HSET", "HMSET"}), k}
			for range 1 + g.n(3) {
				a = append(a, g.pick(rdMembers), g.pick(rdValues))
			}
			return cmd("", a...)
		case 3:
			return cmd("", "HSETNX", k, f, g.pick(rdValues))
		case 4:
			return cmd("", "HGET", k, f)
		case 5:
			return cmd("", cat([]string{"HMGET", k}, g.members(1, 3))...)
		case 6, 7:
			return cmd("", cat([]string{"HDEL", k}, g.members(1, 3))...)
		case 8:
			return cmd("", "HLEN", k)
		case 9:
			return cmd("", "HEXISTS", k, f)
		case 10:
			return cmd("", "HINCRBY", k, f, g.pick(rdInts))
		case 11:
			return cmd("", "HINCRBYFLOAT", k, f, g.pick(rdFloats))
		case 12:
			return cmd("", "HSTRLEN", k, f)
		case 13:
			return cmd("pairs", "HGETALL", k)
		case 14:
			return cmd("sort", g.pick([]string{"HKEYS", "HVALS"}), k)
		case 15:
			a := []string{"HSCAN", k, "0"}
			if g.p(0.3) {
				a = append(a, "MATCH", g.pick([]string{"*", "[a-c]", "1*"}))
			}
			return cmd("scan", a...)
		default:
			switch g.n(4) {
			case 0:
				return cmd("len", "HRANDFIELD", k)
			case 1:
				return cmd("len", "HRANDFIELD", k, g.pick([]string{"-5", "-1", "0", "1", "3"}))
			case 2:
				return cmd("len", "HRANDFIELD", k, g.pick([]string{"-5", "2"}), "WITHVALUES")
			default:
				if g.p(0.5) {
					return cmd("pairs", "HRANDFIELD", k, "20", "WITHVALUES")
				}
				return cmd("sort", "HRANDFIELD", k, "20")
			}
		}
	case fam < 64: // lists
		k := g.key(famList)
		e := g.pick(rdMembers)
		switch g.n(20) {
		case 0, 1, 2:
			return cmd("", cat([]string{g.pick([]string{"LPUSH", "RPUSH"}), k}, g.members(1, 3))...)
		case 3:
			return cmd("", cat([]string{g.pick([]string{"LPUSHX", "RPUSHX"}), k}, g.members(1, 2))...)
		case 4:
			a := []string{g.pick([]string{"LPOP", "RPOP"}), k}
			if g.p(0.5) {
				a = append(a, g.pick([]string{"0", "1", "2", "5", "-1"}))
			}
			return cmd("", a...)
		case 5:
			return cmd("", "LLEN", k)
		case 6:
			return cmd("", "LRANGE", k, g.pick(rdIdx), g.pick(rdIdx))
		case 7:
			return cmd("", "LINDEX", k, g.pick(rdIdx))
		case 8:
			return cmd("", "LSET", k, g.pick(rdIdx), e)
		case 9, 10:
			a := []string{"LPOS", k, e}
			if g.p(0.4) {
				a = append(a, "RANK", g.pick([]string{"1", "2", "-1", "-2", "0"}))
			}
			if g.p(0.4) {
				a = append(a, "COUNT", g.pick([]string{"0", "1", "2", "-1"}))
			}
			if g.p(0.3) {
				a = append(a, "MAXLEN", g.pick([]string{"0", "1", "3", "-1"}))
			}
			return cmd("", a...)
		case 11:
			return cmd("", "LINSERT", k, g.pick([]string{"BEFORE", "AFTER", "before", "MIDDLE"}), g.pick(rdMembers), e)
		case 12:
			return cmd("", "LREM", k, g.pick([]string{"0", "1", "-1", "2", "-2"}), e)
		case 13:
			return cmd("", "LTRIM", k, g.pick(rdIdx), g.pick(rdIdx))
		case 14, 15:
			return cmd("", "LMOVE", k, g.key(famList), g.pick([]string{"LEFT", "RIGHT"}), g.pick([]string{"LEFT", "RIGHT", "UP"}))
		case 16:
			return cmd("", "RPOPLPUSH", k, g.key(famList))
		default:
			ks := g.keys(famList, 1, 3)
			a := cat([]string{"LMPOP", g.numkeys(ks)}, ks, []string{g.pick([]string{"LEFT", "RIGHT"})})
			if g.p(0.5) {
				a = append(a, "COUNT", g.pick([]string{"1", "2", "10", "0"}))
			}
			return cmd("", a...)
		}
	case fam < 79: // sets
		k := g.key(famSet)
		switch g.n(17) {
		case 0, 1, 2:
			return cmd("", cat([]string{"SADD", k}, g.members(1, 4))...)
		case 3, 4:
			return cmd("", cat([]string{"SREM", k}, g.members(1, 3))...)
		case 5:
			return cmd("", "SCARD", k)
		case 6:
			return cmd("", "SISMEMBER", k, g.pick(rdMembers))
		case 7:
			return cmd("", cat([]string{"SMISMEMBER", k}, g.members(1, 3))...)
		case 8:
			return cmd("sort", "SMEMBERS", k)
		case 9:
			return cmd("sort", cat([]string{g.pick([]string{"SINTER", "SUNION", "SDIFF"})}, g.keys(famSet, 1, 3))...)
		case 10:
			ks := g.keys(famSet, 1, 3)
			a := cat([]string{"SINTERCARD", g.numkeys(ks)}, ks)
			if g.p(0.4) {
				a = append(a, "LIMIT", g.pick([]string{"0", "1", "2", "-1"}))
			}
			return cmd("", a...)
		case 11:
			return cmd("", cat([]string{g.pick([]string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}), g.key(famSet)}, g.keys(famSet, 1, 3))...)
		case 12:
			return cmd("", "SMOVE", k, g.key(famSet), g.pick(rdMembers))
		case 13:
			switch g.n(3) {
			case 0:
				return cmd("spop", "SPOP", k)
			case 1:
				return cmd("spop", "SPOP", k, g.pick([]string{"0", "1", "2", "3", "-1"}))
			default:
				return cmd("sort", "SPOP", k, "20")
			}
		case 14:
			a := []string{"SSCAN", k, "0"}
			if g.p(0.3) {
				a = append(a, "MATCH", g.pick([]string{"*", "[a-c]", "1*"}))
			}
			return cmd("scan", a...)
		default:
			switch g.n(3) {
			case 0:
				return cmd("len", "SRANDMEMBER", k)
			case 1:
				return cmd("len", "SRANDMEMBER", k, g.pick([]string{"-5", "-1", "0", "1", "3"}))
			default:
				return cmd("sort", "SRANDMEMBER", k, "20")
			}
		}
	case fam < 97: // sorted sets
		k := g.key(famZSet)
		m := g.pick(rdMembers)
		switch g.n(30) {
		case 0, 1, 2, 3:
			a := []string{"ZADD", k}
			for _, fl := range []string{"NX", "XX", "GT", "LT", "CH", "INCR"} {
				if g.p(0.12) {
					a = append(a, fl)
				}
			}
			for range 1 + g.n(3) {
				sc := g.pick(rdScores)
				if g.p(0.02) {
					sc = g.pick([]string{"abc", "nan", "(1"})
				}
				a = append(a, sc, g.pick(rdMembers))
			}
			return cmd("", a...)
		case 4:
			return cmd("", "ZINCRBY", k, g.pick(rdScores), m)
		case 5:
			return cmd("", "ZSCORE", k, m)
		case 6:
			return cmd("", cat([]string{"ZMSCORE", k}, g.members(1, 3))...)
		case 7:
			return cmd("", "ZCARD", k)
		case 8:
			return cmd("", cat([]string{"ZREM", k}, g.members(1, 3))...)
		case 9:
			a := []string{g.pick([]string{"ZRANK", "ZREVRANK"}), k, m}
			return cmd("", a...)
		case 10:
			return cmd("", "ZCOUNT", k, g.pick(rdSBounds), g.pick(rdSBounds))
		case 11:
			return cmd("", "ZLEXCOUNT", k, g.pick(rdLBounds), g.pick(rdLBounds))
		case 12, 13, 14, 15:
			return cmd("", g.zrange("ZRANGE", k)...)
		case 16:
			return cmd("", cat([]string{"ZRANGESTORE", g.key(famZSet)}, g.zrange("", k)[1:])...)
		case 17:
			switch g.n(4) {
			case 0:
				a := []string{"ZRANGEBYSCORE", k, g.pick(rdSBounds), g.pick(rdSBounds)}
				if g.p(0.4) {
					a = append(a, "WITHSCORES")
				}
				if g.p(0.3) {
					a = append(a, "LIMIT", g.pick([]string{"0", "1", "-1"}), g.pick([]string{"1", "2", "-1", "0"}))
				}
				return cmd("", a...)
			case 1:
				a := []string{"ZREVRANGEBYSCORE", k, g.pick(rdSBounds), g.pick(rdSBounds)}
				if g.p(0.4) {
					a = append(a, "WITHSCORES")
				}
				return cmd("", a...)
			case 2:
				return cmd("", g.pick([]string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"}), k, g.pick(rdLBounds), g.pick(rdLBounds))
			default:
				a := []string{"ZREVRANGE", k, g.pick(rdIdx), g.pick(rdIdx)}
				if g.p(0.4) {
					a = append(a, "WITHSCORES")
				}
				return cmd("", a...)
			}
		case 18, 19, 20:
			op := g.pick([]string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZUNION", "ZINTER", "ZDIFF"})
			ks := g.keys(famZSet, 1, 3)
			if g.p(0.15) {
				ks[0] = g.key(famSet) // sets count as sorted sets with score 1
			}
			a := []string{op}
			if strings.HasSuffix(op, "STORE") {
				a = append(a, g.key(famZSet))
			}
			a = append(a, g.numkeys(ks))
			a = append(a, ks...)
			if !strings.HasPrefix(op, "ZDIFF") || g.p(0.1) {
				if g.p(0.4) {
					a = append(a, "WEIGHTS")
					for range ks {
						a = append(a, g.pick(rdWeights))
					}
				}
				if g.p(0.4) {
					a = append(a, "AGGREGATE", g.pick([]string{"SUM", "MIN", "MAX", "AVG"}))
				}
			}
			if !strings.HasSuffix(op, "STORE") && g.p(0.5) {
				a = append(a, "WITHSCORES")
			}
			return cmd("", a...)
		case 21:
			return cmd("", g.pick([]string{"ZREMRANGEBYSCORE", "ZREMRANGEBYSCORE"}), k, g.pick(rdSBounds), g.pick(rdSBounds))
		case 22:
			return cmd("", "ZREMRANGEBYRANK", k, g.pick(rdIdx), g.pick(rdIdx))
		case 23:
			return cmd("", "ZREMRANGEBYLEX", k, g.pick(rdLBounds), g.pick(rdLBounds))
		case 24, 25:
			a := []string{g.pick([]string{"ZPOPMIN", "ZPOPMAX"}), k}
			if g.p(0.6) {
				a = append(a, g.pick([]string{"0", "1", "2", "3", "10", "-1"}))
			}
			return cmd("", a...)
		case 26:
			ks := g.keys(famZSet, 1, 3)
			a := cat([]string{"ZMPOP", g.numkeys(ks)}, ks, []string{g.pick([]string{"MIN", "MAX"})})
			if g.p(0.5) {
				a = append(a, "COUNT", g.pick([]string{"1", "2", "10", "0"}))
			}
			return cmd("", a...)
		case 27:
			ks := g.keys(famZSet, 1, 3)
			a := cat([]string{"ZINTERCARD", g.numkeys(ks)}, ks)
			if g.p(0.4) {
				a = append(a, "LIMIT", g.pick([]string{"0", "1", "2"}))
			}
			return cmd("", a...)
		case 28:
			a := []string{"ZSCAN", k, "0"}
			if g.p(0.3) {
				a = append(a, "COUNT", "1")
			}
			return cmd("scan", a...)
		default:
			switch g.n(4) {
			case 0:
				return cmd("len", "ZRANDMEMBER", k)
			case 1:
				return cmd("len", "ZRANDMEMBER", k, g.pick([]string{"-5", "-1", "0", "1", "3"}))
			case 2:
				return cmd("len", "ZRANDMEMBER", k, g.pick([]string{"-3", "2"}), "WITHSCORES")
			default:
				return cmd("pairs", "ZRANDMEMBER", k, "20", "WITHSCORES")
			}
		}
	default: // oddities
		switch g.n(4) {
		case 0:
			return cmd("", "EXEC")
		case 1:
			return cmd("", "DISCARD")
		case 2:
			return cmd("", "NOSUCHCOMMAND", g.pick(rdKeys))
		default:
			return cmd("", "PING")
		}
	}
}

// zrange builds ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT o c]
// [WITHSCORES], including the invalid combinations now and then.
// bitfield is a BITFIELD (or, now and then, BITFIELD_RO) of one to four
// sub-commands over small fields near the start of k, with now and then a
// bad type, offset or value.
func (g *rdGen) bitfield(k string) []string {
	a := []string{"BITFIELD", k}
	if g.p(0.15) {
		a[0] = "BITFIELD_RO"
	}
	types := []string{"u1", "u4", "u8", "i8", "i5", "u16", "i32", "u63", "i64", "u64", "x8"}
	offsets := []string{"0", "1", "3", "7", "8", "13", "#1", "#2", "#3", "40", "-1"}
	values := []string{"0", "1", "-1", "100", "-100", "127", "128", "255", "256", "-129", "9223372036854775807", "-9223372036854775808", "abc"}
	for range 1 + g.n(4) {
		switch g.n(6) {
		case 0:
			a = append(a, "OVERFLOW", g.pick([]string{"WRAP", "SAT", "FAIL", "wrap", "sat", "fail"}))
		case 1, 2:
			a = append(a, "GET", g.pick(types), g.pick(offsets))
		case 3:
			a = append(a, "SET", g.pick(types), g.pick(offsets), g.pick(values))
		default:
			a = append(a, "INCRBY", g.pick(types), g.pick(offsets), g.pick(values))
		}
	}
	return a
}

func (g *rdGen) zrange(name, k string) []string {
	a := []string{name, k}
	by := g.n(3)
	rev := g.p(0.3)
	lo, hi := rdIdx, rdIdx
	switch by {
	case 1:
		lo, hi = rdSBounds, rdSBounds
	case 2:
		lo, hi = rdLBounds, rdLBounds
	}
	if g.p(0.05) { // bounds of the wrong kind
		lo, hi = rdLBounds, rdSBounds
	}
	a = append(a, g.pick(lo), g.pick(hi))
	switch by {
	case 1:
		a = append(a, "BYSCORE")
	case 2:
		a = append(a, "BYLEX")
	}
	if rev {
		a = append(a, "REV")
	}
	if (by != 0 && g.p(0.4)) || g.p(0.03) {
		a = append(a, "LIMIT", g.pick([]string{"0", "1", "2", "-1"}), g.pick([]string{"1", "2", "-1", "0", "5"}))
	}
	if name != "" && ((by != 2 && g.p(0.4)) || g.p(0.03)) {
		a = append(a, "WITHSCORES")
	}
	return a
}

// unit returns one command, or now and then a MULTI block.
func (g *rdGen) unit() rdUnit {
	if g.p(0.02) { // recycle a key, so that it can change type
		return rdUnit{{args: []string{"DEL", g.pick(rdKeys)}}}
	}
	if !g.p(0.04) {
		return rdUnit{g.command(false)}
	}
	u := rdUnit{{args: []string{"MULTI"}}}
	var sub []string
	for range 1 + g.n(4) {
		s := g.command(true)
		u = append(u, s)
		sub = append(sub, s.mode)
	}
	if g.p(0.1) {
		return append(u, rdStep{args: []string{"DISCARD"}})
	}
	return append(u, rdStep{args: []string{"EXEC"}, mode: "exec", sub: sub})
}

// rdKnown: PERSIMMON_RANDDIFF_KNOWN=1, compare the known divergences too.
var rdKnown = os.Getenv("PERSIMMON_RANDDIFF_KNOWN") == "1"

// normalize renders r for comparison under mode.
func rdNormalize(r reply, mode string) string {
	if r.kind == '-' {
		return r.String()
	}
	switch mode {
	case "sort":
		return r.sorted().String()
	case "pairs":
		if r.kind != '*' || r.null || len(r.elems)%2 != 0 {
			return r.String()
		}
		pairs := make([]string, 0, len(r.elems)/2)
		for i := 0; i < len(r.elems); i += 2 {
			pairs = append(pairs, r.elems[i].String()+" "+r.elems[i+1].String())
		}
		slices.Sort(pairs)
		return fmt.Sprintf("pairs%d[%s]", len(pairs), strings.Join(pairs, ", "))
	case "len":
		switch {
		case r.null:
			return r.String()
		case r.kind == '*':
			return fmt.Sprintf("*%d[...]", len(r.elems))
		case r.kind == '$':
			return "$bulk"
		}
	case "ttl":
		if n, err := strconv.ParseInt(r.str, 10, 64); r.kind == ':' && err == nil && n > 0 {
			return ":<positive>"
		}
	case "enc":
		switch r.str {
		case "int", "embstr", "raw":
			return "<string encoding>"
		}
	}
	return r.String()
}

// rdTarget is one server of the comparison.
type rdTarget struct{ *diffTarget }

func (d rdTarget) do(args []string) (reply, error) { return d.exchange(1, bytesArgs(args...)) }

// rdRun runs units on both servers (already reset) and returns the first
// mismatch's description and the index of the unit where it happened, or
// -1. log, when not nil, receives every mismatch (up to maxFail).
func rdRun(want, got rdTarget, units []rdUnit, maxFail int, st *rdStats, report func(i int, msg string)) int {
	first, fails := -1, 0
	for i, u := range units {
		for _, s := range u {
			msg := rdRunStepStats(want, got, s, st)
			if msg == "" {
				continue
			}
			if first < 0 {
				first = i
			}
			if report != nil {
				report(i, msg)
			}
			if fails++; fails >= maxFail {
				return first
			}
		}
	}
	return first
}

// rdKnownBugAt reports a command that would hit a known persimmon bug in
// the current state (see rdKnownBug), asking redis-server read-only. None
// at the moment: LMOVE/RPOPLPUSH of a one-element list onto itself (which
// dropped the TTL) was one until it was fixed.
func rdKnownBugAt(d rdTarget, args []string) bool {
	return false
}

// rdLexKey returns the sorted set a lexicographical range command reads.
// Redis leaves the result unspecified unless all the elements have the same
// score (and redis-server's skiplist answer then depends on its random
// levels), so rdRunStep sends such a command only when they do.
func rdLexKey(args []string) (string, bool) {
	if len(args) < 2 {
		return "", false
	}
	switch strings.ToUpper(args[0]) {
	case "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT", "ZREMRANGEBYLEX":
		return args[1], true
	case "ZRANGE", "ZRANGESTORE":
		for _, a := range args {
			if strings.EqualFold(a, "BYLEX") {
				if strings.EqualFold(args[0], "ZRANGESTORE") {
					if len(args) < 3 {
						return "", false
					}
					return args[2], true
				}
				return args[1], true
			}
		}
	}
	return "", false
}

// rdMixedScores reports whether key is a sorted set whose elements do not
// all have the same score (asking redis-server, read-only).
func rdMixedScores(d rdTarget, key string) bool {
	r, err := d.do([]string{"ZRANGE", key, "0", "-1", "WITHSCORES"})
	if err != nil || r.kind != '*' {
		return false
	}
	for i := 3; i < len(r.elems); i += 2 {
		if r.elems[i].str != r.elems[1].str {
			return true
		}
	}
	return false
}

// rdStats counts redis-server's replies, to show what a run exercised.
type rdStats struct {
	commands, errors, wrongType, nonEmpty, skippedLex, skippedKnown int
	names                                                           map[string]bool
}

func (st *rdStats) add(s rdStep, r reply) {
	if st == nil {
		return
	}
	st.commands++
	st.names[strings.ToUpper(s.args[0])] = true
	switch {
	case r.kind == '-':
		st.errors++
		if strings.HasPrefix(r.str, "WRONGTYPE") {
			st.wrongType++
		}
	case r.kind == '*' && len(r.elems) > 0:
		st.nonEmpty++
	}
}

func rdRunStep(want, got rdTarget, s rdStep) string { return rdRunStepStats(want, got, s, nil) }

func rdRunStepStats(want, got rdTarget, s rdStep, st *rdStats) string {
	if s.mode == "scan" {
		l := scriptLine{file: "randdiff", text: s.text(), mode: "scan", conn: 1, args: bytesArgs(s.args...)}
		var err error
		if l.cursor, l.pairs, err = scanCursor(l.args); err != nil {
			l.mode = "" // arity error (mutated): compare the error replies
		}
		w, g := want.run(l), got.run(l)
		if w != g {
			return fmt.Sprintf("%s\n\tredis:     %s\n\tpersimmon: %s", s.text(), w, g)
		}
		return ""
	}
	if rdKnownBugAt(want, s.args) {
		if st != nil {
			st.skippedKnown++
		}
		return ""
	}
	if key, lex := rdLexKey(s.args); lex && rdMixedScores(want, key) {
		if st != nil {
			st.skippedLex++
		}
		return ""
	}
	wr, werr := want.do(s.args)
	gr, gerr := got.do(s.args)
	st.add(s, wr)
	if werr != nil || gerr != nil {
		return fmt.Sprintf("%s\n\tredis:     %v %v\n\tpersimmon: %v %v", s.text(), wr, werr, gr, gerr)
	}
	var w, g string
	switch s.mode {
	case "exec":
		w, g = rdNormalizeExec(wr, s.sub), rdNormalizeExec(gr, s.sub)
	case "spop":
		w, g = rdNormalize(wr, "len"), rdNormalize(gr, "len")
		if w == g && wr.kind != '-' && !wr.null {
			if msg := rdResyncSpop(want, s.args[1], wr, gr); msg != "" {
				return s.text() + "\n\t" + msg
			}
		}
	default:
		w, g = rdNormalize(wr, s.mode), rdNormalize(gr, s.mode)
	}
	if w != g {
		return fmt.Sprintf("%s\n\tredis:     %s\n\tpersimmon: %s", s.text(), w, g)
	}
	return ""
}

func rdNormalizeExec(r reply, sub []string) string {
	if r.kind != '*' || r.null || len(r.elems) != len(sub) {
		return r.String()
	}
	parts := make([]string, len(r.elems))
	for i, e := range r.elems {
		parts[i] = rdNormalize(e, sub[i])
	}
	return fmt.Sprintf("*%d[%s]", len(parts), strings.Join(parts, ", "))
}

// rdResyncSpop makes redis-server's set equal to persimmon's after both
// popped (possibly different) members: SADD back redis' choice, SREM
// persimmon's, which must all be members.
func rdResyncSpop(redisSide rdTarget, key string, wr, gr reply) string {
	members := func(r reply) []string {
		if r.kind == '$' {
			return []string{r.str}
		}
		var out []string
		for _, e := range r.elems {
			out = append(out, e.str)
		}
		return out
	}
	rm, pm := members(wr), members(gr)
	if slices.Equal(slices.Sorted(slices.Values(rm)), slices.Sorted(slices.Values(pm))) {
		return ""
	}
	if r, err := redisSide.do(append([]string{"SADD", key}, rm...)); err != nil || r.kind != ':' {
		return fmt.Sprintf("resync SADD on redis: %v %v", r, err)
	}
	r, err := redisSide.do(append([]string{"SREM", key}, pm...))
	if err != nil || r.String() != ":"+strconv.Itoa(len(pm)) {
		return fmt.Sprintf("persimmon popped %q, not all members of the set (SREM on redis: %v %v)", pm, r, err)
	}
	return ""
}

func rdEnvInt(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

func rdGenerate(seed uint64, count int) []rdUnit {
	g := &rdGen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), known: rdKnown}
	var units []rdUnit
	for n := 0; n < count; {
		u := g.unit()
		units = append(units, u)
		n += len(u)
	}
	return units
}

func TestRandDiff(t *testing.T) {
	seed0 := rdEnvInt(t, "PERSIMMON_RANDDIFF_SEED", 1)
	seeds := rdEnvInt(t, "PERSIMMON_RANDDIFF_SEEDS", 1)
	count := int(rdEnvInt(t, "PERSIMMON_RANDDIFF_COUNT", 3000))
	minimize := os.Getenv("PERSIMMON_RANDDIFF_MINIMIZE") == "1"

	redisSide := rdTarget{&diffTarget{name: "redis", addr: startRedis(t), conns: map[int]*respConn{}}}
	s := startServer(t, t.TempDir())
	persimmonSide := rdTarget{&diffTarget{name: "persimmon", addr: s.Addr, conns: map[int]*respConn{}}}
	t.Cleanup(func() { redisSide.closeAll(); persimmonSide.closeAll() })

	// The comparison must be able to fail, and must not fail on what the
	// normalisation is for.
	t.Run("selfcheck", func(t *testing.T) {
		resetTargets(t, redisSide.diffTarget, persimmonSide.diffTarget)
		redisSide.do([]string{"SADD", "s", "a", "b", "c"})
		persimmonSide.do([]string{"SADD", "s", "c", "b", "a", "d"})
		persimmonSide.do([]string{"SREM", "s", "d"})
		for _, c := range []struct {
			s  rdStep
			ok bool
		}{
			{rdStep{args: []string{"SMEMBERS", "s"}, mode: "sort"}, true},
			{rdStep{args: []string{"SRANDMEMBER", "s", "2"}, mode: "len"}, true},
			{rdStep{args: []string{"SPOP", "s"}, mode: "spop"}, true},
			{rdStep{args: []string{"SMEMBERS", "s"}, mode: "sort"}, true},
			{rdStep{args: []string{"SADD", "s", "x"}}, true},
			{rdStep{args: []string{"MULTI"}}, true},
			{rdStep{args: []string{"SMEMBERS", "s"}, mode: "sort"}, true},
			{rdStep{args: []string{"EXEC"}, mode: "exec", sub: []string{"sort"}}, true},
		} {
			if msg := rdRunStep(redisSide, persimmonSide, c.s); (msg == "") != c.ok {
				t.Fatalf("%s: got mismatch %q, want mismatch=%v", c.s.text(), msg, !c.ok)
			}
		}
		persimmonSide.do([]string{"SADD", "s", "y"})
		if msg := rdRunStep(redisSide, persimmonSide, rdStep{args: []string{"SMEMBERS", "s"}, mode: "sort"}); !strings.Contains(msg, `"y"`) {
			t.Fatalf("differ reported %q, want a mismatch on SMEMBERS s", msg)
		}
	})

	for seed := seed0; seed < seed0+seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			units := rdGenerate(seed, count)
			resetTargets(t, redisSide.diffTarget, persimmonSide.diffTarget)
			st := &rdStats{names: map[string]bool{}}
			first := rdRun(redisSide, persimmonSide, units, 5, st, func(i int, msg string) {
				t.Errorf("seed %d, unit %d: %s", seed, i, msg)
			})
			if first < 0 {
				t.Logf("seed %d: %d commands (%d names) in %d units, no mismatch; redis-server answered %d errors (%d WRONGTYPE) and %d non-empty arrays; %d lex ranges over mixed scores and %d known bugs not sent",
					seed, st.commands, len(st.names), len(units), st.errors, st.wrongType, st.nonEmpty, st.skippedLex, st.skippedKnown)
				return
			}
			t.Logf("replay: PERSIMMON_RANDDIFF_SEED=%d PERSIMMON_RANDDIFF_COUNT=%d go test -count=1 -run 'RandDiff/seed=%d$' ./e2e/", seed, count, seed)
			if !minimize {
				return
			}
			min := rdMinimize(t, redisSide, persimmonSide, units[:first+1])
			var b strings.Builder
			for _, u := range min {
				for _, s := range u {
					fmt.Fprintf(&b, "\n\t%s", s.text())
				}
			}
			resetTargets(t, redisSide.diffTarget, persimmonSide.diffTarget)
			rdRun(redisSide, persimmonSide, min, 1, nil, func(i int, msg string) { fmt.Fprintf(&b, "\n\t=> %s", msg) })
			t.Logf("seed %d: minimal sequence (%d units):%s", seed, len(min), b.String())
		})
	}
}

// rdMinimize shrinks units (whose last unit mismatches) by removing chunks
// of units (delta debugging) while the last unit still mismatches.
func rdMinimize(t *testing.T, want, got rdTarget, units []rdUnit) []rdUnit {
	fails := func(us []rdUnit) bool {
		resetTargets(t, want.diffTarget, got.diffTarget)
		return rdRun(want, got, us, 1, nil, nil) == len(us)-1
	}
	cur := units
	for chunk := len(cur) / 2; chunk >= 1; {
		removed := false
		for start := 0; start+chunk < len(cur); {
			cand := slices.Concat(cur[:start], cur[start+chunk:])
			if fails(cand) {
				cur, removed = cand, true
			} else {
				start += chunk
			}
		}
		if !removed {
			chunk /= 2
		}
	}
	return cur
}

package commands

import (
	"github.com/persimmon-db/persimmon/proto"

	"github.com/persimmon-db/persimmon/keyspace"
)

// Scores and ranges of sorted sets, parsed and printed as Redis 7.0 does.
//
// A score argument (ZADD, ZINCRBY, WEIGHTS) is a strict double
// (parseFloat64: no spaces, no trailing bytes, no overflow, no NaN). A
// range bound (ZRANGEBYSCORE, ZCOUNT...) goes through Redis's
// zslParseRange, which is plain strtod: leading spaces, overflow to ±inf
// and the empty string (0) are accepted there, NaN is not. Replies print
// a score with "%.17g" (Redis 7.0's addReplyDouble), "inf"/"-inf" for the
// infinities and "0" for a zero of either sign.

var (
	errMinMaxNotFloat = replyError("ERR min or max is not a float")
	errLexRange       = replyError("ERR min or max not valid string range item")
	errScoreNaN       = replyError("ERR resulting score is not a number (NaN)")
)

// appendScore appends the reply text of a score (addReplyDouble's).
func appendScore(dst []byte, f float64) []byte { return proto.AppendDouble(dst, f) }

// listpackScore is the score a sorted set in Redis's small (listpack)
// encoding keeps for f: a listpack stores the text "-0", which reads back
// as the integer 0, so a negative zero becomes 0 there (a skiplist keeps
// -0, and ZUNION/ZINTER reply it as "-0").
func listpackScore(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

// formatScore is appendScore as a string.
func formatScore(f float64) string { return string(appendScore(nil, f)) }

// pow10s are the powers of ten a float64 holds exactly.
var pow10s = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// scoreArg parses a score or coordinate argument as argFloat64 does, with
// a fast path for the common plain decimal (-?digits[.digits], at most 15
// digits): its mantissa and the power of ten are exact in a float64, so
// their quotient is the correctly rounded value, the one strtod gives.
// Anything else (exponents, hex, inf, long mantissas, errors) goes to
// argFloat64.
func scoreArg(b []byte) (float64, error) {
	i, neg := 0, false
	if len(b) > 0 && b[0] == '-' {
		i, neg = 1, true
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case '0' <= c && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot && digits > 0:
			dot = true
		default:
			return argFloat64(b)
		}
	}
	if digits == 0 || digits > 15 || (dot && frac == 0) {
		return argFloat64(b)
	}
	f := float64(mant) / pow10s[frac]
	if neg {
		f = -f
	}
	return f, nil
}

// parseScoreBound parses one end of a score range: "(x" is exclusive.
func parseScoreBound(b []byte) (v float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		v, ok = parseStrtod(b[1:])
		return v, true, ok
	}
	v, ok = parseStrtod(b)
	return v, false, ok
}

// parseScoreRange parses min and max as Redis's zslParseRange does.
func parseScoreRange(min, max []byte) (keyspace.ScoreRange, error) {
	var r keyspace.ScoreRange
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = parseScoreBound(min)
	r.Max, r.MaxEx, ok2 = parseScoreBound(max)
	if !ok1 || !ok2 {
		return keyspace.ScoreRange{}, errMinMaxNotFloat
	}
	return r, nil
}

// parseLexBound parses one end of a lex range as zslParseLexRangeItem:
// "-" and "+" alone, or "[" / "(" then the value.
func parseLexBound(b []byte) (keyspace.LexBound, bool) {
	if len(b) == 0 {
		return keyspace.LexBound{}, false
	}
	switch b[0] {
	case '+':
		return keyspace.LexBound{Ex: true, Inf: 1}, len(b) == 1
	case '-':
		return keyspace.LexBound{Ex: true, Inf: -1}, len(b) == 1
	case '(':
		return keyspace.LexBound{Value: string(b[1:]), Ex: true}, true
	case '[':
		return keyspace.LexBound{Value: string(b[1:])}, true
	}
	return keyspace.LexBound{}, false
}

// parseLexRange parses min and max of a lex range.
func parseLexRange(min, max []byte) (keyspace.LexRange, error) {
	lo, ok1 := parseLexBound(min)
	hi, ok2 := parseLexBound(max)
	if !ok1 || !ok2 {
		return keyspace.LexRange{}, errLexRange
	}
	return keyspace.LexRange{Min: lo, Max: hi}, nil
}

package server

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/proto"
)

// Argument parsing shared by the command handlers. Every parser here accepts
// exactly what Redis 7.0 accepts for the same kind of argument (string2ll,
// strtod, strtold, strtoul, strcasecmp), because a client that works against
// Redis must get the same answer here, error text included.
//
// Parsers return an error whose text is the complete Redis error reply
// (see ReplyError), so a handler that fails to parse replies with
// c.WriteErr(err) and stops before it has read or changed anything.

// ReplyError is an error whose text is a complete Redis error reply.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// The common argument errors, as the replies they are.
var (
	ErrSyntaxReply     = ReplyError(ErrSyntax)
	ErrNotIntegerReply = ReplyError(ErrNotInteger)
	ErrNotFloatReply   = ReplyError(ErrNotFloat)
	ErrOverflowReply   = ReplyError(ErrOverflow)
	ErrNoSuchKeyReply  = ReplyError(ErrNoSuchKey)
	ErrDBIndexReply    = ReplyError(ErrDBIndex)
	ErrSameObject      = ReplyError("ERR source and destination objects are the same")
	errStringTooLong   = ReplyError("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	ErrNaNOrInf        = ReplyError("ERR increment would produce NaN or Infinity")
)

// ErrInvalidExpireReply is Redis's reply to an expire time that is not positive
// or overflows, for the named command.
func ErrInvalidExpireReply(cmd string) error {
	return ReplyError(fmt.Sprintf(ErrInvalidExpire, cmd))
}

// MaxStringSize is Redis's default proto-max-bulk-len: the largest string
// APPEND, SETRANGE and SETBIT may build.
const MaxStringSize = 512 << 20

// CheckStringLength reports errStringTooLong when a string of size bytes
// grown by grow bytes would exceed MaxStringSize (Redis checkStringLength
// with the default proto-max-bulk-len; commands use Client.CheckStringLength).
func CheckStringLength(size, grow int64) error {
	return checkStringLimit(size, grow, MaxStringSize)
}

func checkStringLimit(size, grow, limit int64) error {
	total := uint64(size) + uint64(grow)
	if total > uint64(limit) || total < uint64(size) || total < uint64(grow) {
		return errStringTooLong
	}
	return nil
}

// StringLimit is the size of the largest string APPEND, SETRANGE, SETBIT
// and BITFIELD may build or address: proto-max-bulk-len as CONFIG SET last
// set it, as Redis's checkStringLength and getBitOffsetFromArgument read
// it. The master's stream on a replica is not limited (Redis's
// mustObeyClient): the master already accepted each write. A client
// without a server (a handler run in a unit test) has the default.
func (c *Client) StringLimit() int64 {
	switch {
	case c.obeyMaster:
		return math.MaxInt64
	case c.Srv == nil:
		return MaxStringSize
	}
	return c.Srv.live.protoMaxBulkLen.Load()
}

// CheckStringLength reports errStringTooLong when a string of size bytes
// grown by grow bytes would exceed c.StringLimit() (Redis
// checkStringLength).
func (c *Client) CheckStringLength(size, grow int64) error {
	if c.obeyMaster {
		return nil
	}
	return checkStringLimit(size, grow, c.StringLimit())
}

// ArgIs reports whether arg equals opt, ignoring ASCII case (strcasecmp on
// an option token). opt is given in any case.
func ArgIs(arg []byte, opt string) bool {
	if len(arg) != len(opt) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		if LowerASCII(arg[i]) != LowerASCII(opt[i]) {
			return false
		}
	}
	return true
}

func LowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// IsSpace is C's isspace in the "C" locale (proto.IsSpace).
func IsSpace(c byte) bool { return proto.IsSpace(c) }

// ParseInt64 parses b the way Redis's string2ll does (proto.ParseInt64):
// an optional '-', then digits with no leading zero, within int64.
func ParseInt64(b []byte) (int64, bool) { return proto.ParseInt64(b) }

// ArgInt64 parses an integer argument (getLongLongFromObjectOrReply).
func ArgInt64(b []byte) (int64, error) {
	v, ok := ParseInt64(b)
	if !ok {
		return 0, ErrNotIntegerReply
	}
	return v, nil
}

// ArgInt32 parses an argument that must fit a C int
// (getIntFromObjectOrReply). msg, when not empty, replaces both of Redis's
// default error texts, as it does in Redis (e.g. SWAPDB's
// "ERR invalid first DB index").
func ArgInt32(b []byte, msg string) (int, error) {
	v, ok := ParseInt64(b)
	if !ok {
		if msg != "" {
			return 0, ReplyError(msg)
		}
		return 0, ErrNotIntegerReply
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		if msg != "" {
			return 0, ReplyError(msg)
		}
		return 0, ReplyError(fmt.Sprintf("ERR value is out of range, value must between %d and %d",
			math.MinInt32, math.MaxInt32))
	}
	return int(v), nil
}

// ArgDB parses a database index argument (COPY DB, MOVE): an int, then
// within 0..NumDBs-1.
func ArgDB(b []byte) (int, error) {
	db, err := ArgInt32(b, "")
	if err != nil {
		return 0, err
	}
	if db < 0 || db >= keyspace.NumDBs {
		return 0, ErrDBIndexReply
	}
	return db, nil
}

// ParseScanCursor parses a SCAN cursor the way Redis does with strtoul
// (base 10): an optional sign, then digits; a negative number wraps modulo
// 2^64 and the empty string is 0, as in Redis. Leading space, any trailing
// byte and values above 2^64-1 are rejected. strtoul reads a C string, so
// the cursor ends at its first NUL byte ("1\x00x" is 1).
func ParseScanCursor(b []byte) (uint64, bool) {
	b = CString(b)
	if len(b) == 0 {
		return 0, true
	}
	if IsSpace(b[0]) {
		return 0, false
	}
	i := 0
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		i++
	}
	if i == len(b) {
		return 0, false // a sign and no digits: strtoul converts nothing
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

// FloatSyntax reports whether the whole of b is one number in the grammar
// of C's strtod/strtold (C locale) with nothing before or after it:
//
//	[+-] ( digits [. digits] | . digits ) [ (e|E) [+-] digits ]
//	[+-] 0(x|X) ( hexdigits [. hexdigits] | . hexdigits ) [ (p|P) [+-] digits ]
//	[+-] inf | infinity  (any case)
//
// NaN is left out: Redis rejects it after parsing. It returns whether the
// number is infinite, and whether its mantissa has a non-zero digit (so that
// an underflow to zero can be told from a zero).
func FloatSyntax(b []byte) (ok, inf, nonzero bool) {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	rest := b[i:]
	if ArgIs(rest, "inf") || ArgIs(rest, "infinity") {
		return true, true, true
	}
	hex := len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X')
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	isMant := isDigit
	expChar := byte('e')
	if hex {
		i += 2
		isMant = func(c byte) bool {
			return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
		}
		expChar = 'p'
	}
	digits := 0
	for ; i < len(b) && isMant(b[i]); i++ {
		digits++
		nonzero = nonzero || b[i] != '0'
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && isMant(b[i]); i++ {
			digits++
			nonzero = nonzero || b[i] != '0'
		}
	}
	if digits == 0 {
		return false, false, false
	}
	if i < len(b) && LowerASCII(b[i]) == expChar {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == start {
			return false, false, false
		}
	}
	return i == len(b), false, nonzero
}

// ParseFloat64 parses b as Redis parses a double argument (strtod, then
// reject leading space, trailing bytes, overflow, underflow to zero and
// NaN). "inf", "-inf" and "infinity" are accepted, as in Redis.
func ParseFloat64(b []byte) (float64, bool) {
	ok, inf, nonzero := FloatSyntax(b)
	if !ok {
		return 0, false
	}
	if inf {
		if b[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	s := string(b)
	if HexFloat(b) && !HasByte(b, 'p', 'P') {
		s += "p0" // strconv wants a binary exponent on a hex mantissa; strtod does not
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || (f == 0 && nonzero) {
		return 0, false
	}
	return f, true
}

// ArgFloat64 parses a double argument (getDoubleFromObjectOrReply).
func ArgFloat64(b []byte) (float64, error) {
	f, ok := ParseFloat64(b)
	if !ok {
		return 0, ErrNotFloatReply
	}
	return f, nil
}

func HexFloat(b []byte) bool {
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		b = b[1:]
	}
	return len(b) >= 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')
}

func HasByte(b []byte, c1, c2 byte) bool {
	for _, c := range b {
		if c == c1 || c == c2 {
			return true
		}
	}
	return false
}

// Redis keeps INCRBYFLOAT values in a C long double, which on x86-64 is the
// x87 80-bit extended format: a 64-bit significand and a 15-bit exponent.
// A big.Float with 64 bits of precision, rounding to nearest even, adds
// exactly as that format does, so replies match Redis digit for digit
// (10.5 + 0.1 is "10.6", not float64's "10.59999999999999964").
const (
	longDoublePrec   = 64
	longDoubleMaxExp = 16384  // big.Float exponent (mantissa in [0.5,1)) of the largest finite value
	longDoubleMinExp = -16444 // below this a value underflows to zero (subnormals reach 2^-16445)
	longDoubleMaxLen = 5 * 1024
)

func NewLongDouble() *big.Float {
	return new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven)
}

// ParseLongDouble parses b as Redis's string2ld does (strtold, then reject
// leading space, trailing bytes, overflow, underflow to zero and NaN).
// Infinities are accepted. The returned value has longDoublePrec bits.
func ParseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) >= longDoubleMaxLen {
		return nil, false
	}
	ok, inf, nonzero := FloatSyntax(b)
	if !ok {
		return nil, false
	}
	f := NewLongDouble()
	if inf {
		return f.SetInf(b[0] == '-'), true
	}
	if _, _, err := f.Parse(string(b), 0); err != nil {
		return nil, false
	}
	exp := f.MantExp(nil)
	if exp > longDoubleMaxExp || (nonzero && (f.Sign() == 0 || exp < longDoubleMinExp)) {
		return nil, false
	}
	return f, true
}

// AddLongDouble returns a+b rounded to a long double, and false when the sum
// is infinite or NaN (INCRBYFLOAT's "increment would produce NaN or
// Infinity").
func AddLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false // inf+x is inf, inf-inf is NaN: both refused
	}
	sum := NewLongDouble().Add(a, b)
	if sum.MantExp(nil) > longDoubleMaxExp {
		return nil, false
	}
	if sum.Sign() != 0 && sum.MantExp(nil) < longDoubleMinExp {
		sum.SetInt64(0)
	}
	return sum, true
}

// FormatLongDouble formats f as Redis's ld2string in LD_STR_HUMAN mode:
// printf("%.17Lf"), then trailing zeros and a trailing '.' removed, and
// "-0" written as "0". There is never an exponent.
func FormatLongDouble(f *big.Float) string {
	if f.IsInf() {
		if f.Sign() < 0 {
			return "-inf"
		}
		return "inf"
	}
	s := f.Text('f', 17)
	end := len(s)
	for end > 0 && s[end-1] == '0' {
		end--
	}
	if end > 0 && s[end-1] == '.' {
		end--
	}
	s = s[:end]
	if s == "-0" {
		return "0"
	}
	return s
}

// ParseStrtod parses b as C's strtod does when the caller then insists
// that the whole string was used: leading white space is skipped, the
// empty string is 0, an overflow is ±inf, an underflow is 0; NaN is
// refused.
//
// Redis hands strtod the argument as a C string and then checks that the
// end pointer is at a NUL, so the number ends at the first NUL byte:
// "1\x00junk" is 1 and "\x00" is 0.
func ParseStrtod(b []byte) (float64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true // strtod converts nothing and stops at the NUL
	}
	i := 0
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	rest := b[i:]
	ok, inf, _ := FloatSyntax(rest)
	if !ok {
		return 0, false
	}
	neg := rest[0] == '-'
	if inf {
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	s := string(rest)
	if HexFloat(rest) && !HasByte(rest, 'p', 'P') {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0, false
	}
	return f, true
}

package proto

import (
	"math"
	"strconv"
	"strings"
)

// Protocol versions a connection can speak (HELLO).
const (
	RESP2 = 2
	RESP3 = 3
)

// Writer appends encoded replies to Out in the protocol version Proto
// (RESP2 when zero). The zero Writer writes RESP2 into a nil buffer.
type Writer struct {
	// Out holds the encoded replies not yet handed to the socket.
	Out []byte
	// Proto is the protocol version, 2 or 3 (0 counts as 2).
	Proto int
	// OnError, if set, is told of every error reply appended: msg as
	// given, and counted false for an error that was already counted
	// where it arose (WriteUncountedError). The server keeps INFO
	// errorstats with it.
	OnError func(msg string, counted bool)
	// Admit, if set, is asked before a bulk string of at least AdmitFrom
	// bytes is appended, with the bytes Out would then hold: false leaves
	// the bulk out (the server is closing the connection for its output
	// buffer limit, and does not copy a value it will never send).
	Admit func(n int) bool
}

// AdmitFrom is the size of a bulk string from which Writer.Admit is asked.
const AdmitFrom = 64 << 10

// RESP3 reports whether the writer emits RESP3. Handlers do not need it;
// it is for code that converts replies (Lua) or chooses a shape Redis
// itself sends only in one version.
func (w *Writer) RESP3() bool { return w.Proto == RESP3 }

// appendPrefix appends c, n and CRLF.
func appendPrefix(b []byte, c byte, n int64) []byte {
	if n >= 0 && n <= 9 {
		return append(b, c, byte('0'+n), '\r', '\n')
	}
	b = append(b, c)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// oneLine replaces CR and LF by spaces: a simple string or error is one
// line on the wire.
func oneLine(s string) string {
	if strings.IndexAny(s, "\r\n") < 0 {
		return s
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// WriteOK appends the simple string OK.
func (w *Writer) WriteOK() { w.Out = append(w.Out, "+OK\r\n"...) }

// WriteString appends a simple string (+s); CR and LF in s become spaces.
func (w *Writer) WriteString(s string) {
	w.Out = append(append(append(w.Out, '+'), oneLine(s)...), '\r', '\n')
}

// WriteError appends an error reply; msg starts with its code (ERR,
// WRONGTYPE, ...); CR and LF in msg become spaces.
func (w *Writer) WriteError(msg string) {
	w.Out = append(append(append(w.Out, '-'), oneLine(msg)...), '\r', '\n')
	if w.OnError != nil {
		w.OnError(msg, true)
	}
}

// WriteUncountedError appends an error reply as WriteError does, for an
// error that error statistics already counted where it arose (a script
// passing on the error of a command it called); OnError gets counted
// false.
func (w *Writer) WriteUncountedError(msg string) {
	w.Out = append(append(append(w.Out, '-'), oneLine(msg)...), '\r', '\n')
	if w.OnError != nil {
		w.OnError(msg, false)
	}
}

// WriteErr appends err's text as an error reply.
func (w *Writer) WriteErr(err error) { w.WriteError(err.Error()) }

// WriteInt appends an integer.
func (w *Writer) WriteInt(n int64) { w.Out = appendPrefix(w.Out, ':', n) }

// WriteBulk appends a bulk string.
func (w *Writer) WriteBulk(b []byte) {
	if len(b) >= AdmitFrom && w.Admit != nil && !w.Admit(len(w.Out)+len(b)) {
		return
	}
	w.Out = append(append(appendPrefix(w.Out, '$', int64(len(b))), b...), '\r', '\n')
}

// WriteBulkString appends a bulk string.
func (w *Writer) WriteBulkString(s string) {
	if len(s) >= AdmitFrom && w.Admit != nil && !w.Admit(len(w.Out)+len(s)) {
		return
	}
	w.Out = append(append(appendPrefix(w.Out, '$', int64(len(s))), s...), '\r', '\n')
}

// WriteBulkInt appends n printed in decimal as a bulk string.
func (w *Writer) WriteBulkInt(n int64) {
	var buf [20]byte
	w.WriteBulk(strconv.AppendInt(buf[:0], n, 10))
}

// WriteNull appends a null: $-1 in RESP2 (the null bulk string), _ in RESP3.
func (w *Writer) WriteNull() {
	if w.Proto == RESP3 {
		w.Out = append(w.Out, "_\r\n"...)
		return
	}
	w.Out = append(w.Out, "$-1\r\n"...)
}

// WriteNullArray appends the null of an array reply: *-1 in RESP2, _ in
// RESP3 (Redis's addReplyNullArray).
func (w *Writer) WriteNullArray() {
	if w.Proto == RESP3 {
		w.Out = append(w.Out, "_\r\n"...)
		return
	}
	w.Out = append(w.Out, "*-1\r\n"...)
}

// WriteArray appends the header of an array of n elements.
func (w *Writer) WriteArray(n int) { w.Out = appendPrefix(w.Out, '*', int64(n)) }

// WriteMap appends the header of a map of n key-value pairs; the caller
// appends 2n elements, key then value. RESP2: an array of 2n elements.
func (w *Writer) WriteMap(n int) {
	if w.Proto == RESP3 {
		w.Out = appendPrefix(w.Out, '%', int64(n))
		return
	}
	w.Out = appendPrefix(w.Out, '*', 2*int64(n))
}

// WriteSet appends the header of a set of n elements. RESP2: an array.
func (w *Writer) WriteSet(n int) {
	if w.Proto == RESP3 {
		w.Out = appendPrefix(w.Out, '~', int64(n))
		return
	}
	w.Out = appendPrefix(w.Out, '*', int64(n))
}

// WritePush appends the header of an out-of-band push message of n
// elements (pub/sub messages, invalidations). RESP2: an array.
func (w *Writer) WritePush(n int) {
	if w.Proto == RESP3 {
		w.Out = appendPrefix(w.Out, '>', int64(n))
		return
	}
	w.Out = appendPrefix(w.Out, '*', int64(n))
}

// WriteAttribute appends the header of an attribute of n key-value pairs,
// which the caller appends before the reply it describes, and reports
// true. RESP2 has no attributes: it appends nothing and reports false, and
// the caller must then not write the pairs (Redis sends attributes to
// RESP3 clients only).
func (w *Writer) WriteAttribute(n int) bool {
	if w.Proto != RESP3 {
		return false
	}
	w.Out = appendPrefix(w.Out, '|', int64(n))
	return true
}

// WritePairs appends the header of an array of n pairs (ZRANGE
// WITHSCORES, HRANDFIELD WITHVALUES): each pair is written as WritePair
// and then its two elements. RESP3 nests each pair as an array of two;
// RESP2 flattens them into one array of 2n elements, as Redis 7.0 does.
func (w *Writer) WritePairs(n int) {
	if w.Proto == RESP3 {
		w.Out = appendPrefix(w.Out, '*', int64(n))
		return
	}
	w.Out = appendPrefix(w.Out, '*', 2*int64(n))
}

// WritePair starts one pair of a WritePairs array: the header of a
// two-element array in RESP3, nothing in RESP2.
func (w *Writer) WritePair() {
	if w.Proto == RESP3 {
		w.Out = append(w.Out, "*2\r\n"...)
	}
}

// WriteArrayMap appends the header of a map of n entries that RESP2 sends
// as an array of n two-element [key, value] arrays (XREAD's streams): each
// entry is written as WriteArrayMapEntry, then its key and value.
func (w *Writer) WriteArrayMap(n int) {
	if w.Proto == RESP3 {
		w.Out = appendPrefix(w.Out, '%', int64(n))
		return
	}
	w.Out = appendPrefix(w.Out, '*', int64(n))
}

// WriteArrayMapEntry starts one entry of a WriteArrayMap: the header of a
// two-element array in RESP2, nothing in RESP3.
func (w *Writer) WriteArrayMapEntry() {
	if w.Proto != RESP3 {
		w.Out = append(w.Out, "*2\r\n"...)
	}
}

// WriteVerbatim appends a verbatim string of format ext (three bytes:
// "txt" or "mkd"). RESP2: a bulk string of s.
func (w *Writer) WriteVerbatim(ext string, s []byte) {
	if w.Proto != RESP3 {
		w.WriteBulk(s)
		return
	}
	w.Out = appendPrefix(w.Out, '=', int64(len(s)+4))
	w.Out = append(append(append(append(w.Out, ext...), ':'), s...), '\r', '\n')
}

// WriteVerbatimString is WriteVerbatim of a string.
func (w *Writer) WriteVerbatimString(ext, s string) {
	if w.Proto != RESP3 {
		w.WriteBulkString(s)
		return
	}
	w.Out = appendPrefix(w.Out, '=', int64(len(s)+4))
	w.Out = append(append(append(append(w.Out, ext...), ':'), s...), '\r', '\n')
}

// WriteDouble appends a double as Redis 7.0's addReplyDouble prints it:
// "%.17g", inf and -inf. RESP2: that text as a bulk string; RESP3: a
// double (,).
func (w *Writer) WriteDouble(f float64) {
	var buf [32]byte
	d := AppendDouble(buf[:0], f)
	if w.Proto == RESP3 {
		w.Out = append(append(append(w.Out, ','), d...), '\r', '\n')
		return
	}
	w.WriteBulk(d)
}

// WriteDoubleText appends a double already printed as text (Redis's
// addReplyHumanLongDouble, GEOPOS): a bulk string in RESP2, a double in
// RESP3.
func (w *Writer) WriteDoubleText(d []byte) {
	if w.Proto == RESP3 {
		w.Out = append(append(append(w.Out, ','), d...), '\r', '\n')
		return
	}
	w.WriteBulk(d)
}

// AppendDouble appends f printed as Redis 7.0's addReplyDouble does
// ("%.17g"; inf, -inf, nan; -0 for a negative zero).
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case f == 0 && math.Signbit(f):
		return append(dst, "-0"...)
	case f == 0:
		return append(dst, '0')
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// WriteBigNumber appends a big number given in decimal. RESP2: a bulk
// string.
func (w *Writer) WriteBigNumber(s string) {
	if w.Proto == RESP3 {
		w.Out = append(append(append(w.Out, '('), s...), '\r', '\n')
		return
	}
	w.WriteBulkString(s)
}

// WriteBool appends a boolean. RESP2: the integer 1 or 0.
func (w *Writer) WriteBool(v bool) {
	switch {
	case w.Proto == RESP3 && v:
		w.Out = append(w.Out, "#t\r\n"...)
	case w.Proto == RESP3:
		w.Out = append(w.Out, "#f\r\n"...)
	case v:
		w.Out = append(w.Out, ":1\r\n"...)
	default:
		w.Out = append(w.Out, ":0\r\n"...)
	}
}

// WriteRaw appends bytes already encoded in the writer's version.
func (w *Writer) WriteRaw(b []byte) { w.Out = append(w.Out, b...) }

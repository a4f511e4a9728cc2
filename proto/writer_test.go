package proto

import (
	"errors"
	"math"
	"testing"

	"github.com/tidwall/redcon"
)

// Every semantic call, in both versions, against the bytes Redis 7.0 sends
// (RESP3 shapes as redis-cli -3 and a raw socket show them).
func TestWriterEncodings(t *testing.T) {
	for _, tt := range []struct {
		name       string
		write      func(w *Writer)
		resp2, rs3 string
	}{
		{"ok", func(w *Writer) { w.WriteOK() }, "+OK\r\n", "+OK\r\n"},
		{"simple", func(w *Writer) { w.WriteString("a\r\nb") }, "+a  b\r\n", "+a  b\r\n"},
		{"error", func(w *Writer) { w.WriteError("ERR x\ny") }, "-ERR x y\r\n", "-ERR x y\r\n"},
		{"err", func(w *Writer) { w.WriteErr(errors.New("WRONGTYPE t")) }, "-WRONGTYPE t\r\n", "-WRONGTYPE t\r\n"},
		{"int", func(w *Writer) { w.WriteInt(-12) }, ":-12\r\n", ":-12\r\n"},
		{"int digit", func(w *Writer) { w.WriteInt(7) }, ":7\r\n", ":7\r\n"},
		{"bulk", func(w *Writer) { w.WriteBulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
		{"bulk string", func(w *Writer) { w.WriteBulkString("") }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"bulk int", func(w *Writer) { w.WriteBulkInt(-5) }, "$2\r\n-5\r\n", "$2\r\n-5\r\n"},
		{"null", func(w *Writer) { w.WriteNull() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.WriteNullArray() }, "*-1\r\n", "_\r\n"},
		{"array", func(w *Writer) { w.WriteArray(12) }, "*12\r\n", "*12\r\n"},
		{"map", func(w *Writer) { w.WriteMap(2) }, "*4\r\n", "%2\r\n"},
		{"set", func(w *Writer) { w.WriteSet(3) }, "*3\r\n", "~3\r\n"},
		{"push", func(w *Writer) { w.WritePush(3) }, "*3\r\n", ">3\r\n"},
		{"attribute", func(w *Writer) {
			if w.WriteAttribute(1) {
				w.WriteBulkString("k")
				w.WriteInt(1)
			}
			w.WriteOK()
		}, "+OK\r\n", "|1\r\n$1\r\nk\r\n:1\r\n+OK\r\n"},
		{"pairs", func(w *Writer) {
			w.WritePairs(2)
			for _, m := range []string{"a", "b"} {
				w.WritePair()
				w.WriteBulkString(m)
				w.WriteDouble(1.5)
			}
		}, "*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$3\r\n1.5\r\n",
			"*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,1.5\r\n"},
		{"array map", func(w *Writer) {
			w.WriteArrayMap(1)
			w.WriteArrayMapEntry()
			w.WriteBulkString("s")
			w.WriteArray(0)
		}, "*1\r\n*2\r\n$1\r\ns\r\n*0\r\n", "%1\r\n$1\r\ns\r\n*0\r\n"},
		{"verbatim", func(w *Writer) { w.WriteVerbatim("txt", []byte("a:b\r\n")) }, "$5\r\na:b\r\n\r\n", "=9\r\ntxt:a:b\r\n\r\n"},
		{"verbatim string", func(w *Writer) { w.WriteVerbatimString("txt", "x") }, "$1\r\nx\r\n", "=5\r\ntxt:x\r\n"},
		{"double", func(w *Writer) { w.WriteDouble(0.1) }, "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"},
		{"double int", func(w *Writer) { w.WriteDouble(3) }, "$1\r\n3\r\n", ",3\r\n"},
		{"double inf", func(w *Writer) { w.WriteDouble(math.Inf(1)) }, "$3\r\ninf\r\n", ",inf\r\n"},
		{"double -inf", func(w *Writer) { w.WriteDouble(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"double -0", func(w *Writer) { w.WriteDouble(math.Copysign(0, -1)) }, "$2\r\n-0\r\n", ",-0\r\n"},
		{"double exp", func(w *Writer) { w.WriteDouble(1e21) }, "$5\r\n1e+21\r\n", ",1e+21\r\n"},
		{"double long exp", func(w *Writer) { w.WriteDouble(1e300) }, "$23\r\n1.0000000000000001e+300\r\n", ",1.0000000000000001e+300\r\n"},
		{"double text", func(w *Writer) { w.WriteDoubleText([]byte("13.35999995470046997")) },
			"$20\r\n13.35999995470046997\r\n", ",13.35999995470046997\r\n"},
		{"big number", func(w *Writer) { w.WriteBigNumber("12345678901234567890") },
			"$20\r\n12345678901234567890\r\n", "(12345678901234567890\r\n"},
		{"true", func(w *Writer) { w.WriteBool(true) }, ":1\r\n", "#t\r\n"},
		{"false", func(w *Writer) { w.WriteBool(false) }, ":0\r\n", "#f\r\n"},
		{"raw", func(w *Writer) { w.WriteRaw([]byte("+x\r\n")) }, "+x\r\n", "+x\r\n"},
	} {
		for _, v := range []struct {
			proto int
			want  string
		}{{0, tt.resp2}, {RESP2, tt.resp2}, {RESP3, tt.rs3}} {
			w := Writer{Proto: v.proto}
			tt.write(&w)
			if got := string(w.Out); got != v.want {
				t.Errorf("%s in RESP%d: %q, want %q", tt.name, max(v.proto, 2), got, v.want)
			}
		}
	}
}

// In RESP2 the writer's scalar calls emit exactly what redcon's appenders
// (which every reply went through before) emitted.
func TestWriterRESP2MatchesRedcon(t *testing.T) {
	for _, n := range []int64{0, 9, 10, -1, 1 << 40, math.MinInt64} {
		var w Writer
		w.WriteInt(n)
		w.WriteArray(int(n))
		w.WriteBulkString(string(make([]byte, max(0, min(n, 100)))))
		want := redcon.AppendInt(nil, n)
		want = redcon.AppendArray(want, int(n))
		want = redcon.AppendBulkString(want, string(make([]byte, max(0, min(n, 100)))))
		if string(w.Out) != string(want) {
			t.Errorf("%d: %q, want %q", n, w.Out, want)
		}
	}
	var w Writer
	w.WriteString("a\nb")
	w.WriteError("E\r")
	w.WriteNull()
	if want := string(redcon.AppendNull(redcon.AppendError(redcon.AppendString(nil, "a\nb"), "E\r"))); string(w.Out) != want {
		t.Errorf("%q, want %q", w.Out, want)
	}
}

// The writer does not allocate once its buffer is large enough.
func TestWriterDoesNotAllocate(t *testing.T) {
	w := Writer{Proto: RESP3, Out: make([]byte, 0, 4096)}
	if n := testing.AllocsPerRun(100, func() {
		w.Out = w.Out[:0]
		w.WriteMap(1)
		w.WriteBulkString("k")
		w.WriteDouble(1.25)
		w.WriteBulkInt(42)
		w.WriteVerbatimString("txt", "x")
	}); n > 0 {
		t.Fatalf("%v allocations", n)
	}
}

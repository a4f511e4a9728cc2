package proto

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/redcon"
)

func TestScanMultibulk(t *testing.T) {
	lim := Limits{MaxBulk: 512 << 20}
	for _, tt := range []struct {
		in   string
		lim  Limits
		want Verdict
	}{
		{"*", lim, Verdict{}},
		{"*2\r", lim, Verdict{}},
		{"*2\r\n", lim, Verdict{}},
		{"*2\r\n$3\r\nget\r\n$1", lim, Verdict{}},
		{"*2\r\n$3\r\nget\r\n$100\r\nab", lim, Verdict{Need: 13 + 6 + 100 + 2}},
		{"*1\r\n$3\r\nget\r\n", lim, Verdict{Complete: true}},
		{"*0\r\n", lim, Verdict{Skip: 4}},
		{"*-1\r\nPING", lim, Verdict{Skip: 5}},
		{"*01\r\n", lim, Verdict{Err: "invalid multibulk length"}},
		{"*+1\r\n", lim, Verdict{Err: "invalid multibulk length"}},
		{"*2147483648\r\n", lim, Verdict{Err: "invalid multibulk length"}},
		{"*2147483647\r\n", lim, Verdict{}},
		{"*1048576\r\n", lim, Verdict{}},
		{"*11\r\n", Limits{MaxBulk: 512 << 20, Unauth: true}, Verdict{Err: "unauthenticated multibulk length"}},
		{"*1\r\n$16385\r\n", Limits{MaxBulk: 512 << 20, Unauth: true}, Verdict{Err: "unauthenticated bulk length"}},
		{"*1\r\n$11\r\n", Limits{MaxBulk: 10}, Verdict{Err: "invalid bulk length"}},
		{"*1\r\n$10\r\n", Limits{MaxBulk: 10}, Verdict{Need: 9 + 10 + 2}},
		{"*1\r\n:1\r\n", lim, Verdict{Err: "expected '$', got ':'"}},
	} {
		if got := ScanMultibulk([]byte(tt.in), tt.lim); got != tt.want {
			t.Errorf("ScanMultibulk(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string // nil: unbalanced quotes
	}{
		{"", []string{}},
		{"  set  a   b ", []string{"set", "a", "b"}},
		{"set\ta\tb", []string{"set", "a", "b"}},
		{`set "a b" 'c d'`, []string{"set", "a b", "c d"}},
		{`"\x41\x4a\x4A\n\r\t\b\a\\\"z"`, []string{"AJJ\n\r\t\b\a\\\"z"}},
		{`"\x4"`, []string{"x4"}},
		{`'it\'s' "x"`, []string{"it's", "x"}},
		{`'a\nb'`, []string{`a\nb`}},
		{`a"b c"d`, nil},
		{`a"b c" d`, []string{"ab c", "d"}},
		{`""`, []string{""}},
		{`"" ''`, []string{"", ""}},
		{`"abc`, nil},
		{`'abc`, nil},
		{`"a"b`, nil},
		{`'a'b`, nil},
		{`"a\"`, nil},
	} {
		args, _, ok := SplitInline([]byte(tt.in), nil, nil)
		if tt.want == nil {
			if ok {
				t.Errorf("SplitInline(%q) = %q, want unbalanced quotes", tt.in, args)
			}
			continue
		}
		got := make([]string, len(args))
		for i, a := range args {
			got[i] = string(a)
		}
		if !ok || !slices.Equal(got, tt.want) {
			t.Errorf("SplitInline(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

// TestNextCanonicalAgreesWithRedcon checks Next's fast path against the
// general way it stands in for: on whole canonical requests, truncations
// and single-byte corruptions of them, whatever nextCanonical accepts
// redcon.ReadNextCommand reads as complete with the same arguments and the
// same rest; and canonical requests are accepted.
func TestNextCanonicalAgreesWithRedcon(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("*$0123456789\r\n+-abc ")
	var r Reader
	accepted := 0
	for iter := 0; iter < 20000; iter++ {
		var b []byte
		nreq := 1 + rng.IntN(3)
		for range nreq {
			n := 1 + rng.IntN(4)
			b = fmt.Appendf(b, "*%d\r\n", n)
			for range n {
				arg := make([]byte, rng.IntN(20))
				for k := range arg {
					arg[k] = alphabet[rng.IntN(len(alphabet))]
				}
				b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(arg), arg)
			}
		}
		whole := iter%3 == 0
		switch iter % 3 {
		case 1:
			b = b[:rng.IntN(len(b))+1]
		case 2:
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
		}
		if b[0] != '*' {
			continue
		}
		in := slices.Clone(b)
		args, rest, ok := r.nextCanonical(in)
		if whole && !ok {
			t.Fatalf("canonical %q refused", b)
		}
		if !ok {
			continue
		}
		accepted++
		got := make([][]byte, len(args))
		for k, a := range args {
			got[k] = slices.Clone(a)
		}
		complete, want, _, wrest, err := redcon.ReadNextCommand(slices.Clone(b), nil)
		if err != nil || !complete {
			t.Fatalf("%q: fast path took %q, redcon: complete %v, %v", b, got, complete, err)
		}
		if len(want) != len(got) || len(rest) != len(wrest) {
			t.Fatalf("%q: fast path %q rest %d, redcon %q rest %d", b, got, len(rest), want, len(wrest))
		}
		for k := range want {
			if !slices.Equal(want[k], got[k]) {
				t.Fatalf("%q: fast path %q, redcon %q", b, got, want)
			}
		}
		// and the general way Next takes without it
		if v := ScanMultibulk(b, Limits{MaxBulk: 512 << 20}); !v.Complete || v.Err != "" {
			t.Fatalf("%q: fast path took %q, ScanMultibulk %+v", b, got, v)
		}
		split, srest := SplitMultibulk(b, nil)
		if !slices.EqualFunc(split, got, slices.Equal) || len(srest) != len(rest) {
			t.Fatalf("%q: fast path %q rest %d, SplitMultibulk %q rest %d", b, got, len(rest), split, len(srest))
		}
	}
	if accepted < 7000 {
		t.Fatalf("only %d requests took the fast path", accepted)
	}
	for in, want := range map[string]string{"*01\r\n$4\r\nPING\r\n": "invalid multibulk length", "*+1\r\n$4\r\nPING\r\n": "invalid multibulk length", "*1\r\n$04\r\nPING\r\n": "invalid bulk length"} {
		// Redis 7.0.15 answers these with a protocol error (redcon took them)
		if _, _, _, perr := r.Next([]byte(in), Limits{MaxBulk: 512 << 20}); perr != want {
			t.Errorf("Next(%q): protocol error %q, want %q", in, perr, want)
		}
	}
	for _, in := range []string{"*0\r\n", "*01\r\n$1\r\na\r\n", "*+1\r\n$1\r\na\r\n", "*1\r\n$01\r\na\r\n", "*1\r\n$1\r\nab\r\n", "*1\r\n$1\r\na\r", "*1\n$1\r\na\r\n", "*1\r\n$-1\r\n"} {
		if _, _, ok := r.nextCanonical([]byte(in)); ok {
			t.Errorf("nextCanonical took %q", in)
		}
	}
}

// BenchmarkNext is the request reader on a pipelined batch of 16 SETs of
// 64-byte values (redis-benchmark -P 16 -d 64): one op is one request;
// redcon is the general way alone, as Next was before its fast path.
func BenchmarkNext(b *testing.B) {
	var batch []byte
	for i := range 16 {
		batch = fmt.Appendf(batch, "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_%05d\r\n$64\r\n%064d\r\n", i*7919%100000, i)
	}
	lim := Limits{MaxBulk: 512 << 20}
	b.Run("Next", func(b *testing.B) {
		var r Reader
		for i := 0; i < b.N; i += 16 {
			for data := batch; len(data) > 0; {
				_, data, _, _ = r.Next(data, lim)
			}
		}
	})
	b.Run("redcon", func(b *testing.B) {
		var args [][]byte
		for i := 0; i < b.N; i += 16 {
			for data := batch; len(data) > 0; {
				_, args, _, data, _ = redcon.ReadNextCommand(data, args[:0])
				lim.Check(args)
			}
		}
	})
}

// TestParseBatch: ParseBatch takes the whole canonical requests at the
// front of a buffer with the arguments and ends Next gives them, stops
// at the first request Next would take another way (inline, a leading
// zero, a sign, a missing CRLF after a bulk, "*0") or that is not whole,
// and respects max; over random pipelines of such requests too.
func TestParseBatch(t *testing.T) {
	canon := func(args ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		return b.String()
	}
	odd := []string{
		"PING\r\n", "*01\r\n$4\r\nPING\r\n", "*1\r\n$+4\r\nPING\r\n", "*1\r\n$4\r\nPINGxx",
		"*0\r\n", "*1\r\n$4\r\nPI", "*-1\r\n", "*2\r\n$3\r\nGET\r\n",
	}
	good := []string{canon("SET", "k", "v"), canon("GET", ""), canon("SET", "a\r\nb", strings.Repeat("x", 300), "EX", "10"), canon("PING")}
	r := rand.New(rand.NewPCG(1, 2))
	check := func(data string, max int) {
		t.Helper()
		reqs, _ := ParseBatch([]byte(data), max, nil, nil)
		var rd Reader
		rest := []byte(data)
		for i := 0; ; i++ {
			if len(rest) == 0 || rest[0] != '*' {
				if i != len(reqs) {
					t.Fatalf("%q: %d requests taken, the %dth is not multibulk", data, len(reqs), i)
				}
				return
			}
			_, _, canonical := (&Reader{}).nextCanonical(rest)
			if !canonical || i == max {
				if i != len(reqs) {
					t.Fatalf("%q: %d requests taken, want %d", data, len(reqs), i)
				}
				return
			}
			args, r2, _, perr := rd.Next(rest, Limits{MaxBulk: 1 << 20})
			if perr != "" || i >= len(reqs) {
				t.Fatalf("%q: request %d: %q, %d taken", data, i, perr, len(reqs))
			}
			if fmt.Sprintf("%q", args) != fmt.Sprintf("%q", reqs[i].Args) || len(data)-len(r2) != reqs[i].End {
				t.Fatalf("%q: request %d: %q ending at %d, Next %q ending at %d", data, i, reqs[i].Args, reqs[i].End, args, len(data)-len(r2))
			}
			rest = r2
		}
	}
	for _, o := range odd {
		check(good[0]+good[1]+o+good[2], 64)
		check(o+good[0], 64)
	}
	check(good[0]+good[1]+good[2], 2)
	for n := 0; n < 2000; n++ {
		var b strings.Builder
		for k := r.IntN(8); k >= 0; k-- {
			if r.IntN(6) == 0 {
				b.WriteString(odd[r.IntN(len(odd))])
			} else {
				b.WriteString(good[r.IntN(len(good))])
			}
		}
		check(b.String(), 1+r.IntN(10))
	}
}

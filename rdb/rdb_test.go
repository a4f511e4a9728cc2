package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestCRC64Vector(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x", got)
	}
	// Incremental and unaligned use gives the same sum as one call.
	data := []byte("The quick brown fox jumps over the lazy dog, twice over")
	whole := CRC64(0, data)
	for cut := range len(data) {
		if got := CRC64(CRC64(0, data[:cut]), data[cut:]); got != whole {
			t.Fatalf("split at %d: %#x != %#x", cut, got, whole)
		}
	}
}

func TestLengthEncoding(t *testing.T) {
	for _, n := range []uint64{0, 1, 63, 64, 16383, 16384, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64} {
		p := appendLength(nil, n)
		var want int
		switch {
		case n < 64:
			want = 1
		case n < 16384:
			want = 2
		case n <= math.MaxUint32:
			want = 5
		default:
			want = 9
		}
		if len(p) != want {
			t.Errorf("length %d took %d bytes, want %d", n, len(p), want)
		}
		d := &decoder{p: p}
		got, enc, err := d.length()
		if err != nil || enc || got != n || d.i != len(p) {
			t.Errorf("length %d decoded as %d enc=%v err=%v", n, got, enc, err)
		}
	}
}

func TestStringEncoding(t *testing.T) {
	cases := []struct {
		s    string
		head byte // first byte of the encoding
		n    int  // encoded size
	}{
		{"0", 0xc0, 2}, {"-128", 0xc0, 2}, {"127", 0xc0, 2},
		{"128", 0xc1, 3}, {"-32768", 0xc1, 3},
		{"32768", 0xc2, 5}, {"-2147483648", 0xc2, 5}, {"2147483647", 0xc2, 5},
		{"2147483648", 10, 11}, // beyond int32: plain text
		{"007", 3, 4}, {"-0", 2, 3}, {"+1", 2, 3}, {" 1", 2, 3}, {"", 0, 1},
		{"hello", 5, 6},
	}
	for _, c := range cases {
		p := appendString(nil, []byte(c.s))
		if p[0] != c.head || len(p) != c.n {
			t.Errorf("%q encoded as % x", c.s, p)
		}
		d := &decoder{p: p}
		got, err := d.string()
		if err != nil || string(got) != c.s {
			t.Errorf("%q decoded as %q, %v", c.s, got, err)
		}
	}
	long := bytes.Repeat([]byte("ab"), 10000)
	d := &decoder{p: appendString(nil, long)}
	if got, err := d.string(); err != nil || !bytes.Equal(got, long) {
		t.Errorf("long string: %v", err)
	}
}

func TestLZFDecode(t *testing.T) {
	// "abcabcabcabc": a literal run of 3 ("abc"), then a back-reference of
	// length 9 at distance 3: ctrl = (9-2)<<5 → length field 7 means an
	// extra length byte: 7+extra+2 = 9 → extra 0; distance-1 = 2.
	in := []byte{2, 'a', 'b', 'c', 7 << 5, 0, 2}
	got, err := lzfDecompress(in, 12)
	if err != nil || string(got) != "abcabcabcabc" {
		t.Fatalf("lzf: %q %v", got, err)
	}
	// The same block inside an RDB string encoding.
	p := append([]byte{0xc3}, appendLength(appendLength(nil, uint64(len(in))), 12)...)
	p = append(p, in...)
	d := &decoder{p: p}
	if s, err := d.string(); err != nil || string(s) != "abcabcabcabc" {
		t.Fatalf("lzf string: %q %v", s, err)
	}
	for _, bad := range [][]byte{{2, 'a'}, {7 << 5, 0, 2}, {1 << 5, 9}} {
		if _, err := lzfDecompress(bad, 12); !errors.Is(err, ErrBadFormat) {
			t.Errorf("lzf % x: err %v", bad, err)
		}
	}
}

func TestListpackEncodings(t *testing.T) {
	// Each value's encoding byte as listpack.c picks it.
	cases := []struct {
		s    string
		head byte
	}{
		{"0", 0x00}, {"127", 0x7f}, {"128", 0xc0}, {"-1", 0xdf}, {"4095", 0xcf}, {"-4096", 0xd0},
		{"4096", 0xf1}, {"-32768", 0xf1}, {"32768", 0xf2}, {"-8388608", 0xf2}, {"8388608", 0xf3},
		{"2147483647", 0xf3}, {"2147483648", 0xf4}, {"-9223372036854775808", 0xf4},
		{"9223372036854775807", 0xf4}, {"9223372036854775808", 0x80 | 19},
		{"", 0x80}, {"x", 0x81}, {string(bytes.Repeat([]byte("y"), 63)), 0x80 | 63},
		{string(bytes.Repeat([]byte("y"), 64)), 0xe0}, {string(bytes.Repeat([]byte("y"), 4095)), 0xef},
		{string(bytes.Repeat([]byte("y"), 4096)), 0xf0}, {"01", 0x82}, {"1.5", 0x83},
	}
	var all [][]byte
	for _, c := range cases {
		lp := lpEncode([][]byte{[]byte(c.s)})
		if lp[lpHeaderSize] != c.head {
			t.Errorf("%.20q: encoding byte %#x, want %#x", c.s, lp[lpHeaderSize], c.head)
		}
		got, err := lpDecode(lp)
		if err != nil || len(got) != 1 || string(got[0]) != c.s {
			t.Errorf("%.20q: decoded %q %v", c.s, got, err)
		}
		all = append(all, []byte(c.s))
	}
	got, err := lpDecode(lpEncode(all))
	if err != nil || !reflect.DeepEqual(got, all) {
		t.Fatalf("all together: %v", err)
	}
	// Backlen widths: entries of 127/128 and 16382/16383 bytes.
	for _, n := range []int{125, 126, 127, 16378, 16379, 16380, 70000} {
		e := bytes.Repeat([]byte("z"), n)
		lp := lpEncode([][]byte{e, []byte("7")})
		if got, err := lpDecode(lp); err != nil || !bytes.Equal(got[0], e) || string(got[1]) != "7" {
			t.Fatalf("entry of %d bytes: %v", n, err)
		}
	}
	// More than 65534 elements: the count reads "unknown".
	many := make([][]byte, 70000)
	for i := range many {
		many[i] = []byte(strconv.Itoa(i % 300))
	}
	lp := lpEncode(many)
	if binary.LittleEndian.Uint16(lp[4:]) != lpUnknownNum {
		t.Fatalf("count field %d", binary.LittleEndian.Uint16(lp[4:]))
	}
	if got, err := lpDecode(lp); err != nil || len(got) != len(many) {
		t.Fatalf("many: %d %v", len(got), err)
	}
}

func TestIntset(t *testing.T) {
	for _, tc := range []struct {
		vals  []int64
		width uint32
	}{
		{[]int64{3, -1, 2}, 2}, {[]int64{40000, 1}, 4}, {[]int64{-1 << 40, 5}, 8},
		{[]int64{math.MinInt64, math.MaxInt64, 0}, 8}, {[]int64{-32768, 32767}, 2},
	} {
		p := intsetEncode(tc.vals)
		if w := binary.LittleEndian.Uint32(p); w != tc.width {
			t.Errorf("%v: width %d, want %d", tc.vals, w, tc.width)
		}
		got, err := intsetDecode(p)
		if err != nil || len(got) != len(tc.vals) {
			t.Fatalf("%v: %v", tc.vals, err)
		}
		prev := int64(math.MinInt64)
		for i, g := range got {
			v, _ := strconv.ParseInt(string(g), 10, 64)
			if i > 0 && v <= prev {
				t.Fatalf("%v: not sorted: %q", tc.vals, got)
			}
			prev = v
		}
	}
	bad := intsetEncode([]int64{1, 2})
	bad[8], bad[10] = 2, 1 // swap order
	if _, err := intsetDecode(bad); !errors.Is(err, ErrBadFormat) {
		t.Fatalf("unsorted intset accepted: %v", err)
	}
}

// TestZiplist decodes a ziplist built by hand with every encoding.
func TestZiplist(t *testing.T) {
	var body []byte
	add := func(enc ...byte) { body = append(append(body, 0), enc...) } // prevlen is not checked
	add(0x03, 'a', 'b', 'c')
	add(0x40, 0x02, 'h', 'i')
	add(0x80, 0, 0, 0, 1, 'q')
	add(0xc0, 0xff, 0x7f)
	add(0xd0, 0, 0, 0, 0x80)
	add(0xe0, 1, 0, 0, 0, 0, 0, 0, 0)
	add(0xf0, 0xff, 0xff, 0xff)
	add(0xfe, 0x80)
	add(0xf1)
	add(0xfd)
	zl := binary.LittleEndian.AppendUint32(nil, uint32(11+len(body)))
	zl = binary.LittleEndian.AppendUint32(zl, 0)
	zl = binary.LittleEndian.AppendUint16(zl, 10)
	zl = append(append(zl, body...), 0xff)
	got, err := ziplistDecode(zl)
	want := []string{"abc", "hi", "q", "32767", "-2147483648", "1", "-1", "-128", "0", "12"}
	if err != nil || len(got) != len(want) {
		t.Fatalf("ziplist: %q %v", got, err)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("entry %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func sample(kind Kind, n int, big bool, rng *rand.Rand) Value {
	v := Value{Kind: kind, Big: big}
	elem := func(i int) []byte {
		switch i % 4 {
		case 0:
			return []byte(strconv.Itoa(i - n/2))
		case 1:
			return []byte(fmt.Sprintf("member:%d", i))
		case 2:
			return bytes.Repeat([]byte{byte('a' + i%26)}, 1+rng.IntN(100))
		}
		return []byte(strconv.FormatInt(rng.Int64()-math.MaxInt64/2, 10))
	}
	switch kind {
	case KindString:
		v.Str = elem(n)
	case KindList:
		for i := range n {
			v.Items = append(v.Items, elem(i))
		}
	case KindSet:
		for i := range n {
			v.Items = append(v.Items, []byte(fmt.Sprintf("%d", i*7-n)))
			if big {
				v.Items[i] = append(v.Items[i], 'x')
			}
		}
	case KindHash:
		for i := range n {
			v.Items = append(v.Items, []byte(fmt.Sprintf("f%d", i)), elem(i))
		}
	case KindZSet:
		for i := range n {
			v.Items = append(v.Items, []byte(fmt.Sprintf("m%d", i)))
			v.Scores = append(v.Scores, []float64{float64(i), -float64(i) / 3, 1e300, math.Inf(-1), 0.1}[i%5]+float64(i%5))
		}
	}
	return v
}

// canon orders a value the way equality should see it: sets and hashes
// as sets, sorted sets by member.
func canon(v Value) map[string]string {
	m := map[string]string{}
	switch v.Kind {
	case KindString, KindRoaring:
		m[""] = string(v.Str)
	case KindList:
		for i, e := range v.Items {
			m[strconv.Itoa(i)] = string(e)
		}
	case KindSet:
		for _, e := range v.Items {
			m[string(e)] = ""
		}
	case KindHash:
		for i := 0; i < len(v.Items); i += 2 {
			m[string(v.Items[i])] = string(v.Items[i+1])
		}
	case KindZSet:
		for i, e := range v.Items {
			m[string(e)] = strconv.FormatFloat(v.Scores[i], 'g', -1, 64)
		}
	}
	return m
}

func TestDumpRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []Kind{KindString, KindList, KindSet, KindHash, KindZSet} {
		for _, n := range []int{1, 3, 128, 129, 512, 513, 5000} {
			for _, big := range []bool{false, true} {
				v := sample(kind, n, big, rng)
				p, err := Dump(&v)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Restore(p)
				if err != nil {
					t.Fatalf("kind %d n %d: %v", kind, n, err)
				}
				if got.Kind != kind || !reflect.DeepEqual(canon(got), canon(v)) {
					t.Fatalf("kind %d n %d big %v: round trip differs", kind, n, big)
				}
				if kind == KindList && !reflect.DeepEqual(got.Items, v.Items) {
					t.Fatalf("list order changed")
				}
			}
		}
	}
	r := Value{Kind: KindRoaring, Str: []byte{1, 2, 3}}
	p, _ := Dump(&r)
	if p[0] != TypeRoaring {
		t.Fatalf("roaring type byte %d", p[0])
	}
	if got, err := Restore(p); err != nil || got.Kind != KindRoaring || !bytes.Equal(got.Str, r.Str) {
		t.Fatalf("roaring: %v", err)
	}
}

// TestEncodingChoice checks the type byte Redis 7.0 would pick.
func TestEncodingChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		kind Kind
		n    int
		big  bool
		typ  byte
	}{
		{KindList, 1, false, TypeListQuicklist2},
		{KindSet, 512, false, TypeSetIntset}, {KindSet, 513, false, TypeSet}, {KindSet, 5, true, TypeSet},
		{KindHash, 512, false, TypeHashListpack}, {KindHash, 513, false, TypeHash},
		{KindZSet, 128, false, TypeZSetListpack}, {KindZSet, 129, false, TypeZSet2}, {KindZSet, 2, true, TypeZSet2},
	}
	for _, c := range cases {
		v := sample(c.kind, c.n, c.big, rng)
		if c.kind == KindHash {
			for i := 1; i < len(v.Items); i += 2 {
				v.Items[i] = []byte("short")
			}
		}
		p, _ := Dump(&v)
		if p[0] != c.typ {
			t.Errorf("kind %d n %d big %v: type %d, want %d", c.kind, c.n, c.big, p[0], c.typ)
		}
	}
	long := Value{Kind: KindHash, Items: [][]byte{[]byte("f"), bytes.Repeat([]byte("v"), 65)}}
	if p, _ := Dump(&long); p[0] != TypeHash {
		t.Errorf("hash with a 65-byte value: type %d", p[0])
	}
}

// TestQuicklistNodes checks the node cut: 8 KB per listpack, as Redis.
func TestQuicklistNodes(t *testing.T) {
	elems := make([][]byte, 1000)
	for i := range elems {
		elems[i] = bytes.Repeat([]byte("e"), 100)
	}
	p := appendQuicklist(nil, elems)
	d := &decoder{p: p}
	nodes, _ := d.count()
	total := 0
	for range nodes {
		c, _, _ := d.length()
		blob, err := d.string()
		if err != nil || c != quicklistPacked || len(blob) > quicklistNodeMaxBytes {
			t.Fatalf("node: container %d size %d %v", c, len(blob), err)
		}
		got, _ := lpDecode(blob)
		total += len(got)
	}
	// 100-byte entries take 102 bytes + 8 of estimate: (8192-7)/110+... ≈ 74 per node.
	if total != 1000 || nodes < 12 || nodes > 15 {
		t.Fatalf("%d nodes holding %d", nodes, total)
	}
}

func TestRestoreErrors(t *testing.T) {
	v := Value{Kind: KindString, Str: []byte("hello")}
	p, _ := Dump(&v)
	bad := bytes.Clone(p)
	bad[2] ^= 1
	if _, err := Restore(bad); !errors.Is(err, ErrChecksum) {
		t.Errorf("flipped byte: %v", err)
	}
	newer := bytes.Clone(p[:len(p)-10])
	newer = binary.LittleEndian.AppendUint16(newer, 11)
	newer = binary.LittleEndian.AppendUint64(newer, CRC64(0, newer))
	if _, err := Restore(newer); !errors.Is(err, ErrChecksum) {
		t.Errorf("version 11: %v", err)
	}
	if _, err := Restore([]byte("short")); !errors.Is(err, ErrChecksum) {
		t.Errorf("short: %v", err)
	}
	withFooter := func(obj []byte) []byte {
		q := binary.LittleEndian.AppendUint16(bytes.Clone(obj), 9)
		return binary.LittleEndian.AppendUint64(q, CRC64(0, q))
	}
	for name, obj := range map[string][]byte{
		"unknown type": {42, 0},
		"empty set":    {TypeSet, 0},
		"dup member":   {TypeSet, 2, 1, 'a', 1, 'a'},
		"truncated":    {TypeString, 40, 'a'}, // longer than what is left, footer included
		"nan score":    {TypeZSet, 1, 1, 'a', 253},
	} {
		if _, err := Restore(withFooter(obj)); !errors.Is(err, ErrBadFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Restore(withFooter([]byte{TypeModule2, 0})); !errors.Is(err, ErrUnsupported) {
		t.Errorf("module: %v", err)
	}
	// A stream of no node whose counters are cut short.
	if _, err := Restore(withFooter([]byte{TypeStream2, 0, 0})); !errors.Is(err, ErrBadFormat) {
		t.Errorf("truncated stream: %v", err)
	}
}

// TestTruncatedNeverPanics decodes every prefix and many corruptions of
// payloads of every kind: an error, never a panic.
func TestTruncatedNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, kind := range []Kind{KindString, KindList, KindSet, KindHash, KindZSet} {
		for _, n := range []int{5, 200} {
			v := sample(kind, n, n > 100, rng)
			obj, _ := AppendObject(nil, &v)
			for cut := range len(obj) {
				if _, _, err := DecodeObject(obj[:cut]); err == nil {
					t.Fatalf("kind %d: a %d-byte prefix of %d decoded", kind, cut, len(obj))
				}
			}
			for range 300 {
				c := bytes.Clone(obj)
				c[rng.IntN(len(c))] ^= byte(1 + rng.IntN(255))
				DecodeObject(c) //nolint:errcheck // only panics matter
			}
		}
	}
}

func TestFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	f := &File{Aux: [][2]string{{"redis-ver", "7.0.15"}, {"redis-bits", "64"}}}
	for db := range 3 {
		for i, kind := range []Kind{KindString, KindList, KindSet, KindHash, KindZSet} {
			e := Entry{DB: db * 2, Key: []byte(fmt.Sprintf("k%d:%d", db, i)), Value: sample(kind, 50, false, rng), Idle: -1, Freq: -1}
			if i%2 == 0 {
				e.ExpireAtMs = 4102444800000 + int64(i)
			}
			f.Entries = append(f.Entries, e)
		}
	}
	f.Entries = append(f.Entries, Entry{DB: 0, Key: []byte("1234"), Value: Value{Kind: KindString, Str: []byte("int key")}, Idle: 7, Freq: -1})
	var buf bytes.Buffer
	if err := WriteFile(&buf, f); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != Version || !reflect.DeepEqual(got.Aux, f.Aux) || len(got.Entries) != len(f.Entries) {
		t.Fatalf("file: version %d aux %v entries %d", got.Version, got.Aux, len(got.Entries))
	}
	byKey := map[string]Entry{}
	for _, e := range got.Entries {
		byKey[fmt.Sprint(e.DB, string(e.Key))] = e
	}
	for _, e := range f.Entries {
		g, ok := byKey[fmt.Sprint(e.DB, string(e.Key))]
		if !ok || g.ExpireAtMs != e.ExpireAtMs || g.Idle != e.Idle || !reflect.DeepEqual(canon(g.Value), canon(e.Value)) {
			t.Fatalf("entry %d %q differs: %+v", e.DB, e.Key, g)
		}
	}
	b := buf.Bytes()
	b[20] ^= 0x40
	if _, err := ReadFile(bytes.NewReader(b)); err == nil {
		t.Fatal("corrupted file accepted")
	}
}

// TestLZFCompress round-trips compressible and incompressible inputs and
// checks the Redis rules around it: strings of at most 20 bytes are never
// compressed, and only when it saves at least 4 bytes.
func TestLZFCompress(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	inputs := [][]byte{
		bytes.Repeat([]byte("a"), 21), bytes.Repeat([]byte("ab"), 5000), bytes.Repeat([]byte("abcdefgh12345"), 3000),
		[]byte(strings.Repeat("long text ", 500)),
	}
	for range 200 {
		n := 3 + rng.IntN(20000)
		b := make([]byte, n)
		alpha := 1 + rng.IntN(255)
		for i := range b {
			b[i] = byte(rng.IntN(alpha))
		}
		if rng.IntN(2) == 0 { // repeats at distances near the 8 KB window
			for i := 8190; i < n; i++ {
				b[i] = b[i-8190+rng.IntN(3)]
			}
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		c := lzfCompress(in, len(in)-4)
		if c == nil {
			continue
		}
		if len(c) > len(in)-4 {
			t.Fatalf("compressed %d bytes to %d, over the limit", len(in), len(c))
		}
		got, err := lzfDecompress(c, len(in))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("round trip of %d bytes: %v", len(in), err)
		}
	}
	if p := appendString(nil, bytes.Repeat([]byte("a"), 20)); p[0] != 20 {
		t.Fatalf("20 bytes compressed: % x", p)
	}
	if p := appendString(nil, bytes.Repeat([]byte("a"), 21)); p[0] != 0xc3 {
		t.Fatalf("21 equal bytes not compressed: % x", p)
	}
	noise := make([]byte, 100)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	if p := appendString(nil, noise); p[0] == 0xc3 {
		t.Fatalf("noise compressed: % x", p[:4])
	}
}

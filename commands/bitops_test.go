package commands

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/persimmon-db/persimmon/recovery"
)

// Arity, flags and key positions as Redis 7.0.15's COMMAND INFO reports them.
func TestBitopCommandInfo(t *testing.T) {
	checkCommandInfo(t, append(bitopCommands(), lcsCommands()...), []struct {
		name                    string
		arity, flags            int
		firstKey, lastKey, step int
	}{
		{"bitop", -4, FlagWrite | FlagDenyOOM, 2, -1, 1},
		{"bitfield", -2, FlagWrite | FlagDenyOOM, 1, 1, 1},
		{"bitfield_ro", -2, FlagReadonly | FlagFast, 1, 1, 1},
		{"lcs", -3, FlagReadonly, 1, 2, 1},
	})
}

// bitopByByte is BITOP's definition, one bit at a time.
func bitopByByte(op bitopKind, srcs [][]byte) []byte {
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	var out []byte
	for i := 0; i < n; i++ {
		at := func(s []byte) byte {
			if i < len(s) {
				return s[i]
			}
			return 0
		}
		var r byte
		for bit := 0; bit < 8; bit++ {
			var v byte
			switch op {
			case bitopNot:
				v = ^at(srcs[0]) >> bit & 1
			case bitopAnd:
				v = 1
				for _, s := range srcs {
					v &= at(s) >> bit & 1
				}
			default:
				for _, s := range srcs {
					if op == bitopOr {
						v |= at(s) >> bit & 1
					} else {
						v ^= at(s) >> bit & 1
					}
				}
			}
			r |= v << bit
		}
		out = append(out, r)
	}
	return out
}

func TestBitop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func() []byte {
		if rng.IntN(5) == 0 {
			return nil // a missing key
		}
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for range 2000 {
		op := bitopKind(rng.IntN(4))
		srcs := [][]byte{randBytes()}
		if op != bitopNot {
			for range rng.IntN(4) {
				srcs = append(srcs, randBytes())
			}
		}
		want, got := bitopByByte(op, srcs), bitop(op, srcs)
		if !bytes.Equal(got, want) {
			t.Fatalf("bitop(%d, %x) = %x, want %x", op, srcs, got, want)
		}
	}
	if got := bitop(bitopAnd, [][]byte{nil, {}}); got != nil {
		t.Errorf("empty sources give %q, want nil", got)
	}
}

func TestParseBitop(t *testing.T) {
	for _, tc := range []struct {
		name string
		nsrc int
		want bitopKind
		err  string
	}{
		{"AND", 2, bitopAnd, ""},
		{"or", 1, bitopOr, ""},
		{"xOr", 3, bitopXor, ""},
		{"not", 1, bitopNot, ""},
		{"NOT", 2, 0, "ERR BITOP NOT must be called with a single source key."},
		{"nand", 2, 0, ErrSyntax},
		{"", 1, 0, ErrSyntax},
	} {
		got, err := parseBitop([]byte(tc.name), tc.nsrc)
		if errText(err) != tc.err || (err == nil && got != tc.want) {
			t.Errorf("parseBitop(%q, %d) = %d, %v; want %d, %q", tc.name, tc.nsrc, got, err, tc.want, tc.err)
		}
	}
}

func TestParseBitfieldTypeAndOffset(t *testing.T) {
	for _, tc := range []struct {
		arg    string
		signed bool
		bits   uint
		ok     bool
	}{
		{"i1", true, 1, true}, {"i64", true, 64, true}, {"u1", false, 1, true}, {"u63", false, 63, true},
		{"u8\x00junk", false, 8, true}, // the width is read as a C string
		{"u64", false, 0, false}, {"i65", false, 0, false}, {"i0", false, 0, false},
		{"I8", false, 0, false}, {"u", false, 0, false}, {"", false, 0, false}, {"u08", false, 0, false},
		{"u+8", false, 0, false}, {"u-8", false, 0, false}, {"u\x008", false, 0, false},
	} {
		signed, bits, err := parseBitfieldType([]byte(tc.arg))
		if (err == nil) != tc.ok || (tc.ok && (signed != tc.signed || bits != tc.bits)) {
			t.Errorf("parseBitfieldType(%q) = %v %d %v", tc.arg, signed, bits, err)
		}
		if err != nil && err != errBitfieldType {
			t.Errorf("parseBitfieldType(%q): error %v", tc.arg, err)
		}
	}
	for _, tc := range []struct {
		arg  string
		bits uint
		want int64 // -1: error
	}{
		{"0", 8, 0}, {"13", 8, 13}, {"#0", 8, 0}, {"#3", 5, 15},
		{"4294967295", 8, 4294967295}, {"4294967296", 8, -1},
		{"#536870911", 8, 4294967288}, {"#536870912", 8, -1},
		{"-1", 8, -1}, {"#-1", 8, -1}, {"#", 8, -1}, {"", 8, -1}, {"##1", 8, -1}, {"x", 8, -1},
		{"#4611686018427387905", 4, 4}, // 4*(2^62+1) wraps to 4, as in Redis
		{"#9223372036854775807", 2, -1},
	} {
		got, err := parseBitfieldOffset([]byte(tc.arg), tc.bits, DefaultProtoMaxBulkLen)
		if tc.want < 0 {
			if err != errBitOffset {
				t.Errorf("parseBitfieldOffset(%q, %d) = %d, %v; want the offset error", tc.arg, tc.bits, got, err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("parseBitfieldOffset(%q, %d) = %d, %v; want %d", tc.arg, tc.bits, got, err, tc.want)
		}
	}
}

func TestParseBitfield(t *testing.T) {
	split := fieldArgs
	ops, writes, err := parseBitfield(split("GET u8 0 OVERFLOW SAT set i5 #2 -3 overflow fail INCRBY u3 7 9 OVERFLOW WRAP GET i64 1"), DefaultProtoMaxBulkLen)
	want := []bitfieldOp{
		{kind: bitfieldGet, bits: 8, overflow: overflowWrap},
		{kind: bitfieldSet, signed: true, bits: 5, offset: 10, arg: -3, overflow: overflowSat},
		{kind: bitfieldIncrBy, bits: 3, offset: 7, arg: 9, overflow: overflowFail},
		{kind: bitfieldGet, signed: true, bits: 64, offset: 1, overflow: overflowWrap},
	}
	if err != nil || !writes || !slices.Equal(ops, want) {
		t.Fatalf("parseBitfield = %+v %v %v, want %+v", ops, writes, err, want)
	}
	if ops, writes, err := parseBitfield(split("GET u8 0 OVERFLOW SAT"), DefaultProtoMaxBulkLen); err != nil || writes || len(ops) != 1 {
		t.Errorf("GETs only: %+v %v %v", ops, writes, err)
	}
	for args, wantErr := range map[string]string{
		"GET u8":                    ErrSyntax,
		"SET u8 0":                  ErrSyntax,
		"OVERFLOW":                  ErrSyntax,
		"FOO":                       ErrSyntax,
		"OVERFLOW FOO GET u64 0":    "ERR Invalid OVERFLOW type specified",
		"GET u64 0 OVERFLOW FOO":    string(errBitfieldType),
		"SET u8 0 x":                ErrNotInteger,
		"SET u8 x x":                string(errBitOffset),
		"GET u8 0 SET u8 0 1 GET x": ErrSyntax,
		"INCRBY u8 0 1 GET x 0":     string(errBitfieldType),
	} {
		if _, _, err := parseBitfield(split(args), DefaultProtoMaxBulkLen); errText(err) != wantErr {
			t.Errorf("parseBitfield(%q) error %v, want %q", args, err, wantErr)
		}
	}
}

// fieldArgs splits s on spaces into arguments.
func fieldArgs(s string) [][]byte { return bytes.Fields([]byte(s)) }

// fieldAddModel is BITFIELD's overflow rule computed with exact integers:
// the sum is in range, or WRAP reduces it modulo 2^bits into the field's
// range, SAT clamps it, FAIL refuses.
func fieldAddModel(signed bool, value *big.Int, incr int64, bits uint, mode overflowMode) (*big.Int, bool) {
	sum := new(big.Int).Add(value, big.NewInt(incr))
	lo, hi := big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(1))
	if signed {
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits-1), big.NewInt(1))
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), bits-1))
	}
	switch {
	case sum.Cmp(lo) >= 0 && sum.Cmp(hi) <= 0:
		return sum, true
	case mode == overflowFail:
		return nil, false
	case mode == overflowSat && sum.Cmp(hi) > 0:
		return hi, true
	case mode == overflowSat:
		return lo, true
	}
	mod := new(big.Int).Lsh(big.NewInt(1), bits)
	r := new(big.Int).Mod(sum, mod) // 0..2^bits-1
	if r.Cmp(hi) > 0 {
		r.Sub(r, mod)
	}
	return r, true
}

func TestFieldAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	edges := []int64{0, 1, -1, 2, -2, 127, 128, -128, -129, 255, 256, math.MaxInt64, math.MinInt64,
		math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 62, -1 << 62, 1<<62 - 1, -1<<62 - 1, math.MaxInt32, math.MinInt32}
	pick := func() int64 {
		if rng.IntN(2) == 0 {
			return edges[rng.IntN(len(edges))]
		}
		return int64(rng.Uint64()) >> rng.IntN(64)
	}
	for n := 0; n < 200000; n++ {
		bits := uint(1 + rng.IntN(64))
		signed := bits == 64 || rng.IntN(2) == 0
		mode := overflowMode(rng.IntN(3))
		set := rng.IntN(3) == 0
		incr := pick()
		if signed {
			lo, hi := fieldLimits(bits)
			value := pick()
			if !set { // INCRBY starts from a stored value, which is in range
				value = min(max(value, lo), hi)
			} else {
				incr = 0 // SET: the argument, with nothing added
			}
			want, wantOK := fieldAddModel(true, big.NewInt(value), incr, bits, mode)
			got, ok := signedFieldAdd(value, incr, bits, mode)
			if ok != wantOK || (ok && got != want.Int64()) {
				t.Fatalf("signedFieldAdd(%d, %d, i%d, mode %d) = %d %v, want %v %v", value, incr, bits, mode, got, ok, want, wantOK)
			}
			continue
		}
		var value uint64
		if set {
			value, incr = uint64(pick()), 0
		} else {
			value = uint64(pick()) & (1<<bits - 1)
		}
		want, wantOK := fieldAddModel(false, new(big.Int).SetUint64(value), incr, bits, mode)
		got, ok := unsignedFieldAdd(value, incr, bits, mode)
		if ok != wantOK || (ok && got != want.Uint64()) {
			t.Fatalf("unsignedFieldAdd(%d, %d, u%d, mode %d) = %d %v, want %v %v", value, incr, bits, mode, got, ok, want, wantOK)
		}
	}
}

// TestBitStringPatches: the same sub-operations applied to a copied
// string and to a patched view give the same replies, and the patches,
// applied to the stored value as SETRANGE would, give the same string.
func TestBitStringPatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 300; round++ {
		base := make([]byte, patchThreshold+rng.IntN(64))
		for i := range base {
			base[i] = byte(rng.Uint32())
		}
		var ops []bitfieldOp
		var size int64
		for range 1 + rng.IntN(12) {
			op := bitfieldOp{kind: bitfieldOpKind(rng.IntN(3)), bits: uint(1 + rng.IntN(63)), overflow: overflowMode(rng.IntN(3))}
			op.signed = rng.IntN(2) == 0
			op.offset = int64(rng.IntN(8 * (len(base) + 40)))
			op.arg = int64(rng.Uint64()) >> rng.IntN(64)
			if rng.IntN(4) == 0 {
				op.arg = -op.arg
			}
			if op.kind != bitfieldGet {
				size = max(size, (op.offset+int64(op.bits)-1)>>3+1)
			}
			ops = append(ops, op)
		}
		small := &bitString{base: base, own: slices.Clone(base), size: int64(len(base))}
		if size > small.size {
			small.own = append(small.own, make([]byte, size-small.size)...)
			small.size = size
		}
		big := newBitString(base, true, size)
		if big.own != nil {
			t.Fatal("a string of patchThreshold bytes is copied")
		}
		wantRes, gotRes := runBitfield(small, ops), runBitfield(big, ops)
		if !slices.Equal(wantRes, gotRes) {
			t.Fatalf("round %d: replies %v, copied string gives %v", round, gotRes, wantRes)
		}
		patched := slices.Clone(base)
		offs, runs := big.patches()
		for i := range offs {
			if i > 0 && offs[i] <= offs[i-1]+int64(len(runs[i-1])) {
				t.Fatalf("round %d: patches overlap or are out of order: %v", round, offs)
			}
			if end := offs[i] + int64(len(runs[i])); end > int64(len(patched)) {
				patched = append(patched, make([]byte, end-int64(len(patched)))...)
			}
			copy(patched[offs[i]:], runs[i])
		}
		if !bytes.Equal(patched, small.own) {
			t.Fatalf("round %d: patched string differs from the copied one (len %d vs %d)", round, len(patched), len(small.own))
		}
	}
}

// TestBitfieldBigStringLogsPatches: BITFIELD on a big string logs only
// what it changes (200 INCRBYs on 256 KiB would log 50 MB as whole
// values), and what it logs is what a restart brings back.
func TestBitfieldBigStringLogsPatches(t *testing.T) {
	dir := t.TempDir()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{KS: ks}
	model := make([]byte, 256<<10)
	model[len(model)-1] = 'x'
	cmdReply(t, c, "SETRANGE", "big", strconv.Itoa(len(model)-1), "x")
	cmdReply(t, c, "EXPIRE", "big", "100000")
	before := ks.Stats().ArenaBytes
	for i := 0; i < 200; i++ {
		off := (i * 1297) % (len(model) - 2)
		want := fmt.Sprintf("*1\r\n:%d\r\n", int(model[off])<<8|int(model[off+1])+i)
		// u16 at byte off: the model keeps the sum below 65536
		v := int(model[off])<<8 | int(model[off+1]) + i
		model[off], model[off+1] = byte(v>>8), byte(v)
		if got := cmdReply(t, c, "BITFIELD", "big", "INCRBY", "u16", strconv.Itoa(off*8), strconv.Itoa(i)); got != want {
			t.Fatalf("INCRBY %d: %q, want %q", i, got, want)
		}
	}
	model = append(model, make([]byte, 9)...)
	model[len(model)-1] = 0x80
	cmdReply(t, c, "BITFIELD", "big", "SET", "u1", strconv.Itoa(8*(len(model)-1)), "1")
	if grew := ks.Stats().ArenaBytes - before; grew > 8<<20 {
		t.Errorf("the arena grew by %d bytes for 201 small BITFIELD writes", grew)
	}
	check := func(c *Client, when string) {
		t.Helper()
		if got := cmdReply(t, c, "GET", "big"); got != "$"+strconv.Itoa(len(model))+"\r\n"+string(model)+"\r\n" {
			t.Fatalf("%s: GET big differs from the model (%d bytes of reply)", when, len(got))
		}
		if ttl := cmdReply(t, c, "TTL", "big"); ttl == ":-1\r\n" || ttl == ":-2\r\n" {
			t.Errorf("%s: TTL big = %q, want the TTL kept", when, ttl)
		}
	}
	check(c, "before restart")
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}
	ks2, _, err := recovery.Open(recovery.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ks2.Close()
	check(&Client{KS: ks2}, "after restart")
}

// TestBitfieldCommands: what the diff scripts cannot see, with a real
// keyspace: a failing command writes nothing; GETs only write nothing; a
// write that changes no bit writes nothing once the string is raw (the
// SETRANGE below, which changes no byte either, made it raw).
func TestBitfieldCommands(t *testing.T) {
	c := newKeyspaceClient(t)
	cmdReply(t, c, "SET", "k", "ab")
	cmdReply(t, c, "SETRANGE", "k", "0", "a")
	if got := cmdReply(t, c, "OBJECT", "ENCODING", "k"); got != "$3\r\nraw\r\n" {
		t.Fatalf("OBJECT ENCODING after SETRANGE = %q", got)
	}
	lsn := c.KS.LastLSN()
	for _, cmd := range [][]string{
		{"BITFIELD", "k", "GET", "u8", "0", "GET", "i16", "#0"},
		{"BITFIELD", "k", "SET", "u8", "0", "1", "GET", "u64", "0"},
		{"BITFIELD", "k", "INCRBY", "u8", "0", "1", "OVERFLOW", "NONE"},
		{"BITFIELD", "k", "SET", "u8", "0", "97"}, // the value it has
		{"BITFIELD", "nokey", "GET", "u8", "0"},
		{"BITFIELD_RO", "k", "INCRBY", "u8", "0", "1"},
		{"BITOP", "NOT", "k", "k", "k"},
	} {
		cmdReply(t, c, cmd...)
		if got := c.KS.LastLSN(); got != lsn {
			t.Errorf("%v wrote a record", cmd)
			lsn = got
		}
	}
	if got := cmdReply(t, c, "GET", "k"); got != "$2\r\nab\r\n" {
		t.Errorf("GET k = %q", got)
	}
	if got := cmdReply(t, c, "EXISTS", "nokey"); got != ":0\r\n" {
		t.Errorf("a GET created the key: %q", got)
	}
	cmdReply(t, c, "BITFIELD", "k", "INCRBY", "u8", "0", "1", "SET", "i8", "#1", "-1")
	if got := c.KS.LastLSN(); got != lsn+1 {
		t.Errorf("a BITFIELD with two writes took %d records, want 1", got-lsn)
	}
	if got := cmdReply(t, c, "GET", "k"); got != "$2\r\nb\xff\r\n" {
		t.Errorf("GET k = %q", got)
	}
}

func TestParseLCSOptions(t *testing.T) {
	for args, want := range map[string]lcsOptions{
		"":                                {},
		"LEN":                             {len: true},
		"idx WITHMATCHLEN":                {idx: true, withMatchLen: true},
		"IDX MINMATCHLEN 4 MINMATCHLEN 2": {idx: true, minMatchLen: 2},
		"MINMATCHLEN -5 idx":              {idx: true},
		"LEN WITHMATCHLEN MINMATCHLEN 3":  {len: true, withMatchLen: true, minMatchLen: 3},
	} {
		if got, err := parseLCSOptions(fieldArgs(args)); err != nil || got != want {
			t.Errorf("parseLCSOptions(%q) = %+v %v, want %+v", args, got, err, want)
		}
	}
	for args, wantErr := range map[string]string{
		"LEN IDX":               string(errLCSLenIdx),
		"IDX FOO LEN":           ErrSyntax,
		"MINMATCHLEN":           ErrSyntax,
		"MINMATCHLEN x":         ErrNotInteger,
		"LEN MINMATCHLEN x IDX": ErrNotInteger,
	} {
		if _, err := parseLCSOptions(fieldArgs(args)); errText(err) != wantErr {
			t.Errorf("parseLCSOptions(%q) error %v, want %q", args, err, wantErr)
		}
	}
}

// isSubsequence reports whether s can be read out of t in order.
func isSubsequence(s, t []byte) bool {
	for _, c := range t {
		if len(s) > 0 && s[0] == c {
			s = s[1:]
		}
	}
	return len(s) == 0
}

// TestLCSWalk checks the walk against its definition on random strings
// over small alphabets: the string is a common subsequence as long as the
// table says; the runs, read last first, spell it out; each run is equal
// in both strings, runs do not overlap and go backwards in both.
func TestLCSWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gen := func(alpha int) []byte {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = byte('a' + rng.IntN(alpha))
		}
		return b
	}
	for round := 0; round < 3000; round++ {
		alpha := 1 + rng.IntN(4)
		a, b := gen(alpha), gen(alpha)
		tab := newLCSTable(a, b)
		lcs, matches := lcsWalk(tab, a, b, 0)
		if len(lcs) != int(tab.at(len(a), len(b))) || !isSubsequence(lcs, a) || !isSubsequence(lcs, b) {
			t.Fatalf("lcs(%q, %q) = %q (table says %d)", a, b, lcs, tab.at(len(a), len(b)))
		}
		var spelled []byte
		for i := len(matches) - 1; i >= 0; i-- {
			m := matches[i]
			if !bytes.Equal(a[m.aStart:m.aEnd+1], b[m.bStart:m.bEnd+1]) {
				t.Fatalf("lcs(%q, %q): run %+v differs", a, b, m)
			}
			if i > 0 && (matches[i-1].aStart <= m.aEnd || matches[i-1].bStart <= m.bEnd) {
				t.Fatalf("lcs(%q, %q): runs %+v and %+v out of order", a, b, m, matches[i-1])
			}
			spelled = append(spelled, a[m.aStart:m.aEnd+1]...)
		}
		if !bytes.Equal(spelled, lcs) {
			t.Fatalf("lcs(%q, %q) = %q but its runs spell %q", a, b, lcs, spelled)
		}
		minLen := int64(1 + rng.IntN(4))
		_, long := lcsWalk(tab, a, b, minLen)
		var want []lcsMatch
		for _, m := range matches {
			if int64(m.length()) >= minLen {
				want = append(want, m)
			}
		}
		if !slices.Equal(long, want) {
			t.Fatalf("lcs(%q, %q) MINMATCHLEN %d = %v, want %v", a, b, minLen, long, want)
		}
	}
	// Redis 7.0.15: LCS ohmytext mynewtext IDX WITHMATCHLEN.
	a, b := []byte("ohmytext"), []byte("mynewtext")
	lcs, matches := lcsWalk(newLCSTable(a, b), a, b, 0)
	if string(lcs) != "mytext" || !slices.Equal(matches, []lcsMatch{{4, 7, 5, 8}, {2, 3, 0, 1}}) {
		t.Errorf("LCS ohmytext mynewtext = %q %v", lcs, matches)
	}
	if lcsTableBytes(11584, 11584) > DefaultProtoMaxBulkLen || lcsTableBytes(11585, 11585) <= DefaultProtoMaxBulkLen {
		t.Error("the table limit does not fall between 11584 and 11585 bytes a side, as in Redis")
	}
}

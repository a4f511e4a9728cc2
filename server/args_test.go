package server

import (
	"math"
	"strings"
	"testing"
)

func TestParseInt64(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"42", 42, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"-99999999999999999999", 0, false},
		{"123456789012345678901", 0, false}, // 21 bytes
		{"", 0, false},
		{"-", 0, false},
		{"+1", 0, false},
		{"01", 0, false},
		{"00", 0, false},
		{"-0", 0, false},
		{"-01", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1a", 0, false},
		{"1.0", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"1\x00", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseInt64([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseInt64(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestArgInt32(t *testing.T) {
	tests := []struct {
		in, msg string
		want    int
		err     string
	}{
		{"5", "", 5, ""},
		{"-2147483648", "", math.MinInt32, ""},
		{"2147483647", "", math.MaxInt32, ""},
		{"x", "", 0, "ERR value is not an integer or out of range"},
		{"2147483648", "", 0, "ERR value is out of range, value must between -2147483648 and 2147483647"},
		{"-2147483649", "", 0, "ERR value is out of range, value must between -2147483648 and 2147483647"},
		{"x", "ERR invalid first DB index", 0, "ERR invalid first DB index"},
		{"99999999999", "ERR invalid first DB index", 0, "ERR invalid first DB index"},
	}
	for _, tt := range tests {
		got, err := ArgInt32([]byte(tt.in), tt.msg)
		if errText(err) != tt.err || (err == nil && got != tt.want) {
			t.Errorf("argInt32(%q, %q) = %d, %q; want %d, %q", tt.in, tt.msg, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestArgDB(t *testing.T) {
	tests := []struct {
		in   string
		want int
		err  string
	}{
		{"0", 0, ""},
		{"15", 15, ""},
		{"16", 0, "ERR DB index is out of range"},
		{"-1", 0, "ERR DB index is out of range"},
		{"x", 0, "ERR value is not an integer or out of range"},
		{"99999999999", 0, "ERR value is out of range, value must between -2147483648 and 2147483647"},
	}
	for _, tt := range tests {
		got, err := ArgDB([]byte(tt.in))
		if errText(err) != tt.err || got != tt.want {
			t.Errorf("argDB(%q) = %d, %q; want %d, %q", tt.in, got, errText(err), tt.want, tt.err)
		}
	}
}

func TestParseScanCursor(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"17", 17, true},
		{"", 0, true}, // strtoul of "" is 0 with nothing left over
		{"+0", 0, true},
		{"-0", 0, true},
		{"007", 7, true},
		{"-1", math.MaxUint64, true},
		{"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false},
		{" 0", 0, false},
		{"0 ", 0, false},
		{"0x", 0, false},
		{"+", 0, false},
		{"-", 0, false},
		{"x", 0, false},
		{"1.5", 0, false},
		{"1\x00x", 1, true},
		{"\x00", 0, true},
		{" \x001", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseScanCursor([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseScanCursor(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// Acceptance matches Redis 7.0.15's ZADD score parsing (strtod).
func TestParseFloat64(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true},
		{"1.5", 1.5, true},
		{"-2.25", -2.25, true},
		{"+5", 5, true},
		{".5", 0.5, true},
		{"5.", 5, true},
		{"1e10", 1e10, true},
		{"1E5", 1e5, true},
		{"1e+5", 1e5, true},
		{"123.456e-2", 1.23456, true},
		{"00012", 12, true},
		{"-0", 0, true},
		{"0x10", 16, true},
		{"0X1.8P1", 3, true},
		{"0x.8", 0.5, true},
		{"0x1p-3", 0.125, true},
		{"1.7976931348623157e308", math.MaxFloat64, true},
		{"4.9e-324", 5e-324, true}, // subnormal: accepted
		{"1e-320", 1e-320, true},
		{"0e999", 0, true},
		{"inf", math.Inf(1), true},
		{"+inf", math.Inf(1), true},
		{"-inf", math.Inf(-1), true},
		{"Infinity", math.Inf(1), true},
		{"-INFINITY", math.Inf(-1), true},
		{"1e309", 0, false},  // overflow
		{"1e-400", 0, false}, // underflow to zero
		{"nan", 0, false},
		{"NaN", 0, false},
		{"infx", 0, false},
		{"infin", 0, false},
		{"", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{".", 0, false},
		{"-", 0, false},
		{"+", 0, false},
		{"1e", 0, false},
		{"1e+", 0, false},
		{"1e5.5", 0, false},
		{"0x", 0, false},
		{"0x.", 0, false},
		{"0x1g", 0, false},
		{"0x1p", 0, false},
		{"--1", 0, false},
		{"+-1", 0, false},
		{"1_0", 0, false},
		{"0b1", 0, false},
		{"1\x00", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseFloat64([]byte(tt.in))
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseFloat64(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if _, err := ArgFloat64([]byte("x")); errText(err) != "ERR value is not a valid float" {
		t.Errorf("argFloat64 error = %q", errText(err))
	}
}

// INCRBYFLOAT arithmetic and formatting: every expected string is Redis
// 7.0.15's reply to SET k <stored>; INCRBYFLOAT k <incr> on x86-64.
func TestIncrByFloatArithmetic(t *testing.T) {
	tests := []struct {
		stored, incr, want string
	}{
		{"10.5", "0.1", "10.6"},
		{"10.6", "0.1", "10.7"},
		{"0.1", "0.2", "0.3"},
		{"0", "1.5", "1.5"},
		{"1.5", "5.0e3", "5001.5"},
		{"3", "-3", "0"},
		{"0", "-0.0", "0"},
		{"0", "-1e-30", "0"}, // "-0.00000000000000000" becomes "0"
		{"1e5", "0", "100000"},
		{"1.0", "1", "2"},
		{"0", "0x1p-3", "0.125"},
		{"0.125", ".5", "0.625"},
		{"0.625", "5.", "5.625"},
		{"5000", "1.23456789012345678901", "5001.23456789012345691"},
		{"0", "0.000003814697265625", "0.00000381469726562"}, // a tie rounds to even
		{"0", "0.000011444091796875", "0.00001144409179688"}, // a tie rounds to even
		{"12345678901234567890123", "1", "12345678901234567889920"},
		{"0", "1e-4950", "0"},
		{"0.3", "1e300", "1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144"},
	}
	for _, tt := range tests {
		cur, ok := ParseLongDouble([]byte(tt.stored))
		if !ok {
			t.Errorf("parseLongDouble(%q) failed", tt.stored)
			continue
		}
		inc, ok := ParseLongDouble([]byte(tt.incr))
		if !ok {
			t.Errorf("parseLongDouble(%q) failed", tt.incr)
			continue
		}
		sum, ok := AddLongDouble(cur, inc)
		if !ok {
			t.Errorf("%s + %s overflowed", tt.stored, tt.incr)
			continue
		}
		if got := FormatLongDouble(sum); got != tt.want {
			t.Errorf("%s + %s = %s, want %s", tt.stored, tt.incr, got, tt.want)
		}
	}
}

func TestParseLongDouble(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"1e308", true},
		{"1e309", true}, // beyond a double, within a long double
		{"1e4932", true},
		{"1e4933", false},
		{"1e-4950", true},
		{"1e-5000", false},
		{"0e99999", true},
		{"inf", true},
		{"-Infinity", true},
		{"nan", false},
		{" 1", false},
		{"1 ", false},
		{"", false},
		{"abc", false},
		{strings.Repeat("1", longDoubleMaxLen), false},
	}
	for _, tt := range tests {
		if _, ok := ParseLongDouble([]byte(tt.in)); ok != tt.ok {
			t.Errorf("parseLongDouble(%.20q) ok = %v, want %v", tt.in, ok, tt.ok)
		}
	}
}

func TestAddLongDoubleRefusesInfinity(t *testing.T) {
	big, _ := ParseLongDouble([]byte("1e4932"))
	one, _ := ParseLongDouble([]byte("1"))
	for _, pair := range [][2]string{{"1e4932", "1e4932"}, {"inf", "1"}, {"1", "-inf"}} {
		a, _ := ParseLongDouble([]byte(pair[0]))
		b, _ := ParseLongDouble([]byte(pair[1]))
		if _, ok := AddLongDouble(a, b); ok {
			t.Errorf("%s + %s: want refusal", pair[0], pair[1])
		}
	}
	if _, ok := AddLongDouble(big, one); !ok {
		t.Error("1e4932 + 1 refused")
	}
}

func TestFormatLongDouble(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"1", "1"},
		{"-1.5", "-1.5"},
		{"100", "100"},
		{"0.1", "0.1"},
		{"-0", "0"},
		{"1e-18", "0"},
		{"-1e-18", "0"},
		{"1e-17", "0.00000000000000001"},
		{"1e20", "100000000000000000000"},
		{"inf", "inf"},
		{"-inf", "-inf"},
	} {
		f, ok := ParseLongDouble([]byte(tt.in))
		if !ok {
			t.Fatalf("parse %q", tt.in)
		}
		if got := FormatLongDouble(f); got != tt.want {
			t.Errorf("formatLongDouble(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestArgIs(t *testing.T) {
	tests := []struct {
		arg, opt string
		want     bool
	}{
		{"nx", "nx", true},
		{"NX", "nx", true},
		{"Nx", "NX", true},
		{"nxx", "nx", false},
		{"n", "nx", false},
		{"", "nx", false},
		{"keepTTL", "keepttl", true},
		{"n\x00", "nx", false},
	}
	for _, tt := range tests {
		if got := ArgIs([]byte(tt.arg), tt.opt); got != tt.want {
			t.Errorf("argIs(%q, %q) = %v", tt.arg, tt.opt, got)
		}
	}
}

func TestCheckStringLength(t *testing.T) {
	tests := []struct {
		size, grow int64
		ok         bool
	}{
		{0, 0, true},
		{MaxStringSize, 0, true},
		{MaxStringSize - 1, 1, true},
		{MaxStringSize, 1, false},
		{536870911, 2, false},
		{math.MaxInt64, math.MaxInt64, false}, // overflow
	}
	for _, tt := range tests {
		err := CheckStringLength(tt.size, tt.grow)
		if (err == nil) != tt.ok {
			t.Errorf("checkStringLength(%d, %d) = %v", tt.size, tt.grow, err)
		}
		if err != nil && err.Error() != "ERR string exceeds maximum allowed size (proto-max-bulk-len)" {
			t.Errorf("error text %q", err)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

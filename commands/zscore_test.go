package commands

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScoreArgMatchesArgFloat64 checks that scoreArg's fast path gives
// argFloat64's value, bit for bit, and its error: fixed edge cases, then
// random strings of digits, dots, signs and other bytes.
func TestScoreArgMatchesArgFloat64(t *testing.T) {
	check := func(s string) {
		t.Helper()
		got, gerr := scoreArg([]byte(s))
		want, werr := argFloat64([]byte(s))
		if (gerr == nil) != (werr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%q: scoreArg %v %v, argFloat64 %v %v", s, got, gerr, want, werr)
		}
	}
	for _, s := range []string{"", "-", ".", "-.", "0", "-0", "-0.0", "1.", ".5", "-.5", "5.5.5", "1e3", "0x1p3",
		"inf", "-inf", "nan", "123456789012345", "1234567890123456", "12345678901234.5", "0.000000000000001",
		"0.1", "0.2", "0.3", "179.999999", "-84.123456", "00000000000000000001", "1 ", " 1", "+1", "--1",
		"9007199254740993", "999999999999999", "0.9999999999999999", "1.7976931348623157e308"} {
		check(s)
	}
	r := rand.New(rand.NewPCG(7, 7))
	alphabet := "0123456789.-+e "
	for i := 0; i < 200000; i++ {
		n := 1 + r.IntN(20)
		b := make([]byte, n)
		for j := range b {
			if r.IntN(10) < 8 {
				b[j] = byte('0' + r.IntN(10))
			} else {
				b[j] = alphabet[r.IntN(len(alphabet))]
			}
		}
		check(string(b))
	}
}

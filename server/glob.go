package server

// Glob matching for KEYS, SCAN MATCH (and anything else that takes a Redis
// pattern), with the semantics of Redis 7.0's stringmatchlen, including its
// corner cases, so that a pattern selects the same keys here as in Redis:
//
//   - '*' matches any run of bytes, '?' any one byte, '\x' the byte x.
//   - "[abc]", "[^abc]", "[a-z]" match one byte; inside a class '\x' is the
//     byte x, a range may be written backwards ("[z-a]"), and its ends
//     compare as C's signed char, so a range with an end >= 0x80 behaves as
//     it does in Redis on x86.
//   - An unterminated class ("[abc") runs to the end of the pattern.
//   - A pattern that starts with '*' does not match the empty string
//     (callers that want "match everything" test for the pattern "*"
//     themselves, as Redis does).
//   - Recursion deeper than 1000 '*'s matches nothing, and a failed '*'
//     stops every earlier '*' from retrying (Redis's guard against
//     exponential patterns).

// GlobMatch reports whether s matches pattern, byte for byte.
func GlobMatch(pattern, s []byte) bool {
	skipLonger := false
	return globMatchImpl(pattern, s, false, &skipLonger, 0)
}

// globMatchFold is globMatch ignoring ASCII case.
func globMatchFold(pattern, s []byte) bool {
	skipLonger := false
	return globMatchImpl(pattern, s, true, &skipLonger, 0)
}

const globMaxNesting = 1000

func globMatchImpl(p, s []byte, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > globMaxNesting {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) >= 2 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchImpl(p[1:], s, nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			// The rest of the pattern matches nowhere in the rest of the
			// string, so no earlier '*' can help by eating more.
			*skipLonger = true
			return false
		case '?':
			p = p[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) >= 2 && p[0] == '\\' {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if len(p) == 0 {
					break // unterminated class: it ends with the pattern
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi, c := int(int8(p[0])), int(int8(p[2])), int(int8(s[0]))
					if lo > hi {
						lo, hi = hi, lo
					}
					if nocase {
						lo, hi, c = lowerSigned(lo), lowerSigned(hi), lowerSigned(c)
					}
					p = p[2:]
					if c >= lo && c <= hi {
						match = true
					}
				} else if nocase {
					if LowerASCII(p[0]) == LowerASCII(s[0]) {
						match = true
					}
				} else if p[0] == s[0] {
					match = true
				}
				p = p[1:]
			}
			if len(p) > 0 {
				p = p[1:] // the closing ']'
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if nocase {
				if LowerASCII(p[0]) != LowerASCII(s[0]) {
					return false
				}
			} else if p[0] != s[0] {
				return false
			}
			p = p[1:]
		}
		s = s[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// lowerSigned is C's tolower on a (possibly negative) signed char value.
func lowerSigned(c int) int {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

package acl

// Match reports whether str matches the glob pattern with Redis's
// stringmatchlen rules (KEYS, PSUBSCRIBE and ACL patterns alike): * any
// run, ? one byte, [abc] [^abc] [a-z] classes (a reversed range counts, an
// unclosed class runs to the pattern's end), \ escapes the next byte.
// nocase folds ASCII letters.
func Match(pattern string, str []byte, nocase bool) bool {
	skip := false
	return matchImpl(pattern, str, nocase, &skip)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func matchImpl(pat string, str []byte, nocase bool, skipLonger *bool) bool {
	// at reads the pattern as the NUL-terminated string Redis reads.
	at := func(i int) byte {
		if i < len(pat) {
			return pat[i]
		}
		return 0
	}
	p, s := 0, 0
	for p < len(pat) && s < len(str) {
		switch pat[p] {
		case '*':
			for p < len(pat) && at(p+1) == '*' {
				p++
			}
			if len(pat)-p == 1 {
				return true
			}
			for s < len(str) {
				if matchImpl(pat[p+1:], str[s:], nocase, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s++
			}
			*skipLonger = true
			return false
		case '?':
			s++
		case '[':
			p++
			not := at(p) == '^'
			if not {
				p++
			}
			match := false
			c := str[s]
			for {
				switch {
				case at(p) == '\\' && len(pat)-p >= 2:
					p++
					if pat[p] == c {
						match = true
					}
				case at(p) == ']':
					goto closed
				case p >= len(pat):
					p--
					goto closed
				case len(pat)-p >= 3 && pat[p+1] == '-':
					start, end, cc := pat[p], pat[p+2], c
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, cc = lower(start), lower(end), lower(cc)
					}
					p += 2
					if cc >= start && cc <= end {
						match = true
					}
				default:
					if pat[p] == c || (nocase && lower(pat[p]) == lower(c)) {
						match = true
					}
				}
				p++
			}
		closed:
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s++
		case '\\':
			if len(pat)-p >= 2 {
				p++
			}
			fallthrough
		default:
			if pat[p] != str[s] && !(nocase && lower(pat[p]) == lower(str[s])) {
				return false
			}
			s++
		}
		p++
		if s == len(str) {
			for at(p) == '*' {
				p++
			}
			break
		}
	}
	return p >= len(pat) && s == len(str)
}

package rdb

// lzfDecompress expands an LZF block (liblzf's format, as Redis's lzf_d.c
// reads it) into exactly n bytes. A control byte below 32 starts a literal
// run of ctrl+1 bytes; otherwise its top three bits are a back-reference
// length (7 means a further length byte follows) and the rest, with the
// next byte, the distance minus one.
func lzfDecompress(in []byte, n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 {
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > n {
				return nil, errf("lzf literal run past the end")
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return nil, errf("lzf truncated length")
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, errf("lzf truncated reference")
		}
		back := len(out) - ((ctrl&0x1f)<<8 | int(in[i])) - 1
		i++
		length += 2
		if back < 0 || len(out)+length > n {
			return nil, errf("lzf reference out of range")
		}
		for k := range length { // may overlap what it appends
			out = append(out, out[back+k])
		}
	}
	if len(out) != n {
		return nil, errf("lzf expands to %d bytes, want %d", len(out), n)
	}
	return out, nil
}

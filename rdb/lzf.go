package rdb

import "sync"

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

// LZF compressor parameters, as Redis 7.0 builds liblzf (lzfP.h: HLOG 16,
// VERY_FAST on, ULTRA_FAST off). The output format does not depend on them,
// but byte-identical payloads do.
const (
	lzfHashLog = 16
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

// lzfTable is the compressor's hash table: the last position seen for each
// hash of three bytes. Slots carry the epoch of the call that wrote them, so
// a pooled table starts empty for each call without being cleared (a 64K
// slot clear per string would dominate the cost of dumping many short
// strings).
type lzfTable struct {
	slots [1 << lzfHashLog]uint64 // epoch<<32 | position
	epoch uint64
}

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

func (h *lzfTable) reset() {
	h.epoch++
	if h.epoch == 1<<32 {
		clear(h.slots[:])
		h.epoch = 1
	}
}

// get returns the position stored in slot i by this call, 0 if none
// (position 0 is never a reference).
func (h *lzfTable) get(i uint32) int {
	s := h.slots[i]
	if s>>32 != h.epoch {
		return 0
	}
	return int(uint32(s))
}

func (h *lzfTable) set(i uint32, pos int) { h.slots[i] = h.epoch<<32 | uint64(pos) }

func lzfIndex(h uint32) uint32 {
	return ((h >> (3*8 - lzfHashLog)) - h*5) & (1<<lzfHashLog - 1)
}

// lzfCompress compresses in with liblzf's greedy algorithm (the one
// lzf_compress implements: a hash of the next three bytes finds a candidate
// up to 8 KB back, matches are extended up to 264 bytes, and after a match
// the last two positions are hashed). It returns nil when the result would
// not fit in outLen bytes. in must be at least 3 bytes long.
//
// Differences from Redis's build: our hash table starts empty on every
// call, Redis's lives uninitialised on the stack and can hold positions
// from an earlier call; those only ever add valid matches, so the rare
// payload where Redis found one differs in bytes, not in what it decodes to.
func lzfCompress(in []byte, outLen int) []byte {
	n := len(in)
	if n < 3 || outLen <= 0 {
		return nil
	}
	h := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(h)
	h.reset()
	out := make([]byte, outLen+8)
	op, lit, ip := 1, 0, 0 // out[0] will hold the first literal run's length
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < n-2 {
		hval = hval<<8 | uint32(in[ip+2])
		idx := lzfIndex(hval)
		ref := h.get(idx)
		h.set(idx, ip)
		if ref > 0 && ref < ip && ip-ref-1 < lzfMaxOff &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			length := 2
			maxLen := min(n-ip-length, lzfMaxRef)
			if op+3+1 >= outLen {
				undo := 0
				if lit == 0 {
					undo = 1
				}
				if op-undo+3+1 >= outLen {
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1) // close the literal run
			if lit == 0 {
				op-- // there was none
			}
			// Extend the match: 16 unchecked steps when there is room, then
			// one step at a time up to maxLen (the C code's exact order).
			matched := false
			if maxLen > 16 {
				for range 16 {
					length++
					if in[ref+length] != in[ip+length] {
						matched = true
						break
					}
				}
			}
			if !matched {
				for {
					length++
					if !(length < maxLen && in[ref+length] == in[ip+length]) {
						break
					}
				}
			}
			length -= 2 // the encoded length: octets matched minus two
			ip++
			if length < 7 {
				out[op] = byte(off>>8 + length<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start a literal run
			ip += length + 1
			if ip >= n-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			h.set(lzfIndex(hval), ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			h.set(lzfIndex(hval), ip)
			ip++
			continue
		}
		if op >= outLen {
			return nil
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return nil
	}
	for ip < n {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	if op > outLen {
		return nil
	}
	return out[:op]
}

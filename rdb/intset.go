package rdb

import (
	"encoding/binary"
	"slices"
	"strconv"
)

// Intset layout (Redis's intset.c), little-endian: encoding u32 (2, 4 or 8:
// the width of every member), length u32, then the members sorted
// ascending, signed, each of that width.

func intsetDecode(p []byte) ([][]byte, error) {
	if len(p) < 8 {
		return nil, errf("intset header")
	}
	w := int(binary.LittleEndian.Uint32(p))
	n := int(binary.LittleEndian.Uint32(p[4:]))
	if (w != 2 && w != 4 && w != 8) || uint64(len(p)-8) != uint64(n)*uint64(w) {
		return nil, errf("intset of width %d and length %d in %d bytes", w, n, len(p))
	}
	out := make([][]byte, n)
	prev := int64(0)
	for i := range n {
		q := p[8+i*w:]
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(q)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(q)))
		default:
			v = int64(binary.LittleEndian.Uint64(q))
		}
		if i > 0 && v <= prev {
			return nil, errf("intset not sorted")
		}
		prev = v
		out[i] = strconv.AppendInt(nil, v, 10)
	}
	return out, nil
}

// intsetEncode is the intset of vals (distinct), in the narrowest width.
func intsetEncode(vals []int64) []byte {
	vals = slices.Clone(vals)
	slices.Sort(vals)
	w := 2
	for _, v := range vals {
		if v < -1<<31 || v > 1<<31-1 {
			w = 8
			break
		}
		if v < -1<<15 || v > 1<<15-1 {
			w = 4
		}
	}
	out := make([]byte, 8, 8+w*len(vals))
	binary.LittleEndian.PutUint32(out, uint32(w))
	binary.LittleEndian.PutUint32(out[4:], uint32(len(vals)))
	for _, v := range vals {
		switch w {
		case 2:
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		case 4:
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		default:
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	}
	return out
}

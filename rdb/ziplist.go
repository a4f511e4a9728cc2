package rdb

import (
	"encoding/binary"
	"strconv"
)

// Read-only support for the containers of RDB versions before 10, which
// redis-server 7.0 still loads.
//
// Ziplist (ziplist.c): zlbytes u32 | zltail u32 | zllen u16 | entry* | 0xFF,
// little-endian; entry = prevlen (1 byte, or 0xFE + u32) | encoding | data.
// Encodings: 00xxxxxx, 01xxxxxx+1, 0x80+u32 big-endian: string lengths;
// 0xC0 int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8,
// 0xF1..0xFD immediate 0..12.
func ziplistDecode(p []byte) ([][]byte, error) {
	if len(p) < 11 || int(binary.LittleEndian.Uint32(p)) != len(p) || p[len(p)-1] != 0xff {
		return nil, errf("ziplist header")
	}
	var out [][]byte
	i := 10
	for i < len(p) && p[i] != 0xff {
		if p[i] == 0xfe {
			i += 5
		} else {
			i++
		}
		if i >= len(p)-1 {
			return nil, errf("ziplist truncated")
		}
		b := p[i]
		var n, hdr int
		var v int64
		isInt := true
		switch {
		case b>>6 == 0:
			hdr, n, isInt = 1, int(b&0x3f), false
		case b>>6 == 1:
			if i+2 > len(p) {
				return nil, errf("ziplist truncated")
			}
			hdr, n, isInt = 2, int(b&0x3f)<<8|int(p[i+1]), false
		case b == 0x80:
			if i+5 > len(p) {
				return nil, errf("ziplist truncated")
			}
			l := binary.BigEndian.Uint32(p[i+1:])
			if uint64(l) > uint64(len(p)) {
				return nil, errf("ziplist string too long")
			}
			hdr, n, isInt = 5, int(l), false
		case b == 0xc0:
			hdr, n = 1, 2
		case b == 0xd0:
			hdr, n = 1, 4
		case b == 0xe0:
			hdr, n = 1, 8
		case b == 0xf0:
			hdr, n = 1, 3
		case b == 0xfe:
			hdr, n = 1, 1
		case b >= 0xf1 && b <= 0xfd:
			hdr, n, v = 1, 0, int64(b&0x0f)-1
		default:
			return nil, errf("ziplist encoding %#x", b)
		}
		if i+hdr+n > len(p)-1 {
			return nil, errf("ziplist entry past the end")
		}
		d := p[i+hdr : i+hdr+n]
		if !isInt {
			out = append(out, d)
		} else {
			if n > 0 {
				var u uint64
				for k := n - 1; k >= 0; k-- {
					u = u<<8 | uint64(d[k])
				}
				shift := 64 - 8*uint(n)
				v = int64(u<<shift) >> shift
			}
			out = append(out, strconv.AppendInt(nil, v, 10))
		}
		i += hdr + n
	}
	if i != len(p)-1 {
		return nil, errf("ziplist end")
	}
	return out, nil
}

// zipmapDecode reads a zipmap (zipmap.c, hashes of RDB version 3 and
// before): zmlen u8 | (len key len value free value-and-free)* | 0xFF, a
// len being one byte below 254 or 254 + u32 little-endian.
func zipmapDecode(p []byte) ([][]byte, error) {
	if len(p) < 2 {
		return nil, errf("zipmap header")
	}
	var out [][]byte
	i := 1
	readLen := func() (int, error) {
		if i >= len(p) {
			return 0, errf("zipmap truncated")
		}
		if p[i] < 254 {
			i++
			return int(p[i-1]), nil
		}
		if p[i] != 254 || i+5 > len(p) {
			return 0, errf("zipmap length")
		}
		l := binary.LittleEndian.Uint32(p[i+1:])
		i += 5
		if uint64(l) > uint64(len(p)) {
			return 0, errf("zipmap length")
		}
		return int(l), nil
	}
	for i < len(p) && p[i] != 0xff {
		kl, err := readLen()
		if err != nil {
			return nil, err
		}
		if i+kl > len(p) {
			return nil, errf("zipmap key")
		}
		k := p[i : i+kl]
		i += kl
		vl, err := readLen()
		if err != nil {
			return nil, err
		}
		if i >= len(p) {
			return nil, errf("zipmap truncated")
		}
		free := int(p[i])
		i++
		if i+vl+free > len(p) {
			return nil, errf("zipmap value")
		}
		out = append(out, k, p[i:i+vl])
		i += vl + free
	}
	if i != len(p)-1 {
		return nil, errf("zipmap end")
	}
	return out, nil
}

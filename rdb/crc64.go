package rdb

// crc64Poly is the Jones polynomial in reflected form, the CRC Redis uses for
// DUMP payloads and RDB files ("crc-64-jones": reflected in and out, initial
// value 0, no final xor). Durable: never change.
const crc64Poly = 0x95ac9329ac4bc9b5

var crc64Table = func() (t [8][256]uint64) {
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crc64Poly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// CRC64 extends crc (0 to start) with p, as Redis's crc64(crc, p, len).
func CRC64(crc uint64, p []byte) uint64 {
	for len(p) >= 8 {
		crc ^= uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
		crc = crc64Table[7][crc&0xff] ^ crc64Table[6][crc>>8&0xff] ^
			crc64Table[5][crc>>16&0xff] ^ crc64Table[4][crc>>24&0xff] ^
			crc64Table[3][crc>>32&0xff] ^ crc64Table[2][crc>>40&0xff] ^
			crc64Table[1][crc>>48&0xff] ^ crc64Table[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = crc64Table[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}

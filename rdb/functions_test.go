package rdb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// A FUNCTION DUMP of redis-server 7.0.15 (lib2 then lib1; lib1's source is
// LZF-compressed).
const redisFunctionDump = "f5405123216c7561206e616d653d6c6962320a72656469732e72656769737465725f66756e6374696f6e282767272c2066756e6374696f6e286b6579732c2061726773292072657475726e2027672720656e6429f5c340ec417e1f23216c7561206e616d653d6c6962310a2d2d206120636f6d6d656e74207468610b7420726570656174733a2061e04100160a6c6f63616c2066756e6374696f6e2061646431286129206b02747572200e17202b203120656e640a72656469732e72656769737465725fc0300528276631272ce0003f0a286b6579732c2061726773e00143405201312940450029e00f46007bc04f005f61000227663220542098056c6261636b3dc01ce0105d0032605d20860f6c6167733d7b276e6f2d777269746573204500272045126f772d7374616c65277d2c206465736372697040ed0a3d277365636f6e64277d0a0a0035cc840a8083a483"

func TestFunctionsDumpMatchesRedis(t *testing.T) {
	p, _ := hex.DecodeString(redisFunctionDump)
	codes, err := ReadFunctionsDump(p)
	if err != nil || len(codes) != 2 {
		t.Fatalf("read: %v, %d codes", err, len(codes))
	}
	if !bytes.HasPrefix(codes[0], []byte("#!lua name=lib2\n")) || !bytes.HasPrefix(codes[1], []byte("#!lua name=lib1\n")) || !bytes.HasSuffix(codes[1], []byte("description='second'}\n")) {
		t.Fatalf("codes %q", codes)
	}
	if got := DumpFunctions(codes); !bytes.Equal(got, p) {
		t.Fatalf("dump differs from redis-server's:\n got %x\nwant %x", got, p)
	}
}

func TestFunctionsDumpErrors(t *testing.T) {
	good := DumpFunctions([][]byte{[]byte("#!lua name=a\nx")})
	bad := bytes.Clone(good)
	bad[3] ^= 1
	old := append([]byte{opFunction}, appendString(appendString(nil, []byte("lib")), []byte("LUA"))...)
	old = append(appendLength(old, 1), appendString(nil, []byte("desc"))...)
	old = appendString(old, []byte("\nbody"))
	for _, c := range []struct {
		p     []byte
		codes []string
		err   error
	}{
		{good, []string{"#!lua name=a\nx"}, nil},
		{DumpFunctions(nil), nil, nil},
		{bad, nil, ErrChecksum},
		{good[:9], nil, ErrChecksum},
		{footer([]byte{TypeString, 1, 'x'}), nil, ErrNotFunction},
		{footer([]byte{opFunction2, 40, 'x'}), nil, ErrFunctionPayload},
		{footer(old), []string{"#!LUA name=lib\n\nbody"}, nil},
	} {
		codes, err := ReadFunctionsDump(c.p)
		if !errors.Is(err, c.err) || len(codes) != len(c.codes) {
			t.Errorf("%x: %q %v", c.p, codes, err)
			continue
		}
		for i := range codes {
			if string(codes[i]) != c.codes[i] {
				t.Errorf("%x: code %q", c.p, codes[i])
			}
		}
	}
}

func footer(p []byte) []byte {
	p = append(p, Version, 0)
	return append(p, le64(CRC64(0, p))...)
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// FUNCTION DUMP payloads: the libraries' records as an RDB file holds them,
// then the DUMP footer.
//
//	+-------------------------+-----+-------------+-------------------------+
//	| 245 | library source    | ... | version u16 | CRC64 u64 of all before |
//	+-------------------------+-----+-------------+-------------------------+
//
// Each library is opcode FUNCTION2 (245) and its source as an RDB string
// (LZF-compressed as any string is). Reading also accepts the FUNCTION (246)
// record of Redis 7.0's release candidates: name, engine, a description
// flag and description, and the body, which it turns into the source
// "#!<engine> name=<name>\n<body>" as Redis does.

// Errors of ReadFunctionsDump, worded as Redis's FUNCTION RESTORE replies
// them (after "ERR ").
var (
	// ErrNotFunction: a record of the payload is not a library.
	ErrNotFunction = errors.New("given type is not a function")
	// ErrFunctionPayload: a library record is cut short or malformed.
	ErrFunctionPayload = errors.New("Failed loading library payload")
)

// DumpFunctions is the FUNCTION DUMP payload of the libraries whose sources
// are codes, in that order.
func DumpFunctions(codes [][]byte) []byte {
	var p []byte
	for _, code := range codes {
		p = appendString(append(p, opFunction2), code)
	}
	p = binary.LittleEndian.AppendUint16(p, Version)
	return binary.LittleEndian.AppendUint64(p, CRC64(0, p))
}

// ReadFunctionsDump returns the library sources of a FUNCTION DUMP payload,
// in payload order. ErrChecksum for a bad footer; ErrNotFunction for a
// record of another type; an error wrapping ErrFunctionPayload for a
// malformed library record. As Redis does, records are read until at most
// the 10 footer bytes are left, and a record's string may run into the
// footer (Redis reads from the whole buffer).
func ReadFunctionsDump(p []byte) ([][]byte, error) {
	if err := VerifyDump(p); err != nil {
		return nil, err
	}
	d := decoder{p: p}
	var codes [][]byte
	for len(p)-d.i > 10 {
		t, _ := d.byte()
		switch t {
		case opFunction2:
			code, err := d.string()
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrFunctionPayload, err)
			}
			codes = append(codes, append([]byte(nil), code...))
		case opFunction:
			code, err := d.oldFunction()
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrFunctionPayload, err)
			}
			codes = append(codes, code)
		default:
			return nil, ErrNotFunction
		}
	}
	return codes, nil
}

// oldFunction reads the body of a FUNCTION (246) record and returns the
// library source it stands for.
func (d *decoder) oldFunction() ([]byte, error) {
	name, err := d.string()
	if err != nil {
		return nil, err
	}
	engine, err := d.string()
	if err != nil {
		return nil, err
	}
	hasDesc, enc, err := d.length()
	if err != nil || enc {
		return nil, errf("library description indicator")
	}
	if hasDesc != 0 {
		if _, err := d.string(); err != nil {
			return nil, err
		}
	}
	body, err := d.string()
	if err != nil {
		return nil, err
	}
	code := append([]byte("#!"), engine...)
	code = append(append(code, " name="...), name...)
	code = append(code, '\n')
	return append(code, body...), nil
}

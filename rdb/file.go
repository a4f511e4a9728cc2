package rdb

import (
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"strconv"
)

// File opcodes (rdb.h). Durable.
const (
	opFunction2   = 245
	opFunction    = 246
	opModuleAux   = 247
	opIdle        = 248
	opFreq        = 249
	opAux         = 250
	opResizeDB    = 251
	opExpireTimeM = 252
	opExpireTime  = 253
	opSelectDB    = 254
	opEOF         = 255
)

const magic = "REDIS"

// Entry is one key of an RDB file.
type Entry struct {
	DB         int
	Key        []byte
	Value      Value
	ExpireAtMs int64 // absolute Unix time in ms; 0 = no expiry
	Idle       int64 // LRU idle seconds; -1 = not recorded
	Freq       int   // LFU frequency 0..255; -1 = not recorded
}

// File is the content of an RDB file.
type File struct {
	Version   int         // the header's version (ReadFile); WriteFile always writes Version
	Aux       [][2]string // AUX fields in file order (name, value)
	Functions [][]byte    // FUNCTION2 records: each a library's source
	Entries   []Entry     // keys in file order, grouped by database
}

// ReadFile decodes a whole RDB file of version 1 to Version. Keys whose
// collection is empty are skipped, as Redis skips them. A non-zero trailing
// checksum (versions 5 and later) must match. Errors wrap ErrBadFormat,
// ErrUnsupported (streams, modules, module aux data) or ErrChecksum.
func ReadFile(r io.Reader) (*File, error) {
	p, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(p) < 9 || string(p[:5]) != magic {
		return nil, errf("not an RDB file")
	}
	ver, err := strconv.Atoi(string(p[5:9]))
	if err != nil || ver < 1 || ver > Version {
		return nil, errf("RDB version %q", p[5:9])
	}
	f := &File{Version: ver}
	d := &decoder{p: p, i: 9}
	db := 0
	expire, idle, freq := int64(0), int64(-1), -1
	for {
		t, err := d.byte()
		if err != nil {
			return nil, err
		}
		switch t {
		case opEOF:
			if ver >= 5 {
				sum, err := d.bytes(8)
				if err != nil {
					return nil, err
				}
				if want := binary.LittleEndian.Uint64(sum); want != 0 && want != CRC64(0, p[:d.i-8]) {
					return nil, ErrChecksum
				}
			}
			return f, nil
		case opSelectDB:
			n, enc, err := d.length()
			if err != nil || enc || n > 1<<20 {
				return nil, errf("SELECTDB")
			}
			db = int(n)
		case opResizeDB:
			for range 2 {
				if _, _, err := d.length(); err != nil {
					return nil, err
				}
			}
		case opAux:
			k, err := d.string()
			if err != nil {
				return nil, err
			}
			v, err := d.string()
			if err != nil {
				return nil, err
			}
			f.Aux = append(f.Aux, [2]string{string(k), string(v)})
		case opExpireTimeM:
			b, err := d.bytes(8)
			if err != nil {
				return nil, err
			}
			expire = int64(binary.LittleEndian.Uint64(b))
		case opExpireTime:
			b, err := d.bytes(4)
			if err != nil {
				return nil, err
			}
			expire = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
		case opIdle:
			n, enc, err := d.length()
			if err != nil || enc {
				return nil, errf("IDLE")
			}
			idle = int64(n)
		case opFreq:
			b, err := d.byte()
			if err != nil {
				return nil, err
			}
			freq = int(b)
		case opFunction2:
			code, err := d.string()
			if err != nil {
				return nil, err
			}
			f.Functions = append(f.Functions, code)
		case opFunction, opModuleAux:
			return nil, ErrUnsupported
		default:
			key, err := d.string()
			if err != nil {
				return nil, err
			}
			v, err := d.object(t)
			if err != nil {
				if errors.Is(err, errEmpty) {
					expire, idle, freq = 0, -1, -1
					continue
				}
				return nil, err
			}
			f.Entries = append(f.Entries, Entry{DB: db, Key: key, Value: v, ExpireAtMs: expire, Idle: idle, Freq: freq})
			expire, idle, freq = 0, -1, -1
		}
	}
}

// WriteFile writes f as an RDB file of version Version: the header, f.Aux,
// each function library, then the entries database by database (sorted by
// DB, each preceded by SELECTDB and RESIZEDB), EOF and the CRC64.
func WriteFile(w io.Writer, f *File) error {
	p := []byte(magic + "0010")
	for _, a := range f.Aux {
		p = appendString(appendString(append(p, opAux), []byte(a[0])), []byte(a[1]))
	}
	for _, code := range f.Functions {
		p = appendString(append(p, opFunction2), code)
	}
	byDB := map[int][]int{}
	var dbs []int
	for i, e := range f.Entries {
		if _, ok := byDB[e.DB]; !ok {
			dbs = append(dbs, e.DB)
		}
		byDB[e.DB] = append(byDB[e.DB], i)
	}
	slices.Sort(dbs)
	for _, db := range dbs {
		idx := byDB[db]
		expires := 0
		for _, i := range idx {
			if f.Entries[i].ExpireAtMs != 0 {
				expires++
			}
		}
		p = appendLength(append(p, opSelectDB), uint64(db))
		p = appendLength(appendLength(append(p, opResizeDB), uint64(len(idx))), uint64(expires))
		for _, i := range idx {
			e := &f.Entries[i]
			if e.ExpireAtMs != 0 {
				p = binary.LittleEndian.AppendUint64(append(p, opExpireTimeM), uint64(e.ExpireAtMs))
			}
			if e.Idle >= 0 && e.Freq < 0 {
				p = appendLength(append(p, opIdle), uint64(e.Idle))
			}
			if e.Freq >= 0 {
				p = append(p, opFreq, byte(e.Freq))
			}
			obj, err := AppendObject(nil, &e.Value)
			if err != nil {
				return err
			}
			p = append(p, obj[0])
			p = appendString(p, e.Key) // Redis integer-encodes keys too
			p = append(p, obj[1:]...)
		}
	}
	p = append(p, opEOF)
	p = binary.LittleEndian.AppendUint64(p, CRC64(0, p))
	_, err := w.Write(p)
	return err
}

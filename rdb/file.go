package rdb

import (
	"encoding/binary"
	"io"
	"slices"
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

// ReadFile decodes a whole RDB file of version 1 to Version (see Reader
// for what it accepts and its errors) and holds every key in memory.
func ReadFile(r io.Reader) (*File, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	f := &File{Version: rd.Version()}
	for {
		it, err := rd.Next()
		switch {
		case err == io.EOF:
			return f, nil
		case err != nil:
			return nil, err
		case it.Aux != nil:
			f.Aux = append(f.Aux, *it.Aux)
		case it.Function != nil:
			f.Functions = append(f.Functions, it.Function)
		default:
			f.Entries = append(f.Entries, *it.Entry)
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
			var err error
			if p, err = appendEntry(p, &f.Entries[i]); err != nil {
				return err
			}
		}
	}
	p = append(p, opEOF)
	p = binary.LittleEndian.AppendUint64(p, CRC64(0, p))
	_, err := w.Write(p)
	return err
}

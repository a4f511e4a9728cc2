package rdb

import (
	"encoding/binary"
	"math"
	"slices"
)

// Kind is the data type of a Value.
type Kind uint8

// The kinds of Value.
const (
	KindString  Kind = iota + 1
	KindList         // Items in order
	KindSet          // Items, distinct members
	KindHash         // Items: field, value, field, value, ...
	KindZSet         // Items members with Scores[i] each
	KindRoaring      // Str: a roaring bitmap's portable serialization (Persimmon's own)
	KindStream       // Stream
)

// Object type ids as they appear in a payload or file. Durable: never
// renumber (they are Redis's, but for TypeRoaring).
const (
	TypeString         = 0
	TypeList           = 1
	TypeSet            = 2
	TypeZSet           = 3
	TypeHash           = 4
	TypeZSet2          = 5
	TypeModule         = 6
	TypeModule2        = 7
	TypeHashZipmap     = 9
	TypeListZiplist    = 10
	TypeSetIntset      = 11
	TypeZSetZiplist    = 12
	TypeHashZiplist    = 13
	TypeListQuicklist  = 14
	TypeStream         = 15
	TypeHashListpack   = 16
	TypeZSetListpack   = 17
	TypeListQuicklist2 = 18
	TypeStream2        = 19
	// TypeRoaring is Persimmon's id for a TR.* roaring bitmap, outside the
	// range Redis 7.x uses for object types and below its opcodes (245+).
	TypeRoaring = 80
)

// Redis 7.0's default conversion limits, which decide the encoding written.
const (
	setMaxIntsetEntries   = 512
	hashMaxListpackEntry  = 512
	hashMaxListpackValue  = 64
	zsetMaxListpackEntry  = 128
	zsetMaxListpackValue  = 64
	quicklistNodeMaxBytes = 8192 // list-max-listpack-size -2
	quicklistOverhead     = 8    // quicklist.c's SIZE_ESTIMATE_OVERHEAD
	quicklistPacked       = 2
	quicklistPlain        = 1
)

// Value is one key's data. Items and Str may alias the decoded bytes.
type Value struct {
	Kind   Kind
	Str    []byte    // KindString, KindRoaring
	Items  [][]byte  // list elements, set members, hash field/value pairs, zset members
	Scores []float64 // KindZSet: Scores[i] is the score of Items[i]
	Stream *Stream   // KindStream
	// Big asks the encoder for the plain encoding (hashtable, skiplist)
	// even when the value is small enough for a compact one, as Redis
	// keeps a converted object converted. Decoding sets it for plain types.
	Big bool
}

// AppendObject appends v's type byte and body, in the encoding Redis 7.0
// would write (see the package doc).
func AppendObject(dst []byte, v *Value) ([]byte, error) {
	switch v.Kind {
	case KindString:
		return appendString(append(dst, TypeString), v.Str), nil
	case KindRoaring:
		return appendString(append(dst, TypeRoaring), v.Str), nil
	case KindStream:
		if v.Stream == nil {
			return nil, errf("stream value without a stream")
		}
		return appendStream(append(dst, TypeStream2), v.Stream)
	case KindList:
		return appendQuicklist(append(dst, TypeListQuicklist2), v.Items), nil
	case KindSet:
		if !v.Big && len(v.Items) <= setMaxIntsetEntries {
			ints := make([]int64, 0, len(v.Items))
			for _, m := range v.Items {
				n, ok := strictInt(m)
				if !ok {
					break
				}
				ints = append(ints, n)
			}
			if len(ints) == len(v.Items) && len(ints) > 0 {
				return appendString(append(dst, TypeSetIntset), intsetEncode(ints)), nil
			}
		}
		dst = appendLength(append(dst, TypeSet), uint64(len(v.Items)))
		for _, m := range v.Items {
			dst = appendString(dst, m)
		}
		return dst, nil
	case KindHash:
		if len(v.Items)%2 != 0 {
			return nil, errf("hash with an odd number of items")
		}
		if !v.Big && len(v.Items)/2 <= hashMaxListpackEntry && maxLen(v.Items) <= hashMaxListpackValue {
			return appendString(append(dst, TypeHashListpack), lpEncode(v.Items)), nil
		}
		dst = appendLength(append(dst, TypeHash), uint64(len(v.Items)/2))
		for _, s := range v.Items {
			dst = appendString(dst, s)
		}
		return dst, nil
	case KindZSet:
		if len(v.Scores) != len(v.Items) {
			return nil, errf("sorted set with %d members and %d scores", len(v.Items), len(v.Scores))
		}
		order := zsetOrder(v)
		if !v.Big && len(v.Items) <= zsetMaxListpackEntry && maxLen(v.Items) <= zsetMaxListpackValue {
			b := newLP()
			for _, i := range order {
				b.add(v.Items[i])
				b.add(formatScore(v.Scores[i]))
			}
			return appendString(append(dst, TypeZSetListpack), b.bytes()), nil
		}
		// Redis writes a skiplist from the highest score down.
		dst = appendLength(append(dst, TypeZSet2), uint64(len(v.Items)))
		for k := len(order) - 1; k >= 0; k-- {
			i := order[k]
			dst = appendString(dst, v.Items[i])
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Scores[i]))
		}
		return dst, nil
	}
	return nil, errf("unknown kind %d", v.Kind)
}

// zsetOrder is the index order of v's members by (score, member).
func zsetOrder(v *Value) []int {
	order := make([]int, len(v.Items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := v.Scores[a], v.Scores[b]
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return slices.Compare(v.Items[a], v.Items[b])
	})
	return order
}

func maxLen(items [][]byte) int {
	m := 0
	for _, s := range items {
		m = max(m, len(s))
	}
	return m
}

// appendQuicklist writes a type-18 body: the node count, then per node its
// container (packed) and its listpack, cutting nodes where quicklist.c's
// _quicklistNodeAllowInsert would with fill -2.
func appendQuicklist(dst []byte, elems [][]byte) []byte {
	var nodes [][]byte
	var cur *lpBuilder
	for _, e := range elems {
		if cur != nil && cur.size()+len(e)+quicklistOverhead > quicklistNodeMaxBytes {
			nodes = append(nodes, cur.bytes())
			cur = nil
		}
		if cur == nil {
			cur = newLP()
		}
		cur.add(e)
	}
	if cur != nil {
		nodes = append(nodes, cur.bytes())
	}
	dst = appendLength(dst, uint64(len(nodes)))
	for _, n := range nodes {
		dst = appendLength(dst, quicklistPacked)
		dst = appendString(dst, n)
	}
	return dst
}

// decodeObject reads the body of an object of type typ.
func (d *decoder) object(typ byte) (Value, error) {
	switch typ {
	case TypeString:
		s, err := d.string()
		return Value{Kind: KindString, Str: s}, err
	case TypeRoaring:
		s, err := d.string()
		return Value{Kind: KindRoaring, Str: s}, err
	case TypeList, TypeSet, TypeHash:
		n, err := d.count()
		if err != nil {
			return Value{}, err
		}
		per := 1
		if typ == TypeHash {
			per = 2
		}
		items := make([][]byte, 0, min(n*per, 1<<16))
		for range n * per {
			s, err := d.string()
			if err != nil {
				return Value{}, err
			}
			items = append(items, s)
		}
		kind := map[byte]Kind{TypeList: KindList, TypeSet: KindSet, TypeHash: KindHash}[typ]
		return finish(Value{Kind: kind, Items: items, Big: typ != TypeList})
	case TypeZSet, TypeZSet2:
		n, err := d.count()
		if err != nil {
			return Value{}, err
		}
		v := Value{Kind: KindZSet, Big: true, Items: make([][]byte, 0, min(n, 1<<16)), Scores: make([]float64, 0, min(n, 1<<16))}
		for range n {
			m, err := d.string()
			if err != nil {
				return Value{}, err
			}
			var f float64
			if typ == TypeZSet {
				f, err = d.asciiDouble()
			} else {
				f, err = d.binaryDouble()
			}
			if err != nil {
				return Value{}, err
			}
			if math.IsNaN(f) {
				return Value{}, errf("NaN score")
			}
			v.Items, v.Scores = append(v.Items, m), append(v.Scores, f)
		}
		return finish(v)
	case TypeListQuicklist, TypeListQuicklist2:
		n, err := d.count()
		if err != nil {
			return Value{}, err
		}
		v := Value{Kind: KindList}
		for range n {
			container := uint64(quicklistPacked)
			if typ == TypeListQuicklist2 {
				c, enc, err := d.length()
				if err != nil {
					return Value{}, err
				}
				if enc || (c != quicklistPacked && c != quicklistPlain) {
					return Value{}, errf("quicklist container %d", c)
				}
				container = c
			}
			blob, err := d.string()
			if err != nil {
				return Value{}, err
			}
			if container == quicklistPlain {
				v.Items = append(v.Items, blob)
				continue
			}
			var elems [][]byte
			if typ == TypeListQuicklist {
				elems, err = ziplistDecode(blob)
			} else {
				elems, err = lpDecode(blob)
			}
			if err != nil {
				return Value{}, err
			}
			if len(elems) == 0 {
				return Value{}, errf("empty quicklist node")
			}
			v.Items = append(v.Items, elems...)
		}
		return finish(v)
	case TypeSetIntset, TypeListZiplist, TypeHashZiplist, TypeZSetZiplist, TypeHashListpack, TypeZSetListpack, TypeHashZipmap:
		blob, err := d.string()
		if err != nil {
			return Value{}, err
		}
		var items [][]byte
		switch typ {
		case TypeSetIntset:
			items, err = intsetDecode(blob)
		case TypeHashZipmap:
			items, err = zipmapDecode(blob)
		case TypeHashListpack, TypeZSetListpack:
			items, err = lpDecode(blob)
		default:
			items, err = ziplistDecode(blob)
		}
		if err != nil {
			return Value{}, err
		}
		switch typ {
		case TypeSetIntset:
			return finish(Value{Kind: KindSet, Items: items})
		case TypeListZiplist:
			return finish(Value{Kind: KindList, Items: items})
		case TypeHashZiplist, TypeHashListpack, TypeHashZipmap:
			if len(items)%2 != 0 {
				return Value{}, errf("hash container with an odd number of entries")
			}
			return finish(Value{Kind: KindHash, Items: items})
		}
		if len(items)%2 != 0 {
			return Value{}, errf("sorted set container with an odd number of entries")
		}
		v := Value{Kind: KindZSet}
		for i := 0; i < len(items); i += 2 {
			f, err := parseScore(items[i+1])
			if err != nil {
				return Value{}, err
			}
			if math.IsNaN(f) {
				return Value{}, errf("NaN score")
			}
			v.Items, v.Scores = append(v.Items, items[i]), append(v.Scores, f)
		}
		return finish(v)
	case TypeStream, TypeStream2:
		return d.stream(typ)
	case TypeModule, TypeModule2:
		return Value{}, ErrUnsupported
	}
	return Value{}, errf("unknown object type %d", typ)
}

// errEmpty is the error for a collection with no members, which Redis's
// RESTORE refuses and its loader skips.
var errEmpty = errf("empty collection")

// finish checks what Redis checks on load: no empty collection, no
// duplicate set member, hash field or sorted set member.
func finish(v Value) (Value, error) {
	if len(v.Items) == 0 {
		return Value{}, errEmpty
	}
	step := 1
	if v.Kind == KindHash {
		step = 2
	}
	if v.Kind != KindList {
		seen := make(map[string]struct{}, len(v.Items)/step)
		for i := 0; i < len(v.Items); i += step {
			if _, dup := seen[string(v.Items[i])]; dup {
				return Value{}, errf("duplicate member %q", v.Items[i])
			}
			seen[string(v.Items[i])] = struct{}{}
		}
	}
	return v, nil
}

// DecodeObject reads one object (type byte and body) from the front of p
// and returns it with the number of bytes it took. Errors wrap ErrBadFormat
// or ErrUnsupported.
func DecodeObject(p []byte) (Value, int, error) {
	d := &decoder{p: p}
	t, err := d.byte()
	if err != nil {
		return Value{}, 0, err
	}
	v, err := d.object(t)
	return v, d.i, err
}

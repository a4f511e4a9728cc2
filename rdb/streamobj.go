package rdb

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// Streams (object types 15 and 19). A stream is written as Redis 7.0
// writes RDB_TYPE_STREAM_LISTPACKS_2 (19):
//
//	nodes n | n × ( master ID: a 16-byte string, ms and seq big-endian |
//	                listpack string ) |
//	length | last ms | last seq | first ms | first seq |
//	max-deleted ms | max-deleted seq | entries-added |
//	groups g | g × ( name | last ms | last seq | entries-read |
//	                 PEL p | p × ( ID 16 bytes | delivery time ms u64 LE |
//	                               delivery count ) |
//	                 consumers c | c × ( name | seen time ms u64 LE |
//	                                     PEL q | q × ID 16 bytes ) )
//
// every number a length encoding unless said otherwise; entries-read -1
// (unknown) is the length 2^64-1. A node's listpack is Redis's:
//
//	count | deleted | master field count | master fields... | 0 |
//	entry* where entry = flags | ms - master ms | seq - master seq |
//	      [ field count | (field value)... ] (flags without SAMEFIELDS) |
//	      [ values... ]                        (SAMEFIELDS: the master's fields) |
//	      lp-count (the entry's elements but itself)
//
// Type 15 (Redis 5 to 6.2) lacks first ID, max-deleted ID, entries-added
// and entries-read; they are derived as Redis 7.0's loader derives them.
//
// Written listpacks hold the node's live entries only, with a deleted
// count of 0 (Persimmon does not keep a deleted entry's fields), so they
// pass Redis's deep sanitization; Redis decides on those counts when it
// opens a new node, so after a round trip a node that had deleted entries
// takes more appends before Redis closes it.

// Stream entry flags in a node's listpack (t_stream.c).
const (
	streamItemDeleted    = 1
	streamItemSameFields = 2
)

// StreamID is a stream entry ID.
type StreamID struct{ Ms, Seq uint64 }

func (a StreamID) less(b StreamID) bool { return a.Ms < b.Ms || a.Ms == b.Ms && a.Seq < b.Seq }

// Stream is a stream value (Value.Stream for KindStream).
type Stream struct {
	Nodes        []StreamNode // in ID order
	Length       uint64       // live entries
	LastID       StreamID     // last-generated-id
	FirstID      StreamID     // recorded-first-entry-id
	MaxDeletedID StreamID
	EntriesAdded uint64
	Groups       []StreamGroup // in name order (byte-wise)
}

// StreamNode is one of Redis's listpack nodes: its master ID (the ID of
// the first entry ever added to it), how many of its entries are deleted
// (read from a payload; written as 0), and its live entries.
type StreamNode struct {
	Master  StreamID
	Deleted int
	Entries []StreamEntry
}

// StreamEntry is one entry: its ID and field, value, field, value, ...
type StreamEntry struct {
	ID     StreamID
	Fields [][]byte
}

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64        // -1: unknown
	PEL         []StreamNACK // in ID order
	Consumers   []StreamConsumer
}

// StreamNACK is a pending entry of a group.
type StreamNACK struct {
	ID            StreamID
	DeliveryTime  int64 // Unix ms
	DeliveryCount uint64
	Consumer      int // index in the group's Consumers
}

// StreamConsumer is a consumer of a group (its pending entries are the
// group's NACKs naming it).
type StreamConsumer struct {
	Name     []byte
	SeenTime int64 // Unix ms
}

func appendStreamID(dst []byte, id StreamID) []byte {
	dst = binary.BigEndian.AppendUint64(dst, id.Ms)
	return binary.BigEndian.AppendUint64(dst, id.Seq)
}

func (b *lpBuilder) addInt(v int64) {
	start := len(b.buf)
	b.buf = appendLPInt(b.buf, v)
	b.buf = appendBacklen(b.buf, len(b.buf)-start)
	b.n++
}

// streamNodeListpack builds a node's listpack as streamAppendItem would
// by appending its entries in order.
func streamNodeListpack(nd *StreamNode) []byte {
	b := newLP()
	master := nd.Entries[0].Fields
	b.addInt(int64(len(nd.Entries)))
	b.addInt(0)
	b.addInt(int64(len(master) / 2))
	for i := 0; i < len(master); i += 2 {
		b.add(master[i])
	}
	b.addInt(0)
	for _, e := range nd.Entries {
		same := len(e.Fields) == len(master)
		for i := 0; same && i < len(master); i += 2 {
			same = bytes.Equal(e.Fields[i], master[i])
		}
		nf := int64(len(e.Fields) / 2)
		if same {
			b.addInt(streamItemSameFields)
		} else {
			b.addInt(0)
		}
		b.addInt(int64(e.ID.Ms - nd.Master.Ms))
		b.addInt(int64(e.ID.Seq - nd.Master.Seq))
		if same {
			for i := 1; i < len(e.Fields); i += 2 {
				b.add(e.Fields[i])
			}
			b.addInt(nf + 3)
			continue
		}
		b.addInt(nf)
		for _, f := range e.Fields {
			b.add(f)
		}
		b.addInt(2*nf + 4)
	}
	return b.bytes()
}

// appendStream writes a type-19 body.
func appendStream(dst []byte, s *Stream) ([]byte, error) {
	nodes := 0
	for i := range s.Nodes {
		if len(s.Nodes[i].Entries) > 0 {
			nodes++
		}
	}
	dst = appendLength(dst, uint64(nodes))
	for i := range s.Nodes {
		nd := &s.Nodes[i]
		if len(nd.Entries) == 0 {
			continue
		}
		for _, e := range nd.Entries {
			if len(e.Fields)%2 != 0 || len(e.Fields) == 0 {
				return nil, errf("stream entry %d-%d with %d fields and values", e.ID.Ms, e.ID.Seq, len(e.Fields))
			}
		}
		dst = appendString(dst, appendStreamID(nil, nd.Master))
		dst = appendString(dst, streamNodeListpack(nd))
	}
	for _, n := range []uint64{s.Length, s.LastID.Ms, s.LastID.Seq, s.FirstID.Ms, s.FirstID.Seq,
		s.MaxDeletedID.Ms, s.MaxDeletedID.Seq, s.EntriesAdded, uint64(len(s.Groups))} {
		dst = appendLength(dst, n)
	}
	for _, g := range s.Groups {
		dst = appendString(dst, g.Name)
		dst = appendLength(dst, g.LastID.Ms)
		dst = appendLength(dst, g.LastID.Seq)
		dst = appendLength(dst, uint64(g.EntriesRead))
		dst = appendLength(dst, uint64(len(g.PEL)))
		for _, p := range g.PEL {
			if p.Consumer < 0 || p.Consumer >= len(g.Consumers) {
				return nil, errf("pending entry %d-%d of no consumer", p.ID.Ms, p.ID.Seq)
			}
			dst = appendStreamID(dst, p.ID)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(p.DeliveryTime))
			dst = appendLength(dst, p.DeliveryCount)
		}
		dst = appendLength(dst, uint64(len(g.Consumers)))
		for ci, c := range g.Consumers {
			dst = appendString(dst, c.Name)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(c.SeenTime))
			n := 0
			for _, p := range g.PEL {
				if p.Consumer == ci {
					n++
				}
			}
			dst = appendLength(dst, uint64(n))
			for _, p := range g.PEL {
				if p.Consumer == ci {
					dst = appendStreamID(dst, p.ID)
				}
			}
		}
	}
	return dst, nil
}

func (d *decoder) rawStreamID() (StreamID, error) {
	b, err := d.bytes(16)
	if err != nil {
		return StreamID{}, err
	}
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}, nil
}

func (d *decoder) plainLength() (uint64, error) {
	n, enc, err := d.length()
	if err == nil && enc {
		err = errf("encoded length in a stream")
	}
	return n, err
}

func (d *decoder) lengths(out ...*uint64) error {
	for _, p := range out {
		n, err := d.plainLength()
		if err != nil {
			return err
		}
		*p = n
	}
	return nil
}

func (d *decoder) msTime() (int64, error) {
	b, err := d.bytes(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// lpInt reads element i of a decoded listpack as an integer.
func lpInt(elems [][]byte, i int) (int64, error) {
	if i >= len(elems) {
		return 0, errf("stream listpack ends early")
	}
	v, ok := strictInt(elems[i])
	if !ok {
		return 0, errf("stream listpack: %q is not an integer", elems[i])
	}
	return v, nil
}

// decodeStreamNode reads one node's listpack, checking what Redis's deep
// sanitization checks and that its counts agree with its entries.
func decodeStreamNode(master StreamID, lp []byte) (StreamNode, error) {
	elems, err := lpDecode(lp)
	if err != nil {
		return StreamNode{}, err
	}
	nd := StreamNode{Master: master}
	count, err := lpInt(elems, 0)
	if err != nil {
		return nd, err
	}
	deleted, err := lpInt(elems, 1)
	if err != nil {
		return nd, err
	}
	nmf, err := lpInt(elems, 2)
	if err != nil {
		return nd, err
	}
	if count < 0 || deleted < 0 || nmf < 0 || nmf > int64(len(elems)) {
		return nd, errf("stream listpack master entry")
	}
	mfields := elems[3 : 3+nmf]
	i := 3 + int(nmf)
	if z, err := lpInt(elems, i); err != nil || z != 0 {
		return nd, errf("stream listpack master terminator")
	}
	i++
	var valid, dels int64
	for i < len(elems) {
		flags, err := lpInt(elems, i)
		if err != nil {
			return nd, err
		}
		msd, err := lpInt(elems, i+1)
		if err != nil {
			return nd, err
		}
		seqd, err := lpInt(elems, i+2)
		if err != nil {
			return nd, err
		}
		i += 3
		e := StreamEntry{ID: StreamID{master.Ms + uint64(msd), master.Seq + uint64(seqd)}}
		var nf, want int64
		if flags&streamItemSameFields != 0 {
			nf, want = nmf, nmf+3
			if int64(len(elems)-i) < nf {
				return nd, errf("stream entry past the listpack")
			}
			e.Fields = make([][]byte, 0, 2*nf)
			for k := int64(0); k < nf; k++ {
				e.Fields = append(e.Fields, mfields[k], elems[i])
				i++
			}
		} else {
			if nf, err = lpInt(elems, i); err != nil {
				return nd, err
			}
			i++
			if nf < 0 || int64(len(elems)-i) < 2*nf {
				return nd, errf("stream entry past the listpack")
			}
			want = 2*nf + 4
			e.Fields = elems[i : i+2*int(nf) : i+2*int(nf)]
			i += 2 * int(nf)
		}
		lpc, err := lpInt(elems, i)
		if err != nil {
			return nd, err
		}
		if lpc != want || nf == 0 {
			return nd, errf("stream entry lp-count %d, want %d", lpc, want)
		}
		i++
		if n := len(nd.Entries); n > 0 && !nd.Entries[n-1].ID.less(e.ID) || e.ID.less(master) {
			return nd, errf("stream entry IDs out of order")
		}
		if flags&streamItemDeleted != 0 {
			dels++
			continue
		}
		valid++
		nd.Entries = append(nd.Entries, e)
	}
	if valid != count || dels != deleted {
		return nd, errf("stream listpack counts %d+%d, holds %d+%d", count, deleted, valid, dels)
	}
	nd.Deleted = int(deleted)
	return nd, nil
}

// stream reads a type-15 or type-19 body.
func (d *decoder) stream(typ byte) (Value, error) {
	n, err := d.count()
	if err != nil {
		return Value{}, err
	}
	s := &Stream{}
	var last StreamID
	var any bool
	var length uint64
	for range n {
		key, err := d.string()
		if err != nil {
			return Value{}, err
		}
		if len(key) != 16 {
			return Value{}, errf("stream node key of %d bytes", len(key))
		}
		master := StreamID{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
		lp, err := d.string()
		if err != nil {
			return Value{}, err
		}
		nd, err := decodeStreamNode(master, lp)
		if err != nil {
			return Value{}, err
		}
		if len(nd.Entries) == 0 {
			continue // Redis never writes one; nothing to keep
		}
		if any && !last.less(nd.Entries[0].ID) {
			return Value{}, errf("stream nodes out of order")
		}
		last, any = nd.Entries[len(nd.Entries)-1].ID, true
		length += uint64(len(nd.Entries))
		s.Nodes = append(s.Nodes, nd)
	}
	if err := d.lengths(&s.Length, &s.LastID.Ms, &s.LastID.Seq); err != nil {
		return Value{}, err
	}
	if typ == TypeStream2 {
		if err := d.lengths(&s.FirstID.Ms, &s.FirstID.Seq, &s.MaxDeletedID.Ms, &s.MaxDeletedID.Seq, &s.EntriesAdded); err != nil {
			return Value{}, err
		}
	} else {
		s.EntriesAdded = s.Length
		s.FirstID = StreamID{^uint64(0), ^uint64(0)} // streamGetEdgeID of an empty stream
		if len(s.Nodes) > 0 {
			s.FirstID = s.Nodes[0].Entries[0].ID
		}
	}
	if s.Length != length || any && s.LastID.less(last) {
		return Value{}, errf("stream of %d entries up to %d-%d says %d up to %d-%d", length, last.Ms, last.Seq, s.Length, s.LastID.Ms, s.LastID.Seq)
	}
	ng, err := d.count()
	if err != nil {
		return Value{}, err
	}
	for range ng {
		var g StreamGroup
		if g.Name, err = d.string(); err != nil {
			return Value{}, err
		}
		if err := d.lengths(&g.LastID.Ms, &g.LastID.Seq); err != nil {
			return Value{}, err
		}
		if typ == TypeStream2 {
			var er uint64
			if err := d.lengths(&er); err != nil {
				return Value{}, err
			}
			g.EntriesRead = int64(er)
		} else {
			g.EntriesRead = s.distance(g.LastID)
		}
		if slices.ContainsFunc(s.Groups, func(o StreamGroup) bool { return bytes.Equal(o.Name, g.Name) }) {
			return Value{}, errf("duplicate consumer group %q", g.Name)
		}
		np, err := d.count()
		if err != nil {
			return Value{}, err
		}
		for range np {
			var p StreamNACK
			if p.ID, err = d.rawStreamID(); err != nil {
				return Value{}, err
			}
			if p.DeliveryTime, err = d.msTime(); err != nil {
				return Value{}, err
			}
			if p.DeliveryCount, err = d.plainLength(); err != nil {
				return Value{}, err
			}
			if k := len(g.PEL); k > 0 && !g.PEL[k-1].ID.less(p.ID) {
				return Value{}, errf("group PEL out of order")
			}
			p.Consumer = -1
			g.PEL = append(g.PEL, p)
		}
		nc, err := d.count()
		if err != nil {
			return Value{}, err
		}
		for ci := range nc {
			var c StreamConsumer
			if c.Name, err = d.string(); err != nil {
				return Value{}, err
			}
			if slices.ContainsFunc(g.Consumers, func(o StreamConsumer) bool { return bytes.Equal(o.Name, c.Name) }) {
				return Value{}, errf("duplicate consumer %q", c.Name)
			}
			if c.SeenTime, err = d.msTime(); err != nil {
				return Value{}, err
			}
			nq, err := d.count()
			if err != nil {
				return Value{}, err
			}
			for range nq {
				id, err := d.rawStreamID()
				if err != nil {
					return Value{}, err
				}
				k, found := slices.BinarySearchFunc(g.PEL, id, func(p StreamNACK, id StreamID) int {
					switch {
					case p.ID.less(id):
						return -1
					case id.less(p.ID):
						return 1
					}
					return 0
				})
				if !found || g.PEL[k].Consumer != -1 {
					return Value{}, errf("consumer PEL entry %d-%d not in the group's PEL once", id.Ms, id.Seq)
				}
				g.PEL[k].Consumer = ci
			}
			g.Consumers = append(g.Consumers, c)
		}
		for _, p := range g.PEL {
			if p.Consumer < 0 {
				return Value{}, errf("group PEL entry %d-%d without a consumer", p.ID.Ms, p.ID.Seq)
			}
		}
		s.Groups = append(s.Groups, g)
	}
	slices.SortFunc(s.Groups, func(a, b StreamGroup) int { return bytes.Compare(a.Name, b.Name) })
	return Value{Kind: KindStream, Stream: s}, nil
}

// distance is Redis's streamEstimateDistanceFromFirstEverEntry for a
// stream being loaded: the entries-read counter of a group at id, or -1.
func (s *Stream) distance(id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.Length == 0 && !s.LastID.less(id) {
		return int64(s.EntriesAdded)
	}
	switch {
	case id == s.LastID:
		return int64(s.EntriesAdded)
	case s.LastID.less(id):
		return -1
	}
	if s.MaxDeletedID == (StreamID{}) || s.MaxDeletedID.less(s.FirstID) {
		switch {
		case id.less(s.FirstID):
			return int64(s.EntriesAdded - s.Length)
		case id == s.FirstID:
			return int64(s.EntriesAdded - s.Length + 1)
		}
	}
	return -1
}

// Clone is a deep copy of s: no byte or slice of it is shared with s (a
// value read under a lock, kept after it).
func (s *Stream) Clone() *Stream {
	c := *s
	c.Nodes = make([]StreamNode, len(s.Nodes))
	for i, nd := range s.Nodes {
		c.Nodes[i] = StreamNode{Master: nd.Master, Deleted: nd.Deleted, Entries: make([]StreamEntry, len(nd.Entries))}
		for j, e := range nd.Entries {
			f := make([][]byte, len(e.Fields))
			for k, x := range e.Fields {
				f[k] = bytes.Clone(x)
			}
			c.Nodes[i].Entries[j] = StreamEntry{ID: e.ID, Fields: f}
		}
	}
	c.Groups = make([]StreamGroup, len(s.Groups))
	for i, g := range s.Groups {
		g.Name = bytes.Clone(g.Name)
		g.PEL = slices.Clone(g.PEL)
		cs := make([]StreamConsumer, len(g.Consumers))
		for j, x := range g.Consumers {
			cs[j] = StreamConsumer{Name: bytes.Clone(x.Name), SeenTime: x.SeenTime}
		}
		g.Consumers = cs
		c.Groups[i] = g
	}
	return &c
}

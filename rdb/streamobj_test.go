package rdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
	"testing"
)

// sampleStream is a stream of three nodes (same and different fields,
// integer-looking values, a large ms gap) with two groups, pending
// entries spread over consumers, and an unknown entries-read.
func sampleStream() *Stream {
	s := &Stream{}
	id := StreamID{1700000000000, 0}
	for n := range 3 {
		nd := StreamNode{Master: id, Deleted: 0}
		for i := range 5 + n {
			f := [][]byte{[]byte("name"), []byte(fmt.Sprintf("v%d-%d", n, i)), []byte("n"), []byte(strconv.Itoa(i*1000 - 7))}
			if i == 3 {
				f = [][]byte{[]byte("other"), bytes.Repeat([]byte("x"), 100+n)}
			}
			nd.Entries = append(nd.Entries, StreamEntry{ID: id, Fields: f})
			id.Seq++
			if i == 2 {
				id.Ms += 1 << 40
				id.Seq = 0
			}
		}
		s.Nodes = append(s.Nodes, nd)
		s.Length += uint64(len(nd.Entries))
	}
	last := s.Nodes[2].Entries[len(s.Nodes[2].Entries)-1].ID
	s.LastID = StreamID{last.Ms, last.Seq + 5}
	s.FirstID = s.Nodes[0].Entries[0].ID
	s.MaxDeletedID = StreamID{last.Ms, last.Seq + 2}
	s.EntriesAdded = s.Length + 9
	s.Groups = []StreamGroup{
		{Name: []byte("g1"), LastID: s.Nodes[1].Entries[2].ID, EntriesRead: 9,
			PEL: []StreamNACK{
				{ID: s.Nodes[0].Entries[0].ID, DeliveryTime: 1700000000123, DeliveryCount: 3, Consumer: 1},
				{ID: s.Nodes[0].Entries[4].ID, DeliveryTime: 1700000000456, DeliveryCount: 1, Consumer: 0},
				{ID: s.Nodes[1].Entries[2].ID, DeliveryTime: 1700000000789, DeliveryCount: 1, Consumer: 1},
			},
			Consumers: []StreamConsumer{{Name: []byte("alice"), SeenTime: 1700000000999}, {Name: []byte("bob"), SeenTime: 1700000000001}, {Name: []byte("idle"), SeenTime: 5}},
		},
		{Name: []byte("g2"), LastID: StreamID{}, EntriesRead: -1},
	}
	return s
}

// TestStreamValueRoundTrip: Dump then Restore gives the same stream, and
// the payload is type 19.
func TestStreamValueRoundTrip(t *testing.T) {
	v := Value{Kind: KindStream, Stream: sampleStream()}
	p, err := Dump(&v)
	if err != nil {
		t.Fatal(err)
	}
	if p[0] != TypeStream2 {
		t.Fatalf("type byte %d", p[0])
	}
	got, err := Restore(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != KindStream || !reflect.DeepEqual(got.Stream, v.Stream) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got.Stream, v.Stream)
	}
	// An empty stream (every entry deleted) is a stream, not an empty
	// collection.
	e := Value{Kind: KindStream, Stream: &Stream{LastID: StreamID{5, 1}, MaxDeletedID: StreamID{5, 1}, EntriesAdded: 2}}
	p, _ = Dump(&e)
	if got, err := Restore(p); err != nil || !reflect.DeepEqual(got.Stream, e.Stream) {
		t.Fatalf("empty stream: %v %+v", err, got.Stream)
	}
}

// TestStreamListpackLayout checks one node's listpack element by element
// against the layout of Redis's streamAppendItem.
func TestStreamListpackLayout(t *testing.T) {
	nd := StreamNode{Master: StreamID{100, 5}, Entries: []StreamEntry{
		{ID: StreamID{100, 5}, Fields: [][]byte{[]byte("a"), []byte("1")}},
		{ID: StreamID{102, 0}, Fields: [][]byte{[]byte("a"), []byte("x")}},
		{ID: StreamID{103, 7}, Fields: [][]byte{[]byte("b"), []byte("y"), []byte("c"), []byte("-5")}},
	}}
	elems, err := lpDecode(streamNodeListpack(&nd))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"3", "0", "1", "a", "0",
		"2", "0", "0", "1", "4",
		"2", "2", "-5", "x", "4",
		"0", "3", "2", "2", "b", "y", "c", "-5", "8"}
	var got []string
	for _, e := range elems {
		got = append(got, string(e))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("listpack elements\n got %q\nwant %q", got, want)
	}
}

// legacyPayload is the RESTORE payload of Redis's stream-cgroups test
// "Loading from legacy (Redis <= v6.2.x, rdb_ver < 10) persistence": a
// type-15 stream DUMPed by Redis 5 after XADD 1-0..6-0, XDEL 3-0, two
// groups, XREADGROUP of four entries by c11 in g1 and XTRIM MAXLEN 2.
const legacyPayload = "\x0F\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\xC3\x40\x4A\x40\x57\x16\x57\x00\x00\x00\x23\x00\x02\x01\x04\x01\x01\x01\x84\x64\x61\x74\x61\x05\x00\x01\x03\x01\x00\x20\x01\x03\x81\x61\x02\x04\x20\x0A\x00\x01\x40\x0A\x00\x62\x60\x0A\x00\x02\x40\x0A\x00\x63\x60\x0A\x40\x22\x01\x81\x64\x20\x0A\x40\x39\x20\x0A\x00\x65\x60\x0A\x00\x05\x40\x0A\x00\x66\x20\x0A\x00\xFF\x02\x06\x00\x02\x02\x67\x31\x05\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x01\x03\x63\x31\x31\x3E\xF7\x83\x43\x7A\x01\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x02\x67\x32\x00\x00\x00\x00\x09\x00\x3D\x52\xEF\x68\x67\x52\x1D\xFA"

// TestStreamLegacyPayload decodes the type-15 payload and derives what
// Redis 7.0's loader derives (the TCL test's expectations).
func TestStreamLegacyPayload(t *testing.T) {
	v, err := Restore([]byte(legacyPayload))
	if err != nil {
		t.Fatal(err)
	}
	s := v.Stream
	if v.Kind != KindStream || s.Length != 2 || s.EntriesAdded != 2 || s.MaxDeletedID != (StreamID{}) || s.LastID != (StreamID{6, 0}) {
		t.Fatalf("stream %+v", s)
	}
	if len(s.Nodes) != 1 || s.Nodes[0].Master != (StreamID{1, 0}) || s.Nodes[0].Deleted != 4 || len(s.Nodes[0].Entries) != 2 ||
		s.Nodes[0].Entries[0].ID != (StreamID{5, 0}) || string(s.Nodes[0].Entries[1].Fields[1]) != "f" || s.FirstID != (StreamID{5, 0}) {
		t.Fatalf("node %+v first %v", s.Nodes, s.FirstID)
	}
	if len(s.Groups) != 2 || string(s.Groups[0].Name) != "g1" || s.Groups[0].EntriesRead != 1 || s.Groups[1].EntriesRead != 0 {
		t.Fatalf("groups %+v", s.Groups)
	}
	g := s.Groups[0]
	if len(g.PEL) != 4 || len(g.Consumers) != 1 || string(g.Consumers[0].Name) != "c11" || g.PEL[3].ID != (StreamID{5, 0}) || g.PEL[3].Consumer != 0 {
		t.Fatalf("g1 %+v", g)
	}
}

// TestStreamCorruptNeverPanics cuts and flips a stream payload (checksum
// recomputed, so the body is parsed) and requires an error or a stream.
func TestStreamCorruptNeverPanics(t *testing.T) {
	v := Value{Kind: KindStream, Stream: sampleStream()}
	p, _ := Dump(&v)
	body := p[:len(p)-10]
	try := func(b []byte) {
		q := append(bytes.Clone(b), 10, 0)
		q = binary.LittleEndian.AppendUint64(q, CRC64(0, q))
		if got, err := Restore(q); err == nil && got.Stream == nil {
			t.Fatalf("no error and no stream")
		}
	}
	for cut := 0; cut < len(body); cut++ {
		try(body[:cut])
	}
	for i := 1; i < len(body); i++ {
		for _, bit := range []byte{1, 0x10, 0x80} {
			b := bytes.Clone(body)
			b[i] ^= bit
			try(b)
		}
	}
}

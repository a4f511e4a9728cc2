package keyspace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestBatchRoundTrip(t *testing.T) {
	var b Batch
	b.Set(3, []byte("key"), []byte("value"), 1234)
	b.Del(15, []byte("gone"))
	b.FlushDB(2)
	b.FlushAll()
	b.SwapDB(1, 9)
	p := b.buf
	var got []op
	for len(p) > 0 {
		o, err := decodeOp(p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o)
		p = p[o.size:]
	}
	if len(got) != 5 || b.Len() != 5 {
		t.Fatalf("%d ops", len(got))
	}
	if o := got[0]; o.kind != opSet || o.db != 3 || string(o.key) != "key" || string(o.val) != "value" || o.expireAt != 1234 {
		t.Fatalf("set: %+v", o)
	}
	if o := got[1]; o.kind != opDel || o.db != 15 || string(o.key) != "gone" {
		t.Fatalf("del: %+v", o)
	}
	if o := got[4]; o.kind != opSwapDB || o.db != 1 || o.db2 != 9 {
		t.Fatalf("swapdb: %+v", o)
	}
}

// TestBigEncodingOpRoundTrip: opBigEncoding is kind 60 with an empty body
// (durable); a body is refused at apply time, not at decode time.
func TestBigEncodingOpRoundTrip(t *testing.T) {
	var b Batch
	b.BigEncoding(7, []byte("key"))
	if want := []byte{60, 7, 3, 'k', 'e', 'y', 0}; !bytes.Equal(b.buf, want) {
		t.Fatalf("encoded % x, want % x", b.buf, want)
	}
	o, err := decodeOp(b.buf)
	if err != nil {
		t.Fatal(err)
	}
	if o.kind != opBigEncoding || o.db != 7 || string(o.key) != "key" || len(o.body) != 0 || o.size != len(b.buf) {
		t.Fatalf("decoded %+v", o)
	}
	o.body = []byte{1}
	if err := applyBigEncoding(nil, o, nil); !errors.Is(err, errBadOp) {
		t.Fatalf("a body was accepted: %v", err)
	}
}

func FuzzDecodeOp(f *testing.F) {
	var b Batch
	b.Set(0, []byte("k"), []byte("v"), 0)
	f.Add(append([]byte(nil), b.buf...))
	b.Reset()
	b.Del(1, []byte("key"))
	f.Add(append([]byte(nil), b.buf...))
	b.Reset()
	b.BigEncoding(2, []byte("h"))
	f.Add(append([]byte(nil), b.buf...))
	f.Add([]byte{opSwapDB, 0, 200})
	f.Add([]byte{opSet, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, p []byte) {
		o, err := decodeOp(p)
		if err != nil {
			return
		}
		if o.size > len(p) || o.db >= NumDBs {
			t.Fatalf("op %+v from %d bytes", o, len(p))
		}
		if o.kind == opSet {
			var r Batch
			r.Set(o.db, o.key, o.val, o.expireAt)
			if !bytes.Equal(r.buf, p[:o.size]) {
				t.Fatalf("set re-encodes differently")
			}
		}
	})
}

// decodeAll decodes a batch payload into its operations.
func decodeAll(t *testing.T, p []byte) []op {
	t.Helper()
	var out []op
	for len(p) > 0 {
		o, err := decodeOp(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
		p = p[o.size:]
	}
	return out
}

// TestItemOpsSplitBetweenGroups: many items make several operations of at
// most maxOpBody body bytes, a field stays with its value, an item larger
// than the bound gets an operation of its own, no items is one empty
// operation, and the items come back in order.
func TestItemOpsSplitBetweenGroups(t *testing.T) {
	var items [][]byte
	for i := 0; i < 50000; i++ {
		items = append(items, []byte(strings.Repeat("f", i%40)), []byte(strings.Repeat("v", i%97)))
	}
	items = append(items, []byte("big"), make([]byte, maxOpBody+1), []byte("after"), []byte("x"))
	var b Batch
	b.HSet(3, []byte("k"), items...)
	ops := decodeAll(t, b.buf)
	if len(ops) < 5 {
		t.Fatalf("%d ops", len(ops))
	}
	var got [][]byte
	for _, o := range ops {
		if o.kind != opHSet || o.db != 3 || string(o.key) != "k" {
			t.Fatalf("op %+v", o)
		}
		n := 0
		for i := 0; i < len(o.body); n++ {
			p, j, ok := readBytes(o.body, i)
			if !ok {
				t.Fatalf("body does not decode")
			}
			got = append(got, p)
			i = j
		}
		if n%2 != 0 {
			t.Fatalf("an op holds %d items: a pair was split", n)
		}
		if len(o.body) > maxOpBody && n != 2 {
			t.Fatalf("op body %d bytes with %d items", len(o.body), n)
		}
	}
	if len(got) != len(items) {
		t.Fatalf("%d items back, want %d", len(got), len(items))
	}
	for i := range items {
		if !bytes.Equal(got[i], items[i]) {
			t.Fatalf("item %d differs", i)
		}
	}
	b.Reset()
	b.SAdd(0, []byte("k"))
	if ops := decodeAll(t, b.buf); len(ops) != 1 || len(ops[0].body) != 0 {
		t.Fatalf("empty SAdd: %+v", ops)
	}
}

// TestSplitPayload: runs of whole operations of at most the limit; an
// operation over the limit is a run of its own.
func TestSplitPayload(t *testing.T) {
	var b Batch
	for i := 0; i < 100; i++ {
		b.Set(0, []byte(fmt.Sprint("k", i)), make([]byte, 100*(i%7)), 0)
	}
	b.Set(0, []byte("big"), make([]byte, 5000), 0)
	b.Del(0, []byte("last"))
	const limit = 2000
	ends, err := splitPayload(b.buf, limit)
	if err != nil {
		t.Fatal(err)
	}
	start, n := 0, 0
	for _, end := range ends {
		ops := decodeAll(t, b.buf[start:end])
		if end-start > limit && len(ops) != 1 {
			t.Fatalf("run [%d,%d) of %d ops over the limit", start, end, len(ops))
		}
		n += len(ops)
		start = end
	}
	if start != len(b.buf) || n != b.Len() {
		t.Fatalf("runs cover %d bytes and %d ops, want %d and %d", start, n, len(b.buf), b.Len())
	}
}

package keyspace

import (
	"bytes"
	"errors"
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

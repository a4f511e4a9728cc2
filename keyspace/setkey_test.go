package keyspace

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestSetKeyOfMatchesDecodeOp: the lookup probe's fast key read accepts
// exactly the set operations decodeOp accepts, with the same database and
// key, over well-formed operations, every truncation of them and random
// byte flips.
func TestSetKeyOfMatchesDecodeOp(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var b Batch
	b.Set(3, []byte("key"), bytes.Repeat([]byte("v"), 200), 0)
	b.Set(0, []byte{}, []byte{}, 1234)
	b.SetRef(15, []byte("ref"), 1<<40|4096, 99)
	b.SetRef(1, bytes.Repeat([]byte("k"), 300), 5, 0)
	b.Del(2, []byte("gone"))
	var ops [][]byte
	for p := b.buf; len(p) > 0; {
		o, err := decodeOp(p)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, p[:o.size])
		p = p[o.size:]
	}
	checked := 0
	try := func(p []byte) {
		checked++
		db, key, ok := setKeyOf(p)
		o, err := decodeOp(p)
		want := err == nil && (o.kind == opSet || o.kind == opSetRef)
		if ok != want || ok && (db != o.db || !bytes.Equal(key, o.key)) {
			t.Fatalf("% x: setKeyOf %d %q %v, decodeOp %+v %v", p, db, key, ok, o, err)
		}
	}
	for _, op := range ops {
		for n := 0; n <= len(op); n++ {
			try(op[:n])
		}
		for i := 0; i < 2000; i++ {
			p := bytes.Clone(op)
			for j := r.IntN(3); j >= 0; j-- {
				p[r.IntN(min(len(p), 12))] = byte(r.Uint32())
			}
			try(p)
		}
	}
	t.Logf("%d byte strings", checked)
}

package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"testing/iotest"
)

// TestStreamRoundTrip writes keys of several databases with Writer (one
// value larger than the read chunk, so a record spans refills) and reads
// them back with Reader from a source that returns one byte per Read.
func TestStreamRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var want []Entry
	for db := range 3 {
		for i, kind := range []Kind{KindString, KindList, KindSet, KindHash, KindZSet} {
			e := Entry{DB: db * 3, Key: fmt.Appendf(nil, "k%d:%d", db, i), Value: sample(kind, 40, i%2 == 1, rng), Idle: -1, Freq: -1}
			if i == 2 {
				e.ExpireAtMs = 4102444800000 + int64(db)
			}
			want = append(want, e)
		}
	}
	big := make([]byte, 3*readChunk)
	for i := range big {
		big[i] = byte(rng.Uint32()) // incompressible: stays one plain string
	}
	want = append(want, Entry{DB: 6, Key: []byte("big"), Value: Value{Kind: KindString, Str: big}, Idle: -1, Freq: -1})
	var buf bytes.Buffer
	w := NewWriter(&buf, [][2]string{{"repl-id", "x"}})
	if err := w.WriteFunction([]byte("#!lua name=lib\n")); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if err := w.WriteEntry(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	for _, src := range []io.Reader{bytes.NewReader(raw), iotest.OneByteReader(bytes.NewReader(raw))} {
		r, err := NewReader(src)
		if err != nil {
			t.Fatal(err)
		}
		var got []Entry
		var aux [][2]string
		var fns int
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case it.Aux != nil:
				aux = append(aux, *it.Aux)
			case it.Function != nil:
				fns++
			default:
				got = append(got, *it.Entry)
			}
		}
		if len(aux) != 1 || aux[0] != [2]string{"repl-id", "x"} || fns != 1 || len(got) != len(want) {
			t.Fatalf("aux %v functions %d entries %d of %d", aux, fns, len(got), len(want))
		}
		for i := range want {
			g, e := got[i], want[i]
			if g.DB != e.DB || !bytes.Equal(g.Key, e.Key) || g.ExpireAtMs != e.ExpireAtMs || !reflect.DeepEqual(canon(g.Value), canon(e.Value)) {
				t.Fatalf("entry %d: got db %d key %q exp %d", i, g.DB, g.Key, g.ExpireAtMs)
			}
		}
	}
	// ReadFile agrees, and every cut of the stream is an error, not a
	// short success.
	if f, err := ReadFile(bytes.NewReader(raw)); err != nil || len(f.Entries) != len(want) {
		t.Fatalf("ReadFile: %v", err)
	}
	for _, cut := range []int{0, 5, 9, 10, len(raw) / 2, len(raw) - 9, len(raw) - 1} {
		r, err := NewReader(bytes.NewReader(raw[:cut]))
		for err == nil {
			_, err = r.Next()
		}
		if err == io.EOF {
			t.Fatalf("a %d-byte prefix of %d read as a whole file", cut, len(raw))
		}
	}
	bad := bytes.Clone(raw)
	bad[len(bad)-3] ^= 1
	r, _ := NewReader(bytes.NewReader(bad))
	var err error
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("flipped checksum: %v", err)
	}
}

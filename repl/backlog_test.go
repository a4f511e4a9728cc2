package repl

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestBacklog appends random chunks (some bigger than the ring) and checks
// every readable offset against the whole stream kept aside, the PSYNC
// window, and Resize.
func TestBacklog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const start = 1000
	b := NewBacklog(97, start)
	var all []byte // byte i is stream byte start+1+i
	check := func() {
		t.Helper()
		first := b.FirstByte()
		if b.Offset() != start+int64(len(all)) || b.Histlen() > int64(b.Size()) || first != b.Offset()-b.Histlen()+1 {
			t.Fatalf("offset %d first %d histlen %d size %d, stream %d", b.Offset(), first, b.Histlen(), b.Size(), len(all))
		}
		if !b.Covers(first) || !b.Covers(b.Offset()+1) || b.Covers(first-1) || b.Covers(b.Offset()+2) {
			t.Fatalf("PSYNC window wrong around [%d, %d]", first, b.Offset()+1)
		}
		for from := first; from <= b.Offset(); from++ {
			dst := make([]byte, 1+rng.IntN(150))
			n := b.Copy(dst, from)
			want := all[from-start-1:]
			want = want[:min(len(want), len(dst))]
			if !bytes.Equal(dst[:n], want) {
				t.Fatalf("Copy from %d: %q, want %q", from, dst[:n], want)
			}
		}
		if b.Copy(make([]byte, 8), first-1) != 0 {
			t.Fatal("Copy read a byte the backlog no longer holds")
		}
	}
	check()
	for i := range 200 {
		p := make([]byte, rng.IntN(60))
		if i%37 == 0 {
			p = make([]byte, 250)
		}
		for j := range p {
			p[j] = byte('a' + rng.IntN(26))
		}
		b.Append(p)
		all = append(all, p...)
		check()
		if i == 100 {
			b.Resize(40)
			check()
		}
		if i == 150 {
			b.Resize(300)
			check()
		}
	}
}

// TestDecidePSYNC covers Redis 7.0's rules: the current ID within the
// backlog, the previous ID up to its offset after a promotion, "?", an
// unknown ID, and an offset outside the backlog.
func TestDecidePSYNC(t *testing.T) {
	ids := NewReplIDs()
	old := ids.ID
	b := NewBacklog(100, 0)
	b.Append(bytes.Repeat([]byte("x"), 250)) // holds 151..250
	cases := []struct {
		id      string
		psync   int64
		partial bool
	}{
		{old, 251, true}, {old, 151, true}, {old, 200, true},
		{old, 150, false}, {old, 252, false}, {"?", -1, false}, {NewReplID(), 251, false},
	}
	for _, c := range cases {
		if got, why := DecidePSYNC(ids, b, c.id, c.psync); got != c.partial {
			t.Errorf("PSYNC %s %d: partial %v (%s), want %v", c.id, c.psync, got, why, c.partial)
		}
	}
	// Promoted at offset 250: the old ID is good up to 251, then the new
	// history goes on.
	ids.Shift(b.Offset())
	b.Append([]byte("yy"))
	for _, c := range []struct {
		id      string
		psync   int64
		partial bool
	}{{old, 251, true}, {old, 252, false}, {ids.ID, 252, true}, {ids.ID, 253, true}, {ids.ID, 254, false}} {
		if got, why := DecidePSYNC(ids, b, c.id, c.psync); got != c.partial {
			t.Errorf("after shift, PSYNC %s %d: partial %v (%s), want %v", c.id, c.psync, got, why, c.partial)
		}
	}
	ids.ClearID2()
	if ok, _ := DecidePSYNC(ids, b, old, 251); ok {
		t.Error("cleared ID2 still accepted")
	}
}

// TestFeed: SELECT only when the database changes, and again after Reset.
func TestFeed(t *testing.T) {
	var f Feed
	var p []byte
	p = f.Append(p, 0, []byte("SET"), []byte("k"), []byte("v"))
	p = f.Append(p, 0, []byte("DEL"), []byte("k"))
	p = f.Append(p, 2, []byte("INCR"), []byte("n"))
	f.Reset()
	p = f.Append(p, 2, []byte("INCR"), []byte("n"))
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n" +
		"*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n" +
		"*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"
	if string(p) != want {
		t.Fatalf("stream:\n%q\nwant\n%q", p, want)
	}
}

package keyspace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// rcCheck verifies the cache's structure: every table slot names a live
// entry of its location inside a ring's used span, the counts agree, and
// every entry the model says is cached reads back its exact bytes.
func rcCheck(t *testing.T, c *recCache, model map[uint64][]byte) {
	t.Helper()
	n := 0
	perSeg := map[uint64]int32{}
	var live int64
	for i, s := range c.slots {
		if s.loc == 0 {
			continue
		}
		n++
		perSeg[s.loc>>40]++
		h := c.data[s.pos : s.pos+rcHeader]
		if binary.LittleEndian.Uint64(h) != s.loc || h[11] != rcLive {
			t.Fatalf("slot %d names %#x but its entry holds %#x kind %d", i, s.loc, binary.LittleEndian.Uint64(h), h[11])
		}
		live += int64(entrySize(int(binary.LittleEndian.Uint16(h[8:]))))
		if c.find(s.loc) != i {
			t.Fatalf("slot %d (%#x) not found by its probe", i, s.loc)
		}
	}
	if n != c.count || live != c.liveBytes || fmt.Sprint(perSeg) != fmt.Sprint(c.perSeg) {
		t.Fatalf("%d slots, count %d; live %d, counted %d; per segment %v, counted %v", n, c.count, live, c.liveBytes, perSeg, c.perSeg)
	}
	for q := range c.rings {
		r := c.rings[q]
		if r.head-r.tail > r.size {
			t.Fatalf("ring %d: %d bytes used of %d", q, r.head-r.tail, r.size)
		}
	}
	for _, s := range c.slots {
		if s.loc == 0 {
			continue
		}
		want, ok := model[s.loc]
		if !ok {
			t.Fatalf("%#x cached but never admitted (or dropped)", s.loc)
		}
		got, _ := c.get(s.loc)
		if !bytes.Equal(got, want) {
			t.Fatalf("%#x reads %q, want %q", s.loc, got, want)
		}
	}
}

// TestRecCacheModel: random admissions, reads, lock epochs and segment
// drops against a model of what was admitted. The cache never returns
// bytes other than the admitted ones, stays within its rings and table,
// evicts (it is far smaller than what is admitted), drops exactly a removed
// segment's entries, and leaves every entry read in the current epoch in
// place, with its bytes unchanged, until the epoch moves on.
func TestRecCacheModel(t *testing.T) {
	c, err := newRecCache(256 << 10)
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	defer c.close()
	r := rand.New(rand.NewPCG(1, 2))
	model := map[uint64][]byte{} // every location ever admitted: the bytes there never change
	dropped := map[uint64]bool{}
	rec := func(loc uint64) []byte {
		if b, ok := model[loc]; ok {
			return b
		}
		n := 8 + int(loc*7919%300)
		if loc%97 == 0 {
			n = 1500 + int(loc%500) // a few large ones
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(loc>>uint(i%5*8)) + byte(i)
		}
		model[loc] = b
		return b
	}
	seg := uint64(1)
	type held struct {
		loc uint64
		b   []byte // aliases the cache
		cp  []byte
	}
	var heldNow []held
	hits := 0
	for step := 0; step < 200000; step++ {
		if step%5000 == 4999 {
			old := seg - 3
			c.dropSegment(old)
			dropped[old] = true
			for loc := range model {
				if loc>>40 == old {
					if c.find(loc) >= 0 {
						t.Fatalf("step %d: %#x of dropped segment %d still cached", step, loc, old)
					}
					delete(model, loc)
				}
			}
			seg++
		}
		if step%7 == 0 { // an Unlock: what was read may go
			for _, h := range heldNow {
				if !bytes.Equal(h.b, h.cp) {
					t.Fatalf("step %d: %#x read in this epoch changed to %q from %q", step, h.loc, h.b, h.cp)
				}
			}
			heldNow = heldNow[:0]
			c.epoch++
		}
		// A zipf-like popularity over the recent segments.
		s := seg - uint64(r.IntN(3))
		if dropped[s] || s == 0 {
			continue
		}
		loc := s<<40 | uint64(4096+16*int(float64(2000)*r.Float64()*r.Float64()*r.Float64()))
		if b, ok := c.get(loc); ok {
			hits++
			if !bytes.Equal(b, rec(loc)) {
				t.Fatalf("step %d: %#x reads %q, want %q", step, loc, b, rec(loc))
			}
			heldNow = append(heldNow, held{loc, b, bytes.Clone(b)})
			continue
		}
		c.admit(loc, rec(loc))
		if step%20000 == 0 {
			rcCheck(t, c, model)
		}
	}
	rcCheck(t, c, model)
	if c.evicted == 0 || hits == 0 || c.count == 0 {
		t.Fatalf("evicted %d, hits %d, entries %d: the test did not exercise the cache", c.evicted, hits, c.count)
	}
	t.Logf("hits %d, admitted %d, evicted %d, refused %d, entries %d, live %d of %d", hits, c.admitted, c.evicted, c.refused, c.count, c.liveBytes, len(c.data))
}

// TestRecCacheScanResistance: a hot set read over and over stays cached
// while a long scan of locations read once each passes through (S3-FIFO:
// the scan's entries go through the small ring and out; the hot set is in
// the main ring).
func TestRecCacheScanResistance(t *testing.T) {
	c, err := newRecCache(256 << 10)
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	defer c.close()
	val := make([]byte, 70)
	const hot = 500 // about 50 KB of entries: well within the main ring
	read := func(loc uint64) bool {
		c.epoch++
		if _, ok := c.get(loc); ok {
			return true
		}
		c.admit(loc, val)
		return false
	}
	for round := 0; round < 4; round++ {
		for i := 0; i < hot; i++ {
			read(1<<40 | uint64(4096+i*128))
		}
	}
	for i := 0; i < 100000; i++ { // a scan of 7 MB of records read once each
		read(2<<40 | uint64(4096+i*128))
		if i%10 == 0 {
			read(1<<40 | uint64(4096+(i/10%hot)*128)) // the hot set still read now and then
		}
	}
	missing := 0
	for i := 0; i < hot; i++ {
		if c.find(1<<40|uint64(4096+i*128)) < 0 {
			missing++
		}
	}
	if missing > hot/20 {
		t.Fatalf("%d of the %d hot entries evicted by a scan", missing, hot)
	}
}

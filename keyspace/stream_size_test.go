package keyspace

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// chunkBase is the base of the chunk the next push goes to; ^0 when the
// push opens a chunk (whose base is then the entry's own milliseconds).
func (t *streamEnts) chunkBase() uint64 {
	if k := t.n >> streamChunkBits; k < len(t.chunks) {
		return t.chunks[k].base
	}
	return ^uint64(0)
}

// TestStreamEntSize pins the DRAM a stream entry costs in the index: a
// 24-byte slot (ID relative to its chunk, location, length, node number
// with the tombstone bit).
func TestStreamEntSize(t *testing.T) {
	if n := unsafe.Sizeof(streamSlot{}); n != 24 {
		t.Fatalf("streamSlot %d bytes; want 24", n)
	}
}

// TestStreamEntsCapacity pins what the entry table holds in DRAM: the
// first chunk grows by doubling up to streamChunk entries, every later one
// is a full chunk, so a table of n >= streamChunk entries has room for
// fewer than n + streamChunk (an appended slice of 1,000 had 1,280).
func TestStreamEntsCapacity(t *testing.T) {
	for _, n := range []int{1, 2, 3, 63, 64, 65, 1000, 100_000} {
		var tab streamEnts
		for i := range n {
			tab.push(streamEnt{id: StreamID{Ms: uint64(i)}})
		}
		room := 0
		for _, c := range tab.chunks {
			room += cap(c.slots)
		}
		want := streamChunk * ((n + streamChunk - 1) / streamChunk)
		if n < streamChunk {
			want = 1
			for want < n {
				want *= 2
			}
		}
		if room != want || tab.len() != n {
			t.Fatalf("%d entries: len %d, room for %d; want %d", n, tab.len(), room, want)
		}
	}
}

// TestStreamEntsMatchesSlice checks positions against a plain slice while
// entries are pushed and whole chunks dropped from the front, with IDs
// that fit a slot and IDs that do not (a millisecond jump of 2^32 or more
// within a chunk, a sequence number of 2^32-1 or more).
func TestStreamEntsMatchesSlice(t *testing.T) {
	var tab streamEnts
	var model []streamEnt
	rng := rand.New(rand.NewPCG(5, 8))
	var last StreamID
	drops, most, wide := 0, 0, 0
	for step := range 20_000 {
		if step%97 == 0 && tab.len() >= streamChunk {
			drops++
			tab.dropFront()
			model = model[streamChunk:]
		} else {
			id := StreamID{Ms: last.Ms + uint64(rng.IntN(3)), Seq: uint64(rng.IntN(4))}
			switch rng.IntN(50) {
			case 0:
				id.Ms = last.Ms + 1<<32 - 1 + uint64(rng.IntN(3))
			case 1:
				id.Seq = 1<<32 - 2 + uint64(rng.IntN(3))
			}
			if !last.Less(id) {
				id, _ = last.Next()
			}
			last = id
			e := streamEnt{id: id, loc: uint64(step) * 3, n: uint32(step), nd: uint32(step) | uint32(step%2)<<31}
			base := tab.chunkBase()
			if base == ^uint64(0) {
				base = id.Ms
			}
			if id.Seq >= 1<<32-1 || id.Ms-base >= 1<<32-1 {
				wide++
			}
			tab.push(e)
			model = append(model, e)
		}
		most = max(most, len(model))
		if tab.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(model))
		}
		if len(model) > 0 {
			for _, i := range []int{0, len(model) / 2, len(model) - 1} {
				if tab.at(i) != model[i] || tab.id(i) != model[i].id {
					t.Fatalf("step %d: at(%d) = %+v, want %+v", step, i, tab.at(i), model[i])
				}
			}
		}
	}
	for i := range model {
		if tab.at(i) != model[i] {
			t.Fatalf("end: at(%d) = %+v, want %+v", i, tab.at(i), model[i])
		}
	}
	if drops < 100 || most < 10*streamChunk || wide < 100 {
		t.Fatalf("%d drops, at most %d entries, %d wide IDs: the test did not exercise the table", drops, most, wide)
	}
}

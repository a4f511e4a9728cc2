package keyspace

import (
	"testing"
	"unsafe"
)

// TestStreamEntSize pins the DRAM a stream entry costs in the index: 32
// bytes (ID, location, length, node number with the tombstone bit).
func TestStreamEntSize(t *testing.T) {
	if n := unsafe.Sizeof(streamEnt{}); n != 32 {
		t.Fatalf("streamEnt %d bytes; want 32", n)
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
			room += cap(c)
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
// entries are pushed and whole chunks dropped from the front.
func TestStreamEntsMatchesSlice(t *testing.T) {
	var tab streamEnts
	var model []streamEnt
	next, drops, most := uint64(0), 0, 0
	for step := range 20_000 {
		if step%97 == 0 && tab.len() >= streamChunk {
			drops++
			tab.dropFront()
			model = model[streamChunk:]
		} else {
			tab.push(streamEnt{id: StreamID{Ms: next}, loc: next * 3})
			model = append(model, streamEnt{id: StreamID{Ms: next}, loc: next * 3})
			next++
		}
		most = max(most, len(model))
		if tab.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(model))
		}
		if len(model) > 0 {
			for _, i := range []int{0, len(model) / 2, len(model) - 1} {
				if *tab.at(i) != model[i] {
					t.Fatalf("step %d: at(%d) = %+v, want %+v", step, i, *tab.at(i), model[i])
				}
			}
		}
	}
	if drops < 100 || most < 10*streamChunk {
		t.Fatalf("%d drops, at most %d entries: the test did not exercise the table", drops, most)
	}
}

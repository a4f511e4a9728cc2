package keyspace

// streamChunk is the number of entries in a chunk of a stream's entry
// table: 64 entries of 32 bytes are 2 KiB, one of the allocator's size
// classes, so a full chunk wastes nothing.
const (
	streamChunkBits = 6
	streamChunk     = 1 << streamChunkBits
)

// streamEnts is a stream's entry table, positions 0..len()-1 in ID order.
// It is kept in chunks of streamChunk entries instead of one slice. A
// slice grown by append holds up to a quarter of spare capacity, and above
// 32 KiB the allocator rounds it up to 8 KiB pages: 1,000 entries take a
// 40 KiB array whether an entry is 32 bytes (capacity 1,280) or 40
// (capacity 1,024), which is why shrinking streamEnt from 40 to 32 bytes
// did not move the DRAM per element of 1,000-entry streams. Chunks are
// never copied when the table grows, only the last one is partly filled,
// and the first grows by doubling up to streamChunk, so a small stream
// costs what it holds. Trimming from the front frees whole chunks
// (dropFront) without copying the rest.
type streamEnts struct {
	chunks [][]streamEnt
	n      int
}

func (t *streamEnts) len() int { return t.n }

// at returns the entry at position i (0 <= i < len()).
func (t *streamEnts) at(i int) *streamEnt {
	return &t.chunks[i>>streamChunkBits][i&(streamChunk-1)]
}

// push appends e at position len().
func (t *streamEnts) push(e streamEnt) {
	k := t.n >> streamChunkBits
	if k == len(t.chunks) {
		c := 1
		if k > 0 {
			c = streamChunk
		}
		t.chunks = append(t.chunks, make([]streamEnt, 0, c))
	}
	c := t.chunks[k]
	if len(c) == cap(c) {
		g := make([]streamEnt, len(c), min(2*cap(c), streamChunk))
		copy(g, c)
		c = g
	}
	t.chunks[k] = append(c, e)
	t.n++
}

// dropFront removes the first chunk (positions 0..streamChunk-1, which the
// caller no longer needs): every later position moves down by streamChunk.
// The table must hold at least streamChunk entries.
func (t *streamEnts) dropFront() {
	t.chunks[0] = nil
	t.chunks = t.chunks[1:]
	t.n -= streamChunk
}

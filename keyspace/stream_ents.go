package keyspace

// streamChunk is the number of entries in a chunk of a stream's entry
// table: 64 slots of 24 bytes are 1,536 bytes, one of the allocator's size
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
//
// A chunk stores an entry in 24 bytes (streamSlot), not streamEnt's 32:
// its ID as the millisecond offset from the chunk's first entry and the
// sequence number, 32 bits each. An ID that does not fit (an offset or a
// sequence number of 2^32-1 or more: 49 days within one chunk, or a
// sequence number a client chose) is kept whole in the chunk's wide list
// and its slot holds the marker wideSlot.
type streamEnts struct {
	chunks []entChunk
	n      int
}

// entChunk is one chunk: its slots, the millisecond part of the first
// entry's ID (base) and the IDs that do not fit a slot.
type entChunk struct {
	base  uint64
	slots []streamSlot
	wide  []wideID
}

// streamSlot is an entry in a chunk: streamEnt with its ID relative to the
// chunk's base.
type streamSlot struct {
	dms, seq uint32
	loc      uint64
	n        uint32
	nd       uint32
}

// wideID is the ID of the slot at position pos of its chunk.
type wideID struct {
	pos uint32
	id  StreamID
}

// wideSlot marks a slot whose ID is in the chunk's wide list (both its dms
// and seq at the marker value).
const wideSlot = ^uint32(0)

func (t *streamEnts) len() int { return t.n }

// slot returns the chunk and slot of position i (0 <= i < len()).
func (t *streamEnts) slot(i int) (*entChunk, *streamSlot) {
	c := &t.chunks[i>>streamChunkBits]
	return c, &c.slots[i&(streamChunk-1)]
}

func (c *entChunk) idOf(sl *streamSlot, pos int) StreamID {
	if sl.dms != wideSlot || sl.seq != wideSlot {
		return StreamID{Ms: c.base + uint64(sl.dms), Seq: uint64(sl.seq)}
	}
	// wide is in position order (entries are pushed in order).
	lo, hi := 0, len(c.wide)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.wide[m].pos < uint32(pos) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(c.wide) || c.wide[lo].pos != uint32(pos) {
		panic("keyspace: stream entry marked wide without its ID")
	}
	return c.wide[lo].id
}

// id returns the ID of the entry at position i.
func (t *streamEnts) id(i int) StreamID {
	c, sl := t.slot(i)
	return c.idOf(sl, i&(streamChunk-1))
}

// at returns the entry at position i (0 <= i < len()).
func (t *streamEnts) at(i int) streamEnt {
	c, sl := t.slot(i)
	return streamEnt{id: c.idOf(sl, i&(streamChunk-1)), loc: sl.loc, n: sl.n, nd: sl.nd}
}

// markDeleted makes the entry at position i a tombstone.
func (t *streamEnts) markDeleted(i int) {
	_, sl := t.slot(i)
	sl.nd |= streamEntDel
}

// push appends e at position len(); e.id is above every other.
func (t *streamEnts) push(e streamEnt) {
	k := t.n >> streamChunkBits
	if k == len(t.chunks) {
		c := 1
		if k > 0 {
			c = streamChunk
		}
		t.chunks = append(t.chunks, entChunk{base: e.id.Ms, slots: make([]streamSlot, 0, c)})
	}
	c := &t.chunks[k]
	if len(c.slots) == cap(c.slots) {
		g := make([]streamSlot, len(c.slots), min(2*cap(c.slots), streamChunk))
		copy(g, c.slots)
		c.slots = g
	}
	sl := streamSlot{loc: e.loc, n: e.n, nd: e.nd}
	if d := e.id.Ms - c.base; d < uint64(wideSlot) && e.id.Seq < uint64(wideSlot) {
		sl.dms, sl.seq = uint32(d), uint32(e.id.Seq)
	} else {
		sl.dms, sl.seq = wideSlot, wideSlot
		c.wide = append(c.wide, wideID{pos: uint32(len(c.slots)), id: e.id})
	}
	c.slots = append(c.slots, sl)
	t.n++
}

// dropFront removes the first chunk (positions 0..streamChunk-1, which the
// caller no longer needs): every later position moves down by streamChunk.
// The table must hold at least streamChunk entries.
func (t *streamEnts) dropFront() {
	t.chunks[0] = entChunk{}
	t.chunks = t.chunks[1:]
	t.n -= streamChunk
}

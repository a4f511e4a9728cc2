package keyspace

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The record cache: copies of hot set operations in DRAM, at the
// granularity of the operation, for a data set larger than memory.
//
// Why. A GET of an indexed key reads its record through the arena's
// mapping (the key, to compare it in the index's probe, and the value),
// so the record's page must be in the page cache. A hot record of 70
// bytes then costs a whole 4 KiB page of it, and with the data set larger
// than memory the page cache's granularity turns a skewed key popularity
// (zipfian) into an almost uniform page popularity: every GET faults. A
// cache of the records themselves holds fifty times as many hot keys in
// the same bytes.
//
// Keyed by location. An operation never changes once written and segment
// ids are never reused, so the copy of the operation at a location is
// true for as long as that location is read: the cache needs no
// invalidation on writes (a SET writes a new operation elsewhere and the
// index names it instead). Only a removed segment's entries are dropped
// (dropSegment, from the cleaner), to give their bytes back.
//
// Structure. Pointer-free, so the Go collector neither scans nor moves
// it: one anonymous mapping (off the Go heap) holding the entry bytes as
// two FIFO rings, and an open-addressing table from location to entry
// (16-byte slots, linear probing, deletion by backward shift, no
// tombstones). An entry is a 16-byte header (location, length, access
// count, kind, the lock epoch of its last hit) and the operation's bytes,
// rounded up to 16. Operations of more than rcMaxRecord bytes are not
// cached: from about half a page on, the page cache's granularity wastes
// little.
//
// Policy: S3-FIFO (Yang et al., SOSP 2023), chosen because its queues are
// FIFOs, which are exactly what a ring of variable-sized entries can do
// without fragmentation or per-entry links, and because it resists scans:
// a new entry goes into a small ring (a tenth of the bytes); leaving it,
// an entry read again meanwhile moves to the main ring, one that was not
// leaves only its location's fingerprint in a ghost table. A location
// found in the ghost table is admitted straight into the main ring. The
// main ring is a CLOCK over variable sizes: its tail entry is reinserted
// at the head (with its access count decremented) while it has been read
// since, else evicted. A one-time sweep over many keys (SCAN-like
// traffic, uniform reads over more keys than fit) passes through the
// small ring and never displaces the main ring's hot entries. CLOCK/LRU
// alone would let it; 2Q would need a second structure for its A1out list
// where S3-FIFO's ghost is one array of 32-bit fingerprints.
//
// Aliasing. The keyspace's rule is that a value a read returns is valid
// until Unlock. A hit returns bytes of the cache's arena, so an entry
// read since the last Unlock must not be overwritten or moved before it:
// every hit stamps the entry with the current epoch (which Unlock
// advances), and an eviction or move that meets an entry of the current
// epoch gives up, leaving the new operation uncached. Admissions happen
// only on a GET's miss, after the value was read from the mapping; the
// value such a GET returns aliases the mapping, not the copy.
//
// In use only under memory pressure. Without it a record read through
// the mapping costs one cache miss, and the cache's table and arena would
// add two or three: the keyspace reads and fills it (rcOn) only while
// ColdReads is on (coldread.go: major faults in the last seconds), and
// keeps its entries, true as ever, while it is not.
//
// Everything here runs under the keyspace lock.

const (
	rcHeader    = 16
	rcAlign     = 16
	rcMaxRecord = 2048
	rcMaxFreq   = 3
	rcSmall     = 0
	rcMain      = 1
	// rcMaxMoves bounds the reinsertions one admission may do before the
	// main ring's tail is evicted whatever its access count.
	rcMaxMoves = 32

	rcLive = 1 // header kinds
	rcPad  = 2 // filler to the ring's end: the next entry starts at its start
	rcDead = 3 // an entry dropped with its segment, not reclaimed yet
)

// rcSlot is one table slot: an operation's location (0: empty) and the
// offset of its entry's header in the arena.
type rcSlot struct{ loc, pos uint64 }

// rcRing is one FIFO of entries in [base, base+size) of the arena; head
// and tail are byte counts that only grow (their difference is the bytes
// in use, their value mod size the position).
type rcRing struct{ base, size, head, tail uint64 }

// recCache is the record cache (see above). The zero value is off; a nil
// *recCache is off too.
type recCache struct {
	mem     []byte // the one anonymous mapping: arena, then the table, then the ghost
	data    []byte
	rings   [2]rcRing
	slots   []rcSlot
	shift   uint // home slot: the top bits of loc*golden
	mask    uint64
	count   int
	maxLoad int
	ghost   []uint32
	gmask   uint64
	epoch   uint32
	perSeg  map[uint64]int32 // entries per segment id (dropSegment skips a segment with none)
	scratch [2][]byte        // a moving entry's bytes, per ring it leaves (a move from the small ring may reinsert in the main one)
	moves   int              // reinsertions in the current admission

	// counters (under the lock; published by the keyspace's snapshot)
	hits, misses, admitted, evicted, refused, liveBytes int64
}

// newRecCache returns a cache of about n bytes in all (arena, table and
// ghost), nil when n is too small to be useful (or 0: off).
func newRecCache(n int64) (*recCache, error) {
	if n < 64<<10 {
		return nil, nil
	}
	// About a quarter for the table (16-byte slots, at most 7/8 full:
	// 100-byte entries fill it as they fill the arena), a sixteenth for
	// the ghost (4-byte fingerprints, one for each 64 bytes of the arena:
	// about as many as the main ring holds entries, as S3-FIFO sizes it),
	// the rest for the arena.
	tableBytes := uint64(1) << (63 - bits.LeadingZeros64(uint64(n/4)))
	if tableBytes*3/2 < uint64(n/4) {
		tableBytes *= 2 // the nearer power of two
	}
	slots := tableBytes / 16
	ghostN := uint64(1) << (63 - bits.LeadingZeros64(uint64(n/16)/4))
	dataBytes := (uint64(n) - tableBytes - ghostN*4) &^ (rcAlign - 1)
	if dataBytes < 32<<10 {
		return nil, nil
	}
	mem, err := unix.Mmap(-1, 0, int(dataBytes+tableBytes+ghostN*4), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("keyspace: record cache of %d bytes: %w", n, err)
	}
	c := &recCache{mem: mem, data: mem[:dataBytes], perSeg: map[uint64]int32{}}
	c.slots = unsafe.Slice((*rcSlot)(unsafe.Pointer(&mem[dataBytes])), slots)
	c.mask = slots - 1
	c.shift = uint(64 - (63 - bits.LeadingZeros64(slots)))
	c.maxLoad = int(slots / 8 * 7)
	c.ghost = unsafe.Slice((*uint32)(unsafe.Pointer(&mem[dataBytes+tableBytes])), ghostN)
	c.gmask = ghostN - 1
	small := (dataBytes / 10) &^ (rcAlign - 1)
	c.rings[rcSmall] = rcRing{base: 0, size: small}
	c.rings[rcMain] = rcRing{base: small, size: dataBytes - small}
	return c, nil
}

// close unmaps the cache; it must not be used after.
func (c *recCache) close() {
	if c != nil && c.mem != nil {
		_ = unix.Munmap(c.mem)
		c.mem, c.data, c.slots, c.ghost = nil, nil, nil, nil
	}
}

// bytes is the cache's whole mapping (its upper bound of resident bytes).
func (c *recCache) bytes() int64 {
	if c == nil {
		return 0
	}
	return int64(len(c.mem))
}

func (c *recCache) home(loc uint64) uint64 { return (loc * 0x9e3779b97f4a7c15) >> c.shift }

// find returns the slot index of loc, or -1.
func (c *recCache) find(loc uint64) int {
	for i := c.home(loc); ; i = (i + 1) & c.mask {
		switch c.slots[i].loc {
		case loc:
			return int(i)
		case 0:
			return -1
		}
	}
}

// get returns the cached operation at loc (valid until Unlock: the entry
// is stamped with the current epoch), counting it as read.
func (c *recCache) get(loc uint64) ([]byte, bool) {
	if c == nil || c.count == 0 {
		return nil, false
	}
	i := c.find(loc)
	if i < 0 {
		return nil, false
	}
	p := c.slots[i].pos
	h := c.data[p : p+rcHeader : p+rcHeader]
	n := uint64(binary.LittleEndian.Uint16(h[8:]))
	if h[10] < rcMaxFreq {
		h[10]++
	}
	binary.LittleEndian.PutUint32(h[12:], c.epoch)
	return c.data[p+rcHeader : p+rcHeader+n : p+rcHeader+n], true
}

func (c *recCache) ghostAt(loc uint64) (i uint64, fp uint32) {
	h := loc * 0xc2b2ae3d27d4eb4f
	return (h >> 17) & c.gmask, uint32(h>>40) | 1
}

// admit copies rec, the operation at loc, into the cache (read on a
// GET's miss). It does nothing when the operation is too large, already
// cached, or when making room would overwrite an entry read since the
// last Unlock.
func (c *recCache) admit(loc uint64, rec []byte) {
	if c == nil || len(rec) == 0 || len(rec) > rcMaxRecord || c.find(loc) >= 0 {
		return
	}
	c.moves = 0
	q := rcSmall
	if gi, fp := c.ghostAt(loc); c.ghost[gi] == fp {
		q = rcMain
		c.ghost[gi] = 0
	}
	for c.count >= c.maxLoad {
		if !c.evictAny() {
			c.refused++
			return
		}
	}
	n := entrySize(len(rec))
	p, ok := c.reserve(q, n)
	if !ok {
		c.refused++
		return
	}
	c.writeEntry(p, loc, rec, 0, c.epoch-1)
	c.insert(loc, p)
	c.perSeg[loc>>40]++
	c.count++
	c.admitted++
	c.liveBytes += int64(n)
}

func entrySize(n int) uint64 { return (rcHeader + uint64(n) + rcAlign - 1) &^ (rcAlign - 1) }

func (c *recCache) writeEntry(p, loc uint64, rec []byte, freq byte, epoch uint32) {
	h := c.data[p : p+rcHeader]
	binary.LittleEndian.PutUint64(h, loc)
	binary.LittleEndian.PutUint16(h[8:], uint16(len(rec)))
	h[10], h[11] = freq, rcLive
	binary.LittleEndian.PutUint32(h[12:], epoch)
	copy(c.data[p+rcHeader:], rec)
}

func (c *recCache) insert(loc, pos uint64) {
	i := c.home(loc)
	for c.slots[i].loc != 0 {
		i = (i + 1) & c.mask
	}
	c.slots[i] = rcSlot{loc: loc, pos: pos}
}

// evictAny evicts one entry (from the small ring while it has any).
func (c *recCache) evictAny() bool {
	if c.rings[rcSmall].head != c.rings[rcSmall].tail {
		return c.evictTail(rcSmall)
	}
	return c.evictTail(rcMain)
}

// reserve makes room for an entry of n bytes at ring q's head and returns
// its offset, evicting from the tail as needed (false: an entry read
// since the last Unlock is in the way, or n does not fit the ring).
func (c *recCache) reserve(q int, n uint64) (uint64, bool) {
	r := &c.rings[q]
	if n > r.size {
		return 0, false
	}
	for {
		off := r.head % r.size
		need := n
		if off+n > r.size {
			need += r.size - off
		}
		if r.size-(r.head-r.tail) >= need {
			if off+n > r.size {
				pad := c.data[r.base+off : r.base+off+rcHeader]
				binary.LittleEndian.PutUint64(pad, 0)
				binary.LittleEndian.PutUint16(pad[8:], uint16(r.size-off))
				pad[11] = rcPad
				r.head += r.size - off
				off = 0
			}
			r.head += n
			return r.base + off, true
		}
		if !c.evictTail(q) {
			return 0, false
		}
	}
}

// evictTail takes the entry at ring q's tail out of it: skipped if it is
// filler or dead; refused (false) if it was read since the last Unlock;
// from the small ring, moved to the main ring if it was read while there,
// else evicted (its fingerprint into the ghost); from the main ring,
// reinserted at its head if it was read since it got there (with one read
// less), else evicted.
func (c *recCache) evictTail(q int) bool {
	r := &c.rings[q]
	if r.head == r.tail {
		return false
	}
	p := r.base + r.tail%r.size
	h := c.data[p : p+rcHeader]
	n := uint64(binary.LittleEndian.Uint16(h[8:]))
	switch h[11] {
	case rcPad:
		r.tail += n
		return true
	case rcDead:
		r.tail += entrySize(int(n))
		return true
	}
	if binary.LittleEndian.Uint32(h[12:]) == c.epoch {
		return false
	}
	loc := binary.LittleEndian.Uint64(h)
	freq := h[10]
	size := entrySize(int(n))
	keep := freq > 0
	if q == rcSmall && !keep {
		// While the main ring has room, the small one spills into it (as
		// S3-FIFO evicts from its small queue only once the whole cache
		// is full): a cold cache fills all its bytes; the spilled
		// entries, never read again, are the main ring's first to go.
		m := &c.rings[rcMain]
		off := m.head % m.size
		need := size
		if off+size > m.size {
			need += m.size - off
		}
		keep = m.size-(m.head-m.tail) >= need
	}
	if q == rcMain {
		keep = keep && c.moves < rcMaxMoves
		if keep {
			// Reinserted in place of itself: room for it at the head
			// once the tail moves past it, unless the head must wrap.
			off := r.head % r.size
			if off+size > r.size && r.size-(r.head-r.tail)+size < size+(r.size-off) {
				keep = false
			}
		}
	}
	if !keep {
		if q == rcSmall {
			gi, fp := c.ghostAt(loc)
			c.ghost[gi] = fp
		}
		r.tail += size
		c.drop(loc)
		c.evicted++
		return true
	}
	c.moves++
	c.scratch[q] = append(c.scratch[q][:0], c.data[p+rcHeader:p+rcHeader+n]...)
	epoch := binary.LittleEndian.Uint32(h[12:])
	r.tail += size
	np, ok := c.reserve(rcMain, size)
	if !ok {
		c.drop(loc)
		c.evicted++
		return true
	}
	if q == rcMain {
		freq--
	} else {
		freq = 0
	}
	c.writeEntry(np, loc, c.scratch[q], freq, epoch)
	c.slots[c.find(loc)].pos = np
	return true
}

// drop removes loc's table slot and counts it gone (its bytes are the
// caller's to reclaim or mark).
func (c *recCache) drop(loc uint64) {
	i := c.find(loc)
	if i < 0 {
		panic(fmt.Sprintf("keyspace: record cache: entry of %#x has no slot", loc))
	}
	p := c.slots[i].pos
	c.liveBytes -= int64(entrySize(int(binary.LittleEndian.Uint16(c.data[p+8:]))))
	c.deleteAt(uint64(i))
	c.count--
	seg := loc >> 40
	if c.perSeg[seg]--; c.perSeg[seg] <= 0 {
		delete(c.perSeg, seg)
	}
}

// deleteAt empties slot i, shifting back the entries of its probe run
// that may move closer to their home.
func (c *recCache) deleteAt(i uint64) {
	for {
		c.slots[i] = rcSlot{}
		j := i
		for {
			j = (j + 1) & c.mask
			s := c.slots[j]
			if s.loc == 0 {
				return
			}
			k := c.home(s.loc)
			// s stays if its home is cyclically within (i, j].
			if (i < j && i < k && k <= j) || (i > j && (k > i || k <= j)) {
				continue
			}
			c.slots[i] = s
			i = j
			break
		}
	}
}

// dropSegment drops every entry of segment id (removed by the cleaner):
// their slots go at once, their bytes when the ring's tail passes them.
// A pass over the table, skipped when the segment has no entry.
func (c *recCache) dropSegment(id uint64) {
	if c == nil || c.perSeg[id] == 0 {
		return
	}
	for i := 0; i < len(c.slots); {
		s := c.slots[i]
		if s.loc == 0 || s.loc>>40 != id {
			i++
			continue
		}
		c.data[s.pos+11] = rcDead
		c.drop(s.loc) // shifts a later entry into i: looked at again
	}
}

// cachedValue is Get's read of the indexed string e with the record
// cache on: the cached copy of its operation, or, on a miss, the
// operation read through the mapping and admitted (the value returned
// then aliases the mapping).
func (ks *Keyspace) cachedValue(e *entry) []byte {
	c := ks.rcOn
	if rec, ok := c.get(e.loc); ok {
		if o, err := decodeOp(rec); err == nil && o.kind == opSet {
			c.hits++
			return o.val
		}
	}
	v := ks.value(e)
	if ks.replaying {
		return v
	}
	seg := ks.arena.Segment(e.loc >> 40)
	if off := e.loc & (1<<40 - 1); seg != nil && e.size <= rcMaxRecord && off+uint64(e.size) <= uint64(len(seg.Bytes())) {
		if rec := seg.Bytes()[off : off+uint64(e.size)]; rec[0] == opSet {
			c.misses++
			c.admit(e.loc, rec)
		}
	}
	return v
}

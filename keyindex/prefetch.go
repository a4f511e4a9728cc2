package keyindex

import "unsafe"

// Prefetch prepares Lookups of keys (a pipelined batch's keys, about to be
// looked up one after the other): it asks the processor to bring in, for
// every key, the words such a Lookup reads first (its home slot and its
// overlay position), then, once those have arrived, the overlay entry a
// position's hash bits point to and, for a home slot of the key's tag,
// what at says the caller will read for the location it names: the bytes
// of the record there (its first two cache lines are asked for; nil:
// none) and one other address (side; nil: none). A Lookup
// on its own waits for each of these cache misses in turn (slot, then
// record); here the misses of all the keys are in flight together. It
// changes nothing and reads no record: the prefetches are hints, and a
// hint that proves wrong (another key's slot, a tag that matched by
// chance) costs only the line it brought in.
func (ix *Index) Prefetch(keys [][]byte, at func(loc uint64) (record []byte, side unsafe.Pointer)) {
	if !prefetching || len(keys) == 0 || ix.slots == nil {
		return
	}
	hs := ix.pfHashes[:0]
	ov := &ix.ov
	for _, k := range keys {
		h := hashKey(k)
		hs = append(hs, h)
		prefetch(uintptr(unsafe.Pointer(&ix.slots[h&ix.mask])))
		if len(ov.ents) > 0 {
			prefetch(uintptr(unsafe.Pointer(&ov.pos[h&uint64(len(ov.pos)-1)])))
		}
	}
	ix.pfHashes = hs
	for _, h := range hs {
		if len(ov.ents) > 0 {
			if w := ov.pos[h&uint64(len(ov.pos)-1)]; w != 0 && w>>32 == h>>32 {
				prefetch(uintptr(unsafe.Pointer(&ov.ents[int(uint32(w))-1])))
				continue // staged: the table's slot is not read
			}
		}
		tag, home := ix.tagHome(h)
		if w := ix.word(home); w&offMask != 0 && w>>tagShift == tag {
			b, side := at(ix.unpack(w))
			if len(b) > 0 {
				prefetch(uintptr(unsafe.Pointer(&b[0])))
				if len(b) > 64 {
					prefetch(uintptr(unsafe.Pointer(&b[64]))) // a record of a short value: the value's line too
				}
			}
			if side != nil {
				prefetch(uintptr(side))
			}
		}
	}
}

// PrefetchAddr asks the processor to bring in the cache line at p (a
// hint: it never faults and changes nothing), for a caller that knows an
// address it will touch soon, as Prefetch does for a lookup's words: the
// keyspace's access data of a location about to be written. A no-op off
// amd64.
func PrefetchAddr(p unsafe.Pointer) { prefetch(uintptr(p)) }

package keyspace

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAckAllMatchesOneByOne: ackAll (runs deleted by moving the shorter
// side) leaves the same PEL, in order, and the same per-consumer pending
// counts as deleting the acknowledged IDs one at a time, for runs at the
// front, the back and the middle, scattered IDs, repeats and IDs that are
// not pending, over many acknowledgements of one group.
func TestAckAllMatchesOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for trial := 0; trial < 200; trial++ {
		g := &streamGroup{}
		model := map[StreamID]uint32{} // pending ID -> consumer
		for c := uint32(0); c < 5; c++ {
			g.consumers = append(g.consumers, streamConsumer{name: string(rune('a' + c)), cid: c})
		}
		seq := uint64(0)
		deliver := func(n int) {
			cid := uint32(rng.IntN(5))
			for range n {
				seq += 1 + uint64(rng.IntN(2))
				id := StreamID{Ms: 7, Seq: seq}
				g.pel = append(g.pel, pelEntry{id: id, cid: cid, deliveryCount: 1})
				g.consumers[cid].pending++
				model[id] = cid
			}
		}
		for round := 0; round < 30; round++ {
			deliver(1 + rng.IntN(12))
			if len(g.pel) == 0 {
				continue
			}
			var ids []StreamID
			switch rng.IntN(4) {
			case 0: // a run from the front
				for k := 0; k < min(len(g.pel), 1+rng.IntN(10)); k++ {
					ids = append(ids, g.pel[k].id)
				}
			case 1: // a run from anywhere, given backwards
				from := rng.IntN(len(g.pel))
				for k := min(len(g.pel), from+1+rng.IntN(10)) - 1; k >= from; k-- {
					ids = append(ids, g.pel[k].id)
				}
			case 2: // scattered, with repeats and IDs not pending
				for range 1 + rng.IntN(20) {
					if rng.IntN(3) == 0 {
						ids = append(ids, StreamID{Ms: 7, Seq: uint64(rng.IntN(int(seq) + 5))})
					} else {
						ids = append(ids, g.pel[rng.IntN(len(g.pel))].id)
					}
				}
			case 3: // the back
				for k := max(0, len(g.pel)-1-rng.IntN(10)); k < len(g.pel); k++ {
					ids = append(ids, g.pel[k].id)
				}
			}
			g.ackAll(ids)
			for _, id := range ids {
				delete(model, id)
			}
			var want []StreamID
			for id := range model {
				want = append(want, id)
			}
			slices.SortFunc(want, func(a, b StreamID) int { return a.Cmp(b) })
			got := make([]StreamID, len(g.pel))
			counts := make([]int, 5)
			for k, p := range g.pel {
				got[k] = p.id
				if model[p.id] != p.cid {
					t.Fatalf("trial %d round %d: %v moved from consumer %d to %d", trial, round, p.id, model[p.id], p.cid)
				}
				counts[p.cid]++
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d round %d: after XACK %v the PEL is %v, want %v", trial, round, ids, got, want)
			}
			for c := range g.consumers {
				if g.consumers[c].pending != counts[c] {
					t.Fatalf("trial %d round %d: consumer %d pending %d, want %d", trial, round, c, g.consumers[c].pending, counts[c])
				}
			}
		}
	}
}

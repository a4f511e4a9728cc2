package commands

import (
	"slices"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/rdb"
)

// DUMP and RESTORE of streams: the keyspace's nodes, counters, consumer
// groups, pending entries and consumers to and from rdb.Stream (Redis
// 7.0's RDB_TYPE_STREAM_LISTPACKS_2). A RESTORE rebuilds the stream node by
// node, each node with the master ID and deleted count of the payload, so
// XINFO STREAM's radix-tree figures and approximate trimming see the nodes
// the dumping server had.

func toRDBID(id keyspace.StreamID) rdb.StreamID { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }
func fromRDBID(id rdb.StreamID) keyspace.StreamID {
	return keyspace.StreamID{Ms: id.Ms, Seq: id.Seq}
}

// dumpStream reads the stream at key (ok false when missing). Field bytes
// alias the mapping: valid while the keyspace lock is held.
func dumpStream(ks *keyspace.Keyspace, db int, key []byte) (rdb.Value, bool, error) {
	m, ok, err := ks.Stream(db, key)
	if err != nil || !ok {
		return rdb.Value{}, false, err
	}
	s := &rdb.Stream{Length: uint64(m.Length), LastID: toRDBID(m.LastID), FirstID: toRDBID(m.FirstID),
		MaxDeletedID: toRDBID(m.MaxDeletedID), EntriesAdded: m.EntriesAdded}
	var cur uint32
	err = ks.StreamNodeEntries(db, key, func(node uint32, master keyspace.StreamID, deleted uint32, id keyspace.StreamID, fields [][]byte) {
		if len(s.Nodes) == 0 || node != cur {
			s.Nodes = append(s.Nodes, rdb.StreamNode{Master: toRDBID(master), Deleted: int(deleted)})
			cur = node
		}
		nd := &s.Nodes[len(s.Nodes)-1]
		nd.Entries = append(nd.Entries, rdb.StreamEntry{ID: toRDBID(id), Fields: slices.Clone(fields)})
	})
	if err != nil {
		return rdb.Value{}, false, err
	}
	for _, g := range ks.StreamGroups(db, key) {
		name := []byte(g.Name)
		sg := rdb.StreamGroup{Name: name, LastID: toRDBID(g.LastID), EntriesRead: g.EntriesRead}
		idx := map[string]int{}
		for i, c := range ks.StreamConsumers(db, key, name) {
			sg.Consumers = append(sg.Consumers, rdb.StreamConsumer{Name: []byte(c.Name), SeenTime: c.SeenTime})
			idx[c.Name] = i
		}
		ks.StreamPEL(db, key, name, nil, keyspace.StreamID{}, keyspace.MaxStreamID, func(p keyspace.StreamPending) bool {
			sg.PEL = append(sg.PEL, rdb.StreamNACK{ID: toRDBID(p.ID), DeliveryTime: p.DeliveryTime,
				DeliveryCount: p.DeliveryCount, Consumer: idx[p.Consumer]})
			return true
		})
		s.Groups = append(s.Groups, sg)
	}
	return rdb.Value{Kind: rdb.KindStream, Stream: s}, true, nil
}

// restorePELChunk bounds the pending entries of one XPelSet operation.
const restorePELChunk = 1000

// restoreStream appends the operations building s at key (the caller
// deleted the old value first).
func restoreStream(b *keyspace.Batch, db int, key []byte, s *rdb.Stream) {
	for _, nd := range s.Nodes {
		for i, e := range nd.Entries {
			b.XAddNode(db, key, fromRDBID(e.ID), e.Fields, i == 0, fromRDBID(nd.Master), uint32(nd.Deleted))
		}
	}
	b.XSetID(db, key, keyspace.StreamMeta{LastID: fromRDBID(s.LastID), EntriesAdded: s.EntriesAdded,
		MaxDeletedID: fromRDBID(s.MaxDeletedID), FirstID: fromRDBID(s.FirstID)})
	for _, g := range s.Groups {
		name := string(g.Name)
		b.XGroupCreate(db, key, name, fromRDBID(g.LastID), g.EntriesRead)
		pending := make([][]keyspace.PendingSet, len(g.Consumers))
		for _, p := range g.PEL {
			pending[p.Consumer] = append(pending[p.Consumer], keyspace.PendingSet{ID: fromRDBID(p.ID),
				DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount})
		}
		for ci, c := range g.Consumers {
			b.XConsumerCreate(db, key, name, string(c.Name), c.SeenTime)
			for sets := pending[ci]; len(sets) > 0; {
				n := min(len(sets), restorePELChunk)
				b.XPelSet(db, key, name, string(c.Name), 0, sets[:n])
				sets = sets[n:]
			}
		}
	}
}

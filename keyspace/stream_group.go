package keyspace

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// Consumer groups. Operations (durable, never renumber), every number a
// uvarint, names a uvarint length + bytes:
//
//	opXGroupCreate    group | lastMs | lastSeq | entriesRead+1 (0: unknown)
//	opXGroupSetID     group | lastMs | lastSeq | entriesRead+1
//	opXGroupDestroy   group
//	opXConsumerCreate group | consumer | seenTime (Unix ms)
//	opXConsumerDel    group | consumer (its pending entries go with it)
//	opXPelSet         group | consumer | seenTime (0: unchanged) |
//	                  repeated (ms | seq | deliveryTime | deliveryCount):
//	                  each pending entry is created or given to consumer
//	                  with that delivery time and count (XREADGROUP,
//	                  XCLAIM, XAUTOCLAIM); the consumer is created if missing
//	opXAck            group | repeated (ms | seq): pending entries removed
//
// A group's state (last-delivered ID, entries-read, the pending entries
// list with delivery times and counts, the consumers and their seen-times)
// is therefore in the log like the entries, and a rebuild writes it whole
// after the entries.
const (
	opXGroupCreate    = 74
	opXGroupSetID     = 75
	opXGroupDestroy   = 76
	opXConsumerCreate = 77
	opXConsumerDel    = 78
	opXPelSet         = 79
	opXAck            = 80
)

// streamGroup is one consumer group. pel is sorted by ID (binary search;
// a new delivery appends, as IDs grow). consumers is sorted by name, as
// Redis's radix tree lists them; a pending entry names its consumer by a
// number that does not change when consumers come and go.
type streamGroup struct {
	name        string
	lastID      StreamID
	entriesRead int64 // -1: unknown
	pel         []pelEntry
	consumers   []streamConsumer
	nextCID     uint32
}

type pelEntry struct {
	id            StreamID
	cid           uint32
	deliveryTime  int64
	deliveryCount uint64
}

type streamConsumer struct {
	name    string
	cid     uint32
	seen    int64
	pending int
}

// pelBytes is what a pending entry counts in the live bytes.
const pelBytes = 32

func (s *streamObj) group(name string) *streamGroup {
	i, ok := slices.BinarySearchFunc(s.groups, name, func(g *streamGroup, n string) int { return strings.Compare(g.name, n) })
	if !ok {
		return nil
	}
	return s.groups[i]
}

func (g *streamGroup) consumerIndex(name string) (int, bool) {
	return slices.BinarySearchFunc(g.consumers, name, func(c streamConsumer, n string) int { return strings.Compare(c.name, n) })
}

func (g *streamGroup) consumerByCID(cid uint32) *streamConsumer {
	for i := range g.consumers {
		if g.consumers[i].cid == cid {
			return &g.consumers[i]
		}
	}
	return nil
}

// addConsumer creates the consumer if missing; it reports whether it did.
func (g *streamGroup) addConsumer(name string, seen int64) (*streamConsumer, bool) {
	i, ok := g.consumerIndex(name)
	if ok {
		return &g.consumers[i], false
	}
	g.consumers = slices.Insert(g.consumers, i, streamConsumer{name: name, cid: g.nextCID, seen: seen})
	g.nextCID++
	return &g.consumers[i], true
}

func (g *streamGroup) pelIndex(id StreamID) (int, bool) {
	return slices.BinarySearchFunc(g.pel, id, func(p pelEntry, id StreamID) int { return p.id.Cmp(id) })
}

// ackAll removes the pending entries of ids (IDs not pending are
// skipped; an ID may repeat). The entries an XACK names are usually a run
// (what one XREADGROUP delivered, consecutive in the PEL) near its front
// (the oldest deliveries are acknowledged first), so each run goes in one
// move of the shorter side: the entries after it move back, or those
// before it move forward and the slice starts later. Deleting them one
// by one moved the rest of the PEL for each (a tenth of the server's CPU
// under XREADGROUP COUNT 10 + XACK with 50 consumers).
func (g *streamGroup) ackAll(ids []StreamID) {
	var buf [16]int
	idx := buf[:0]
	for _, id := range ids {
		if i, ok := g.pelIndex(id); ok {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	// From the last run to the first: deleting a run changes no index
	// before it.
	for end := len(idx); end > 0; {
		start := end - 1
		for start > 0 && idx[start-1] == idx[start]-1 {
			start--
		}
		g.deletePending(idx[start], idx[end-1]+1)
		end = start
	}
}

// deletePending removes g.pel[i:j], moving the shorter side; indexes
// before i stay what they were.
func (g *streamGroup) deletePending(i, j int) {
	var c *streamConsumer
	for k := i; k < j; k++ {
		if cid := g.pel[k].cid; c == nil || c.cid != cid {
			c = g.consumerByCID(cid)
		}
		if c != nil {
			c.pending--
		}
	}
	n := j - i
	if i < len(g.pel)-j {
		copy(g.pel[n:j], g.pel[:i])
		g.pel = g.pel[n:]
		return
	}
	g.pel = slices.Delete(g.pel, i, j)
}

func (s *streamObj) groupBytes() int64 {
	var n int64
	for _, g := range s.groups {
		n += int64(len(g.name)) + 24 + pelBytes*int64(len(g.pel))
		for _, c := range g.consumers {
			n += int64(len(c.name)) + 16
		}
	}
	return n
}

func registerStreamGroupOps(m map[byte]objectApplier) {
	registerOp(m, opXGroupCreate, applyXGroupCreate)
	registerOp(m, opXGroupSetID, applyXGroupSetID)
	registerOp(m, opXGroupDestroy, applyXGroupDestroy)
	registerOp(m, opXConsumerCreate, applyXConsumerCreate)
	registerOp(m, opXConsumerDel, applyXConsumerDel)
	registerOp(m, opXPelSet, applyXPelSet)
	registerOp(m, opXAck, applyXAck)
}

// groupOp decodes the group name at the start of o's body and finds the
// stream; missing stream or group: nil (stale at recovery, see errStaleOp).
func (ks *Keyspace) groupOp(o op, e *entry) (*entry, *streamObj, string, int, error) {
	name, i, ok := readBytes(o.body, 0)
	if !ok {
		return nil, nil, "", 0, fmt.Errorf("%w: group name", errBadOp)
	}
	e, s, err := ks.streamFor(o, e, false)
	if err != nil {
		return nil, nil, "", 0, err
	}
	if s == nil {
		return nil, nil, "", 0, fmt.Errorf("%w: group op on a missing stream", errStaleOp)
	}
	return e, s, string(name), i, nil
}

func readUvarints(p []byte, i int, out ...*uint64) (int, bool) {
	for _, v := range out {
		x, w := binary.Uvarint(p[i:])
		if w <= 0 {
			return i, false
		}
		*v = x
		i += w
	}
	return i, true
}

func applyXGroupCreate(ks *Keyspace, o op, e *entry) error {
	e, s, name, i, err := ks.groupOp(o, e)
	if s == nil {
		return err
	}
	var ms, seq, er uint64
	if _, ok := readUvarints(o.body, i, &ms, &seq, &er); !ok {
		return fmt.Errorf("%w: XGROUP CREATE body", errBadOp)
	}
	if s.group(name) != nil {
		return fmt.Errorf("%w: group %q exists", errStaleOp, name)
	}
	g := &streamGroup{name: name, lastID: StreamID{ms, seq}, entriesRead: int64(er) - 1}
	j, _ := slices.BinarySearchFunc(s.groups, name, func(g *streamGroup, n string) int { return strings.Compare(g.name, n) })
	s.groups = slices.Insert(s.groups, j, g)
	ks.streamChanged(e, s)
	return nil
}

func applyXGroupSetID(ks *Keyspace, o op, e *entry) error {
	e, s, name, i, err := ks.groupOp(o, e)
	if s == nil {
		return err
	}
	var ms, seq, er uint64
	if _, ok := readUvarints(o.body, i, &ms, &seq, &er); !ok {
		return fmt.Errorf("%w: XGROUP SETID body", errBadOp)
	}
	g := s.group(name)
	if g == nil {
		return fmt.Errorf("%w: no group %q", errStaleOp, name)
	}
	g.lastID, g.entriesRead = StreamID{ms, seq}, int64(er)-1
	ks.streamChanged(e, s)
	return nil
}

func applyXGroupDestroy(ks *Keyspace, o op, e *entry) error {
	e, s, name, _, err := ks.groupOp(o, e)
	if s == nil {
		return err
	}
	s.groups = slices.DeleteFunc(s.groups, func(g *streamGroup) bool { return g.name == name })
	ks.streamChanged(e, s)
	return nil
}

func applyXConsumerCreate(ks *Keyspace, o op, e *entry) error {
	e, s, name, i, err := ks.groupOp(o, e)
	if s == nil {
		return err
	}
	cname, i, ok := readBytes(o.body, i)
	var seen uint64
	if ok {
		_, ok = readUvarints(o.body, i, &seen)
	}
	if !ok {
		return fmt.Errorf("%w: XGROUP CREATECONSUMER body", errBadOp)
	}
	g := s.group(name)
	if g == nil {
		return fmt.Errorf("%w: no group %q", errStaleOp, name)
	}
	g.addConsumer(string(cname), int64(seen))
	ks.streamChanged(e, s)
	return nil
}

func applyXConsumerDel(ks *Keyspace, o op, e *entry) error {
	e, s, name, i, err := ks.groupOp(o, e)
	if s == nil {
		return err
	}
	cname, _, ok := readBytes(o.body, i)
	if !ok {
		return fmt.Errorf("%w: XGROUP DELCONSUMER body", errBadOp)
	}
	g := s.group(name)
	if g == nil {
		return fmt.Errorf("%w: no group %q", errStaleOp, name)
	}
	if k, ok := g.consumerIndex(string(cname)); ok {
		cid := g.consumers[k].cid
		g.pel = slices.DeleteFunc(g.pel, func(p pelEntry) bool { return p.cid == cid })
		g.consumers = slices.Delete(g.consumers, k, k+1)
	}
	ks.streamChanged(e, s)
	return nil
}

func applyXPelSet(ks *Keyspace, o op, e *entry) error {
	e, s, name, i, err := ks.groupOp(o, e)
	if s == nil {
		return err
	}
	cname, i, ok := readBytes(o.body, i)
	var seen uint64
	if ok {
		i, ok = readUvarints(o.body, i, &seen)
	}
	if !ok {
		return fmt.Errorf("%w: PEL body", errBadOp)
	}
	g := s.group(name)
	if g == nil {
		return fmt.Errorf("%w: no group %q", errStaleOp, name)
	}
	c, _ := g.addConsumer(string(cname), int64(seen))
	if seen != 0 {
		c.seen = int64(seen)
	}
	cid := c.cid
	for i < len(o.body) {
		var ms, seq, t, n uint64
		if i, ok = readUvarints(o.body, i, &ms, &seq, &t, &n); !ok {
			return fmt.Errorf("%w: PEL entry", errBadOp)
		}
		id := StreamID{ms, seq}
		k, found := g.pelIndex(id)
		if found {
			if old := g.pel[k].cid; old != cid {
				if oc := g.consumerByCID(old); oc != nil {
					oc.pending--
				}
				g.consumerByCID(cid).pending++
			}
			g.pel[k] = pelEntry{id: id, cid: cid, deliveryTime: int64(t), deliveryCount: n}
			continue
		}
		g.pel = slices.Insert(g.pel, k, pelEntry{id: id, cid: cid, deliveryTime: int64(t), deliveryCount: n})
		g.consumerByCID(cid).pending++
	}
	ks.streamChanged(e, s)
	return nil
}

func applyXAck(ks *Keyspace, o op, e *entry) error {
	e, s, name, i, err := ks.groupOp(o, e)
	if s == nil {
		return err
	}
	g := s.group(name)
	if g == nil {
		return fmt.Errorf("%w: no group %q", errStaleOp, name)
	}
	var buf [16]StreamID
	ids := buf[:0]
	for i < len(o.body) {
		id, j, ok := readIDAt(o.body, i)
		if !ok {
			return fmt.Errorf("%w: XACK id", errBadOp)
		}
		ids = append(ids, id)
		i = j
	}
	g.ackAll(ids)
	ks.streamChanged(e, s)
	return nil
}

// rebuildGroups appends the operations that recreate every group.
func (s *streamObj) rebuildGroups(b *Batch, db int, key []byte) {
	for _, g := range s.groups {
		b.XGroupCreate(db, key, g.name, g.lastID, g.entriesRead)
		for _, c := range g.consumers {
			b.XConsumerCreate(db, key, g.name, c.name, c.seen)
		}
		// Pending entries, consumer by consumer, in bounded operations.
		for _, c := range g.consumers {
			var batch []PendingSet
			for _, p := range g.pel {
				if p.cid != c.cid {
					continue
				}
				batch = append(batch, PendingSet{ID: p.id, DeliveryTime: p.deliveryTime, DeliveryCount: p.deliveryCount})
				if len(batch) == maxOpElems {
					b.XPelSet(db, key, g.name, c.name, 0, batch)
					batch = batch[:0]
				}
			}
			if len(batch) > 0 {
				b.XPelSet(db, key, g.name, c.name, 0, batch)
			}
		}
	}
}

// PendingSet is one pending entry an XPelSet gives a consumer.
type PendingSet struct {
	ID            StreamID
	DeliveryTime  int64 // Unix ms
	DeliveryCount uint64
}

func groupBody(group string) []byte { return appendBytes(nil, []byte(group)) }

// XGroupCreate appends an operation creating a group (entriesRead -1:
// unknown).
func (b *Batch) XGroupCreate(db int, key []byte, group string, lastID StreamID, entriesRead int64) {
	body := appendID(groupBody(group), lastID)
	b.ObjectOp(opXGroupCreate, db, key, binary.AppendUvarint(body, uint64(entriesRead+1)))
}

// XGroupSetID appends an operation setting a group's last-delivered ID and
// entries-read (-1: unknown).
func (b *Batch) XGroupSetID(db int, key []byte, group string, lastID StreamID, entriesRead int64) {
	body := appendID(groupBody(group), lastID)
	b.ObjectOp(opXGroupSetID, db, key, binary.AppendUvarint(body, uint64(entriesRead+1)))
}

// XGroupDestroy appends an operation deleting a group.
func (b *Batch) XGroupDestroy(db int, key []byte, group string) {
	b.ObjectOp(opXGroupDestroy, db, key, groupBody(group))
}

// XConsumerCreate appends an operation creating a consumer (no-op if it
// exists) seen at seenMs.
func (b *Batch) XConsumerCreate(db int, key []byte, group, consumer string, seenMs int64) {
	body := appendBytes(groupBody(group), []byte(consumer))
	b.ObjectOp(opXConsumerCreate, db, key, binary.AppendUvarint(body, uint64(max(seenMs, 0))))
}

// XConsumerDel appends an operation deleting a consumer and its pending
// entries.
func (b *Batch) XConsumerDel(db int, key []byte, group, consumer string) {
	b.ObjectOp(opXConsumerDel, db, key, appendBytes(groupBody(group), []byte(consumer)))
}

// XPelSet appends an operation giving pending entries to consumer (created
// if missing), and setting its seen-time unless seenMs is 0.
func (b *Batch) XPelSet(db int, key []byte, group, consumer string, seenMs int64, entries []PendingSet) {
	body := appendBytes(groupBody(group), []byte(consumer))
	body = binary.AppendUvarint(body, uint64(max(seenMs, 0)))
	for _, p := range entries {
		body = appendID(body, p.ID)
		body = binary.AppendUvarint(body, uint64(max(p.DeliveryTime, 0)))
		body = binary.AppendUvarint(body, p.DeliveryCount)
	}
	b.ObjectOp(opXPelSet, db, key, body)
}

// XAck appends an operation removing pending entries of a group.
func (b *Batch) XAck(db int, key []byte, group string, ids []StreamID) {
	body := groupBody(group)
	for _, id := range ids {
		body = appendID(body, id)
	}
	b.ObjectOp(opXAck, db, key, body)
}

// ---- reading ----

// StreamGroupInfo is what XINFO GROUPS reports of a group.
type StreamGroupInfo struct {
	Name        string
	LastID      StreamID
	EntriesRead int64 // -1: unknown (nil)
	Consumers   int
	Pending     int
	Lag         int64
	LagValid    bool // false: nil
}

// StreamConsumerInfo is what XINFO CONSUMERS reports of a consumer.
type StreamConsumerInfo struct {
	Name     string
	SeenTime int64 // Unix ms
	Pending  int
}

// StreamPending is one pending entry.
type StreamPending struct {
	ID            StreamID
	Consumer      string
	DeliveryTime  int64 // Unix ms
	DeliveryCount uint64
}

// distance is Redis's streamEstimateDistanceFromFirstEverEntry: the
// entries-read counter of id, or -1 when it cannot be known.
func (s *streamObj) distance(id StreamID) int64 {
	if s.added == 0 {
		return 0
	}
	if s.live == 0 && !s.lastID.Less(id) {
		return int64(s.added)
	}
	switch id.Cmp(s.lastID) {
	case 0:
		return int64(s.added)
	case 1:
		return -1
	}
	if s.maxDeleted.IsZero() || s.maxDeleted.Less(s.firstID) {
		switch id.Cmp(s.firstID) {
		case -1:
			return int64(s.added) - int64(s.live)
		case 0:
			return int64(s.added) - int64(s.live) + 1
		}
	}
	return -1
}

// tombstonesFrom is Redis's streamRangeHasTombstones(s, start, +).
func (s *streamObj) tombstonesFrom(start StreamID) bool {
	if s.live == 0 || s.maxDeleted.IsZero() || s.maxDeleted.Less(s.firstID) {
		return false
	}
	return !s.maxDeleted.Less(start)
}

func (s *streamObj) groupInfo(g *streamGroup) StreamGroupInfo {
	gi := StreamGroupInfo{Name: g.name, LastID: g.lastID, EntriesRead: g.entriesRead, Consumers: len(g.consumers), Pending: len(g.pel)}
	switch {
	case s.added == 0:
		gi.LagValid = true
	case g.entriesRead != -1 && !s.tombstonesFrom(g.lastID):
		gi.Lag, gi.LagValid = int64(s.added)-g.entriesRead, true
	default:
		if er := s.distance(g.lastID); er != -1 {
			gi.Lag, gi.LagValid = int64(s.added)-er, true
		}
	}
	return gi
}

// StreamGroups returns the groups of the stream at key, by name.
func (ks *Keyspace) StreamGroups(db int, key []byte) []StreamGroupInfo {
	s, _ := ks.stream(db, key)
	if s == nil {
		return nil
	}
	out := make([]StreamGroupInfo, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, s.groupInfo(g))
	}
	return out
}

// StreamGroup returns one group's state; ok is false when the stream or
// the group does not exist.
func (ks *Keyspace) StreamGroup(db int, key []byte, group []byte) (gi StreamGroupInfo, ok bool) {
	s, _ := ks.stream(db, key)
	if s == nil {
		return gi, false
	}
	g := s.group(string(group))
	if g == nil {
		return gi, false
	}
	return s.groupInfo(g), true
}

func (ks *Keyspace) streamGroupOf(db int, key, group []byte) (*streamObj, *streamGroup) {
	s, _ := ks.stream(db, key)
	if s == nil {
		return nil, nil
	}
	return s, s.group(string(group))
}

// StreamConsumers returns the consumers of a group, by name (nil if the
// group does not exist).
func (ks *Keyspace) StreamConsumers(db int, key, group []byte) []StreamConsumerInfo {
	_, g := ks.streamGroupOf(db, key, group)
	if g == nil {
		return nil
	}
	out := make([]StreamConsumerInfo, 0, len(g.consumers))
	for _, c := range g.consumers {
		out = append(out, StreamConsumerInfo{Name: c.name, SeenTime: c.seen, Pending: c.pending})
	}
	return out
}

// StreamConsumer returns one consumer; ok is false if it does not exist.
func (ks *Keyspace) StreamConsumer(db int, key, group []byte, consumer []byte) (ci StreamConsumerInfo, ok bool) {
	_, g := ks.streamGroupOf(db, key, group)
	if g == nil {
		return ci, false
	}
	i, ok := g.consumerIndex(string(consumer))
	if !ok {
		return ci, false
	}
	c := g.consumers[i]
	return StreamConsumerInfo{Name: c.name, SeenTime: c.seen, Pending: c.pending}, true
}

// StreamPEL calls fn for the pending entries of a group with IDs from
// start to end, ascending, of one consumer if consumer is not nil, until
// fn returns false. O(log n + m) over the group's list (a consumer's
// entries are picked out of it).
func (ks *Keyspace) StreamPEL(db int, key, group []byte, consumer []byte, start, end StreamID, fn func(StreamPending) bool) {
	_, g := ks.streamGroupOf(db, key, group)
	if g == nil {
		return
	}
	cid := ^uint32(0)
	if consumer != nil {
		i, ok := g.consumerIndex(string(consumer))
		if !ok {
			return
		}
		cid = g.consumers[i].cid
	}
	i, _ := g.pelIndex(start)
	for ; i < len(g.pel) && !end.Less(g.pel[i].id); i++ {
		p := g.pel[i]
		if consumer != nil && p.cid != cid {
			continue
		}
		c := g.consumerByCID(p.cid)
		if !fn(StreamPending{ID: p.id, Consumer: c.name, DeliveryTime: p.deliveryTime, DeliveryCount: p.deliveryCount}) {
			return
		}
	}
}

// StreamPendingEntry returns the pending entry id of a group; ok is false
// if it is not pending.
func (ks *Keyspace) StreamPendingEntry(db int, key, group []byte, id StreamID) (p StreamPending, ok bool) {
	_, g := ks.streamGroupOf(db, key, group)
	if g == nil {
		return p, false
	}
	i, ok := g.pelIndex(id)
	if !ok {
		return p, false
	}
	e := g.pel[i]
	return StreamPending{ID: e.id, Consumer: g.consumerByCID(e.cid).name, DeliveryTime: e.deliveryTime, DeliveryCount: e.deliveryCount}, true
}

// StreamReadCounter returns the group's entries-read after delivering ids
// (ascending, above its last-delivered ID) as new entries, following
// Redis's streamReplyWithRange.
func (ks *Keyspace) StreamReadCounter(db int, key, group []byte, ids []StreamID) int64 {
	s, g := ks.streamGroupOf(db, key, group)
	if g == nil {
		return -1
	}
	er := g.entriesRead
	for _, id := range ids {
		if er != -1 && !s.tombstonesFrom(id) {
			er++
		} else if s.added != 0 {
			er = s.distance(id)
		}
	}
	return er
}

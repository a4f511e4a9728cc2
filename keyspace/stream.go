package keyspace

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Stream operations (consumer groups' are in stream_group.go). Kinds 70-89 are the stream's (durable, never
// renumber). Bodies, every number a uvarint unless said otherwise:
//
//	opXAdd    flags u8 | ms | seq | nodeDeleted | [masterMs | masterSeq] |
//	          nfields | (field, value)... (fields and values a uvarint
//	          length + bytes). flags bit 0: the entry starts a new node,
//	          whose deleted count starts at nodeDeleted and whose master ID
//	          follows (a rebuild or a RESTORE keeps the nodes it copies);
//	          bit 1: the entry joins the last node (the writer decided, under
//	          its stream-node-max-entries and -bytes); neither bit (logs
//	          written before bit 1 existed): the node rule of the defaults,
//	          streamNodeMaxEntries entries, is applied here. bit 2 (with
//	          bit 0, a rebuild): the node's state follows the master ID,
//	          lpBase | master fields (a uvarint length + an entry's
//	          encoded fields), so the listpack estimate survives the
//	          rebuild: the estimate before this entry's bytes, and the
//	          fields the node compares entries with (see Nodes).
//	opXDel    repeated (ms, seq): the entries to delete (missing ones ignored)
//	opXTrim   flags u8 | ms | seq: deletes every entry below the ID (flags
//	          bit 0: every entry)
//	opXSetID  lastMs | lastSeq | entriesAdded | maxDelMs | maxDelSeq |
//	          firstMs | firstSeq: the stream's counters; creates an empty
//	          stream at a missing key (XSETID, the end of a rebuild)
//
// Every mutation of a stream is one of these, applied by the same code live
// and at recovery, so a stream's in-memory state (nodes included) is a
// function of the operations in the log.
const (
	opXAdd   = 70
	opXDel   = 71
	opXTrim  = 72
	opXSetID = 73
)

// TypeStream is TYPE's reply for a stream.
const TypeStream = "stream"

// streamNodeMaxEntries is Redis 7.0's stream-node-max-entries default,
// the node rule of opXAdd operations that do not say which node they join
// (see the op list). Newer writers decide with StreamNodeLimits.
const streamNodeMaxEntries = 100

// Nodes. Redis keeps a stream as listpacks ("nodes") in a radix tree keyed
// by each node's master ID; approximate trimming (MAXLEN ~, MINID ~) and
// XINFO's radix-tree figures see those nodes. Persimmon has no listpacks
// but keeps the same partition: streamNode counts a node's entries and
// estimates the bytes the node's listpack would have in Redis
// (streamNode.lpBytes), and XADD closes a node where Redis's
// streamAppendItem would: when valid + deleted entries reach
// stream-node-max-entries, or when the estimate plus the new entry's
// field and value lengths reach stream-node-max-bytes.
//
// The estimate is the listpack's size computed with listpack.c's encoding
// rules (6-byte header, end byte, each element's encoding, data and
// backlen; strings that are canonical 64-bit integers as integers) for the
// master entry (count, deleted, the first entry's field names, the zero
// terminator) and every entry added (flags, ID deltas from the master ID,
// the field names unless they equal the master's, the values, lp-count).
// It is exact for a node built by XADD; it differs from Redis's only for
// nodes made by RESTORE of a node with deleted entries (their bytes are
// not carried) and by the count and deleted integers' widths, taken at
// their current values.

// StreamNodeLimits are stream-node-max-entries and stream-node-max-bytes
// (0: no limit of that kind; bytes above 1 GiB count as 1 GiB, as in Redis).
type StreamNodeLimits struct {
	MaxEntries int64
	MaxBytes   int64
}

// streamLPMaxSize is Redis's STREAM_LISTPACK_MAX_SIZE.
const streamLPMaxSize = 1 << 30

// StreamID is a stream entry ID, <ms>-<seq>.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is the largest ID (XRANGE's "+").
var MaxStreamID = StreamID{Ms: ^uint64(0), Seq: ^uint64(0)}

// Cmp compares two IDs: -1, 0 or 1.
func (a StreamID) Cmp(b StreamID) int {
	switch {
	case a.Ms < b.Ms || (a.Ms == b.Ms && a.Seq < b.Seq):
		return -1
	case a == b:
		return 0
	}
	return 1
}

// Less reports whether a sorts before b.
func (a StreamID) Less(b StreamID) bool { return a.Cmp(b) < 0 }

// IsZero reports whether the ID is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Next is the ID right after a; ok is false for MaxStreamID.
func (a StreamID) Next() (StreamID, bool) {
	switch {
	case a.Seq < ^uint64(0):
		return StreamID{a.Ms, a.Seq + 1}, true
	case a.Ms < ^uint64(0):
		return StreamID{a.Ms + 1, 0}, true
	}
	return a, false
}

// Prev is the ID right before a; ok is false for 0-0.
func (a StreamID) Prev() (StreamID, bool) {
	switch {
	case a.Seq > 0:
		return StreamID{a.Ms, a.Seq - 1}, true
	case a.Ms > 0:
		return StreamID{a.Ms - 1, ^uint64(0)}, true
	}
	return a, false
}

// String renders <ms>-<seq>.
func (a StreamID) String() string { return string(a.Append(nil)) }

// Append appends <ms>-<seq> to dst.
func (a StreamID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, a.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, a.Seq, 10)
}

// streamEnt is one entry in the stream's DRAM index: its ID and where its
// fields are in the log (loc: the packed location of the nfields uvarint
// inside the opXAdd that added it; n: the bytes from there to the end of
// the body). The table stores it in a 24-byte streamSlot, its ID
// relative to the slot's chunk (stream_ents.go); the slots hold no pointer,
// so the collector never scans a stream's entries.
type streamEnt struct {
	id  StreamID
	loc uint64
	n   uint32
	// nd is the node it belongs to (streamObj.nodes) in the low 31 bits
	// and streamEntDel: a tombstone (XDEL), dropped at the next
	// compaction.
	nd uint32
}

const streamEntDel = 1 << 31

func (e streamEnt) del() bool    { return e.nd&streamEntDel != 0 }
func (e streamEnt) node() uint32 { return e.nd &^ streamEntDel }

// streamNode counts one node's entries as Redis's listpack node does:
// valid entries and the total, deleted ones included. total 0: the node
// was removed (every entry of it deleted).
type streamNode struct {
	valid, total uint32
	master       StreamID // the ID of the first entry added to it (its key in Redis's radix tree)
	lpBytes      uint32   // the listpack estimate without the count and deleted integers (see Nodes)
	mn           uint32
	mloc         uint64 // the master entry's fields: where the first entry added to it has them
	// mfp is the fingerprint of the master entry's field names
	// (fieldNamesFP; 0 until the first append needs it), so that an
	// append learns whether its fields are the master's without reading
	// the master entry from the log (a cache miss on every XADD).
	mfp uint64
}

// streamObj is a stream. Entries are appended in ID order, so ents is
// sorted: XADD appends in O(1), XRANGE finds its start by binary search
// (O(log n)) and walks on. XDEL leaves tombstones and trimming advances
// head (a chunk of the table it passes is freed: streamEnts.dropFront);
// once tombstones and trimmed slots are more than half the table
// (and at least 32) it is compacted, so the table stays within twice the
// live entries and a walk skips at most as many tombstones as it returns
// entries, amortised.
type streamObj struct {
	ents     streamEnts
	head     int // ents[:head] were trimmed away
	tombs    int // tombstones in ents[head:]
	live     int
	nodes    []streamNode
	nodeBase uint32 // the node number of nodes[0]

	lastID     StreamID       // last-generated-id
	maxDeleted StreamID       // max-deleted-entry-id
	firstID    StreamID       // recorded-first-entry-id
	added      uint64         // entries-added
	bytes      int64          // the entries' live bytes
	groups     []*streamGroup // consumer groups, by name (stream_group.go)
}

// streamEntOverhead is what an entry costs the live-bytes estimate beyond
// its fields (its ID and lengths in the operation).
const streamEntOverhead = 12

func newStream() *streamObj { return &streamObj{} }

func (s *streamObj) typeName() string { return TypeStream }
func (s *streamObj) length() int      { return s.live }
func (s *streamObj) liveBytes() int64 { return s.bytes + s.groupBytes() }
func (s *streamObj) encoding() string { return "stream" }

// lastNode returns the index in nodes of the last node, -1 when there is
// none or it was removed (an appended entry then opens one).
func (s *streamObj) lastNode() int {
	i := len(s.nodes) - 1
	if i < 0 || s.nodes[i].total == 0 {
		return -1
	}
	return i
}

// tailNode returns the index in nodes of the node an appended entry joins
// under the default rule (-1: a new node must be opened), for opXAdd
// operations that do not say.
func (s *streamObj) tailNode() int {
	i := s.lastNode()
	if i >= 0 && s.nodes[i].total >= streamNodeMaxEntries {
		return -1
	}
	return i
}

// opXAdd flag bits.
const (
	xaddNewNode   = 1
	xaddJoinNode  = 2
	xaddNodeState = 4
)

// nodeState is what an opXAdd with xaddNodeState carries (see the op list).
type nodeState struct {
	lpBase uint32
	mloc   uint64 // the master fields in the log
	mn     uint32
}

// opensNode is streamAppendItem's decision: whether an entry with fields
// opens a new node under lim.
func (s *streamObj) opensNode(fields [][]byte, lim StreamNodeLimits) bool {
	i := s.lastNode()
	if i < 0 {
		return true
	}
	nd := &s.nodes[i]
	maxBytes := lim.MaxBytes
	if maxBytes <= 0 || maxBytes > streamLPMaxSize {
		maxBytes = streamLPMaxSize
	}
	var tot int64
	for _, f := range fields {
		tot += int64(len(f))
	}
	if nd.lpEstimate()+tot >= maxBytes {
		return true
	}
	return lim.MaxEntries > 0 && int64(nd.total) >= lim.MaxEntries
}

// append adds an entry whose ID is above every other; raw is its encoded
// fields (at loc in the log), flags the opXAdd's.
func (s *streamObj) append(ks *Keyspace, id StreamID, loc uint64, raw []byte, flags byte, nodeDeleted uint32, master StreamID, st *nodeState) {
	var i int
	switch {
	case flags&xaddNewNode != 0:
		i = -1
	case flags&xaddJoinNode != 0:
		i = s.lastNode()
	default:
		i = s.tailNode()
	}
	if i < 0 {
		if flags&xaddNewNode == 0 {
			master = id
		}
		nd := streamNode{total: nodeDeleted, master: master, mloc: loc, mn: uint32(len(raw)), lpBytes: lpMasterBytes(raw)}
		if st != nil {
			nd.mloc, nd.mn, nd.lpBytes = st.mloc, st.mn, st.lpBase
		}
		s.nodes = append(s.nodes, nd)
		i = len(s.nodes) - 1
	}
	nd := &s.nodes[i]
	fp, names, values := entryShape(raw)
	if nd.mfp == 0 {
		nd.mfp = fp
		if nd.mloc != loc {
			nd.mfp = fieldNamesFP(ks.rawAt(nd.mloc, int(nd.mn)))
		}
	}
	nd.lpBytes += lpEntryBytesShaped(raw, names, values, fp == nd.mfp, id, nd.master)
	nd.valid++
	nd.total++
	n := len(raw)
	s.ents.push(streamEnt{id: id, loc: loc, n: uint32(n), nd: s.nodeBase + uint32(i)})
	s.live++
	s.bytes += int64(n) + streamEntOverhead
	if s.live == 1 {
		s.firstID = id
	}
	s.lastID = id
	s.added++
}

// search returns the index in ents of the first entry (tombstones
// included) at or above id.
func (s *streamObj) search(id StreamID) int {
	lo, hi := s.head, s.ents.len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.ents.id(m).Less(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// find returns the index of the live entry id, or -1.
func (s *streamObj) find(id StreamID) int {
	i := s.search(id)
	if i < s.ents.len() {
		if e := s.ents.at(i); e.id == id && !e.del() {
			return i
		}
	}
	return -1
}

// kill deletes the live entry at i from the counts (the caller marks or
// drops the slot).
func (s *streamObj) kill(i int) {
	e := s.ents.at(i)
	nd := &s.nodes[e.node()-s.nodeBase]
	nd.valid--
	if nd.valid == 0 {
		nd.total = 0 // Redis frees a node whose last entry goes
	}
	s.live--
	s.bytes -= int64(e.n) + streamEntOverhead
}

// del deletes the live entry at i (XDEL).
func (s *streamObj) del(i int) {
	s.kill(i)
	s.ents.markDeleted(i)
	e := s.ents.at(i)
	s.tombs++
	if s.maxDeleted.Less(e.id) {
		s.maxDeleted = e.id
	}
	if e.id == s.firstID || s.live == 0 {
		s.refreshFirst()
	}
}

// firstLive returns the index of the first live entry, or ents.len().
func (s *streamObj) firstLive() int {
	i := s.head
	for i < s.ents.len() && s.ents.at(i).del() {
		i++
	}
	return i
}

// refreshFirst recomputes recorded-first-entry-id as Redis does after a
// delete or a trim: the first live entry, or 0-0 for an empty stream.
func (s *streamObj) refreshFirst() {
	if i := s.firstLive(); i < s.ents.len() {
		s.firstID = s.ents.id(i)
	} else {
		s.firstID = StreamID{}
	}
}

// trimBelow deletes every entry below id (all of them with all).
func (s *streamObj) trimBelow(id StreamID, all bool) {
	for s.head < s.ents.len() && (all || s.ents.id(s.head).Less(id)) {
		if s.ents.at(s.head).del() {
			s.tombs--
		} else {
			s.kill(s.head)
		}
		s.head++
		if s.head == streamChunk {
			s.ents.dropFront()
			s.head = 0
		}
	}
	s.refreshFirst()
}

// compact drops trimmed slots, tombstones and removed head nodes once they
// outweigh the live entries (see streamObj).
func (s *streamObj) compact() {
	for len(s.nodes) > 1 && s.nodes[0].total == 0 {
		s.nodes = s.nodes[1:]
		s.nodeBase++
	}
	if len(s.nodes) == 1 && s.nodes[0].total == 0 && s.live == 0 {
		s.nodes = s.nodes[:0]
		s.nodeBase++
	}
	dead := s.head + s.tombs
	if dead < 32 || dead*2 < s.ents.len() {
		return
	}
	var out streamEnts
	for i := s.head; i < s.ents.len(); i++ {
		if e := s.ents.at(i); !e.del() {
			out.push(e)
		}
	}
	s.ents, s.head, s.tombs = out, 0, 0
}

// nodeCount is the number of nodes holding entries (XINFO STREAM's
// radix-tree-keys).
func (s *streamObj) nodeCount() int {
	n := 0
	for _, nd := range s.nodes {
		if nd.total > 0 {
			n++
		}
	}
	return n
}

// radixNodes is XINFO STREAM's radix-tree-nodes: the number of nodes of
// Redis's radix tree (rax) keyed by the nodes' master IDs as 16 big-endian
// bytes, in the compact form rax keeps: a run of bytes all keys share is
// one compressed node, a byte where they differ one node with a child per
// value, and each key ends in a leaf. An empty tree is one node.
func (s *streamObj) radixNodes() int {
	var keys [][16]byte
	for _, nd := range s.nodes {
		if nd.total > 0 {
			var k [16]byte
			binary.BigEndian.PutUint64(k[:8], nd.master.Ms)
			binary.BigEndian.PutUint64(k[8:], nd.master.Seq)
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return 1
	}
	var count func(keys [][16]byte, pos int) int
	count = func(keys [][16]byte, pos int) int {
		if pos == 16 {
			return 1
		}
		first, last := keys[0], keys[len(keys)-1] // sorted: they bound the set
		if first[pos] == last[pos] {
			c := pos
			for c < 16 && first[c] == last[c] {
				c++
			}
			return 1 + count(keys, c)
		}
		n := 1
		for i := 0; i < len(keys); {
			j := i + 1
			for j < len(keys) && keys[j][pos] == keys[i][pos] {
				j++
			}
			n += count(keys[i:j], pos+1)
			i = j
		}
		return n
	}
	return count(keys, 0)
}

// rawAt returns n bytes of the log at a packed location.
func (ks *Keyspace) rawAt(loc uint64, n int) []byte { return ks.hashRawAt(loc, n) }

func (s *streamObj) rebuild(ks *Keyspace, b *Batch, db int, key []byte) {
	// Per node, the estimate its live entries add: the rest (master
	// entry, deleted entries) is the base the rebuilt node starts from.
	live := make([]uint32, len(s.nodes))
	for i := s.head; i < s.ents.len(); i++ {
		if e := s.ents.at(i); !e.del() {
			nd := &s.nodes[e.node()-s.nodeBase]
			live[e.node()-s.nodeBase] += lpEntryBytes(ks.rawAt(e.loc, int(e.n)), ks.rawAt(nd.mloc, int(nd.mn)), e.id, nd.master)
		}
	}
	prev := ^uint32(0)
	for i := s.head; i < s.ents.len(); i++ {
		e := s.ents.at(i)
		if e.del() {
			continue
		}
		raw := ks.rawAt(e.loc, int(e.n))
		if e.node() == prev {
			b.xAddRaw(db, key, xaddJoinNode, e.id, 0, StreamID{}, nil, raw, nil)
			continue
		}
		prev = e.node()
		nd := &s.nodes[e.node()-s.nodeBase]
		st := &nodeState{lpBase: nd.lpBytes - live[e.node()-s.nodeBase]}
		b.xAddRaw(db, key, xaddNewNode|xaddNodeState, e.id, nd.total-nd.valid, nd.master, st, raw, ks.rawAt(nd.mloc, int(nd.mn)))
	}
	b.XSetID(db, key, StreamMeta{LastID: s.lastID, EntriesAdded: s.added, MaxDeletedID: s.maxDeleted, FirstID: s.firstID})
	s.rebuildGroups(b, db, key)
}

func registerStreamOps(m map[byte]objectApplier) {
	registerOp(m, opXAdd, applyXAdd)
	registerOp(m, opXDel, applyXDel)
	registerOp(m, opXTrim, applyXTrim)
	registerOp(m, opXSetID, applyXSetID)
	registerStreamGroupOps(m)
}

// readIDAt decodes ms and seq uvarints at p[i:].
func readIDAt(p []byte, i int) (StreamID, int, bool) {
	ms, w := binary.Uvarint(p[i:])
	if w <= 0 {
		return StreamID{}, i, false
	}
	i += w
	seq, w := binary.Uvarint(p[i:])
	if w <= 0 {
		return StreamID{}, i, false
	}
	return StreamID{ms, seq}, i + w, true
}

func appendID(dst []byte, id StreamID) []byte {
	dst = binary.AppendUvarint(dst, id.Ms)
	return binary.AppendUvarint(dst, id.Seq)
}

// streamFor returns e's stream, creating one when e is nil; errOpType for
// another type.
func (ks *Keyspace) streamFor(o op, e *entry, create bool) (*entry, *streamObj, error) {
	if e == nil {
		if !create {
			return nil, nil, nil
		}
		e = ks.createObject(o.db, o.key, newStream(), o.loc)
	}
	if e.obj == nil {
		return nil, nil, fmt.Errorf("%w: stream op %d on a string", errOpType, o.kind)
	}
	s, ok := e.obj.coll.(*streamObj)
	if !ok {
		return nil, nil, fmt.Errorf("%w: stream op %d on a %s", errOpType, o.kind, ks.typeOf(e))
	}
	return e, s, nil
}

// streamChanged re-counts the live bytes of e's stream. An empty stream
// stays: unlike other collections, a stream is deleted only by DEL (its
// counters and, later, its groups outlive its entries).
func (ks *Keyspace) streamChanged(e *entry, s *streamObj) {
	s.compact()
	n, old := s.liveBytes(), e.obj.bytes
	ks.liveBytes += n - old
	e.obj.bytes = n
	ks.anchorBytesChanged(e, old)
}

func applyXAdd(ks *Keyspace, o op, e *entry) error {
	if e != nil && e.obj == nil {
		return fmt.Errorf("%w: XADD on a string", errOpType)
	}
	p := o.body
	if len(p) < 1 {
		return fmt.Errorf("%w: XADD body", errBadOp)
	}
	flags := p[0]
	id, i, ok := readIDAt(p, 1)
	if !ok {
		return fmt.Errorf("%w: XADD id", errBadOp)
	}
	nodeDeleted, w := binary.Uvarint(p[i:])
	if w <= 0 || nodeDeleted >= 1<<31 {
		return fmt.Errorf("%w: XADD node", errBadOp)
	}
	i += w
	master := id
	var st *nodeState
	if flags&xaddNewNode != 0 {
		if master, i, ok = readIDAt(p, i); !ok {
			return fmt.Errorf("%w: XADD node master", errBadOp)
		}
		if flags&xaddNodeState != 0 {
			base, w := binary.Uvarint(p[i:])
			if w <= 0 || base >= 1<<32 {
				return fmt.Errorf("%w: XADD node state", errBadOp)
			}
			i += w
			mfields, j, ok := readBytes(p, i)
			if !ok {
				return fmt.Errorf("%w: XADD node state", errBadOp)
			}
			st = &nodeState{lpBase: uint32(base), mloc: o.loc + uint64(o.bodyOff+j-len(mfields)), mn: uint32(len(mfields))}
			i = j
		}
	}
	e, s, err := ks.streamFor(o, e, true)
	if err != nil {
		return err
	}
	if !s.lastID.Less(id) {
		return fmt.Errorf("%w: XADD %s at or below the top item %s", errStaleOp, id, s.lastID)
	}
	s.append(ks, id, o.loc+uint64(o.bodyOff+i), p[i:], flags, uint32(nodeDeleted), master, st)
	ks.streamChanged(e, s)
	if !ks.cleaning {
		ks.keyReady(o.db, o.key)
	}
	return nil
}

func applyXDel(ks *Keyspace, o op, e *entry) error {
	e, s, err := ks.streamFor(o, e, false)
	if s == nil {
		return err
	}
	for i := 0; i < len(o.body); {
		id, j, ok := readIDAt(o.body, i)
		if !ok {
			return fmt.Errorf("%w: XDEL id", errBadOp)
		}
		if k := s.find(id); k >= 0 {
			s.del(k)
		}
		i = j
	}
	ks.streamChanged(e, s)
	return nil
}

func applyXTrim(ks *Keyspace, o op, e *entry) error {
	e, s, err := ks.streamFor(o, e, false)
	if s == nil {
		return err
	}
	if len(o.body) < 1 {
		return fmt.Errorf("%w: XTRIM body", errBadOp)
	}
	id, _, ok := readIDAt(o.body, 1)
	if !ok {
		return fmt.Errorf("%w: XTRIM id", errBadOp)
	}
	s.trimBelow(id, o.body[0]&1 != 0)
	ks.streamChanged(e, s)
	return nil
}

func applyXSetID(ks *Keyspace, o op, e *entry) error {
	var ids [4]StreamID
	i := 0
	last, i, ok := readIDAt(o.body, i)
	if !ok {
		return fmt.Errorf("%w: XSETID body", errBadOp)
	}
	added, w := binary.Uvarint(o.body[i:])
	if w <= 0 {
		return fmt.Errorf("%w: XSETID body", errBadOp)
	}
	i += w
	for k := 1; k < 3; k++ {
		if ids[k], i, ok = readIDAt(o.body, i); !ok {
			return fmt.Errorf("%w: XSETID body", errBadOp)
		}
	}
	e, s, err := ks.streamFor(o, e, true)
	if err != nil {
		return err
	}
	s.lastID, s.added, s.maxDeleted, s.firstID = last, added, ids[1], ids[2]
	ks.streamChanged(e, s)
	return nil
}

// XAdd appends an operation adding an entry with the given ID (above the
// stream's last ID; the caller checks) and fields (field, value pairs),
// creating the stream if it is missing; the node it joins is decided with
// the default limits when it is applied (see XAddNode).
func (b *Batch) XAdd(db int, key []byte, id StreamID, fields [][]byte) {
	b.xAdd(db, key, 0, id, 0, StreamID{}, nil, nil, fields, nil)
}

// XAddNode is XAdd with the node decided by the caller: open makes the
// entry open a new node whose master ID is master and which counts deleted
// entries already (a RESTORE copies nodes so); otherwise it joins the last
// node (one is opened if there is none). XADD decides with
// Keyspace.XAddOpensNode.
func (b *Batch) XAddNode(db int, key []byte, id StreamID, fields [][]byte, open bool, master StreamID, deleted uint32) {
	if open {
		b.xAdd(db, key, xaddNewNode, id, deleted, master, nil, nil, fields, nil)
		return
	}
	b.xAdd(db, key, xaddJoinNode, id, 0, StreamID{}, nil, nil, fields, nil)
}

// xAddRaw appends an opXAdd whose fields are already encoded (a rebuild),
// with the node state st and master fields mraw when flags has
// xaddNodeState.
func (b *Batch) xAddRaw(db int, key []byte, flags byte, id StreamID, nodeDeleted uint32, master StreamID, st *nodeState, raw, mraw []byte) {
	b.xAdd(db, key, flags, id, nodeDeleted, master, st, mraw, nil, raw)
}

// xAdd encodes an opXAdd: the fields from fields, or raw when it is not nil.
func (b *Batch) xAdd(db int, key []byte, flags byte, id StreamID, nodeDeleted uint32, master StreamID, st *nodeState, mraw []byte, fields [][]byte, raw []byte) {
	if raw == nil && len(fields)%2 != 0 {
		panic("keyspace: XAdd needs field/value pairs")
	}
	b.head(opXAdd, db)
	b.bytes(key)
	n := 1 + uvarintLen(id.Ms) + uvarintLen(id.Seq) + uvarintLen(uint64(nodeDeleted))
	if flags&xaddNewNode != 0 {
		n += uvarintLen(master.Ms) + uvarintLen(master.Seq)
	}
	if flags&xaddNodeState != 0 {
		n += uvarintLen(uint64(st.lpBase)) + uvarintLen(uint64(len(mraw))) + len(mraw)
	}
	if raw != nil {
		n += len(raw)
	} else {
		n += uvarintLen(uint64(len(fields) / 2))
		for _, f := range fields {
			n += uvarintLen(uint64(len(f))) + len(f)
		}
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(n))
	b.buf = append(b.buf, flags)
	b.buf = appendID(b.buf, id)
	b.buf = binary.AppendUvarint(b.buf, uint64(nodeDeleted))
	if flags&xaddNewNode != 0 {
		b.buf = appendID(b.buf, master)
	}
	if flags&xaddNodeState != 0 {
		b.buf = binary.AppendUvarint(b.buf, uint64(st.lpBase))
		b.bytes(mraw)
	}
	if raw != nil {
		b.buf = append(b.buf, raw...)
		return
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(len(fields)/2))
	for _, f := range fields {
		b.bytes(f)
	}
}

// XAddOpensNode reports whether XADD of an entry with fields to the stream
// at key opens a new node under lim, as Redis's streamAppendItem decides
// (see Nodes); true for a missing stream.
func (ks *Keyspace) XAddOpensNode(db int, key []byte, fields [][]byte, lim StreamNodeLimits) bool {
	s, _ := ks.stream(db, key)
	return s == nil || s.opensNode(fields, lim)
}

// StreamForAdd is Stream and XAddOpensNode from one lookup of the key, as
// XADD needs them.
func (ks *Keyspace) StreamForAdd(db int, key []byte, fields [][]byte, lim StreamNodeLimits) (m StreamMeta, ok, opens bool, err error) {
	s, err := ks.stream(db, key)
	if s == nil {
		return m, false, true, err
	}
	return s.meta(), true, s.opensNode(fields, lim), nil
}

// XDel appends an operation deleting entries (missing ones are ignored).
func (b *Batch) XDel(db int, key []byte, ids []StreamID) {
	var body []byte
	for _, id := range ids {
		body = appendID(body, id)
	}
	b.ObjectOp(opXDel, db, key, body)
}

// XTrim appends an operation deleting every entry below keepFrom, or every
// entry with all (see Keyspace.StreamTrimPlan).
func (b *Batch) XTrim(db int, key []byte, keepFrom StreamID, all bool) {
	body := []byte{0}
	if all {
		body[0] = 1
	}
	b.ObjectOp(opXTrim, db, key, appendID(body, keepFrom))
}

// XSetID appends an operation setting a stream's counters (LastID,
// EntriesAdded, MaxDeletedID, FirstID of m; the rest is ignored), creating
// an empty stream if the key is missing.
func (b *Batch) XSetID(db int, key []byte, m StreamMeta) {
	body := appendID(nil, m.LastID)
	body = binary.AppendUvarint(body, m.EntriesAdded)
	body = appendID(body, m.MaxDeletedID)
	body = appendID(body, m.FirstID)
	b.ObjectOp(opXSetID, db, key, body)
}

// StreamMeta is what XINFO STREAM reports of a stream's state.
type StreamMeta struct {
	Length       int
	LastID       StreamID // last-generated-id
	MaxDeletedID StreamID // max-deleted-entry-id
	FirstID      StreamID // recorded-first-entry-id
	EntriesAdded uint64
	Groups       int
}

// stream returns the stream at key (nil if missing) or ErrWrongType.
func (ks *Keyspace) stream(db int, key []byte) (*streamObj, error) {
	e, err := ks.lookupObject(db, key, TypeStream)
	if e == nil {
		return nil, err
	}
	return e.obj.coll.(*streamObj), nil
}

// Stream returns the state of the stream at key; ok is false when the key
// does not exist, err is ErrWrongType for another type.
func (ks *Keyspace) Stream(db int, key []byte) (m StreamMeta, ok bool, err error) {
	s, err := ks.stream(db, key)
	if s == nil {
		return m, false, err
	}
	return s.meta(), true, nil
}

func (s *streamObj) meta() StreamMeta {
	return StreamMeta{Length: s.live, LastID: s.lastID, MaxDeletedID: s.maxDeleted, FirstID: s.firstID,
		EntriesAdded: s.added, Groups: len(s.groups)}
}

// OnKeyTouched adds fn to the functions called whenever a key is written,
// deleted or expires (key nil: every key of db, at FLUSHDB, FLUSHALL,
// SWAPDB), with the lock held while the batch is applied; not for the
// cleaner's rewrites. A client blocked in XREADGROUP must learn that its
// stream or group went away (Redis answers it with an error), which no
// push signals; client-side caching invalidates the key. fn must only take
// note. Hooks run in the order they were added. Call with the lock held.
func (ks *Keyspace) OnKeyTouched(fn func(db int, key []byte)) {
	prev := ks.touchedFn
	if prev == nil {
		ks.touchedFn = fn
		return
	}
	ks.touchedFn = func(db int, key []byte) {
		prev(db, key)
		fn(db, key)
	}
}

// StreamRadix returns XINFO STREAM's radix-tree-keys (the nodes holding
// entries) and radix-tree-nodes (see radixNodes) for the stream at key.
// O(nodes): Stream, which XADD calls, leaves them out to stay O(1).
func (ks *Keyspace) StreamRadix(db int, key []byte) (keys, nodes int) {
	s, _ := ks.stream(db, key)
	if s == nil {
		return 0, 1
	}
	return s.nodeCount(), s.radixNodes()
}

// StreamHas reports whether the stream at key holds the entry id.
func (ks *Keyspace) StreamHas(db int, key []byte, id StreamID) bool {
	s, _ := ks.stream(db, key)
	return s != nil && s.find(id) >= 0
}

// fields decodes an entry's field/value pairs into dst (aliasing the
// mapping).
func (ks *Keyspace) streamFields(e streamEnt, dst [][]byte) [][]byte {
	p := ks.rawAt(e.loc, int(e.n))
	n, i := binary.Uvarint(p)
	dst = dst[:0]
	for k := uint64(0); k < 2*n; k++ {
		var b []byte
		b, i, _ = readBytes(p, i)
		dst = append(dst, b)
	}
	return dst
}

// XRange calls fn for the entries of the stream at key with IDs in [start,
// end], ascending (descending with rev), at most count of them (count < 0:
// all). fields alias the mapping and the slice is reused between calls.
// O(log n + m). A missing key calls fn for nothing.
func (ks *Keyspace) XRange(db int, key []byte, start, end StreamID, count int, rev bool, fn func(id StreamID, fields [][]byte)) error {
	s, err := ks.stream(db, key)
	if s == nil || end.Less(start) || count == 0 {
		return err
	}
	var buf [][]byte
	if !rev {
		for i := s.search(start); i < s.ents.len() && !end.Less(s.ents.id(i)) && count != 0; i++ {
			if e := s.ents.at(i); !e.del() {
				buf = ks.streamFields(e, buf)
				fn(e.id, buf)
				count--
			}
		}
		return nil
	}
	i := s.search(end)
	if i == s.ents.len() || end.Less(s.ents.id(i)) {
		i--
	}
	for ; i >= s.head && !s.ents.id(i).Less(start) && count != 0; i-- {
		if e := s.ents.at(i); !e.del() {
			buf = ks.streamFields(e, buf)
			fn(e.id, buf)
			count--
		}
	}
	return nil
}

// StreamNodeEntries calls fn for the live entries of the stream at key in
// ID order, each with its node: a number that changes from one node to the
// next, the node's master ID and its deleted-entry count. fields alias
// the mapping and the slice is reused between calls. O(n).
func (ks *Keyspace) StreamNodeEntries(db int, key []byte, fn func(node uint32, master StreamID, deleted uint32, id StreamID, fields [][]byte)) error {
	s, err := ks.stream(db, key)
	if s == nil {
		return err
	}
	var buf [][]byte
	for i := s.head; i < s.ents.len(); i++ {
		e := s.ents.at(i)
		if e.del() {
			continue
		}
		nd := &s.nodes[e.node()-s.nodeBase]
		buf = ks.streamFields(e, buf)
		fn(e.node(), nd.master, nd.total-nd.valid, e.id, buf)
	}
	return nil
}

// StreamTrim describes a trim (XTRIM, XADD's MAXLEN/MINID): by MaxLen (when
// ByMinID is false) or MinID, Approx for "~" (whole nodes only), Limit for
// LIMIT (0: none; only with Approx).
type StreamTrim struct {
	ByMinID bool
	MaxLen  int64
	MinID   StreamID
	Approx  bool
	Limit   int64
	// AddOpensNode: the entry StreamTrimPlan takes as added opens a node
	// (Keyspace.XAddOpensNode said so); else it joins the last one.
	AddOpensNode bool
}

// StreamTrimPlan returns what trimming the stream at key by t removes, as
// Redis 7.0's streamTrim decides it: the number of entries and the
// operation's argument (keepFrom, or all). With adding, the stream is
// taken with one more entry, add, appended first (XADD trims after
// adding). removed 0 means nothing to write.
func (ks *Keyspace) StreamTrimPlan(db int, key []byte, adding bool, add StreamID, t StreamTrim) (keepFrom StreamID, all bool, removed int64) {
	s, _ := ks.stream(db, key)
	if s == nil && !adding {
		return StreamID{}, false, 0
	}
	if s == nil {
		s = newStream()
	}
	// The live entries in order, node by node, with the added one last.
	type vent struct {
		id   StreamID
		node int64
	}
	tail := int64(-1)
	if ti := s.lastNode(); ti >= 0 && !t.AddOpensNode {
		tail = int64(s.nodeBase) + int64(ti)
	}
	addNode := tail
	if addNode < 0 {
		addNode = int64(s.nodeBase) + int64(len(s.nodes))
	}
	length := int64(s.live)
	if adding {
		length++
	}
	i := s.head
	next := func() (vent, bool) {
		for ; i < s.ents.len(); i++ {
			if e := s.ents.at(i); !e.del() {
				i++
				return vent{e.id, int64(e.node())}, true
			}
		}
		if adding && i == s.ents.len() {
			i++
			return vent{add, addNode}, true
		}
		return vent{}, false
	}
	// nodeValid counts a node's live entries, the added one included.
	nodeValid := func(node int64) int64 {
		var n int64
		if k := node - int64(s.nodeBase); k >= 0 && k < int64(len(s.nodes)) {
			n = int64(s.nodes[k].valid)
		}
		if adding && node == addNode {
			n++
		}
		return n
	}
	cur, ok := next()
	for ok {
		if !t.ByMinID && length-removed <= t.MaxLen {
			break
		}
		// The node of cur, whole.
		valid := nodeValid(cur.node)
		last := cur
		after, more := next()
		for more && after.node == cur.node {
			last = after
			after, more = next()
		}
		removeNode := false
		if t.ByMinID {
			removeNode = last.id.Less(t.MinID)
		} else {
			removeNode = length-removed-valid >= t.MaxLen
		}
		if removeNode {
			if t.Limit > 0 && removed+valid > t.Limit {
				break
			}
			removed += valid
			if !more {
				return StreamID{}, true, removed
			}
			cur, ok = after, more
			continue
		}
		if t.Approx {
			break
		}
		// Exact: the entries of this node below the threshold go.
		if t.ByMinID {
			return t.MinID, false, removed + ks.streamCountBelow(s, adding, add, cur.id, t.MinID)
		}
		drop := length - removed - t.MaxLen
		// The drop-th live entry from cur is the first kept: walk.
		i = s.search(cur.id)
		var e vent
		for k := int64(0); k <= drop; k++ {
			e, _ = next()
		}
		return e.id, false, removed + drop
	}
	if removed == 0 {
		return StreamID{}, false, 0
	}
	return cur.id, false, removed
}

// streamCountBelow counts the live entries in [from, below), the added one
// included.
func (ks *Keyspace) streamCountBelow(s *streamObj, adding bool, add, from, below StreamID) int64 {
	var n int64
	for i := s.search(from); i < s.ents.len() && s.ents.id(i).Less(below); i++ {
		if !s.ents.at(i).del() {
			n++
		}
	}
	if adding && add.Less(below) && !add.Less(from) {
		n++
	}
	return n
}

func (s *streamObj) String() string {
	return fmt.Sprintf("stream(len=%d last=%s nodes=%d)", s.live, s.lastID, s.nodeCount())
}

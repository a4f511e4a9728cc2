package commands

import (
	"strings"

	"github.com/persimmon-db/persimmon/hll"
	"github.com/persimmon-db/persimmon/keyspace"
)

// HyperLogLog commands (redis.io group "hyperloglog"). An HLL is a string
// value in Redis's format (package hll), so GET/SET move it between Redis
// and Persimmon unchanged.
//
// Each write is one batch. PFADD on an existing HLL logs the registers it
// raises (keyspace's opHLLAdd, a few bytes; a sparse HLL under
// patchThreshold is rewritten whole instead); PFMERGE's change to a large
// HLL (a dense one is 12304 bytes) logs only the changed byte spans as
// SETRANGE patches; a small one is rewritten whole, keeping its TTL.
//
// PFCOUNT of one key whose cached cardinality is invalid computes it and,
// as Redis does, writes it back into the header. Persimmon writes that
// durably (an 8-byte patch, committed before the reply): the value's bytes
// then stay what Redis would hold, so a GET, a DUMP or a replica sees the
// same string whether or not the server restarted, at the cost of one
// small log write per PFCOUNT after a change (PFCOUNT of an unchanged HLL
// reads the cache and writes nothing).

const (
	errHLLCorrupt = "INVALIDOBJ Corrupted HLL object detected"
	errHLLType    = "WRONGTYPE Key is not a valid HyperLogLog string value."
)

func hllCommands() []Command {
	const w, r, dm, fast, adm = FlagWrite, FlagReadonly, FlagDenyOOM, FlagFast, FlagAdmin
	const g = "hyperloglog"
	return []Command{
		{Name: "pfadd", Arity: -2, Flags: w | dm | fast, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", Run: cmdPFAdd,
			KeySpecs: key1(KeyRW | KeyInsert)},
		{Name: "pfcount", Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", Run: cmdPFCount,
			KeySpecs: []KeySpec{{Notes: "RW because it may change the internal representation of the key, and propagate to replicas",
				Flags: KeyRW | KeyAccess, Index: 1, LastKey: -1, KeyStep: 1}}},
		{Name: "pfmerge", Arity: -2, Flags: w | dm, FirstKey: 1, LastKey: -1, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Merges one or more HyperLogLog values into a single key.", Run: cmdPFMerge, CountsReads: true,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyInsert, 1), keyRange(KeyRO|KeyAccess, 2, -1, 1)}},
		{Name: "pfdebug", Arity: 3, Flags: w | dm | adm, FirstKey: 2, LastKey: 2, Step: 1, Group: g, Since: "2.8.9",
			Summary: "Internal commands for debugging HyperLogLog values.", Run: cmdPFDebug,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess, 2)}},
		{Name: "pfselftest", Arity: 1, Flags: adm, Group: g, Since: "2.8.9",
			Summary: "An internal command for testing HyperLogLog values.", Run: cmdPFSelfTest},
	}
}

// hllAt reads the HLL at key (nil when the key does not exist). The
// bytes may alias the keyspace's mapping: valid while the lock is held,
// never to be changed (copy them first). On a wrong type or a string that is
// not an HLL it has written the error and returns ok false.
func hllAt(c *Client, key []byte) (v []byte, ok bool) {
	v, _, acc, ok := hllAtExpiry(c, key)
	c.KS.RecordAccess(acc)
	return v, ok
}

// hllAtExpiry is hllAt with the key's absolute expiry (0 = none) and the
// access to the key it leaves to the caller (keyspace HLLValue): to
// record with RecordAccess unless the value is rewritten whole, so that
// OBJECT FREQ counts one access per command, as Redis does.
func hllAtExpiry(c *Client, key []byte) (v []byte, expireAt int64, acc keyspace.PendingAccess, ok bool) {
	val, expireAt, acc, found, err := c.KS.HLLValue(c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return nil, 0, acc, false
	}
	if !found {
		return nil, 0, acc, true
	}
	if hll.Check(val) != nil {
		c.KS.RecordAccess(acc)
		c.WriteError(errHLLType)
		return nil, 0, keyspace.PendingAccess{}, false
	}
	return val, expireAt, acc, true
}

// hllSparseMax is hll-sparse-max-bytes.
func hllSparseMax(c *Client) int {
	if c.Srv == nil {
		return hll.DefaultSparseMaxBytes
	}
	return c.HLLSparseMaxBytes()
}

// writeHLL adds to a new batch the write that turns old (nil: the key did
// not exist) into v, commits it and reports success (else the error is
// written). Equal-length large values are patched: the header's cache
// bytes and the span of changed registers, two SETRANGE operations at
// most.
func writeHLL(c *Client, key, old, v []byte, mark int) bool {
	b := c.KS.NewBatch()
	switch {
	case old == nil:
		b.Set(c.DB, key, v, 0)
	case len(old) == len(v) && len(v) >= patchThreshold:
		for _, s := range diffSpans(old, v, 64) {
			b.SetRange(c.DB, key, int64(s[0]), v[s[0]:s[1]])
		}
		if b.Len() == 0 {
			return true
		}
	default:
		b.Set(c.DB, key, v, expireAtOf(c, key))
	}
	return commitReply(c, b, mark)
}

// diffSpans returns the [from, to) byte ranges where a and b (equal
// lengths) differ, joining ranges less than gap bytes apart.
func diffSpans(a, b []byte, gap int) [][2]int {
	var out [][2]int
	for i := 0; i < len(a); i++ {
		if a[i] == b[i] {
			continue
		}
		j := i + 1
		for j < len(a) && a[j] != b[j] {
			j++
		}
		if n := len(out); n > 0 && i-out[n-1][1] < gap {
			out[n-1][1] = j
		} else {
			out = append(out, [2]int{i, j})
		}
		i = j
	}
	return out
}

// PFADD key [element ...]. A new key, and a sparse one under
// patchThreshold bytes, is written whole; a change to a larger one logs
// only the registers it raises (Batch.HLLAdd). A small sparse HLL is
// copied into the batch's scratch buffer and its elements added there
// with hll.Add, one walk of the opcodes per element (reading each
// register first with hll.Get walked them twice); if no register rose,
// nothing is written. For a larger HLL, which registers an element raises
// is read from the stored bytes in place (hll.Get), with no copy, so a
// PFADD that changes nothing writes nothing (Redis replies 0 and does not
// propagate it) and a large sparse HLL is never copied by the command: the
// logged operation makes its new bytes when it is applied. Two elements
// of one PFADD on the same register may both be logged; the apply raises
// registers in order, so the second is then a no-op.
func cmdPFAdd(c *Client, args [][]byte) {
	key := args[1]
	old, expireAt, acc, ok := hllAtExpiry(c, key)
	if !ok {
		return
	}
	maxSparse := hllSparseMax(c)
	if old == nil {
		v := hll.New()
		for _, e := range args[2:] {
			v, _, _ = hll.Add(v, e, maxSparse) // a fresh HLL always decodes
		}
		hll.Invalidate(v)
		mark := len(c.Out)
		c.WriteInt(1)
		b := c.KS.NewBatch()
		b.Set(c.DB, key, v, 0)
		if commitReply(c, b, mark) {
			c.Notify(notifyString, "pfadd", key)
		}
		return
	}
	if !hll.IsDense(old) && len(old) < patchThreshold {
		// A small sparse HLL is cheaper rewritten whole than moved into
		// DRAM as a patched string (measured: a PFADD through opHLLAdd
		// was no cheaper in server CPU once this path stopped allocating,
		// and DRAM took ~280 more bytes a key). Room for the opcodes the
		// splits add (at most 4 bytes each, and no more than the sparse
		// limit: hll.Set converts to dense rather than grow past it), so
		// hll.Set grows v in place.
		b := c.KS.NewBatch()
		v := append(b.Scratch(min(len(old)+4*len(args[2:]), max(len(old), maxSparse)+4)), old...)
		changed := false
		for _, e := range args[2:] {
			var ch bool
			var err error
			if v, ch, err = hll.Add(v, e, maxSparse); err != nil {
				c.KS.RecordAccess(acc)
				c.WriteError(errHLLCorrupt) // nothing written: v is a copy
				return
			}
			changed = changed || ch
		}
		if !changed {
			c.KS.RecordAccess(acc)
			c.WriteInt(0)
			return
		}
		hll.Invalidate(v) // the write below records the access
		mark := len(c.Out)
		c.WriteInt(1)
		b.Set(c.DB, key, v, expireAt)
		if commitReply(c, b, mark) {
			c.Notify(notifyString, "pfadd", key)
		}
		return
	}
	c.KS.RecordAccess(acc)
	var buf [8]keyspace.HLLRegister
	regs := buf[:0]
	for _, e := range args[2:] {
		i, n := hll.PatLen(e)
		r, err := hll.Get(old, i)
		if err != nil {
			c.WriteError(errHLLCorrupt)
			return
		}
		if r < n {
			regs = append(regs, keyspace.HLLRegister{Index: uint16(i), Value: n})
		}
	}
	if len(regs) == 0 {
		c.WriteInt(0)
		return
	}
	mark := len(c.Out)
	c.WriteInt(1)
	b := c.KS.NewBatch()
	b.HLLAdd(c.DB, key, maxSparse, regs)
	if commitReply(c, b, mark) {
		c.Notify(notifyString, "pfadd", key)
	}
}

// PFCOUNT key [key ...]
func cmdPFCount(c *Client, args [][]byte) {
	if len(args) > 2 {
		var max [hll.Registers]uint8
		for _, key := range args[1:] {
			v, ok := hllAt(c, key)
			if !ok {
				return
			}
			if v == nil {
				continue
			}
			if hll.Merge(&max, v) != nil {
				c.WriteError(errHLLCorrupt)
				return
			}
		}
		c.WriteInt(int64(hll.EstimateRegisters(&max)))
		return
	}
	key := args[1]
	v, expireAt, acc, ok := hllAtExpiry(c, key)
	if !ok {
		return
	}
	if v == nil {
		c.WriteInt(0)
		return
	}
	if card, ok := hll.Cached(v); ok {
		c.KS.RecordAccess(acc)
		c.WriteInt(int64(card))
		return
	}
	card, err := hll.Estimate(v)
	if err != nil {
		c.KS.RecordAccess(acc)
		c.WriteError(errHLLCorrupt)
		return
	}
	b := c.KS.NewBatch()
	v = append([]byte(nil), v...)
	hll.SetCached(v, card)
	if len(v) >= patchThreshold {
		c.KS.RecordAccess(acc)
		b.SetRange(c.DB, key, 8, v[8:16])
	} else {
		b.Set(c.DB, key, v, expireAt) // records the access
	}
	mark := len(c.Out)
	c.WriteInt(int64(card))
	commitReply(c, b, mark)
}

// PFMERGE destkey [sourcekey ...]: the destination is a source too.
func cmdPFMerge(c *Client, args [][]byte) {
	var max [hll.Registers]uint8
	dense := false
	var old []byte
	for i, key := range args[1:] {
		v, ok := hllAt(c, key)
		if !ok {
			return
		}
		if v == nil {
			continue
		}
		if i == 0 {
			old = v
		}
		if hll.IsDense(v) {
			dense = true
		}
		if hll.Merge(&max, v) != nil {
			c.WriteError(errHLLCorrupt)
			return
		}
	}
	var v []byte
	if old != nil {
		// Room for the opcodes the splits add (at most 4 bytes each), so
		// hll.Set grows v in place.
		v = append(make([]byte, 0, len(old)+4*len(args[2:])), old...)
	} else {
		v = hll.New()
	}
	if dense {
		var err error
		if v, err = hll.ToDense(v); err != nil {
			c.WriteError(errHLLCorrupt)
			return
		}
	}
	maxSparse := hllSparseMax(c)
	for i, r := range max {
		if r != 0 {
			// Redis ignores a failure here: the sources decoded, so only
			// a corrupt destination could fail, and it was merged above.
			v, _, _ = hll.Set(v, i, r, maxSparse)
		}
	}
	hll.Invalidate(v)
	mark := len(c.Out)
	c.WriteOK()
	if writeHLL(c, args[1], old, v, mark) {
		c.Notify(notifyString, "pfadd", args[1])
	}
}

// PFDEBUG subcommand key
func cmdPFDebug(c *Client, args [][]byte) {
	sub, key := strings.ToLower(string(args[1])), args[2]
	v, ok := hllAt(c, key)
	if !ok {
		return
	}
	if v == nil {
		c.WriteError("ERR The specified key does not exist")
		return
	}
	switch sub {
	case "getreg", "todense":
		conv := false
		if !hll.IsDense(v) {
			d, err := hll.ToDense(v)
			if err != nil {
				c.WriteError(errHLLCorrupt)
				return
			}
			b := c.KS.NewBatch()
			b.Set(c.DB, key, d, expireAtOf(c, key))
			if !commitReply(c, b, len(c.Out)) {
				return
			}
			v, conv = d, true
		}
		if sub == "todense" {
			if conv {
				c.WriteInt(1)
			} else {
				c.WriteInt(0)
			}
			return
		}
		c.WriteArray(hll.Registers)
		for i := 0; i < hll.Registers; i++ {
			c.WriteInt(int64(hll.Register(v, i)))
		}
	case "decode":
		if hll.IsDense(v) {
			c.WriteError("ERR HLL encoding is not sparse")
			return
		}
		c.WriteBulkString(hll.Decode(v))
	case "encoding":
		if hll.IsDense(v) {
			c.WriteString("dense")
		} else {
			c.WriteString("sparse")
		}
	default:
		c.WriteError("ERR Unknown PFDEBUG subcommand '" + string(args[1]) + "'")
	}
}

// PFSELFTEST: checks this build's register packing and estimator (see
// hll.SelfTest) and replies OK, or Redis's TESTFAILED error.
func cmdPFSelfTest(c *Client, args [][]byte) {
	if err := hll.SelfTest(); err != nil {
		c.WriteError("TESTFAILED " + err.Error())
		return
	}
	c.WriteOK()
}

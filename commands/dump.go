package commands

import (
	"errors"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/rdb"
)

// DUMP and RESTORE (redis.io group "generic"): a key's value in Redis's
// RDB serialization (package rdb), so payloads move between Persimmon and
// redis-server 7.0 both ways, for every type streams included
// (dump_stream.go). MIGRATE is built on them (migrate.go).
//
// TR.* bitmaps dump with Persimmon's own type id (rdb.TypeRoaring):
// Persimmon restores them, redis-server refuses them with "Bad data
// format" rather than taking them for another type. RESTORE writes the
// whole key (the delete of the old value, the operations building the new
// one, its expiry) as one batch, so it is durable and atomic as one
// command. IDLETIME and FREQ are checked as Redis checks them and set the
// restored key's access data for the policy in force (FREQ under an LFU
// policy, IDLETIME under any other), as Redis's objectSetLRUOrLFU; the
// access data is kept in DRAM only (keyspace/lru.go), so a restart resets
// it, as Redis loading an RDB without LRU/LFU data does.

var (
	errBusyKey    = replyError("BUSYKEY Target key name already exists.")
	errBadTTL     = replyError("ERR Invalid TTL value, must be >= 0")
	errBadIdle    = replyError("ERR Invalid IDLETIME value, must be >= 0")
	errBadFreq    = replyError("ERR Invalid FREQ value, must be >= 0 and <= 255")
	errDumpFooter = replyError("ERR DUMP payload version or checksum are wrong")
	errBadData    = replyError("ERR Bad data format")
)

func dumpCommands() []Command {
	return []Command{
		{Name: "dump", Arity: 2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0",
			Summary: "Return a serialized version of the value stored at the specified key.", Run: cmdDump,
			KeySpecs: key1(KeyRO | KeyAccess), Tips: []string{"nondeterministic_output"}},
		{Name: "restore", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0",
			Summary: "Create a key using the provided serialized value, previously obtained using DUMP.", Run: cmdRestore,
			KeySpecs: key1(KeyOW | KeyUpdate), ACL: []string{"@dangerous"}},
		// RESTORE-ASKING: what a cluster's MIGRATE sends to a node
		// importing the slot; without a cluster it is RESTORE, as in Redis.
		{Name: "restore-asking", Arity: -4, Flags: FlagWrite | FlagDenyOOM | FlagAsking, FirstKey: 1, LastKey: 1, Step: 1, Group: "server", Since: "3.0.0",
			Summary: "An internal command for migrating keys in a cluster", Run: cmdRestore,
			KeySpecs: key1(KeyOW | KeyUpdate), ACL: []string{"@keyspace", "@dangerous"}},
		migrateCommands()[0], // migrate.go
	}
}

// DUMP key: the payload, or nil for a missing key.
func cmdDump(c *Client, args [][]byte) {
	v, ok, err := dumpValue(c.KS, c.DB, args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if !ok {
		c.WriteNull()
		return
	}
	p, err := rdb.Dump(&v)
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.WriteBulk(p)
}

// DumpValue is dumpValue for the server's replication snapshots
// (server.Config.DumpValue).
func DumpValue(ks *keyspace.Keyspace, db int, key []byte) (rdb.Value, bool, error) {
	return dumpValue(ks, db, key)
}

// dumpValue reads key into an rdb.Value (ok false when missing), marking
// Big the collections the keyspace holds in their big encoding, so the
// payload names the encoding Redis would.
func dumpValue(ks *keyspace.Keyspace, db int, key []byte) (rdb.Value, bool, error) {
	typ := ks.Type(db, key)
	// Redis looks the key up once: the reads below count no more hits.
	was := ks.CountLookups(false)
	defer ks.CountLookups(was)
	switch typ {
	case keyspace.TypeNone:
		return rdb.Value{}, false, nil
	case keyspace.TypeString:
		val, _, err := ks.Get(db, key)
		return rdb.Value{Kind: rdb.KindString, Str: val}, err == nil, err
	case keyspace.TypeList:
		l, err := ks.List(db, key)
		if err != nil {
			return rdb.Value{}, false, err
		}
		v := rdb.Value{Kind: rdb.KindList, Items: make([][]byte, l.Len())}
		for i := range v.Items {
			v.Items[i] = l.At(i)
		}
		return v, true, nil
	case keyspace.TypeSet:
		members, err := ks.SMemberBytes(db, key)
		if err != nil {
			return rdb.Value{}, false, err
		}
		enc, _, _ := ks.SetEncoding(db, key)
		return rdb.Value{Kind: rdb.KindSet, Items: members, Big: enc == "hashtable"}, true, nil
	case keyspace.TypeHash:
		v := rdb.Value{Kind: rdb.KindHash}
		if err := ks.HRange(db, key, func(f, val []byte) { v.Items = append(v.Items, f, val) }); err != nil {
			return rdb.Value{}, false, err
		}
		enc, _, _ := ks.HashEncoding(db, key)
		v.Big = enc == "hashtable"
		return v, true, nil
	case keyspace.TypeZSet:
		z, err := ks.ZSetAt(db, key)
		if err != nil || z == nil {
			return rdb.Value{}, false, err
		}
		v := rdb.Value{Kind: rdb.KindZSet, Items: make([][]byte, 0, z.Len()), Scores: make([]float64, 0, z.Len()), Big: !z.Small()}
		for i, x := 0, z.At(0); i < z.Len(); i, x = i+1, z.Next(x) {
			v.Items = append(v.Items, z.Member(x))
			v.Scores = append(v.Scores, z.ScoreOf(x))
		}
		return v, true, nil
	case keyspace.TypeStream:
		return dumpStream(ks, db, key)
	case keyspace.TypeRoaring:
		bm, err := ks.Roaring(db, key)
		if err != nil || bm == nil {
			return rdb.Value{}, false, err
		}
		p, err := bm.ToBytes()
		return rdb.Value{Kind: rdb.KindRoaring, Str: p}, err == nil, err
	default:
		return rdb.Value{}, false, replyError("ERR DUMP of a " + typ + " value is not supported")
	}
}

// restoreArgs are RESTORE's arguments after the payload.
type restoreArgs struct {
	replace, absTTL bool
	idle            int64 // IDLETIME's seconds; -1: none
	freq            int   // FREQ's counter; -1: none
}

// parseRestoreArgs parses REPLACE, ABSTTL, IDLETIME s and FREQ f in Redis's
// order of checks: IDLETIME and FREQ exclude each other (the second is a
// syntax error) and are range-checked as they are met.
func parseRestoreArgs(args [][]byte) (restoreArgs, error) {
	o := restoreArgs{idle: -1, freq: -1}
	idle, freq := false, false
	for j := 0; j < len(args); j++ {
		more := j+1 < len(args)
		switch {
		case argIs(args[j], "replace"):
			o.replace = true
		case argIs(args[j], "absttl"):
			o.absTTL = true
		case argIs(args[j], "idletime") && more && !freq:
			n, err := argInt64(args[j+1])
			if err != nil {
				return o, err
			}
			if n < 0 {
				return o, errBadIdle
			}
			idle, o.idle = true, n
			j++
		case argIs(args[j], "freq") && more && !idle:
			n, err := argInt64(args[j+1])
			if err != nil {
				return o, err
			}
			if n < 0 || n > 255 {
				return o, errBadFreq
			}
			freq, o.freq = true, int(n)
			j++
		default:
			return o, errSyntax
		}
	}
	return o, nil
}

// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]: OK.
// The checks come in Redis's order: options, existing key (BUSYKEY), TTL,
// footer, body. A TTL already in the past deletes the key (with REPLACE)
// and replies OK, as Redis does.
func cmdRestore(c *Client, args [][]byte) {
	key := args[1]
	o, err := parseRestoreArgs(args[4:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	existed := c.KS.Exists(c.DB, key)
	if !o.replace && existed {
		c.WriteErr(errBusyKey)
		return
	}
	ttl, err := argInt64(args[2])
	if err != nil {
		c.WriteErr(err)
		return
	}
	if ttl < 0 {
		c.WriteErr(errBadTTL)
		return
	}
	v, err := rdb.Restore(args[3])
	switch {
	case errors.Is(err, rdb.ErrChecksum):
		c.WriteErr(errDumpFooter)
		return
	case err != nil:
		c.WriteErr(errBadData)
		return
	}
	var bm *roaring.Bitmap
	if v.Kind == rdb.KindRoaring {
		bm = roaring.New()
		// UnmarshalBinary copies the bytes; Validate refuses a malformed
		// container before the keyspace ever sees it.
		if err := bm.UnmarshalBinary(v.Str); err != nil || bm.Validate() != nil || bm.IsEmpty() {
			c.WriteErr(errBadData)
			return
		}
	}
	now := c.KS.NowMs()
	expireAt := ttl
	if ttl != 0 && !o.absTTL {
		expireAt += now
	}
	b := c.KS.NewBatch()
	if ttl != 0 && expireAt <= now {
		if o.replace && c.KS.Exists(c.DB, key) {
			b.Del(c.DB, key)
			if !commitReply(c, b, len(c.Out)) {
				return
			}
			c.Notify(notifyGeneric, "del", key)
		}
		c.WriteOK()
		return
	}
	restoreOps(b, c.DB, key, &v, bm, expireAt)
	if commitReply(c, b, len(c.Out)) {
		c.KS.SetAccess(c.DB, key, o.idle, o.freq) // under the policy in force, as Redis's objectSetLRUOrLFU
		c.WriteOK()
		if existed {
			c.Notify(notifyNew, "new", key) // REPLACE: Redis deletes the key and adds it again
		}
		c.Notify(notifyGeneric, "restore", key)
	}
}

// restoreOps appends to b what gives key the value v with the absolute
// expiry expireAt (0 = none): a Set for a string, else a delete of the old
// value, the operations building the collection and its expiry.
func restoreOps(b *keyspace.Batch, db int, key []byte, v *rdb.Value, bm *roaring.Bitmap, expireAt int64) {
	if v.Kind == rdb.KindString {
		b.Set(db, key, v.Str, expireAt)
		return
	}
	b.Del(db, key)
	switch v.Kind {
	case rdb.KindList:
		b.RPush(db, key, v.Items...)
	case rdb.KindSet:
		b.SAdd(db, key, v.Items...)
	case rdb.KindHash:
		b.HSet(db, key, v.Items...)
	case rdb.KindZSet:
		b.ZAdd(db, key, v.Items, v.Scores)
	case rdb.KindRoaring:
		b.TRMerge(db, key, bm)
	case rdb.KindStream:
		restoreStream(b, db, key, v.Stream)
	}
	if expireAt != 0 {
		b.Expire(db, key, expireAt)
	}
}

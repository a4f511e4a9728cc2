package commands

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/rdb"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis 7.0's signature of the
// dataset and of single values (debug.c computeDatasetDigest and
// xorObjectDigest), so the same data gives the same 40 hex digits on
// redis-server and here, as Redis's test suite and replication checks
// compare them.
//
// Two mixes of SHA1 build it: xorDigest xors SHA1(data) into the digest
// (order-free: set members, hash pairs, sorted-set pairs, keys), and
// mixDigest also replaces the digest by SHA1 of itself (ordered: list
// elements, stream entries, the parts of one element). A value's digest
// starts with its Redis object type as a big-endian uint32 and ends with
// "!!expire!!" xored in if the key has a TTL. Values are read through
// DUMP's reader (dumpValue), so each type is read as DUMP serializes it;
// the encoding does not matter (Redis's listpack and skiplist branches
// give the same bytes). A TR.* bitmap, which Redis would hold as a module
// value, mixes Redis's module type id and then its portable serialization.

// Redis's object type ids (server.h OBJ_*), the first thing a value's
// digest mixes.
const (
	objString = 0
	objList   = 1
	objSet    = 2
	objZSet   = 3
	objHash   = 4
	objModule = 5
	objStream = 6
)

type digest [20]byte

// xor xors SHA1(p) into d (Redis's xorDigest).
func (d *digest) xor(p []byte) {
	h := sha1.Sum(p)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix is xor followed by d = SHA1(d) (Redis's mixDigest).
func (d *digest) mix(p []byte) {
	d.xor(p)
	*d = sha1.Sum(d[:])
}

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

// digestScore is C's "%.17g" of a sorted-set score, as Redis's digest
// writes it.
func digestScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// valueDigest mixes the value v (with a TTL if expires) into d.
func valueDigest(d *digest, v *rdb.Value, expires bool) {
	typ := uint32(objModule)
	switch v.Kind {
	case rdb.KindString:
		typ = objString
	case rdb.KindList:
		typ = objList
	case rdb.KindSet:
		typ = objSet
	case rdb.KindZSet:
		typ = objZSet
	case rdb.KindHash:
		typ = objHash
	case rdb.KindStream:
		typ = objStream
	}
	var aux [4]byte
	binary.BigEndian.PutUint32(aux[:], typ)
	d.mix(aux[:])
	switch v.Kind {
	case rdb.KindString, rdb.KindRoaring:
		d.mix(v.Str)
	case rdb.KindList:
		for _, e := range v.Items {
			d.mix(e)
		}
	case rdb.KindSet:
		for _, m := range v.Items {
			d.xor(m)
		}
	case rdb.KindZSet:
		for i, m := range v.Items {
			var e digest
			e.mix(m)
			f := v.Scores[i]
			if !v.Big {
				f = listpackScore(f) // a listpack holds -0 as the integer 0
			}
			e.mix([]byte(digestScore(f)))
			d.xor(e[:])
		}
	case rdb.KindHash:
		for i := 0; i+1 < len(v.Items); i += 2 {
			var e digest
			e.mix(v.Items[i])
			e.mix(v.Items[i+1])
			d.xor(e[:])
		}
	case rdb.KindStream:
		var id []byte
		for _, n := range v.Stream.Nodes {
			for _, en := range n.Entries {
				id = strconv.AppendUint(id[:0], en.ID.Ms, 10)
				id = append(id, '.')
				id = strconv.AppendUint(id, en.ID.Seq, 10)
				d.mix(id)
				for _, f := range en.Fields {
					d.mix(f)
				}
			}
		}
	}
	if expires {
		d.xor([]byte("!!expire!!"))
	}
}

// keyValueDigest mixes the value of key in db into d; ok is false for a
// missing key.
func keyValueDigest(ks *keyspace.Keyspace, db int, key []byte, d *digest) (ok bool, err error) {
	v, ok, err := dumpValue(ks, db, key)
	if err != nil || !ok {
		return false, err
	}
	at, _ := ks.ExpireAt(db, key)
	valueDigest(d, &v, at != 0)
	return true, nil
}

// debugDigest replies DEBUG DIGEST: zeros for an empty dataset; else, for
// each database holding keys, its number mixed in, then the xor of every
// key's digest (the key's name mixed, then its value).
func debugDigest(c *Client) {
	var final digest
	for db := 0; db < keyspace.NumDBs; db++ {
		var keys []string
		c.KS.Keys(db, func(k string) { keys = append(keys, k) })
		if len(keys) == 0 {
			continue
		}
		var aux [4]byte
		binary.BigEndian.PutUint32(aux[:], uint32(db))
		final.mix(aux[:])
		for _, k := range keys {
			var d digest
			d.mix([]byte(k))
			if _, err := keyValueDigest(c.KS, db, []byte(k), &d); err != nil {
				c.WriteErr(err)
				return
			}
			final.xor(d[:])
		}
	}
	c.WriteString(final.hex())
}

// debugDigestValue replies DEBUG DIGEST-VALUE key ...: one digest per key
// (of its value only; zeros for a missing key).
func debugDigestValue(c *Client, keys [][]byte) {
	out := make([]string, len(keys))
	for i, k := range keys {
		var d digest
		if _, err := keyValueDigest(c.KS, c.DB, k, &d); err != nil {
			c.WriteErr(err)
			return
		}
		out[i] = d.hex()
	}
	c.WriteArray(len(out))
	for _, s := range out {
		c.WriteString(s)
	}
}

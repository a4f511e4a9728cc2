package keyspace

import "math/rand/v2"

// DBInfo is what INFO keyspace reports for one database, all taken at the
// same moment under the keyspace lock.
type DBInfo struct {
	Keys    int   // keys, expired ones not yet removed included (as DBSIZE)
	Expires int   // keys with a TTL
	AvgTTL  int64 // estimated mean remaining TTL of the keys with one, in ms; 0 with none
}

// avgTTLProbes bounds the random probes of each source avgTTL samples, so
// INFO holds the lock for a few microseconds whatever the key count.
const avgTTLProbes = 256

// DBInfo returns database db's INFO keyspace figures. Call with the lock
// held.
func (ks *Keyspace) DBInfo(db int) DBInfo {
	d := ks.dbs[db]
	return DBInfo{Keys: len(d.entries) + ks.kixLen(db), Expires: d.volatile + ks.kixTTLLen(db), AvgTTL: ks.avgTTL(db, ks.NowMs())}
}

// avgTTL estimates the mean remaining TTL (ms) of db's keys with a TTL
// from a random sample, as Redis's avg_ttl does. Redis keeps a running
// average (2% weight for each new sample) of the TTLs its active-expire
// cycle samples from the expires dictionary, so its figure lags behind
// changes by some seconds; this one is computed afresh on each call:
//
//   - it probes avgTTLProbes random positions of the expiry heap, which
//     holds each key's current expiry exactly once (and stale items of
//     changed or deleted keys, skipped here; they are rebuilt away before
//     they outnumber live ones 4 to 1), so each probe is a uniform draw
//     among the keys with a TTL of every database, and keeps those of db;
//   - if that found none (db holds a small share of the TTL keys), it
//     probes avgTTLProbes random entries of db itself;
//   - as in Redis, keys whose TTL has already passed are not counted; with
//     no sample the estimate is 0.
func (ks *Keyspace) avgTTL(db int, now int64) int64 {
	d := ks.dbs[db]
	if d.volatile == 0 && ks.kixTTLLen(db) == 0 {
		return 0
	}
	var sum, n int64
	add := func(at int64) {
		if ttl := at - now; ttl > 0 {
			sum += ttl
			n++
		}
	}
	if ks.kixTTLLen(db) > d.volatile {
		ks.kixSampleTTL(db, avgTTLProbes, add)
	}
	if h := ks.expires; len(h) > 0 {
		for range avgTTLProbes {
			it := h[rand.IntN(len(h))]
			if it.db != db {
				continue
			}
			if i, ok := d.index[it.key]; ok && d.entries[i].expireAt == it.at {
				add(it.at)
			}
		}
	}
	if n == 0 && len(d.entries) > 0 {
		for range avgTTLProbes {
			if at := d.entries[rand.IntN(len(d.entries))].expireAt; at != 0 {
				add(at)
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

package keyspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/recovery"
)

// expiryRun drives one scenario on a live keyspace whose clock runs two
// hours behind the wall clock, so every expiry it sets has passed by the
// restart, while the scenario decides which writes come before a key's
// time and which after it (pass moves the live clock on).
type expiryRun struct {
	t    *testing.T
	ks   *keyspace.Keyspace
	keys map[[2]string]bool // db, key: every key written, looked up before the dump
}

// now is the live clock (an atomic read: callable inside a commit).
func (r *expiryRun) now() int64 { return r.ks.NowMs() }

// pass moves the live clock ms milliseconds on.
func (r *expiryRun) pass(ms int64) { r.ks.AdvanceClock(ms) }

// w commits one batch, noting the keys it names.
func (r *expiryRun) w(db int, key string, fill func(b *keyspace.Batch, k []byte)) {
	r.keys[[2]string{fmt.Sprint(db), key}] = true
	commit(r.t, r.ks, func(b *keyspace.Batch) { fill(b, []byte(key)) })
}

// note records a key a batch wrote beside the one w names.
func (r *expiryRun) note(db int, key string) { r.keys[[2]string{fmt.Sprint(db), key}] = true }

// expiryScenarios are written before and after the expiries they set;
// each leaves some keys that must survive the restart and some that must
// not, and a key "keep" of each database that has no expiry at all.
var expiryScenarios = []struct {
	name string
	run  func(r *expiryRun)
}{
	{"hash written again before its time", func(r *expiryRun) {
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, r.now()+300) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("b"), []byte("2")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HDel(0, k, []byte("a")) })
		r.pass(400)
	}},
	{"hash re-created after its time", func(r *expiryRun) {
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, r.now()+300) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("b"), []byte("2")) })
		r.pass(400)
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("c"), []byte("3")) }) // a new hash: {c}
	}},
	{"set, zset, list", func(r *expiryRun) {
		at := r.now() + 300
		r.w(0, "s", func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("a")) })
		r.w(0, "z", func(b *keyspace.Batch, k []byte) { b.ZAdd(0, k, [][]byte{[]byte("a")}, []float64{1}) })
		r.w(0, "l", func(b *keyspace.Batch, k []byte) { b.RPush(0, k, []byte("a"), []byte("b")) })
		for _, k := range []string{"s", "z", "l"} {
			r.w(0, k, func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		}
		r.w(0, "s", func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("b")) })
		r.w(0, "z", func(b *keyspace.Batch, k []byte) { b.ZAdd(0, k, [][]byte{[]byte("b")}, []float64{2}) })
		r.w(0, "l", func(b *keyspace.Batch, k []byte) { b.LPop(0, k, 1) }) // a pop that a partial list would not survive
		r.w(0, "l", func(b *keyspace.Batch, k []byte) { b.RPush(0, k, []byte("c")) })
		r.pass(400)
		r.w(0, "s", func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("new")) })
		r.w(0, "l2", func(b *keyspace.Batch, k []byte) { b.RPush(0, k, []byte("x")) })
	}},
	{"stream and roaring bitmap", func(r *expiryRun) {
		at := r.now() + 300
		r.w(0, "x", func(b *keyspace.Batch, k []byte) {
			b.XAdd(0, k, keyspace.StreamID{Ms: 1}, [][]byte{[]byte("f"), []byte("v")})
		})
		r.w(0, "tr", func(b *keyspace.Batch, k []byte) { b.TRAdd(0, k, 1, 2, 3) })
		r.w(0, "x", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		r.w(0, "tr", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		r.w(0, "x", func(b *keyspace.Batch, k []byte) {
			b.XAdd(0, k, keyspace.StreamID{Ms: 2}, [][]byte{[]byte("f"), []byte("w")})
		})
		r.w(0, "tr", func(b *keyspace.Batch, k []byte) { b.TRAddRange(0, k, 100, 200) })
		r.w(0, "tr", func(b *keyspace.Batch, k []byte) { b.TRRemove(0, k, 1) })
		r.pass(400)
		r.w(0, "tr", func(b *keyspace.Batch, k []byte) { b.TRAdd(0, k, 7) }) // a new bitmap: {7}
	}},
	{"strings patched by SETRANGE and APPEND", func(r *expiryRun) {
		at := r.now() + 300
		r.w(0, "s1", func(b *keyspace.Batch, k []byte) { b.Set(0, k, []byte("hello"), at) })
		r.w(0, "s1", func(b *keyspace.Batch, k []byte) { b.SetRange(0, k, 5, []byte(" world")) }) // APPEND
		r.w(0, "s2", func(b *keyspace.Batch, k []byte) { b.Set(0, k, []byte("abc"), 0) })
		r.w(0, "s2", func(b *keyspace.Batch, k []byte) { b.SetRange(0, k, 1, []byte("X")) })
		r.w(0, "s2", func(b *keyspace.Batch, k []byte) {
			r.ks.SetExpire(b, 0, k, at) // EXPIRE on a patched string
		})
		r.w(0, "s2", func(b *keyspace.Batch, k []byte) { b.SetRange(0, k, 3, []byte("def")) })
		r.w(0, "s3", func(b *keyspace.Batch, k []byte) { b.Set(0, k, []byte("old"), at) })
		r.pass(400)
		r.w(0, "s3", func(b *keyspace.Batch, k []byte) { b.SetRange(0, k, 2, []byte("new")) }) // on nothing: "\0\0new"
	}},
	{"EXPIREAT in the past, then written again", func(r *expiryRun) {
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, r.now()-1000) }) // drops it at once
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("b"), []byte("2")) })
		r.w(0, "g", func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("a")) })
		r.w(0, "g", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, r.now()-1000) })
	}},
	{"PERSIST after the expiry was set", func(r *expiryRun) {
		at := r.now() + 300
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("b"), []byte("2")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, 0) }) // {a, b} for good
		r.w(0, "s", func(b *keyspace.Batch, k []byte) { b.Set(0, k, []byte("v"), at) })
		r.w(0, "s", func(b *keyspace.Batch, k []byte) { b.SetRange(0, k, 1, []byte("w")) })
		r.w(0, "s", func(b *keyspace.Batch, k []byte) { r.ks.SetExpire(b, 0, k, 0) }) // "vw" for good
		r.pass(400)
	}},
	{"RENAME, MOVE and COPY of expiring keys", func(r *expiryRun) {
		at := r.now() + 300
		for _, k := range []string{"r", "m", "c"} {
			r.w(0, k, func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
			r.w(0, k, func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		}
		r.w(0, "r", func(b *keyspace.Batch, k []byte) {
			r.ks.CopyValue(b, 0, k, 0, []byte("r2"), at)
			b.Del(0, k)
		})
		r.note(0, "r2")
		r.w(0, "r2", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("b"), []byte("2")) })
		r.w(0, "m", func(b *keyspace.Batch, k []byte) { r.ks.MoveValue(b, 0, k, 1, k, at) })
		r.note(1, "m")
		r.w(1, "m", func(b *keyspace.Batch, k []byte) { b.HSet(1, k, []byte("b"), []byte("2")) })
		r.w(0, "c", func(b *keyspace.Batch, k []byte) { r.ks.CopyValue(b, 0, k, 0, []byte("c2"), 0) }) // COPY: c2 without an expiry
		r.note(0, "c2")
		r.w(0, "c", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("b"), []byte("2")) })
		r.w(0, "c2", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("c"), []byte("3")) })
		r.pass(400)
		r.w(1, "m", func(b *keyspace.Batch, k []byte) { b.HSet(1, k, []byte("new"), []byte("1")) })
	}},
	{"SWAPDB of expiring keys", func(r *expiryRun) {
		at := r.now() + 300
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		r.w(0, "p", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "p", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		r.w(0, "sx", func(b *keyspace.Batch, k []byte) { b.Set(0, k, []byte("v"), at) })
		commit(r.t, r.ks, func(b *keyspace.Batch) { b.SwapDB(0, 1) })
		r.note(1, "h")
		r.note(1, "p")
		r.note(1, "sx")
		r.w(1, "h", func(b *keyspace.Batch, k []byte) { b.HSet(1, k, []byte("b"), []byte("2")) })
		r.w(1, "p", func(b *keyspace.Batch, k []byte) { b.HSet(1, k, []byte("b"), []byte("2")) })
		r.w(1, "p", func(b *keyspace.Batch, k []byte) { b.Expire(1, k, 0) }) // {a, b} in db 1 for good
		r.w(1, "sx", func(b *keyspace.Batch, k []byte) { b.SetRange(1, k, 1, []byte("w")) })
		r.pass(400)
	}},
	{"a replica applies its master's writes to a key past its time", func(r *expiryRun) {
		r.ks.Lock()
		r.ks.SetReplica(true)
		r.ks.Unlock()
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, r.now()+300) })
		r.pass(400) // kept, hidden: the master has not expired it yet
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("b"), []byte("2")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, 0) }) // the master's PERSIST: {a, b}
		r.ks.Lock()
		r.ks.SetReplica(false) // promoted
		r.ks.Unlock()
	}},
	{"a transaction and a batch split in records", func(r *expiryRun) {
		at := r.now() + 300
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("a"), []byte("1")) })
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		r.w(0, "t", func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("a")) })
		r.w(0, "t", func(b *keyspace.Batch, k []byte) { b.Expire(0, k, at) })
		// A batch of many fields, cut into a group of records: only the
		// first carries the time.
		r.ks.Lock()
		r.ks.SetRecordLimit(256)
		r.ks.Unlock()
		r.w(0, "h", func(b *keyspace.Batch, k []byte) {
			for i := range 200 {
				b.HSet(0, k, []byte(fmt.Sprint("f", i)), []byte("v"))
			}
		})
		r.ks.Lock()
		r.ks.SetRecordLimit(1 << 20)
		r.ks.FreezeClock()
		r.ks.BeginTxn()
		r.ks.Unlock()
		r.w(0, "t", func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("b")) })
		r.w(0, "t", func(b *keyspace.Batch, k []byte) { b.SAdd(0, k, []byte("c")) })
		r.ks.Lock()
		if err := r.ks.EndTxn(); err != nil {
			r.t.Fatal(err)
		}
		r.ks.ThawClock()
		r.ks.Unlock()
		r.pass(400)
		r.w(0, "h", func(b *keyspace.Batch, k []byte) { b.HSet(0, k, []byte("after"), []byte("1")) })
	}},
}

// TestReplayKeepsExpiringIncarnation: a replay of the whole log (without
// the key index, and with the index file removed) and a restart with the
// index give the keyspace a client of the server saw once every expiry
// had passed: a key written again before its time is gone with it (not a
// ghost holding the later writes alone, without the expiry), a key
// re-created after its time holds its new life, PERSIST keeps what was
// written, and no other key changes. Before opClock a replay judged every
// operation at the restart's time, and each "before its time" case came
// back as a partial key without an expiry.
func TestReplayKeepsExpiringIncarnation(t *testing.T) {
	for _, sc := range expiryScenarios {
		for _, mode := range []string{"no index", "index removed", "index"} {
			t.Run(sc.name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				var ks *keyspace.Keyspace
				if mode == "no index" {
					ks = openNoKix(t, dir)
				} else {
					ks, _ = openKix(t, dir)
				}
				ks.AdvanceClock(-2 * 3600_000)
				r := &expiryRun{t: t, ks: ks, keys: map[[2]string]bool{}}
				for db := range 2 {
					r.w(db, "keep", func(b *keyspace.Batch, k []byte) { b.HSet(db, k, []byte("f"), []byte("v")) })
				}
				sc.run(r)
				// What a client sees once every expiry has passed.
				ks.AdvanceClock(4 * 3600_000)
				ks.Lock()
				for k := range r.keys {
					var db int
					fmt.Sscan(k[0], &db)
					ks.Exists(db, []byte(k[1]))
				}
				want := ks.StateDump()
				ks.Unlock()
				ks.KillAtClose()
				if err := ks.Close(); err != nil {
					t.Fatal(err)
				}
				var rep recovery.Report
				switch mode {
				case "no index":
					ks = openNoKix(t, dir)
				case "index removed":
					if err := os.Remove(filepath.Join(dir, recovery.IndexFile)); err != nil {
						t.Fatal(err)
					}
					ks, rep = openKix(t, dir)
					if rep.Index.FromLSN != 0 {
						t.Fatalf("the index was re-attached: %+v", rep.Index)
					}
				default:
					ks, _ = openKix(t, dir)
				}
				defer ks.Close()
				if got := dumpOf(ks); got != want {
					d := strings.NewReplacer("re-attached:", "restart:    ", "whole log:  ", "server:     ").Replace(firstDiff(got, want))
					t.Fatalf("after the restart the keyspace differs from what the server held:\n%s", d)
				}
			})
		}
	}
}

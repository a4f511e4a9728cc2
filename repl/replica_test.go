package repl

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// writeSome issues writes of every modelled kind in databases 0 and 3,
// tagged so rounds do not collide, and a MULTI/EXEC block in database 3.
func writeSome(t *testing.T, c *redis.Client, tag string, big bool) {
	t.Helper()
	ctx := context.Background()
	for _, db := range []int{0, 3} {
		conn := c.Conn()
		if err := conn.Select(ctx, db).Err(); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			k := fmt.Sprintf("%s:%d:%d", tag, db, i)
			must(t, conn.Set(ctx, "s:"+k, "v"+k, 0).Err())
			must(t, conn.Incr(ctx, "n:"+tag).Err())
			must(t, conn.RPush(ctx, "l:"+tag, k, "x").Err())
			must(t, conn.HSet(ctx, "h:"+tag, "f"+strconv.Itoa(i), k).Err())
			must(t, conn.SAdd(ctx, "z:"+tag, k, "common").Err())
		}
		must(t, conn.Del(ctx, fmt.Sprintf("s:%s:%d:3", tag, db)).Err())
		if big {
			// Incompressible and bigger than a read chunk of rdb.Reader.
			b := make([]byte, 150<<10)
			rand.NewChaCha8([32]byte{byte(db)}).Read(b)
			must(t, conn.Set(ctx, "big:"+tag, hex.EncodeToString(b), 0).Err())
		}
		if db == 3 {
			_, err := conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "tx:"+tag+":a", "1", 0)
				p.RPush(ctx, "tx:"+tag+":b", "2")
				return nil
			})
			must(t, err)
		}
		conn.Close()
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// slaveOffset is the offset the master last heard acknowledged by its
// only replica (INFO replication slave0), -1 when it has none.
func slaveOffset(t *testing.T, c *redis.Client) int64 {
	for _, f := range strings.Split(infoField(t, c, "replication", "slave0"), ",") {
		if v, ok := strings.CutPrefix(f, "offset="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// TestReplicaOfRedis replicates from a real redis-server 7.0 master, with
// the snapshot sent from disk ($<len>) and disk-less ($EOF:<mark>), AUTH
// by password and by ACL user: a full resync of writes made before, the
// stream after (a MULTI/EXEC block arriving as one unit), ACKs held to
// the applier's durable offset, a partial resync after the master kills
// the link, and a partial resync of a new Replica started from the stored
// position (a restart).
func TestReplicaOfRedis(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless="+diskless, func(t *testing.T) {
			args := []string{"--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0"}
			cfg := ReplicaConfig{Password: "secret", AckPeriod: 20e6, RetryPeriod: 20e6, Logf: t.Logf}
			if diskless == "yes" {
				args = append(args, "--user", "default", "off", "--user", "repl", "on", ">pw", "~*", "&*", "+@all")
				cfg.User, cfg.Password = "repl", "pw"
			} else {
				args = append(args, "--requirepass", "secret")
			}
			port, master := startRedis(t, args...)
			if diskless == "yes" {
				master = redis.NewClient(&redis.Options{Addr: master.Options().Addr, Username: "repl", Password: "pw"})
			} else {
				master = redis.NewClient(&redis.Options{Addr: master.Options().Addr, Password: "secret"})
			}
			defer master.Close()
			ctx := context.Background()
			writeSome(t, master, "before", true)

			cfg.Addr = fmt.Sprintf("127.0.0.1:%d", port)
			model := newModel()
			r := NewReplica(cfg, model)
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- r.Run(runCtx) }()
			caughtUp := func(r *Replica) func() bool {
				return func() bool {
					st := r.Status()
					return st.State == StateConnected && st.Offset == infoInt(t, master, "replication", "master_repl_offset")
				}
			}
			waitFor(t, "the full resync", caughtUp(r))
			model.compare(t, master, 0, 3)
			if st := r.Status(); st.FullSyncs != 1 || st.ReplID != infoField(t, master, "replication", "master_replid") {
				t.Fatalf("status after sync: %+v", st)
			}

			writeSome(t, master, "after", false)
			waitFor(t, "the stream", caughtUp(r))
			model.compare(t, master, 0, 3)
			model.mu.Lock()
			var txUnit bool
			for _, u := range model.units {
				txUnit = txUnit || len(u) == 2 && u[0].DB == 3 && string(u[0].Argv[1]) == "tx:after:a"
			}
			model.mu.Unlock()
			if !txUnit {
				t.Fatal("the MULTI/EXEC block did not arrive as one unit")
			}

			// ACKs never pass the durable offset.
			model.setHold(true)
			held := model.DurableOffset()
			writeSome(t, master, "held", false)
			waitFor(t, "the held writes", caughtUp(r))
			waitFor(t, "an ACK after the held writes", func() bool { return r.Status().AckedOffset == held })
			if got := slaveOffset(t, master); got > held {
				t.Fatalf("master heard ACK %d, durable offset is %d", got, held)
			}
			model.setHold(false)
			waitFor(t, "the ACK of the released writes", func() bool {
				return slaveOffset(t, master) == infoInt(t, master, "replication", "master_repl_offset")
			})

			// The master drops the link; writes meanwhile come by +CONTINUE.
			must(t, master.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err())
			writeSome(t, master, "cut", false)
			waitFor(t, "the partial resync", func() bool { return r.Status().PartialSyncs == 1 && caughtUp(r)() })
			model.compare(t, master, 0, 3)
			if full, ok := infoInt(t, master, "stats", "sync_full"), infoInt(t, master, "stats", "sync_partial_ok"); full != 1 || ok != 1 {
				t.Fatalf("master counted %d full and %d partial syncs", full, ok)
			}

			// A restart: a new Replica from the stored position.
			cancel()
			<-done
			replid, off, db := model.position()
			writeSome(t, master, "restart", false)
			cfg.ReplID, cfg.Offset, cfg.DB = replid, off, db
			r2 := NewReplica(cfg, model)
			runCtx, cancel = context.WithCancel(ctx)
			defer cancel()
			go func() { done <- r2.Run(runCtx) }()
			waitFor(t, "the resumed stream", caughtUp(r2))
			model.compare(t, master, 0, 3)
			if st := r2.Status(); st.PartialSyncs != 1 || st.FullSyncs != 0 {
				t.Fatalf("restarted replica: %+v", st)
			}
			cancel()
			<-done
		})
	}
}

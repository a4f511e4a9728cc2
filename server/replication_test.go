package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
	"github.com/redis/go-redis/v9"
)

var testDumpValue DumpValueFunc

// SetTestDumpValue gives this package's tests package commands' DumpValue
// (set from an external test file, as SetTestFamilies).
func SetTestDumpValue(f DumpValueFunc) { testDumpValue = f }

// startReplServer is a server over a real keyspace with the snapshot
// reader wired, serving connections as io says.
// waitReplicaCaughtUp polls the replica r's INFO until its link to the
// master s is up and it has applied everything s sent (with a deadline).
func waitReplicaCaughtUp(t *testing.T, r *redis.Client, s *Server) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for replInfo(r, "master_link_status") != "up" || replInfo(r, "master_repl_offset") != strconv.FormatInt(s.master.Offset(), 10) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the replica")
		}
		time.Sleep(10 * time.Millisecond) // polling INFO
	}
}

func startReplServer(t *testing.T, io string) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: pmem.ModeNone, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Config{Dir: dir, Durability: pmem.ModeNone.String(), DumpValue: testDumpValue, IO: io}, ks, t.Logf, testFamilies)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		<-served
	})
	return s, ln.Addr().String()
}

// startRedisReplica starts Debian's redis-server as a replica of addr.
func startRedisReplica(t *testing.T, addr string) *redis.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	myPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(myPort), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"), "--replicaof", host, port,
		"--enable-debug-command", "yes")
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Logf("replica log:\n%s", log)
		}
	})
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", myPort), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func replInfo(c *redis.Client, field string) string {
	s, _ := c.Info(context.Background(), "replication").Result()
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// TestRedisReplicaOfPersimmon: an unmodified redis-server 7.0 replica of a
// Persimmon master holds its keys after the full resync (strings, lists,
// hashes, sets, sorted sets, expiries, several databases), after writes
// streamed (MULTI/EXEC, a script's writes), and after the link is cut
// (+CONTINUE); WAIT counts it, ROLE and INFO replication list it.
func TestRedisReplicaOfPersimmon(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) { testRedisReplicaOfPersimmon(t, io) })
	}
}

func testRedisReplicaOfPersimmon(t *testing.T, io string) {
	s, addr := startReplServer(t, io)
	ctx := context.Background()
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer p.Close()
	write := func(tag string) {
		for i := range 20 {
			k := fmt.Sprintf("%s:%d", tag, i)
			p.Set(ctx, "s:"+k, "v"+k, 0)
			p.RPush(ctx, "l:"+tag, k)
			p.HSet(ctx, "h:"+tag, "f"+strconv.Itoa(i), k)
			p.SAdd(ctx, "set:"+tag, k)
			p.ZAdd(ctx, "z:"+tag, redis.Z{Score: float64(i), Member: k})
		}
		p.Incr(ctx, "n:"+tag)
		p.Del(ctx, "s:"+tag+":3")
		p.PExpireAt(ctx, "s:"+tag+":4", time.Now().Add(time.Hour))
		c := p.Conn()
		c.Select(ctx, 2)
		c.Set(ctx, "db2:"+tag, "x", 0)
		c.TxPipelined(ctx, func(pp redis.Pipeliner) error {
			pp.Set(ctx, "tx:"+tag, "1", 0)
			pp.Incr(ctx, "tx:"+tag)
			return nil
		})
		c.Close()
		p.Eval(ctx, "redis.call('SET', KEYS[1], 'a'); redis.call('APPEND', KEYS[1], 'b')", []string{"lua:" + tag})
	}
	write("before")
	r := startRedisReplica(t, addr)
	caughtUp := func() bool {
		return replInfo(r, "master_link_status") == "up" && replInfo(r, "master_repl_offset") == strconv.FormatInt(s.master.Offset(), 10)
	}
	wait := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !caughtUp() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: replica at %s, master at %d", what, replInfo(r, "master_repl_offset"), s.master.Offset())
			}
			time.Sleep(10 * time.Millisecond) // polling the replica's INFO
		}
	}
	compare := func() {
		t.Helper()
		for _, db := range []int{0, 2} {
			pc, rc := p.Conn(), r.Conn()
			pc.Select(ctx, db)
			rc.Select(ctx, db)
			pk, _ := pc.Keys(ctx, "*").Result()
			rk, _ := rc.Keys(ctx, "*").Result()
			if len(pk) == 0 || len(pk) != len(rk) {
				t.Fatalf("db %d: master %d keys, replica %d", db, len(pk), len(rk))
			}
			for _, k := range pk {
				pd, rd := valueOf(ctx, pc, k), valueOf(ctx, rc, k)
				pt, _ := pc.PTTL(ctx, k).Result()
				rt, _ := rc.PTTL(ctx, k).Result()
				if pd != rd || (pt > 0) != (rt > 0) {
					t.Fatalf("db %d key %q: master %s ttl %v, replica %s ttl %v", db, k, pd, pt, rd, rt)
				}
			}
			pc.Close()
			rc.Close()
		}
	}
	wait("the full resync")
	compare()

	write("after")
	wait("the stream")
	compare()
	if io == IOGoroutine { // on the loop WAIT answers at once
		if n, err := p.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
			t.Fatalf("WAIT 1: %d, %v", n, err)
		}
	}
	role, err := p.Do(ctx, "ROLE").Slice()
	if err != nil || len(role) != 3 || role[0] != "master" || len(role[2].([]any)) != 1 {
		t.Fatalf("ROLE: %v %v", role, err)
	}
	info, _ := p.Info(ctx, "replication").Result()
	if !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=online") {
		t.Fatalf("INFO replication:\n%s", info)
	}

	s.master.DropReplicas()
	write("cut")
	wait("the partial resync")
	compare()
	if st := s.master.Stats(); st.FullSyncs != 1 || st.PartialOK != 1 {
		t.Fatalf("resyncs: %+v", st)
	}
}

// valueOf renders a key's type and value, members of sets and hashes
// sorted.
func valueOf(ctx context.Context, c *redis.Conn, k string) string {
	typ, _ := c.Type(ctx, k).Result()
	var v any
	switch typ {
	case "string":
		v, _ = c.Get(ctx, k).Result()
	case "list":
		v, _ = c.LRange(ctx, k, 0, -1).Result()
	case "set":
		m, _ := c.SMembers(ctx, k).Result()
		slices.Sort(m)
		v = m
	case "hash":
		h, _ := c.HGetAll(ctx, k).Result()
		v = h // fmt prints maps sorted
	case "zset":
		v, _ = c.ZRangeWithScores(ctx, k, 0, -1).Result()
	}
	return fmt.Sprintf("%s %v", typ, v)
}

// startRedisMaster starts Debian's redis-server as a master.
func startRedisMaster(t *testing.T, extra ...string) (*redis.Client, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command("redis-server", append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"), "--repl-diskless-sync-delay", "0"}, extra...)...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	opts := &redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1}
	for i := 0; i+1 < len(extra); i++ {
		if extra[i] == "--requirepass" {
			opts.Password = extra[i+1]
		}
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i > 500 {
			t.Fatal("redis-server does not answer")
		}
		time.Sleep(10 * time.Millisecond) // between connection attempts
	}
	return c, port
}

// TestPersimmonReplicaOfRedis: REPLICAOF a real redis-server 7.0 master:
// the keys written before (full resync) and after (the stream, MULTI and
// a script) are Persimmon's; client writes get READONLY; ROLE and INFO
// say slave; REPLICAOF NO ONE makes it a writable master whose replid2 is
// the old master's.
func TestPersimmonReplicaOfRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) {
			ctx := context.Background()
			m, mport := startRedisMaster(t)
			s, addr := startReplServer(t, io)
			p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer p.Close()
			write := func(tag string) {
				for i := range 20 {
					k := fmt.Sprintf("%s:%d", tag, i)
					m.Set(ctx, "s:"+k, "v"+k, 0)
					m.RPush(ctx, "l:"+tag, k)
					m.HSet(ctx, "h:"+tag, "f"+strconv.Itoa(i), k)
					m.SAdd(ctx, "set:"+tag, k)
					m.ZAdd(ctx, "z:"+tag, redis.Z{Score: float64(i), Member: k})
				}
				m.PExpireAt(ctx, "s:"+tag+":4", time.Now().Add(time.Hour))
				m.Del(ctx, "s:"+tag+":3")
				m.TxPipelined(ctx, func(pp redis.Pipeliner) error {
					pp.Set(ctx, "tx:"+tag, "1", 0)
					pp.Incr(ctx, "tx:"+tag)
					return nil
				})
				m.Eval(ctx, "redis.call('SET', KEYS[1], 'a'); redis.call('APPEND', KEYS[1], 'b')", []string{"lua:" + tag})
				// Redis sends an approximate trim as MAXLEN = <length>
				// with its LIMIT kept, and XREADGROUP as XCLAIMs.
				for i := range 30 {
					m.XAdd(ctx, &redis.XAddArgs{Stream: "st:" + tag, MaxLen: 5, Approx: true, Limit: 2, Values: []string{"f", strconv.Itoa(i)}})
				}
				m.XGroupCreate(ctx, "st:"+tag, "g", "0")
				m.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{"st:" + tag, ">"}, Count: 2})
			}
			write("before")
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(p.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err())
			caughtUp := func() bool {
				return replInfo(p, "master_link_status") == "up" && replInfo(p, "slave_repl_offset") == replInfo(m, "master_repl_offset")
			}
			wait := func(what string) {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for !caughtUp() {
					if time.Now().After(deadline) {
						t.Fatalf("timed out waiting for %s: at %s, master at %s", what, replInfo(p, "slave_repl_offset"), replInfo(m, "master_repl_offset"))
					}
					time.Sleep(10 * time.Millisecond) // polling INFO
				}
			}
			compare := func() {
				t.Helper()
				mk, _ := m.Keys(ctx, "*").Result()
				pk, _ := p.Keys(ctx, "*").Result()
				if len(mk) == 0 || len(mk) != len(pk) {
					t.Fatalf("master %d keys, replica %d", len(mk), len(pk))
				}
				mc, pc := m.Conn(), p.Conn()
				defer mc.Close()
				defer pc.Close()
				for _, k := range mk {
					mv, pv := valueOf(ctx, mc, k), valueOf(ctx, pc, k)
					mt, _ := mc.PTTL(ctx, k).Result()
					pt, _ := pc.PTTL(ctx, k).Result()
					if mv != pv || (mt > 0) != (pt > 0) {
						t.Fatalf("key %q: master %s ttl %v, replica %s ttl %v", k, mv, mt, pv, pt)
					}
					if typ, _ := mc.Type(ctx, k).Result(); typ == "stream" {
						if mv, pv := renderKey(ctx, m, k), renderKey(ctx, p, k); mv != pv {
							t.Fatalf("stream %q:\nmaster  %s\nreplica %s", k, mv, pv)
						}
					}
				}
			}
			wait("the full resync")
			compare()
			write("after")
			wait("the stream")
			compare()
			if err := p.Set(ctx, "x", "y", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
				t.Fatalf("a client write on the replica: %v", err)
			}
			role, _ := p.Do(ctx, "ROLE").Slice()
			if len(role) != 5 || role[0] != "slave" || role[3] != "connected" {
				t.Fatalf("ROLE: %v", role)
			}
			old := replInfo(m, "master_replid")
			if got := replInfo(p, "master_replid"); got != old {
				t.Fatalf("replica's replid %s, master's %s", got, old)
			}
			must(p.Do(ctx, "REPLICAOF", "NO", "ONE").Err())
			must(p.Set(ctx, "x", "y", 0).Err())
			if replInfo(p, "role") != "master" || replInfo(p, "master_replid2") != old || s.replicaStatus() != nil {
				t.Fatalf("after REPLICAOF NO ONE: role %s replid2 %s", replInfo(p, "role"), replInfo(p, "master_replid2"))
			}
		})
	}
}

// TestPersimmonFailover: Persimmon master A, replica B of A, replica C of
// B (chained: B relays A's stream). A's writes reach C with A's offsets;
// after a cut link B continues partially; then B is promoted (REPLICAOF
// NO ONE) and C, reconnecting with A's replid, continues partially under
// B's new ID and gets B's own writes.
func TestPersimmonFailover(t *testing.T) {
	ctx := context.Background()
	a, aAddr := startReplServer(t, IOLoop)
	b, bAddr := startReplServer(t, IOLoop)
	_, cAddr := startReplServer(t, IOGoroutine)
	ca := redis.NewClient(&redis.Options{Addr: aAddr, MaxRetries: -1})
	cb := redis.NewClient(&redis.Options{Addr: bAddr, MaxRetries: -1})
	cc := redis.NewClient(&redis.Options{Addr: cAddr, MaxRetries: -1})
	defer ca.Close()
	defer cb.Close()
	defer cc.Close()
	write := func(c *redis.Client, tag string) {
		for i := range 30 {
			k := fmt.Sprintf("%s:%d", tag, i)
			c.Set(ctx, "s:"+k, k, 0)
			c.RPush(ctx, "l:"+tag, k)
			c.HSet(ctx, "h:"+tag, k, i)
		}
	}
	write(ca, "before")
	_, aPort, _ := net.SplitHostPort(aAddr)
	_, bPort, _ := net.SplitHostPort(bAddr)
	if err := cb.Do(ctx, "REPLICAOF", "127.0.0.1", aPort).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cc.Do(ctx, "REPLICAOF", "127.0.0.1", bPort).Err(); err != nil {
		t.Fatal(err)
	}
	at := func(c *redis.Client, off int64) func() bool {
		return func() bool {
			return replInfo(c, "master_link_status") == "up" && replInfo(c, "slave_repl_offset") == strconv.FormatInt(off, 10)
		}
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond) // polling INFO
		}
	}
	same := func(x, y *redis.Client) {
		t.Helper()
		xk, _ := x.Keys(ctx, "*").Result()
		yk, _ := y.Keys(ctx, "*").Result()
		if len(xk) == 0 || len(xk) != len(yk) {
			t.Fatalf("%d keys and %d keys", len(xk), len(yk))
		}
		xc, yc := x.Conn(), y.Conn()
		defer xc.Close()
		defer yc.Close()
		for _, k := range xk {
			if xv, yv := valueOf(ctx, xc, k), valueOf(ctx, yc, k); xv != yv {
				t.Fatalf("key %q: %s and %s", k, xv, yv)
			}
		}
	}
	write(ca, "after")
	wait("C at A's offset", func() bool { return at(cb, a.master.Offset())() && at(cc, a.master.Offset())() })
	same(ca, cc)

	a.master.DropReplicas()
	write(ca, "cut")
	wait("B's partial resync", func() bool { return a.master.Stats().PartialOK == 1 && at(cb, a.master.Offset())() })
	wait("C after it", at(cc, a.master.Offset()))
	same(ca, cc)

	// A is gone; B is promoted; C continues from B.
	aID, bFull := a.master.IDs().ID, b.master.Stats().FullSyncs
	if err := cb.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	write(cb, "promoted")
	wait("C under B's new ID", func() bool {
		return at(cc, b.master.Offset())() && replInfo(cc, "master_replid") == b.master.IDs().ID
	})
	same(cb, cc)
	if ids := b.master.IDs(); ids.ID2 != aID || b.master.Stats().FullSyncs != bFull || b.master.Stats().PartialOK < 1 {
		t.Fatalf("B after promotion: %+v (A's ID %s), stats %+v", ids, aID, b.master.Stats())
	}
}

// TestReplicatedBlockingPops: pops served at once and pops served later
// (a client blocked in BLPOP/BLMOVE/BZPOPMIN/BLMPOP until another pushes)
// reach a redis-server replica as what they did (LPOP, LMOVE, ZPOPMIN,
// LMPOP), so the replica's lists and sorted sets match the master's.
func TestReplicatedBlockingPops(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	for _, io := range []string{IOGoroutine, IOLoop} {
		t.Run(io, func(t *testing.T) {
			ctx := context.Background()
			s, addr := startReplServer(t, io)
			p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: -1})
			defer p.Close()
			p.RPush(ctx, "seed", "x")
			r := startRedisReplica(t, addr)
			wait := func() {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for replInfo(r, "master_link_status") != "up" || replInfo(r, "master_repl_offset") != strconv.FormatInt(s.master.Offset(), 10) {
					if time.Now().After(deadline) {
						t.Fatal("timed out waiting for the replica")
					}
					time.Sleep(10 * time.Millisecond) // polling INFO
				}
			}
			wait()
			p.RPush(ctx, "now", "1", "2", "3")
			p.BLPop(ctx, time.Second, "none", "now")
			p.ZAdd(ctx, "zs", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
			p.BZPopMin(ctx, time.Second, "zs")
			served := make(chan error, 4)
			block := func(f func(c *redis.Client) error) {
				c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: -1})
				go func() { defer c.Close(); served <- f(c) }()
			}
			block(func(c *redis.Client) error { return c.BLPop(ctx, 0, "q1", "q2").Err() })
			block(func(c *redis.Client) error { return c.BLMove(ctx, "m1", "m2", "LEFT", "RIGHT", 0).Err() })
			block(func(c *redis.Client) error { return c.BZPopMax(ctx, 0, "z2").Err() })
			block(func(c *redis.Client) error { _, _, err := c.BLMPop(ctx, 0, "left", 2, "l1").Result(); return err })
			waitBlocked := func(n int64) {
				deadline := time.Now().Add(10 * time.Second)
				for {
					info, _ := p.Info(ctx, "clients").Result()
					if strings.Contains(info, "blocked_clients:"+strconv.FormatInt(n, 10)) {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("clients not blocked:\n%s", info)
					}
					time.Sleep(5 * time.Millisecond) // polling INFO
				}
			}
			waitBlocked(4)
			p.RPush(ctx, "q2", "a", "b")
			p.RPush(ctx, "m1", "c", "d")
			p.ZAdd(ctx, "z2", redis.Z{Score: 1, Member: "lo"}, redis.Z{Score: 9, Member: "hi"})
			p.RPush(ctx, "l1", "e", "f", "g")
			for range 4 {
				if err := <-served; err != nil {
					t.Fatal(err)
				}
			}
			wait()
			pc, rc := p.Conn(), r.Conn()
			defer pc.Close()
			defer rc.Close()
			for _, k := range []string{"now", "zs", "q2", "m1", "m2", "z2", "l1", "seed"} {
				if pv, rv := valueOf(ctx, pc, k), valueOf(ctx, rc, k); pv != rv {
					t.Fatalf("key %q: master %s, replica %s", k, pv, rv)
				}
			}
		})
	}
}

// TestReplicatedExpiry: relative expiries reach a redis-server replica as
// the absolute time the master set (PEXPIRETIME equal to the
// millisecond), and an EXPIRE in the past as the delete it was.
func TestReplicatedExpiry(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	s, addr := startReplServer(t, IOLoop)
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer p.Close()
	p.Set(ctx, "seed", "x", 0)
	r := startRedisReplica(t, addr)
	wait := func() { t.Helper(); waitReplicaCaughtUp(t, r, s) }
	wait()
	for _, k := range []string{"e1", "e2", "e6", "e7"} {
		p.Set(ctx, k, "v", 0)
	}
	p.Expire(ctx, "e1", 100*time.Second)
	p.PExpire(ctx, "e2", 50*time.Second)
	p.SetEx(ctx, "e3", "v", 100*time.Second)
	p.Set(ctx, "e4", "v", 100*time.Second)
	p.SetNX(ctx, "e5", "v", 70*time.Second)
	p.SetNX(ctx, "e5", "w", 10*time.Second) // refused: no change
	p.GetEx(ctx, "e6", 90*time.Second)
	p.Do(ctx, "EXPIRE", "e7", "-1")
	p.Set(ctx, "last", "x", 0)
	wait()
	for _, k := range []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"} {
		pm, _ := p.Do(ctx, "PEXPIRETIME", k).Int64()
		rm, _ := r.Do(ctx, "PEXPIRETIME", k).Int64()
		pv, _ := p.Get(ctx, k).Result()
		rv, _ := r.Get(ctx, k).Result()
		if pm != rm || pv != rv {
			t.Fatalf("key %s: master %q expires at %d, replica %q at %d", k, pv, pm, rv, rm)
		}
	}
}

// TestReplicaMasterauth: REPLICAOF a password-protected redis-server
// authenticates with CONFIG SET masterauth, and without it the link stays
// down.
func TestReplicaMasterauth(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	m, mport := startRedisMaster(t, "--requirepass", "sekret")
	m.Set(ctx, "k", "v", 0)
	s, addr := startReplServer(t, IOGoroutine)
	p := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer p.Close()
	if err := p.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := s.replicaStatus().r.Status()
		if strings.Contains(st.LastError, "NOAUTH") || strings.Contains(st.LastError, "AUTH") {
			break // refused for want of the password, as it should be
		}
		if time.Now().After(deadline) || st.State == "connected" {
			t.Fatalf("no password: %+v", st)
		}
		time.Sleep(10 * time.Millisecond) // polling the link's status
	}
	if p.Get(ctx, "k").Err() != redis.Nil {
		t.Fatal("data arrived without the password")
	}
	if err := p.ConfigSet(ctx, "masterauth", "sekret").Err(); err != nil {
		t.Fatal(err)
	}
	p.Do(ctx, "REPLICAOF", "NO", "ONE")
	if err := p.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	for v, _ := p.Get(ctx, "k").Result(); v != "v"; v, _ = p.Get(ctx, "k").Result() {
		if time.Now().After(deadline) {
			t.Fatalf("with masterauth: link %s", replInfo(p, "master_link_status"))
		}
		time.Sleep(10 * time.Millisecond) // polling the replica
	}
}

// TestFullSyncWhileWriting: a full resync of a dataset of 100,000 keys
// while writers go on (INCR and RPUSH of keys that were there when the
// snapshot was taken, new keys, DEL, and FLUSHDB of database 1): the
// snapshot is read a chunk at a time and copies a key before a write
// changes it, so a redis-server replica and a Persimmon replica, once
// caught up, hold exactly the master's data (a write both in the snapshot
// and in the stream would show as an INCR or RPUSH applied twice), and
// some keys were copied that way (the writes ran during the copy).
func TestFullSyncWhileWriting(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	s, addr := startReplServer(t, IOLoop)
	m := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: time.Minute})
	defer m.Close()
	const nkeys = 100_000
	for i := 0; i < nkeys; i += 1000 {
		_, err := m.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := i; j < i+1000; j++ {
				p.Set(ctx, "k"+strconv.Itoa(j), 0, 0)
			}
			p.RPush(ctx, "l"+strconv.Itoa(i/1000), "start")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	m1 := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DB: 1})
	defer m1.Close()
	for i := range 500 {
		m1.Set(ctx, "d1:"+strconv.Itoa(i), i, 0)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer c.Close()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
					for range 50 {
						p.Incr(ctx, "k"+strconv.Itoa(rng.IntN(nkeys)))
						p.RPush(ctx, "l"+strconv.Itoa(rng.IntN(nkeys/1000)), n)
					}
					p.Set(ctx, fmt.Sprintf("new:%d:%d", w, n), n, 0)
					p.Del(ctx, "k"+strconv.Itoa(rng.IntN(nkeys)))
					return nil
				})
				if err != nil {
					t.Errorf("writer: %v", err)
					return
				}
			}
		}()
	}
	r := startRedisReplica(t, addr)
	_, paddr := startReplServer(t, IOGoroutine)
	p := redis.NewClient(&redis.Options{Addr: paddr, MaxRetries: -1})
	defer p.Close()
	_, mport, _ := net.SplitHostPort(addr)
	if err := p.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond) // polling INFO
		}
	}
	poll("both replicas to load the snapshot", func() bool {
		return replInfo(r, "master_link_status") == "up" && replInfo(p, "master_link_status") == "up"
	})
	m1.FlushDB(ctx) // database 1 emptied after the snapshot: in the stream
	m1.Set(ctx, "d1:after", "x", 0)
	close(stop)
	wg.Wait()
	m.Set(ctx, "last", "x", 0)
	for _, c := range []*redis.Client{r, p} {
		poll("the replicas to catch up", func() bool {
			return replInfo(c, "slave_repl_offset") == strconv.FormatInt(s.master.Offset(), 10)
		})
	}
	if n := s.replica.snapCopiedEarly.Load(); n == 0 {
		t.Fatalf("no key was copied before a write changed it: the writes did not run during the snapshot")
	} else {
		t.Logf("%d keys copied before a write changed them", n)
	}
	for _, db := range []int{0, 1} {
		mc := redis.NewClient(&redis.Options{Addr: addr, DB: db})
		defer mc.Close()
		keys, err := mc.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		for _, c := range []*redis.Client{r, p} {
			rc := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: db})
			defer rc.Close()
			rkeys, _ := rc.Keys(ctx, "*").Result()
			slices.Sort(rkeys)
			if !slices.Equal(keys, rkeys) {
				t.Fatalf("db %d: master %d keys, replica %s %d", db, len(keys), c.Options().Addr, len(rkeys))
			}
			for i := 0; i < len(keys); i += 500 {
				batch := keys[i:min(i+500, len(keys))]
				var strs []string
				for _, k := range batch {
					if k[0] != 'l' {
						strs = append(strs, k)
					}
				}
				mv, _ := mc.MGet(ctx, strs...).Result()
				rv, _ := rc.MGet(ctx, strs...).Result()
				if fmt.Sprint(mv) != fmt.Sprint(rv) {
					for j := range mv {
						if fmt.Sprint(mv[j]) != fmt.Sprint(rv[j]) {
							t.Fatalf("db %d key %s: master %v, replica %s %v", db, strs[j], mv[j], c.Options().Addr, rv[j])
						}
					}
				}
				for _, k := range batch {
					if k[0] == 'l' {
						a, _ := mc.LRange(ctx, k, 0, -1).Result()
						b, _ := rc.LRange(ctx, k, 0, -1).Result()
						if !slices.Equal(a, b) {
							t.Fatalf("db %d list %s: master %d items, replica %s %d", db, k, len(a), c.Options().Addr, len(b))
						}
					}
				}
			}
		}
		t.Logf("db %d: %d keys equal on the master and both replicas", db, len(keys))
	}
}

// TestFullSyncRoaring: a full resync carries TR.* bitmaps to a Persimmon
// replica (it says REPLCONF capa persimmon-roaring) and leaves them out
// for a redis-server replica, which has no type for them and would
// refuse the whole snapshot; both load the rest.
func TestFullSyncRoaring(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ctx := context.Background()
	_, addr := startReplServer(t, IOLoop)
	m := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer m.Close()
	if err := m.Do(ctx, "TR.SETBITS", "bm", 3, 99999, 1<<20).Err(); err != nil {
		t.Fatal(err)
	}
	m.Set(ctx, "plain", "v", 0)
	_, paddr := startReplServer(t, IOGoroutine)
	p := redis.NewClient(&redis.Options{Addr: paddr, MaxRetries: -1})
	defer p.Close()
	_, mport, _ := net.SplitHostPort(addr)
	if err := p.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	r := startRedisReplica(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	for replInfo(p, "master_link_status") != "up" || replInfo(r, "master_link_status") != "up" {
		if time.Now().After(deadline) {
			t.Fatal("the replicas did not sync")
		}
		time.Sleep(20 * time.Millisecond) // polling INFO
	}
	for _, bit := range []int{3, 99999, 1 << 20} {
		if v, err := p.Do(ctx, "TR.GETBIT", "bm", bit).Int(); err != nil || v != 1 {
			t.Fatalf("the Persimmon replica's TR.GETBIT bm %d: %d %v", bit, v, err)
		}
	}
	if n, _ := p.Do(ctx, "TR.BITCOUNT", "bm").Int(); n != 3 {
		t.Fatalf("the Persimmon replica's TR.BITCOUNT bm = %d, want 3", n)
	}
	if v, _ := r.Get(ctx, "plain").Result(); v != "v" {
		t.Fatalf("the redis-server replica's plain = %q", v)
	}
	if n, _ := r.Exists(ctx, "bm").Result(); n != 0 {
		t.Fatalf("the redis-server replica has bm")
	}
}

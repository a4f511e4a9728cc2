package server

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/pmem"
	"github.com/persimmon-db/persimmon/recovery"
	"github.com/redis/go-redis/v9"
)

// Tests of the server over the real keyspace (recovery.Open on a temporary
// directory), driven by go-redis as a real client would.

// ksServer is a server over a real keyspace in dir.
type ksServer struct {
	*Server
	ks   *keyspace.Keyspace
	addr string
	dir  string
}

func startKeyspaceServer(t *testing.T, dir string, mode pmem.Mode) *ksServer {
	t.Helper()
	mode = testMode(t, mode)
	ks, _, err := recovery.Open(recovery.Options{Dir: dir, Mode: mode, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Config{ProtectedMode: true, Dir: dir, Durability: mode.String(), IO: testIO()}, ks, t.Logf, testFamilies)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &ksServer{Server: s, ks: ks, addr: ln.Addr().String(), dir: dir}
}

func goRedis(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// Invariant 1 with a real keyspace in msync mode (where a write stays
// non-durable longest): when a reply arrives, the write it acknowledges is
// durable.
func TestKeyspaceReplyMeansDurable(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModeMsync)
	ctx := context.Background()
	rc := goRedis(t, s.addr)
	for i := 0; i < 200; i++ {
		before := s.ks.Stats().LastLSN
		if err := rc.Set(ctx, "k", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		// The SET's record came after before, so it is at least before+1.
		if d := s.ks.Stats().DurableLSN; d < before+1 {
			t.Fatalf("SET %d acknowledged with durable LSN %d < its LSN (> %d)", i, d, before)
		}
	}
}

func TestKeyspaceMultiExecWatch(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	ctx := context.Background()
	rc, other := goRedis(t, s.addr), goRedis(t, s.addr)

	cmds, err := rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "a", "1", 0)
		p.Incr(ctx, "a")
		p.Get(ctx, "a")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmds[2].(*redis.StringCmd).Val(); got != "2" {
		t.Fatalf("GET inside EXEC = %q, want 2", got)
	}

	// WATCH: a write by another client between WATCH and EXEC aborts EXEC.
	err = rc.Watch(ctx, func(tx *redis.Tx) error {
		if err := other.Set(ctx, "a", "changed", 0).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "a", "mine", 0)
			return nil
		})
		return err
	}, "a")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("EXEC after a watched key changed: %v, want TxFailedErr", err)
	}
	if got := rc.Get(ctx, "a").Val(); got != "changed" {
		t.Fatalf("a = %q, want changed", got)
	}
	// Unchanged watched keys let EXEC run.
	err = rc.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "a", "mine", 0)
			return nil
		})
		return err
	}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := rc.Get(ctx, "a").Val(); got != "mine" {
		t.Fatalf("a = %q, want mine", got)
	}
}

func TestKeyspaceInfo(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	ctx := context.Background()
	rc := goRedis(t, s.addr)
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	info, err := rc.Info(ctx, "keyspace", "persistence", "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "wal_syncs:1\r\n") || !strings.Contains(info, "wal_records_per_sync:1.00\r\n") ||
		!strings.Contains(info, "wal_sync_p99_us:") {
		t.Errorf("INFO does not count the SET's one sync and its cost:\n%s", info)
	}
	if got := strings.Contains(info, "committer_batches_per_sync:"); got != (s.commit != nil) {
		t.Errorf("committer lines in INFO: %v, committer running: %v", got, s.commit != nil)
	}
	for _, want := range []string{
		"# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n",
		"durability_mode:" + testMode(t, pmem.ModePmem).String() + "\r\n",
		"wal_flushes:",
		"wal_group_commit_avg_records:",
		"arena_bytes:",
		"live_bytes:",
		"go_heap_bytes:",
		"used_memory:",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q:\n%s", want, info)
		}
	}
	// INFO inside EXEC (the lock is already held) must not deadlock.
	cmds, err := rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Info(ctx, "keyspace")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmds[0].(*redis.StringCmd).Val(); !strings.Contains(got, "db0:keys=1,") {
		t.Fatalf("INFO keyspace in EXEC = %q", got)
	}
}

// go-redis connects with HELLO 3 (refused: RESP2 only), then falls back,
// sends CLIENT SETINFO, SELECT and AUTH as configured.
func TestKeyspaceGoRedisHandshake(t *testing.T) {
	s := startKeyspaceServer(t, t.TempDir(), pmem.ModePmem)
	ctx := context.Background()
	if err := goRedis(t, s.addr).ConfigSet(ctx, "requirepass", "pw").Err(); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: s.addr, Password: "pw", DB: 3, ClientName: "app"})
	defer rc.Close()
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	line, err := rc.ClientInfo(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if line.DB != 3 || line.Name != "app" {
		t.Fatalf("CLIENT INFO = %+v, want db 3 name app", line)
	}
	wrong := redis.NewClient(&redis.Options{Addr: s.addr, Password: "nope"})
	defer wrong.Close()
	if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("PING with a wrong password: %v", err)
	}
}

// SHUTDOWN closes the keyspace after the batches in flight; a new server on
// the same directory finds every acknowledged write.
func TestKeyspaceShutdownAndReopen(t *testing.T) {
	dir := t.TempDir()
	s := startKeyspaceServer(t, dir, pmem.ModeMsync)
	ctx := context.Background()
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rc := redis.NewClient(&redis.Options{Addr: s.addr})
			defer rc.Close()
			for i := 0; i < 50; i++ {
				if err := rc.Set(ctx, "k"+string(rune('a'+c))+strings.Repeat("x", i), i, 0).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	// No reply on success: the connection just closes (go-redis maps that
	// to a nil error for SHUTDOWN).
	goRedis(t, s.addr).Shutdown(ctx)
	<-s.Done()

	s2 := startKeyspaceServer(t, dir, pmem.ModeMsync)
	rc2 := goRedis(t, s2.addr)
	n, err := rc2.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n != 200 {
		t.Fatalf("DBSIZE after reopen = %d, want 200", n)
	}
}

// testMode is the durability mode the keyspace tests run with:
// PERSIMMON_TEST_DURABILITY (pmem, msync or none) if set, else mode.
// With msync and PERSIMMON_TEST_IO=loop the tests run through the
// committer (commit.go).
func testMode(t *testing.T, mode pmem.Mode) pmem.Mode {
	v := os.Getenv("PERSIMMON_TEST_DURABILITY")
	if v == "" {
		return mode
	}
	m, err := pmem.ParseMode(v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

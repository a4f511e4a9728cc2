package repl

import (
	"context"
	"fmt"
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

	"github.com/persimmon-db/persimmon/rdb"
	"github.com/redis/go-redis/v9"
)

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRedis starts Debian's redis-server (no persistence, its files in a
// temporary directory) with extra arguments, and returns its port and a
// client; the process is killed when the test ends.
func startRedis(t *testing.T, extra ...string) (int, *redis.Client) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH: %v", err)
	}
	dir := t.TempDir()
	port := freePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log")}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Logf("redis-server %d log:\n%s", port, log)
		}
	})
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	for i := 0; ; i++ {
		select {
		case <-done:
			t.Fatalf("redis-server exited: %v", waitErr)
		default:
		}
		if err := c.Ping(context.Background()).Err(); err == nil || strings.Contains(err.Error(), "NOAUTH") || strings.Contains(err.Error(), "WRONGPASS") {
			return port, c
		}
		if i > 500 {
			t.Fatal("redis-server does not answer PING")
		}
		time.Sleep(20 * time.Millisecond) // between connection attempts
	}
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not a synchronization
	}
}

// infoField reads one field of INFO section from c.
func infoField(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

func infoInt(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	n, _ := strconv.ParseInt(infoField(t, c, section, field), 10, 64)
	return n
}

// modelApplier is a test Applier: a model keyspace of strings, lists,
// hashes and sets that understands the writes the tests issue, and the
// log of what it was given. Its durable offset can be held back.
type modelApplier struct {
	mu        sync.Mutex
	dbs       map[int]map[string]rdb.Value
	replid    string
	offset    int64
	db        int // the database of the last write: the stream's at offset
	durable   int64
	hold      bool // durable stops moving while set
	units     [][]Command
	snapshots int
	loadErr   error // returned by Load once when set
}

func newModel() *modelApplier { return &modelApplier{dbs: map[int]map[string]rdb.Value{}} }

type modelLoader struct {
	m   *modelApplier
	dbs map[int]map[string]rdb.Value
	off int64
	id  string
}

func (m *modelApplier) BeginSnapshot(replid string, offset int64) (SnapshotLoader, error) {
	return &modelLoader{m: m, dbs: map[int]map[string]rdb.Value{}, off: offset, id: replid}, nil
}

func (l *modelLoader) Load(e *rdb.Entry) error {
	l.m.mu.Lock()
	err := l.m.loadErr
	l.m.loadErr = nil
	l.m.mu.Unlock()
	if err != nil {
		return err
	}
	if l.dbs[e.DB] == nil {
		l.dbs[e.DB] = map[string]rdb.Value{}
	}
	l.dbs[e.DB][string(e.Key)] = e.Value
	return nil
}

func (l *modelLoader) LoadFunction([]byte) error { return nil }

func (l *modelLoader) Commit() error {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dbs, m.replid, m.offset, m.db, m.snapshots = l.dbs, l.id, l.off, 0, m.snapshots+1
	if !m.hold {
		m.durable = l.off
	}
	return nil
}

func (l *modelLoader) Abort() {}

func (m *modelApplier) ChangeReplID(replid string, offset int64) error {
	m.mu.Lock()
	m.replid = replid
	m.mu.Unlock()
	return nil
}

func (m *modelApplier) DurableOffset() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.durable
}

// position is what a restarting replica would read from its store.
func (m *modelApplier) position() (string, int64, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.replid, m.offset, m.db
}

func (m *modelApplier) setHold(h bool) {
	m.mu.Lock()
	m.hold = h
	if !h {
		m.durable = m.offset
	}
	m.mu.Unlock()
}

func (m *modelApplier) Apply(u *Unit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u.Offset <= m.offset {
		return fmt.Errorf("offset %d after %d", u.Offset, m.offset)
	}
	for _, c := range u.Cmds {
		if err := modelExec(m.dbs, c.DB, c.Argv); err != nil {
			return err
		}
	}
	if len(u.Cmds) > 0 {
		m.units = append(m.units, u.Cmds)
	}
	m.offset, m.db = u.Offset, u.DB
	if !m.hold {
		m.durable = u.Offset
	}
	return nil
}

// modelExec runs one write of the kinds the tests issue on a model
// keyspace.
func modelExec(dbs map[int]map[string]rdb.Value, dbn int, a [][]byte) error {
	if dbs[dbn] == nil {
		dbs[dbn] = map[string]rdb.Value{}
	}
	db := dbs[dbn]
	k := ""
	if len(a) > 1 {
		k = string(a[1])
	}
	v := db[k]
	switch strings.ToUpper(string(a[0])) {
	case "SET":
		db[k] = rdb.Value{Kind: rdb.KindString, Str: a[2]}
	case "INCR":
		n, _ := strconv.ParseInt(string(v.Str), 10, 64)
		db[k] = rdb.Value{Kind: rdb.KindString, Str: strconv.AppendInt(nil, n+1, 10)}
	case "DEL":
		for _, key := range a[1:] {
			delete(db, string(key))
		}
	case "RPUSH":
		v.Kind = rdb.KindList
		v.Items = append(slices.Clone(v.Items), a[2:]...)
		db[k] = v
	case "SADD":
		v.Kind = rdb.KindSet
		v.Items = slices.Clone(v.Items)
		for _, x := range a[2:] {
			if !slices.ContainsFunc(v.Items, func(y []byte) bool { return string(y) == string(x) }) {
				v.Items = append(v.Items, x)
			}
		}
		db[k] = v
	case "HSET":
		v.Kind = rdb.KindHash
		v.Items = slices.Clone(v.Items)
	fields:
		for i := 2; i+1 < len(a); i += 2 {
			for j := 0; j < len(v.Items); j += 2 {
				if string(v.Items[j]) == string(a[i]) {
					v.Items[j+1] = a[i+1]
					continue fields
				}
			}
			v.Items = append(v.Items, a[i], a[i+1])
		}
		db[k] = v
	default:
		return fmt.Errorf("model: unknown command %q", a[0])
	}
	return nil
}

// compare checks the model against the master's keys in databases dbs.
func (m *modelApplier) compare(t *testing.T, c *redis.Client, dbs ...int) {
	t.Helper()
	ctx := context.Background()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, db := range dbs {
		conn := c.Conn()
		if err := conn.Select(ctx, db).Err(); err != nil {
			t.Fatal(err)
		}
		keys, err := conn.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != len(m.dbs[db]) {
			t.Fatalf("db %d: master has %d keys, replica %d", db, len(keys), len(m.dbs[db]))
		}
		for _, k := range keys {
			got, ok := m.dbs[db][k]
			if !ok {
				t.Fatalf("db %d: key %q missing on the replica", db, k)
			}
			if want, have := masterValue(t, conn, k), canonical(got); want != have {
				t.Fatalf("db %d key %q: master %s, replica %s", db, k, want, have)
			}
		}
		conn.Close()
	}
}

func canonical(v rdb.Value) string {
	switch v.Kind {
	case rdb.KindString:
		return "string:" + string(v.Str)
	case rdb.KindList:
		return fmt.Sprintf("list:%q", v.Items)
	case rdb.KindSet:
		s := make([]string, len(v.Items))
		for i, x := range v.Items {
			s[i] = string(x)
		}
		slices.Sort(s)
		return fmt.Sprintf("set:%q", s)
	case rdb.KindHash:
		var s []string
		for i := 0; i+1 < len(v.Items); i += 2 {
			s = append(s, string(v.Items[i])+"="+string(v.Items[i+1]))
		}
		slices.Sort(s)
		return fmt.Sprintf("hash:%q", s)
	}
	return fmt.Sprintf("kind %d", v.Kind)
}

func masterValue(t *testing.T, c *redis.Conn, k string) string {
	t.Helper()
	ctx := context.Background()
	typ, err := c.Type(ctx, k).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v rdb.Value
	switch typ {
	case "string":
		s, _ := c.Get(ctx, k).Result()
		v = rdb.Value{Kind: rdb.KindString, Str: []byte(s)}
	case "list":
		items, _ := c.LRange(ctx, k, 0, -1).Result()
		v = rdb.Value{Kind: rdb.KindList, Items: toBytes(items)}
	case "set":
		items, _ := c.SMembers(ctx, k).Result()
		v = rdb.Value{Kind: rdb.KindSet, Items: toBytes(items)}
	case "hash":
		h, _ := c.HGetAll(ctx, k).Result()
		for f, x := range h {
			v.Items = append(v.Items, []byte(f), []byte(x))
		}
		v.Kind = rdb.KindHash
	default:
		t.Fatalf("key %q of type %s", k, typ)
	}
	return canonical(v)
}

func toBytes(s []string) [][]byte {
	b := make([][]byte, len(s))
	for i, x := range s {
		b[i] = []byte(x)
	}
	return b
}

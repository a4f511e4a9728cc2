package rdb

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// These tests run Debian's redis-server 7.0 (on PATH) as the reference: it
// writes the payloads and files this package reads, and loads the ones it
// writes.

// startRedis starts redis-server with its data directory dir (loading
// dir/dump.rdb if present) and returns a client; the process is killed when
// the test ends.
func startRedis(t *testing.T, dir string) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--dbfilename", "dump.rdb",
		"--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	for i := 0; ; i++ {
		select {
		case err := <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server exited: %v\n%s", err, log)
		default:
		}
		if c.Ping(context.Background()).Err() == nil {
			return c
		}
		if i > 500 {
			t.Fatal("redis-server does not answer PING")
		}
		time.Sleep(20 * time.Millisecond) // between connection attempts
	}
}

// lib is a function library, saved in RDB files as a FUNCTION2 record.
const lib = "#!lua name=rdbtest\nredis.register_function('rdbtest_echo', function(keys, args) return args[1] end)"

// fixture is a key of every kind and encoding, small and big.
type fixture struct {
	db  int
	key string
	fn  func(ctx context.Context, c *redis.Client, key string) error
}

func fixtures() []fixture {
	long := strings.Repeat("compressible ", 200)
	var noise []byte
	for i := range 300 {
		noise = append(noise, byte(i*131+i*i*7))
	}
	list := func(n, size int) func(context.Context, *redis.Client, string) error {
		return func(ctx context.Context, c *redis.Client, key string) error {
			var vals []any
			for i := range n {
				switch i % 3 {
				case 0:
					vals = append(vals, i*997-50000)
				case 1:
					vals = append(vals, strings.Repeat(string(rune('a'+i%26)), size))
				default:
					vals = append(vals, fmt.Sprintf("e%d", i))
				}
			}
			return c.RPush(ctx, key, vals...).Err()
		}
	}
	set := func(n int, ints bool) func(context.Context, *redis.Client, string) error {
		return func(ctx context.Context, c *redis.Client, key string) error {
			var vals []any
			for i := range n {
				if ints {
					vals = append(vals, int64(i)*int64(i)*1000003-7)
				} else {
					vals = append(vals, fmt.Sprintf("m%d", i))
				}
			}
			return c.SAdd(ctx, key, vals...).Err()
		}
	}
	hash := func(n, vsize int) func(context.Context, *redis.Client, string) error {
		return func(ctx context.Context, c *redis.Client, key string) error {
			var vals []any
			for i := range n {
				vals = append(vals, fmt.Sprintf("f%d", i))
				if i%2 == 0 {
					vals = append(vals, i*31)
				} else {
					vals = append(vals, strings.Repeat("v", vsize))
				}
			}
			return c.HSet(ctx, key, vals...).Err()
		}
	}
	zset := func(n, msize int) func(context.Context, *redis.Client, string) error {
		return func(ctx context.Context, c *redis.Client, key string) error {
			var zs []redis.Z
			for i := range n {
				score := []float64{float64(i), float64(i) + 0.5, -1e-7 * float64(i), 1e300, -3}[i%5]
				if i == 1 {
					score = math_inf
				}
				zs = append(zs, redis.Z{Score: score, Member: fmt.Sprintf("%s%d", strings.Repeat("z", msize), i)})
			}
			return c.ZAdd(ctx, key, zs...).Err()
		}
	}
	str := func(v string) func(context.Context, *redis.Client, string) error {
		return func(ctx context.Context, c *redis.Client, key string) error { return c.Set(ctx, key, v, 0).Err() }
	}
	return []fixture{
		{0, "s:int8", str("-12")}, {0, "s:int16", str("3000")}, {0, "s:int32", str("-2000000000")},
		{0, "s:int64", str("9000000000000")}, {0, "s:text", str("hello world")}, {0, "s:empty", str("")},
		{0, "s:lzf", str(long)}, {0, "s:noise", str(string(noise))}, {0, "12345", str("an int key")},
		{0, "l:small", list(5, 3)}, {0, "l:big", list(3000, 20)}, {0, "l:longelems", list(10, 9000)},
		{0, "set:intset", set(10, true)}, {0, "set:bigints", set(600, true)}, {0, "set:strs", set(20, false)},
		{0, "h:small", hash(5, 10)}, {0, "h:big", hash(300, 10)}, {0, "h:longval", hash(3, 100)},
		{0, "z:small", zset(6, 2)}, {0, "z:big", zset(300, 3)}, {0, "z:longmember", zset(3, 80)},
		{3, "db3:list", list(4, 2)}, {3, "db3:str", str("in db 3")},
	}
}

var math_inf = func() float64 { f, _ := strconv.ParseFloat("+inf", 64); return f }()

// fromRedis reads key's value through ordinary commands.
func fromRedis(t *testing.T, ctx context.Context, c *redis.Client, key string) Value {
	t.Helper()
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v Value
	switch typ {
	case "string":
		s, _ := c.Get(ctx, key).Result()
		v = Value{Kind: KindString, Str: []byte(s)}
	case "list":
		vals, _ := c.LRange(ctx, key, 0, -1).Result()
		v = Value{Kind: KindList, Items: bs(vals)}
	case "set":
		vals, _ := c.SMembers(ctx, key).Result()
		v = Value{Kind: KindSet, Items: bs(vals)}
	case "hash":
		m, _ := c.HGetAll(ctx, key).Result()
		v = Value{Kind: KindHash}
		for f, x := range m {
			v.Items = append(v.Items, []byte(f), []byte(x))
		}
	case "zset":
		zs, _ := c.ZRangeWithScores(ctx, key, 0, -1).Result()
		v = Value{Kind: KindZSet}
		for _, z := range zs {
			v.Items = append(v.Items, []byte(z.Member.(string)))
			v.Scores = append(v.Scores, z.Score)
		}
	default:
		t.Fatalf("key %q has type %q", key, typ)
	}
	return v
}

func bs(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func populate(t *testing.T, ctx context.Context, c *redis.Client) {
	for _, f := range fixtures() {
		c.Do(ctx, "SELECT", f.db)
		if err := f.fn(ctx, c, f.key); err != nil {
			t.Fatalf("%s: %v", f.key, err)
		}
	}
	c.Do(ctx, "SELECT", 0)
}

// TestRedisDumpPayloads: every payload redis-server's DUMP writes decodes
// to the key's value; our payload of that value RESTOREs in redis-server to
// the same value; and where Redis did not LZF-compress, our bytes equal its.
func TestRedisDumpPayloads(t *testing.T) {
	ctx := context.Background()
	c := startRedis(t, t.TempDir())
	populate(t, ctx, c)
	identical := 0
	for _, f := range fixtures() {
		if f.db != 0 {
			continue
		}
		want := fromRedis(t, ctx, c, f.key)
		p, err := c.Dump(ctx, f.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Restore([]byte(p))
		if err != nil {
			t.Fatalf("%s: Restore of redis's payload (type %d): %v", f.key, p[0], err)
		}
		if !reflect.DeepEqual(canon(got), canon(want)) {
			t.Fatalf("%s: decoded value differs from redis's", f.key)
		}
		ours, err := Dump(&got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, []byte(p)) {
			t.Errorf("%s: our payload differs from redis's:\n ours % x\nredis % x", f.key, head(ours), head([]byte(p)))
		} else {
			identical++
		}
		if err := c.RestoreReplace(ctx, "copy:"+f.key, 0, string(ours)).Err(); err != nil {
			t.Fatalf("%s: redis refuses our payload (type %d): %v", f.key, ours[0], err)
		}
		if back := fromRedis(t, ctx, c, "copy:"+f.key); !reflect.DeepEqual(canon(back), canon(want)) {
			t.Fatalf("%s: redis restored a different value from our payload", f.key)
		}
	}
	t.Logf("%d payloads byte-identical to redis-server's", identical)

	// Redis refuses Persimmon's own type with its error.
	r := Value{Kind: KindRoaring, Str: []byte{1, 2, 3}}
	p, _ := Dump(&r)
	if err := c.Restore(ctx, "tr", 0, string(p)).Err(); err == nil || err.Error() != "ERR Bad data format" {
		t.Fatalf("redis RESTORE of a roaring payload: %v", err)
	}
}

func head(p []byte) []byte {
	if len(p) > 48 {
		return p[:48]
	}
	return p
}

// TestRedisSaveFile reads the dump.rdb that redis-server's SAVE wrote.
func TestRedisSaveFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := startRedis(t, dir)
	populate(t, ctx, c)
	c.PExpireAt(ctx, "s:text", time.UnixMilli(4102444800123))
	c.PExpireAt(ctx, "h:big", time.UnixMilli(4102444800456))
	if err := c.FunctionLoad(ctx, lib).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	aux := map[string]string{}
	for _, a := range f.Aux {
		aux[a[0]] = a[1]
	}
	if f.Version != 10 || !strings.HasPrefix(aux["redis-ver"], "7.0") || aux["redis-bits"] != "64" {
		t.Fatalf("header: version %d aux %v", f.Version, aux)
	}
	if len(f.Functions) != 1 || string(f.Functions[0]) != lib {
		t.Fatalf("functions: %q", f.Functions)
	}
	fx := fixtures()
	if len(f.Entries) != len(fx) {
		t.Fatalf("%d entries, %d keys written", len(f.Entries), len(fx))
	}
	for _, e := range f.Entries {
		c.Do(ctx, "SELECT", e.DB)
		want := fromRedis(t, ctx, c, string(e.Key))
		if !reflect.DeepEqual(canon(e.Value), canon(want)) {
			t.Fatalf("db %d key %q differs", e.DB, e.Key)
		}
		exp, _ := c.PExpireTime(ctx, string(e.Key)).Result()
		if wantExp := int64(exp / time.Millisecond); (wantExp > 0 || e.ExpireAtMs != 0) && wantExp != e.ExpireAtMs {
			t.Fatalf("key %q expiry %d, redis says %d", e.Key, e.ExpireAtMs, wantExp)
		}
	}
	// A flipped bit in the body fails the checksum (or the decoding).
	raw[len(raw)/2] ^= 0x10
	if _, err := ReadFile(bytes.NewReader(raw)); err == nil {
		t.Fatal("corrupted file read without error")
	}
}

// TestRedisLoadsOurFile: redis-server starts on a file WriteFile wrote and
// holds every key with its value and expiry.
func TestRedisLoadsOurFile(t *testing.T) {
	ctx := context.Background()
	src := startRedis(t, t.TempDir())
	populate(t, ctx, src)
	f := &File{Aux: [][2]string{{"redis-ver", "7.0.15"}, {"redis-bits", "64"}, {"ctime", strconv.FormatInt(time.Now().Unix(), 10)}},
		Functions: [][]byte{[]byte(lib)}}
	for _, x := range fixtures() {
		src.Do(ctx, "SELECT", x.db)
		e := Entry{DB: x.db, Key: []byte(x.key), Value: fromRedis(t, ctx, src, x.key), Idle: -1, Freq: -1}
		if x.key == "l:small" {
			e.ExpireAtMs = 4102444800789
		}
		f.Entries = append(f.Entries, e)
	}
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(out, f); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	c := startRedis(t, dir)
	if got, err := c.FCall(ctx, "rdbtest_echo", nil, "hi").Text(); err != nil || got != "hi" {
		t.Fatalf("function from our file: %q %v", got, err)
	}
	for _, db := range []int{0, 3} {
		c.Do(ctx, "SELECT", db)
		n, _ := c.DBSize(ctx).Result()
		want := 0
		for _, e := range f.Entries {
			if e.DB == db {
				want++
			}
		}
		if int(n) != want {
			t.Fatalf("db %d: redis loaded %d keys, file has %d", db, n, want)
		}
	}
	for _, e := range f.Entries {
		c.Do(ctx, "SELECT", e.DB)
		if got := fromRedis(t, ctx, c, string(e.Key)); !reflect.DeepEqual(canon(got), canon(e.Value)) {
			t.Fatalf("db %d key %q: redis loaded a different value", e.DB, e.Key)
		}
		exp, _ := c.PExpireTime(ctx, string(e.Key)).Result()
		if e.ExpireAtMs != 0 && int64(exp/time.Millisecond) != e.ExpireAtMs {
			t.Fatalf("key %q expiry %v", e.Key, exp)
		}
	}
}

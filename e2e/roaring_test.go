package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/redis/go-redis/v9"
)

// trDo runs one command and returns its result and error.
func trDo(c *redis.Client, args ...any) (any, error) { return c.Do(ctx, args...).Result() }

// trCase is one command and what go-redis should decode from the reply:
// an int64, a []any of int64, a string, nil (nil bulk), or an error text.
type trCase struct {
	args []any
	want any
}

func trErr(s string) error { return errors.New(s) }

func trRun(t *testing.T, c *redis.Client, cases []trCase) {
	t.Helper()
	for i, tc := range cases {
		got, err := trDo(c, tc.args...)
		switch w := tc.want.(type) {
		case error:
			if err == nil || err.Error() != w.Error() {
				t.Errorf("case %d %v: got %v, %v; want error %q", i, tc.args, got, err, w)
			}
		case nil:
			if err != redis.Nil {
				t.Errorf("case %d %v: got %v, %v; want nil", i, tc.args, got, err)
			}
		default:
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("case %d %v: got %#v, %v; want %#v", i, tc.args, got, err, tc.want)
			}
		}
	}
}

func ints(ns ...int64) []any {
	out := make([]any, len(ns))
	for i, n := range ns {
		out[i] = n
	}
	return out
}

const (
	trBadU32  = "ERR bad arguments, must be unsigned 32-bit integer"
	trInvalid = "ERR invalid arguments, maybe out of range or illegal"
	trWrong   = "WRONGTYPE Operation against a key holding the wrong kind of value"
)

// TestRoaringCommandsE2E runs every TR command against the real server
// with go-redis: the spec's vectors and edge cases.
func TestRoaringCommandsE2E(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()
	trRun(t, c, []trCase{
		// §4.1 TR.SETBIT, GETBIT, BITCOUNT, MIN, MAX
		{[]any{"TR.SETBIT", "foo", 10, 1}, int64(0)},
		{[]any{"TR.SETBIT", "foo", 20, 1}, int64(0)},
		{[]any{"TR.SETBIT", "foo", 30, 1}, int64(0)},
		{[]any{"TR.SETBIT", "foo", 30, 0}, int64(1)},
		{[]any{"TR.BITCOUNT", "foo"}, int64(2)},
		{[]any{"TR.GETBIT", "foo", 10}, int64(1)},
		{[]any{"TR.GETBIT", "foo", 11}, int64(0)},
		{[]any{"TR.MIN", "foo"}, int64(10)},
		{[]any{"TR.MAX", "foo"}, int64(20)},
		{[]any{"TR.SETBIT", "foo", "4294967296", 1}, trErr(trBadU32)},
		{[]any{"TR.SETBIT", "foo", -1, 1}, trErr(trBadU32)},
		{[]any{"TR.SETBIT", "foo", 1, 2}, trErr(trInvalid)},
		{[]any{"TR.GETBIT", "missing", 1}, int64(0)},
		{[]any{"TYPE", "foo"}, "tairroaring"},
		{[]any{"OBJECT", "ENCODING", "foo"}, "roaring"},
		// §4.2, §4.3
		{[]any{"TR.SETBITS", "sb", 3, 4, 5}, int64(3)},
		{[]any{"TR.SETBITS", "sb", 8, 9}, int64(5)},
		{[]any{"TR.CLEARBITS", "sb", 4, 5, 6}, int64(2)},
		{[]any{"TR.CLEARBITS", "missing", 4}, int64(0)},
		{[]any{"EXISTS", "missing"}, int64(0)},
		// §4.4, §4.6
		{[]any{"TR.SETRANGE", "r", 1, 3}, int64(3)},
		{[]any{"TR.SETRANGE", "r", 3, 1}, trErr(trInvalid)},
		{[]any{"TR.RANGEBITARRAY", "r", 0, 3}, "0111"},
		{[]any{"TR.SETINTARRAY", "f", 0, 2, 3, 5}, "OK"},
		{[]any{"TR.FLIPRANGE", "f", 0, 5}, int64(2)},
		{[]any{"TR.RANGEBITARRAY", "f", 0, 5}, "010010"},
		// §4.5
		{[]any{"TR.SETBIT", "ab", 0, 1}, int64(0)},
		{[]any{"TR.APPENDBITARRAY", "ab", 1, "1101"}, int64(4)},
		{[]any{"TR.RANGEBITARRAY", "ab", 0, 5}, "101101"},
		{[]any{"TR.APPENDBITARRAY", "ab2", -1, "101010101"}, int64(5)},
		{[]any{"TR.RANGE", "ab2", 0, 10}, ints(0, 2, 4, 6, 8)},
		{[]any{"TR.APPENDBITARRAY", "ab2", 3, "12"}, trErr(trInvalid)},
		// §4.7-4.9
		{[]any{"TR.APPENDINTARRAY", "ia", 9, 10}, "OK"},
		{[]any{"TR.GETBITS", "ia", 9, 10, 11}, ints(1, 1, 0)},
		{[]any{"TR.SETBITARRAY", "ia", "10101001"}, "OK"},
		{[]any{"TR.GETBITS", "ia", 0, 1, 2, 3, 4, 5, 6, 7}, ints(1, 0, 1, 0, 1, 0, 0, 1)},
		{[]any{"TR.GETBITS", "missing", 1, 2}, ints()},
		// §4.10, §4.11, §4.25
		{[]any{"TR.SETINTARRAY", "a", 1, 3, 5, 7, 9}, "OK"},
		{[]any{"TR.SETINTARRAY", "b", 2, 4, 6, 8, 10}, "OK"},
		{[]any{"TR.BITOP", "dest", "OR", "a", "b"}, int64(10)},
		{[]any{"TR.BITCOUNT", "dest"}, int64(10)},
		{[]any{"TR.BITOP", "dest", "AND", "a", "b"}, int64(0)},
		{[]any{"EXISTS", "dest"}, int64(0)},
		{[]any{"TR.BITOP", "dest", "XOR", "a", "b", "missing"}, int64(10)},
		{[]any{"TR.BITOP", "dest", "NOT", "a"}, int64(5)},
		{[]any{"TR.RANGE", "dest", 0, 10}, ints(0, 2, 4, 6, 8)},
		{[]any{"TR.BITOP", "dest", "DIFF", "dest", "b"}, int64(1)},
		{[]any{"TR.RANGE", "dest", 0, 10}, ints(0)},
		{[]any{"TR.BITOP", "dest", "NOT", "a", "b"}, trErr(trInvalid)},
		{[]any{"TR.BITOP", "dest", "DIFF", "a"}, trErr(trInvalid)},
		{[]any{"TR.BITOP", "dest", "MAYBE", "a"}, trErr("ERR syntax error")},
		{[]any{"TR.BITOPCARD", "AND", "a", "b"}, int64(0)},
		{[]any{"TR.BITOPCARD", "OR", "a", "b"}, int64(10)},
		{[]any{"TR.BITOPCARD", "NOT", "a", "b"}, trErr(trInvalid)},
		{[]any{"TR.DIFF", "d2", "a", "b"}, "OK"},
		{[]any{"TR.RANGE", "d2", 0, 100}, ints(1, 3, 5, 7, 9)},
		// §4.12, §5
		{[]any{"TR.SETBITS", "st", 1, 2, 3, 4, 5, 6, 7, 8, 9}, int64(9)},
		{[]any{"TR.OPTIMIZE", "st"}, "OK"},
		{[]any{"TR.OPTIMIZE", "missing"}, nil},
		{[]any{"TR.STAT", "st"}, "cardinality: 9\r\nnumber of containers: 1\r\nmax value: 9\r\nmin value: 1\r\nsum value: 45\r\n" +
			"number of array containers: 0\r\n\tarray container values: 0\r\n\tarray container bytes: 0\r\n" +
			"number of bitset containers: 0\r\n\tbitset container values: 0\r\n\tbitset container bytes: 0\r\n" +
			"number of run containers: 1\r\n\trun container values: 9\r\n\trun container bytes: 6\r\n"},
		{[]any{"TR.STAT", "f", "JSON"}, `{"cardinality":2,"number_of_containers":1,"max_value":4,"min_value":1,"sum_value":5,` +
			`"array_container":{"number_of_containers":1,"container_cardinality":2,"container_allocated_bytes":4},` +
			`"bitset_container":{"number_of_containers":0,"container_cardinality":0,"container_allocated_bytes":0},` +
			`"run_container":{"number_of_containers":0,"container_cardinality":0,"container_allocated_bytes":0}}`},
		{[]any{"TR.STAT", "missing"}, nil},
		// §4.15-4.24
		{[]any{"TR.BITCOUNT", "a", 0, 3}, int64(2)},
		{[]any{"TR.BITCOUNT", "a", 3, 0}, trErr(trInvalid)},
		{[]any{"TR.SETRANGE", "p", 1, 9}, int64(9)},
		{[]any{"TR.BITPOS", "p", 1}, int64(1)},
		{[]any{"TR.BITPOS", "p", 1, 2}, int64(2)},
		{[]any{"TR.BITPOS", "p", 1, -4}, int64(6)},
		{[]any{"TR.BITPOS", "p", 0}, int64(0)},
		{[]any{"TR.BITPOS", "p", 0, 1}, int64(0)},
		{[]any{"TR.BITPOS", "p", 0, -1}, int64(4294967295)},
		{[]any{"TR.BITPOS", "p", 1, 10}, int64(-1)},
		{[]any{"TR.BITPOS", "p", 1, 0}, trErr(trInvalid)},
		{[]any{"TR.BITPOS", "missing", 1}, int64(-1)},
		{[]any{"TR.SCAN", "a", 0}, []any{int64(0), ints(1, 3, 5, 7, 9)}},
		{[]any{"TR.SCAN", "a", 4, "COUNT", 2}, []any{int64(9), ints(5, 7)}},
		{[]any{"TR.SCAN", "a", 9, "COUNT", 2}, []any{int64(0), ints(9)}},
		{[]any{"TR.SCAN", "missing", 0}, []any{int64(0), ints()}},
		{[]any{"TR.SCAN", "a", 0, "COUNT", 0}, trErr(trInvalid)},
		{[]any{"TR.RANGE", "a", 1, 5}, ints(1, 3, 5)},
		{[]any{"TR.RANGE", "missing", 1, 5}, ints()},
		{[]any{"TR.RANGEBITARRAY", "missing", 0, 5}, nil},
		{[]any{"TR.MIN", "missing"}, int64(-1)},
		{[]any{"TR.MAX", "missing"}, int64(-1)},
		{[]any{"TR.RANK", "p", 5}, int64(5)},
		{[]any{"TR.RANK", "missing", 5}, int64(-1)},
		{[]any{"TR.SETRANGE", "ten", 1, 10}, int64(10)},
		{[]any{"TR.JACCARD", "a", "ten"}, "0.5"},
		{[]any{"TR.JACCARD", "missing", "missing2"}, "0"},
		{[]any{"TR.CONTAINS", "a", "ten"}, int64(1)},
		{[]any{"TR.CONTAINS", "a", "b"}, int64(0)},
		{[]any{"TR.CONTAINS", "missing", "a"}, int64(1)},
		{[]any{"TR.CONTAINS", "a", "missing"}, int64(0)},
		// wrong types both ways
		{[]any{"SET", "str", "v"}, "OK"},
		{[]any{"TR.SETBIT", "str", 1, 1}, trErr(trWrong)},
		{[]any{"TR.GETBITS", "str", 1}, trErr(trWrong)},
		{[]any{"TR.BITOP", "dest", "OR", "a", "str"}, trErr(trWrong)},
		{[]any{"TR.JACCARD", "str", "a"}, trErr(trWrong)},
		{[]any{"TR.CONTAINS", "missing", "str"}, trErr(trWrong)},
		{[]any{"GET", "a"}, trErr(trWrong)},
		{[]any{"SADD", "a", "x"}, trErr(trWrong)},
		{[]any{"TR.SETBIT", "foo"}, trErr("ERR wrong number of arguments for 'tr.setbit' command")},
		// the reply caps
		{[]any{"TR.SETRANGE", "full", 0, "4294967295"}, int64(4294967296)},
		{[]any{"TR.BITCOUNT", "full"}, int64(4294967296)},
		{[]any{"TR.RANGE", "full", 0, "4294967295"}, trErr("ERR reply too large: the number of offsets TR.RANGE replies is limited to 4194304")},
		{[]any{"TR.RANGE", "full", 5, 7}, ints(5, 6, 7)},
		{[]any{"TR.SCAN", "full", 0, "COUNT", 5000000}, trErr("ERR reply too large: TR.SCAN COUNT is limited to 4194304")},
		{[]any{"TR.SCAN", "full", "4294967294", "COUNT", 5}, []any{int64(0), ints(4294967294, 4294967295)}},
		{[]any{"TR.RANGEBITARRAY", "full", 0, 1 << 26}, trErr("ERR reply too large: the range of TR.RANGEBITARRAY is limited to 67108864")},
	})
}

// TestRoaringTransactionsCopyRename: TR commands inside MULTI/EXEC, WATCH
// aborted by a TR write, Lua redis.call, COMMAND INFO, and COPY, RENAME,
// MOVE of a bitmap (a rebuild of the value).
func TestRoaringTransactionsCopyRename(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client()
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "TR.SETBITS", "m", 1, 2, 3)
		p.Do(ctx, "TR.SETRANGE", "m", 100, 199)
		p.Do(ctx, "TR.BITCOUNT", "m")
		p.Do(ctx, "TR.BITOP", "m2", "NOT", "m")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, cmd := range cmds {
		got = append(got, cmd.(*redis.Cmd).Val().(int64))
	}
	if fmt.Sprint(got) != "[3 103 103 97]" {
		t.Fatalf("MULTI/EXEC replies %v", got)
	}
	// A TR write by another client aborts a WATCHing transaction.
	other := s.client()
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		if err := other.Do(ctx, "TR.SETBIT", "m", 500, 1).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "TR.SETBIT", "m", 501, 1)
			return nil
		})
		return err
	}, "m")
	if err != redis.TxFailedErr {
		t.Fatalf("WATCH: %v, want TxFailedErr", err)
	}
	// Lua.
	n, err := c.Eval(ctx, "redis.call('TR.SETBIT', KEYS[1], 7, 1); return redis.call('TR.BITCOUNT', KEYS[1])", []string{"lua"}).Int64()
	if err != nil || n != 1 {
		t.Fatalf("EVAL: %d, %v", n, err)
	}
	// COMMAND INFO and GETKEYS.
	keys, err := c.CommandGetKeys(ctx, "TR.BITOP", "d", "AND", "x", "y").Result()
	if err != nil || fmt.Sprint(keys) != "[d x y]" {
		t.Fatalf("COMMAND GETKEYS TR.BITOP: %v, %v", keys, err)
	}
	info, err := c.Do(ctx, "COMMAND", "INFO", "tr.setbit").Slice()
	if err != nil || len(info) != 1 {
		t.Fatalf("COMMAND INFO tr.setbit: %v, %v", info, err)
	}
	if e, ok := info[0].([]any); !ok || len(e) < 3 || e[0] != "tr.setbit" || e[1] != int64(4) {
		t.Fatalf("COMMAND INFO tr.setbit: %#v", info[0])
	}
	// COPY, RENAME, MOVE of an optimized bitmap with a huge range keep
	// the members and the container kinds.
	trRun(t, c, []trCase{
		{[]any{"TR.SETRANGE", "big", 0, "4294967295"}, int64(4294967296)},
		{[]any{"TR.CLEARBITS", "big", 5, 1 << 20}, int64(2)},
		{[]any{"TR.OPTIMIZE", "big"}, "OK"},
		{[]any{"COPY", "big", "big2"}, int64(1)},
		{[]any{"RENAME", "big2", "big3"}, "OK"},
		{[]any{"TR.BITCOUNT", "big3"}, int64(4294967294)},
		{[]any{"TR.GETBITS", "big3", 4, 5, 6, 1 << 20}, ints(1, 0, 1, 0)},
		{[]any{"COPY", "m", "m-copy", "DB", 3}, int64(1)},
		{[]any{"MOVE", "m2", 4}, int64(1)},
	})
	for _, k := range []string{"big", "big3"} {
		if st, err := c.Do(ctx, "TR.STAT", k, "JSON").Text(); err != nil || !strings.Contains(st, `"sum_value":9223372034706243579`) {
			t.Fatalf("TR.STAT %s: %s, %v", k, st, err)
		}
	}
	a, _ := c.Do(ctx, "TR.STAT", "big").Text()
	b, _ := c.Do(ctx, "TR.STAT", "big3").Text()
	if a != b {
		t.Fatalf("TR.STAT of the copy differs:\n%s\n%s", a, b)
	}
	c3 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 3, DisableIdentity: true})
	defer c3.Close()
	if r, err := c3.Do(ctx, "TR.RANGE", "m-copy", 0, 2).Int64Slice(); err != nil || fmt.Sprint(r) != "[1 2]" {
		t.Fatalf("copy in db 3: %v, %v", r, err)
	}
}

// trModel is what the writers had acknowledged: per key the bitmap after
// the last acknowledged write, and for a write cut by the kill the bitmap
// it would have made (either is acceptable after the restart).
type trModel struct {
	mu      sync.Mutex
	acked   map[string]*roaring.Bitmap
	pending map[string]*roaring.Bitmap
	stat    map[string]string // TR.STAT of an optimized key, acknowledged
	log     map[string][]string
}

// TestRoaringCrashKill9: writers run every kind of TR write on their own
// keys, the server is killed with SIGKILL at a random moment, restarted on
// the same directory, and every key must hold what was acknowledged (or,
// for the one write in flight, its result).
func TestRoaringCrashKill9(t *testing.T) {
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	dir := t.TempDir()
	m := &trModel{acked: map[string]*roaring.Bitmap{}, pending: map[string]*roaring.Bitmap{}, stat: map[string]string{}, log: map[string][]string{}}
	for round := 0; round <= rounds; round++ {
		s := startServer(t, dir, "--segment-size", "8mb")
		verifyTRModel(t, s, m, round)
		if round == rounds {
			break
		}
		target := int64(100 + rng.IntN(1500))
		trRunUntilKilled(t, s, m, round, target, rng.Uint64(), s.kill)
		t.Logf("round %d: killed after %d acknowledged writes; %d keys, %d stats to check", round, target, len(m.acked), len(m.stat))
	}
	if len(m.acked) == 0 || len(m.stat) == 0 {
		t.Fatalf("nothing was acknowledged: %d keys, %d stats", len(m.acked), len(m.stat))
	}
}

func verifyTRModel(t *testing.T, s *server, m *trModel, round int) {
	t.Helper()
	c := s.client()
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, want := range m.acked {
		got := roaring.New()
		r, err := c.Do(ctx, "TR.RANGE", k, 0, 1<<21).Int64Slice()
		if err != nil {
			t.Fatalf("round %d: TR.RANGE %s: %v", round, k, err)
		}
		for _, x := range r {
			got.Add(uint32(x))
		}
		if n, _ := c.Do(ctx, "TR.BITCOUNT", k).Int64(); uint64(n) != got.GetCardinality() {
			t.Fatalf("round %d: %s has %d bits beyond the checked range", round, k, uint64(n)-got.GetCardinality())
		}
		if got.Equals(want) {
			delete(m.pending, k)
			continue
		}
		if p := m.pending[k]; p != nil && got.Equals(p) {
			m.acked[k] = p
			delete(m.pending, k)
			continue
		}
		t.Fatalf("round %d: %s holds %d bits, acknowledged %d bits; only held %v, only acknowledged %v; last writes %v", round, k,
			got.GetCardinality(), want.GetCardinality(), clipBits(roaring.AndNot(got, want)), clipBits(roaring.AndNot(want, got)), m.log[k])
	}
	for k, want := range m.stat {
		if got, err := c.Do(ctx, "TR.STAT", k).Text(); err != nil || got != want {
			t.Fatalf("round %d: TR.STAT %s after restart:\n%s (%v)\nacknowledged:\n%s", round, k, got, err, want)
		}
	}
}

func clipBits(bm *roaring.Bitmap) []uint32 {
	a := bm.ToArray()
	if len(a) > 20 {
		a = a[:20]
	}
	return a
}

// trRunUntilKilled runs writers until target writes are acknowledged, then
// kills the server.
func trRunUntilKilled(t *testing.T, s *server, m *trModel, round int, target int64, seed uint64, kill func()) {
	var acked atomic.Int64
	var wg sync.WaitGroup
	killed := make(chan struct{})
	var once sync.Once
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
			defer c.Close()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				key := fmt.Sprintf("tr:%d:%d", w, rng.IntN(4))
				m.mu.Lock()
				cur := m.acked[key]
				m.mu.Unlock()
				if cur == nil {
					cur = roaring.New()
				}
				next := cur.Clone()
				x := uint32(rng.IntN(1 << 20))
				y := x + uint32(rng.IntN(5000))
				var args []any
				switch rng.IntN(10) {
				case 0:
					args = []any{"TR.SETBIT", key, x, 1}
					next.Add(x)
				case 1:
					v, _ := cur.Select(uint32(rng.IntN(int(cur.GetCardinality()) + 1)))
					args = []any{"TR.SETBIT", key, v, 0}
					next.Remove(v)
				case 2:
					args = []any{"TR.SETBITS", key, x, y, x / 2}
					next.AddMany([]uint32{x, y, x / 2})
				case 3:
					args = []any{"TR.SETRANGE", key, x, y}
					next.AddRange(uint64(x), uint64(y)+1)
				case 4:
					args = []any{"TR.FLIPRANGE", key, x, y}
					next.Flip(uint64(x), uint64(y)+1)
				case 5:
					args = []any{"TR.CLEARBITS", key, x, y}
					next.Remove(x)
					next.Remove(y)
				case 6:
					bits := []byte(fmt.Sprintf("%b", rng.Uint64()))
					args = []any{"TR.APPENDBITARRAY", key, int64(x) - 1, string(bits)}
					next.RemoveRange(uint64(x), uint64(x)+uint64(len(bits)))
					for i, ch := range bits {
						if ch == '1' {
							next.Add(x + uint32(i))
						}
					}
				case 7: // a whole-value store from two of this writer's keys
					src := fmt.Sprintf("tr:%d:%d", w, rng.IntN(4))
					m.mu.Lock()
					other := m.acked[src]
					m.mu.Unlock()
					if other == nil {
						other = roaring.New()
					}
					if src == key {
						other = cur
					}
					switch rng.IntN(3) {
					case 0:
						args = []any{"TR.BITOP", key, "XOR", key, src}
						next = roaring.Xor(cur, other)
					case 1: // logged as the complement of src
						args = []any{"TR.BITOP", key, "NOT", src}
						next = roaring.New()
						if !other.IsEmpty() {
							next = roaring.Flip(other, 0, uint64(other.Maximum())+1)
						}
					default: // logged as the merge piece the serialized AND builds (keys without runs)
						args = []any{"TR.BITOP", key, "AND", key, src}
						next = roaring.And(cur, other)
					}
				case 8: // keys of sparse bits only (no run containers): TR.BITOP AND and DIFF take the serialized AND
					key = fmt.Sprintf("tra:%d:%d", w, rng.IntN(3))
					a, b := fmt.Sprintf("tra:%d:%d", w, rng.IntN(3)), fmt.Sprintf("tra:%d:%d", w, rng.IntN(3))
					m.mu.Lock()
					cur, ma, mb := m.acked[key], m.acked[a], m.acked[b]
					m.mu.Unlock()
					for _, bm := range []**roaring.Bitmap{&cur, &ma, &mb} {
						if *bm == nil {
							*bm = roaring.New()
						}
					}
					switch rng.IntN(4) {
					case 0:
						args = []any{"TR.BITOP", key, "AND", a, b}
						next = roaring.And(ma, mb)
					case 1:
						args = []any{"TR.BITOP", key, "DIFF", a, b}
						next = roaring.AndNot(ma, mb)
					default:
						args = []any{"TR.SETBITS", key}
						next = cur.Clone()
						for k := 0; k < 200; k++ { // 4,096 offsets in each of two containers: AND keeps some
							v := uint32(rng.IntN(2))<<16 | uint32(rng.IntN(4096))
							args = append(args, v)
							next.Add(v)
						}
					}
				default:
					args = []any{"TR.SETINTARRAY", key, x, y, 7}
					next = roaring.BitmapOf(x, y, 7)
				}
				m.mu.Lock()
				m.pending[key] = next
				m.log[key] = append(m.log[key], fmt.Sprint(args))
				if len(m.log[key]) > 6 {
					m.log[key] = m.log[key][1:]
				}
				m.mu.Unlock()
				if err := c.Do(ctx, args...).Err(); err != nil {
					return // the kill; the write may or may not have happened
				}
				m.mu.Lock()
				m.acked[key] = next
				delete(m.pending, key)
				m.mu.Unlock()
				// An optimized key's TR.STAT (container kinds included)
				// must survive the restart.
				if i%50 == 0 {
					k := fmt.Sprintf("trstat:%d:%d:%d", round, w, i)
					if c.Do(ctx, "TR.SETRANGE", k, x, y).Err() == nil && c.Do(ctx, "TR.SETBITS", k, y+10, y+20).Err() == nil &&
						c.Do(ctx, "TR.OPTIMIZE", k).Err() == nil {
						if st, err := c.Do(ctx, "TR.STAT", k).Text(); err == nil {
							m.mu.Lock()
							m.stat[k] = st
							m.mu.Unlock()
						}
					}
				}
				if acked.Add(1) == target {
					once.Do(func() { kill(); close(killed) })
				}
			}
		}()
	}
	wg.Wait()
	once.Do(func() { kill(); close(killed) })
}

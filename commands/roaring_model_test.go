package commands

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestRoaringRandomModel runs random TR writes over three keys (sources
// and destinations of TR.BITOP among them) and after every command checks
// every key against a model built with the library's own operations: a
// command must change its destination only, exactly as modelled. (It found
// the in-place Xor of roaring v2.30.0 changing a TR.BITOP source.)
func TestRoaringRandomModel(t *testing.T) {
	seeds := uint64(6)
	if testing.Short() {
		seeds = 3
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { testRoaringRandomModel(t, seed) })
	}
}

func testRoaringRandomModel(t *testing.T, seed uint64) {
	c := newKeyspaceClient(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	models := map[string]*roaring.Bitmap{}
	var hist []string
	u := func(x uint32) string { return fmt.Sprint(x) }
	for step := 0; step < 1000; step++ {
		key := fmt.Sprintf("k%d", rng.IntN(3))
		cur := models[key]
		if cur == nil {
			cur = roaring.New()
		}
		next := cur.Clone()
		x := uint32(rng.IntN(1 << 18))
		y := x + uint32(rng.IntN(9000))
		var args []string
		switch rng.IntN(11) {
		case 0:
			args = []string{"TR.SETBIT", key, u(x), "1"}
			next.Add(x)
		case 1:
			v, _ := cur.Select(uint32(rng.IntN(int(cur.GetCardinality()) + 1)))
			args = []string{"TR.SETBIT", key, u(v), "0"}
			next.Remove(v)
		case 2:
			args = []string{"TR.SETBITS", key, u(x), u(y), u(x / 2)}
			next.AddMany([]uint32{x, y, x / 2})
		case 3:
			args = []string{"TR.SETRANGE", key, u(x), u(y)}
			next.AddRange(uint64(x), uint64(y)+1)
		case 4:
			args = []string{"TR.FLIPRANGE", key, u(x), u(y)}
			next.Flip(uint64(x), uint64(y)+1)
		case 5:
			args = []string{"TR.CLEARBITS", key, u(x), u(y)}
			next.Remove(x)
			next.Remove(y)
		case 6:
			bits := strings.Repeat(fmt.Sprintf("%b", rng.Uint64()), 1+rng.IntN(200))
			args = []string{"TR.APPENDBITARRAY", key, fmt.Sprint(int64(x) - 1), bits}
			next.RemoveRange(uint64(x), uint64(x)+uint64(len(bits)))
			for i, ch := range bits {
				if ch == '1' {
					next.Add(x + uint32(i))
				}
			}
		case 7, 8:
			op := []string{"AND", "OR", "XOR", "DIFF", "NOT"}[rng.IntN(5)]
			a, b := fmt.Sprintf("k%d", rng.IntN(3)), fmt.Sprintf("k%d", rng.IntN(3))
			ma, mb := models[a], models[b]
			if ma == nil {
				ma = roaring.New()
			}
			if mb == nil {
				mb = roaring.New()
			}
			args = []string{"TR.BITOP", key, op, a, b}
			switch op {
			case "NOT":
				args = args[:4]
				next = roaring.New()
				if !ma.IsEmpty() {
					next = roaring.Flip(ma, 0, uint64(ma.Maximum())+1)
				}
			case "AND":
				next = roaring.And(ma, mb)
			case "OR":
				next = roaring.Or(ma, mb)
			case "XOR":
				next = roaring.Xor(ma, mb)
			default:
				next = roaring.AndNot(ma, mb)
			}
		case 9:
			args = []string{"TR.OPTIMIZE", key}
		default:
			args = []string{"TR.SETINTARRAY", key, u(x), u(y), "7"}
			next = roaring.BitmapOf(x, y, 7)
		}
		r := cmdReply(t, c, args...)
		if strings.HasPrefix(r, "-") {
			t.Fatalf("step %d %.60q: %s", step, args, r)
		}
		if args[0] == "TR.BITOP" && r != rInt(int64(next.GetCardinality())) {
			t.Fatalf("step %d %.60q: reply %q, want the cardinality %d", step, args, r, next.GetCardinality())
		}
		models[key] = next
		hist = append(hist, fmt.Sprintf("%.80q", args))
		for k, want := range models {
			c.KS.Lock()
			bm, err := c.KS.Roaring(0, []byte(k))
			ok := err == nil && ((bm == nil && want.IsEmpty()) || (bm != nil && bm.Equals(want)))
			c.KS.Unlock()
			if !ok {
				t.Fatalf("step %d: %s differs from the model (err %v); last commands %v", step, k, err, hist[max(0, len(hist)-4):])
			}
		}
	}
}

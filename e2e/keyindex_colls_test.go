package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Collections in TestKillKeyIndexRestarts: each writer owns a few hashes,
// sets, sorted sets, lists and streams ("w%d:h%d", ":s", ":z", ":l", ":x")
// and the model holds each one's whole content as a canonical string (""
// = no key), so kixModel's acknowledged / in-flight bookkeeping covers
// them as it covers strings.

const collSep = "\x1f" // between elements of a canonical state; never in a value

// collKind returns the collection kind of a writer's key ('h', 's', 'z',
// 'l', 'x'), or 0 for the string keys.
func collKind(k string) byte {
	i := strings.IndexByte(k, ':')
	if i < 0 || i+1 >= len(k) {
		return 0
	}
	switch c := k[i+1]; c {
	case 'h', 's', 'z', 'l', 'x':
		return c
	}
	return 0
}

func splitState(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, collSep)
}

// readColl reads key k's content from the server in the model's
// canonical form: hash fields "f=v" sorted, set members sorted, sorted-set
// "member=score" in ZRANGE order, list elements in order, stream entries
// "id=field=value" in order.
func readColl(ctx context.Context, c *redis.Client, k string) (string, error) {
	var elems []string
	switch collKind(k) {
	case 'h':
		m, err := c.HGetAll(ctx, k).Result()
		if err != nil {
			return "", err
		}
		for f, v := range m {
			elems = append(elems, f+"="+v)
		}
		slices.Sort(elems)
	case 's':
		m, err := c.SMembers(ctx, k).Result()
		if err != nil {
			return "", err
		}
		elems = m
		slices.Sort(elems)
	case 'z':
		zs, err := c.ZRangeWithScores(ctx, k, 0, -1).Result()
		if err != nil {
			return "", err
		}
		for _, z := range zs {
			elems = append(elems, fmt.Sprintf("%v=%d", z.Member, int64(z.Score)))
		}
	case 'l':
		l, err := c.LRange(ctx, k, 0, -1).Result()
		if err != nil {
			return "", err
		}
		elems = l
	case 'x':
		xs, err := c.XRange(ctx, k, "-", "+").Result()
		if err != nil {
			return "", err
		}
		for _, x := range xs {
			elems = append(elems, fmt.Sprintf("%s=f=%v", x.ID, x.Values["f"]))
		}
	}
	return strings.Join(elems, collSep), nil
}

// collOp picks an operation on one of writer w's collections, given that
// key's current content, and returns the key, the command and the content
// after it.
func collOp(w int, r *rand.Rand, cur func(string) string, v string) (string, []any, string) {
	kinds := "hszlx"
	kind := kinds[r.IntN(len(kinds))]
	k := fmt.Sprintf("w%d:%c%d", w, kind, r.IntN(8))
	elems := splitState(cur(k))
	del := r.IntN(4) == 0 && len(elems) > 0 // a removal now and then
	var cmd []any
	switch kind {
	case 'h':
		f := "f" + strconv.Itoa(r.IntN(12))
		elems = slices.DeleteFunc(elems, func(e string) bool { return strings.HasPrefix(e, f+"=") })
		if del {
			cmd = []any{"HDEL", k, f}
		} else {
			cmd = []any{"HSET", k, f, v}
			elems = append(elems, f+"="+v)
		}
		slices.Sort(elems)
	case 's':
		m := "m" + strconv.Itoa(r.IntN(20))
		elems = slices.DeleteFunc(elems, func(e string) bool { return e == m })
		if del {
			cmd = []any{"SREM", k, m}
		} else {
			cmd = []any{"SADD", k, m}
			elems = append(elems, m)
		}
		slices.Sort(elems)
	case 'z':
		m := "m" + strconv.Itoa(r.IntN(20))
		elems = slices.DeleteFunc(elems, func(e string) bool { return strings.HasPrefix(e, m+"=") })
		if del {
			cmd = []any{"ZREM", k, m}
		} else {
			sc := r.IntN(100)
			cmd = []any{"ZADD", k, sc, m}
			elems = append(elems, m+"="+strconv.Itoa(sc))
		}
		slices.SortFunc(elems, func(a, b string) int { // ZRANGE order: score, then member
			ma, sa, _ := strings.Cut(a, "=")
			mb, sb, _ := strings.Cut(b, "=")
			na, _ := strconv.Atoi(sa)
			nb, _ := strconv.Atoi(sb)
			if na != nb {
				return na - nb
			}
			return strings.Compare(ma, mb)
		})
	case 'l':
		if del {
			cmd = []any{"LPOP", k}
			elems = elems[1:]
		} else {
			cmd = []any{"RPUSH", k, v}
			elems = append(elems, v)
		}
	case 'x':
		// Explicit IDs one past the last entry; XTRIM keeps the last
		// entry, so the next ID is always known from the content.
		if del {
			cmd = []any{"XTRIM", k, "MAXLEN", 3}
			elems = elems[max(0, len(elems)-3):]
		} else {
			next := 1
			if len(elems) > 0 {
				id, _, _ := strings.Cut(elems[len(elems)-1], "=")
				n, _ := strconv.Atoi(strings.TrimSuffix(id, "-1"))
				next = n + 1
			}
			id := strconv.Itoa(next) + "-1"
			cmd = []any{"XADD", k, id, "f", v}
			elems = append(elems, id+"=f="+v)
		}
	}
	return k, cmd, strings.Join(elems, collSep)
}

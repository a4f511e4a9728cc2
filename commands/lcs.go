package commands

import (
	"errors"

	"github.com/persimmon-db/persimmon/keyspace"
)

// LCS (redis.io group "string"): the longest common subsequence of two
// strings, by the textbook dynamic programme over an (n+1)×(m+1) table of
// uint32 lengths. The table is the whole cost, so like Redis 7.0 the
// command refuses inputs whose table would take more bytes than
// proto-max-bulk-len (512 MB by default: two strings of ~11,500 bytes)
// instead of allocating it.

func lcsCommands() []Command {
	return []Command{
		{Name: "lcs", Arity: -3, Flags: FlagReadonly, FirstKey: 1, LastKey: 2, Step: 1, Group: "string", Since: "7.0.0",
			Summary: "Find longest common substring", Run: cmdLCS,
			KeySpecs: []KeySpec{keyRange(KeyRO|KeyAccess, 1, 1, 1)}},
	}
}

var (
	errLCSType     = replyError("ERR The specified keys must contain string values")
	errLCSLenIdx   = replyError("ERR If you want both the length and indexes, please just use IDX.")
	errLCSTooLong  = replyError("ERR String too long for LCS")
	errLCSTooLarge = replyError("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
)

// lcsOptions are LCS's options after the two keys.
type lcsOptions struct {
	len, idx     bool
	withMatchLen bool
	minMatchLen  int64 // 0: every match; a negative argument counts as 0
}

// parseLCSOptions parses LEN, IDX, MINMATCHLEN n and WITHMATCHLEN (any
// case, any order, repeats allowed). An unknown token or a MINMATCHLEN
// without its number is a syntax error; LEN with IDX is refused after the
// whole list has been read, as in Redis.
func parseLCSOptions(args [][]byte) (lcsOptions, error) {
	var o lcsOptions
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case argIs(a, "idx"):
			o.idx = true
		case argIs(a, "len"):
			o.len = true
		case argIs(a, "withmatchlen"):
			o.withMatchLen = true
		case argIs(a, "minmatchlen") && i+1 < len(args):
			n, err := argInt64(args[i+1])
			if err != nil {
				return lcsOptions{}, err
			}
			o.minMatchLen = max(n, 0)
			i++
		default:
			return lcsOptions{}, errSyntax
		}
	}
	if o.len && o.idx {
		return lcsOptions{}, errLCSLenIdx
	}
	return o, nil
}

// lcsTableBytes is the size in bytes of the table for strings of n and m
// bytes.
func lcsTableBytes(n, m int) uint64 { return uint64(n+1) * uint64(m+1) * 4 }

// lcsTable holds, at row i and column j, the length of the LCS of a[:i]
// and b[:j].
type lcsTable struct {
	cells []uint32
	cols  int // len(b)+1
}

func (t *lcsTable) at(i, j int) uint32 { return t.cells[i*t.cols+j] }

// newLCSTable fills the table for a and b; the caller has bounded its size.
func newLCSTable(a, b []byte) *lcsTable {
	t := &lcsTable{cells: make([]uint32, (len(a)+1)*(len(b)+1)), cols: len(b) + 1}
	for i := 1; i <= len(a); i++ {
		row, prev := t.cells[i*t.cols:(i+1)*t.cols], t.cells[(i-1)*t.cols:i*t.cols]
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	return t
}

// lcsMatch is one run of the LCS that is contiguous in both strings:
// a[aStart..aEnd] equals b[bStart..bEnd] (inclusive).
type lcsMatch struct{ aStart, aEnd, bStart, bEnd int }

func (m lcsMatch) length() int { return m.aEnd - m.aStart + 1 }

// lcsWalk walks the table back from the ends of a and b and returns the
// LCS and its contiguous runs, last run first: the order and the choice
// among equal-length subsequences of Redis 7.0 (semantics: redis.io LCS).
// At a mismatch the walk drops a byte of a only when that keeps a strictly
// longer LCS, else a byte of b. A run ends at a mismatch or when it
// reaches the start of either string; runs shorter than minLen are left
// out of the list (not of the string).
func lcsWalk(t *lcsTable, a, b []byte, minLen int64) (lcs []byte, matches []lcsMatch) {
	i, j := len(a), len(b)
	lcs = make([]byte, t.at(i, j))
	k := len(lcs)
	var cur lcsMatch
	open := false
	emit := func() {
		if int64(cur.length()) >= minLen {
			matches = append(matches, cur)
		}
		open = false
	}
	for i > 0 && j > 0 {
		if a[i-1] == b[j-1] {
			k--
			lcs[k] = a[i-1]
			i, j = i-1, j-1
			if open {
				cur.aStart, cur.bStart = i, j // contiguous: the walk came from (i+1, j+1)
			} else {
				cur, open = lcsMatch{aStart: i, aEnd: i, bStart: j, bEnd: j}, true
			}
			if i == 0 || j == 0 {
				emit()
			}
			continue
		}
		if t.at(i-1, j) > t.at(i, j-1) {
			i--
		} else {
			j--
		}
		if open {
			emit()
		}
	}
	return lcs, matches
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]. A missing
// key is an empty string. Redis looks both keys up before it parses the
// options, so a key of another type wins over a syntax error.
func cmdLCS(c *Client, args [][]byte) {
	a, _, errA := c.KS.Get(c.DB, args[1])
	b, _, errB := c.KS.Get(c.DB, args[2])
	if errA != nil || errB != nil {
		if errors.Is(errA, keyspace.ErrWrongType) || errors.Is(errB, keyspace.ErrWrongType) {
			c.WriteErr(errLCSType)
		} else {
			c.WriteErr(errors.Join(errA, errB))
		}
		return
	}
	o, err := parseLCSOptions(args[3:])
	if err != nil {
		c.WriteErr(err)
		return
	}
	const maxLen = 1<<32 - 2 // Redis indexes the table with uint32
	if len(a) >= maxLen || len(b) >= maxLen {
		c.WriteErr(errLCSTooLong)
		return
	}
	if lcsTableBytes(len(a), len(b)) > uint64(c.ProtoMaxBulkLen()) {
		c.WriteErr(errLCSTooLarge)
		return
	}
	t := newLCSTable(a, b)
	if o.len {
		c.WriteInt(int64(t.at(len(a), len(b))))
		return
	}
	minLen := o.minMatchLen
	if !o.idx {
		minLen = 0
	}
	lcs, matches := lcsWalk(t, a, b, minLen)
	if !o.idx {
		c.WriteBulk(lcs)
		return
	}
	c.WriteMap(2)
	c.WriteBulkString("matches")
	c.WriteArray(len(matches))
	for _, m := range matches {
		if o.withMatchLen {
			c.WriteArray(3)
		} else {
			c.WriteArray(2)
		}
		c.WriteArray(2)
		c.WriteInt(int64(m.aStart))
		c.WriteInt(int64(m.aEnd))
		c.WriteArray(2)
		c.WriteInt(int64(m.bStart))
		c.WriteInt(int64(m.bEnd))
		if o.withMatchLen {
			c.WriteInt(int64(m.length()))
		}
	}
	c.WriteBulkString("len")
	c.WriteInt(int64(len(lcs)))
}

package commands

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/persimmon-db/persimmon/keyspace"
)

// SORT and SORT_RO (semantics: redis.io SORT, Redis 7.0's sort.c rules):
//
//	SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE destination]
//
// The elements of a list, set or sorted set (a missing key is an empty
// list) are sorted as doubles, or as byte strings with ALPHA, either by
// themselves or by the values BY's pattern names: the first '*' of a
// pattern is replaced by the element, and "key->field" reads a hash
// field; a missing value sorts as 0 (numerically) or first (ALPHA), and a
// pattern without '*' skips sorting. Numeric ties are broken by comparing
// the elements as strings, so the order is deterministic; DESC reverses the
// whole comparison. GET patterns ("#" is the element itself) replace each
// element by the values they name (nil when missing). With STORE the
// result replaces destination as a list (missing GET values become empty
// strings; an empty result deletes destination), in one durable batch, and
// the reply is its length.
//
// Without sorting (BY a constant), a list or sorted set keeps its own
// order (DESC walks it backwards) and LIMIT takes the range directly. A
// set has no order of its own here, so it is always sorted (ALPHA), which
// Redis also does when the result is stored or a script asks; otherwise
// Redis answers in its iteration order, without DESC.

// sortOptions is a parsed SORT request.
type sortOptions struct {
	desc, alpha, dontsort bool
	by                    []byte // nil: by the elements themselves
	gets                  [][]byte
	store                 []byte
	storeSet              bool
	limStart, limCount    int64
}

func sortCommand(c *Client, args [][]byte)   { sortGeneric(c, args, false) }
func sortROCommand(c *Client, args [][]byte) { sortGeneric(c, args, true) }

// SORT's refusals of BY and GET patterns to a user who may not read every
// key (the keys they name are not in the arguments, so the ACL check
// cannot see them).
var (
	errSortByACL  = replyError("ERR BY option of SORT denied due to insufficient ACL permissions.")
	errSortGetACL = replyError("ERR GET option of SORT denied due to insufficient ACL permissions.")
)

// parseSort reads SORT's options left to right, failing at the first bad
// one with Redis's reply. allKeys says whether the user may read every
// key, which BY with a pattern and GET need.
func parseSort(args [][]byte, readonly, allKeys bool) (o sortOptions, err error) {
	o.limCount = -1
	for j := 2; j < len(args); j++ {
		left := len(args) - 1 - j
		switch {
		case argIs(args[j], "asc"):
			o.desc = false
		case argIs(args[j], "desc"):
			o.desc = true
		case argIs(args[j], "alpha"):
			o.alpha = true
		case argIs(args[j], "limit") && left >= 2:
			var ok1, ok2 bool
			o.limStart, ok1 = parseInt64(args[j+1])
			o.limCount, ok2 = parseInt64(args[j+2])
			if !ok1 || !ok2 {
				return o, errNotInteger
			}
			j += 2
		case argIs(args[j], "store") && left >= 1 && !readonly:
			o.store, o.storeSet = args[j+1], true
			j++
		case argIs(args[j], "by") && left >= 1:
			o.by = args[j+1]
			if bytes.IndexByte(o.by, '*') < 0 {
				o.dontsort = true
			} else if !allKeys {
				return o, errSortByACL
			}
			j++
		case argIs(args[j], "get") && left >= 1:
			if !allKeys {
				return o, errSortGetACL
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			return o, errSyntax
		}
	}
	return o, nil
}

// sortItem is one element being sorted: its bytes and its sort key.
type sortItem struct {
	elem  []byte
	score float64
	by    []byte // ALPHA with BY: the value compared (nil: missing)
}

func sortGeneric(c *Client, args [][]byte, readonly bool) {
	o, err := parseSort(args, readonly, c.ReadsAllKeys(args))
	if err != nil {
		c.WriteErr(err)
		return
	}
	typ := c.KS.Type(c.DB, args[1])
	switch typ {
	case keyspace.TypeNone, keyspace.TypeList, keyspace.TypeSet, keyspace.TypeZSet:
	default:
		// Redis's lookupKeyRead found the key before the type check
		// refused it: an access (OBJECT IDLETIME), counted once (Type did).
		was := c.KS.CountLookups(false)
		c.KS.Touch(c.DB, args[1])
		c.KS.CountLookups(was)
		c.WriteErr(keyspace.ErrWrongType)
		return
	}
	if o.dontsort && typ == keyspace.TypeSet {
		// Sorted anyway (see above). Redis returns its own iteration order
		// here and applies DESC only when it sorts (STORE, scripts), so
		// DESC is dropped otherwise.
		o.dontsort, o.alpha, o.by = false, true, nil
		o.desc = o.desc && o.storeSet
	}
	counting := c.KS.CountLookups(false) // Type counted the key; it is read once
	n, err := sortLen(c, args[1], typ)
	if err != nil {
		c.WriteErr(err)
		return
	}
	// LIMIT, clamped as Redis does: offset and count are first bounded by
	// the length, so start+count cannot overflow (LIMIT 2
	// 9223372036854775807 is "from 2 to the end", not a wrapped range).
	start := min(max(o.limStart, 0), int64(n))
	limCount := min(max(o.limCount, -1), int64(n))
	end := int64(n - 1)
	if limCount >= 0 {
		end = start + limCount - 1
	}
	if start >= int64(n) {
		start, end = int64(n-1), int64(n-2)
	}
	end = min(end, int64(n-1))

	var items []sortItem
	if o.dontsort && (typ == keyspace.TypeList || typ == keyspace.TypeZSet) {
		// Native order, the range only.
		if end >= start {
			items = sortLoadRange(c, args[1], typ, int(start), int(end), o.desc)
			end -= start
			start = 0
		}
	} else {
		items, err = sortLoadAll(c, args[1], typ)
		if err != nil {
			c.WriteErr(err)
			return
		}
	}
	c.KS.CountLookups(counting) // BY and GET keys count
	if !o.dontsort {
		for i := range items {
			it := &items[i]
			val, found := it.elem, true
			if o.by != nil {
				val, found = sortLookup(c, o.by, it.elem)
			}
			switch {
			case !found:
			case o.alpha:
				if o.by != nil {
					it.by = val
				}
			default:
				f, ok := sortScore(val)
				if !ok {
					c.WriteError("ERR One or more scores can't be converted into double")
					return
				}
				it.score = f
			}
		}
		slices.SortStableFunc(items, func(a, b sortItem) int {
			r := sortCompare(&a, &b, o.alpha, o.by != nil)
			if o.desc {
				r = -r
			}
			return r
		})
	}

	var out [][]byte // the result, for STORE
	count := 0
	if end >= start {
		count = int(end-start+1) * max(len(o.gets), 1)
	}
	if !o.storeSet {
		c.WriteArray(count)
	}
	emit := func(v []byte, found bool) {
		switch {
		case o.storeSet:
			if !found {
				v = []byte{}
			}
			out = append(out, v)
		case found:
			c.WriteBulk(v)
		default:
			c.WriteNull()
		}
	}
	for i := start; i <= end; i++ {
		elem := items[i].elem
		if len(o.gets) == 0 {
			emit(elem, true)
			continue
		}
		for _, g := range o.gets {
			emit(sortLookup(c, g, elem))
		}
	}
	if !o.storeSet {
		return
	}
	b := c.KS.NewBatch()
	c.KS.CountLookups(false) // the destination is written, not read
	existed := c.KS.Exists(c.DB, o.store)
	if existed {
		b.Del(c.DB, o.store)
	}
	if len(out) > 0 {
		b.RPush(c.DB, o.store, out...)
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteInt(int64(len(out)))
		notifyStore(c, notifyList, "sortstore", o.store, len(out) > 0, existed)
	}
}

// sortLen is the number of elements of the key to sort.
func sortLen(c *Client, key []byte, typ string) (int, error) {
	switch typ {
	case keyspace.TypeList:
		l, err := c.KS.List(c.DB, key)
		return l.Len(), err
	case keyspace.TypeSet:
		return c.KS.SCard(c.DB, key)
	case keyspace.TypeZSet:
		z, err := c.KS.ZSetAt(c.DB, key)
		if z == nil {
			return 0, err
		}
		return z.Len(), nil
	}
	return 0, nil
}

// sortLoadRange loads elements [start, end] of a list or sorted set in its
// own order, or from the other end with desc.
func sortLoadRange(c *Client, key []byte, typ string, start, end int, desc bool) []sortItem {
	items := make([]sortItem, 0, end-start+1)
	switch typ {
	case keyspace.TypeList:
		l, _ := c.KS.List(c.DB, key)
		for i := start; i <= end; i++ {
			at := i
			if desc {
				at = l.Len() - 1 - i
			}
			items = append(items, sortItem{elem: l.At(at)})
		}
	case keyspace.TypeZSet:
		z, _ := c.KS.ZSetAt(c.DB, key)
		for i := start; i <= end; i++ {
			at := i
			if desc {
				at = z.Len() - 1 - i
			}
			items = append(items, sortItem{elem: z.Member(z.At(at))})
		}
	}
	return items
}

// sortLoadAll loads every element.
func sortLoadAll(c *Client, key []byte, typ string) ([]sortItem, error) {
	var items []sortItem
	switch typ {
	case keyspace.TypeList:
		l, err := c.KS.List(c.DB, key)
		if err != nil {
			return nil, err
		}
		items = make([]sortItem, l.Len())
		for i := range items {
			items[i].elem = l.At(i)
		}
	case keyspace.TypeSet:
		ms, err := c.KS.SMemberBytes(c.DB, key)
		if err != nil {
			return nil, err
		}
		items = make([]sortItem, len(ms))
		for i, m := range ms {
			items[i].elem = m
		}
	case keyspace.TypeZSet:
		z, err := c.KS.ZSetAt(c.DB, key)
		if z == nil {
			return nil, err
		}
		items = make([]sortItem, 0, z.Len())
		for x, i := z.At(0), 0; i < z.Len(); x, i = z.Next(x), i+1 {
			items = append(items, sortItem{elem: z.Member(x)})
		}
	}
	return items, nil
}

// sortCompare is Redis's sortCompare before DESC: numeric by score with
// ties broken by the elements' bytes; ALPHA by the BY values (a missing
// one first) or by the elements.
func sortCompare(a, b *sortItem, alpha, byPattern bool) int {
	switch {
	case !alpha:
		if r := cmp.Compare(a.score, b.score); r != 0 {
			return r
		}
		return bytes.Compare(a.elem, b.elem)
	case byPattern:
		switch {
		case a.by == nil && b.by == nil:
			return 0
		case a.by == nil:
			return -1
		case b.by == nil:
			return 1
		}
		return bytes.Compare(a.by, b.by)
	}
	return bytes.Compare(a.elem, b.elem)
}

// sortLookup resolves a BY or GET pattern for one element (Redis's
// lookupKeyByPattern): "#" is the element; otherwise the first '*' is
// replaced by the element and the key read as a string, or with
// "key->field" as a hash field. found is false for a pattern without '*',
// a missing key or field, or a key of another type.
func sortLookup(c *Client, pattern, elem []byte) (val []byte, found bool) {
	if len(pattern) == 1 && pattern[0] == '#' {
		return elem, true
	}
	star := bytes.IndexByte(pattern, '*')
	if star < 0 {
		return nil, false
	}
	suffix := pattern[star+1:]
	var field []byte
	if f := bytes.Index(suffix, []byte("->")); f >= 0 && f+2 < len(suffix) {
		field = suffix[f+2:]
		suffix = suffix[:f]
	}
	key := make([]byte, 0, star+len(elem)+len(suffix))
	key = append(append(append(key, pattern[:star]...), elem...), suffix...)
	var ok bool
	var err error
	if field != nil {
		val, ok, err = c.KS.HGet(c.DB, key, field)
	} else {
		val, ok, err = c.KS.Get(c.DB, key)
	}
	if err != nil || !ok {
		return nil, false
	}
	return val, true
}

// sortScore parses a value to sort by as Redis does (strtod over the
// whole string: leading white space allowed, the empty string is 0;
// overflow, underflow and NaN refused).
//
// strtod reads a C string, so the value ends at its first NUL byte
// ("\x00" is 0, "1\x00x" is 1).
func sortScore(b []byte) (float64, bool) {
	b = cString(b)
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		// "" is 0 (strtod stops at once, at the end); blanks only are not
		// a number (strtod converts nothing and stops at the first blank).
		return 0, i == 0
	}
	return parseFloat64(b[i:])
}

const (
	sortByGetNotes = "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"
	sortStoreNotes = "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"
)

func sortCommands() []Command {
	acl := []string{"@set", "@sortedset", "@list", "@dangerous", "-@keyspace"}
	return []Command{
		{Name: "sort", Arity: -2, Flags: FlagWrite | FlagDenyOOM | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "generic", Since: "1.0.0", Run: sortCommand, ACL: acl, GetKeys: sortGetKeys, CountsReads: true,
			Summary: "Sort the elements in a list, set or sorted set",
			KeySpecs: []KeySpec{
				keyRange(KeyRO|KeyAccess, 1, 0, 1),
				{Flags: KeyRO | KeyAccess, Unknown: true, Notes: sortByGetNotes},
				{Flags: KeyOW | KeyUpdate, Unknown: true, Notes: sortStoreNotes},
			}},
		{Name: "sort_ro", Arity: -2, Flags: FlagReadonly | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "generic", Since: "7.0.0", Run: sortROCommand, ACL: acl,
			GetKeys: func([][]byte) []KeyRef { return []KeyRef{{Pos: 1, Flags: KeyRO | KeyAccess}} },
			Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
			KeySpecs: []KeySpec{
				keyRange(KeyRO|KeyAccess, 1, 0, 1),
				{Flags: KeyRO | KeyAccess, Unknown: true, Notes: sortByGetNotes},
			}},
	}
}

// sortGetKeys is Redis's sortGetKeys: the sorted key, and the argument
// after the last STORE (LIMIT's two arguments and GET's and BY's one are
// skipped).
func sortGetKeys(args [][]byte) []KeyRef {
	refs := []KeyRef{{Pos: 1, Flags: KeyRO | KeyAccess}}
	store := 0
	for i := 2; i < len(args); i++ {
		switch {
		case argIs(args[i], "limit"):
			i += 2
		case argIs(args[i], "store") && i+1 < len(args):
			store = i + 1
		case argIs(args[i], "get"), argIs(args[i], "by"):
			i++
		}
	}
	if store > 0 {
		refs = append(refs, KeyRef{Pos: store, Flags: KeyOW | KeyUpdate})
	}
	return refs
}

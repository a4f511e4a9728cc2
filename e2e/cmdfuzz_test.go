package e2e

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Command fuzzer: every command of persimmon's command table (COMMAND
// LIST) that Redis 7.0 also has is sent with arguments generated from
// redis-server's own syntax description (COMMAND DOCS: tokens, optional
// and repeated arguments, oneof choices, blocks) filled with edge-case
// values (counts and offsets at the int64 limits, -1, 0, 2^32, empty
// strings, NaN/inf/1e400 floats, keys of every type), then now and then
// mutated (arguments dropped, a junk or stray token added). The same
// sequence goes to redis-server and to persimmon-server; a persimmon
// process that dies, a dropped connection or a panic in its log is a
// crash, and a reply that renders differently (after the normalisations
// of fzMode) a difference. The keyspace is rebuilt (FLUSHALL and a fixed
// set of keys, one or more of each type and encoding) every fzEpoch
// commands, so that wrong types stay common.
//
// Environment:
//
//	PERSIMMON_FUZZ_SEED     first seed (default 1)
//	PERSIMMON_FUZZ_SEEDS    seeds to run in the fixed mode (default 16)
//	PERSIMMON_FUZZ_COUNT    commands per seed (default 1500)
//	PERSIMMON_FUZZ_SECONDS  open-ended mode: run consecutive seeds from a
//	                        random (logged) first seed for this long
//	PERSIMMON_FUZZ_KNOWN    1: also send the known, unfixed differences
//	                        (fzKnown) instead of skipping them
//	PERSIMMON_FUZZ_TRACE    1: log every command and both replies
//	PERSIMMON_FUZZ_IO       the server's --io (loop, goroutine; default auto)
//
// A failure prints the seed and a replay line; each difference is reported
// once per (command, redis reply class, persimmon reply class).

// fzSkip lists the commands of the table that are not fuzzed, and why.
var fzSkip = map[string]string{
	"shutdown":            "stops the server",
	"save":                "persistence differs by design (arena vs RDB); replies and timing differ",
	"bgsave":              "persistence differs by design (arena vs RDB); replies and timing differ",
	"bgrewriteaof":        "redis-server refuses a second rewrite while one runs (forked child); Persimmon has no AOF to rewrite",
	"config|set":          "changes server behaviour for the rest of the run, and the parameter sets differ",
	"client|kill":         "client ids and addresses differ between the servers, so a kill hits different connections",
	"client|reply":        "OFF and SKIP leave the next commands unanswered, which a one-reply-per-command fuzzer cannot read (TestClientReply covers it)",
	"client|setinfo":      "Redis 7.2; the 7.0 reference does not have it",
	"client|pause":        "holds both servers' clients for a random timeout (server/pause_test.go covers it)",
	"client|tracking":     "invalidation messages arrive between the replies a one-reply-per-command fuzzer reads (server/tracking_test.go covers it)",
	"waitaof":             "Redis 7.2; the 7.0 reference does not have it",
	"monitor":             "turns the connection into a stream of monitor lines (e2e/monitor_test.go covers it)",
	"memory|stats":        "allocator figures differ by design (Go heap vs jemalloc); server/TestMemoryStatsShape checks the shape",
	"memory|doctor":       "free text about the allocator",
	"memory|malloc-stats": "Debian's redis-server prints jemalloc's statistics; Persimmon answers as a build without jemalloc (server/TestLolwutAndMallocStats)",
	"lolwut":              "Redis draws random art for VERSION 5 and 6 (server/TestLolwutAndMallocStats checks the version line)",
	"command":             "the whole table: persimmon has fewer commands by design",
	"command|count":       "persimmon has fewer commands by design",
	"command|list":        "persimmon has fewer commands by design",
	"latency|doctor":      "free text about timing",
	"latency|graph":       "timing samples",
	"latency|history":     "timing samples",
	"latency|latest":      "timing samples",
	"latency|histogram":   "per-command latency histograms",
	"script|kill":         "only meaningful with a busy script (scriptbusy_test.go)",
	"migrate":             "connects to a host and port drawn at random (the fuzzer must stay on loopback; Redis also reads the port with atoi); e2e/migrate tests cover it",
	"psync":               "turns the connection into a replica link (server/replication_test.go)",
	"sync":                "turns the connection into a replica link (server/replication_test.go)",
	"replconf":            "a replica link's handshake (server/replication_test.go)",
	"replicaof":           "makes the server a read-only replica for the rest of the run (server/replication_test.go)",
	"slaveof":             "makes the server a read-only replica for the rest of the run (server/replication_test.go)",
}

// fzModes maps a command to how its reply is compared (see fzNormalize);
// commands with Redis's nondeterministic_output_order tip are "sort"
// unless listed.
var fzModes = map[string]string{
	// errors only: the success reply is timing, sizes or identities
	"time": "errors", "info": "errors", "lastsave": "errors", "client|id": "errors",
	"client|list": "errors", "client|info": "errors", "memory|usage": "errors",
	"object|idletime": "errors", "object|freq": "errors", "slowlog|get": "errors",
	"slowlog|len": "errors", "config|get": "errors", "hello": "hello",
	// help texts list the subcommands each server implements
	"client|help": "errors", "config|help": "errors", "command|help": "errors",
	"latency|help": "errors", "memory|help": "errors", "object|help": "errors",
	"pubsub|help": "errors", "script|help": "errors", "slowlog|help": "errors",
	// random choices: shape only
	"randomkey": "len", "srandmember": "len", "hrandfield": "len", "zrandmember": "len",
	"spop": "spop",
	"ttl":  "ttl", "pttl": "ttl", "expiretime": "ttl", "pexpiretime": "ttl",
	"object|encoding": "enc",
	"hgetall":         "pairs",
	"scan":            "scan", "hscan": "scan", "sscan": "scan", "zscan": "scan",
	// the command table's metadata is compared for named commands both
	// servers have; COMMAND DOCS lists subcommands in Redis's dict order,
	// so only its errors are compared here (TestCommandDocsMatchRedis
	// compares the docs themselves)
	"command|info": "cmdinfo", "command|docs": "errors",
	"subscribe": "sub", "psubscribe": "sub", "unsubscribe": "sub", "punsubscribe": "sub",
	"ssubscribe": "sub", "sunsubscribe": "sub",
	// ACL LOG entries carry client ids, addresses and ages; GENPASS is
	// random; ACL CAT lists a category in Redis's dict order
	"acl|log": "errors", "acl|genpass": "errors", "acl|cat": "sort",
	// a stream's payload: its content, not its bytes (cmdfuzz_dump_test.go)
	"dump": "dump",
	// delivery and seen times of a consumer group: the clock when each
	// server ran the command, a few ms apart
	"xinfo|stream": "times", "xinfo|consumers": "times",
}

// fzKnown reports a generated command that hits a known, unfixed
// difference (skipped unless PERSIMMON_FUZZ_KNOWN=1); each is listed with
// both replies in the fuzzer's report.
func fzKnown(args []string) bool {
	if len(args) > 1 && strings.EqualFold(args[0], "hello") {
		// the fuzzer stays in RESP2 (its HELLO replies carry connection
		// ids); RESP3 is compared by TestDiff's resp3/ pass
		if v, err := strconv.ParseInt(args[1], 10, 64); err == nil && v == 3 {
			return true
		}
	}
	return false
}

const fzEpoch = 150 // commands between keyspace rebuilds

var (
	fzSmallInts = []string{"0", "1", "-1", "2", "3", "5", "-2", "10", "-10", "100"}
	fzEdgeInts  = []string{"9223372036854775807", "-9223372036854775808", "9223372036854775806",
		"-9223372036854775807", "9223372036854775808", "-9223372036854775809", "4294967296",
		"4294967295", "2147483647", "2147483648", "-2147483648", "-4294967296", "",
		"abc", "1.5", "1e3", " 1", "1 ", "+1", "-0", "007", "0x10", "18446744073709551616"}
	// fzAllocInts replaces fzEdgeInts where a large valid value would make
	// both servers allocate hundreds of megabytes (bit and byte offsets).
	fzAllocInts = []string{"9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"-9223372036854775809", "-4294967296", "-1", "", "abc", "1.5", "+1", "-0", "18446744073709551616"}
	fzDoubles = []string{"0", "1", "-1", "1.5", "-2.5", "3", "10", "inf", "-inf", "+inf", "nan",
		"NaN", "-nan", "1e400", "-1e400", "1e-400", "1e308", "-0", "", "abc", "0x10", "3.0e2",
		" 1", "1 ", "9223372036854775807", "-9223372036854775808", "(1", "(inf", "(-inf", "[1"}
	// durations in seconds or milliseconds: nothing that expires during a
	// run (the two servers would expire it at different moments).
	fzDurations = []string{"0", "-1", "-100", "100000", "100000000", "9223372036854775807",
		"-9223372036854775808", "9223372036854775806", "4294967296", "2147483648", "",
		"abc", "1.5", "9223372036854775", "9223372036854776"}
	// blocking timeouts: invalid, or short (never 0 or long: the reply would
	// hang), checked against redis-server 7.0.15.
	fzTimeouts     = []string{"-1", "-0.5", "abc", "", "nan", "inf", "-inf", "1e400", "9223372036854775807", "-9223372036854775808", "1e300", "1 ", "0.01", "0.001"}
	fzWaitTimeouts = []string{"-1", "abc", "1.5", "-9223372036854775808", "10", ""}
	fzStrings      = []string{"a", "b", "c", "1", "2", "10", "-3", "", "f1", "f2", "v1", "hello", "x y",
		"\x00", "\xff\xfe", "*", strings.Repeat("long", 17), "3.5", "nan", "inf", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "1e5", "0x10", " 1", "-0", "+1", "1.0", "007", "-inf", "1e400", "1\x00"}
	fzPatterns = []string{"*", "", "str*", "*a*", "h?sh", "[a-z]*", "\\", "[", "nokey*", "w_*", "w_*->f1",
		"#", "*->", "[^a]*", "?", "\\*", "k[0-9"}
	fzChannels = []string{"ch", "", "news", "n*", "ch*"}
	fzScripts  = []string{"return 1", "return redis.call('get', KEYS[1])",
		"return redis.call('incr', KEYS[1])", "return {KEYS[1], ARGV[1]}",
		"return redis.pcall('lpush', KEYS[1], ARGV[1])",
		"redis.call('set', KEYS[1], ARGV[1]) return 'ok'", "return tonumber(ARGV[1])",
		"return redis.error_reply('x')", "return redis.status_reply('x')", "return nil",
		"return 3.99", "return {1, 2, {3, 'x'}}", "", "syntax error(", "return #KEYS + #ARGV",
		"return redis.call('nosuch')", "return redis.call('type', KEYS[1])"}
	fzKeys = []string{"str", "int", "neg", "fl", "big", "small", "empty", "bits", "ttlk", "list", "nlist",
		"blist", "hash", "bhash", "set", "sset", "bset", "zset", "lzset", "bzset", "strm", "nokey", "dst", ""}
)

// fzPopulate builds the keyspace every epoch starts from.
func fzPopulate() [][]string {
	cmds := [][]string{
		{"SET", "str", "hello"}, {"SET", "int", "42"}, {"SET", "neg", "-7"}, {"SET", "fl", "3.5"},
		{"SET", "big", "9223372036854775807"}, {"SET", "small", "-9223372036854775808"}, {"SET", "empty", ""}, {"SET", "bits", "\xff\x00\x0f"},
		{"SET", "ttlk", "v", "EX", "100000"},
		{"RPUSH", "list", "a", "b", "c", "1", "2", "3", "a"}, {"RPUSH", "nlist", "3", "1", "2", "10", "-5"},
		{"HSET", "hash", "f1", "v1", "f2", "2", "f3", "3.5", "", "e", "big", "9223372036854775807", "small", "-9223372036854775808", "fl", "1.7976931348623157e308"},
		{"SADD", "set", "1", "2", "3", "10", "-3"}, {"SADD", "sset", "a", "b", "c", "d"},
		{"ZADD", "zset", "1", "a", "2", "b", "3", "c", "3", "d", "-inf", "e", "+inf", "f"},
		{"ZADD", "lzset", "0", "a", "0", "b", "0", "c", "0", "d"},
		{"MSET", "w_1", "40", "w_2", "10", "w_3", "30", "w_a", "1"},
		// a stream with a group and a pending entry (DUMP compares it)
		{"XADD", "strm", "1-1", "f", "v"}, {"XADD", "strm", "2-1", "f", "w", "g", "1"}, {"XADD", "strm", "3-5", "n", "-3"},
		{"XGROUP", "CREATE", "strm", "grp", "0"}, {"XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "strm", ">"},
	}
	bl, bh, bs, bz := []string{"RPUSH", "blist"}, []string{"HSET", "bhash"}, []string{"SADD", "bset"}, []string{"ZADD", "bzset"}
	for i := range 200 {
		m := "m" + strconv.Itoa(i)
		bl = append(bl, strconv.Itoa(i%17))
		bh = append(bh, "f"+strconv.Itoa(i), strconv.Itoa(i))
		bs = append(bs, m)
		bz = append(bz, strconv.Itoa(i%50), m)
	}
	return append(cmds, bl, bh, bs, bz)
}

// fzBlocking are the commands that wait for a timeout when there is
// nothing to pop (WAIT: for replicas that never come).
var fzBlocking = map[string]bool{"blpop": true, "brpop": true, "brpoplpush": true, "blmove": true,
	"blmpop": true, "bzmpop": true, "bzpopmin": true, "bzpopmax": true, "wait": true}

// fzArg is one node of a command's syntax, as COMMAND DOCS describes it.
type fzArg struct {
	name, typ, token        string
	optional, multiple, mtk bool // mtk: the token repeats with each value
	args                    []fzArg
}

// fzCmd is one command to fuzz.
type fzCmd struct {
	name  string   // "get", "config|get"
	words []string // "CONFIG", "GET"
	args  []fzArg
	tips  []string
	mode  string
}

// flatMap turns a RESP2 flat key/value array (or a RESP3 map) into a map.
func flatMap(r reply) map[string]reply {
	m := map[string]reply{}
	for i := 0; i+1 < len(r.elems); i += 2 {
		m[r.elems[i].str] = r.elems[i+1]
	}
	return m
}

func parseDocArgs(r reply) []fzArg {
	var out []fzArg
	for _, e := range r.elems {
		m := flatMap(e)
		a := fzArg{name: m["name"].str, typ: m["type"].str, token: m["token"].str}
		for _, f := range m["flags"].elems {
			switch f.str {
			case "optional":
				a.optional = true
			case "multiple":
				a.multiple = true
			case "multiple_token":
				a.mtk = true
			}
		}
		a.args = parseDocArgs(m["arguments"])
		out = append(out, a)
	}
	return out
}

// fzLoadCommands reads the command list from persimmon and the syntax and
// tips from redis-server.
func fzLoadCommands(t *testing.T, redisSide, persimmonSide *diffTarget) (cmds []fzCmd, skipped map[string]string) {
	t.Helper()
	list, err := persimmonSide.exchange(1, bytesArgs("COMMAND", "LIST"))
	if err != nil || list.kind != '*' {
		t.Fatalf("COMMAND LIST on persimmon: %v %v", list, err)
	}
	docs := map[string][]fzArg{}
	var addDocs func(r reply)
	addDocs = func(r reply) {
		for name, d := range flatMap(r) {
			m := flatMap(d)
			docs[name] = parseDocArgs(m["arguments"])
			addDocs(m["subcommands"])
		}
	}
	dr, err := redisSide.exchange(1, bytesArgs("COMMAND", "DOCS"))
	if err != nil || dr.kind != '*' {
		t.Fatalf("COMMAND DOCS on redis: %v %v", dr, err)
	}
	addDocs(dr)
	tips := map[string][]string{}
	var addInfo func(r reply)
	addInfo = func(r reply) {
		for _, info := range r.elems {
			if len(info.elems) < 10 {
				continue
			}
			name := info.elems[0].str
			for _, tip := range info.elems[7].elems {
				tips[name] = append(tips[name], tip.str)
			}
			addInfo(info.elems[9])
		}
	}
	ir, err := redisSide.exchange(1, bytesArgs("COMMAND"))
	if err != nil {
		t.Fatal(err)
	}
	addInfo(ir)

	skipped = map[string]string{}
	for _, e := range list.elems {
		name := strings.ToLower(e.str)
		if why, ok := fzSkip[name]; ok {
			skipped[name] = why
			continue
		}
		if strings.HasPrefix(name, "tr.") {
			skipped[name] = "TairRoaring: redis-server 7.0 has no such module (roaring_model_test.go models it)"
			continue
		}
		args, ok := docs[name]
		if !ok {
			skipped[name] = "not in redis-server 7.0"
			continue
		}
		c := fzCmd{name: name, words: strings.Split(strings.ToUpper(name), "|"), args: args, tips: tips[name]}
		c.mode = fzModes[name]
		if _, listed := fzModes[name]; !listed {
			for _, tip := range c.tips {
				switch tip {
				case "nondeterministic_output_order":
					c.mode = "sort"
				case "nondeterministic_output":
					c.mode = "errors"
				}
			}
		}
		cmds = append(cmds, c)
	}
	slices.SortFunc(cmds, func(a, b fzCmd) int { return strings.Compare(a.name, b.name) })
	return cmds, skipped
}

// fzGen generates commands.
type fzGen struct {
	r    *rand.Rand
	cmds []fzCmd
	cur  *fzCmd
}

func (g *fzGen) n(k int) int            { return g.r.IntN(k) }
func (g *fzGen) p(x float64) bool       { return g.r.Float64() < x }
func (g *fzGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *fzGen) word(tok string) string {
	if g.p(0.2) {
		return strings.ToLower(tok)
	}
	return tok
}

func (g *fzGen) integer(name string) string {
	switch {
	case name == "timeout":
		return g.pick(fzWaitTimeouts)
	case name == "seconds" || name == "milliseconds":
		return g.pick(fzDurations)
	}
	switch g.cur.name {
	case "setbit", "setrange", "bitfield", "bitfield_ro", "getbit":
		v := g.pick(fzSmallInts)
		if g.p(0.5) {
			v = g.pick(fzAllocInts)
		}
		if name == "offset" && strings.HasPrefix(g.cur.name, "bitfield") && g.p(0.3) {
			v = "#" + v // in units of the field's width
		}
		return v
	}
	if g.p(0.5) {
		return g.pick(fzEdgeInts)
	}
	return g.pick(fzSmallInts)
}

func (g *fzGen) unixTime(name string) string {
	now := time.Now().Unix()
	if g.cur.name == "set" || g.cur.name == "getex" {
		// no time in the past: redis-server 7.0 keeps such a key until
		// its expiry cycle finds it, so DBSIZE would count it for a
		// moment, persimmon deletes it at once
		future := strconv.FormatInt(now+100000, 10)
		if strings.Contains(name, "milli") {
			future += "000"
		}
		return g.pick([]string{"0", "-1", "9223372036854775807", "-9223372036854775808", future,
			"abc", "", "1.5", "9223372036854775", "9223372036854776"})
	}
	return g.pick([]string{"0", "1", "-1", "100", "9223372036854775807", "-9223372036854775808",
		"4294967296", strconv.FormatInt(now+100000, 10), strconv.FormatInt((now+100000)*1000, 10),
		"abc", "", "1.5", "9223372036854775", "9223372036854776"})
}

func (g *fzGen) str(a fzArg) string {
	switch a.name {
	case "script":
		return g.pick(fzScripts)
	case "sha1":
		if g.p(0.7) {
			h := sha1.Sum([]byte(g.pick(fzScripts)))
			return hex.EncodeToString(h[:])
		}
		return g.pick([]string{"", "abc", strings.Repeat("0", 40), strings.Repeat("A", 40)})
	case "channel", "shardchannel":
		return g.pick(fzChannels)
	case "command-name", "command":
		return g.commandName()
	case "encoding": // BITFIELD's field type
		return g.pick([]string{"u8", "i8", "u1", "i1", "i64", "u63", "u64", "i65", "u0", "x8", "", "i", "U8", "u-1"})
	}
	if g.p(0.15) {
		return g.pick(fzKeys)
	}
	return g.pick(fzStrings)
}

func (g *fzGen) commandName() string {
	if g.p(0.1) {
		return g.pick([]string{"", "nosuch", "CONFIG|GET", "config"})
	}
	c := g.cmds[g.n(len(g.cmds))]
	return c.words[0]
}

func (g *fzGen) key() string {
	if g.p(0.03) {
		return g.pick([]string{"w_1", "\x00", "k"})
	}
	return g.pick(fzKeys)
}

// gen appends the values of a, in its syntax.
func (g *fzGen) gen(a fzArg, out []string) []string {
	if a.optional && g.p(0.5) {
		return out
	}
	n := 1
	if a.multiple {
		n = 1 + g.n(3)
		if g.p(0.05) {
			n = 0
		}
	}
	for i := range n {
		if a.token != "" && (i == 0 || a.mtk) {
			out = append(out, g.word(a.token))
		}
		switch a.typ {
		case "pure-token":
		case "oneof":
			if len(a.args) > 0 {
				c := a.args[g.n(len(a.args))]
				c.optional = false
				out = g.gen(c, out)
			}
		case "block":
			out = g.genSeq(a.args, out)
		case "key":
			out = append(out, g.key())
		case "integer":
			out = append(out, g.integer(a.name))
		case "double":
			if a.name == "timeout" {
				out = append(out, g.pick(fzTimeouts))
			} else {
				out = append(out, g.pick(fzDoubles))
			}
		case "unix-time":
			out = append(out, g.unixTime(a.name))
		case "pattern":
			out = append(out, g.pick(fzPatterns))
		default: // string
			out = append(out, g.str(a))
		}
	}
	return out
}

// genSeq appends a sequence of arguments; a "numkeys" (or "numparams")
// count usually matches the number of keys generated after it.
func (g *fzGen) genSeq(as []fzArg, out []string) []string {
	numAt := -1
	for _, a := range as {
		if a.typ == "integer" && (a.name == "numkeys" || a.name == "numparams") && g.p(0.8) {
			numAt = len(out)
			out = append(out, "?")
			continue
		}
		before := len(out)
		out = g.gen(a, out)
		if numAt >= 0 && (a.typ == "key" || a.name == "arg" || a.multiple) {
			out[numAt] = strconv.Itoa(len(out) - before)
			numAt = -1
		}
	}
	if numAt >= 0 {
		out[numAt] = "0"
	}
	return out
}

// command returns one generated command line.
func (g *fzGen) command() (*fzCmd, []string) {
	c := &g.cmds[g.n(len(g.cmds))]
	g.cur = c
	args := slices.Clone(c.words)
	for i := range args {
		if g.p(0.15) {
			args[i] = strings.ToLower(args[i]) // names echoed in errors keep their case
		}
	}
	switch c.name {
	case "command|getkeys", "command|getkeysandflags":
		inner := &g.cmds[g.n(len(g.cmds))]
		g.cur = inner
		args = append(args, inner.words...)
		args = g.genSeq(inner.args, args)
		g.cur = c
	default:
		args = g.genSeq(c.args, args)
	}
	if mut := g.mutate(c, args); !slices.Equal(mut, args) {
		args = mut
		if fzBlocking[c.name] {
			// a mutation may have moved a number into the timeout's
			// place: -0, 10 or 100 would block (for ever, or too long)
			for i, a := range args[len(c.words):] {
				hex := strings.HasPrefix(strings.TrimLeft(a, "+-"), "0x") // strtold reads hex
				if f, err := strconv.ParseFloat(strings.TrimSpace(a), 64); hex || err == nil && f >= -1e-300 && f < 1e300 && !(f > 0 && f <= 0.01) {
					args[len(c.words)+i] = "0.01"
				}
			}
		}
	}
	if c.name == "xread" || c.name == "xreadgroup" {
		// BLOCK 0 waits for ever and BLOCK 100000 for 100 s when nothing
		// new arrives: keep only waits that end at once (errors, or at
		// most 10 ms), on both servers alike
		for i := len(c.words); i+1 < len(args); i++ {
			if strings.EqualFold(args[i], "block") {
				if n, err := strconv.ParseInt(args[i+1], 10, 64); err == nil && n >= 0 && (n == 0 || n > 10) && n < math.MaxInt64/2 {
					args[i+1] = "10"
				}
			}
		}
	}
	if c.name == "srandmember" || c.name == "hrandfield" || c.name == "zrandmember" {
		// a large negative count asks for that many (repeated) members:
		// redis-server would build a reply of billions
		for i, a := range args {
			if n, err := strconv.ParseInt(a, 10, 64); err == nil && n < -1000 && n != math.MinInt64 {
				args[i] = "-5"
			}
		}
	}
	return c, args
}

// mutate now and then breaks the arity or the syntax.
func (g *fzGen) mutate(c *fzCmd, args []string) []string {
	nw := len(c.words)
	switch {
	case g.p(0.06) && len(args) > nw:
		return args[:nw+g.n(len(args)-nw)]
	case g.p(0.04) && len(args) > nw:
		i := nw + g.n(len(args)-nw)
		return slices.Delete(slices.Clone(args), i, i+1)
	case g.p(0.06):
		extra := g.pick([]string{"junk", "", "1", "-1", "9223372036854775807", "WITHSCORES", "COUNT", "LIMIT", "NX", "XX", "GT", "REV", "BYSCORE", "STORE"})
		if toks := fzTokens(c.args); len(toks) > 0 && g.p(0.5) {
			extra = g.pick(toks)
		}
		return append(args, extra)
	case g.p(0.02):
		out := slices.Clone(c.words)
		for range g.n(4) {
			out = append(out, g.pick(slices.Concat(fzKeys, fzEdgeInts, fzStrings)))
		}
		return out
	}
	return args
}

func fzTokens(as []fzArg) []string {
	var out []string
	for _, a := range as {
		if a.token != "" {
			out = append(out, a.token)
		}
		out = append(out, fzTokens(a.args)...)
	}
	return out
}

// fzConn is the state of one side's connection that decides how replies
// are read.
type fzSide struct {
	*diffTarget
	srv     *server // persimmon only
	inMulti bool
	queued  []string // modes of the commands queued in MULTI
}

// fzExchange sends args and reads its reply; "sub" commands (SUBSCRIBE
// and friends answer once per channel) are followed by a PING, and every
// reply up to the PING's is the command's reply. RESP3 pushes before a
// reply are part of it.
func (d *fzSide) fzExchange(args []string, mode string) (string, error) {
	c := d.conns[1]
	if c == nil {
		var err error
		if c, err = dialRESP(d.addr); err != nil {
			return "", err
		}
		d.conns[1] = c
	}
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.nc.SetDeadline(time.Time{})
	buf := encodeCommand(bytesArgs(args...))
	if mode == "sub" {
		buf = append(buf, encodeCommand(bytesArgs("PING"))...)
	}
	if _, err := c.nc.Write(buf); err != nil {
		return "", err
	}
	var parts []string
	for {
		r, err := readReply(c.r)
		if err != nil {
			return "", err
		}
		if mode == "sub" {
			if r.String() == "+PONG" || r.String() == `*2["pong", ""]` || r.String() == `>2["pong", ""]` {
				if len(args) == 1 {
					// UNSUBSCRIBE / PUNSUBSCRIBE of everything: in the
					// order of each server's table, so compared as a set
					// (the counts still count down)
					slices.Sort(parts)
				}
				return strings.Join(parts, " "), nil
			}
			if len(args) == 1 && len(r.elems) == 3 {
				r.elems[2].str = "<n>"
			}
			parts = append(parts, r.String())
			continue
		}
		if r.kind == '>' {
			parts = append(parts, r.String())
			continue
		}
		parts = append(parts, fzNormalize(r, mode, d))
		return strings.Join(parts, " "), nil
	}
}

// fzMaskTimes replaces the clock readings in an XINFO reply: integers
// that are Unix times in ms (a PEL entry's delivery time in XINFO STREAM
// FULL, a consumer's seen-time and active-time) and the ms counts after
// "idle" and "inactive".
func fzMaskTimes(r reply) reply {
	if r.kind == ':' {
		if n, err := strconv.ParseInt(r.str, 10, 64); err == nil && n >= 1_000_000_000_000 {
			return reply{kind: '+', str: "<unix ms>"}
		}
		return r
	}
	if len(r.elems) == 0 {
		return r
	}
	out := r
	out.elems = make([]reply, len(r.elems))
	for i, e := range r.elems {
		if i > 0 && e.kind == ':' {
			switch r.elems[i-1].str {
			case "idle", "inactive", "seen-time", "active-time":
				out.elems[i] = reply{kind: '+', str: "<ms>"}
				continue
			}
		}
		out.elems[i] = fzMaskTimes(e)
	}
	return out
}

// fzNormalize renders r for comparison under mode.
func fzNormalize(r reply, mode string, d *fzSide) string {
	if r.kind == '-' {
		if strings.HasPrefix(r.str, "ERR Error compiling script") {
			// persimmon's Lua is another implementation: its parser's
			// messages differ
			return "-ERR Error compiling script <message>"
		}
		return r.String()
	}
	switch mode {
	case "errors":
		return "<not compared>"
	case "hello":
		if m := flatMap(r); r.kind == '*' || r.kind == '%' {
			return "hello proto=" + m["proto"].String()
		}
	case "spop":
		if r.kind == '*' {
			return r.sorted().String()
		}
	case "exec":
		if r.kind == '*' && !r.null && len(r.elems) == len(d.queued) {
			parts := make([]string, len(r.elems))
			for i, e := range r.elems {
				parts[i] = fzNormalize(e, d.queued[i], d)
			}
			return fmt.Sprintf("*%d[%s]", len(parts), strings.Join(parts, ", "))
		}
	case "enc":
		if r.str == "skiplist" || r.str == "listpack" {
			// redis-server's SORT converts a listpack sorted set to a
			// skiplist as a side effect; persimmon's does not (a hash's
			// listpack vs hashtable still counts)
			return "<listpack or skiplist>"
		}
	case "cmdinfo":
		// a container's subcommands: persimmon lists those it implements
		for i, e := range r.elems {
			if len(e.elems) == 10 && len(e.elems[9].elems) > 0 {
				r.elems[i].elems[9] = reply{kind: '+', str: "<subcommands>"}
			}
		}
		return r.String()
	case "scanshape":
		if r.kind == '*' && len(r.elems) == 2 {
			return "<scan reply>"
		}
	case "times":
		return fzMaskTimes(r).String()
	case "dump":
		// DUMP is nondeterministic_output (a hashtable's member order);
		// a stream's payload is compared by what it holds
		// (cmdfuzz_dump_test.go), others by errors only
		if r.kind == '$' && !r.null {
			if text, ok := fzStreamDump(r.str); ok {
				return text
			}
			return "<not compared>"
		}
	}
	return rdNormalize(r, mode)
}

// fzSignature classifies a reply for de-duplication: its type and, for an
// error, its first words.
func fzSignature(s string) string {
	if strings.HasPrefix(s, "-") {
		if len(s) > 40 {
			s = s[:40]
		}
		return s
	}
	if s == "" {
		return "<empty>"
	}
	return s[:1]
}

type fzReport struct {
	t        *testing.T
	seen     map[string]bool
	diffs    int
	crashes  int
	commands int
	names    map[string]int
}

// fzRunSeed runs count commands of seed; it returns false when it had to
// stop (a crash whose server could not be restarted).
func fzRunSeed(t *testing.T, rep *fzReport, redisSide, pSide *fzSide, restart func() *server, cmds []fzCmd, seed uint64, count int) {
	g := &fzGen{r: rand.New(rand.NewPCG(seed, 0x51ed2701)), cmds: cmds}
	byName := map[string]*fzCmd{}
	for i := range cmds {
		byName[cmds[i].name] = &cmds[i]
	}
	replay := fmt.Sprintf("PERSIMMON_FUZZ_SEED=%d PERSIMMON_FUZZ_SEEDS=1 PERSIMMON_FUZZ_COUNT=%d go test -count=1 -run TestCommandFuzz ./e2e/", seed, count)
	reset := func() {
		for _, d := range []*fzSide{redisSide, pSide} {
			d.closeAll()
			d.inMulti, d.queued = false, nil
			for _, c := range append([][]string{{"FLUSHALL"}}, fzPopulate()...) {
				if r, err := d.exchange(1, bytesArgs(c...)); err != nil || r.kind == '-' {
					t.Fatalf("%s: populating: %q: %v %v", d.name, c, r, err)
				}
			}
		}
	}
	reset()
	for i := 0; i < count; i++ {
		if i > 0 && i%fzEpoch == 0 {
			reset()
		}
		c, args := g.command()
		if !fzKnownOn && fzKnown(args) {
			continue
		}
		if len(c.words) == 1 && len(args) > 1 {
			// a container with a random argument may name a subcommand
			// ("CLIENT list"): it runs, and is compared, as that one
			sub := c.name + "|" + strings.ToLower(args[1])
			if _, skip := fzSkip[sub]; skip {
				continue
			}
			if sc := byName[sub]; sc != nil {
				c = sc
			}
		}
		mode := c.mode
		if c.name == "sort" || c.name == "sort_ro" {
			if m := fzSortUnordered(args); m != "" {
				mode = m
			}
		}
		if c.name == "command|info" && len(args) == 2 {
			mode = "errors" // the whole table
		}
		if mode == "scan" && !fzScanFromZero(c, args) {
			mode = "scanshape"
		}
		if mode == "sub" && redisSide.inMulti {
			continue // the number of replies depends on the subscriptions
		}
		if mode == "spop" && redisSide.inMulti {
			continue // the servers pop different members, and EXEC cannot resynchronise
		}
		if c.name == "quit" {
			for _, d := range []*fzSide{redisSide, pSide} {
				d.inMulti, d.queued = false, nil
			}
		}
		text := rdStep{args: args}.text()
		rep.commands++
		rep.names[c.name]++
		var w, gr string
		var werr, gerr error
		if mode == "scan" {
			l := scriptLine{file: "fuzz", text: text, mode: "scan", conn: 1, args: bytesArgs(args...)}
			l.cursor, l.pairs, _ = scanCursor(l.args)
			if redisSide.inMulti {
				l.mode = ""
			}
			w, gr = redisSide.run(l), pSide.run(l)
		} else {
			qmode := qmodeOf(redisSide, c, mode)
			w, werr = redisSide.fzExchange(args, qmode)
			gr, gerr = pSide.fzExchange(args, qmode)
		}
		if werr != nil {
			w = redisSide.ioFailure(1, werr)
		}
		if gerr != nil {
			gr = pSide.ioFailure(1, gerr)
		}
		if fzTrace {
			t.Logf("%d: %s\n\tredis:     %.300s\n\tpersimmon: %.300s", i, text, w, gr)
		}
		if w == "<timeout>" {
			// redis-server is stuck (a reply of billions of elements, say):
			// nothing after this can be compared
			t.Fatalf("redis-server did not answer in 10 s: seed %d, command %d: %s (persimmon: %.200s)\nreplay: %s", seed, i, text, gr, replay)
		}
		if fzRedisErrnoBug(c, w, gr) {
			// redis-server's SORT tests errno after strtod without clearing
			// it, so an ERANGE left by an earlier command fails it; a
			// float parse that clears errno (BLPOP's timeout) and a second
			// try give the real answer.
			redisSide.fzExchange([]string{"BLPOP", "__fz_errno", "0.001"}, "")
			w, werr = redisSide.fzExchange(args, qmodeOf(redisSide, c, mode))
			if werr != nil {
				w = redisSide.ioFailure(1, werr)
			}
		}
		for _, d := range []*fzSide{redisSide, pSide} {
			fzTrackMulti(d, c, w, mode)
		}
		if c.name == "quit" {
			redisSide.closeAll()
			pSide.closeAll()
		}
		if fzCrashed(pSide.srv) {
			rep.crashes++
			t.Errorf("CRASH seed %d, command %d: %s\n\tredis:     %s\n\tpersimmon: %s\n%s\nreplay: %s",
				seed, i, text, w, gr, fzTail(pSide.srv.log.String(), 3000), replay)
			pSide.srv = restart()
			pSide.addr = pSide.srv.Addr
			reset()
			continue
		}
		if dst, ok := fzSortStoreUnordered(c, args); ok {
			// the stored order of equal BY values is Redis's quicksort's
			for _, d := range []*fzSide{redisSide, pSide} {
				d.fzExchange([]string{"DEL", dst}, "")
			}
		}
		if w == gr {
			continue
		}
		if mode == "spop" || (mode == "len" && c.name != "randomkey") {
			// resynchronise what the random choice may have changed
			for _, d := range []*fzSide{redisSide, pSide} {
				if len(args) > 1 && c.name == "spop" {
					d.exchange(1, bytesArgs("DEL", args[1]))
				}
			}
			if fzSignature(w) == fzSignature(gr) && fzShape(w) == fzShape(gr) {
				continue
			}
		}
		sig := c.name + "|" + fzSignature(w) + "|" + fzSignature(gr)
		if gr == "<connection closed>" && w != gr {
			sig += "|dropped"
		}
		rep.diffs++
		if rep.seen[sig] {
			continue
		}
		rep.seen[sig] = true
		t.Errorf("DIFF seed %d, command %d: %s\n\tredis:     %.500s\n\tpersimmon: %.500s\nreplay: %s", seed, i, text, w, gr, replay)
	}
}

// fzCrashed reports whether the server process has exited or logged a
// Go panic or fatal error.
func fzCrashed(s *server) bool {
	if s.cmd.ProcessState != nil {
		return true
	}
	select {
	case err := <-s.done:
		s.done <- err
		return true
	default:
	}
	log := s.log.String()
	return strings.Contains(log, "panic:") || strings.Contains(log, "fatal error:")
}

// qmodeOf is the mode a reply is read with: QUEUED inside MULTI, the
// queued modes for EXEC.
func qmodeOf(d *fzSide, c *fzCmd, mode string) string {
	switch {
	case c.name == "exec":
		return "exec"
	case d.inMulti && !slices.Contains([]string{"discard", "multi", "watch", "reset", "quit"}, c.name):
		return ""
	}
	return mode
}

const fzSortErrno = "-ERR One or more scores can't be converted into double"

// fzRedisErrnoBug: redis-server refused a SORT's scores that persimmon
// accepted (see the errno note where it is used).
func fzRedisErrnoBug(c *fzCmd, redisReply, persimmonReply string) bool {
	return (c.name == "sort" || c.name == "sort_ro") && redisReply == fzSortErrno && persimmonReply != fzSortErrno
}

// fzTrace: PERSIMMON_FUZZ_TRACE=1 logs every command and both replies.
var fzTrace = os.Getenv("PERSIMMON_FUZZ_TRACE") == "1"

// fzKnownOn: PERSIMMON_FUZZ_KNOWN=1.
var fzKnownOn = os.Getenv("PERSIMMON_FUZZ_KNOWN") == "1"

// fzShape is a reply's type and length only.
func fzShape(s string) string {
	if i := strings.IndexByte(s, '['); i > 0 && (s[0] == '*' || s[0] == '>') {
		return s[:i]
	}
	if strings.HasPrefix(s, `"`) {
		return "$bulk"
	}
	return s
}

// fzTrackMulti follows MULTI/EXEC on one side from redis-server's reply
// (both sides are asked the same; a difference is reported anyway).
func fzTrackMulti(d *fzSide, c *fzCmd, redisReply, mode string) {
	switch c.name {
	case "multi":
		if redisReply == "+OK" {
			d.inMulti, d.queued = true, nil
		}
	case "exec", "quit":
		d.inMulti, d.queued = false, nil // EXEC with bad arguments aborts too
	case "discard", "reset":
		if !strings.HasPrefix(redisReply, "-") { // an arity error keeps MULTI open
			d.inMulti, d.queued = false, nil
		}
	default:
		if d.inMulti && redisReply == "+QUEUED" {
			if mode == "scan" {
				mode = "scanshape"
			}
			d.queued = append(d.queued, mode)
		}
	}
}

// fzSortUnordered: SORT of a set in Redis's iteration order (BY a
// constant, no STORE) has no defined order.
//
// Nor has SORT ... BY pattern ALPHA among equal BY values: Redis's
// comparison returns 0 for them and its quicksort is not stable.
// Both are compared as sets ("sort"), or by length ("len") with a LIMIT,
// which then picks an undefined subset.
func fzSortUnordered(args []string) string {
	constBy, patBy, alpha, store, limit := false, false, false, false, false
	for i, a := range args {
		if strings.EqualFold(a, "by") && i+1 < len(args) {
			if strings.Contains(args[i+1], "*") {
				patBy = true
			} else {
				constBy = true
			}
		}
		alpha = alpha || strings.EqualFold(a, "alpha")
		store = store || strings.EqualFold(a, "store")
		limit = limit || strings.EqualFold(a, "limit")
	}
	switch {
	case store || !(constBy || (patBy && alpha)):
		return ""
	case limit:
		return "len"
	}
	return "sort"
}

// fzSortStoreUnordered returns the destination of a SORT ... BY pattern
// ALPHA ... STORE dst, whose stored order among equal BY values Redis
// leaves to its (unstable) quicksort.
func fzSortStoreUnordered(c *fzCmd, args []string) (string, bool) {
	if c.name != "sort" {
		return "", false
	}
	patBy, alpha, dst, store := false, false, "", false
	for i, a := range args {
		switch {
		case strings.EqualFold(a, "by") && i+1 < len(args):
			patBy = patBy || strings.Contains(args[i+1], "*")
		case strings.EqualFold(a, "alpha"):
			alpha = true
		case strings.EqualFold(a, "store") && i+1 < len(args):
			dst, store = args[i+1], true // "" is a key too
		}
	}
	return dst, patBy && alpha && store
}

// fzScanFromZero: a SCAN-family command whose cursor is 0 can be followed
// to the end and compared as a set; other cursors are implementation
// positions, compared by shape.
func fzScanFromZero(c *fzCmd, args []string) bool {
	cur, _, err := scanCursor(bytesArgs(args...))
	return err == nil && args[cur] == "0"
}

func fzTail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func TestCommandFuzz(t *testing.T) {
	seed0 := rdEnvInt(t, "PERSIMMON_FUZZ_SEED", 1)
	seeds := rdEnvInt(t, "PERSIMMON_FUZZ_SEEDS", 16)
	count := int(rdEnvInt(t, "PERSIMMON_FUZZ_COUNT", 1500))
	seconds := rdEnvInt(t, "PERSIMMON_FUZZ_SECONDS", 0)
	if seconds > 0 && os.Getenv("PERSIMMON_FUZZ_SEED") == "" {
		seed0 = rand.Uint64() >> 16
	}

	redisSide := &fzSide{diffTarget: &diffTarget{name: "redis", addr: startRedis(t), conns: map[int]*respConn{}}}
	var flags []string
	if io := os.Getenv("PERSIMMON_FUZZ_IO"); io != "" {
		flags = append(flags, "--io", io)
	}
	start := func() *server { return startServer(t, t.TempDir(), flags...) }
	s := start()
	pSide := &fzSide{diffTarget: &diffTarget{name: "persimmon", addr: s.Addr, conns: map[int]*respConn{}}, srv: s}
	t.Cleanup(func() { redisSide.closeAll(); pSide.closeAll() })

	cmds, skipped := fzLoadCommands(t, redisSide.diffTarget, pSide.diffTarget)
	if len(cmds) < 150 {
		t.Fatalf("only %d commands to fuzz", len(cmds))
	}
	t.Logf("%d commands fuzzed, %d skipped", len(cmds), len(skipped))
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range skipped {
			if !yield(k) {
				return
			}
		}
	}) {
		if !strings.HasPrefix(name, "tr.") {
			t.Logf("skipped %s: %s", name, skipped[name])
		}
	}

	// The harness must see a difference, and a dead server.
	t.Run("selfcheck", func(t *testing.T) {
		for _, d := range []*fzSide{redisSide, pSide} {
			d.exchange(1, bytesArgs("FLUSHALL"))
		}
		redisSide.exchange(1, bytesArgs("RPUSH", "k", "a", "b"))
		pSide.exchange(1, bytesArgs("RPUSH", "k", "a", "c"))
		for _, c := range []struct {
			args []string
			mode string
			same bool
		}{
			{[]string{"LLEN", "k"}, "", true},
			{[]string{"LRANGE", "k", "0", "-1"}, "", false},
			{[]string{"LRANGE", "k", "0", "0"}, "", true},
			{[]string{"LRANGE", "k", "0", "-1"}, "len", true},
			{[]string{"SUBSCRIBE", "a", "b"}, "sub", true},
			{[]string{"UNSUBSCRIBE"}, "sub", true},
		} {
			w, werr := redisSide.fzExchange(c.args, c.mode)
			g, gerr := pSide.fzExchange(c.args, c.mode)
			if werr != nil || gerr != nil || (w == g) != c.same {
				t.Fatalf("%q (%s): redis %s %v, persimmon %s %v; want same=%v", c.args, c.mode, w, werr, g, gerr, c.same)
			}
		}
		if fzCrashed(pSide.srv) {
			t.Fatal("the running server counts as crashed")
		}
		victim := start()
		victim.cmd.Process.Kill()
		err := <-victim.done // the exit, not a sleep
		victim.done <- err
		if !fzCrashed(victim) {
			t.Fatal("a killed server does not count as crashed")
		}
	})

	rep := &fzReport{t: t, seen: map[string]bool{}, names: map[string]int{}}
	began := time.Now()
	n := uint64(0)
	for seed := seed0; ; seed++ {
		if seconds > 0 {
			if time.Since(began) > time.Duration(seconds)*time.Second {
				break
			}
		} else if seed >= seed0+seeds {
			break
		}
		fzRunSeed(t, rep, redisSide, pSide, start, cmds, seed, count)
		n++
	}
	t.Logf("seeds %d..%d: %d commands (%d distinct) in %v: %d differences (%d distinct), %d crashes",
		seed0, seed0+n-1, rep.commands, len(rep.names), time.Since(began).Round(time.Millisecond), rep.diffs, len(rep.seen), rep.crashes)
}

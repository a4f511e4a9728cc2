package commands

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Arity, flags and key positions of the TR commands (spec §1; the arity
// column is the spec's, flags follow its write/read grouping except
// TR.BITOPCARD, which stores nothing).
var roaringCommandInfo = []struct {
	name                    string
	arity, flags            int
	firstKey, lastKey, step int
}{
	{"tr.setbit", 4, FlagWrite | FlagDenyOOM | FlagFast, 1, 1, 1},
	{"tr.setbits", -3, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"tr.clearbits", -3, FlagWrite, 1, 1, 1},
	{"tr.setrange", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"tr.appendbitarray", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"tr.fliprange", 4, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"tr.appendintarray", -3, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"tr.setintarray", -3, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"tr.setbitarray", 3, FlagWrite | FlagDenyOOM, 1, 1, 1},
	{"tr.bitop", -4, FlagWrite | FlagDenyOOM | FlagMovableKeys, 1, 1, 1},
	{"tr.bitopcard", -3, FlagReadonly, 2, -1, 1},
	{"tr.diff", 4, FlagWrite | FlagDenyOOM, 1, 3, 1},
	{"tr.optimize", 2, FlagWrite, 1, 1, 1},
	{"tr.getbit", 3, FlagReadonly | FlagFast, 1, 1, 1},
	{"tr.getbits", -3, FlagReadonly, 1, 1, 1},
	{"tr.bitcount", -2, FlagReadonly, 1, 1, 1},
	{"tr.bitpos", -3, FlagReadonly, 1, 1, 1},
	{"tr.scan", -3, FlagReadonly, 1, 1, 1},
	{"tr.range", 4, FlagReadonly, 1, 1, 1},
	{"tr.rangebitarray", 4, FlagReadonly, 1, 1, 1},
	{"tr.min", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"tr.max", 2, FlagReadonly | FlagFast, 1, 1, 1},
	{"tr.stat", -2, FlagReadonly, 1, 1, 1},
	{"tr.jaccard", 3, FlagReadonly, 1, 2, 1},
	{"tr.contains", 3, FlagReadonly, 1, 2, 1},
	{"tr.rank", 3, FlagReadonly, 1, 1, 1},
}

func TestRoaringCommandInfo(t *testing.T) {
	checkCommandInfo(t, roaringCommands(), roaringCommandInfo)
}

// RESP builders for the expected replies.
func rInt(n int64) string { return fmt.Sprintf(":%d\r\n", n) }

func rInts(ns ...int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(ns))
	for _, n := range ns {
		b.WriteString(rInt(n))
	}
	return b.String()
}

func rBulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

const (
	rOK      = "+OK\r\n"
	rNil     = "$-1\r\n"
	rBadU32  = "-ERR bad arguments, must be unsigned 32-bit integer\r\n"
	rInvalid = "-ERR invalid arguments, maybe out of range or illegal\r\n"
	rWrong   = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	rSyntax  = "-ERR syntax error\r\n"
)

// rScan is a TR.SCAN reply.
func rScan(cursor int64, ns ...int64) string { return "*2\r\n" + rInt(cursor) + rInts(ns...) }

// TestRoaringCommands runs the spec's vectors (§4, §5) and edge cases.
func TestRoaringCommands(t *testing.T) {
	s := func(args ...string) []string { return args }
	runRecordedScripts(t, []struct {
		name  string
		steps []scriptStep
	}{
		{"setbit", []scriptStep{ // §4.1
			{s("TR.SETBIT", "foo", "10", "1"), rInt(0)},
			{s("TR.SETBIT", "foo", "20", "1"), rInt(0)},
			{s("TR.SETBIT", "foo", "30", "1"), rInt(0)},
			{s("TR.SETBIT", "foo", "30", "0"), rInt(1)},
			{s("TR.BITCOUNT", "foo"), rInt(2)},
			{s("TR.GETBIT", "foo", "10"), rInt(1)},
			{s("TR.GETBIT", "foo", "11"), rInt(0)},
			{s("TR.MIN", "foo"), rInt(10)},
			{s("TR.MAX", "foo"), rInt(20)},
			{s("TR.SETBIT", "foo", "4294967295", "1"), rInt(0)},
			{s("TR.MAX", "foo"), rInt(4294967295)},
			{s("TR.SETBIT", "foo", "4294967296", "1"), rBadU32},
			{s("TR.SETBIT", "foo", "-1", "1"), rBadU32},
			{s("TR.SETBIT", "foo", "x", "1"), rBadU32},
			{s("TR.SETBIT", "foo", "1", "2"), rInvalid},
			{s("TR.SETBIT", "foo", "1"), "-ERR wrong number of arguments for 'tr.setbit' command\r\n"},
			{s("TR.GETBIT", "foo", "4294967296"), rBadU32},
			{s("TR.GETBIT", "nokey", "3"), rInt(0)},
			// Setting 0 on a missing key creates nothing (empty = deleted).
			{s("TR.SETBIT", "empty", "3", "0"), rInt(0)},
			{s("EXISTS", "empty"), rInt(0)},
			{s("TYPE", "foo"), "+tairroaring\r\n"},
			{s("OBJECT", "ENCODING", "foo"), rBulk("roaring")},
		}},
		{"setbits clearbits", []scriptStep{ // §4.2, §4.3
			{s("TR.SETBITS", "k", "3", "4", "5"), rInt(3)},
			{s("TR.SETBITS", "k", "8", "9"), rInt(5)},
			{s("TR.SETBITS", "k", "9", "9", "10"), rInt(6)},
			{s("TR.CLEARBITS", "k", "4", "5", "6"), rInt(2)},
			{s("TR.CLEARBITS", "nokey", "4"), rInt(0)},
			{s("EXISTS", "nokey"), rInt(0)},
			{s("TR.SETBITS", "k", "1", "x"), rBadU32},
			{s("TR.BITCOUNT", "k"), rInt(4)},
			{s("TR.CLEARBITS", "k", "3", "8", "9", "10"), rInt(4)},
			{s("EXISTS", "k"), rInt(0)},
			{s("TR.MIN", "k"), rInt(-1)},
		}},
		{"ranges", []scriptStep{ // §4.4, §4.6
			{s("TR.SETRANGE", "foo", "1", "3"), rInt(3)},
			{s("TR.RANGEBITARRAY", "foo", "0", "3"), rBulk("0111")},
			{s("TR.SETRANGE", "foo", "2", "10"), rInt(10)},
			{s("TR.SETRANGE", "foo", "5", "4"), rInvalid},
			{s("TR.SETRANGE", "top", "4294967290", "4294967295"), rInt(6)},
			{s("TR.MAX", "top"), rInt(4294967295)},
			{s("TR.SETBITS", "f", "0", "2", "3", "5"), rInt(4)},
			{s("TR.FLIPRANGE", "f", "0", "5"), rInt(2)},
			{s("TR.RANGEBITARRAY", "f", "0", "5"), rBulk("010010")},
			{s("TR.FLIPRANGE", "new", "10", "12"), rInt(3)},
			{s("TR.FLIPRANGE", "new", "10", "12"), rInt(0)},
			{s("EXISTS", "new"), rInt(0)},
			{s("TR.FLIPRANGE", "new", "12", "10"), rInvalid},
		}},
		{"appendbitarray", []scriptStep{ // §4.5
			{s("TR.SETBIT", "a", "0", "1"), rInt(0)},
			{s("TR.APPENDBITARRAY", "a", "1", "1101"), rInt(4)},
			{s("TR.RANGEBITARRAY", "a", "0", "5"), rBulk("101101")},
			{s("TR.SETBITS", "b", "0", "1", "2", "3", "4", "5"), rInt(6)},
			{s("TR.APPENDBITARRAY", "b", "1", "1101"), rInt(5)},
			{s("TR.GETBITS", "b", "0", "1", "2", "3", "4", "5"), rInts(1, 1, 1, 1, 0, 1)},
			{s("TR.APPENDBITARRAY", "c", "0", "101010101"), rInt(5)},
			{s("TR.RANGE", "c", "0", "10"), rInts(1, 3, 5, 7, 9)},
			{s("TR.APPENDBITARRAY", "d", "-1", "101010101"), rInt(5)},
			{s("TR.RANGE", "d", "0", "10"), rInts(0, 2, 4, 6, 8)},
			{s("TR.SETBITS", "e", "1", "5", "7", "9"), rInt(4)},
			{s("TR.APPENDBITARRAY", "e", "3", "1010101"), rInt(5)},
			{s("TR.RANGEBITARRAY", "e", "0", "10"), rBulk("01001010101")},
			{s("TR.BITCOUNT", "e", "0", "10"), rInt(5)},
			{s("TR.APPENDBITARRAY", "e", "3", "10201"), rInvalid},
			{s("TR.APPENDBITARRAY", "e", "3", ""), rInvalid},
			{s("TR.APPENDBITARRAY", "e", "-2", "1"), rBadU32},
			{s("TR.APPENDBITARRAY", "e", "4294967294", "1"), rInt(6)},
			{s("TR.APPENDBITARRAY", "e", "4294967294", "11"), rInvalid},
			{s("TR.APPENDBITARRAY", "z", "5", "000"), rInt(0)},
			{s("EXISTS", "z"), rInt(0)},
		}},
		{"int arrays", []scriptStep{ // §4.7, §4.8, §4.9
			{s("TR.SETBIT", "k", "0", "1"), rInt(0)},
			{s("TR.APPENDINTARRAY", "k", "9", "10"), rOK},
			{s("TR.GETBITS", "k", "0", "9", "10"), rInts(1, 1, 1)},
			{s("TR.SETINTARRAY", "k", "2", "4", "5", "6"), rOK},
			{s("TR.GETBIT", "k", "0"), rInt(0)},
			{s("TR.GETBITS", "k", "2", "4", "5", "6"), rInts(1, 1, 1, 1)},
			{s("TR.SETBITARRAY", "k", "10101001"), rOK},
			{s("TR.GETBITS", "k", "0", "1", "2", "3", "4", "5", "6", "7"), rInts(1, 0, 1, 0, 1, 0, 0, 1)},
			{s("TR.SETBITARRAY", "k", "1x"), rInvalid},
			{s("TR.SETBITARRAY", "k", "000"), rOK},
			{s("EXISTS", "k"), rInt(0)},
			{s("SET", "str", "v"), rOK},
			{s("TR.SETINTARRAY", "str", "1"), rWrong},
			{s("TR.SETBITARRAY", "str", "1"), rWrong},
			{s("TR.APPENDINTARRAY", "str", "1"), rWrong},
		}},
		{"bitop", []scriptStep{ // §4.10, §4.11, §4.25
			{s("TR.SETBITS", "a", "0", "2", "3", "5"), rInt(4)},
			{s("TR.SETBITS", "b", "2", "3"), rInt(2)},
			{s("TR.SETBITS", "c", "1", "4"), rInt(2)},
			{s("TR.BITOP", "d", "AND", "a", "b"), rInt(2)},
			{s("TR.RANGEBITARRAY", "d", "0", "5"), rBulk("001100")},
			{s("TR.BITOP", "d", "or", "a", "c"), rInt(6)},
			{s("TR.BITOP", "d", "XOR", "a", "c"), rInt(6)},
			{s("TR.BITOP", "d", "NOT", "a"), rInt(2)},
			{s("TR.RANGE", "d", "0", "10"), rInts(1, 4)},
			{s("TR.BITOP", "d", "DIFF", "a", "c"), rInt(4)},
			{s("TR.BITOP", "d", "DIFF", "a", "b"), rInt(2)},
			{s("TR.RANGE", "d", "0", "10"), rInts(0, 5)},
			{s("TR.BITOP", "d", "NOT", "a", "b"), rInvalid},
			{s("TR.BITOP", "d", "DIFF", "a"), rInvalid},
			{s("TR.BITOP", "d", "DIFF", "a", "b", "c"), rInvalid},
			{s("TR.BITOP", "d", "NAND", "a", "b"), rSyntax},
			{s("TR.BITOP", "d", "AND", "a", "missing"), rInt(0)},
			{s("EXISTS", "d"), rInt(0)},
			{s("TR.BITOP", "d", "OR", "a", "missing"), rInt(4)},
			{s("TR.BITOP", "d", "NOT", "missing"), rInt(0)},
			{s("SET", "str", "v"), rOK},
			{s("TR.BITOP", "d", "OR", "a", "str"), rWrong},
			// A destination of another type is overwritten, its TTL dropped.
			{s("EXPIRE", "str", "100"), rInt(1)},
			{s("TR.BITOP", "str", "OR", "a"), rInt(4)},
			{s("TYPE", "str"), "+tairroaring\r\n"},
			{s("TTL", "str"), rInt(-1)},
			{s("TR.BITOPCARD", "AND", "a", "b"), rInt(2)},
			{s("TR.BITOPCARD", "OR", "a", "c"), rInt(6)},
			{s("TR.BITOPCARD", "XOR", "a", "c"), rInt(6)},
			{s("TR.BITOPCARD", "NOT", "a"), rInt(2)},
			{s("TR.BITOPCARD", "DIFF", "a", "c"), rInt(4)},
			{s("TR.BITOPCARD", "DIFF", "a"), rInvalid},
			{s("TR.BITOPCARD", "FOO", "a"), rSyntax},
			// XOR with a source holding a bitset container (> 4096 bits in
			// one 2^16 chunk) leaves the source alone.
			{s("TR.APPENDBITARRAY", "bs", "-1", strings.Repeat("10", 5000)), rInt(5000)},
			{s("TR.SETBITS", "arr", "7", "8"), rInt(2)},
			{s("TR.BITOP", "x", "XOR", "arr", "bs"), rInt(5000)},
			{s("TR.BITCOUNT", "bs"), rInt(5000)},
			{s("TR.GETBITS", "bs", "7", "8"), rInts(0, 1)},
			{s("TR.BITOP", "arr", "XOR", "arr", "bs"), rInt(5000)},
			{s("TR.BITCOUNT", "bs"), rInt(5000)},
			{s("TR.DIFF", "dd", "a", "b"), rOK},
			{s("TR.RANGE", "dd", "0", "10"), rInts(0, 5)},
		}},
		{"optimize stat", []scriptStep{ // §4.12, §5
			{s("TR.SETBITS", "foo", "1", "2", "3", "4", "5", "6", "7", "8", "9"), rInt(9)},
			{s("TR.OPTIMIZE", "foo"), rOK},
			{s("TR.OPTIMIZE", "nokey"), rNil},
			{s("TR.STAT", "foo"), rBulk("cardinality: 9\r\nnumber of containers: 1\r\nmax value: 9\r\nmin value: 1\r\nsum value: 45\r\n" +
				"number of array containers: 0\r\n\tarray container values: 0\r\n\tarray container bytes: 0\r\n" +
				"number of bitset containers: 0\r\n\tbitset container values: 0\r\n\tbitset container bytes: 0\r\n" +
				"number of run containers: 1\r\n\trun container values: 9\r\n\trun container bytes: 6\r\n")},
			{s("TR.SETBITS", "bar", "0", "2", "3", "5"), rInt(4)},
			{s("TR.STAT", "bar", "json"), rBulk(`{"cardinality":4,"number_of_containers":1,"max_value":5,"min_value":0,"sum_value":10,` +
				`"array_container":{"number_of_containers":1,"container_cardinality":4,"container_allocated_bytes":8},` +
				`"bitset_container":{"number_of_containers":0,"container_cardinality":0,"container_allocated_bytes":0},` +
				`"run_container":{"number_of_containers":0,"container_cardinality":0,"container_allocated_bytes":0}}`)},
			{s("TR.STAT", "nokey"), rNil},
			{s("TR.STAT", "bar", "XML"), rSyntax},
			{s("TR.SETRANGE", "full", "0", "4294967295"), rInt(4294967296)},
			{s("TR.STAT", "full", "JSON"), rBulk(`{"cardinality":4294967296,"number_of_containers":65536,"max_value":4294967295,"min_value":0,"sum_value":9223372034707292160,` +
				`"array_container":{"number_of_containers":0,"container_cardinality":0,"container_allocated_bytes":0},` +
				`"bitset_container":{"number_of_containers":0,"container_cardinality":0,"container_allocated_bytes":0},` +
				`"run_container":{"number_of_containers":65536,"container_cardinality":4294967296,"container_allocated_bytes":393216}}`)},
		}},
		{"reads", []scriptStep{ // §4.14 - §4.24
			{s("TR.SETBITS", "k", "1", "3", "5", "7", "9"), rInt(5)},
			{s("TR.SETBITS", "all", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"), rInt(10)},
			{s("TR.SETBITS", "evens", "2", "4", "6", "8", "10"), rInt(5)},
			{s("TR.GETBITS", "k", "1", "1", "2", "3", "3"), rInts(1, 1, 0, 1, 1)},
			{s("TR.GETBITS", "nokey", "1", "2"), rInts()},
			{s("TR.BITCOUNT", "k", "0", "3"), rInt(2)},
			{s("TR.BITCOUNT", "k", "3", "0"), rInvalid},
			{s("TR.BITCOUNT", "k", "3"), rSyntax},
			{s("TR.BITCOUNT", "nokey"), rInt(0)},
			{s("TR.RANGE", "k", "1", "5"), rInts(1, 3, 5)},
			{s("TR.RANGE", "k", "0", "4"), rInts(1, 3)},
			{s("TR.RANGE", "nokey", "0", "4"), rInts()},
			{s("TR.RANGE", "k", "5", "1"), rInvalid},
			{s("TR.RANGEBITARRAY", "nokey", "0", "4"), rNil},
			{s("TR.RANGEBITARRAY", "k", "8", "12"), rBulk("01000")},
			{s("TR.RANGEBITARRAY", "k", "0", "4294967295"), "-ERR reply too large: the range of TR.RANGEBITARRAY is limited to 67108864\r\n"},
			{s("TR.SCAN", "k", "0"), rScan(0, 1, 3, 5, 7, 9)},
			{s("TR.SCAN", "k", "4", "COUNT", "2"), rScan(9, 5, 7)},
			{s("TR.SCAN", "k", "9", "count", "1"), rScan(0, 9)},
			{s("TR.SCAN", "k", "10"), rScan(0)},
			{s("TR.SCAN", "nokey", "0"), rScan(0)},
			{s("TR.SCAN", "k", "0", "COUNT", "0"), rInvalid},
			{s("TR.SCAN", "k", "0", "COUNT", "-1"), rBadU32},
			{s("TR.SCAN", "k", "0", "LIMIT", "1"), rSyntax},
			{s("TR.SCAN", "k", "0", "COUNT"), rSyntax},
			{s("TR.MIN", "nokey"), rInt(-1)},
			{s("TR.MAX", "nokey"), rInt(-1)},
			{s("TR.RANK", "k", "5"), rInt(3)},
			{s("TR.RANK", "k", "0"), rInt(0)},
			{s("TR.RANK", "nokey", "5"), rInt(-1)},
			{s("TR.JACCARD", "k", "all"), rBulk("0.5")},
			{s("TR.JACCARD", "k", "k"), rBulk("1")},
			{s("TR.JACCARD", "k", "nokey"), rBulk("0")},
			{s("TR.JACCARD", "nokey", "nokey2"), rBulk("0")},
			{s("TR.CONTAINS", "k", "all"), rInt(1)},
			{s("TR.CONTAINS", "k", "evens"), rInt(0)},
			{s("TR.CONTAINS", "all", "k"), rInt(0)},
			{s("TR.CONTAINS", "nokey", "k"), rInt(1)},
			{s("TR.CONTAINS", "k", "nokey"), rInt(0)},
			{s("SET", "str", "v"), rOK},
			{s("TR.GETBIT", "str", "1"), rWrong},
			{s("TR.RANGE", "str", "0", "1"), rWrong},
			{s("TR.JACCARD", "k", "str"), rWrong},
			{s("TR.CONTAINS", "nokey", "str"), rWrong},
			{s("TR.STAT", "str"), rWrong},
			{s("TR.SETBIT", "str", "1", "1"), rWrong},
			{s("SADD", "k", "x"), rWrong},
		}},
		{"jaccard digits", []scriptStep{
			{s("TR.SETBITS", "a", "1", "2", "3", "5", "8"), rInt(5)},
			{s("TR.SETBITS", "b", "1", "3", "5"), rInt(3)},
			{s("TR.JACCARD", "a", "b"), rBulk("0.59999999999999998")},
		}},
		{"bitpos", []scriptStep{ // §4.16, Q6
			{s("TR.SETRANGE", "k", "1", "9"), rInt(9)},
			{s("TR.BITPOS", "k", "1"), rInt(1)},
			{s("TR.BITPOS", "k", "1", "2"), rInt(2)},
			{s("TR.BITPOS", "k", "1", "-4"), rInt(6)},
			{s("TR.BITPOS", "k", "1", "-9"), rInt(1)},
			{s("TR.BITPOS", "k", "1", "-10"), rInt(-1)},
			{s("TR.BITPOS", "k", "1", "10"), rInt(-1)},
			{s("TR.BITPOS", "k", "0"), rInt(0)},
			{s("TR.BITPOS", "k", "0", "1"), rInt(0)},
			{s("TR.BITPOS", "k", "0", "2"), rInt(10)},
			{s("TR.BITPOS", "k", "0", "-1"), rInt(4294967295)},
			{s("TR.BITPOS", "k", "0", "-2"), rInt(4294967294)},
			{s("TR.BITPOS", "k", "0", "0"), rInvalid},
			{s("TR.BITPOS", "k", "2"), rInvalid},
			{s("TR.BITPOS", "k", "1", "x"), "-ERR value is not an integer or out of range\r\n"},
			{s("TR.BITPOS", "k", "1", "1", "1"), rSyntax},
			{s("TR.BITPOS", "nokey", "1"), rInt(-1)},
			{s("TR.BITPOS", "nokey", "0"), rInt(-1)},
			{s("TR.SETRANGE", "full", "0", "4294967295"), rInt(4294967296)},
			{s("TR.BITPOS", "full", "0"), rInt(-1)},
			{s("TR.BITPOS", "full", "1", "-1"), rInt(4294967295)},
			{s("TR.BITPOS", "full", "1", "4294967296"), rInt(4294967295)},
			{s("TR.CLEARBITS", "full", "7", "4294967200"), rInt(2)},
			{s("TR.BITPOS", "full", "0", "2"), rInt(4294967200)},
			{s("TR.BITPOS", "full", "0", "-2"), rInt(7)},
			{s("TR.BITPOS", "full", "0", "3"), rInt(-1)},
		}},
	})
}

// TestTRBitOpCardCounts: TR.BITOPCARD's counted shortcut for one and two
// operands answers what TR.BITOP's built result holds, for random sparse
// and dense bitmaps, missing keys and each operation.
func TestTRBitOpCardCounts(t *testing.T) {
	c := newKeyspaceClient(t)
	r := rand.New(rand.NewPCG(3, 4))
	for k, key := range []string{"a", "b", "c"} {
		bits := make([]byte, 70000)
		for i := range bits {
			bits[i] = '0'
			if r.IntN(100) < 3+k*40 { // a sparse one, two denser ones
				bits[i] = '1'
			}
		}
		cmdReply(t, c, "TR.APPENDBITARRAY", key, fmt.Sprint(r.IntN(1<<20)), string(bits))
	}
	for _, op := range []string{"AND", "OR", "XOR", "DIFF", "NOT"} {
		for _, keys := range [][]string{{"a"}, {"a", "b"}, {"b", "c"}, {"c", "a"}, {"a", "missing"}, {"missing", "b"}} {
			if op == "NOT" && len(keys) != 1 || op == "DIFF" && len(keys) != 2 {
				continue // arity errors: TestTR's tables
			}
			built := cmdReply(t, c, append([]string{"TR.BITOP", "dest", op}, keys...)...)
			counted := cmdReply(t, c, append([]string{"TR.BITOPCARD", op}, keys...)...)
			if built != counted {
				t.Errorf("%s %v: TR.BITOPCARD %q, TR.BITOP %q", op, keys, counted, built)
			}
		}
	}
}

package commands

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/rdb"
	"github.com/persimmon-db/persimmon/server"
)

// DEBUG, allowed as in Redis 7.0 only when enable-debug-command is yes (or
// local, from a loopback client): the subcommands Redis's test suite uses,
// where they are harmless here.
//
//   - SLEEP s: the connection (in loop mode the loop, as Redis's whole
//     server) stops for s seconds, decimals allowed.
//
//   - SET-ACTIVE-EXPIRE 0|1: the background expiry cycle off or on.
//
//   - PAUSE-CRON 0|1: the keyspace's background loop (active expiry, the
//     cleaner: Redis's serverCron) paused or resumed.
//
//   - SET-DISABLE-DENY-SCRIPTS 0|1: scripts may (1) call commands flagged
//     noscript, as Redis's test hook allows.
//
//   - OBJECT key: Redis's one-line description; the address is the key's
//     hash, refcount 1, encoding as OBJECT ENCODING, serializedlength the
//     DUMP payload's object length, lru the LRU clock (seconds modulo
//     2^24) of the last access and lru_seconds_idle OBJECT IDLETIME's
//     seconds; it is no access to the key, as in Redis.
//
//   - LOG msg: a line in the server log.
//
//   - PROTOCOL type: Redis's test value of each reply type.
//
//   - QUICKLIST-PACKED-THRESHOLD size, CHANGE-REPL-ID: mechanisms
//     Persimmon does not have; OK after checking the arguments, as Redis.
//
//   - POPULATE count [prefix] [size]: count string keys prefix:N (prefix
//     "key") holding value:N, or size bytes (value:N cut or zero-padded),
//     skipping keys that exist, as Redis's test suite fills a database.
//
//   - RELOAD, LOADAOF: a recovery of a copy of the arena, checked against
//     the live keyspace (debugreload.go).
//
//   - DIGEST, DIGEST-VALUE key...: Redis's SHA1 signatures of the dataset
//     and of values, the same hex as redis-server's (digest.go).
//
// Not here: LISTPACK/QUICKLIST dumps; JMAP, which Debian's redis-server
// 7.0 does not have either.
func debugCommands() []Command {
	return []Command{{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale,
		Group: "server", Since: "1.0.0", Summary: "A container for debugging commands.", Run: cmdDebug,
		ACL: []string{"@dangerous"}}}
}

const debugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

func cmdDebug(c *Client, args [][]byte) {
	if !c.Srv.DebugCommandAllowed(c) {
		c.WriteError(debugNotAllowed)
		return
	}
	sub := strings.ToLower(string(args[1]))
	switch {
	case sub == "help":
		help := []string{
			"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"SLEEP <seconds>: stop the server for <seconds>; decimals allowed.",
			"SET-ACTIVE-EXPIRE <0|1>: switch the background expiry of keys off or on.",
			"PAUSE-CRON <0|1>: stop or resume the background loop (active expiry, segment cleaning).",
			"SET-DISABLE-DENY-SCRIPTS <0|1>: let scripts call commands flagged noscript, or not.",
			"OBJECT <key>: show low level info about the key and its value.",
			"RELOAD: recover a copy of the arena and check it matches the live keyspace.",
			"LOADAOF: the same as RELOAD (the arena is the append-only file).",
			"DIGEST: output a hex signature representing the current DB content.",
			"DIGEST-VALUE <key> [<key> ...]: output a hex signature of the values of all the specified keys.",
			"LOG <message>: write <message> to the server log.",
			"POPULATE <count> [<prefix>] [<size>]: create <count> string keys named key:<num> (or <prefix>:<num>), with value:<num> (cut or zero-padded to <size> bytes); existing keys are left alone.",
			"PROTOCOL <type>: reply with a test value of <type>: string, integer, double, bignum, null, array, set, map, attrib, push, verbatim, true, false.",
			"QUICKLIST-PACKED-THRESHOLD <size>: OK (lists have no quicklist here).",
			"CHANGE-REPL-ID: OK.",
			"REPLYBUFFER PEAK-RESET-TIME <NEVER|RESET|time>: the milliseconds between resets of a client's reply buffer peak (NEVER: never reset it; RESET: the default, 5000).",
			"REPLYBUFFER RESIZING <0|1>: stop or resume the reply buffers' resizing.",
			"HELP: print this help.",
		}
		c.WriteArray(len(help))
		for _, l := range help {
			c.WriteString(l)
		}
	case sub == "sleep" && len(args) == 3:
		// strtod, as Redis: what is not a number sleeps 0.
		secs, _ := strconv.ParseFloat(string(args[2]), 64)
		if secs > 0 {
			time.Sleep(time.Duration(secs * float64(time.Second)))
		}
		c.WriteOK()
	case sub == "set-active-expire" && len(args) == 3:
		n, _ := strconv.Atoi(string(args[2])) // atoi, as Redis: not a number is 0
		c.KS.SetActiveExpire(n != 0)
		c.WriteOK()
	case sub == "pause-cron" && len(args) == 3:
		n, _ := strconv.Atoi(string(args[2])) // atoi, as Redis
		c.KS.PauseBackground(n != 0)
		c.WriteOK()
	case sub == "set-disable-deny-scripts" && len(args) == 3:
		n, _ := strconv.Atoi(string(args[2]))
		c.Srv.SetScriptDenyDisabled(n != 0)
		c.WriteOK()
	case sub == "protocol" && len(args) == 3:
		debugProtocol(c, strings.ToLower(string(args[2])))
	case sub == "reload":
		for _, opt := range args[2:] {
			if !argIs(opt, "merge") && !argIs(opt, "noflush") && !argIs(opt, "nosave") {
				c.WriteError("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
				return
			}
		}
		if hasArg(args[2:], "noflush") && !hasArg(args[2:], "merge") && !reloadTargetEmpty(c) {
			// Redis loads its RDB over what is there: without MERGE a key
			// or library met twice fails the load (rdbLoad's duplicate
			// key, the function library that exists).
			c.Srv.Logf("DEBUG RELOAD NOFLUSH: the dump's keys or functions are already loaded (MERGE allows that)")
			c.WriteError("ERR Error trying to load the RDB dump")
			return
		}
		debugReload(c, "RELOAD") // otherwise the options change nothing here: the arena is both the save and the load
	case sub == "loadaof":
		debugReload(c, "LOADAOF")
	case sub == "populate" && len(args) >= 3 && len(args) <= 5:
		debugPopulate(c, args[2:])
	case sub == "object" && len(args) == 3:
		// Redis finds the key without its expiry check: an expired key
		// that is still there is described, not removed.
		c.KS.WithExpiredVisible(func() { debugObject(c, args[2]) })
	case sub == "digest" && len(args) == 2:
		debugDigest(c) // digest.go
	case sub == "digest-value":
		debugDigestValue(c, args[2:])
	case sub == "log" && len(args) == 3:
		c.Srv.Logf("DEBUG LOG: %s", args[2])
		c.WriteOK()
	case sub == "change-repl-id" && len(args) == 2:
		c.WriteOK()
	case sub == "replybuffer" && len(args) == 4:
		debugReplyBuffer(c, args[1:])
	case sub == "quicklist-packed-threshold" && len(args) == 3:
		// Redis's bound: at most 4 GB less 1 MB; 0 restores the default.
		if n, err := server.ParseMemory(string(args[2])); err != nil || n > 1<<32-1<<20 {
			c.WriteError("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
			return
		}
		c.WriteOK()
	default:
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try DEBUG HELP.")
	}
}

// debugReplyBuffer: DEBUG REPLYBUFFER PEAK-RESET-TIME <never|reset|ms> and
// RESIZING <0|1>, as Redis 7.0's debugCommand (the sizing is
// server/replybuf.go's): ms is any integer (a negative one never resets,
// as never), RESIZING takes atoi's value.
func debugReplyBuffer(c *Client, args [][]byte) {
	what, v := args[1], args[2]
	switch {
	case argIs(what, "peak-reset-time"):
		switch {
		case argIs(v, "never"):
			c.Srv.SetReplyBufferPeakReset(-1)
		case argIs(v, "reset"):
			c.Srv.SetReplyBufferPeakReset(server.ReplyBufferPeakResetDefault)
		default:
			n, ok := parseInt64(v)
			if !ok {
				c.WriteErr(errNotInteger)
				return
			}
			c.Srv.SetReplyBufferPeakReset(n)
		}
	case argIs(what, "resizing"):
		n, _ := strconv.Atoi(string(v)) // atoi, as Redis: not a number is 0
		c.Srv.SetReplyBufferResizing(n != 0)
	default:
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[0]) + "'. Try DEBUG HELP.")
		return
	}
	c.WriteOK()
}

// hasArg reports whether args holds name (case-insensitive).
func hasArg(args [][]byte, name string) bool {
	for _, a := range args {
		if argIs(a, name) {
			return true
		}
	}
	return false
}

// reloadTargetEmpty reports whether no database holds a key and no
// function library is loaded: a DEBUG RELOAD NOFLUSH then meets no
// duplicate.
func reloadTargetEmpty(c *Client) bool {
	if len(c.KS.Functions()) > 0 {
		return false
	}
	for db := 0; db < keyspace.NumDBs; db++ {
		if c.KS.DBSize(db) > 0 {
			return false
		}
	}
	return true
}

// DEBUG POPULATE commits a batch each populateChunk keys or populateBytes
// bytes, so that a population of millions of keys (or of large values)
// does not build one batch of them all.
const (
	populateChunk = 1024
	populateBytes = 4 << 20
)

// debugPopulate: DEBUG POPULATE count [prefix] [size], as Redis 7.0's
// debugCommand: the key is snprintf "%s:%lu" into 128 bytes (the prefix a
// C string), the value "value:%lu", or with size > 0 that many bytes
// holding its first bytes then zeros. An existing key of any type is
// skipped (an expired one is replaced). Redis checks count, then size.
func debugPopulate(c *Client, args [][]byte) {
	const mustBePositive = "ERR value is out of range, must be positive"
	count, ok := parseInt64(args[0])
	if !ok || count < 0 {
		c.WriteError(mustBePositive)
		return
	}
	prefix := []byte("key")
	if len(args) >= 2 {
		prefix = args[1]
		if i := bytes.IndexByte(prefix, 0); i >= 0 {
			prefix = prefix[:i]
		}
	}
	var size int64
	if len(args) == 3 {
		if size, ok = parseInt64(args[2]); !ok || size < 0 {
			c.WriteError(mustBePositive)
			return
		}
		if err := checkStringLength(size, 0); err != nil {
			c.WriteErr(err) // Redis would try to allocate it
			return
		}
	}
	var key, num, val []byte
	b := c.KS.NewBatch()
	for j := int64(0); j < count; j++ {
		num = strconv.AppendInt(num[:0], j, 10)
		key = append(append(append(key[:0], prefix...), ':'), num...)
		cut := len(key) > 127
		if cut {
			key = key[:127] // snprintf into char buf[128]: every key is the same
		}
		if c.KS.Exists(c.DB, key) {
			continue
		}
		val = append(append(val[:0], "value:"...), num...)
		if size > 0 {
			v := make([]byte, size)
			copy(v, val)
			b.Set(c.DB, key, v, 0)
		} else {
			b.Set(c.DB, key, val, 0)
		}
		if cut || b.Len() >= populateChunk || b.Size() >= populateBytes {
			if !commitReply(c, b, len(c.Out)) {
				return
			}
			b = c.KS.NewBatch()
		}
	}
	if commitReply(c, b, len(c.Out)) {
		c.WriteOK()
	}
}

// debugObject: DEBUG OBJECT key.
func debugObject(c *Client, key []byte) {
	enc, isString, ok := c.KS.ObjectEncoding(c.DB, key)
	if !ok {
		c.WriteError("ERR no such key")
		return
	}
	if isString {
		val, _ := c.KS.PeekString(c.DB, key)
		enc = stringEncoding(val)
	}
	// DEBUG OBJECT is no access (Redis's objectCommandLookup, NOTOUCH):
	// the reads below touch the key, so its access data is put back.
	idle, _ := c.KS.IdleTime(c.DB, key)
	freq, _ := c.KS.AccessFrequency(c.DB, key)
	defer c.KS.SetAccess(c.DB, key, idle, int(freq))
	v, _, err := dumpValue(c.KS, c.DB, key)
	if err != nil {
		c.WriteErr(err)
		return
	}
	size := 0
	if p, err := rdb.Dump(&v); err == nil && len(p) > 11 {
		size = len(p) - 11 // without the type byte, the version and the CRC
	}
	refcount := 1
	if isString {
		val, _, _ := c.KS.Get(c.DB, key)
		if n, ok := parseInt64(val); ok && n >= 0 && n < sharedIntegers && stringEncoding(val) == "int" {
			refcount = sharedRefcount
		}
	}
	var h uint64 = 14695981039346656037
	for _, b := range key {
		h = (h ^ uint64(b)) * 1099511628211
	}
	lru := (time.Now().Unix() - idle) & (1<<24 - 1) // Redis's 24-bit LRU clock at the last access
	c.WriteString(fmt.Sprintf("Value at:0x%012x refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		h&0xffffffffffff, refcount, enc, size, lru, idle))
}

// debugProtocol: DEBUG PROTOCOL type, the values Redis 7.0 sends.
func debugProtocol(c *Client, name string) {
	switch name {
	case "string":
		c.WriteBulkString("Hello World")
	case "integer":
		c.WriteInt(12345)
	case "double":
		c.WriteDouble(3.141)
	case "bignum":
		c.WriteBigNumber("1234567999999999999999999999999999999")
	case "null":
		c.WriteNull()
	case "array", "set":
		if name == "set" {
			c.WriteSet(3)
		} else {
			c.WriteArray(3)
		}
		for j := int64(0); j < 3; j++ {
			c.WriteInt(j)
		}
	case "map":
		c.WriteMap(3)
		for j := int64(0); j < 3; j++ {
			c.WriteInt(j)
			c.WriteBool(j == 1)
		}
	case "attrib":
		if c.WriteAttribute(1) {
			c.WriteBulkString("key-popularity")
			c.WriteArray(2)
			c.WriteBulkString("key:123")
			c.WriteInt(90)
		}
		c.WriteBulkString("Some real reply following the attribute")
	case "push":
		if !c.RESP3() {
			c.WriteError("ERR RESP2 is not supported by this command")
			return
		}
		c.WritePush(2)
		c.WriteBulkString("server-cpu-usage")
		c.WriteInt(42)
		c.WriteBulkString("Some real reply following the push reply")
	case "true":
		c.WriteBool(true)
	case "false":
		c.WriteBool(false)
	case "verbatim":
		c.WriteVerbatimString("txt", "This is a verbatim\nstring")
	default:
		c.WriteError("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

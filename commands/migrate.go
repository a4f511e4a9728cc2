package commands

import (
	"bytes"
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/persimmon-db/persimmon/rdb"
	"github.com/persimmon-db/persimmon/server"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key ...], as Redis 7.0
// runs it outside a cluster: over a client connection to the target (kept
// in the server's cache, server/migrate.go) it sends AUTH, SELECT when the
// connection's database is not already destination-db, and per key a
// RESTORE key ttl payload [REPLACE] with the key's DUMP payload and
// remaining TTL; each key the target acknowledged is then deleted here
// (not with COPY), in one batch, durable before the reply. The command
// waits for the target inside the command, as Redis's synchronous
// MIGRATE does: the timeout (milliseconds, 1000 when not above 0) bounds
// each write and each reply read.
//
// Replies and errors are Redis's: +NOKEY when no key exists, OK, "IOERR
// error or timeout connecting to the client", "IOERR error or timeout
// writing|reading to target instance", "ERR Target instance replied with
// error: ..." (the first error among AUTH, SELECT and the RESTOREs); a
// refused connection is a writing error, as Redis's non-blocking connect
// makes it. A
// socket error before any RESTORE reply (a cached connection the target
// closed) is retried once on a fresh connection, unless it was a timeout.

var (
	errMigrateKeysArg = replyError("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
	errMigrateConnect = replyError("IOERR error or timeout connecting to the client")
)

func migrateCommands() []Command {
	return []Command{
		{Name: "migrate", Arity: -6, Flags: FlagWrite | FlagMovableKeys, FirstKey: 3, LastKey: 3, Step: 1, Group: "generic", Since: "2.6.0",
			Summary: "Atomically transfer a key from a Redis instance to another one.", Run: cmdMigrate,
			KeySpecs: []KeySpec{keyAt(KeyRW|KeyAccess|KeyDelete, 3),
				{Flags: KeyRW | KeyAccess | KeyDelete | server.KeyIncomplete, Keyword: "KEYS", StartFrom: -2, LastKey: -1, KeyStep: 1}},
			GetKeys: migrateGetKeys, ACL: []string{"@dangerous"}, Tips: []string{"nondeterministic_output"}},
	}
}

// migrateGetKeys is Redis's migrateGetKeys: the key argument, or with
// KEYS (and an empty key argument) every argument after it.
func migrateGetKeys(args [][]byte) []KeyRef {
	first, num := 3, 1
	for i := 6; i < len(args); i++ {
		if argIs(args[i], "keys") {
			if len(args[3]) > 0 {
				return nil
			}
			first, num = i+1, len(args)-i-1
			break
		}
	}
	refs := make([]KeyRef, 0, num)
	for k := first; k < first+num; k++ {
		refs = append(refs, KeyRef{Pos: k, Flags: KeyRW | KeyAccess | KeyDelete})
	}
	return refs
}

type migrateArgs struct {
	copy, replace bool
	user, pass    []byte // pass nil: no AUTH
	keys          [][]byte
	db, timeout   int64
}

func parseMigrateArgs(args [][]byte) (migrateArgs, error) {
	var a migrateArgs
	first, num := 3, 1
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case argIs(args[j], "copy"):
			a.copy = true
		case argIs(args[j], "replace"):
			a.replace = true
		case argIs(args[j], "auth"):
			if more < 1 {
				return a, errSyntax
			}
			j++
			a.pass = args[j]
		case argIs(args[j], "auth2"):
			if more < 2 {
				return a, errSyntax
			}
			a.user, a.pass = args[j+1], args[j+2]
			j += 2
		case argIs(args[j], "keys"):
			if len(args[3]) != 0 {
				return a, errMigrateKeysArg
			}
			first, num = j+1, len(args)-j-1
			j = len(args)
		default:
			return a, errSyntax
		}
	}
	var err error
	if a.timeout, err = argInt64(args[5]); err != nil {
		return a, err
	}
	if a.db, err = argInt64(args[4]); err != nil {
		return a, err
	}
	if a.timeout <= 0 {
		a.timeout = 1000
	}
	a.keys = args[first : first+num]
	return a, nil
}

func appendCommand(dst []byte, args ...[]byte) []byte {
	dst = append(strconv.AppendInt(append(dst, '*'), int64(len(args)), 10), '\r', '\n')
	for _, a := range args {
		dst = append(strconv.AppendInt(append(dst, '$'), int64(len(a)), 10), '\r', '\n')
		dst = append(append(dst, a...), '\r', '\n')
	}
	return dst
}

func cmdMigrate(c *Client, args [][]byte) {
	a, err := parseMigrateArgs(args)
	if err != nil {
		c.WriteErr(err)
		return
	}
	var keys [][]byte
	for _, k := range a.keys {
		if c.KS.Exists(c.DB, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		c.WriteString("NOKEY")
		return
	}
	addr := string(args[1]) + ":" + string(args[2])
	if bytes.IndexByte(args[1], ':') >= 0 {
		addr = net.JoinHostPort(string(args[1]), string(args[2]))
	}
	timeout := time.Duration(a.timeout) * time.Millisecond
	// The payloads and TTLs, read once: the keyspace does not change while
	// the command runs.
	now := c.KS.NowMs()
	type item struct {
		key, ttl, payload []byte
	}
	var items []item
	for _, k := range keys {
		ttl := int64(0)
		if at, ok := c.KS.ExpireAt(c.DB, k); ok && at != 0 {
			if ttl = at - now; ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		v, ok, err := dumpValue(c.KS, c.DB, k)
		if err != nil {
			c.WriteErr(err)
			return
		}
		if !ok {
			continue
		}
		p, err := rdb.Dump(&v)
		if err != nil {
			c.WriteErr(err)
			return
		}
		items = append(items, item{key: k, ttl: strconv.AppendInt(nil, ttl, 10), payload: p})
	}
	mayRetry := true
	for {
		mc, err := c.Srv.MigrateConn(addr, timeout)
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Redis's non-blocking connect sees a refused connection
			// as connected (the socket turns writable) and fails at the
			// first write: its retry fails the same way.
			c.WriteError("IOERR error or timeout writing to target instance")
			return
		}
		if err != nil {
			c.WriteErr(errMigrateConnect)
			return
		}
		done, retry := migrateOnce(c, mc, addr, a, timeout, func(buf []byte) []byte {
			for _, it := range items {
				cmd := [][]byte{[]byte("RESTORE"), it.key, it.ttl, it.payload}
				if a.replace {
					cmd = append(cmd, []byte("REPLACE"))
				}
				buf = appendCommand(buf, cmd...)
			}
			return buf
		}, len(items), func(i int) []byte { return items[i].key }, mayRetry)
		if done {
			return
		}
		if !retry {
			return
		}
		mayRetry = false
	}
}

// migrateOnce sends one attempt over mc and replies, unless it returns
// retry (a socket error worth a fresh connection; nothing was replied).
func migrateOnce(c *Client, mc *server.MigrateConn, addr string, a migrateArgs, timeout time.Duration,
	restores func([]byte) []byte, n int, keyOf func(int) []byte, mayRetry bool) (done, retry bool) {
	var buf []byte
	if a.pass != nil {
		if a.user != nil {
			buf = appendCommand(buf, []byte("AUTH"), a.user, a.pass)
		} else {
			buf = appendCommand(buf, []byte("AUTH"), a.pass)
		}
	}
	sel := mc.LastDB != a.db
	if sel {
		buf = appendCommand(buf, []byte("SELECT"), strconv.AppendInt(nil, a.db, 10))
	}
	buf = restores(buf)
	socketErr := func(writing bool, err error) (bool, bool) {
		mc.Conn.Close()
		if mayRetry && !errors.Is(err, os.ErrDeadlineExceeded) {
			return false, true
		}
		what := "reading"
		if writing {
			what = "writing"
		}
		c.WriteError("IOERR error or timeout " + what + " to target instance")
		return true, false
	}
	for pos := 0; pos < len(buf); {
		end := min(len(buf), pos+64<<10)
		mc.Conn.SetWriteDeadline(time.Now().Add(timeout))
		m, err := mc.Conn.Write(buf[pos:end])
		if err != nil {
			return socketErr(true, err)
		}
		pos += m
	}
	readLine := func() ([]byte, error) {
		mc.Conn.SetReadDeadline(time.Now().Add(timeout))
		line, err := mc.R.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return nil, errors.New("empty reply line")
		}
		return bytes.Clone(line), nil
	}
	var authLine, selLine []byte
	var err error
	if a.pass != nil {
		if authLine, err = readLine(); err != nil {
			return socketErr(false, err)
		}
	}
	if sel {
		if selLine, err = readLine(); err != nil {
			return socketErr(false, err)
		}
	}
	var targetErr []byte
	var acked [][]byte
	socketError := false
	j := 0
	for ; j < n; j++ {
		line, rerr := readLine()
		if rerr != nil {
			socketError, err = true, rerr
			break
		}
		switch {
		case authLine != nil && authLine[0] == '-':
			line = authLine
		case selLine != nil && selLine[0] == '-':
			line = selLine
		}
		if line[0] == '-' {
			if targetErr == nil {
				mc.LastDB = -1
				targetErr = line[1:]
			}
			continue
		}
		if !a.copy {
			acked = append(acked, keyOf(j))
		}
	}
	if targetErr == nil && socketError && j == 0 && mayRetry && !errors.Is(err, os.ErrDeadlineExceeded) {
		mc.Conn.Close()
		return false, true
	}
	mark := len(c.Out)
	if len(acked) > 0 {
		b := c.KS.NewBatch()
		for _, k := range acked {
			b.Del(c.DB, k)
		}
		if !commitReply(c, b, mark) {
			if !socketError {
				c.Srv.MigrateRelease(addr, mc)
			} else {
				mc.Conn.Close()
			}
			return true, false
		}
	}
	switch {
	case targetErr != nil:
		c.WriteError("ERR Target instance replied with error: " + string(targetErr))
	case socketError:
		c.WriteError("IOERR error or timeout reading to target instance")
	default:
		mc.LastDB = a.db
		c.WriteOK()
	}
	if socketError {
		mc.Conn.Close()
	} else {
		c.Srv.MigrateRelease(addr, mc)
	}
	return true, false
}

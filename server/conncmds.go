package server

import (
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/persimmon-db/persimmon/acl"
	"github.com/persimmon-db/persimmon/proto"
)

// Connection and server commands (redis.io groups "connection" and
// "server"): they touch the connection or the server, not the keyspace, so
// they run without the keyspace lock (RESET excepted, for UNWATCH).

// Redis 7.0's replies, verbatim.
const (
	errWrongPass     = "WRONGPASS invalid username-password pair or user is disabled."
	errNoPassword    = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errHelloNoAuth   = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errNoProto       = "NOPROTO unsupported protocol version"
	errProtoVersion  = "ERR Protocol version is not an integer or out of range"
	errClientName    = "ERR Client names cannot contain spaces, newlines or special characters."
	errNoSuchClient  = "ERR No such client"
	errClientIDRange = "ERR client-id should be greater than 0"
)

func pingCommand(c *Client, args [][]byte) {
	if c.conn != nil && c.conn.subscriptions() > 0 && c.Proto != proto.RESP3 && len(args) <= 2 {
		// RESP2's subscribed state answers a message-shaped reply.
		c.WriteArray(2)
		c.WriteBulkString("pong")
		if len(args) == 2 {
			c.WriteBulk(args[1])
		} else {
			c.WriteBulkString("")
		}
		return
	}
	switch len(args) {
	case 1:
		c.WriteString("PONG")
	case 2:
		c.WriteBulk(args[1])
	default:
		c.WriteError(WrongArgs("ping"))
	}
}

func echoCommand(c *Client, args [][]byte) { c.WriteBulk(args[1]) }

func selectCommand(c *Client, args [][]byte) {
	db, err := ArgDB(args[1])
	if err != nil {
		c.WriteErr(err)
		return
	}
	c.DB = db
	c.WriteOK()
}

func timeCommand(c *Client, _ [][]byte) {
	now := time.Now()
	c.WriteArray(2)
	c.WriteBulkInt(now.Unix())
	c.WriteBulkInt(int64(now.Nanosecond() / 1000))
}

func quitCommand(c *Client, _ [][]byte) {
	c.WriteOK()
	c.closeAfterReply = true
}

// authUser returns the user that user/pass authenticate as, or nil.
// named is false for the one-argument AUTH form: the password of the
// default user, or "user:password" (a Persimmon extension) when the whole
// string is not the default user's password. A named user is looked up
// as given: AUTH "" x names no user and fails, as in Redis.
func authUser(st *acl.Store, named bool, user, pass string) *acl.User {
	if named {
		return st.Authenticate(user, pass)
	}
	if u := st.Authenticate(acl.DefaultUser, pass); u != nil {
		return u
	}
	if name, p, found := strings.Cut(pass, ":"); found {
		return st.Authenticate(name, p)
	}
	return nil
}

// authCommand: AUTH [username] password.
func authCommand(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.WriteError(ErrSyntax)
		return
	}
	st := c.Srv.acl.store
	if len(args) == 2 && st.Default().NoPass() {
		c.WriteError(errNoPassword)
		return
	}
	named, user, pass := false, "", string(args[1])
	if len(args) == 3 {
		named, user, pass = true, string(args[1]), string(args[2])
	}
	if !c.login(args[0], named, user, pass) {
		c.WriteError(errWrongPass)
		return
	}
	c.WriteOK()
}

// login authenticates the connection as user/pass (authUser); a failure
// goes to the ACL LOG under the user tried.
func (c *Client) login(argv0 []byte, named bool, user, pass string) bool {
	if u := authUser(c.Srv.acl.store, named, user, pass); u != nil {
		c.setUser(u)
		c.Authed = true
		return true
	}
	if !named {
		user = acl.DefaultUser
	}
	c.logAuthFailure(argv0, user)
	return false
}

// helloCommand: HELLO [protover [AUTH username password] [SETNAME name]].
// protover 2 or 3 switches the connection to RESP2 or RESP3 (once the
// options are through and the client is authenticated, as in Redis 7.0);
// without it the protocol stays. The reply is the server map, in the new
// protocol.
func helloCommand(c *Client, args [][]byte) {
	var ver int64
	if len(args) >= 2 {
		var ok bool
		ver, ok = ParseInt64(args[1])
		if !ok {
			c.WriteError(errProtoVersion)
			return
		}
		if ver < 2 || ver > 3 {
			c.WriteError(errNoProto)
			return
		}
	}
	// Each option acts as it is read, as in Redis 7.0: a wrong password
	// is refused before a later syntax error, and a name set before one
	// stays set.
	for j := 2; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case ArgIs(args[j], "auth") && more >= 2:
			if !c.login(args[0], true, string(args[j+1]), string(args[j+2])) {
				c.WriteError(errWrongPass)
				return
			}
			j += 2
		case ArgIs(args[j], "setname") && more >= 1:
			if !validClientName(args[j+1]) {
				c.WriteError(errClientName)
				return
			}
			c.Name = string(args[j+1])
			j++
		default:
			c.WriteError("ERR Syntax error in HELLO option '" + string(CString(args[j])) + "'")
			return
		}
	}
	if !c.Authed {
		c.WriteError(errHelloNoAuth)
		return
	}
	if ver != 0 {
		c.setProto(int(ver))
	}
	c.WriteMap(7)
	c.WriteBulkString("server")
	c.WriteBulkString("redis")
	c.WriteBulkString("version")
	c.WriteBulkString(Version)
	c.WriteBulkString("proto")
	c.WriteInt(int64(max(c.Proto, proto.RESP2)))
	c.WriteBulkString("id")
	c.WriteInt(c.ID)
	c.WriteBulkString("mode")
	c.WriteBulkString("standalone")
	c.WriteBulkString("role")
	c.WriteBulkString("master")
	c.WriteBulkString("modules")
	c.WriteArray(0)
}

// resetCommand: RESET. Leaves MULTI, forgets watched keys, selects db 0,
// clears the name and, when a password is set, de-authenticates.
func resetCommand(c *Client, _ [][]byte) {
	if c.conn != nil {
		c.Srv.track.disable(c.conn) // tracking.go
		c.conn.unsubscribeAll()
		c.conn.stopMonitor()
		c.conn.replyOff, c.conn.replySkip, c.conn.replySkipNext = false, false, false // CLIENT REPLY ON
	}
	c.endMulti()
	c.Srv.env.unwatch(&c.Watch)
	c.DB = 0
	c.Name = ""
	c.setUser(c.Srv.acl.store.Default())
	c.Authed = !c.Srv.acl.store.AuthRequired()
	c.setProto(proto.RESP2)
	c.WriteString("RESET")
}

// setProto switches the protocol the client's replies (and, for its
// connection, the pub/sub messages it receives) are encoded in.
func (c *Client) setProto(v int) {
	c.Proto = v
	if c.conn != nil {
		c.conn.resp3.Store(v == proto.RESP3)
	}
}

// shutdownCommand: SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. Every
// write is already durable, so the save options change nothing: the server
// stops accepting, finishes the batches in flight, closes the keyspace
// (which flushes and fences what is left) and exits. Like Redis, a
// successful SHUTDOWN sends no reply: the connection just closes.
func shutdownCommand(c *Client, args [][]byte) {
	abort, save, nosave, now := false, false, false, false
	for _, a := range args[1:] {
		switch {
		case ArgIs(a, "nosave"):
			nosave = true
		case ArgIs(a, "save"):
			save = true
		case ArgIs(a, "now"):
			now = true
		case ArgIs(a, "force"):
		case ArgIs(a, "abort"):
			abort = true
		default:
			c.WriteError(ErrSyntax)
			return
		}
	}
	if save && nosave { // Redis 7: SAVE and NOSAVE exclude each other
		c.WriteError(ErrSyntax)
		return
	}
	if abort {
		if len(args) > 2 {
			c.WriteError(ErrSyntax)
		} else {
			c.WriteError("ERR No shutdown in progress.")
		}
		return
	}
	if c.Srv.busy.Load() != nil {
		// A script ran past the threshold: only NOSAVE may stop it.
		if !nosave {
			c.WriteError(c.Srv.busyReply())
			return
		}
		c.Srv.scriptKill(true, false)
	}
	c.Srv.logf("User requested shutdown...")
	if now {
		c.Srv.replica.shutdownNow.Store(true) // no wait for lagging replicas (replica.go: drainReplicas)
	}
	c.closeAfterReply = true
	c.Srv.requestShutdown()
}

// validClientName: Redis allows bytes '!'..'~' only.
func validClientName(name []byte) bool {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func clientIDCommand(c *Client, _ [][]byte) { c.WriteInt(c.ID) }

func clientGetnameCommand(c *Client, _ [][]byte) {
	if c.Name == "" {
		c.WriteNull()
		return
	}
	c.WriteBulkString(c.Name)
}

func clientSetnameCommand(c *Client, args [][]byte) {
	if !validClientName(args[2]) {
		c.WriteError(errClientName)
		return
	}
	c.Name = string(args[2])
	c.WriteOK()
}

// clientSetinfoCommand: CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2;
// go-redis sends it on connect). Accepted and not kept.
func clientSetinfoCommand(c *Client, args [][]byte) {
	attr := args[2]
	if !ArgIs(attr, "lib-name") && !ArgIs(attr, "lib-ver") {
		c.WriteError("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validClientName(args[3]) {
		c.WriteError("ERR " + strings.ToLower(string(attr)) + " cannot contain spaces, newlines or special characters.")
		return
	}
	c.WriteOK()
}

// clientNoEvictCommand: CLIENT NO-EVICT ON|OFF. Persimmon evicts no
// clients (there is no maxmemory-clients), so the mode only shows, as
// flag e in CLIENT LIST.
func clientNoEvictCommand(c *Client, args [][]byte) {
	switch {
	case ArgIs(args[2], "on"):
		c.conn.noEvict.Store(true)
	case ArgIs(args[2], "off"):
		c.conn.noEvict.Store(false)
	default:
		c.WriteError(ErrSyntax)
		return
	}
	c.WriteOK()
}

func clientInfoCommand(c *Client, args [][]byte) {
	info := c.conn.snapshot(c.conn)
	info.argvMem = argvMem(args)
	c.WriteVerbatim("txt", appendClientLine(nil, c.conn, info, time.Now()))
}

// clientListCommand: CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...].
func clientListCommand(c *Client, args [][]byte) {
	var ids map[int64]bool
	ctype := ""
	switch {
	case len(args) == 2:
	case len(args) == 4 && ArgIs(args[2], "type"):
		t, ok := clientTypeByName(args[3])
		if !ok {
			c.WriteError("ERR Unknown client type '" + string(CString(args[3])) + "'")
			return
		}
		ctype = t
	case len(args) > 3 && ArgIs(args[2], "id"):
		ids = make(map[int64]bool)
		for _, a := range args[3:] {
			// Any integer: 0 or a negative one names no client (Redis
			// 7.0 answers an empty list, not an error).
			id, ok := ParseInt64(a)
			if !ok {
				c.WriteError("ERR Invalid client ID")
				return
			}
			ids[id] = true
		}
	default:
		c.WriteError(ErrSyntax)
		return
	}
	var b []byte
	now := time.Now()
	for _, other := range c.Srv.clientsSnapshot() {
		if ids != nil && !ids[other.ID] || ctype != "" && other.clientType() != ctype ||
			other != c.conn && other.killed.Load() {
			continue
		}
		info := other.snapshot(c.conn)
		if other == c.conn {
			info.argvMem = argvMem(args)
		}
		b = appendClientLine(b, other, info, now)
	}
	c.WriteVerbatim("txt", b)
}

// appendClientLine appends one CLIENT LIST line in Redis 7.0's format
// (catClientInfoString): its fields in Redis's order; flags P x b t R B e S
// as they apply (else N); sub, psub, multi, qbuf and the memory fields from
// the connection's buffers; redir the tracking redirect (-1 when tracking
// is off). The reply fields follow Redis's static buffer plus reply list:
// of the bytes not yet written to the socket, the first 16 KiB are obl and
// the rest omem, in oll blocks of 16 KiB.
func appendClientLine(b []byte, cn *conn, info clientInfo, now time.Time) []byte {
	t := cn.srv.track
	t.mu.Lock()
	trk := cn.trk
	t.mu.Unlock()
	var flags []byte
	if cn.replica.Load() {
		flags = append(flags, 'S')
	}
	if cn.subscriptions() > 0 {
		flags = append(flags, 'P')
	}
	if info.multi >= 0 {
		flags = append(flags, 'x')
	}
	if cn.parked.Load() || cn.blockedNow.Load() || cn.pauseWait.Load() || cn.waiter.Load() != nil {
		flags = append(flags, 'b')
	}
	if trk.on {
		flags = append(flags, 't')
	}
	if trk.brokenRedir {
		flags = append(flags, 'R')
	}
	if trk.bcast {
		flags = append(flags, 'B')
	}
	if _, ok := cn.unixSocket(); ok {
		flags = append(flags, 'U')
	}
	if cn.noEvict.Load() {
		flags = append(flags, 'e')
	}
	if len(flags) == 0 {
		flags = append(flags, 'N')
	}
	const block = 16 << 10 // Redis's static reply buffer, and each reply list block
	obl := min(info.pending, block)
	omem := info.pending - obl
	oll := (omem + block - 1) / block
	redir := int64(-1)
	if trk.on {
		redir = trk.redirect
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, cn.ID, 10)
	b = append(b, " addr="...)
	b = append(b, cn.addr...)
	b = append(b, " laddr="...)
	b = append(b, cn.laddr...)
	b = append(b, " fd="...)
	b = strconv.AppendInt(b, int64(cn.fd), 10)
	b = append(b, " name="...)
	b = append(b, info.name...)
	b = append(b, " age="...)
	b = strconv.AppendInt(b, int64(now.Sub(cn.created)/time.Second), 10)
	b = append(b, " idle="...)
	b = strconv.AppendInt(b, max(0, int64(now.Sub(info.lastActive)/time.Second)), 10)
	b = append(b, " flags="...)
	b = append(b, flags...)
	b = append(b, " db="...)
	b = strconv.AppendInt(b, int64(info.db), 10)
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, int64(cn.subN.Load()), 10)
	b = append(b, " psub="...)
	b = strconv.AppendInt(b, int64(cn.psubN.Load()), 10)
	b = append(b, " ssub=0 multi="...)
	b = strconv.AppendInt(b, int64(info.multi), 10)
	b = append(b, " qbuf="...)
	b = strconv.AppendInt(b, int64(info.qbuf), 10)
	b = append(b, " qbuf-free="...)
	b = strconv.AppendInt(b, int64(info.qbufFree), 10)
	b = append(b, " argv-mem="...)
	b = strconv.AppendInt(b, int64(info.argvMem), 10)
	b = append(b, " multi-mem="...)
	b = strconv.AppendInt(b, int64(info.multiMem), 10)
	b = append(b, " rbs="...)
	b = strconv.AppendInt(b, cn.rb.size.Load(), 10) // replybuf.go
	b = append(b, " rbp="...)
	b = strconv.AppendInt(b, cn.rb.peak.Load(), 10)
	b = append(b, " obl="...)
	b = strconv.AppendInt(b, int64(obl), 10)
	b = append(b, " oll="...)
	b = strconv.AppendInt(b, int64(oll), 10)
	b = append(b, " omem="...)
	b = strconv.AppendInt(b, int64(omem), 10)
	b = append(b, " tot-mem="...)
	b = strconv.AppendInt(b, int64(info.qbuf+info.qbufFree+info.argvMem+info.multiMem+info.outCap+info.pending), 10)
	b = append(b, " events=r"...)
	if info.pending > 0 {
		b = append(b, 'w')
	}
	b = append(b, " cmd="...)
	b = append(b, info.cmd...)
	b = append(b, " user="...)
	b = append(b, cn.User().Name()...)
	b = append(b, " redir="...)
	b = strconv.AppendInt(b, redir, 10)
	if cn.resp3.Load() {
		b = append(b, " resp=3\n"...)
	} else {
		b = append(b, " resp=2\n"...)
	}
	return b
}

// argvMem is Redis's argv-mem of a command: its arguments' bytes.
func argvMem(args [][]byte) int {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	return n
}

// clientKillCommand: CLIENT KILL ip:port (the old form: +OK, or "No such
// client"; it may kill the asking connection), or CLIENT KILL with
// filters ID, ADDR, LADDR, TYPE, USER, SKIPME (the count killed), parsed
// in order as Redis 7.0 does.
func clientKillCommand(c *Client, args [][]byte) {
	self := c.conn
	var (
		id          int64
		addr, laddr *string
		user        *acl.User
		ctype       = ""
		skipMe      = true
		oldForm     = len(args) == 3
	)
	if oldForm {
		a := string(args[2])
		addr, skipMe = &a, false
	} else {
		for i := 2; i < len(args); i += 2 {
			opt := args[i]
			if i+1 >= len(args) {
				c.WriteError(ErrSyntax)
				return
			}
			val := args[i+1]
			switch {
			case ArgIs(opt, "id"):
				n, ok := ParseInt64(val)
				if !ok || n <= 0 {
					c.WriteError(errClientIDRange)
					return
				}
				id = n
			case ArgIs(opt, "type"):
				t, ok := clientTypeByName(val)
				if !ok {
					c.WriteError("ERR Unknown client type '" + string(CString(val)) + "'")
					return
				}
				ctype = t
			case ArgIs(opt, "addr"):
				v := string(val)
				addr = &v
			case ArgIs(opt, "laddr"):
				v := string(val)
				laddr = &v
			case ArgIs(opt, "user"):
				if user = c.Srv.acl.store.User(string(val)); user == nil {
					c.WriteError("ERR No such user '" + string(CString(val)) + "'")
					return
				}
			case ArgIs(opt, "skipme"):
				switch {
				case ArgIs(val, "yes"):
					skipMe = true
				case ArgIs(val, "no"):
					skipMe = false
				default:
					c.WriteError(ErrSyntax)
					return
				}
			default:
				c.WriteError(ErrSyntax)
				return
			}
		}
	}
	killed := int64(0)
	for _, other := range c.Srv.clientsSnapshot() {
		switch {
		case addr != nil && other.addr != *addr,
			laddr != nil && other.laddr != *laddr,
			ctype != "" && other.clientType() != ctype,
			id != 0 && other.ID != id,
			user != nil && other.User() != user,
			skipMe && other == self,
			other != self && other.killed.Load(): // killed before, still closing
			continue
		}
		killClient(self, other)
		killed++
	}
	if !oldForm {
		c.WriteInt(killed)
	} else if killed == 0 {
		c.WriteError(errNoSuchClient)
	} else {
		c.WriteOK()
	}
}

// clientTypeByName maps a client type name of CLIENT KILL and CLIENT LIST
// to the class clientType reports ("slave" is "replica").
func clientTypeByName(name []byte) (string, bool) {
	name = CString(name) // Redis compares it as a C string
	switch {
	case ArgIs(name, "normal"):
		return "normal", true
	case ArgIs(name, "replica"), ArgIs(name, "slave"):
		return "replica", true
	case ArgIs(name, "pubsub"):
		return "pubsub", true
	case ArgIs(name, "master"):
		return "master", true
	}
	return "", false
}

// clientType is the connection's class as Redis's getClientType names it:
// "replica" for a replica's link, "pubsub" while subscribed, else
// "normal" (a replica's link to its master is not a client here).
func (c *conn) clientType() string {
	switch {
	case c.replica.Load():
		return "replica"
	case c.subscriptions() > 0:
		return "pubsub"
	}
	return "normal"
}

// killClient closes other; the asking connection closes after its reply.
func killClient(self, other *conn) {
	if other == self {
		self.closeAfterReply = true
		return
	}
	other.kill()
}

// clientUnblockCommand: CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
// (semantics: redis.io CLIENT UNBLOCK). The client blocked in BLPOP & co.
// or in WAIT/WAITAOF (replication_wait.go) gets its timeout reply, or with
// ERROR the -UNBLOCKED error; the reply is 1 if a blocked client was
// unblocked, else 0.
func clientUnblockCommand(c *Client, args [][]byte) {
	if len(args) > 4 {
		// Redis takes CLIENT UNBLOCK only with 3 or 4 arguments and names
		// the subcommand as it was typed.
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try CLIENT HELP.")
		return
	}
	asError := false
	if len(args) == 4 { // the reason is checked before the id, as Redis does
		switch {
		case ArgIs(args[3], "timeout"):
		case ArgIs(args[3], "error"):
			asError = true
		default:
			c.WriteError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := ParseInt64(args[2])
	if !ok {
		c.WriteErr(ErrNotIntegerReply)
		return
	}
	var target *conn
	for _, other := range c.Srv.clientsSnapshot() {
		if other.ID == id {
			target = other
		}
	}
	if target == nil || target == c.conn {
		c.WriteInt(0)
		return
	}
	if target.unblockByClient(asError) || target.unblockWait(asError) {
		c.WriteInt(1)
	} else {
		c.WriteInt(0)
	}
}

func clientHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "CLIENT", []string{ // Redis 7.0's lines and order, and SETINFO
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"SETINFO <LIB-NAME|LIB-VER> <value>",
		"    Accepted for client libraries; not kept.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
	})
}

// writeHelp writes a HELP reply the way Redis's addReplyHelp does.
func writeHelp(c *Client, container string, lines []string) {
	c.WriteArray(len(lines) + 3)
	c.WriteString(container + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.WriteString(l)
	}
	c.WriteString("HELP")
	c.WriteString("    Prints this help.")
}

// connAddrs are CLIENT LIST's addr and laddr for a new connection: the
// peer's and the local ip:port, or for a unix-socket client (which has no
// peer address) the socket's path with port 0 for both, as Redis's
// genClientAddrString prints them.
func connAddrs(nc net.Conn) (addr, laddr string) {
	if u, ok := nc.LocalAddr().(*net.UnixAddr); ok {
		return u.Name + ":0", u.Name + ":0"
	}
	return nc.RemoteAddr().String(), nc.LocalAddr().String()
}

// unixSocket reports whether c came in over a unix socket, and its path.
// It asks the descriptor (which is the event loop's own in loop mode), so
// it costs a system call: for MONITOR lines and CLIENT LIST flags.
func (c *conn) unixSocket() (path string, ok bool) {
	if sa, err := syscall.Getsockname(c.fd); err == nil {
		if u, isUnix := sa.(*syscall.SockaddrUnix); isUnix {
			return u.Name, true
		}
	}
	return "", false
}

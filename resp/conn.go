package resp

import (
	"bytes"
	"errors"
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/tidwall/redcon"
)

// Protocol limits, as Redis 7 enforces them.
const (
	readBufSize     = 16 << 10  // initial read buffer
	maxInlineSize   = 64 << 10  // PROTO_INLINE_MAX_SIZE: an inline line, or a count line
	maxMultibulkLen = 1<<31 - 1 // declared arguments of one request (INT_MAX, as Redis 7)
	unauthMaxArgs   = 10        // declared arguments before AUTH, when a password is set
	unauthMaxBulk   = 16 << 10  // declared argument length before AUTH
	maxQueryBuf     = 1 << 30   // client-query-buffer-limit: bytes buffered for one client
	outFlushAt      = 1 << 20   // replies held beyond this are written mid-batch
	shrinkAbove     = 256 << 10 // idle buffers larger than this are given back
)

// conn is one client connection. Its goroutine reads whatever the socket
// has, runs every complete command in it (the pipeline batch), waits until
// the highest LSN the batch wrote or read is durable, and only then writes
// the batch's replies in one write (DESIGN.md invariant 1).
type conn struct {
	Client
	srv     *Server
	nc      net.Conn
	addr    string // peer ip:port
	laddr   string // local ip:port
	fd      int
	created time.Time

	rbuf    []byte   // unprocessed input; always starts at index 0
	argsbuf [][]byte // reused argument slice headers
	inline  []byte   // reused storage for unquoted inline arguments

	batchLSN   uint64      // highest LastLSN seen after a command of this batch
	tick       time.Time   // end of the previous command (commandstats timing)
	pend       []statDelta // commandstats not yet added to the shared counters
	pendErrors int64       // error replies not attributed to a command
	lastCmd    *Command
	deadline   bool       // a read deadline is set (timeout > 0)
	inExec     bool       // EXEC is running queued commands with the keyspace lock held
	blk        blockState // blocking.go: a blocked command (BLPOP...) [lists: blocking]

	infoMu sync.Mutex
	info   clientInfo // what CLIENT LIST shows to other connections

	killed atomic.Bool // CLIENT KILL or server close

	// Pub/sub (pubsub.go): the subscriptions, their counts, and the write
	// lock a publisher and flush share in goroutine mode.
	ps          pubsubState
	subN, psubN atomic.Int32
	wmu         sync.Mutex

	// Loop mode (loop.go): gc is the connection's gnet conn, used on the
	// loop only; lc is the same for other goroutines (Close); parked is
	// set while a blocking command holds the connection.
	gc     gnet.Conn
	lc     atomic.Pointer[loopConn]
	parked atomic.Bool
	// held: msync mode on the loop, the replies in out wait until
	// batchLSN is durable (commit.go).
	held   bool
	listed bool // on the committer's held list (loop only)
	// idleOut is the output gnet still held at the last idle check.
	idleOut int
}

// clientInfo is a connection's state as published for other connections,
// refreshed once per batch.
type clientInfo struct {
	name       string
	db         int
	multi      int // queued commands, -1 outside MULTI
	cmd        string
	lastActive time.Time
	qbuf       int
	qbufFree   int
	omem       int
}

// statDelta accumulates one command's commandstats during a batch, so that
// the shared counters are touched once per batch, not per command.
type statDelta struct {
	st                             *cmdStats
	calls, failed, rejected, nanos int64
}

// cmdStats are one command's INFO commandstats counters.
type cmdStats struct {
	calls    atomic.Int64
	failed   atomic.Int64
	rejected atomic.Int64
	nanos    atomic.Int64
}

func newConn(s *Server, nc net.Conn, id int64) *conn {
	now := time.Now()
	c := &conn{
		srv:     s,
		nc:      nc,
		addr:    nc.RemoteAddr().String(),
		laddr:   nc.LocalAddr().String(),
		fd:      connFD(nc),
		created: now,
		rbuf:    make([]byte, 0, readBufSize),
		argsbuf: make([][]byte, 0, 16),
	}
	c.ID = id
	c.KS = s.ks
	c.Srv = s
	c.conn = c
	c.Authed = s.requirepass() == ""
	c.info = clientInfo{multi: -1, cmd: "NULL", lastActive: now}
	return c
}

func connFD(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// shutdown makes the connection finish the batch it is running and stop:
// further reads see EOF, and a client that does not read its replies
// cannot hold the server's close up for long.
func (c *conn) shutdown() {
	c.killed.Store(true)
	if c.closeOnLoop() {
		return
	}
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.CloseRead()
		tc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		return
	}
	c.nc.Close()
}

// kill closes the connection at once (CLIENT KILL).
func (c *conn) kill() {
	c.killed.Store(true)
	if c.closeOnLoop() {
		return
	}
	c.nc.Close()
}

func (c *conn) serve() {
	defer c.finish()
	for {
		if len(c.rbuf) == cap(c.rbuf) {
			if len(c.rbuf) >= maxQueryBuf {
				c.srv.logf("closing client id=%d addr=%s that reached the max query buffer length", c.ID, c.addr)
				return
			}
			c.rbuf = growBuf(c.rbuf, 2*cap(c.rbuf))
		}
		c.setReadDeadline()
		n, err := c.nc.Read(c.rbuf[len(c.rbuf):cap(c.rbuf)])
		if n > 0 {
			c.rbuf = c.rbuf[:len(c.rbuf)+n]
			c.srv.stats.netIn.Add(int64(n))
			c.srv.stats.reads.Add(1)
			if !c.processInput() {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *conn) setReadDeadline() {
	t := c.srv.live.timeout.Load()
	if c.subscriptions() > 0 {
		t = 0 // pub/sub subscribers are exempt from the idle timeout, as in Redis
	}
	switch {
	case t > 0:
		c.nc.SetReadDeadline(time.Now().Add(time.Duration(t) * time.Second))
		c.deadline = true
	case c.deadline:
		c.nc.SetReadDeadline(time.Time{})
		c.deadline = false
	}
}

// growBuf returns b with its contents and a capacity of at least n.
func growBuf(b []byte, n int) []byte {
	if n <= cap(b) {
		return b
	}
	n = min(n, maxQueryBuf)
	nb := make([]byte, len(b), max(n, len(b)))
	copy(nb, b)
	return nb
}

func (c *conn) finish() {
	c.unsubscribeAll()
	c.unblockOnClose() // [lists: blocking]
	if c.Watch.Watching() {
		c.srv.env.lock()
		c.srv.env.unwatch(&c.Watch)
		c.srv.env.unlock()
	}
	c.flushStats()
	c.nc.Close()
	c.srv.removeClient(c)
}

// processInput runs every complete command in the read buffer, then makes
// the batch durable and writes its replies. It reports whether the
// connection stays open.
func (c *conn) processInput() bool {
	if c.held { // commit.go: replies wait for the committer
		if !c.releaseHeld() {
			return false
		}
		if c.held {
			return !c.killed.Load()
		}
	}
	data := c.rbuf
	need := 0
	c.tick = time.Now()
loop:
	for len(data) > 0 && !c.closeAfterReply && c.blk.b == nil && !c.held {
		var args [][]byte
		if data[0] == '*' {
			complete, a, _, rest, err := redcon.ReadNextCommand(data, c.argsbuf)
			if cap(a) > cap(c.argsbuf) {
				c.argsbuf = a[:0]
			}
			if err != nil || !complete {
				v := scanMultibulk(data, c.limits())
				switch {
				case v.err != "":
					c.protocolError(v.err)
					break loop
				case v.skip > 0:
					data = data[v.skip:]
					continue
				case !v.complete:
					need = v.need
					break loop
				}
				// Whole, but not as redcon wants it (a bulk not followed
				// by CRLF): Redis takes the two bytes after each bulk
				// without looking at them.
				a, rest = splitMultibulk(data, c.argsbuf[:0])
			}
			if msg := c.checkArgs(a); msg != "" {
				c.protocolError(msg)
				break
			}
			data, args = rest, a
			if len(args) == 0 { // "*0\r\n"
				continue
			}
		} else {
			i := bytes.IndexByte(data, '\n')
			if i < 0 || i >= maxInlineSize+16<<10 {
				// Redis reads 16 KB at a time and refuses a buffer over the
				// limit with no newline in it: a line whose newline is not
				// in the first 80 KB is refused, however it is sent.
				if len(data) > maxInlineSize {
					c.protocolError("too big inline request")
				}
				break
			}
			line := data[:i]
			data = data[i+1:]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			var ok bool
			args, c.inline, ok = splitArgs(line, c.inline, c.argsbuf[:0])
			if cap(args) > cap(c.argsbuf) {
				c.argsbuf = args[:0]
			}
			if !ok {
				c.protocolError("unbalanced quotes in request")
				break
			}
			if len(args) == 0 { // empty lines are ignored
				continue
			}
		}
		c.execute(args)
		if len(c.out) >= outFlushAt && !c.flush() {
			return false
		}
	}

	// Keep the unprocessed tail at the front of the buffer.
	n := copy(c.rbuf, data)
	c.rbuf = c.rbuf[:n]
	if need > cap(c.rbuf) {
		// Room for what the request declares, but at most twice what has
		// arrived: a client that announces a 512 MB bulk and sends three
		// bytes must not cost 512 MB (doubling keeps big values linear).
		c.rbuf = growBuf(c.rbuf, min(need, 2*max(len(c.rbuf), readBufSize)))
	} else if n == 0 && cap(c.rbuf) > shrinkAbove {
		releasedLarge(cap(c.rbuf))
		c.rbuf = make([]byte, 0, readBufSize)
	}
	c.flushStats()
	c.publish()
	if !c.flush() {
		return false
	}
	if c.held { // a closing reply closes when it leaves (releaseHeld)
		return !c.killed.Load()
	}
	if c.closeAfterReply || c.killed.Load() {
		return false
	}
	if cap(c.out) > shrinkAbove {
		releasedLarge(cap(c.out))
		c.out = nil
	}
	return true
}

// releaseAbove is the buffer size from which dropping it hands memory back
// to the OS at once rather than when the runtime's scavenger gets to it
// (a 512 MB value otherwise leaves the process gigabytes larger for
// minutes).
const releaseAbove = 64 << 20

var releasing atomic.Bool

// releasedLarge is called when a connection drops a buffer of n bytes.
func releasedLarge(n int) {
	if n < releaseAbove || !releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer releasing.Store(false)
		// Two collections: buffers parked in sync.Pools (gnet's output
		// buffers) survive the first one as the pools' victims.
		runtime.GC()
		debug.FreeOSMemory()
	}()
}

// flush waits until everything the batch so far wrote or read is durable,
// then writes the held replies. If durability cannot be had, the replies
// are dropped and the connection closed: nothing is acknowledged that is
// not durable.
func (c *conn) flush() bool {
	if c.batchLSN > 0 && c.holdsReplies() && c.batchLSN > c.srv.env.durableLSN() {
		if err := c.srv.commit.failed(); err != nil {
			c.srv.logf("client id=%d addr=%s: closing without replies, lsn %d is not durable: %v",
				c.ID, c.addr, c.batchLSN, err)
			c.out = c.out[:0]
			return false
		}
		c.srv.commit.hold(c) // commit.go: the committer releases the replies
		return true
	}
	if c.batchLSN > 0 {
		if err := c.srv.env.waitDurable(c.batchLSN); err != nil {
			c.srv.logf("client id=%d addr=%s: closing without replies, lsn %d is not durable: %v",
				c.ID, c.addr, c.batchLSN, err)
			c.out = c.out[:0]
			return false
		}
		c.batchLSN = 0
	}
	if len(c.out) == 0 {
		return true
	}
	var n int
	var err error
	if c.gc != nil {
		n, err = c.gc.Write(c.out)
	} else {
		c.wmu.Lock()
		n, err = c.nc.Write(c.out)
		c.wmu.Unlock()
	}
	c.srv.stats.netOut.Add(int64(n))
	c.srv.stats.writes.Add(1)
	c.out = c.out[:0]
	return err == nil
}

func (c *conn) protocolError(msg string) {
	c.WriteError("ERR Protocol error: " + msg)
	c.pendErrors++
	c.closeAfterReply = true
}

// protocolErrorText strips redcon's "Protocol error: " prefix.
func protocolErrorText(err error) string {
	const prefix = "Protocol error: "
	s := err.Error()
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}

// protoLimits are the limits a request header is checked against.
type protoLimits struct {
	maxBulk int64 // proto-max-bulk-len
	unauth  bool  // a password is set and the client has not given it
}

func (c *conn) limits() protoLimits {
	return protoLimits{
		maxBulk: c.srv.live.protoMaxBulkLen.Load(),
		unauth:  !c.Authed && c.srv.requirepass() != "",
	}
}

// checkArgs applies the header limits to a request that arrived whole.
func (c *conn) checkArgs(args [][]byte) string {
	if len(args) > maxMultibulkLen {
		return "invalid multibulk length"
	}
	lim := c.limits()
	if lim.unauth && len(args) > unauthMaxArgs {
		return "unauthenticated multibulk length"
	}
	for _, a := range args {
		if int64(len(a)) > lim.maxBulk {
			return "invalid bulk length"
		}
		if lim.unauth && len(a) > unauthMaxBulk {
			return "unauthenticated bulk length"
		}
	}
	return ""
}

// mbVerdict is what scanMultibulk concludes about the start of a buffer
// holding an incomplete or malformed multibulk request.
type mbVerdict struct {
	err      string // protocol error text (after "Protocol error: ")
	skip     int    // a "*0"/"*-1" header Redis ignores: skip this many bytes
	need     int    // bytes the pending request needs in total, when known
	complete bool   // every declared argument is present
}

// scanMultibulk walks the headers of the multibulk request at the start of
// b (b[0] == '*') the way Redis does, without copying, so that a request
// declaring too many or too large arguments is refused before the server
// waits for (and buffers) its bytes.
func scanMultibulk(b []byte, lim protoLimits) (v mbVerdict) {
	cr := bytes.IndexByte(b, '\r')
	if cr < 0 {
		if len(b) > maxInlineSize {
			v.err = "too big mbulk count string"
		}
		return v
	}
	if cr+1 >= len(b) {
		return v
	}
	count, ok := parseInt64(b[1:cr])
	if !ok || count > maxMultibulkLen {
		v.err = "invalid multibulk length"
		return v
	}
	if lim.unauth && count > unauthMaxArgs {
		v.err = "unauthenticated multibulk length"
		return v
	}
	pos := int64(cr + 2)
	if count <= 0 {
		v.skip = int(pos)
		return v
	}
	for j := int64(0); j < count; j++ {
		if pos >= int64(len(b)) {
			return v
		}
		if b[pos] != '$' {
			v.err = "expected '$', got '" + string(b[pos:pos+1]) + "'"
			return v
		}
		cr := bytes.IndexByte(b[pos:], '\r')
		if cr < 0 {
			if int64(len(b))-pos > maxInlineSize {
				v.err = "too big bulk count string"
			}
			return v
		}
		end := pos + int64(cr)
		if end+1 >= int64(len(b)) {
			return v
		}
		n, ok := parseInt64(b[pos+1 : end])
		if !ok || n < 0 || n > lim.maxBulk {
			v.err = "invalid bulk length"
			return v
		}
		if lim.unauth && n > unauthMaxBulk {
			v.err = "unauthenticated bulk length"
			return v
		}
		pos = end + 2 + n + 2
		if pos > int64(len(b)) {
			if pos <= maxQueryBuf {
				v.need = int(pos)
			}
			return v
		}
	}
	v.complete = true
	return v
}

// splitMultibulk splits the multibulk request at the start of b, which
// scanMultibulk found complete and well-formed, into its arguments
// (appended to args, aliasing b) and the bytes after it. The two bytes
// after each bulk are skipped unchecked, as Redis does.
func splitMultibulk(b []byte, args [][]byte) (_ [][]byte, rest []byte) {
	cr := bytes.IndexByte(b, '\r')
	count, _ := parseInt64(b[1:cr])
	pos := cr + 2
	for j := int64(0); j < count; j++ {
		cr := pos + bytes.IndexByte(b[pos:], '\r')
		n, _ := parseInt64(b[pos+1 : cr])
		start := cr + 2
		args = append(args, b[start:start+int(n):start+int(n)])
		pos = start + int(n) + 2
	}
	return args, b[pos:]
}

// splitArgs splits an inline request line into arguments the way Redis's
// sdssplitargs does: spaces separate, "double quotes" take \n \r \t \b \a
// \\ \" and \xHH escapes, 'single quotes' take \', and a closing quote must
// be followed by a space or the end. Arguments are appended to args and
// point into storage (grown to len(line) so it is never reallocated while
// splitting). ok is false on unbalanced quotes.
func splitArgs(line, storage []byte, args [][]byte) (_ [][]byte, _ []byte, ok bool) {
	if cap(storage) < len(line) {
		storage = make([]byte, 0, len(line))
	}
	buf := storage[:0]
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, storage, true
		}
		start := len(buf)
		inq, insq, done := false, false, false
		for !done {
			switch {
			case inq:
				if p >= len(line) {
					return args[:0], storage, false
				}
				ch := line[p]
				if ch == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]) {
					buf = append(buf, unhex(line[p+2])<<4|unhex(line[p+3]))
					p += 3
				} else if ch == '\\' && p+1 < len(line) {
					p++
					switch line[p] {
					case 'n':
						ch = '\n'
					case 'r':
						ch = '\r'
					case 't':
						ch = '\t'
					case 'b':
						ch = '\b'
					case 'a':
						ch = '\a'
					default:
						ch = line[p]
					}
					buf = append(buf, ch)
				} else if ch == '"' {
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return args[:0], storage, false
					}
					done = true
				} else {
					buf = append(buf, ch)
				}
			case insq:
				if p >= len(line) {
					return args[:0], storage, false
				}
				ch := line[p]
				if ch == '\\' && p+1 < len(line) && line[p+1] == '\'' {
					p++
					buf = append(buf, '\'')
				} else if ch == '\'' {
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return args[:0], storage, false
					}
					done = true
				} else {
					buf = append(buf, ch)
				}
			default:
				if p >= len(line) {
					done = true
					break
				}
				switch ch := line[p]; ch {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					buf = append(buf, ch)
				}
			}
			if p < len(line) {
				p++
			}
		}
		args = append(args, buf[start:len(buf):len(buf)])
	}
}

func isHex(ch byte) bool {
	return '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
}

func unhex(ch byte) byte {
	switch {
	case ch <= '9':
		return ch - '0'
	case ch >= 'a':
		return ch - 'a' + 10
	default:
		return ch - 'A' + 10
	}
}

// SplitArgs splits a line into arguments with Redis's inline-request and
// redis.conf quoting rules.
func SplitArgs(line string) ([]string, error) {
	args, _, ok := splitArgs([]byte(line), nil, nil)
	if !ok {
		return nil, errors.New("unbalanced quotes")
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out, nil
}

// flushStats adds the batch's commandstats to the shared counters.
func (c *conn) flushStats() {
	var calls, errs int64
	for i := range c.pend {
		d := &c.pend[i]
		if d.calls > 0 {
			d.st.calls.Add(d.calls)
			d.st.nanos.Add(d.nanos)
		}
		if d.failed > 0 {
			d.st.failed.Add(d.failed)
		}
		if d.rejected > 0 {
			d.st.rejected.Add(d.rejected)
		}
		calls += d.calls
		errs += d.failed + d.rejected
	}
	c.pend = c.pend[:0]
	errs += c.pendErrors
	c.pendErrors = 0
	if calls > 0 {
		c.srv.stats.commands.Add(calls)
	}
	if errs > 0 {
		c.srv.stats.errorReplies.Add(errs)
	}
}

// count records one command in the batch's commandstats.
func (c *conn) count(cmd *Command, d time.Duration, failed, rejected bool) {
	st := cmd.stats
	if st == nil {
		if failed || rejected {
			c.pendErrors++
		}
		return
	}
	n := len(c.pend)
	if n == 0 || c.pend[n-1].st != st {
		c.pend = append(c.pend, statDelta{st: st})
		n++
	}
	p := &c.pend[n-1]
	switch {
	case rejected:
		p.rejected++
	default:
		p.calls++
		p.nanos += int64(d)
		if failed {
			p.failed++
		}
	}
}

// publish refreshes what CLIENT LIST shows to other connections.
func (c *conn) publish() {
	multi := -1
	if c.InMulti {
		multi = len(c.MultiCmds)
	}
	cmd := "NULL"
	if c.lastCmd != nil {
		cmd = c.lastCmd.Name
	}
	c.infoMu.Lock()
	c.info = clientInfo{
		name:       c.Name,
		db:         c.DB,
		multi:      multi,
		cmd:        cmd,
		lastActive: c.tick,
		qbuf:       len(c.rbuf),
		qbufFree:   cap(c.rbuf) - len(c.rbuf),
		omem:       cap(c.out),
	}
	c.infoMu.Unlock()
}

// snapshot returns the published state; self is the connection asking,
// whose live state is current.
func (c *conn) snapshot(self *conn) clientInfo {
	if c == self {
		multi := -1
		if c.InMulti {
			multi = len(c.MultiCmds)
		}
		cmd := "NULL"
		if c.lastCmd != nil {
			cmd = c.lastCmd.Name
		}
		return clientInfo{
			name: c.Name, db: c.DB, multi: multi, cmd: cmd,
			lastActive: time.Now(),
			qbuf:       len(c.rbuf), qbufFree: cap(c.rbuf) - len(c.rbuf), omem: cap(c.out),
		}
	}
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	return c.info
}

func sortConnsByID(cs []*conn) {
	slices.SortFunc(cs, func(a, b *conn) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

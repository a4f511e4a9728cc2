package server

import (
	"slices"
	"strings"
	"sync"
)

// Error statistics (INFO errorstats, total_error_replies, commandstats'
// failed_calls; semantics: redis.io INFO, "errorstats"), counted as Redis
// 7.0 counts them:
//
//   - Every error reply a client is sent counts once in
//     total_error_replies and under its prefix, the word before the first
//     space within the first 31 bytes of the message ("ERR", "WRONGTYPE",
//     "NOSCRIPT"...; "ERR" when there is no space there). The count
//     happens where the reply is written (proto.Writer.OnError), so
//     rejections, errors inside an EXEC reply and protocol errors count
//     alike.
//   - A command fails (failed_calls) when an error reply was counted
//     between its start and its end, not counting what commands it ran
//     itself (EXEC's queued commands, a script's redis.call) reported
//     before they ended: each nested call takes the "errors so far" mark
//     over, as Redis's incrCommandStatsOnError does. A rejected command
//     (arity, ACL, MULTI state...) counts in rejected_calls instead.
//   - A script passing on the error of a command it called (redis.call
//     raising, or returning the error table redis.pcall gave) sends it
//     uncounted: the called command's error was counted already. The
//     script still counts as failed. Errors redis.call finds before running
//     the command (unknown command, wrong arity, not allowed, ACL, write in
//     a read-only script, a full disk) count once where they arise, as a
//     rejected call of that command.
//
// At most maxErrorPrefixes distinct prefixes are kept (Redis 7.2's bound:
// a script can make up any number of them); past that, new prefixes count
// only in total_error_replies.

// maxErrorPrefixes bounds the errorstats table.
const maxErrorPrefixes = 128

// errorStats is the errorstats table. Errors are rare: a mutex is cheaper
// than anything per connection.
type errorStats struct {
	mu     sync.Mutex
	counts map[string]int64
}

// add counts one error reply with message msg (without the leading '-').
func (e *errorStats) add(msg string) {
	p := errorPrefix(msg)
	e.mu.Lock()
	if e.counts == nil {
		e.counts = make(map[string]int64)
	}
	if _, ok := e.counts[p]; ok || len(e.counts) < maxErrorPrefixes {
		e.counts[p]++
	}
	e.mu.Unlock()
}

// errorStatLine is one errorstats line.
type errorStatLine struct {
	prefix string
	count  int64
}

// snapshot returns the table sorted by prefix (Redis walks a radix tree:
// byte order).
func (e *errorStats) snapshot() []errorStatLine {
	e.mu.Lock()
	out := make([]errorStatLine, 0, len(e.counts))
	for p, n := range e.counts {
		out = append(out, errorStatLine{p, n})
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(a, b errorStatLine) int { return strings.Compare(a.prefix, b.prefix) })
	return out
}

func (e *errorStats) reset() {
	e.mu.Lock()
	e.counts = nil
	e.mu.Unlock()
}

// errorPrefix is the errorstats name of an error reply: Redis looks for
// a space in the first 32 bytes of "-msg".
func errorPrefix(msg string) string {
	if i := strings.IndexByte(msg[:min(len(msg), 31)], ' '); i >= 0 {
		return msg[:i]
	}
	return "ERR"
}

// noteError is the connection's proto.Writer.OnError: it counts an error
// reply (counted) or notes that the command running failed with an error
// counted elsewhere.
func (c *conn) noteError(msg string, counted bool) {
	if !counted {
		c.failedUncounted = true
		return
	}
	c.errCount++
	c.srv.stats.errorReplies.Add(1)
	c.srv.errors.add(msg)
}

// countScriptReject counts an error redis.call found before running cmd
// (nil: unknown command): an error reply and a rejected call, as Redis's
// scriptCall does. msg is the error with its code.
func (c *Client) countScriptReject(cmd *Command, msg string) {
	cn := c.conn
	if cn == nil {
		return
	}
	cn.noteError(msg, true)
	cn.errPrev = cn.errCount
	if cmd != nil {
		cn.count(cmd, 0, false, true)
	}
}

package server

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/persimmon-db/persimmon/proto"
)

// Pub/sub (semantics: redis.io SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE,
// PUNSUBSCRIBE, PUBLISH, PUBSUB; RESP2). Messages are not data: they are
// neither logged nor durable, and a subscriber that is not connected when
// a message is published never sees it, as in Redis.
//
// A connection with at least one subscription is in the subscribed state:
// only (P)SUBSCRIBE, (P)UNSUBSCRIBE, PING (answered ["pong", arg]), QUIT and
// RESET run there (execute refuses the rest). Closing the connection or
// RESET drops its subscriptions.
//
// Delivery writes the message to the subscriber's socket at once:
//
//   - on the event loop, PUBLISH runs on the loop's goroutine, which owns
//     every connection, so it writes with the loop's Write (what the
//     socket does not take waits in the connection's pending output). A
//     subscriber past the pubsub class of
//     client-output-buffer-limit is closed, as in Redis (obuf.go);
//   - with a goroutine per connection, the publisher writes under the
//     subscriber's write lock (flush takes it too, so replies and messages
//     never interleave). A subscriber that takes no bytes for
//     pubsubWriteTimeout is closed, so a stuck client cannot stall the
//     publishers.
//
// Sharded channels (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH; Redis 7.0) are a
// third, separate namespace: with no cluster every channel is in the one
// shard, patterns never match them, and their confirmations count only
// the connection's shard channels ("ssubscribe", name, count) where
// (P)SUBSCRIBE's count channels plus patterns. A shard subscription puts
// the connection in the subscribed state like the others; messages are
// ["smessage", channel, message].

const (
	pubsubWriteTimeout = 10 * time.Second
)

// pubsubHub holds every subscription; mu guards it and the connections'
// subscription sets.
type pubsubHub struct {
	mu       sync.Mutex
	channels map[string]map[*conn]struct{}
	patterns map[string]map[*conn]struct{}
	shard    map[string]map[*conn]struct{}
}

// pubsubState is a connection's subscriptions (guarded by the hub's mu;
// n is also read without it by its own connection).
type pubsubState struct {
	channels map[string]struct{}
	patterns map[string]struct{}
	shard    map[string]struct{}
}

func newPubsubHub() *pubsubHub {
	return &pubsubHub{channels: map[string]map[*conn]struct{}{}, patterns: map[string]map[*conn]struct{}{},
		shard: map[string]map[*conn]struct{}{}}
}

// subscriptions is the connection's number of subscriptions of every kind
// (non-zero: the subscribed state, Redis's CLIENT_PUBSUB flag).
func (c *conn) subscriptions() int { return int(c.subN.Load() + c.psubN.Load() + c.ssubN.Load()) }

// subKind is one of the three namespaces.
type subKind uint8

const (
	subChannel subKind = iota
	subPattern
	subShard
)

// kindOf is the namespace of pattern (true) or channel subscriptions.
func kindOf(pattern bool) subKind {
	if pattern {
		return subPattern
	}
	return subChannel
}

// subCounter is the count of c's subscriptions of kind k.
func (c *conn) subCounter(k subKind) *atomic.Int32 {
	switch k {
	case subPattern:
		return &c.psubN
	case subShard:
		return &c.ssubN
	}
	return &c.subN
}

// subReplyCount is the count a confirmation of kind k carries: channels
// plus patterns, or shard channels alone.
func (c *conn) subReplyCount(k subKind) int {
	if k == subShard {
		return int(c.ssubN.Load())
	}
	return int(c.subN.Load() + c.psubN.Load())
}

// maps returns the hub's and c's tables of kind k and the names of its
// confirmations (h.mu held).
func (c *conn) maps(h *pubsubHub, k subKind) (all map[string]map[*conn]struct{}, mine *map[string]struct{}, sub, unsub string) {
	switch k {
	case subPattern:
		return h.patterns, &c.ps.patterns, "psubscribe", "punsubscribe"
	case subShard:
		return h.shard, &c.ps.shard, "ssubscribe", "sunsubscribe"
	}
	return h.channels, &c.ps.channels, "subscribe", "unsubscribe"
}

func pubsubCommands() []Command {
	const subFlags = FlagPubSub | FlagNoScript | FlagLoading | FlagStale
	acl := []string{"@pubsub"}
	return []Command{
		{Name: "subscribe", Arity: -2, Flags: subFlags, Group: "pubsub", Since: "2.0.0", ACL: acl,
			Summary: "Listens for messages published to channels.", Run: subscribeCommand, NoLock: true},
		{Name: "unsubscribe", Arity: -1, Flags: subFlags, Group: "pubsub", Since: "2.0.0", ACL: acl,
			Summary: "Stops listening to messages posted to channels.", Run: unsubscribeCommand, NoLock: true},
		{Name: "psubscribe", Arity: -2, Flags: subFlags, Group: "pubsub", Since: "2.0.0", ACL: acl,
			Summary: "Listens for messages published to channels that match one or more patterns.", Run: psubscribeCommand, NoLock: true},
		{Name: "punsubscribe", Arity: -1, Flags: subFlags, Group: "pubsub", Since: "2.0.0", ACL: acl,
			Summary: "Stops listening to messages published to channels that match one or more patterns.", Run: punsubscribeCommand, NoLock: true},
		{Name: "publish", Arity: 3, Flags: FlagPubSub | FlagLoading | FlagStale | FlagFast, Group: "pubsub", Since: "2.0.0", ACL: acl,
			Summary: "Posts a message to a channel.", Run: publishCommand, NoLock: true},
		{Name: "ssubscribe", Arity: -2, Flags: subFlags, Group: "pubsub", Since: "7.0.0", ACL: acl,
			Summary: "Listens for messages published to shard channels.", Run: ssubscribeCommand, NoLock: true,
			FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(KeyNotKey, 1, -1, 1)}},
		{Name: "sunsubscribe", Arity: -1, Flags: subFlags, Group: "pubsub", Since: "7.0.0", ACL: acl,
			Summary: "Stops listening to messages posted to shard channels.", Run: sunsubscribeCommand, NoLock: true,
			FirstKey: 1, LastKey: -1, Step: 1, KeySpecs: []KeySpec{KeyRange(KeyNotKey, 1, -1, 1)}},
		{Name: "spublish", Arity: 3, Flags: FlagPubSub | FlagLoading | FlagStale | FlagFast, Group: "pubsub", Since: "7.0.0", ACL: acl,
			Summary: "Post a message to a shard channel", Run: spublishCommand, NoLock: true,
			FirstKey: 1, LastKey: 1, Step: 1, KeySpecs: []KeySpec{KeyRange(KeyNotKey, 1, 0, 1)}},
		{Name: "pubsub", Arity: -2, Group: "pubsub", Since: "2.8.0",
			Summary: "A container for Pub/Sub commands.", Subcommands: []Command{
				{Name: "pubsub|channels", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Group: "pubsub", Since: "2.8.0", ACL: acl,
					Summary: "Returns the active channels.", Run: pubsubChannelsCommand, NoLock: true},
				{Name: "pubsub|numsub", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Group: "pubsub", Since: "2.8.0", ACL: acl,
					Summary: "Returns a count of subscribers to channels.", Run: pubsubNumsubCommand, NoLock: true},
				{Name: "pubsub|numpat", Arity: 2, Flags: FlagPubSub | FlagLoading | FlagStale, Group: "pubsub", Since: "2.8.0", ACL: acl,
					Summary: "Returns a count of unique pattern subscriptions.", Run: pubsubNumpatCommand, NoLock: true},
				{Name: "pubsub|shardchannels", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Group: "pubsub", Since: "7.0.0", ACL: acl,
					Summary: "Returns the active shard channels.", Run: pubsubShardChannelsCommand, NoLock: true},
				{Name: "pubsub|shardnumsub", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, Group: "pubsub", Since: "7.0.0", ACL: acl,
					Summary: "Returns the count of subscribers of shard channels.", Run: pubsubShardNumsubCommand, NoLock: true},
				{Name: "pubsub|help", Arity: 2, Flags: FlagLoading | FlagStale, Group: "pubsub", Since: "6.2.0",
					Summary: "Returns helpful text about the different subcommands.", Run: pubsubHelpCommand, NoLock: true},
			}},
	}
}

// writeSubReply appends one (un)subscribe confirmation: [kind, name,
// count], a push message in RESP3.
func writeSubReply(w *proto.Writer, kind string, name []byte, null bool, count int) {
	w.WritePush(3)
	w.WriteBulkString(kind)
	if null {
		w.WriteNull()
	} else {
		w.WriteBulk(name)
	}
	w.WriteInt(int64(count))
}

func subscribeCommand(c *Client, args [][]byte)  { c.conn.subscribe(args[1:], subChannel) }
func psubscribeCommand(c *Client, args [][]byte) { c.conn.subscribe(args[1:], subPattern) }
func unsubscribeCommand(c *Client, args [][]byte) {
	c.conn.unsubscribe(args[1:], subChannel)
}
func punsubscribeCommand(c *Client, args [][]byte) { c.conn.unsubscribe(args[1:], subPattern) }
func sunsubscribeCommand(c *Client, args [][]byte) { c.conn.unsubscribe(args[1:], subShard) }

// ssubscribeCommand: SSUBSCRIBE shardchannel [...]. Unlike SUBSCRIBE,
// Redis 7.0 refuses it inside a transaction (its DENY BLOCKING check has
// no MULTI exception).
func ssubscribeCommand(c *Client, args [][]byte) {
	if c.conn.inExec {
		c.WriteError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	c.conn.subscribe(args[1:], subShard)
}

// subscribe adds channels (patterns, shard channels) and confirms each.
func (c *conn) subscribe(names [][]byte, k subKind) {
	defer c.pushPast(len(c.Out))
	h := c.srv.pubsub
	h.mu.Lock()
	all, mine, kind, _ := c.maps(h, k)
	for _, n := range names {
		name := string(n)
		if *mine == nil {
			*mine = map[string]struct{}{}
		}
		if _, ok := (*mine)[name]; !ok {
			(*mine)[name] = struct{}{}
			subs := all[name]
			if subs == nil {
				subs = map[*conn]struct{}{}
				all[name] = subs
			}
			subs[c] = struct{}{}
			c.subCounter(k).Add(1)
		}
		writeSubReply(&c.Writer, kind, n, false, c.subReplyCount(k))
	}
	h.mu.Unlock()
}

// unsubscribe removes the named channels (or patterns), or all of them,
// and confirms each; with none to remove it confirms a null name.
func (c *conn) unsubscribe(names [][]byte, k subKind) {
	defer c.pushPast(len(c.Out))
	h := c.srv.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	_, minep, _, kind := c.maps(h, k)
	mine := *minep
	if len(names) == 0 {
		for name := range mine {
			names = append(names, []byte(name))
		}
		slices.SortFunc(names, bytes.Compare)
		if len(names) == 0 {
			writeSubReply(&c.Writer, kind, nil, true, c.subReplyCount(k))
			return
		}
	}
	for _, n := range names {
		c.dropLocked(h, string(n), k)
		writeSubReply(&c.Writer, kind, n, false, c.subReplyCount(k))
	}
}

// pushPast sends the confirmations written since mark as messages when
// CLIENT REPLY OFF or SKIP would drop them: in Redis they are pushes, which
// those settings do not silence.
func (c *conn) pushPast(mark int) {
	if !(c.replyOff || c.replySkip) || len(c.Out) <= mark {
		return
	}
	b := append([]byte(nil), c.Out[mark:]...)
	c.Out = c.Out[:mark]
	c.push(b)
}

// dropLocked removes one subscription of c, if it has it (h.mu held).
func (c *conn) dropLocked(h *pubsubHub, name string, k subKind) {
	all, minep, _, _ := c.maps(h, k)
	mine := *minep
	if _, ok := mine[name]; !ok {
		return
	}
	delete(mine, name)
	if subs := all[name]; subs != nil {
		delete(subs, c)
		if len(subs) == 0 {
			delete(all, name)
		}
	}
	c.subCounter(k).Add(-1)
}

// unsubscribeAll drops every subscription (RESET, connection closed).
func (c *conn) unsubscribeAll() {
	if c.subscriptions() == 0 {
		return
	}
	h := c.srv.pubsub
	h.mu.Lock()
	for name := range c.ps.channels {
		c.dropLocked(h, name, subChannel)
	}
	for name := range c.ps.patterns {
		c.dropLocked(h, name, subPattern)
	}
	for name := range c.ps.shard {
		c.dropLocked(h, name, subShard)
	}
	h.mu.Unlock()
}

// publishCommand: PUBLISH channel message: the number of subscriptions
// (channel and matching patterns) the message went to.
func publishCommand(c *Client, args [][]byte) {
	c.WriteInt(int64(c.Srv.publish(args[1], args[2])))
}

// publish delivers a message to the channel's subscribers, then to the
// subscribers of every pattern it matches (a connection subscribed both
// ways gets it once per subscription, as in Redis).
func (s *Server) publish(channel, msg []byte) int { return s.publishFrom(channel, msg, false) }

// publishFrom is publish; offLoop says the caller is not on the event loop,
// so a loop subscriber's write is queued on the loop (notify.go).
func (s *Server) publishFrom(channel, msg []byte, offLoop bool) int {
	h := s.pubsub
	type delivery struct {
		c       *conn
		pattern string // "" for a channel subscription
	}
	var out []delivery
	h.mu.Lock()
	for sub := range h.channels[string(channel)] {
		out = append(out, delivery{c: sub})
	}
	for p, subs := range h.patterns {
		if !GlobMatch([]byte(p), channel) {
			continue
		}
		for sub := range subs {
			out = append(out, delivery{c: sub, pattern: p})
		}
	}
	h.mu.Unlock()
	// The message is encoded once per pattern and protocol version.
	var w [2]proto.Writer // RESP2, RESP3
	var wpat [2]string
	for _, d := range out {
		v, p := 0, proto.RESP2
		if d.c.resp3.Load() {
			v, p = 1, proto.RESP3
		}
		m := &w[v]
		if m.Out == nil || wpat[v] != d.pattern {
			m.Proto, m.Out, wpat[v] = p, m.Out[:0], d.pattern
			if d.pattern == "" {
				m.WritePush(3)
				m.WriteBulkString("message")
			} else {
				m.WritePush(4)
				m.WriteBulkString("pmessage")
				m.WriteBulkString(d.pattern)
			}
			m.WriteBulk(channel)
			m.WriteBulk(msg)
		}
		if offLoop && d.c.pushOnLoop(m.Out) {
			continue
		}
		d.c.push(m.Out)
	}
	return len(out)
}

// push writes a pub/sub message to c's socket now (see the top of the
// file for who may call it and how a slow subscriber is closed).
func (c *conn) push(b []byte) {
	if c.killed.Load() {
		return
	}
	if c.held { // after the held replies, in order (commit.go)
		c.Out = append(c.Out, b...)
		return
	}
	if c.gc != nil {
		n, _ := c.gc.Write(b)
		c.srv.stats.netOut.Add(int64(n))
		if p := c.gc.Buffered(); p > 0 && c.overOutputLimit(p) { // obuf.go
			c.kill()
		}
		return
	}
	c.wmu.Lock()
	c.nc.SetWriteDeadline(time.Now().Add(pubsubWriteTimeout))
	n, err := c.nc.Write(b)
	c.nc.SetWriteDeadline(time.Time{})
	c.wmu.Unlock()
	c.srv.stats.netOut.Add(int64(n))
	if err != nil {
		c.kill()
	}
}

// pubsubChannelsCommand: PUBSUB CHANNELS [pattern]: the channels with at
// least one subscriber, matching pattern if given.
func pubsubChannelsCommand(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try PUBSUB HELP.") // as typed
		return
	}
	var names []string
	h := c.Srv.pubsub
	h.mu.Lock()
	for name := range h.channels {
		if len(args) == 2 || GlobMatch(args[2], []byte(name)) {
			names = append(names, name)
		}
	}
	h.mu.Unlock()
	slices.Sort(names)
	c.WriteArray(len(names))
	for _, n := range names {
		c.WriteBulkString(n)
	}
}

// pubsubNumsubCommand: PUBSUB NUMSUB [channel ...]: channel, count pairs.
func pubsubNumsubCommand(c *Client, args [][]byte) {
	c.WriteArray(2 * (len(args) - 2))
	h := c.Srv.pubsub
	for _, ch := range args[2:] {
		h.mu.Lock()
		n := len(h.channels[string(ch)])
		h.mu.Unlock()
		c.WriteBulk(ch)
		c.WriteInt(int64(n))
	}
}

// pubsubNumpatCommand: PUBSUB NUMPAT: the number of patterns subscribed to.
func pubsubNumpatCommand(c *Client, _ [][]byte) {
	h := c.Srv.pubsub
	h.mu.Lock()
	n := len(h.patterns)
	h.mu.Unlock()
	c.WriteInt(int64(n))
}

func pubsubHelpCommand(c *Client, _ [][]byte) {
	writeHelp(c, "PUBSUB", []string{
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	})
}

// pubsubCounts is INFO's pubsub_channels and pubsub_patterns.
func (s *Server) pubsubCounts() (channels, patterns int) {
	h := s.pubsub
	h.mu.Lock()
	channels, patterns = len(h.channels), len(h.patterns)
	h.mu.Unlock()
	return
}

// subscribedContextError is Redis's refusal of a command in the subscribed
// state (RESP2).
func subscribedContextError(name string) string {
	return "ERR Can't execute '" + name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// allowedSubscribed lists the commands a subscribed connection may run.
func allowedSubscribed(name string) bool {
	switch name {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "ping", "quit", "reset":
		return true
	}
	return false
}

// pubsubShardChannelsCommand: PUBSUB SHARDCHANNELS [pattern]: the shard
// channels with at least one subscriber, matching pattern if given.
func pubsubShardChannelsCommand(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.WriteError("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try PUBSUB HELP.") // as typed
		return
	}
	var names []string
	h := c.Srv.pubsub
	h.mu.Lock()
	for name := range h.shard {
		if len(args) == 2 || GlobMatch(args[2], []byte(name)) {
			names = append(names, name)
		}
	}
	h.mu.Unlock()
	slices.Sort(names)
	c.WriteArray(len(names))
	for _, n := range names {
		c.WriteBulkString(n)
	}
}

// pubsubShardNumsubCommand: PUBSUB SHARDNUMSUB [shardchannel ...]:
// channel, count pairs.
func pubsubShardNumsubCommand(c *Client, args [][]byte) {
	c.WriteArray(2 * (len(args) - 2))
	h := c.Srv.pubsub
	for _, ch := range args[2:] {
		h.mu.Lock()
		n := len(h.shard[string(ch)])
		h.mu.Unlock()
		c.WriteBulk(ch)
		c.WriteInt(int64(n))
	}
}

// pubsubShardCount is INFO's pubsubshard_channels.
func (s *Server) pubsubShardCount() int {
	h := s.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.shard)
}

// spublishCommand: SPUBLISH shardchannel message: the number of shard
// subscribers the message went to (patterns never match shard channels).
func spublishCommand(c *Client, args [][]byte) {
	h := c.Srv.pubsub
	h.mu.Lock()
	out := make([]*conn, 0, len(h.shard[string(args[1])]))
	for sub := range h.shard[string(args[1])] {
		out = append(out, sub)
	}
	h.mu.Unlock()
	var w [2]proto.Writer // RESP2, RESP3
	for _, sub := range out {
		v, p := 0, proto.RESP2
		if sub.resp3.Load() {
			v, p = 1, proto.RESP3
		}
		m := &w[v]
		if m.Out == nil {
			m.Proto = p
			m.WritePush(3)
			m.WriteBulkString("smessage")
			m.WriteBulk(args[1])
			m.WriteBulk(args[2])
		}
		sub.push(m.Out)
	}
	c.WriteInt(int64(len(out)))
}

package server

import (
	"sync/atomic"

	"github.com/persimmon-db/persimmon/acl"
	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/proto"
)

// Command flags, as COMMAND reports them (semantics: redis.io COMMAND INFO).
// FlagNoMulti commands are refused inside MULTI ("ERR Command not allowed
// inside a transaction"); the ones that run at once there are Immediate.
const (
	FlagWrite          = 1 << iota // may modify the keyspace: "write"
	FlagReadonly                   // reads the keyspace only: "readonly"
	FlagDenyOOM                    // may grow memory: "denyoom"
	FlagAdmin                      // "admin"
	FlagNoScript                   // "noscript"
	FlagLoading                    // allowed while loading: "loading"
	FlagStale                      // "stale"
	FlagFast                       // O(1) or O(log n): "fast"
	FlagNoAuth                     // allowed before AUTH: "no_auth"
	FlagNoMulti                    // refused inside MULTI: "no_multi"
	FlagAllowBusy                  // "allow_busy"
	FlagBlocking                   // may block the client (BLPOP...): "blocking"
	FlagMovableKeys                // keys are found by parsing the arguments: "movablekeys"
	FlagNoAsyncLoading             // refused while loading asynchronously: "no_async_loading"
	FlagPubSub                     // pub/sub related: "pubsub"
	FlagSkipMonitor                // not shown to MONITOR (Persimmon has none): "skip_monitor"
	FlagSkipSlowlog                // not logged in the slow log (EXEC: its commands are): "skip_slowlog"
	// FlagNoMandatoryKeys: the command may take no keys at all (EVAL with
	// numkeys 0), so COMMAND GETKEYS answers an empty array where it
	// finds none: "no_mandatory_keys".
	FlagNoMandatoryKeys
	// FlagAsking: a cluster would serve the command for a slot it is
	// importing (RESTORE-ASKING); nothing else changes: "asking".
	FlagAsking
)

// Key specification flags, as COMMAND INFO reports them in each key spec's
// "flags" (semantics: redis.io "Command key specifications"). The first
// four say what happens to the key's value (read only, read-write,
// overwrite, remove); the next four what the command does with the data.
const (
	KeyRO            = 1 << iota // "RO": reads the value
	KeyRW                        // "RW": reads and modifies the value
	KeyOW                        // "OW": overwrites the value, does not read it
	KeyRM                        // "RM": deletes the key
	KeyAccess                    // "access": returns, copies or uses user data
	KeyUpdate                    // "update": updates the value (or its TTL)
	KeyInsert                    // "insert": only adds data
	KeyDelete                    // "delete": explicitly deletes some content
	KeyNotKey                    // "not_key": the argument is not a key (ACL checks only)
	KeyIncomplete                // "incomplete": the spec may miss keys
	KeyVariableFlags             // "variable_flags": the flags depend on the arguments
)

// KeySpec is one Redis 7 key specification: where the search for keys
// begins (begin_search) and how keys are found from there (find_keys).
// COMMAND INFO reports a command's specs and COMMAND GETKEYS follows them.
type KeySpec struct {
	Notes string // "notes", if not empty
	Flags int    // Key* bits

	// Unknown: begin_search and find_keys are "unknown" (the keys cannot
	// be found from the arguments' positions, as SORT's BY/GET/STORE);
	// COMMAND GETKEYS then falls back to GetKeys.
	Unknown bool

	// begin_search: the argument Index, or (Keyword set) the argument after
	// the first Keyword found from StartFrom (negative: from the end, backwards).
	Index     int
	Keyword   string
	StartFrom int

	// find_keys: without KeyNum a range, keys from the beginning to LastKey
	// (relative to it; negative counts from the end of the arguments) every
	// KeyStep, with Limit for a negative LastKey (0: no limit); with KeyNum
	// the number of keys is the argument KeyNumIdx after the beginning and
	// the keys start FirstKey after it, every KeyStep.
	KeyNum    bool
	LastKey   int
	KeyStep   int
	Limit     int
	KeyNumIdx int
	FirstKey  int
}

// KeyRef is one key a command's arguments name: its argument position and
// the key spec flags that apply to it.
type KeyRef struct {
	Pos   int
	Flags int
}

// Handler runs one parsed command. args[0] is the command name as sent.
// It is called with the keyspace lock held (unless the command has
// NoLock) and appends exactly one reply to c. args alias the connection's
// read buffer: they are valid only until the handler returns.
type Handler func(c *Client, args [][]byte)

// Command is one entry of the command table: the single source for
// dispatch, arity checks, locking and the replies of COMMAND.
type Command struct {
	Name     string  // lower case
	Arity    int     // number of args including the name; negative: at least -Arity
	Flags    int     // Flag* bits
	FirstKey int     // position of the first key argument, 0 if none
	LastKey  int     // position of the last key; -1 = last argument
	Step     int     // step between keys
	Group    string  // redis.io group: "string", "generic", "connection", "server", "transactions"
	Since    string  // first Redis version with the command, e.g. "1.0.0"
	Summary  string  // one line, for COMMAND DOCS
	Run      Handler // the handler
	NoLock   bool    // run without taking the keyspace lock (connection/server commands)

	// KeySpecs are the command's key specifications, as Redis 7.0 declares
	// them (COMMAND INFO, COMMAND GETKEYS). A command with keys but no
	// specs gets one derived from FirstKey/LastKey/Step.
	KeySpecs []KeySpec
	// GetKeys is Redis's getkeys_proc: COMMAND GETKEYS falls back to it
	// when the key specs do not fit the arguments (a bad numkeys) or have
	// variable flags (SET). It returns no keys for arguments it rejects.
	GetKeys func(args [][]byte) []KeyRef
	// Tips are COMMAND INFO's command tips (e.g. "nondeterministic_output").
	Tips []string
	// ACL lists ACL categories beyond the ones derived from Flags and
	// Group (e.g. "@dangerous"), as COMMAND INFO reports them. A leading
	// "-" takes a derived one away (WAIT is in group generic but not in
	// @keyspace).
	ACL []string

	// CountsReads makes a write command's key lookups count in INFO's
	// keyspace_hits/misses, as read-only commands' do (SORT reads its key
	// and BY/GET keys with Redis's lookupKeyRead); the handler turns
	// counting off before it looks up what it writes.
	CountsReads bool

	// Immediate commands run at once inside MULTI instead of being queued
	// (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET).
	Immediate bool
	// Subcommands make this a container command (CLIENT, CONFIG, COMMAND):
	// args[1] selects one, whose Name is "container|sub" and whose Arity
	// counts the container name too. A container has no Run of its own.
	Subcommands []Command

	// Filled in by newCommandTable.
	subs  map[string]*Command // lower-case subcommand name → entry
	stats *cmdStats           // INFO commandstats counters
	// fixedKeys: every key the command reads or writes is at its
	// FirstKey/LastKey/Step positions in the selected database (dirty.go).
	fixedKeys bool
	// aclCmd is the entry in the ACL rules' table (newACL).
	aclCmd *acl.Command
}

// Client is the state of one connection, as handlers see it.
type Client struct {
	ID   int64
	DB   int    // selected database
	Name string // CLIENT SETNAME
	KS   *keyspace.Keyspace
	Srv  *Server
	// Writer holds the pending replies (Out), written after the batch is
	// durable, and the connection's protocol version (HELLO).
	proto.Writer

	Authed bool
	// user is the ACL user the connection runs as: the default user until
	// AUTH or HELLO AUTH names another (Authed says whether it proved it).
	// Atomic: CLIENT LIST and ACL DELUSER read it from other connections.
	user  atomic.Pointer[acl.User]
	Watch keyspace.Watcher
	// MULTI state
	InMulti  bool
	MultiErr bool // a queuing error occurred: EXEC aborts
	// MultiDenyOOM: a queued command is denyoom, so EXEC is (maxmemory.go)
	MultiDenyOOM bool
	// MultiWrite: a queued command is a write (or a script with flags
	// that may write), so EXEC is one (dispatch.go: NOREPLICAS, READONLY)
	MultiWrite bool
	// MultiDenyStale: a queued command lacks the stale flag, so EXEC is
	// refused on a replica whose master is down (dispatch.go: MASTERDOWN)
	MultiDenyStale bool
	MultiCmds      [][][]byte // queued commands (copied args)

	closeAfterReply bool // QUIT, protocol errors
	// obeyMaster: the client applies the master's stream on a replica,
	// which Redis exempts from proto-max-bulk-len (mustObeyClient).
	obeyMaster bool

	conn *conn // the connection serving this client
}

// Replies: Client embeds a proto.Writer, whose semantic calls (WriteBulk,
// WriteMap, WriteSet, WriteDouble, WriteBool, WriteVerbatim, WritePairs,
// WriteNull...) append one reply each to Out in the connection's protocol
// version. Handlers never write protocol bytes themselves.

// Redis error texts used in more than one place.
const (
	ErrSyntax        = "ERR syntax error"
	ErrNotInteger    = "ERR value is not an integer or out of range"
	ErrNotFloat      = "ERR value is not a valid float"
	ErrOverflow      = "ERR increment or decrement would overflow"
	ErrNoSuchKey     = "ERR no such key"
	ErrInvalidExpire = "ERR invalid expire time in '%s' command"
	ErrDBIndex       = "ERR DB index is out of range"
	ErrNoAuth        = "NOAUTH Authentication required."
)

// WrongArgs returns Redis's arity error for the command name.
func WrongArgs(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// User is the ACL user the client runs as.
func (c *Client) User() *acl.User { return c.user.Load() }

// setUser makes the client run as u from its next command.
func (c *Client) setUser(u *acl.User) { c.user.Store(u) }

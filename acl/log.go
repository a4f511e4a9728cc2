package acl

import (
	"sync"
	"time"
)

// Context is where a denied command ran, as ACL LOG prints it.
type Context int

const (
	ContextToplevel Context = 0
	ContextLua      Context = 1
	ContextMulti    Context = 2
	ContextModule   Context = 3
)

// String is the context as ACL LOG prints it.
func (c Context) String() string {
	switch c {
	case ContextToplevel:
		return "toplevel"
	case ContextMulti:
		return "multi"
	case ContextLua:
		return "lua"
	case ContextModule:
		return "module"
	}
	return "unknown"
}

// DefaultLogMaxLen is acllog-max-len's default.
const DefaultLogMaxLen = 128

// logGroupWindow: a denial within this time of a like entry bumps its count
// instead of adding an entry (Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA).
const logGroupWindow = 60 * time.Second

// logScan is how many of the newest entries a new denial is compared with.
const logScan = 10

// LogEntry is one ACL LOG entry.
type LogEntry struct {
	Count    uint64
	Reason   Reason
	Context  Context
	Object   string // the command's full name, the key, the channel, or AUTH's argv[0]
	Username string
	// Updated is when the entry was last added to (Redis's ctime);
	// ACL LOG prints its age-seconds from it.
	Updated    time.Time
	ClientInfo string // CLIENT LIST line of the (last) client, without "\n"
}

// Log is the ACL LOG: newest entry first, at most MaxLen entries.
type Log struct {
	mu      sync.Mutex
	entries []*LogEntry
	maxLen  int
}

// NewLog returns an empty log holding at most maxLen entries.
func NewLog(maxLen int) *Log { return &Log{maxLen: maxLen} }

// SetMaxLen sets acllog-max-len; a shorter log drops its oldest entries at
// the next Add, as in Redis.
func (l *Log) SetMaxLen(n int) {
	l.mu.Lock()
	l.maxLen = n
	l.mu.Unlock()
}

// MaxLen is acllog-max-len.
func (l *Log) MaxLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.maxLen
}

func (a *LogEntry) like(b *LogEntry) bool {
	d := a.Updated.Sub(b.Updated)
	if d < 0 {
		d = -d
	}
	return a.Reason == b.Reason && a.Context == b.Context && d <= logGroupWindow &&
		a.Object == b.Object && a.Username == b.Username
}

// Add records a denial (e.Count and e.Updated are set here, from now). A
// like entry (same reason, context, object and user, updated within 60
// seconds) among the 10 newest is moved to the front with its count
// bumped and the new client info, as Redis 7.0 merges them.
func (l *Log) Add(e LogEntry, now time.Time) {
	e.Count, e.Updated = 1, now
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.entries) && i < logScan; i++ {
		m := l.entries[i]
		if m.like(&e) {
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = m
			m.ClientInfo, m.Updated = e.ClientInfo, e.Updated
			m.Count++
			return
		}
	}
	l.entries = append(l.entries, nil)
	copy(l.entries[1:], l.entries)
	l.entries[0] = &e
	for len(l.entries) > l.maxLen {
		l.entries[len(l.entries)-1] = nil
		l.entries = l.entries[:len(l.entries)-1]
	}
}

// Entries returns copies of the count newest entries (ACL LOG [count]; a
// negative count is 0).
func (l *Log) Entries(count int) []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	count = max(0, min(count, len(l.entries)))
	out := make([]LogEntry, count)
	for i := range out {
		out[i] = *l.entries[i]
	}
	return out
}

// Reset empties the log (ACL LOG RESET).
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

// AgeSeconds is an entry's age-seconds at now: milliseconds precision, as
// Redis computes it (a double of elapsed ms / 1000).
func (e LogEntry) AgeSeconds(now time.Time) float64 {
	return float64(now.Sub(e.Updated).Milliseconds()) / 1000
}

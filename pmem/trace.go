//go:build pmemtrace && unix

package pmem

// The store/flush/fence recorder, compiled only into test builds with the
// pmemtrace build tag (trace_off.go holds the empty hooks of every other
// build, which the compiler inlines away).
//
// Stores into a mapping are plain memory writes, so the recorder cannot see
// them as they happen. Instead, at every event it can see — a Region being
// mapped or closed, a cache-line write-back (the chosen flushLines loop,
// wrapped below), a fence (Drain) and an msync (a write-back of its pages
// then a fence) — it compares every traced mapping
// with a shadow copy of what it held at the previous event and records the
// aligned 8-byte units that changed. A trace is therefore exact about what
// was stored between two events, and about which lines were written back
// and fenced, but it does not see the order of stores between two events
// nor a value that was stored and overwritten again between them. Keep the
// traced mappings small (a few MiB in all): each event costs a comparison
// of all of them.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
)

// TraceKind says what a TraceEvent is.
type TraceKind uint8

// The kinds of TraceEvent.
const (
	// TraceMap: Region was mapped; its contents then count as persistent.
	TraceMap TraceKind = iota + 1
	// TraceFlush: the cache lines [Lo, Hi) of Region were written back
	// (CLWB or its fallback), not yet fenced.
	TraceFlush
	// TraceFence: Drain returned; every flush before it has completed.
	TraceFence
	// TraceUnmap: Region was closed. Its file still exists.
	TraceUnmap
	// TraceRemove: the file of a closed Region was found deleted (noticed
	// at the first event after the deletion).
	TraceRemove
)

// TraceStore is one aligned 8-byte unit that changed between two events.
type TraceStore struct {
	Region int    // index into Trace.Regions
	Off    int64  // byte offset of the unit in the mapping, a multiple of 8
	Val    uint64 // the unit's new contents, as a little-endian load
}

// TraceEvent is one recorded event. Stores are the units that changed in
// any traced mapping since the previous event, observed as this event
// began (so they precede it).
type TraceEvent struct {
	Kind   TraceKind
	Region int   // the Region of a Map, Flush, Unmap or Remove; -1 for a fence
	Lo, Hi int64 // TraceFlush: the byte range written back, cache-line aligned
	Stores []TraceStore
}

// TraceRegion describes one traced mapping.
type TraceRegion struct {
	Path string
	Size int64  // bytes
	Init []byte // contents when it was mapped (taken as persistent)
}

// Trace records every Map, Flush, Drain and Close of Regions mapped while
// it is active. At most one trace is active at a time. Its methods are
// safe for concurrent use.
type Trace struct {
	mu      sync.Mutex
	regions []*traceRegion
	events  []TraceEvent
	pending []TraceStore
}

type traceRegion struct {
	TraceRegion
	r       *Region
	base    uintptr // address of the mapping
	shadow  []byte  // contents observed at the last event
	closed  bool
	removed bool
}

var activeTrace atomic.Pointer[Trace]

// StartTrace starts recording. Only Regions mapped from now on are traced.
// It panics if a trace is already active.
func StartTrace() *Trace {
	t := &Trace{}
	if !activeTrace.CompareAndSwap(nil, t) {
		panic(errors.New("pmem: a trace is already active"))
	}
	return t
}

// Stop ends recording; later events are not recorded. Stores made since
// the last event are not recorded either.
func (t *Trace) Stop() { activeTrace.CompareAndSwap(t, nil) }

// Len is the number of events recorded so far: an event recorded later
// gets index Len() or more.
func (t *Trace) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.events)
}

// Events returns the recorded events (shared, do not modify).
func (t *Trace) Events() []TraceEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.events
}

// Regions returns the traced mappings, indexed as TraceEvent.Region.
func (t *Trace) Regions() []TraceRegion {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]TraceRegion, len(t.regions))
	for i, r := range t.regions {
		out[i] = r.TraceRegion
	}
	return out
}

func init() {
	// Record every write-back at the one place it happens: a deleted
	// flushLines call is then a missing flush in the trace as well.
	if inner := flushLines; inner != nil {
		flushLines = func(b []byte) int {
			n := inner(b)
			traceFlush(b)
			return n
		}
	}
	// An msync that succeeded made its pages durable: a write-back of
	// their lines and a fence.
	innerMsync := msyncPages
	msyncPages = func(b []byte, flags int) error {
		err := innerMsync(b, flags)
		if err == nil {
			traceFlush(b)
			traceFence()
		}
		return err
	}
}

func traceMap(r *Region) {
	t := activeTrace.Load()
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observe()
	tr := &traceRegion{
		TraceRegion: TraceRegion{Path: r.path, Size: r.size, Init: bytes.Clone(r.data)},
		r:           r,
		base:        reflect.ValueOf(r.data).Pointer(),
		shadow:      bytes.Clone(r.data),
	}
	t.regions = append(t.regions, tr)
	t.add(TraceEvent{Kind: TraceMap, Region: len(t.regions) - 1})
}

func traceUnmap(r *Region) {
	t := activeTrace.Load()
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, tr := range t.regions {
		if tr.r == r && !tr.closed {
			t.observe()
			tr.closed = true
			t.add(TraceEvent{Kind: TraceUnmap, Region: i})
			return
		}
	}
}

func traceFlush(b []byte) {
	t := activeTrace.Load()
	if t == nil || len(b) == 0 {
		return
	}
	p := reflect.ValueOf(b).Pointer()
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, tr := range t.regions {
		if tr.closed || p < tr.base || p >= tr.base+uintptr(tr.Size) {
			continue
		}
		lo := int64(p-tr.base) &^ (CacheLineSize - 1)
		hi := min((int64(p-tr.base)+int64(len(b))+CacheLineSize-1)&^(CacheLineSize-1), tr.Size)
		t.observe()
		t.add(TraceEvent{Kind: TraceFlush, Region: i, Lo: lo, Hi: hi})
		return
	}
}

func traceFence() {
	t := activeTrace.Load()
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observe()
	t.add(TraceEvent{Kind: TraceFence, Region: -1})
}

// add appends ev with the stores observed for it.
func (t *Trace) add(ev TraceEvent) {
	ev.Stores = t.pending
	t.pending = nil
	t.events = append(t.events, ev)
}

// observe collects into t.pending the units of every open traced mapping
// that differ from its shadow, and notes closed regions whose file is gone.
// Call with t.mu held.
func (t *Trace) observe() {
	for i, tr := range t.regions {
		if tr.closed {
			if !tr.removed {
				if _, err := os.Stat(tr.Path); errors.Is(err, os.ErrNotExist) {
					tr.removed = true
					t.add(TraceEvent{Kind: TraceRemove, Region: i})
				}
			}
			continue
		}
		cur, old := tr.r.data, tr.shadow
		const page = 4096
		for p := 0; p < len(cur); p += page {
			end := min(p+page, len(cur))
			if bytes.Equal(cur[p:end], old[p:end]) {
				continue
			}
			for u := p; u+8 <= end; u += 8 {
				v := binary.LittleEndian.Uint64(cur[u:])
				if v != binary.LittleEndian.Uint64(old[u:]) {
					binary.LittleEndian.PutUint64(old[u:], v)
					t.pending = append(t.pending, TraceStore{Region: i, Off: int64(u), Val: v})
				}
			}
		}
	}
}

// tracing reports whether this build records syncs: a sync that bypasses
// Msync would escape the recorder, so SyncFd refuses (region.go).
const tracing = true

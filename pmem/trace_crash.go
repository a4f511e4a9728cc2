//go:build pmemtrace && unix

package pmem

import (
	"encoding/binary"
	"path/filepath"
	"slices"
)

// Crash images from a trace, in the style of PMDK's pmreorder.
//
// Replaying a trace event by event tracks, for every traced file, what is
// certainly on the media (persistent: contents at Map, and every cache line
// written back by a flush once a fence follows it, with the contents it
// had at the flush) and which aligned 8-byte units may hold something else
// if the power fails now: each unit stored since it was last made
// persistent may hold its persistent value or any value it was observed to
// hold since (a CPU may evict a dirty line at any time, and only an
// aligned 8-byte store is atomic). A CrashPoint lists those units; an
// image picks one value for each.
//
// Simplifications, all of them on the side of fewer images rather than
// impossible ones: values stored and overwritten between two events are not
// seen (see trace.go); after a fence persists a line, of the values its
// units held between the flush and the fence only the current one is kept
// as a candidate.

// CrashFile is a file that exists at a crash point.
type CrashFile struct {
	Region int    // index into Trace.Regions
	Name   string // base name of the file
	Size   int64  // bytes
	// Persisted is what the media certainly holds (shared: do not modify).
	Persisted []byte
}

// DirtyUnit is an aligned 8-byte unit whose contents at a crash point are
// not determined.
type DirtyUnit struct {
	File int    // index into CrashPoint.Files
	Off  int64  // byte offset in the file, a multiple of 8
	Old  uint64 // the persistent contents
	// New are the other contents it may hold, in the order they were
	// observed; the last is the contents the process saw last (unless
	// that is Old again).
	New []uint64
}

// CrashPoint is what the media may hold if the power fails right after
// event Event of the trace.
type CrashPoint struct {
	Event int
	Files []CrashFile
	Dirty []DirtyUnit

	replay *replayState
}

// Image returns the file contents of the image in which each dirty unit
// Dirty[i] holds Old if pick(i) is 0 and New[pick(i)-1] otherwise. The
// buffers are reused by the next Image call on any CrashPoint of the same
// replay.
func (c *CrashPoint) Image(pick func(i int) int) [][]byte {
	out := make([][]byte, len(c.Files))
	for i, f := range c.Files {
		buf := c.scratch(i, f.Size)
		copy(buf, f.Persisted)
		out[i] = buf
	}
	for i, u := range c.Dirty {
		if j := pick(i); j > 0 {
			binary.LittleEndian.PutUint64(out[u.File][u.Off:], u.New[j-1])
		}
	}
	return out
}

func (c *CrashPoint) scratch(i int, size int64) []byte {
	s := c.replay.scratch
	for len(s) <= i {
		s = append(s, nil)
	}
	if int64(cap(s[i])) < size {
		s[i] = make([]byte, size)
	}
	c.replay.scratch = s
	return s[i][:size]
}

// replayState is shared by the CrashPoints of one Replay.
type replayState struct {
	scratch [][]byte
}

type replayFile struct {
	persisted []byte
	current   []byte
	pending   map[int64][]byte   // cache line offset → contents captured by a flush not yet fenced
	seen      map[int64][]uint64 // unit offset → non-persistent values it may hold
	exists    bool
}

// maxCandidates bounds how many non-persistent values a unit keeps.
const maxCandidates = 4

// Replay calls fn with the crash point after each event of the trace, in
// order, until fn returns false. The CrashPoint is valid only during the
// call.
func (t *Trace) Replay(fn func(c *CrashPoint) bool) {
	regions := t.Regions()
	events := t.Events()
	files := make([]*replayFile, len(regions))
	st := &replayState{}
	for k, ev := range events {
		for _, s := range ev.Stores {
			files[s.Region].store(s.Off, s.Val)
		}
		switch ev.Kind {
		case TraceMap:
			r := regions[ev.Region]
			files[ev.Region] = &replayFile{
				persisted: slices.Clone(r.Init),
				current:   slices.Clone(r.Init),
				pending:   map[int64][]byte{},
				seen:      map[int64][]uint64{},
				exists:    true,
			}
		case TraceFlush:
			f := files[ev.Region]
			for l := ev.Lo; l < ev.Hi; l += CacheLineSize {
				f.pending[l] = slices.Clone(f.current[l : l+CacheLineSize])
			}
		case TraceFence:
			for _, f := range files {
				if f != nil {
					f.fence()
				}
			}
		case TraceRemove:
			files[ev.Region].exists = false
		}
		c := &CrashPoint{Event: k, replay: st}
		for i, f := range files {
			if f == nil || !f.exists {
				continue
			}
			fi := len(c.Files)
			c.Files = append(c.Files, CrashFile{Region: i, Name: filepath.Base(regions[i].Path), Size: regions[i].Size, Persisted: f.persisted})
			first := len(c.Dirty)
			for off, vals := range f.seen {
				c.Dirty = append(c.Dirty, DirtyUnit{File: fi, Off: off, Old: binary.LittleEndian.Uint64(f.persisted[off:]), New: vals})
			}
			slices.SortFunc(c.Dirty[first:], func(a, b DirtyUnit) int { return int(a.Off - b.Off) })
		}
		if !fn(c) {
			return
		}
	}
}

// store applies an observed store of v to the unit at off.
func (f *replayFile) store(off int64, v uint64) {
	binary.LittleEndian.PutUint64(f.current[off:], v)
	vals := f.seen[off]
	if v == binary.LittleEndian.Uint64(f.persisted[off:]) || slices.Contains(vals, v) {
		// Already a candidate; make it the last (the current contents).
		if i := slices.Index(vals, v); i >= 0 {
			vals = append(slices.Delete(vals, i, i+1), v)
			f.seen[off] = vals
		}
		return
	}
	if len(vals) == maxCandidates {
		vals = slices.Delete(vals, 0, 1)
	}
	f.seen[off] = append(vals, v)
}

// fence makes every flushed line persistent with its captured contents.
func (f *replayFile) fence() {
	for l, line := range f.pending {
		copy(f.persisted[l:l+CacheLineSize], line)
		for u := l; u < l+CacheLineSize; u += 8 {
			if _, ok := f.seen[u]; !ok {
				continue
			}
			if cur := binary.LittleEndian.Uint64(f.current[u:]); cur != binary.LittleEndian.Uint64(f.persisted[u:]) {
				f.seen[u] = []uint64{cur}
			} else {
				delete(f.seen, u)
			}
		}
	}
	clear(f.pending)
}
